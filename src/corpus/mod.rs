//! Deterministic corpus generator: test and benchmark inputs with planted
//! URNs, decoys and the exact ground truth.
//!
//! Two generators, each a pure function of its configuration (no global
//! state, no clock, no threads): the same configuration always yields the
//! same bytes, on every machine.
//!
//! - [`generate_text`] writes exactly [`TextConfig::size`] bytes of running
//!   text (log lines, JSON records, XML elements, prose, TSV, YAML) with
//!   URNs planted at a chosen density and decoys that must yield no URN. The
//!   truth callback receives every planted URN ([`Planted`]: offset, text,
//!   equivalence key) in offset order; [`write_truth_tsv_line`] formats it.
//! - [`generate_dataset`] writes one URN per line, `lines` lines spelling
//!   `distinct` equivalence classes, plus invalid lines. The truth callback
//!   receives every distinct key with its count ([`KeyCount`]), in
//!   first-seen order, after the last line; [`write_key_count_tsv_line`]
//!   formats it.
//!
//! ## Classes and spellings
//!
//! Every URN is a *spelling* of a *class*. Class `i` has a canonical form
//! derived from `(seed, i)` alone, written in key form (lower-case scheme
//! and NID, upper-case percent hex), so the canonical form *is* the class's
//! equivalence key. A spelling varies what equivalence ignores: scheme
//! case, NID case, percent-hex case, r-, q- and f-components.
//!
//! Distinct classes have distinct keys by construction, so nothing has to
//! remember keys: the shapes are grouped in *families* with disjoint NID
//! sets (`isbn`, `uuid`, `ietf`, `oid`, `nbn`, `epc`, `iso`, `mpeg`, and a
//! generic family for every other NID), and each family writes a serial
//! number that is an injective function of `i` at a place its shapes fix
//! (the last `.` field of an OID, the digits after the leading letters of a
//! generic NSS, ...). Two classes with equal keys would therefore have equal
//! serials, hence equal indexes. That is what lets the dataset generator keep
//! only a `u32` counter per class, and the text generator count distinct keys
//! as the number of classes it introduced.
//!
//! ## Why the truth agrees with the scanner
//!
//! The truth is the planting, not a scan: each URN is written with
//! neighbours that make the scanner's rules (longest valid RFC 8141 prefix,
//! `'...'` limit, trimming of trailing `. , ; : ! ? '` and unbalanced `)`,
//! no overlap) return exactly the planted bytes:
//!
//! - before it: line start, space, tab, `"`, `'`, `(`, `=`, `>`, `<`, `[`,
//!   `` ` `` or a `%HH` triplet, never a URI-scheme character;
//! - after it: a byte outside the NSS alphabet (space, newline, tab, `"`,
//!   `<`, `>`, `]`, `` ` ``) or punctuation that trimming removes (`.` `,`
//!   `;` `:` `!` `?` and `)` closing a `(` that precedes the URN); after a
//!   leading `'` always the closing `'`, and then the URN holds no `'`;
//! - the URN itself never ends in a character trimming would remove: every
//!   NSS and component ends in a letter, digit, percent triplet or a `)`
//!   that closes a `(` of its own, and parentheses are always balanced.
//!
//! Filler text never contains `urn:` in any case (no `%` either, so the
//! percent-triplet exception cannot fire by accident); every other `urn:`
//! belongs to a decoy, which is built to fail on its own, whatever follows.
//!
//! ## Trade-offs
//!
//! - Density is a schedule, not a promise per line: the next URN (decoy) is
//!   due a jittered `2^20 / per_mib` bytes after the previous due point and
//!   goes into the first slot that comes up once due. Lines have one to four
//!   slots, so the density saturates near 10,000 URNs per MiB.
//! - The text is exactly `size` bytes: the line that would cross the limit
//!   is dropped (with its plantings) and replaced by a filler line.
//! - About 30% of text plantings respell an earlier class: half among the
//!   last thousand classes (local repetition), the rest spread or skewed
//!   toward the first classes (hot keys).
//! - Randomness is splitmix64: a handful of instructions per draw, good
//!   enough statistically for test data, and trivially seedable per class.
//!
//! ```
//! use urnscan::corpus::{generate_text, write_truth_tsv_line, TextConfig};
//! let cfg = TextConfig { size: 64 << 10, seed: 7, urns_per_mib: 2000, decoys_per_mib: 500 };
//! let (mut corpus, mut truth) = (Vec::new(), Vec::new());
//! let summary = generate_text(&cfg, &mut corpus, Some(&mut |p| write_truth_tsv_line(&mut truth, &p).unwrap()))?;
//! assert_eq!(summary.bytes, 64 << 10);
//! assert_eq!(corpus.len(), 64 << 10);
//! assert_eq!(String::from_utf8(truth).unwrap().lines().count() as u64, summary.planted);
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! # Files
//!
//! | file | what it does |
//! |---|---|
//! | `corpus/mod.rs` | the API: configurations, [`generate_text`], [`generate_dataset`], truth lines |
//! | `corpus/text.rs` | the text generator: lines of many kinds, plantings on a schedule |
//! | `corpus/dataset.rs` | the dataset's plan and its invalid lines |
//! | `corpus/classes.rs` | each class's canonical URN, family by family |
//! | `corpus/spellings.rs` | the variants of a class that equivalence ignores |
//! | `corpus/vocabulary.rs`, `corpus/writers.rs`, `corpus/rng.rs` | filler words, number and date writers, splitmix64 |

use std::io::{self, Write};

use crate::grammar::{parse, Grammar};

mod classes;
mod dataset;
mod rng;
mod spellings;
#[cfg(test)]
mod tests;
mod text;
mod vocabulary;
mod writers;

use classes::{class_urn, Catalog};
use dataset::{invalid_line, DatasetPlan};
use rng::{mix64, Rng, DATASET_SALT};
use spellings::{earlier_class, library_key, render_spelling};
use text::{generate_text_traced, FLUSH_AT};
use writers::ascii;

/// Configuration of [`generate_text`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TextConfig {
    /// Exact size of the corpus in bytes.
    pub size: u64,
    /// Seed: equal configurations give equal bytes.
    pub seed: u64,
    /// Planted URNs per MiB (2^20 bytes) of text.
    pub urns_per_mib: u32,
    /// Decoys (strings with `urn:` that must yield no URN) per MiB.
    pub decoys_per_mib: u32,
}

impl Default for TextConfig {
    fn default() -> Self {
        TextConfig { size: 1 << 20, seed: 0, urns_per_mib: 200, decoys_per_mib: 50 }
    }
}

/// Configuration of [`generate_dataset`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DatasetConfig {
    /// Total number of lines, invalid ones included (at most `u32::MAX`).
    pub lines: u64,
    /// Number of equivalence classes among the valid lines (clamped to the
    /// number of valid lines).
    pub distinct: u64,
    /// Seed: equal configurations give equal bytes.
    pub seed: u64,
    /// Invalid lines per thousand lines (clamped to 1000); the count is
    /// exactly `lines * invalid_per_mille / 1000`, rounded down.
    pub invalid_per_mille: u32,
}

impl Default for DatasetConfig {
    fn default() -> Self {
        DatasetConfig { lines: 1_000_000, distinct: 300_000, seed: 0, invalid_per_mille: 10 }
    }
}

/// One planted URN of a text corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Planted<'a> {
    /// Byte offset of its first byte in the corpus.
    pub offset: u64,
    /// The URN exactly as written.
    pub urn: &'a str,
    /// Its RFC 8141 equivalence key ([`crate::Urn::key`]).
    pub key: &'a str,
}

/// One distinct key of a dataset and how many valid lines spell it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KeyCount<'a> {
    /// The RFC 8141 equivalence key.
    pub key: &'a str,
    /// Number of lines whose URN has this key.
    pub count: u64,
}

/// What a generator wrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GenSummary {
    /// Bytes written.
    pub bytes: u64,
    /// Planted URNs (text) or valid lines (dataset).
    pub planted: u64,
    /// Decoys (text) or invalid lines (dataset).
    pub decoys: u64,
    /// Distinct equivalence keys among the planted URNs.
    pub distinct_keys: u64,
}

/// Writes a text corpus of exactly `cfg.size` bytes to `out`, calling
/// `truth` for every planted URN in offset order. See the module docs for
/// the shapes and the guarantees.
pub fn generate_text(
    cfg: &TextConfig,
    out: &mut impl Write,
    truth: Option<&mut dyn FnMut(Planted<'_>)>,
) -> io::Result<GenSummary> {
    generate_text_traced(cfg, out, truth, None)
}

/// Writes a dataset of `cfg.lines` lines, one URN per line, to `out`; then
/// calls `truth` once per distinct key, in first-seen order, with the number
/// of lines that spell it. Invalid lines are invalid as a whole line and
/// yield no URN when scanned. Memory: four bytes per class.
///
/// Fails with [`io::ErrorKind::InvalidInput`] if `lines` exceeds `u32::MAX`
/// or if there are valid lines but `distinct` is zero.
pub fn generate_dataset(
    cfg: &DatasetConfig,
    out: &mut impl Write,
    truth: Option<&mut dyn FnMut(KeyCount<'_>)>,
) -> io::Result<GenSummary> {
    let plan = DatasetPlan::new(cfg)?;
    let catalog = Catalog::new();
    let mut counts = vec![0u32; plan.distinct as usize];
    let mut rng = Rng::new(mix64(cfg.seed ^ DATASET_SALT));
    let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
    let mut class = Vec::with_capacity(256);
    let mut bytes = 0u64;
    let (mut left, mut left_invalid, mut left_valid, mut introduced) = (plan.lines, plan.invalid, plan.valid, 0u64);
    while left > 0 {
        if rng.below(left) < left_invalid {
            left_invalid -= 1;
            invalid_line(&mut rng, &catalog, cfg.seed, plan.distinct.max(1), &mut class, &mut buf);
        } else {
            // Introduce classes in index order, spread so the last one still
            // fits: first-seen order is then index order.
            let index = if introduced == 0 || rng.below(left_valid) < plan.distinct - introduced {
                introduced += 1;
                introduced - 1
            } else {
                earlier_class(&mut rng, introduced)
            };
            left_valid -= 1;
            let nid_end = class_urn(&catalog, cfg.seed, index, &mut class);
            let start = buf.len();
            render_spelling(&mut rng, &class, nid_end, &mut buf);
            debug_assert!(parse(&buf[start..], Grammar::Rfc8141).is_ok(), "{}", ascii(&buf[start..]));
            counts[index as usize] += 1;
        }
        buf.push(b'\n');
        left -= 1;
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            bytes += buf.len() as u64;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    bytes += buf.len() as u64;
    if let Some(truth) = truth {
        let mut key = Vec::with_capacity(256);
        for (index, &count) in counts.iter().enumerate() {
            class_urn(&catalog, cfg.seed, index as u64, &mut class);
            key.clear();
            library_key(&class, &class, &mut key);
            truth(KeyCount { key: ascii(&key), count: u64::from(count) });
        }
    }
    Ok(GenSummary { bytes, planted: plan.valid, decoys: plan.invalid, distinct_keys: plan.distinct })
}

/// Writes one truth line: `offset<TAB>urn<TAB>key<LF>`.
pub fn write_truth_tsv_line(out: &mut impl Write, planted: &Planted<'_>) -> io::Result<()> {
    writeln!(out, "{}\t{}\t{}", planted.offset, planted.urn, planted.key)
}

/// Writes one dataset truth line: `key<TAB>count<LF>`.
pub fn write_key_count_tsv_line(out: &mut impl Write, key_count: &KeyCount<'_>) -> io::Result<()> {
    writeln!(out, "{}\t{}", key_count.key, key_count.count)
}
