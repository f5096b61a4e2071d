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
//! use urnscan::gen::{generate_text, write_truth_tsv_line, TextConfig};
//! let cfg = TextConfig { size: 64 << 10, seed: 7, urns_per_mib: 2000, decoys_per_mib: 500 };
//! let (mut corpus, mut truth) = (Vec::new(), Vec::new());
//! let summary = generate_text(&cfg, &mut corpus, Some(&mut |p| write_truth_tsv_line(&mut truth, &p).unwrap()))?;
//! assert_eq!(summary.bytes, 64 << 10);
//! assert_eq!(corpus.len(), 64 << 10);
//! assert_eq!(String::from_utf8(truth).unwrap().lines().count() as u64, summary.planted);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::io::{self, Write};
use std::ops::Range;

use crate::grammar::{parse, Grammar};

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

// ---------------------------------------------------------------------------
// Randomness

const TEXT_SALT: u64 = 0x7465_7874_6765_6e31;
const DATASET_SALT: u64 = 0x6461_7461_7365_7431;
const CLASS_SALT: u64 = 0x636c_6173_7365_7331;
const SERIAL_SALT: u64 = 0x7365_7269_616c_3031;
const UUID_SALT: u64 = 0x7575_6964_7575_6964;

/// splitmix64 (Steele, Lea, Flood 2014).
#[derive(Clone)]
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    #[inline]
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// Uniform in `0..n` (multiply-shift; the bias is below 2^-40 for the
    /// small `n` used here). `n` must not be 0.
    #[inline]
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    #[inline]
    fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    #[inline]
    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The splitmix64 finaliser: a bijection on `u64`, so distinct inputs give
/// distinct outputs.
#[inline]
fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

// ---------------------------------------------------------------------------
// Vocabulary. No entry contains "urn" in any case (a unit test checks), so
// filler text cannot spell `urn:`.

// Kept as a paragraph: rustfmt would put each word on its own line.
#[rustfmt::skip]
const WORDS: &[&str] = &[
    "the", "of", "and", "a", "to", "in", "is", "was", "for", "on", "that", "with", "as", "by", "at", "from", "this",
    "be", "are", "or", "an", "it", "not", "which", "have", "has", "but", "all", "were", "when", "we", "there", "can",
    "been", "one", "would", "their", "more", "if", "so", "about", "what", "out", "them", "into", "only", "other",
    "time", "some", "could", "these", "two", "may", "then", "first", "any", "like", "now", "such", "make", "over",
    "our", "even", "most", "state", "after", "also", "made", "many", "must", "before", "back", "see", "through",
    "way", "where", "get", "much", "well", "your", "know", "should", "down", "work", "year", "because", "people",
    "just", "each", "those", "how", "too", "little", "good", "very", "long", "new", "great", "old", "public",
    "record", "archive", "library", "catalog", "index", "entry", "title", "author", "volume", "issue", "page",
    "section", "chapter", "schema", "namespace", "resource", "identifier", "document", "standard", "draft",
    "version", "registry", "name", "value", "service", "request", "response", "server", "client", "cache", "queue",
    "worker", "session", "token", "user", "account", "order", "invoice", "shipment", "item", "product", "batch",
    "stream", "packet", "frame", "buffer", "memory", "thread", "process", "signal", "event", "metric", "sample",
    "report", "summary", "detail", "note", "comment", "review", "update", "delete", "insert", "select", "query",
    "result", "match", "parse", "scan", "check", "valid", "error", "warning", "notice", "timeout", "retry",
    "backoff", "limit", "quota", "region", "zone", "cluster", "node", "shard", "replica", "leader", "follower",
    "commit", "rollback", "snapshot", "backup", "restore", "migrate", "deploy", "build", "release", "tag", "branch",
    "merge", "patch", "fix", "feature", "config", "option", "flag", "default", "custom", "random", "seed", "hash",
    "key", "lock", "channel", "socket", "port", "host", "domain", "path", "file", "folder", "disk", "block",
    "sector", "river", "mountain", "forest", "garden", "window", "kitchen", "letter", "paper", "pencil", "music",
    "story", "history", "science", "nature", "language", "morning", "evening", "summer", "winter", "spring",
    "autumn", "green", "blue", "red", "yellow", "quick", "brown", "fox", "lazy", "dog", "jumps", "museum", "map",
    "atlas", "thesis", "article", "edition", "series", "publisher", "isbn", "serial", "field", "label", "format",
];

/// [`WORDS`] padded to 16 bytes, the length in byte 16: copying a word is
/// then a fixed-size move instead of a `memcpy` call, which is most of the
/// cost of filler text.
const PADDED_WORDS: [[u8; 17]; WORDS.len()] = pad_words(WORDS);

const fn pad_words<const N: usize>(words: &[&str]) -> [[u8; 17]; N] {
    let mut out = [[0u8; 17]; N];
    let mut i = 0;
    while i < N {
        let word = words[i].as_bytes();
        assert!(word.len() <= 16, "words are at most 16 bytes");
        let mut j = 0;
        while j < word.len() {
            out[i][j] = word[j];
            j += 1;
        }
        out[i][16] = word.len() as u8;
        i += 1;
    }
    out
}

/// Appends a random word of [`WORDS`].
#[inline]
fn push_word(rng: &mut Rng, out: &mut Vec<u8>) {
    let padded = &PADDED_WORDS[rng.below(PADDED_WORDS.len() as u64) as usize];
    let len = out.len();
    out.extend_from_slice(&padded[..16]);
    out.truncate(len + usize::from(padded[16]));
}

/// Words with non-ASCII letters, for prose.
const NON_ASCII_WORDS: &[&str] = &["café", "naïve", "Zürich", "façade", "über", "mañana", "São", "Ελλάδα", "東京"];

/// Non-ASCII text that follows `urn:ab:` in a decoy.
const NON_ASCII_SNIPPETS: &[&str] = &["é", "ü", "→", "日本", "ø"];

const LEVELS: &[&str] = &["INFO ", "INFO ", "INFO ", "WARN ", "ERROR", "DEBUG", "TRACE"];
const JSON_LEVELS: &[&str] = &["info", "info", "warn", "error", "debug"];
const COMPONENTS: &[&str] =
    &["auth", "db", "http", "cache", "sched", "index", "ingest", "resolver", "gc", "net", "api"];
const ID_PREFIXES: &[&str] = &["req", "txn", "sess", "doc", "obj", "job", "evt"];
const XML_TAGS: &[&str] = &["record", "item", "entry", "resource", "meta", "doc", "dataset", "package"];
const HOSTS: &[&str] = &["example.org", "example.com", "data.example.net", "cdn.example.org"];
const DIRS: &[&str] = &["/var/log", "/srv/data", "/opt/app", "/home/ci", "/tmp"];
const EXTENSIONS: &[&str] = &[".log", ".json", ".xml", ".db", ".txt"];
const LANGS: &[&str] = &["en", "fr", "de", "es", "ja"];
const COUNTRIES: &[&str] = &["de", "fi", "nl", "se", "ch", "at", "it", "no", "hu", "cz"];

/// Words that contain `urn:` but are not candidates (a letter precedes it).
const URN_WORD_DECOYS: &[&str] = &["burn:", "Turn:", "Return:", "sojourn:", "Saturn:", "TURN:"];

// ---------------------------------------------------------------------------
// Classes: canonical URNs derived from (seed, index).

/// NIDs owned by the named families; the generic family never uses them.
const FAMILY_NIDS: &[&str] = &["isbn", "uuid", "ietf", "oid", "nbn", "epc", "iso", "mpeg"];

/// ISBN bodies are nine digits: the ISBN family serves the first 10^9
/// classes, later ones fall to the generic family.
const ISBN_BODIES: u64 = 1_000_000_000;

/// The registered NIDs the generic family draws from.
struct Catalog {
    registered: Vec<&'static str>,
}

impl Catalog {
    fn new() -> Catalog {
        let mut registered: Vec<&'static str> = crate::nid::registry()
            .filter(|&(nid, kind)| kind == "formal" && is_plain_nid(nid) && !is_family_nid(nid.as_bytes()))
            .map(|(nid, _)| nid)
            .collect();
        if registered.is_empty() {
            registered.push("example");
        }
        Catalog { registered }
    }
}

/// A registry entry usable as is: RFC 8141 NID syntax.
fn is_plain_nid(nid: &str) -> bool {
    let b = nid.as_bytes();
    (2..=32).contains(&b.len())
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn is_family_nid(nid: &[u8]) -> bool {
    FAMILY_NIDS.iter().any(|f| f.as_bytes().eq_ignore_ascii_case(nid))
}

/// Writes the canonical form (= equivalence key) of class `index` into
/// `out` (cleared first); returns the index of the `:` after the NID.
fn class_urn(catalog: &Catalog, seed: u64, index: u64, out: &mut Vec<u8>) -> usize {
    out.clear();
    out.extend_from_slice(b"urn:");
    let mut rng = Rng::new(mix64(seed ^ CLASS_SALT).wrapping_add(mix64(index)));
    // Any injective function of the index works; an offset keeps the first
    // serials from all being 0, 1, 2.
    let serial = index.wrapping_add(1 + mix64(seed ^ SERIAL_SALT) % 9000);
    match rng.below(100) {
        0..=7 if index < ISBN_BODIES => isbn(&mut rng, seed, index, out),
        8..=15 => uuid(&mut rng, seed, index, out),
        16..=23 => ietf(&mut rng, serial, out),
        24..=29 => oid(&mut rng, serial, out),
        30..=34 => nbn(&mut rng, serial, out),
        35..=39 => epc(&mut rng, serial, out),
        40..=43 => iso(&mut rng, serial, out),
        44..=46 => mpeg(&mut rng, serial, out),
        _ => generic(catalog, &mut rng, serial, out),
    }
}

/// Writes `nid:`; returns the index of the `:`.
fn begin(out: &mut Vec<u8>, nid: &[u8]) -> usize {
    out.extend_from_slice(nid);
    let nid_end = out.len();
    out.push(b':');
    nid_end
}

/// `isbn:` + 13 digits with a valid check digit; the nine-digit body is an
/// affine bijection of the index modulo 10^9.
fn isbn(rng: &mut Rng, seed: u64, index: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"isbn");
    // 3^18 is prime to 10, so the map is a bijection on 0..10^9.
    let body = (index * 387_420_489 + mix64(seed) % ISBN_BODIES) % ISBN_BODIES;
    let mut digits = [0u8; 12];
    digits[..3].copy_from_slice(if rng.below(4) == 0 { b"979" } else { b"978" });
    for (k, d) in digits[3..].iter_mut().enumerate() {
        *d = b'0' + (body / 10u64.pow(8 - k as u32) % 10) as u8;
    }
    let sum: u32 = digits.iter().enumerate().map(|(k, d)| u32::from(d - b'0') * if k % 2 == 0 { 1 } else { 3 }).sum();
    out.extend_from_slice(&digits);
    out.push(b'0' + ((10 - sum % 10) % 10) as u8);
    nid_end
}

/// A version-4-shaped UUID whose first twelve and last-group-first four hex
/// digits hold a bijective mix of the index.
fn uuid(rng: &mut Rng, seed: u64, index: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"uuid");
    let v = mix64(index ^ mix64(seed ^ UUID_SALT));
    let upper = rng.below(10) == 0;
    push_hex(out, v >> 32, 8, upper);
    out.push(b'-');
    push_hex(out, v >> 16, 4, upper);
    out.extend_from_slice(b"-4");
    push_hex(out, rng.next(), 3, upper);
    out.push(b'-');
    push_hex(out, 8 + rng.below(4), 1, upper);
    push_hex(out, rng.next(), 3, upper);
    out.push(b'-');
    push_hex(out, v, 4, upper);
    push_hex(out, rng.next(), 8, upper);
    nid_end
}

/// `rfc:N`, or `params:...-N` (the serial after the last `-`).
fn ietf(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"ietf");
    match rng.below(3) {
        0 => out.extend_from_slice(b"rfc:"),
        1 => {
            out.extend_from_slice(b"params:xml:ns:");
            push_word(rng, out);
            out.push(b':');
            push_word(rng, out);
            out.push(b'-');
        }
        _ => {
            out.extend_from_slice(b"params:");
            push_word(rng, out);
            out.push(b':');
            push_word(rng, out);
            out.push(b'-');
        }
    }
    push_dec(out, serial);
    nid_end
}

/// A dotted OID whose last arc is the serial.
fn oid(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"oid");
    match rng.below(3) {
        0 => {
            out.extend_from_slice(b"1.3.6.1.4.1.");
            push_dec(out, rng.below(60_000));
        }
        1 => {
            out.extend_from_slice(b"2.16.840.1.113883.");
            push_dec(out, rng.below(20));
            out.push(b'.');
            push_dec(out, rng.below(100));
        }
        _ => {
            out.extend_from_slice(b"1.2.840.10008.");
            push_dec(out, rng.below(10));
        }
    }
    out.push(b'.');
    push_dec(out, serial);
    nid_end
}

/// `cc:word:N-word-SERIAL` or `cc-feSERIAL` (the two differ at byte 2).
fn nbn(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"nbn");
    out.extend_from_slice(rng.pick(COUNTRIES).as_bytes());
    if rng.below(2) == 0 {
        out.push(b':');
        push_word(rng, out);
        out.push(b':');
        push_dec(out, rng.below(1000));
        out.push(b'-');
        push_word(rng, out);
        out.push(b'-');
    } else {
        out.extend_from_slice(b"-fe");
    }
    push_dec(out, serial);
    nid_end
}

/// EPC pure identities whose last `.` field is the serial.
fn epc(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"epc");
    if rng.below(2) == 0 {
        out.extend_from_slice(b"id:sgtin:");
        push_dec_padded(out, rng.below(10_000_000), 7);
        out.push(b'.');
        push_dec_padded(out, rng.below(1_000_000), 6);
    } else {
        out.extend_from_slice(b"id:sscc:");
        push_dec_padded(out, rng.below(1_000_000_000), 9);
    }
    out.push(b'.');
    push_dec(out, serial);
    nid_end
}

/// `std:iso:SERIAL[:-part][:ed-n][:vn][:lang]`: the third `:` field is the
/// serial.
fn iso(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"iso");
    out.extend_from_slice(if rng.below(4) == 0 { b"std:iso-iec:" } else { b"std:iso:" });
    push_dec(out, serial);
    if rng.percent(40) {
        out.extend_from_slice(b":-");
        push_dec(out, 1 + rng.below(9));
    }
    if rng.percent(30) {
        out.extend_from_slice(b":ed-");
        push_dec(out, 1 + rng.below(5));
    }
    if rng.percent(20) {
        out.extend_from_slice(b":v");
        push_dec(out, 1 + rng.below(3));
    }
    if rng.percent(30) {
        out.push(b':');
        out.extend_from_slice(rng.pick(LANGS).as_bytes());
    }
    nid_end
}

/// MPEG names whose last `:` field is the serial.
fn mpeg(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"mpeg");
    if rng.below(2) == 0 {
        out.extend_from_slice(b"mpeg21:diid:");
        push_word(rng, out);
    } else {
        out.extend_from_slice(b"mpeg7:schema:");
        push_dec(out, 2001 + rng.below(20));
    }
    out.push(b':');
    push_dec(out, serial);
    nid_end
}

/// Any other NID; the NSS is `letters* SERIAL tail`, where the tail starts
/// with a non-digit, so the serial is the first run of digits.
fn generic(catalog: &Catalog, rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = generic_nid(catalog, rng, out);
    out.push(b':');
    if rng.percent(60) {
        push_cased_word(rng, out);
    }
    push_dec(out, serial);
    let segments = match rng.below(10) {
        0..=2 => 0,
        3..=5 => 1,
        6..=7 => 2,
        8 => 3,
        _ => 5,
    };
    for _ in 0..segments {
        out.push(rng.pick(NSS_SEPARATORS));
        nss_atom(rng, out);
    }
    nid_end
}

/// Separators inside a generic NSS (`:` and `/` weighted up). Each is
/// followed by an atom, so none can end an NSS.
const NSS_SEPARATORS: &[u8] = b"::::////;=@~-_.,!$&*+'";

/// A piece of NSS that ends in a letter, digit, hex digit or balanced `)`.
fn nss_atom(rng: &mut Rng, out: &mut Vec<u8>) {
    match rng.below(12) {
        0..=3 => push_cased_word(rng, out),
        4..=5 => push_dec(out, rng.below(100_000)),
        6 => {
            let digits = 4 + rng.below(9) as u32;
            push_hex(out, rng.next(), digits, false);
        }
        7 => push_percent(rng, out),
        8 => {
            out.extend_from_slice(b"%C3%A9");
            push_word(rng, out);
        }
        9 => {
            out.push(b'(');
            push_word(rng, out);
            out.push(b')');
        }
        10 => {
            push_word(rng, out);
            push_percent(rng, out);
            push_word(rng, out);
        }
        _ => {
            out.push(b'(');
            push_word(rng, out);
            out.push(rng.pick(b",;:=~"));
            out.push(b'(');
            push_dec(out, rng.below(100));
            out.extend_from_slice(b"))");
        }
    }
}

/// `%HH` with upper-case hex (the key form).
fn push_percent(rng: &mut Rng, out: &mut Vec<u8>) {
    out.push(b'%');
    push_hex(out, rng.next(), 2, true);
}

/// A NID outside the named families: registered, `example`, informal,
/// experimental, reserved shapes, or random syntax of 2 to 32 characters.
fn generic_nid(catalog: &Catalog, rng: &mut Rng, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    match rng.below(100) {
        0..=29 => out.extend(rng.pick(&catalog.registered).bytes().map(|b| b.to_ascii_lowercase())),
        30..=44 => out.extend_from_slice(b"example"),
        45..=54 => {
            out.extend_from_slice(b"urn-");
            push_dec(out, 1 + rng.below(99));
        }
        55..=60 => {
            out.extend_from_slice(b"x-");
            push_word(rng, out);
        }
        61..=63 => out.extend_from_slice(b"urn"),
        64..=68 => {
            out.push(rng.pick(LOWER_ALPHA));
            out.push(rng.pick(LOWER_ALNUM));
        }
        69..=72 => {
            out.extend_from_slice(rng.pick(COUNTRIES).as_bytes());
            out.push(b'-');
            push_word(rng, out);
        }
        _ => random_nid(rng, out),
    }
    if is_family_nid(&out[start..]) {
        // Keep the families' NID sets disjoint (no family NID starts with q).
        out[start] = b'q';
    }
    out.len()
}

const LOWER_ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const LOWER_ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Letters, digits and a weighted hyphen, for NID middles.
const LOWER_LDH: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789---";

/// Random NID syntax: 3 to 32 characters, mostly short, 32 now and then.
fn random_nid(rng: &mut Rng, out: &mut Vec<u8>) {
    let len = match rng.below(100) {
        0..=69 => 3 + rng.below(6),
        70..=94 => 9 + rng.below(12),
        95..=97 => 21 + rng.below(11),
        _ => 32,
    };
    out.push(rng.pick(LOWER_ALNUM));
    for _ in 2..len {
        out.push(rng.pick(LOWER_LDH));
    }
    out.push(rng.pick(LOWER_ALNUM));
}

// ---------------------------------------------------------------------------
// Spellings: what equivalence ignores.

#[derive(Clone, Copy)]
enum Case {
    Keep,
    Upper,
    Lower,
    Capital,
    Mixed,
}

/// Picks a case with weights (keep, upper, lower, capital), the rest mixed.
fn pick_case(rng: &mut Rng, weights: [u64; 4]) -> Case {
    let mut roll = rng.below(100);
    for (case, w) in [Case::Keep, Case::Upper, Case::Lower, Case::Capital].into_iter().zip(weights) {
        if roll < w {
            return case;
        }
        roll -= w;
    }
    Case::Mixed
}

fn apply_case(rng: &mut Rng, bytes: &mut [u8], case: Case) {
    match case {
        Case::Keep => {}
        Case::Upper => bytes.make_ascii_uppercase(),
        Case::Lower => bytes.make_ascii_lowercase(),
        Case::Capital => {
            bytes.make_ascii_lowercase();
            if let Some(first) = bytes.first_mut() {
                first.make_ascii_uppercase();
            }
        }
        Case::Mixed => {
            let bits = rng.next();
            for (k, b) in bytes.iter_mut().enumerate() {
                if (bits >> (k % 64)) & 1 == 1 {
                    b.make_ascii_uppercase();
                } else {
                    b.make_ascii_lowercase();
                }
            }
        }
    }
}

/// Appends a random spelling of the canonical URN `canonical`: same key,
/// possibly other case for scheme, NID and percent hex, possibly r-, q-
/// and f-components. The result never ends in a character that trimming
/// removes and holds a `'` only if the canonical form does.
fn render_spelling(rng: &mut Rng, canonical: &[u8], nid_end: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(canonical);
    let urn = &mut out[start..];
    let scheme_case = pick_case(rng, [86, 8, 0, 3]);
    apply_case(rng, &mut urn[..3], scheme_case);
    let nid_case = pick_case(rng, [82, 9, 0, 5]);
    apply_case(rng, &mut urn[4..nid_end], nid_case);
    let nss = &mut urn[nid_end + 1..];
    if nss.contains(&b'%') {
        let hex_case = pick_case(rng, [60, 0, 25, 0]);
        let mut from = 0;
        while let Some(p) = memchr::memchr(b'%', &nss[from..]) {
            let at = from + p;
            apply_case(rng, &mut nss[at + 1..at + 3], hex_case);
            from = at + 3;
        }
    }
    push_components(rng, out);
}

/// Optional `?+r`, `?=q`, `#f`, each non-empty and ending in a letter or
/// digit.
fn push_components(rng: &mut Rng, out: &mut Vec<u8>) {
    let (r, q, f) = match rng.below(100) {
        0..=71 => return,
        72..=79 => (true, false, false),
        80..=87 => (false, true, false),
        88..=94 => (false, false, true),
        95..=97 => (true, false, true),
        _ => (true, true, true),
    };
    if r {
        out.extend_from_slice(b"?+");
        match rng.below(3) {
            0 => out.extend_from_slice(b"CCResolve:cc=uk"),
            1 => push_word(rng, out),
            _ => {
                push_word(rng, out);
                out.push(b'/');
                push_dec(out, rng.below(1000));
            }
        }
    }
    if q {
        out.extend_from_slice(b"?=");
        push_word(rng, out);
        out.push(b'=');
        match rng.below(3) {
            0 => push_word(rng, out),
            1 => {
                push_dec(out, rng.below(100));
                out.extend_from_slice(b"&lang=");
                out.extend_from_slice(rng.pick(LANGS).as_bytes());
            }
            _ => {
                push_word(rng, out);
                out.push(b'%');
                push_hex(out, rng.next(), 2, rng.below(2) == 0);
                push_word(rng, out);
            }
        }
    }
    if f {
        out.push(b'#');
        match rng.below(4) {
            0 => push_word(rng, out),
            1 => {
                out.push(b'p');
                push_dec(out, rng.below(500));
            }
            2 => {
                out.extend_from_slice(b"sec");
                push_dec(out, 1 + rng.below(9));
                out.push(b'.');
                push_dec(out, 1 + rng.below(9));
            }
            _ => {
                push_word(rng, out);
                out.push(b'/');
                push_word(rng, out);
            }
        }
    }
}

/// An earlier class among `0..n` (`n > 0`): uniform, skewed toward the
/// first classes (hot keys), or among the last thousand.
fn earlier_class(rng: &mut Rng, n: u64) -> u64 {
    match rng.below(10) {
        0..=3 => rng.below(n),
        4..=6 => {
            let u = rng.below(1 << 20);
            ((u128::from(n) * u128::from(u * u * u)) >> 60) as u64
        }
        _ => n - 1 - rng.below(n.min(1000)),
    }
}

/// Appends the key of `urn` by the library to `keys`; `canonical` (the key
/// by construction) if it does not parse, which the debug assertions rule
/// out along with any disagreement between the two.
fn library_key(urn: &[u8], canonical: &[u8], keys: &mut Vec<u8>) {
    let start = keys.len();
    let parsed = parse(urn, Grammar::Rfc8141);
    debug_assert!(parsed.is_ok(), "generated an invalid URN: {}", ascii(urn));
    match parsed {
        Ok(u) => u.write_key(keys),
        Err(_) => keys.extend_from_slice(canonical),
    }
    debug_assert_eq!(ascii(&keys[start..]), ascii(canonical), "key of {}", ascii(urn));
}

// ---------------------------------------------------------------------------
// Dataset

struct DatasetPlan {
    lines: u64,
    invalid: u64,
    valid: u64,
    distinct: u64,
}

impl DatasetPlan {
    fn new(cfg: &DatasetConfig) -> io::Result<DatasetPlan> {
        let invalid_input = |msg: &str| io::Error::new(io::ErrorKind::InvalidInput, msg.to_owned());
        if cfg.lines > u64::from(u32::MAX) {
            return Err(invalid_input("dataset: at most 4294967295 lines"));
        }
        let invalid = cfg.lines * u64::from(cfg.invalid_per_mille.min(1000)) / 1000;
        let valid = cfg.lines - invalid;
        let distinct = cfg.distinct.min(valid);
        if distinct == 0 && valid > 0 {
            return Err(invalid_input("dataset: distinct must be at least 1"));
        }
        Ok(DatasetPlan { lines: cfg.lines, invalid, valid, distinct })
    }
}

/// A line that is not a URN and holds no URN: a class's canonical form
/// broken at its NID or at the start of its NSS, so that no prefix is valid.
fn invalid_line(rng: &mut Rng, catalog: &Catalog, seed: u64, classes: u64, class: &mut Vec<u8>, out: &mut Vec<u8>) {
    let nid_end = class_urn(catalog, seed, rng.below(classes), class);
    let (nid, nss) = (&class[4..nid_end], &class[nid_end + 1..]);
    let start = out.len();
    push_scheme(rng, out);
    out.push(b':');
    let breakage = rng.below(10);
    match breakage {
        0 => out.push(nid[0]),
        1 => {
            out.push(nid[0]);
            out.push(b'_');
            out.extend_from_slice(&nid[1..]);
        }
        2 => {
            out.push(b'-');
            out.extend_from_slice(nid);
        }
        3 => {
            out.extend_from_slice(nid);
            out.push(b'-');
        }
        4 => push_long_nid(rng, out),
        5 => {}
        _ => out.extend_from_slice(nid),
    }
    out.push(b':');
    match breakage {
        6 => out.push(b'/'),
        7 => {
            out.extend_from_slice(b"%G");
            push_hex(out, rng.next(), 1, true);
        }
        8 => out.extend_from_slice(rng.pick(NON_ASCII_SNIPPETS).as_bytes()),
        _ => {}
    }
    // 9: nothing after `urn:NID:`.
    if breakage != 9 {
        out.extend_from_slice(nss);
    }
    debug_assert!(parse(&out[start..], Grammar::Rfc8141).is_err(), "{}", ascii(&out[start..]));
}

// ---------------------------------------------------------------------------
// Text

/// Output is handed to the writer in blocks of about this size.
const FLUSH_AT: usize = 1 << 20;

/// What a slot holds when it holds no URN and no decoy.
#[derive(Clone, Copy)]
enum Fill {
    Word,
    Id,
    Url,
    Path,
}

/// A planted URN (`key` set) or decoy of the current line, by position in
/// the buffer.
struct Mark {
    span: Range<usize>,
    key: Option<Range<usize>>,
}

/// The counters a dropped line must give back.
#[derive(Clone, Copy)]
struct Progress {
    /// Classes introduced so far: class indexes `0..fresh`.
    fresh: u64,
    planted: u64,
    decoys: u64,
    next_urn: u64,
    next_decoy: u64,
}

/// A running wall clock for timestamps, with the date cached per day.
struct Clock {
    secs: u64,
    day: u64,
    date: [u8; 10],
}

type TruthFn<'h> = &'h mut dyn FnMut(Planted<'_>);
type DecoyFn<'h> = &'h mut dyn FnMut(u64, usize);

struct TextGen<'h> {
    seed: u64,
    rng: Rng,
    catalog: Catalog,
    /// Bytes not yet handed to the writer; `flushed` bytes precede them.
    buf: Vec<u8>,
    flushed: u64,
    urn_gap: u64,
    decoy_gap: u64,
    progress: Progress,
    /// Plantings and decoys of the current line, reported once it is kept.
    marks: Vec<Mark>,
    /// Keys of the marks.
    keys: Vec<u8>,
    /// Scratch for a class's canonical form.
    class: Vec<u8>,
    clock: Clock,
    truth: Option<TruthFn<'h>>,
    decoy_hook: Option<DecoyFn<'h>>,
}

/// [`generate_text`], also reporting each decoy's offset and length (tests
/// use it to account for every `urn:` in the text).
fn generate_text_traced<'h>(
    cfg: &TextConfig,
    out: &mut impl Write,
    truth: Option<TruthFn<'h>>,
    decoy_hook: Option<DecoyFn<'h>>,
) -> io::Result<GenSummary> {
    let mut g = TextGen::new(cfg, truth, decoy_hook);
    while g.pos() < cfg.size {
        let saved = g.progress;
        let line_start = g.buf.len();
        g.line();
        if g.pos() > cfg.size {
            g.buf.truncate(line_start);
            g.marks.clear();
            g.keys.clear();
            g.progress = saved;
            g.pad_to(cfg.size);
            break;
        }
        g.commit();
        if g.buf.len() >= FLUSH_AT {
            g.flush(out)?;
        }
    }
    g.flush(out)?;
    let p = g.progress;
    Ok(GenSummary { bytes: g.flushed, planted: p.planted, decoys: p.decoys, distinct_keys: p.fresh })
}

/// Bytes between two due points for a density per MiB; `u64::MAX` = never.
fn gap(per_mib: u32) -> u64 {
    if per_mib == 0 {
        u64::MAX
    } else {
        (1u64 << 20) / u64::from(per_mib)
    }
}

impl<'h> TextGen<'h> {
    fn new(cfg: &TextConfig, truth: Option<TruthFn<'h>>, decoy_hook: Option<DecoyFn<'h>>) -> TextGen<'h> {
        let mut rng = Rng::new(mix64(cfg.seed ^ TEXT_SALT));
        let (urn_gap, decoy_gap) = (gap(cfg.urns_per_mib), gap(cfg.decoys_per_mib));
        let next_urn = first_due(&mut rng, urn_gap);
        let next_decoy = first_due(&mut rng, decoy_gap);
        // Some instant between 2017 and 2026.
        let secs = 1_500_000_000 + rng.below(280_000_000);
        TextGen {
            seed: cfg.seed,
            rng,
            catalog: Catalog::new(),
            buf: Vec::with_capacity(FLUSH_AT + 64 * 1024),
            flushed: 0,
            urn_gap,
            decoy_gap,
            progress: Progress { fresh: 0, planted: 0, decoys: 0, next_urn, next_decoy },
            marks: Vec::new(),
            keys: Vec::new(),
            class: Vec::with_capacity(256),
            clock: Clock { secs, day: u64::MAX, date: [0; 10] },
            truth,
            decoy_hook,
        }
    }

    #[inline]
    fn pos(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    fn flush(&mut self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.buf)?;
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Reports the marks of the line just kept.
    fn commit(&mut self) {
        for mark in &self.marks {
            let offset = self.flushed + mark.span.start as u64;
            match &mark.key {
                Some(key) => {
                    if let Some(truth) = self.truth.as_mut() {
                        let urn = ascii(&self.buf[mark.span.clone()]);
                        truth(Planted { offset, urn, key: ascii(&self.keys[key.clone()]) });
                    }
                }
                None => {
                    if let Some(hook) = self.decoy_hook.as_mut() {
                        hook(offset, mark.span.len());
                    }
                }
            }
        }
        self.marks.clear();
        self.keys.clear();
    }

    /// Fills up to `size` with one line of words (no `:`, so no `urn:`).
    fn pad_to(&mut self, size: u64) {
        let room = (size - self.pos()) as usize;
        if room == 0 {
            return;
        }
        let end = self.buf.len() + room - 1;
        while self.buf.len() < end {
            self.word();
            self.put(b" ");
        }
        self.buf.truncate(end);
        self.buf.push(b'\n');
    }

    #[inline]
    fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    #[inline]
    fn word(&mut self) {
        push_word(&mut self.rng, &mut self.buf);
    }

    fn words(&mut self, n: u64) {
        for k in 0..n {
            if k > 0 {
                self.buf.push(b' ');
            }
            self.word();
        }
    }

    fn num_below(&mut self, n: u64) {
        let v = self.rng.below(n);
        push_dec(&mut self.buf, v);
    }

    fn hex(&mut self, digits: u32) {
        let v = self.rng.next();
        push_hex(&mut self.buf, v, digits, false);
    }

    /// `2024-05-06T12:34:56.789Z`, moving the clock forward a little.
    fn timestamp(&mut self) {
        self.clock.secs += self.rng.below(3);
        let day = self.clock.secs / 86_400;
        if day != self.clock.day {
            self.clock.day = day;
            self.clock.date = format_date(day);
        }
        let sod = (self.clock.secs % 86_400) as usize;
        let ms = self.rng.below(1000) as usize;
        let mut time = *b"THH:MM:SS.mmmZ";
        time[1..3].copy_from_slice(&TWO_DIGITS[sod / 3600]);
        time[4..6].copy_from_slice(&TWO_DIGITS[sod / 60 % 60]);
        time[7..9].copy_from_slice(&TWO_DIGITS[sod % 60]);
        time[10] = b'0' + (ms / 100) as u8;
        time[11..13].copy_from_slice(&TWO_DIGITS[ms % 100]);
        self.buf.extend_from_slice(&self.clock.date);
        self.buf.extend_from_slice(&time);
    }

    fn line(&mut self) {
        match self.rng.below(100) {
            0..=31 => self.log_line(),
            32..=45 => self.json_line(),
            46..=59 => self.xml_line(),
            60..=87 => self.prose_line(),
            88..=93 => self.tsv_line(),
            94..=97 => self.yaml_line(),
            _ => self.put(b"\n"),
        }
    }

    /// A place for a URN, a decoy or filler. The caller writes the bytes
    /// around it; `quoted` says the slot sits between apostrophes.
    fn slot(&mut self, quoted: bool, fill: Fill) {
        let pos = self.pos();
        if pos >= self.progress.next_urn && self.plant(quoted) {
            self.progress.next_urn = self.progress.next_urn.saturating_add(jitter(&mut self.rng, self.urn_gap));
        } else if pos >= self.progress.next_decoy {
            self.decoy();
            self.progress.next_decoy = self.progress.next_decoy.saturating_add(jitter(&mut self.rng, self.decoy_gap));
        } else {
            self.filler(fill);
        }
    }

    /// Plants a spelling of a new class (70%) or an earlier one. Returns
    /// false, planting nothing, if the class holds a `'` and the slot is
    /// quoted (rule 2 would cut it short); the URN stays due.
    fn plant(&mut self, quoted: bool) -> bool {
        let fresh = self.progress.fresh == 0 || self.rng.percent(70);
        let index = if fresh { self.progress.fresh } else { earlier_class(&mut self.rng, self.progress.fresh) };
        let nid_end = class_urn(&self.catalog, self.seed, index, &mut self.class);
        if quoted && self.class.contains(&b'\'') {
            return false;
        }
        let start = self.buf.len();
        render_spelling(&mut self.rng, &self.class, nid_end, &mut self.buf);
        let key_start = self.keys.len();
        // Nobody reads the key without a truth callback; debug builds still
        // check every planting against the library.
        if self.truth.is_some() || cfg!(debug_assertions) {
            library_key(&self.buf[start..], &self.class, &mut self.keys);
        }
        self.marks.push(Mark { span: start..self.buf.len(), key: Some(key_start..self.keys.len()) });
        if fresh {
            self.progress.fresh += 1;
        }
        self.progress.planted += 1;
        true
    }

    /// Writes a string that contains `urn:` (any case) but yields no URN,
    /// whatever bytes follow it.
    fn decoy(&mut self) {
        let start = self.buf.len();
        match self.rng.below(20) {
            0 => {
                self.put(b"return:");
                self.word();
            }
            1 => {
                self.put(b"turn:");
                self.word();
                self.put(b":");
                self.word();
            }
            2 => {
                self.put(b"x-urn:");
                self.word();
            }
            3 => {
                self.word();
                self.put(b".urn:");
                self.word();
            }
            4 => {
                self.scheme();
                self.put(b"::");
                self.word();
            }
            5 => {
                self.scheme();
                self.put(b":");
                let c = self.rng.pick(LOWER_ALNUM);
                self.buf.push(c);
                self.put(b":");
                self.word();
            }
            6 => {
                self.scheme();
                self.put(b":-");
                self.word();
                self.put(b":");
                self.word();
            }
            7 => {
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b"-:");
                self.word();
            }
            8 => {
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b": ");
            }
            9 => self.put(b"URN: "),
            10 => {
                self.scheme();
                self.put(b":");
                push_long_nid(&mut self.rng, &mut self.buf);
                self.put(b":x");
            }
            11 => {
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b":");
                let s = self.rng.pick(NON_ASCII_SNIPPETS);
                self.put(s.as_bytes());
            }
            12 => {
                self.scheme();
                self.put(b":\n");
            }
            13 => {
                let w = self.rng.pick(URN_WORD_DECOYS);
                self.put(w.as_bytes());
            }
            14..=17 => {
                // An NSS that cannot start: leading "/", bad escape, "?", "#".
                self.scheme();
                self.put(b":");
                self.word();
                let bad: &[u8] = [b":/".as_slice(), b":%zz", b":?", b":#"][self.rng.below(4) as usize];
                self.put(bad);
                self.word();
            }
            18 => {
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b"_");
                self.word();
                self.put(b":");
                self.word();
            }
            _ => {
                // No colon after the NID: whatever follows is not `:`
                // (slots are never followed by one, see `prose_slot`).
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b" ");
            }
        }
        self.marks.push(Mark { span: start..self.buf.len(), key: None });
        self.progress.decoys += 1;
    }

    /// `urn` in a random ASCII case.
    fn scheme(&mut self) {
        push_scheme(&mut self.rng, &mut self.buf);
    }

    fn filler(&mut self, fill: Fill) {
        match fill {
            Fill::Word => self.word(),
            Fill::Id => {
                let p = self.rng.pick(ID_PREFIXES);
                self.put(p.as_bytes());
                self.put(b"-");
                let digits = 6 + self.rng.below(6) as u32;
                self.hex(digits);
            }
            Fill::Url => {
                let scheme: &[u8] = if self.rng.below(3) == 0 { b"http://" } else { b"https://" };
                self.put(scheme);
                let h = self.rng.pick(HOSTS);
                self.put(h.as_bytes());
                self.put(b"/");
                self.word();
                self.put(b"/");
                self.word();
            }
            Fill::Path => self.path(),
        }
    }

    fn path(&mut self) {
        let d = self.rng.pick(DIRS);
        self.put(d.as_bytes());
        self.put(b"/");
        self.word();
        self.put(b"/");
        self.word();
        self.put(b"-");
        self.num_below(100);
        let e = self.rng.pick(EXTENSIONS);
        self.put(e.as_bytes());
    }

    fn log_line(&mut self) {
        self.timestamp();
        self.put(b" ");
        let level = self.rng.pick(LEVELS);
        self.put(level.as_bytes());
        self.put(b" [");
        let comp = self.rng.pick(COMPONENTS);
        self.put(comp.as_bytes());
        self.put(b"-");
        self.num_below(16);
        self.put(b"] ");
        let n = 2 + self.rng.below(5);
        self.words(n);
        match self.rng.below(100) {
            0..=39 => {
                self.put(b" id=");
                self.slot(false, Fill::Id);
            }
            40..=59 => {
                self.put(b" resolving ");
                self.slot(false, Fill::Word);
                self.put(b" in ");
                self.num_below(500);
                self.put(b" ms");
            }
            60..=71 => {
                self.put(b" name=\"");
                self.slot(false, Fill::Id);
                self.put(b"\"");
            }
            72..=77 => {
                self.put(b" ref='");
                self.slot(true, Fill::Id);
                self.put(b"'");
            }
            78..=81 => {
                // The scanner's exception: `urn:` right after a `%HH` triplet.
                self.put(b" GET /lookup?q=%");
                let upper = self.rng.below(2) == 0;
                let v = self.rng.next();
                push_hex(&mut self.buf, v, 2, upper);
                self.slot(false, Fill::Word);
                self.put(b" 200");
            }
            82..=86 => {
                self.put(b"\t");
                self.slot(false, Fill::Path);
            }
            _ => {
                self.put(b" ");
                self.path();
            }
        }
        if self.rng.percent(15) {
            self.put(b" parent=");
            self.slot(false, Fill::Id);
        }
        self.put(b"\n");
    }

    fn json_line(&mut self) {
        let colon: &[u8] = if self.rng.below(4) == 0 { b": " } else { b":" };
        self.put(b"{\"ts\"");
        self.put(colon);
        self.put(b"\"");
        self.timestamp();
        self.put(b"\",\"level\"");
        self.put(colon);
        self.put(b"\"");
        let level = self.rng.pick(JSON_LEVELS);
        self.put(level.as_bytes());
        self.put(b"\"");
        if self.rng.percent(85) {
            self.put(b",\"id\"");
            self.put(colon);
            self.put(b"\"");
            self.slot(false, Fill::Id);
            self.put(b"\"");
        }
        self.put(b",\"msg\"");
        self.put(colon);
        self.put(b"\"");
        let n = 3 + self.rng.below(8);
        self.words(n);
        self.put(b"\"");
        if self.rng.percent(30) {
            self.put(b",\"ref\"");
            self.put(colon);
            self.put(b"\"");
            self.slot(false, Fill::Url);
            self.put(b"\"");
        }
        if self.rng.percent(10) {
            self.put(b",\"refs\"");
            self.put(colon);
            self.put(b"[\"");
            self.slot(false, Fill::Id);
            self.put(b"\",\"");
            self.slot(false, Fill::Id);
            self.put(b"\"]");
        }
        self.put(b",\"n\"");
        self.put(colon);
        self.num_below(100_000);
        self.put(b"}\n");
    }

    fn xml_line(&mut self) {
        let tag = self.rng.pick(XML_TAGS).as_bytes();
        self.put(b"<");
        self.put(tag);
        match self.rng.below(4) {
            0 | 1 => {
                self.put(b" xmlns=\"");
                self.slot(false, Fill::Url);
                self.put(b"\"");
            }
            2 => {
                self.put(b" xmlns='");
                self.slot(true, Fill::Url);
                self.put(b"'");
            }
            _ => {
                self.put(b" xmlns:dc=\"");
                self.slot(false, Fill::Url);
                self.put(b"\"");
            }
        }
        if self.rng.percent(40) {
            self.put(b" version=\"1.");
            self.num_below(10);
            self.put(b"\"");
        }
        self.put(b">");
        match self.rng.below(4) {
            0 => {
                self.put(b"<title>");
                let n = 2 + self.rng.below(6);
                self.words(n);
                self.put(b"</title>");
            }
            1 => {
                self.put(b"<id>");
                self.slot(false, Fill::Id);
                self.put(b"</id>");
            }
            2 => {
                self.put(b"<link href=\"");
                self.slot(false, Fill::Url);
                self.put(b"\"/>");
            }
            _ => {
                self.put(b"<note>");
                self.words(2);
                self.put(b" (");
                self.slot(false, Fill::Word);
                self.put(b") ");
                self.words(2);
                self.put(b"</note>");
            }
        }
        self.put(b"</");
        self.put(tag);
        self.put(b">\n");
    }

    fn prose_line(&mut self) {
        let sentences = 1 + self.rng.below(4);
        for k in 0..sentences {
            if k > 0 {
                self.put(b" ");
            }
            self.sentence();
        }
        self.put(b"\n");
    }

    fn sentence(&mut self) {
        let n = 4 + self.rng.below(12);
        let slot_at = if self.rng.percent(55) { 1 + self.rng.below(n - 1) } else { u64::MAX };
        let start = self.buf.len();
        self.word();
        self.buf[start].make_ascii_uppercase();
        for k in 1..n {
            if k == slot_at {
                self.prose_slot();
            }
            self.put(b" ");
            if self.rng.percent(3) {
                let w = self.rng.pick(NON_ASCII_WORDS);
                self.put(w.as_bytes());
            } else {
                self.word();
            }
        }
        if self.rng.percent(15) {
            // The sentence ends with the slot: `urn:...` then `.` `?` `!`.
            if self.rng.percent(40) {
                self.put(b" (");
                self.slot(false, Fill::Word);
                self.put(b")");
            } else {
                self.put(b" ");
                self.slot(false, Fill::Word);
            }
        }
        let end: &[u8] = [b".".as_slice(), b".", b".", b"?", b"!"][self.rng.below(5) as usize];
        self.put(end);
    }

    /// A slot inside a sentence, with the punctuation around it. A word
    /// (after a space) always follows.
    fn prose_slot(&mut self) {
        let (open, quoted, close): (&[u8], bool, &[u8]) = match self.rng.below(16) {
            0..=4 => (b" ", false, b""),
            5 => (b" (", false, b")"),
            6 => (b" (see ", false, b")"),
            7 => (b" \"", false, b"\""),
            8 => (b" '", true, b"'"),
            9 => (b" ", false, b","),
            10 => (b" ", false, b";"),
            11 => (b" ", false, b":"),
            12 => (b" <", false, b">"),
            13 => (b" [", false, b"]"),
            14 => (b" (cf. ", false, b".)"),
            _ => (b" `", false, b"`"),
        };
        self.put(open);
        self.slot(quoted, Fill::Word);
        self.put(close);
    }

    fn tsv_line(&mut self) {
        match self.rng.below(3) {
            0 => {
                self.num_below(1_000_000);
                self.put(b"\t");
                self.word();
                self.put(b"\t");
                self.slot(false, Fill::Id);
                self.put(b"\t");
                self.num_below(100);
                self.put(b".");
                self.num_below(100);
            }
            1 => {
                self.slot(false, Fill::Id);
                self.put(b"\t");
                self.word();
                self.put(b"\t");
                self.num_below(10_000);
            }
            _ => self.slot(false, Fill::Id),
        }
        self.put(b"\n");
    }

    fn yaml_line(&mut self) {
        match self.rng.below(3) {
            0 => {
                self.put(b"  ");
                self.word();
                self.put(b": ");
            }
            1 => {
                self.word();
                self.put(b" = ");
            }
            _ => self.put(b"- "),
        }
        self.slot(false, Fill::Word);
        self.put(b"\n");
    }
}

/// The first due point: uniform within one gap.
fn first_due(rng: &mut Rng, gap: u64) -> u64 {
    if gap == u64::MAX {
        u64::MAX
    } else {
        rng.below(gap + 1)
    }
}

/// The distance to the next due point: `gap` on average, half to one and a
/// half times it.
fn jitter(rng: &mut Rng, gap: u64) -> u64 {
    if gap == u64::MAX {
        u64::MAX
    } else {
        gap / 2 + rng.below(gap + 1)
    }
}

// ---------------------------------------------------------------------------
// Small writers

/// `00` to `99`.
const TWO_DIGITS: [[u8; 2]; 100] = two_digits();

const fn two_digits() -> [[u8; 2]; 100] {
    let mut out = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        out[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    out
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// The low `digits` hex digits of `v`.
fn push_hex(out: &mut Vec<u8>, v: u64, digits: u32, upper: bool) {
    let table = if upper { HEX_UPPER } else { HEX_LOWER };
    for k in (0..digits).rev() {
        out.push(table[((v >> (4 * k)) & 15) as usize]);
    }
}

fn push_dec(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// The low `width` decimal digits of `n`, zero-padded.
fn push_dec_padded(out: &mut Vec<u8>, n: u64, width: u32) {
    for k in (0..width).rev() {
        out.push(b'0' + (n / 10u64.pow(k) % 10) as u8);
    }
}

/// A word in lower case (70%), capitalised or upper case.
fn push_cased_word(rng: &mut Rng, out: &mut Vec<u8>) {
    let start = out.len();
    push_word(rng, out);
    match rng.below(10) {
        0..=6 => {}
        7..=8 => out[start].make_ascii_uppercase(),
        _ => out[start..].make_ascii_uppercase(),
    }
}

/// `urn` in any ASCII case, mostly lower.
fn push_scheme(rng: &mut Rng, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(b"urn");
    if rng.percent(30) {
        apply_case(rng, &mut out[start..], Case::Mixed);
    }
}

/// A 33-character LDH string: one too many for a NID. It has no `u`, so it
/// cannot spell another `urn`.
fn push_long_nid(rng: &mut Rng, out: &mut Vec<u8>) {
    const NO_U: &[u8] = b"abcdefghijklmnopqrstvwxyz0123456789-";
    out.push(rng.pick(b"abcdefghijklmnopqrstvwxyz"));
    for _ in 1..33 {
        out.push(rng.pick(NO_U));
    }
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01 (the civil-from-days
/// algorithm of H. Hinnant).
fn format_date(day: u64) -> [u8; 10] {
    let z = day as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let mut v = Vec::with_capacity(10);
    push_dec_padded(&mut v, y as u64, 4);
    v.push(b'-');
    push_dec_padded(&mut v, m as u64, 2);
    v.push(b'-');
    push_dec_padded(&mut v, d as u64, 2);
    let mut date = [0u8; 10];
    date.copy_from_slice(&v);
    date
}

/// Bytes this module wrote, known to be UTF-8 (URNs and keys are ASCII).
fn ascii(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    //! Expected values come from the scanner rules as written (a naive
    //! reference scanner below), from RFC 8141 §3 (an independent key
    //! function), and from the configuration, never from the generator.

    use super::*;
    use crate::grammar::parse_prefix;
    use std::collections::{HashMap, HashSet};

    struct TextRun {
        text: Vec<u8>,
        planted: Vec<(u64, String, String)>,
        decoys: Vec<(u64, usize)>,
        summary: GenSummary,
    }

    fn text_cfg(size: u64, seed: u64, urns_per_mib: u32, decoys_per_mib: u32) -> TextConfig {
        TextConfig { size, seed, urns_per_mib, decoys_per_mib }
    }

    fn run_text(cfg: &TextConfig) -> TextRun {
        let (mut text, mut planted, mut decoys) = (Vec::new(), Vec::new(), Vec::new());
        let summary = generate_text_traced(
            cfg,
            &mut text,
            Some(&mut |p: Planted<'_>| planted.push((p.offset, p.urn.to_owned(), p.key.to_owned()))),
            Some(&mut |offset, len| decoys.push((offset, len))),
        )
        .unwrap();
        TextRun { text, planted, decoys, summary }
    }

    /// The scanner rules of the brief, applied one byte at a time.
    fn reference_scan(text: &[u8]) -> Vec<(usize, usize)> {
        let mut found = Vec::new();
        let mut i = 0;
        while i + 4 <= text.len() {
            if text[i..i + 4].eq_ignore_ascii_case(b"urn:") && may_start(text, i) {
                if let Some(len) = urn_at(text, i) {
                    found.push((i, len));
                    i += len; // rule 4
                    continue;
                }
            }
            i += 1;
        }
        found
    }

    /// Not preceded by a URI-scheme character, unless it ends a `%HH`.
    fn may_start(text: &[u8], i: usize) -> bool {
        let scheme_char = |b: u8| b.is_ascii_alphanumeric() || b"+-.".contains(&b);
        i == 0
            || !scheme_char(text[i - 1])
            || (i >= 3 && text[i - 3] == b'%' && text[i - 2].is_ascii_hexdigit() && text[i - 1].is_ascii_hexdigit())
    }

    fn urn_at(text: &[u8], i: usize) -> Option<usize> {
        let mut end = text.len();
        if i > 0 && text[i - 1] == b'\'' {
            // Rule 2.
            if let Some(q) = text[i..].iter().position(|&b| b == b'\'') {
                end = i + q;
            }
        }
        // Rule 1.
        let mut len = parse_prefix(&text[i..end], Grammar::Rfc8141).ok()?.len();
        loop {
            // Rule 3.
            let mut cut = len;
            while cut > 0 && trimmable(&text[i..i + cut]) {
                cut -= 1;
            }
            if cut == len {
                return Some(len);
            }
            len = parse_prefix(&text[i..i + cut], Grammar::Rfc8141).ok()?.len();
        }
    }

    fn trimmable(s: &[u8]) -> bool {
        let count = |c: u8| s.iter().filter(|&&b| b == c).count();
        match s.last() {
            Some(b'.' | b',' | b';' | b':' | b'!' | b'?' | b'\'' | b'#') => true,
            Some(b')') => count(b')') > count(b'('),
            _ => false,
        }
    }

    /// RFC 8141 §3: lower-case scheme and NID, upper-case percent hex,
    /// components dropped.
    fn rfc_key(urn: &str) -> String {
        let end = ["?+", "?=", "#"].iter().filter_map(|c| urn.find(c)).min().unwrap_or(urn.len());
        let name = &urn[..end];
        let nid_end = 4 + name[4..].find(':').unwrap();
        let mut key = name[..=nid_end].to_ascii_lowercase();
        let nss = &name.as_bytes()[nid_end + 1..];
        let mut i = 0;
        while i < nss.len() {
            if nss[i] == b'%' {
                key.push('%');
                key.push(char::from(nss[i + 1].to_ascii_uppercase()));
                key.push(char::from(nss[i + 2].to_ascii_uppercase()));
                i += 3;
            } else {
                key.push(char::from(nss[i]));
                i += 1;
            }
        }
        key
    }

    fn urn_colon_hits(text: &[u8]) -> Vec<usize> {
        (0..text.len().saturating_sub(3)).filter(|&i| text[i..i + 4].eq_ignore_ascii_case(b"urn:")).collect()
    }

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let a = run_text(&text_cfg(300_000, 7, 1000, 300));
        let b = run_text(&text_cfg(300_000, 7, 1000, 300));
        let c = run_text(&text_cfg(300_000, 8, 1000, 300));
        assert!(a.text == b.text && a.planted == b.planted && a.summary == b.summary);
        assert_ne!(a.text, c.text);
        assert_ne!(a.planted, c.planted);
    }

    #[test]
    fn size_is_exact_and_text_is_utf8() {
        for size in [0, 1, 2, 17, 100, 1000, 65_536, 300_001] {
            let run = run_text(&text_cfg(size, 3, 5000, 2000));
            assert_eq!(run.text.len() as u64, size);
            assert_eq!(run.summary.bytes, size);
            assert!(std::str::from_utf8(&run.text).is_ok(), "size {size}");
            if size > 0 {
                assert_eq!(run.text.last(), Some(&b'\n'));
            }
            assert_eq!(run.planted.len() as u64, run.summary.planted);
            assert_eq!(run.decoys.len() as u64, run.summary.decoys);
        }
    }

    #[test]
    fn truth_is_what_the_scanner_rules_report() {
        for (seed, urns, decoys) in [(7, 2000, 1000), (1, 200, 50), (2, 20_000, 5000)] {
            let run = run_text(&text_cfg(2 << 20, seed, urns, decoys));
            let truth: Vec<(usize, usize)> = run.planted.iter().map(|(o, u, _)| (*o as usize, u.len())).collect();
            let scanned = reference_scan(&run.text);
            if truth != scanned {
                let first =
                    truth.iter().zip(&scanned).position(|(a, b)| a != b).unwrap_or(truth.len().min(scanned.len()));
                let at = truth.get(first).or(scanned.get(first)).map_or(0, |p| p.0);
                let context = String::from_utf8_lossy(&run.text[at.saturating_sub(40)..(at + 120).min(run.text.len())]);
                panic!("seed {seed}: truth {:?} scan {:?} near {context:?}", truth.get(first), scanned.get(first));
            }
            assert!(run.planted.len() > 100, "seed {seed}");
        }
    }

    #[test]
    fn planted_urns_sit_at_their_offsets_with_their_keys() {
        let run = run_text(&text_cfg(1 << 20, 11, 3000, 0));
        let mut last_end = 0;
        for (offset, urn, key) in &run.planted {
            let at = *offset as usize;
            assert!(at >= last_end, "offset order / overlap at {at}");
            assert_eq!(&run.text[at..at + urn.len()], urn.as_bytes());
            let parsed = parse(urn.as_bytes(), Grammar::Rfc8141).unwrap();
            assert_eq!(parsed.key(), key.as_str());
            assert_eq!(rfc_key(urn), *key, "{urn}");
            last_end = at + urn.len();
        }
    }

    #[test]
    fn every_urn_colon_is_planted_or_a_decoy() {
        let run = run_text(&text_cfg(2 << 20, 5, 1000, 1000));
        let mut covered = vec![false; run.text.len()];
        let spans = run
            .planted
            .iter()
            .map(|(o, u, _)| (*o as usize, u.len()))
            .chain(run.decoys.iter().map(|&(o, l)| (o as usize, l)));
        for (start, len) in spans {
            covered[start..start + len].iter_mut().for_each(|c| *c = true);
        }
        for hit in urn_colon_hits(&run.text) {
            let context = String::from_utf8_lossy(&run.text[hit.saturating_sub(30)..(hit + 30).min(run.text.len())]);
            assert!(covered[hit] && covered[hit + 3], "stray urn: at {hit}: {context:?}");
        }
        // Each decoy holds exactly one `urn:` and yields no URN on its own.
        for &(offset, len) in &run.decoys {
            let decoy = &run.text[offset as usize..offset as usize + len];
            assert_eq!(urn_colon_hits(decoy).len(), 1, "{:?}", String::from_utf8_lossy(decoy));
            assert!(reference_scan(decoy).is_empty(), "{:?}", String::from_utf8_lossy(decoy));
        }
    }

    #[test]
    fn decoys_alone_yield_nothing() {
        let run = run_text(&text_cfg(1 << 20, 9, 0, 20_000));
        assert!(run.planted.is_empty());
        assert!(run.summary.decoys > 10_000, "{}", run.summary.decoys);
        assert_eq!(reference_scan(&run.text), vec![]);
        assert!(urn_colon_hits(&run.text).len() as u64 >= run.summary.decoys);
    }

    #[test]
    fn density_follows_the_configuration() {
        let run = run_text(&text_cfg(4 << 20, 3, 200, 50));
        // 4 MiB at 200 and 50 per MiB.
        assert!((720..=880).contains(&run.summary.planted), "{}", run.summary.planted);
        assert!((170..=230).contains(&run.summary.decoys), "{}", run.summary.decoys);
        let none = run_text(&text_cfg(1 << 20, 3, 0, 0));
        assert_eq!((none.summary.planted, none.summary.decoys), (0, 0));
        assert!(urn_colon_hits(&none.text).is_empty());
    }

    #[test]
    fn about_30_percent_respell_earlier_classes() {
        let run = run_text(&text_cfg(2 << 20, 4, 2000, 0));
        let keys: HashSet<&str> = run.planted.iter().map(|(_, _, k)| k.as_str()).collect();
        assert_eq!(keys.len() as u64, run.summary.distinct_keys);
        let planted = run.summary.planted as f64;
        let repeats = (planted - keys.len() as f64) / planted;
        assert!((0.24..=0.36).contains(&repeats), "{repeats}");
        // Some repeats are spelled differently from the first occurrence.
        let mut first: HashMap<&str, &str> = HashMap::new();
        let respelled = run.planted.iter().filter(|(_, u, k)| *first.entry(k).or_insert(u) != u.as_str()).count();
        assert!(respelled > 100, "{respelled}");
    }

    #[test]
    fn spellings_shapes_and_contexts_vary() {
        let run = run_text(&text_cfg(4 << 20, 21, 2000, 0));
        let has = |f: &dyn Fn(&str) -> bool| run.planted.iter().any(|(_, u, _)| f(u));
        assert!(has(&|u| u.starts_with("URN:")));
        assert!(has(&|u| u.starts_with("Urn:")));
        let nid = |u: &str| u[4..4 + u[4..].find(':').unwrap()].to_owned();
        assert!(has(&|u| nid(u).bytes().any(|b| b.is_ascii_uppercase())));
        assert!(has(&|u| u.contains("?+")));
        assert!(has(&|u| u.contains("?=")));
        assert!(has(&|u| u.contains('#')));
        assert!(has(&|u| u.contains('(') && u.ends_with(')')));
        assert!(has(&|u| u.contains('\'')));
        for c in [':', '/', ';', '=', '@', '~', '$', '&', '*', '+', ','] {
            assert!(has(&|u| u[nid(u).len() + 5..].contains(c)), "no {c:?} in an NSS");
        }
        assert!(has(&|u| u.as_bytes().windows(3).any(|w| w[0] == b'%' && w[1..].iter().any(u8::is_ascii_lowercase))));
        let nids: HashSet<String> = run.planted.iter().map(|(_, _, k)| nid(k)).collect();
        for family in ["isbn", "uuid", "ietf", "oid", "nbn", "epc", "iso", "mpeg", "example", "urn"] {
            assert!(nids.contains(family), "{family}");
        }
        assert!(nids.iter().any(|n| n.starts_with("urn-")));
        assert!(nids.iter().any(|n| n.starts_with("x-")));
        assert!(nids.iter().any(|n| n.len() == 2));
        assert!(nids.iter().any(|n| n.len() > 20));
        let text = &run.text;
        let before: HashSet<u8> = run.planted.iter().filter(|p| p.0 > 0).map(|p| text[p.0 as usize - 1]).collect();
        for b in b" \"'(=>\n\t<[`" {
            assert!(before.contains(b), "never after {:?}", char::from(*b));
        }
        assert!(run.planted.iter().any(|p| p.0 >= 3 && text[p.0 as usize - 3] == b'%'));
        let after: HashSet<u8> = run.planted.iter().map(|(o, u, _)| text[*o as usize + u.len()]).collect();
        for b in b" \"'.,;:!?)<>]`\n\t" {
            assert!(after.contains(b), "never before {:?}", char::from(*b));
        }
    }

    #[test]
    fn classes_are_valid_distinct_and_in_key_form() {
        let catalog = Catalog::new();
        let mut class = Vec::new();
        for seed in [0, 7] {
            let mut seen = HashSet::new();
            for index in (0..40_000).chain(ISBN_BODIES - 5..ISBN_BODIES + 5).chain(u64::MAX - 5..=u64::MAX) {
                let nid_end = class_urn(&catalog, seed, index, &mut class);
                let urn = parse(&class, Grammar::Rfc8141).unwrap_or_else(|e| panic!("{}: {e:?}", ascii(&class)));
                assert_eq!(urn.nid_range().end, nid_end);
                assert_eq!(urn.key(), ascii(&class));
                assert_eq!(rfc_key(ascii(&class)), ascii(&class));
                assert!(!b".,;:!?'".contains(class.last().unwrap()), "{}", ascii(&class));
                assert!(seen.insert(class.clone()), "duplicate key {}", ascii(&class));
            }
        }
    }

    #[test]
    fn spellings_keep_the_key_and_end_safely() {
        let catalog = Catalog::new();
        let (mut class, mut out) = (Vec::new(), Vec::new());
        let mut rng = Rng::new(1);
        for index in 0..20_000 {
            let nid_end = class_urn(&catalog, 3, index, &mut class);
            out.clear();
            render_spelling(&mut rng, &class, nid_end, &mut out);
            let spelled = ascii(&out).to_owned();
            assert_eq!(parse(&out, Grammar::Rfc8141).unwrap().key(), ascii(&class), "{spelled}");
            // Followed by a space, the scanner takes exactly the spelling.
            out.push(b'.');
            assert_eq!(reference_scan(&out), vec![(0, out.len() - 1)], "{spelled}");
        }
    }

    #[test]
    fn vocabulary_never_spells_urn() {
        let lists: &[&[&str]] = &[
            WORDS,
            NON_ASCII_WORDS,
            NON_ASCII_SNIPPETS,
            LEVELS,
            JSON_LEVELS,
            COMPONENTS,
            ID_PREFIXES,
            XML_TAGS,
            HOSTS,
            DIRS,
            EXTENSIONS,
            LANGS,
            COUNTRIES,
        ];
        for word in lists.iter().flat_map(|l| l.iter()) {
            assert!(!word.to_ascii_lowercase().contains("urn"), "{word}");
            assert!(!word.contains(':') && !word.contains('%'), "{word}");
        }
        assert!(WORDS.iter().all(|w| w.bytes().all(|b| b.is_ascii_lowercase())));
    }

    #[test]
    fn dates_match_the_calendar() {
        assert_eq!(&format_date(0), b"1970-01-01");
        assert_eq!(&format_date(11_016), b"2000-02-29");
        assert_eq!(&format_date(19_723), b"2024-01-01");
        assert_eq!(&format_date(19_782), b"2024-02-29");
    }

    #[test]
    fn truth_tsv_lines() {
        let mut out = Vec::new();
        write_truth_tsv_line(&mut out, &Planted { offset: 42, urn: "URN:ISBN:1", key: "urn:isbn:1" }).unwrap();
        write_key_count_tsv_line(&mut out, &KeyCount { key: "urn:isbn:1", count: 3 }).unwrap();
        assert_eq!(out, b"42\tURN:ISBN:1\turn:isbn:1\nurn:isbn:1\t3\n");
    }

    struct DatasetRun {
        text: Vec<u8>,
        truth: Vec<(String, u64)>,
        summary: GenSummary,
    }

    fn run_dataset(cfg: &DatasetConfig) -> io::Result<DatasetRun> {
        let (mut text, mut truth) = (Vec::new(), Vec::new());
        let summary =
            generate_dataset(cfg, &mut text, Some(&mut |k: KeyCount<'_>| truth.push((k.key.to_owned(), k.count))))?;
        Ok(DatasetRun { text, truth, summary })
    }

    #[test]
    fn dataset_truth_counts_the_lines() {
        let cfg = DatasetConfig { lines: 30_000, distinct: 8_000, seed: 5, invalid_per_mille: 25 };
        let run = run_dataset(&cfg).unwrap();
        assert_eq!(run.text.len() as u64, run.summary.bytes);
        let lines: Vec<&[u8]> = run.text.strip_suffix(b"\n").unwrap().split(|&b| b == b'\n').collect();
        assert_eq!(lines.len(), 30_000);
        let (mut order, mut counts, mut invalid) = (Vec::new(), HashMap::new(), 0u64);
        for line in &lines {
            match parse(line, Grammar::Rfc8141) {
                Ok(urn) => {
                    let key = urn.key().into_owned();
                    assert_eq!(rfc_key(urn.as_str()), key);
                    assert_eq!(reference_scan(line), vec![(0, line.len())], "{}", urn.as_str());
                    let count = counts.entry(key.clone()).or_insert(0u64);
                    if *count == 0 {
                        order.push(key);
                    }
                    *count += 1;
                }
                Err(_) => {
                    invalid += 1;
                    assert!(reference_scan(line).is_empty(), "{}", String::from_utf8_lossy(line));
                }
            }
        }
        assert_eq!(invalid, 30_000 * 25 / 1000);
        assert_eq!(order.len(), 8_000);
        let expected: Vec<(String, u64)> = order.into_iter().map(|k| (k.clone(), counts[&k])).collect();
        assert_eq!(run.truth, expected);
        let s = run.summary;
        assert_eq!((s.planted, s.decoys, s.distinct_keys), (30_000 - invalid, invalid, 8_000));
        // Lines respell their class: case and components vary.
        let spelled_as_key = lines.iter().filter(|l| counts.contains_key(ascii(l))).count();
        // About 0.86 * 0.82 * 0.72 of the valid lines keep every part as in the key.
        assert!(spelled_as_key < lines.len() * 7 / 10 && spelled_as_key > lines.len() * 3 / 10, "{spelled_as_key}");
    }

    #[test]
    fn dataset_is_deterministic_and_seeded() {
        let cfg = DatasetConfig { lines: 5_000, distinct: 1_000, seed: 1, invalid_per_mille: 10 };
        let a = run_dataset(&cfg).unwrap();
        let b = run_dataset(&cfg).unwrap();
        let c = run_dataset(&DatasetConfig { seed: 2, ..cfg }).unwrap();
        assert!(a.text == b.text && a.truth == b.truth);
        assert_ne!(a.text, c.text);
    }

    #[test]
    fn dataset_edge_cases() {
        let clamped =
            run_dataset(&DatasetConfig { lines: 100, distinct: 1_000, seed: 0, invalid_per_mille: 100 }).unwrap();
        assert_eq!((clamped.summary.planted, clamped.summary.distinct_keys), (90, 90));
        assert!(clamped.truth.iter().all(|(_, n)| *n == 1));
        let empty = run_dataset(&DatasetConfig { lines: 0, distinct: 5, seed: 0, invalid_per_mille: 0 }).unwrap();
        assert!(empty.text.is_empty() && empty.truth.is_empty());
        let all_bad = run_dataset(&DatasetConfig { lines: 50, distinct: 0, seed: 0, invalid_per_mille: 1000 }).unwrap();
        assert_eq!((all_bad.summary.decoys, all_bad.summary.planted), (50, 0));
        let none = run_dataset(&DatasetConfig { lines: 10, distinct: 0, seed: 0, invalid_per_mille: 0 });
        assert_eq!(none.err().map(|e| e.kind()), Some(io::ErrorKind::InvalidInput));
        let huge =
            run_dataset(&DatasetConfig { lines: u64::from(u32::MAX) + 1, distinct: 1, seed: 0, invalid_per_mille: 0 });
        assert_eq!(huge.err().map(|e| e.kind()), Some(io::ErrorKind::InvalidInput));
    }

    // Throughput, for the record (no assertion), e.g.
    // `cargo test --release --lib gen::tests::throughput -- --ignored --nocapture`.

    fn report(what: &str, bytes: u64, start: std::time::Instant) {
        let secs = start.elapsed().as_secs_f64();
        println!("{what}: {bytes} bytes in {secs:.2} s, {:.0} MB/s", bytes as f64 / secs / 1e6);
    }

    #[test]
    #[ignore = "measures throughput; run in release"]
    fn throughput_text() {
        let cfg = TextConfig { size: 1 << 30, seed: 7, urns_per_mib: 200, decoys_per_mib: 50 };
        let start = std::time::Instant::now();
        let s = generate_text(&cfg, &mut io::sink(), None).unwrap();
        report("text, 200 URNs/MiB, no truth", s.bytes, start);
    }

    #[test]
    #[ignore = "measures throughput; run in release"]
    fn throughput_text_with_truth() {
        let cfg = TextConfig { size: 1 << 30, seed: 7, urns_per_mib: 200, decoys_per_mib: 50 };
        let mut truth = Vec::new();
        let start = std::time::Instant::now();
        let s =
            generate_text(&cfg, &mut io::sink(), Some(&mut |p| write_truth_tsv_line(&mut truth, &p).unwrap())).unwrap();
        report("text, 200 URNs/MiB, TSV truth", s.bytes, start);
        let cfg = TextConfig { urns_per_mib: 5000, ..cfg };
        truth.clear();
        let start = std::time::Instant::now();
        let s =
            generate_text(&cfg, &mut io::sink(), Some(&mut |p| write_truth_tsv_line(&mut truth, &p).unwrap())).unwrap();
        report("text, 5000 URNs/MiB, TSV truth", s.bytes, start);
    }

    #[test]
    #[ignore = "measures throughput; run in release"]
    fn throughput_dataset() {
        let cfg = DatasetConfig { lines: 10_000_000, distinct: 3_000_000, seed: 7, invalid_per_mille: 10 };
        let mut keys = 0u64;
        let start = std::time::Instant::now();
        let s = generate_dataset(&cfg, &mut io::sink(), Some(&mut |_| keys += 1)).unwrap();
        report(&format!("dataset, 10M lines, {keys} keys"), s.bytes, start);
    }
}
