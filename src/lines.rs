//! Line-oriented deduplication: datasets of one URN per line, as
//! `urnscan dedup` reads them.
//!
//! # What a line is
//!
//! A line ends at `\n` (the last one may end at the end of input). Its
//! surrounding ASCII whitespace, `\r` included, is ignored ([`trim_line`]);
//! a line with nothing else is *empty* and only counted. Every other line is
//! judged as a whole by [`crate::parse`]: it is a URN or it is *rejected*
//! with the parser's error, and a rejected line always reaches the caller's
//! reject callback — nothing is dropped silently.
//!
//! # Keys and namespace rules
//!
//! Lines are grouped by the RFC 8141 equivalence key ([`crate::Urn::write_key`]).
//! With [`DedupOptions::ns_rules`] the key is then passed through
//! [`apply_ns_rules`]: functions `key -> key` that apply what a namespace's
//! own RFC says on top of RFC 8141 ([`uuid_rule`]: RFC 4122 §3,
//! [`ietf_rule`]: RFC 2648 §2). Because a rule sees only the RFC 8141 key,
//! it can merge classes RFC 8141 keeps apart but never split one it merges.
//!
//! With [`DedupOptions::nids`], a URN line of another namespace is counted
//! ([`LineCounts::excluded`]) and goes no further: no key, no class.
//!
//! # Position and first-seen order
//!
//! Each class keeps its count and its first occurrence as a [`Position`]:
//! the input's index and, *here*, the 1-based line number in
//! [`Position::offset`] (lines are in byte order, so the order is the same
//! as by byte offset). Output is in first-seen order ([`Order::FirstSeen`])
//! or by key bytes ([`Order::Key`]).
//!
//! # How a block of lines is processed
//!
//! Input comes in blocks of whole lines ([`DedupOptions::block_size`],
//! 8 MiB by default): slices of a mapped file, or a buffer refilled from a
//! stream. A block is processed in two parallel phases, so that no thread
//! ever merges another thread's table:
//!
//! 1. *Parse* (rayon over chunks of the block, cut at line boundaries): make
//!    each 4 KiB into bit maps, the line ends and the grammar's answers for
//!    every byte ([`crate::platform::simd::line_bits`]), step from line end
//!    to line end, trim, judge the line from the maps of its span (or walk
//!    it where they cannot tell: `grammar/bits.rs`), hash the key
//!    ([`key_hash`]), and append a 24-byte record
//!    (hash, line, where the text is, where the key is) to one of
//!    64 partitions chosen by the key's hash. The key is copied to a side
//!    buffer only when it is not the start of the line's text (most lines
//!    are written in key form, components aside).
//! 2. *Count* (rayon over the 64 partitions): each partition owns one
//!    [`KeyTable`] and inserts its records, chunk by chunk, in line order,
//!    through [`KeyTable::insert_batch`]'s loop, which prefetches the
//!    table's memory for the records ahead (the entries' from the records'
//!    own hashes and key lengths, without slicing their text).
//!
//! Partitions hold disjoint keys, so there is nothing to merge, the result
//! does not depend on the number of threads or on chunk boundaries, and each
//! table is 1/64 of the whole, which keeps its index and records closer to
//! the cache. Since every table sees its keys in input order, its insertion
//! order *is* its first-seen order, and first-seen output is a 64-way merge
//! of the tables, with no sort and no extra memory. Line numbers come from a
//! prefix sum of the chunks' line counts after phase 1.
//!
//! Formatting millions of output lines on one thread would be the serial
//! tail of a run, so [`LineDedup::finish_parallel`] cuts the output into
//! ranges of about 16 k classes, formats them two per thread at a time and
//! writes them in order. In first-seen order a range is an interval of
//! positions, merged from the tables on its own ([`FirstSeenEntries`],
//! which `urnscan scan --unique --sort first-seen` shares); key order cuts
//! the sorted handles. The bytes are those of [`LineDedup::finish`].
//!
//! The hot loop allocates nothing per line: the key buffer is reused, the
//! chunks' record vectors are kept from block to block, and the tables keep
//! keys in an arena ([`KeyTable`]).
//!
//! Why not one table per thread, merged at the end? The merge is
//! sequential and inserts every key of every table once more, so with many
//! distinct keys a large share of the work would not run in parallel.
//! Partitioning costs 24 bytes of record per line of the current block; the
//! hash that picks the partition also places the key in its table, so each
//! line is hashed once.
//!
//! # Memory
//!
//! A distinct key costs its bytes, a header of about 7 bytes, the delta
//! from the key to its first-seen form (empty when they are the same) and
//! 8 bytes per index slot (see [`crate::dedup`]). Measured with
//! `heap_bytes() / len()` over the 64 tables on a dataset of 1,000,000
//! distinct keys from `urnscan gen --dataset` (lines of 36 bytes on
//! average): **63.2 bytes per distinct key** (the ignored test
//! `bytes_per_distinct_key`; it counts the arenas' 64 KiB blocks whole, so
//! the byte of count saved per key shows in the peak RSS of 3 M keys, 2.8
//! MB, more than here; 97.3 with a 32-byte record per key and raw
//! forms stored whole, 118.5 when those were doubling vectors). Neither
//! order needs more for the output: first-seen order merges the tables as
//! they are, and `--sort key` keeps its sorted list in their indexes. On
//! top of the tables, the current block (8 MiB by default) and its records,
//! 24 bytes per line.
//!
//! # Larger than memory: spilling
//!
//! With [`DedupOptions::memory_limit`], the tables are written out whenever
//! their heap bytes exceed the limit after a block (the block is then at
//! most an eighth of the limit): every entry (key, first position, first
//! form, count) goes to one of 64 temporary files chosen by the same hash
//! as the in-memory partition, and the tables start empty. At the end each
//! file is read back into one table; counts add up and the earliest
//! position wins, exactly as in memory, so the classes are the same. A file
//! whose table still exceeds the limit is split again by the next 6 bits of
//! the hash (up to [`MAX_SPILL_LEVELS`] levels, after which the limit is
//! ignored). Each final table is sorted into a run file, and the runs are
//! merged, so the output is byte for byte the output of the in-memory run
//! and the memory stays bounded by the limit plus one record per open run.
//! Key order needs no memory beyond the tables: the sorted list of entries
//! is kept in the tables' indexes, which the output does not use
//! ([`SortedEntries::reusing_indexes`]).
//!
//! The limit is approximate. It is checked between blocks, and the tables'
//! indexes grow by doubling (the 64 partitions grow alike, so they tend to
//! double together), so the tables can pass it by a block's worth of new
//! keys and one doubling of the indexes before they are written out. And it bounds the
//! key tables only: the current block (an eighth of the limit when it is
//! read from a stream), its records (24 bytes per line) and 16 KiB of
//! buffer per open file come on top. Temporary files
//! live in a fresh directory under [`DedupOptions::temp_dir`] (default:
//! [`std::env::temp_dir`]) that is removed when the run ends, also on
//! error.
//!
//! # Streams and very long lines
//!
//! A stream is read in blocks; a line that is still not finished after
//! 64 KiB is *condensed* while it is read: leading whitespace is dropped,
//! its first 16 KiB are kept, the rest is skipped, and `...` stands for any
//! non-whitespace that was skipped. The parser looks at no more than
//! [`MAX_URN_LEN`]` + 1` bytes and at whether there are more, so the verdict
//! is the one the whole line would get; only the rejected text is shorter.
//! Mapped files are never copied and need no such step.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use rayon::prelude::*;

use crate::dedup::{key_hash, Entry, FirstSeenEntries, KeyTable, Occurrence, Position, Raw, SortedEntries};
use crate::error::{ErrorKind, UrnError};
use crate::grammar::bits::parse_in_span;
use crate::grammar::{parse, Grammar, MAX_URN_LEN};
use crate::nid::NidFilter;
use crate::platform::simd::line_bits::{for_each_line, LineBits};
use crate::source::Whole;

/// Default bytes per block of input: small, because a block's bytes and its
/// records (24 bytes per line) are held on top of the key tables. Phase 2
/// visits each partition's table once per block, so a larger block gives
/// each visit more records for the same table memory (fewer misses of the
/// cache and the TLB per record): on a 375 MB dataset of 10 M lines, 8 MiB
/// blocks ran `dedup -q` 3 % faster than 4 MiB at one thread and 6–9 % at
/// two, for 2.5–5 MB more peak RSS; 16 MiB gained a little more for 21 MB
/// (`BENCHMARKS.md`). (Once, 64 MiB blocks took the peak RSS from 197 to
/// 302 MiB.)
pub const DEFAULT_BLOCK_SIZE: usize = 8 << 20;
/// Smallest block; also the length after which a streamed line is condensed.
pub const MIN_BLOCK_SIZE: usize = LONG_LINE;
/// Largest block (records address lines within a block with 32 bits).
pub const MAX_BLOCK_SIZE: usize = 1 << 30;
/// How many times a spilled partition may be split again.
pub const MAX_SPILL_LEVELS: u32 = 5;

/// Partitions per level: the top `PART_BITS` bits of the key hash ([`key_hash`]).
const PART_BITS: u32 = 6;
const PARTS: usize = 1 << PART_BITS;
/// Smallest parse chunk worth a rayon task.
const MIN_CHUNK: usize = 64 << 10;
/// A streamed line longer than this is condensed.
const LONG_LINE: usize = 64 << 10;
/// Bytes of a condensed line kept after its leading whitespace.
const HEAD: usize = 2 * MAX_URN_LEN;
/// Buffer of each spill or run file.
const FILE_BUFFER: usize = 16 << 10;
const KINDS: usize = ErrorKind::ALL.len();
/// [`Rec::key_at`] of a key equal to the line's text.
const KEY_IS_TEXT: u32 = u32::MAX;

// Records and the key table store URN lengths in 16 bits.
const _: () = assert!(MAX_URN_LEN <= u16::MAX as usize && HEAD < LONG_LINE && HEAD > MAX_URN_LEN);

/// How a run judges and groups lines.
#[derive(Clone, Debug)]
pub struct DedupOptions {
    /// The grammar lines are judged by.
    pub grammar: Grammar,
    /// Apply [`apply_ns_rules`] to every key.
    pub ns_rules: bool,
    /// Spill the key tables to temporary files when their heap bytes exceed
    /// this many bytes.
    pub memory_limit: Option<u64>,
    /// Where the spill directory is created (default: the system's).
    pub temp_dir: Option<PathBuf>,
    /// Bytes per block of input, clamped to
    /// [`MIN_BLOCK_SIZE`]..=[`MAX_BLOCK_SIZE`], and to an eighth of the
    /// memory limit when there is one. Never changes results.
    pub block_size: usize,
    /// Bytes of input parsed so far, for a progress display: added to once
    /// per parse chunk (a few per thread and block), never per line; `None`
    /// costs nothing.
    pub progress: Option<Arc<AtomicU64>>,
    /// Keep only the URNs of these namespaces (`None`: all); the lines of
    /// other namespaces are counted ([`LineCounts::excluded`]), not kept.
    pub nids: Option<NidFilter>,
}

impl Default for DedupOptions {
    fn default() -> Self {
        DedupOptions {
            grammar: Grammar::Rfc8141,
            ns_rules: false,
            memory_limit: None,
            temp_dir: None,
            block_size: DEFAULT_BLOCK_SIZE,
            progress: None,
            nids: None,
        }
    }
}

/// Output order of [`LineDedup::finish`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Order {
    /// By first occurrence: input, then line.
    #[default]
    FirstSeen,
    /// By key bytes.
    Key,
}

impl Order {
    /// Compares two classes in this order. Positions and keys are unique
    /// per class, so no two classes compare equal.
    pub fn compare(self, a: &Entry<'_>, b: &Entry<'_>) -> Ordering {
        match self {
            Order::FirstSeen => a.first.cmp(&b.first),
            Order::Key => a.key.cmp(b.key),
        }
    }
}

/// Line counts over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LineCounts {
    /// Lines read, empty and rejected ones included.
    pub lines: u64,
    /// Lines that are a URN (of a namespace [`DedupOptions::nids`] keeps).
    pub valid: u64,
    /// Lines that are a URN of a namespace [`DedupOptions::nids`] leaves
    /// out.
    pub excluded: u64,
    /// Lines with nothing but whitespace.
    pub empty: u64,
    /// Rejected lines by the kind of their error.
    pub invalid: BTreeMap<ErrorKind, u64>,
}

impl LineCounts {
    /// Rejected lines.
    pub fn invalid_total(&self) -> u64 {
        self.invalid.values().sum()
    }

    fn add(&mut self, chunk: &ChunkOut) {
        self.lines += chunk.lines;
        self.valid += chunk.valid;
        self.excluded += chunk.excluded;
        self.empty += chunk.empty;
        for (kind, &n) in ErrorKind::ALL.iter().zip(&chunk.invalid) {
            if n > 0 {
                *self.invalid.entry(*kind).or_default() += n;
            }
        }
    }
}

/// What [`LineDedup::finish`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finished {
    /// Classes handed out.
    pub distinct: u64,
    /// Whether the key tables went through temporary files.
    pub spilled: bool,
}

/// A rejected line, as the reject callback sees it.
#[derive(Clone, Copy, Debug)]
pub struct Reject<'a> {
    /// Index of the input.
    pub file: u32,
    /// 1-based line number.
    pub line: u64,
    /// The line without its surrounding whitespace (what was judged).
    pub text: &'a [u8],
    /// Why it is not a URN; the offset is into `text`.
    pub error: UrnError,
}

/// Receives rejected lines in input order.
pub type RejectSink<'s> = dyn FnMut(&Reject<'_>) -> io::Result<()> + 's;

/// Why feeding an input stopped.
#[derive(Debug)]
pub enum FeedError {
    /// The input could not be read (the lines before the error are counted).
    Read(io::Error),
    /// The reject callback or a spill file failed: the run cannot go on.
    Write(io::Error),
}

impl fmt::Display for FeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeedError::Read(e) => write!(f, "read error: {e}"),
            FeedError::Write(e) => write!(f, "write error: {e}"),
        }
    }
}

impl std::error::Error for FeedError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FeedError::Read(e) | FeedError::Write(e) => Some(e),
        }
    }
}

/// The line without its surrounding ASCII whitespace (space, tab, `\r`,
/// `\n`, form feed).
///
/// ```
/// assert_eq!(urnscan::lines::trim_line(b" \turn:ab:c\r"), b"urn:ab:c");
/// ```
pub fn trim_line(line: &[u8]) -> &[u8] {
    let (lead, len) = trimmed_range(line);
    &line[lead..lead + len]
}

/// Start and length of the trimmed line.
fn trimmed_range(line: &[u8]) -> (usize, usize) {
    let Some(start) = line.iter().position(|b| !b.is_ascii_whitespace()) else {
        return (line.len(), 0);
    };
    let end = line.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |i| i + 1);
    (start, end - start)
}

// ---------------------------------------------------------------------------
// Namespace rules

/// Applies every namespace rule to an RFC 8141 key (`urn:`, the lower-case
/// NID, `:`, the NSS), in place. Each rule recognises its own NID and
/// leaves other keys alone; none changes a key's length.
///
/// ```
/// let mut key = b"urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6".to_vec();
/// urnscan::lines::apply_ns_rules(&mut key);
/// assert_eq!(key, b"urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6");
/// ```
pub fn apply_ns_rules(key: &mut [u8]) {
    uuid_rule(key);
    ietf_rule(key);
}

/// `uuid` (RFC 4122 §3): "The hexadecimal values "a" through "f" are output
/// as lower case characters and are case insensitive on input." When the
/// NSS of a `urn:uuid:` key is a well-formed UUID string (8-4-4-4-12
/// hexadecimal digits), its letters are lower-cased; any other NSS is left
/// as it is, since the RFC says nothing about it.
pub fn uuid_rule(key: &mut [u8]) {
    const PREFIX: &[u8] = b"urn:uuid:";
    if key.starts_with(PREFIX) && is_uuid_string(&key[PREFIX.len()..]) {
        key[PREFIX.len()..].make_ascii_lowercase();
    }
}

/// The RFC 4122 §3 string form: 36 characters, hyphens at 8, 13, 18, 23,
/// hexadecimal digits elsewhere.
fn is_uuid_string(nss: &[u8]) -> bool {
    nss.len() == 36
        && nss.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// `ietf` (RFC 2648 §2): the NSS grammar is ABNF whose sub-namespaces are
/// the quoted literals `"rfc:"`, `"fyi:"`, `"std:"`, `"bcp:"` (each followed
/// by `1*DIGIT`), `"id:"` and `"mtg:"` (each followed by
/// `1*(DIGIT / ALPHA / "-")`), and ABNF literals are case-insensitive
/// (RFC 2234 §2.3). So when a `urn:ietf:` NSS matches one of these
/// productions, its sub-namespace token is lower-cased: `urn:ietf:RFC:2648`
/// is `urn:ietf:rfc:2648`. Nothing else changes: the draft and meeting
/// names keep their case, numbers keep their leading zeros, and other
/// sub-namespaces (`params`, RFC 3553) are left alone.
pub fn ietf_rule(key: &mut [u8]) {
    const PREFIX: &[u8] = b"urn:ietf:";
    if !key.starts_with(PREFIX) {
        return;
    }
    let nss = &mut key[PREFIX.len()..];
    let Some(colon) = nss.iter().position(|&b| b == b':') else {
        return;
    };
    let (token, rest) = nss.split_at_mut(colon);
    let rest = &rest[1..];
    let numeric = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let string = |s: &[u8]| !s.is_empty() && s.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-');
    let lower: [u8; 3] = match token.len() {
        2 | 3 => {
            let mut t = [0u8; 3];
            t[..token.len()].copy_from_slice(token);
            t.make_ascii_lowercase();
            t
        }
        _ => return,
    };
    let matches = match &lower[..token.len()] {
        b"rfc" | b"fyi" | b"std" | b"bcp" => numeric(rest),
        b"id" | b"mtg" => string(rest),
        _ => false,
    };
    if matches {
        token.make_ascii_lowercase();
    }
}

// ---------------------------------------------------------------------------
// Parse phase

/// One valid line, in a partition of a chunk.
#[derive(Clone, Copy, Debug)]
struct Rec {
    /// [`key_hash`] of the key: partition, spill level and table slot.
    hash: u64,
    /// Where the line's text starts in the chunk (blocks are at most
    /// [`MAX_BLOCK_SIZE`]).
    start: u32,
    /// Line index in the chunk.
    line: u32,
    /// Where the key starts in [`ChunkOut::keys`], or [`KEY_IS_TEXT`] when
    /// the key is the start of the line's text.
    key_at: u32,
    text_len: u16,
    key_len: u16,
}

/// One rejected line of a chunk.
#[derive(Clone, Copy, Debug)]
struct RejectRec {
    line: u32,
    /// Where the line's text is in [`ChunkOut::reject_text`].
    start: u64,
    len: u64,
    error: UrnError,
}

/// What the parse phase found in one chunk. Kept between blocks, so the
/// vectors keep their capacity instead of being allocated (and their pages
/// faulted in) again for every block.
#[derive(Default)]
struct ChunkOut {
    /// Where the chunk starts in its block.
    offset: usize,
    lines: u64,
    valid: u64,
    excluded: u64,
    empty: u64,
    invalid: [u64; KINDS],
    parts: Vec<Vec<Rec>>,
    /// Keys that are not a prefix of their line's text.
    keys: Vec<u8>,
    rejects: Vec<RejectRec>,
    /// The rejected lines' text, copied when they were judged: it is shown
    /// after phase 2, and a mapped file truncated in between would read as
    /// zeros by then.
    reject_text: Vec<u8>,
}

#[derive(Clone, Copy)]
struct Judge<'n> {
    grammar: Grammar,
    ns_rules: bool,
    nids: Option<&'n NidFilter>,
}

impl ChunkOut {
    /// Phase 1 over `block[range]`.
    fn scan(&mut self, block: &[u8], range: Range<usize>, judge: Judge<'_>) {
        self.reset(range.start);
        let chunk = &block[range];
        // The line ends and the grammar's answers as bits, a span at a time
        // (see `platform::simd::line_bits`).
        for_each_line(chunk, |line, span| self.line(chunk, line, span, judge));
    }

    fn reset(&mut self, offset: usize) {
        self.offset = offset;
        (self.lines, self.valid, self.excluded, self.empty) = (0, 0, 0, 0);
        self.invalid = [0; KINDS];
        self.parts.resize_with(PARTS, Vec::new);
        self.parts.iter_mut().for_each(Vec::clear);
        self.keys.clear();
        self.rejects.clear();
        self.reject_text.clear();
    }

    /// The text of a rejected line, as it was judged.
    fn reject_text(&self, r: &RejectRec) -> &[u8] {
        &self.reject_text[r.start as usize..][..r.len as usize]
    }

    /// Judges one line (without its `\n`), with the maps of the span of
    /// `chunk` that holds it when there is one: the hot loop.
    fn line(&mut self, chunk: &[u8], line: Range<usize>, span: Option<(&LineBits, usize)>, judge: Judge<'_>) {
        let index = self.lines as u32;
        self.lines += 1;
        let (lead, len) = trimmed_range(&chunk[line.clone()]);
        if len == 0 {
            self.empty += 1;
            return;
        }
        let start = line.start + lead;
        let text = &chunk[start..start + len];
        let parsed = match span {
            // Judged from the bits where they tell; walked otherwise.
            Some((bits, base)) => {
                parse_in_span(bits, &chunk[base..base + bits.len()], start - base, start + len - base, judge.grammar)
            }
            None => parse(text, judge.grammar),
        };
        match parsed {
            Ok(urn) if judge.nids.is_some_and(|f| !f.accepts_nid(urn.nid().as_bytes())) => self.excluded += 1,
            Ok(urn) => {
                self.valid += 1;
                // Most lines are written in key form, components aside: their
                // key is the start of the text and is not copied.
                let (key_at, key) = match urn.key_if_borrowed() {
                    Some(name) if !judge.ns_rules => (KEY_IS_TEXT, name),
                    _ => {
                        let at = self.keys.len();
                        urn.write_key(&mut self.keys);
                        if judge.ns_rules {
                            apply_ns_rules(&mut self.keys[at..]);
                        }
                        (at as u32, &self.keys[at..])
                    }
                };
                let hash = key_hash(key);
                let rec = Rec {
                    hash,
                    start: start as u32,
                    line: index,
                    key_at,
                    text_len: len as u16,
                    key_len: key.len() as u16,
                };
                self.parts[partition(hash, 0)].push(rec);
            }
            Err(error) => {
                let kind = ErrorKind::ALL.iter().position(|&k| k == error.kind()).unwrap_or(0);
                self.invalid[kind] += 1;
                let at = self.reject_text.len();
                self.reject_text.extend_from_slice(&chunk[start..start + len]);
                self.rejects.push(RejectRec { line: index, start: at as u64, len: len as u64, error });
            }
        }
    }
}

/// The partition of a key at a spill level: level 0 is the top
/// [`PART_BITS`] bits of its hash, level 1 the next ones, and so on.
fn partition(hash: u64, level: u32) -> usize {
    let shifted = hash.checked_shl(PART_BITS * level).unwrap_or(0);
    (shifted >> (64 - PART_BITS)) as usize
}

/// The end of the range that starts at `start` and holds about `target`
/// bytes of whole lines: just after the last `\n` within the target, or
/// after the first `\n` past it when a line is longer, or the end.
fn line_boundary(bytes: &[u8], start: usize, target: usize) -> usize {
    let want = start.saturating_add(target.max(1));
    if want >= bytes.len() {
        return bytes.len();
    }
    match memchr::memrchr(b'\n', &bytes[start..want]) {
        Some(i) => start + i + 1,
        None => memchr::memchr(b'\n', &bytes[want..]).map_or(bytes.len(), |i| want + i + 1),
    }
}

/// `bytes` cut into ranges of whole lines of about `target` bytes each (a
/// line longer than that is one range), in order: how `urnscan dedup` cuts
/// a block into its parse phase's chunks.
pub fn line_ranges(bytes: &[u8], target: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let end = line_boundary(bytes, start, target);
        out.push(start..end);
        start = end;
    }
    out
}

// ---------------------------------------------------------------------------
// The engine

/// Deduplicates lines fed from any number of inputs; see the module docs.
///
/// ```
/// use urnscan::lines::{DedupOptions, LineDedup, Order};
///
/// let mut dedup = LineDedup::new(DedupOptions::default());
/// let mut rejected = Vec::new();
/// dedup.add_bytes(b"URN:ISBN:0451450523\nurn:a:b\n\nurn:isbn:0451450523\n", 0, &mut |r| {
///     rejected.push((r.line, r.error.kind().as_str()));
///     Ok(())
/// })?;
/// assert_eq!(rejected, [(2, "nid-too-short")]);
/// assert_eq!((dedup.counts().lines, dedup.counts().valid, dedup.counts().empty), (4, 2, 1));
/// let mut classes = Vec::new();
/// dedup.finish(Order::FirstSeen, &mut |e| {
///     classes.push((String::from_utf8_lossy(&e.raw.to_vec()).into_owned(), e.count, e.first.offset));
///     Ok(())
/// })?;
/// assert_eq!(classes, [("URN:ISBN:0451450523".to_owned(), 2, 1)]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct LineDedup {
    grammar: Grammar,
    ns_rules: bool,
    nids: Option<NidFilter>,
    limit: Option<u64>,
    block_size: usize,
    temp_dir: Option<PathBuf>,
    tables: Vec<KeyTable>,
    counts: LineCounts,
    spill: Option<Spill>,
    /// Phase-1 results, one per chunk of the current block.
    chunks: Vec<ChunkOut>,
    progress: Option<Arc<AtomicU64>>,
    /// Whether the count phase runs ([`LineDedup::parse_only`]).
    count_keys: bool,
}

/// The spill directory and the level-0 partition files.
struct Spill {
    dir: SpillDir,
    set: SpillSet,
}

impl LineDedup {
    /// An empty run.
    pub fn new(opts: DedupOptions) -> LineDedup {
        let mut block_size = opts.block_size.clamp(MIN_BLOCK_SIZE, MAX_BLOCK_SIZE);
        if let Some(limit) = opts.memory_limit {
            let eighth = usize::try_from(limit / 8).unwrap_or(usize::MAX);
            block_size = block_size.min(eighth.max(MIN_BLOCK_SIZE));
        }
        LineDedup {
            grammar: opts.grammar,
            ns_rules: opts.ns_rules,
            nids: opts.nids,
            limit: opts.memory_limit,
            block_size,
            temp_dir: opts.temp_dir,
            tables: (0..PARTS).map(|_| KeyTable::new()).collect(),
            counts: LineCounts::default(),
            spill: None,
            chunks: Vec::new(),
            progress: opts.progress,
            count_keys: true,
        }
    }

    /// The same run with only the parse phase of every block: each line is
    /// still trimmed, judged, keyed and hashed, its record still goes to
    /// its partition and [`LineDedup::counts`] still counts it (rejected
    /// lines still reach the reject callback), but no key goes into a
    /// table, so there are no classes. What the count phase costs is the
    /// difference to a whole run (`urnscan bench --lines`, rows `+ parse`
    /// and `+ dedup`).
    pub fn parse_only(mut self) -> LineDedup {
        self.count_keys = false;
        self
    }

    /// Counts so far.
    pub fn counts(&self) -> &LineCounts {
        &self.counts
    }

    /// Heap bytes of the key tables now in memory.
    pub fn table_bytes(&self) -> usize {
        self.tables.iter().map(KeyTable::heap_bytes).sum()
    }

    /// Distinct keys now in memory (all of them unless something spilled).
    pub fn table_len(&self) -> usize {
        self.tables.iter().map(KeyTable::len).sum()
    }

    /// Whether the tables were spilled to temporary files.
    pub fn spilled(&self) -> bool {
        self.spill.is_some()
    }

    /// Feeds the whole contents of input `file`; returns its number of
    /// lines. Rejected lines go to `on_reject` in order.
    pub fn add_bytes(&mut self, bytes: &[u8], file: u32, on_reject: &mut RejectSink<'_>) -> Result<u64, FeedError> {
        self.add_blocks(bytes, file, on_reject, |_| {})
    }

    /// [`LineDedup::add_bytes`] on a whole file, giving each block's memory
    /// back once it is done ([`Whole::release_before`]), so that a mapped
    /// dataset of many GB does not stay resident while the tables grow.
    pub fn add_whole(&mut self, whole: &Whole, file: u32, on_reject: &mut RejectSink<'_>) -> Result<u64, FeedError> {
        self.add_blocks(whole.as_bytes(), file, on_reject, |end| whole.release_before(end))
    }

    fn add_blocks(
        &mut self,
        bytes: &[u8],
        file: u32,
        on_reject: &mut RejectSink<'_>,
        mut done_before: impl FnMut(usize),
    ) -> Result<u64, FeedError> {
        let mut start = 0;
        let mut next_line = 1;
        while start < bytes.len() {
            let end = line_boundary(bytes, start, self.block_size);
            next_line += self.feed_block(&bytes[start..end], file, next_line, on_reject)?;
            done_before(end);
            start = end;
        }
        Ok(next_line - 1)
    }

    /// Feeds input `file` from a stream, block by block; returns its number
    /// of lines. A read error ends the stream where it happens: the whole
    /// lines before it are fed (they stay counted), the line it cut short
    /// is not (it may be a URN cut short), and the error is returned.
    pub fn add_reader(
        &mut self,
        reader: &mut dyn Read,
        file: u32,
        on_reject: &mut RejectSink<'_>,
    ) -> Result<u64, FeedError> {
        let block = self.block_size;
        let mut buf = Vec::with_capacity(block + LONG_LINE);
        let mut next_line = 1;
        let mut eof = false;
        loop {
            if !eof && buf.len() < block {
                eof = match fill(reader, &mut buf, block) {
                    Ok(eof) => eof,
                    Err(e) => return self.cut_short(&buf, file, next_line, on_reject, e),
                };
            }
            if eof {
                if !buf.is_empty() {
                    next_line += self.feed_block(&buf, file, next_line, on_reject)?;
                }
                return Ok(next_line - 1);
            }
            match memchr::memrchr(b'\n', &buf) {
                Some(nl) => {
                    next_line += self.feed_block(&buf[..=nl], file, next_line, on_reject)?;
                    buf.drain(..=nl);
                }
                None => eof = condense_long_line(reader, &mut buf).map_err(FeedError::Read)?,
            }
        }
    }

    /// The end of [`LineDedup::add_reader`] at read error `error`: the
    /// whole lines of `buf` fed, the rest left out.
    fn cut_short(
        &mut self,
        buf: &[u8],
        file: u32,
        next_line: u64,
        on_reject: &mut RejectSink<'_>,
        error: io::Error,
    ) -> Result<u64, FeedError> {
        if let Some(nl) = memchr::memrchr(b'\n', buf) {
            self.feed_block(&buf[..=nl], file, next_line, on_reject)?;
        }
        Err(FeedError::Read(error))
    }

    /// Both phases over one block of whole lines; returns its line count.
    fn feed_block(
        &mut self,
        block: &[u8],
        file: u32,
        first_line: u64,
        on_reject: &mut RejectSink<'_>,
    ) -> Result<u64, FeedError> {
        let target = (block.len() / (rayon::current_num_threads() * 4)).max(MIN_CHUNK);
        let judge = Judge { grammar: self.grammar, ns_rules: self.ns_rules, nids: self.nids.as_ref() };
        let ranges = line_ranges(block, target);
        if self.chunks.len() < ranges.len() {
            self.chunks.resize_with(ranges.len(), ChunkOut::default);
        }
        let used = ranges.len();
        let progress = self.progress.as_deref();
        self.chunks[..used].par_iter_mut().zip(ranges).for_each(|(out, range)| {
            let len = range.len() as u64;
            out.scan(block, range, judge);
            if let Some(counter) = progress {
                counter.fetch_add(len, AtomicOrdering::Relaxed);
            }
        });
        let outs = &self.chunks[..used];
        let mut bases = Vec::with_capacity(outs.len());
        let mut next = first_line;
        for out in outs {
            bases.push(next);
            next += out.lines;
        }
        if self.count_keys {
            self.tables
                .par_iter_mut()
                .enumerate()
                .for_each(|(p, table)| fill_partition(table, p, block, outs, &bases, file));
        }
        for (out, &base) in outs.iter().zip(&bases) {
            self.counts.add(out);
            for r in &out.rejects {
                let text = out.reject_text(r);
                on_reject(&Reject { file, line: base + u64::from(r.line), text, error: r.error })
                    .map_err(FeedError::Write)?;
            }
        }
        self.spill_if_over_limit().map_err(FeedError::Write)?;
        Ok(next - first_line)
    }

    fn spill_if_over_limit(&mut self) -> io::Result<()> {
        match self.limit {
            Some(limit) if self.table_bytes() as u64 > limit => self.spill_tables(),
            _ => Ok(()),
        }
    }

    /// Writes every table to the level-0 spill files and empties them.
    fn spill_tables(&mut self) -> io::Result<()> {
        let spill = match &mut self.spill {
            Some(spill) => spill,
            None => {
                let dir = SpillDir::create(self.temp_dir.as_deref())?;
                self.spill.insert(Spill { dir, set: SpillSet::new(0) })
            }
        };
        for table in &mut self.tables {
            spill.set.write_table(&mut spill.dir, table)?;
            *table = KeyTable::new();
        }
        Ok(())
    }

    /// Hands every class to `emit` in `order`.
    pub fn finish(mut self, order: Order, emit: &mut dyn FnMut(&Entry<'_>) -> io::Result<()>) -> io::Result<Finished> {
        self.prepare_output()?;
        match self.spill.take() {
            None => Ok(Finished { distinct: emit_tables(&mut self.tables, order, emit)?, spilled: false }),
            Some(spill) => merge_runs(spill, self.limit, order, emit),
        }
    }

    /// [`LineDedup::finish`] that writes the classes to `out`, each as
    /// `format` puts it into a buffer. When nothing spilled, ranges of
    /// classes are formatted in parallel, a few per thread at a time, and
    /// written in order (see the module docs); the bytes are the same as
    /// one `format` call per class in [`LineDedup::finish`]'s order.
    pub fn finish_parallel(
        mut self,
        order: Order,
        format: &Formatter<'_>,
        out: &mut dyn Write,
    ) -> io::Result<Finished> {
        self.prepare_output()?;
        match self.spill.take() {
            None => Ok(Finished { distinct: write_tables(&mut self.tables, order, format, out)?, spilled: false }),
            Some(spill) => merge_runs(spill, self.limit, order, &mut one_by_one(format, out)),
        }
    }

    /// Frees the block buffers and decides whether the output goes through
    /// the spill files; if it does, every table is in them afterwards.
    fn prepare_output(&mut self) -> io::Result<()> {
        // The blocks are done: their buffers go back before the output.
        // (Key order needs nothing more: the sorted list is kept in the
        // tables' indexes.)
        self.chunks = Vec::new();
        if self.spill.is_some() {
            self.spill_tables()?;
        }
        Ok(())
    }
}

/// Puts one class into a buffer, for [`LineDedup::finish_parallel`].
pub type Formatter<'f> = dyn Fn(&Entry<'_>, &mut Vec<u8>) -> io::Result<()> + Sync + 'f;

/// The output from the spill files: every partition aggregated into a
/// sorted run, then the runs merged.
fn merge_runs(
    Spill { mut dir, set }: Spill,
    limit: Option<u64>,
    order: Order,
    emit: &mut dyn FnMut(&Entry<'_>) -> io::Result<()>,
) -> io::Result<Finished> {
    let limit = limit.unwrap_or(u64::MAX);
    let mut runs = Vec::new();
    for path in set.finish()? {
        runs.push(RunCursor::open(aggregate(&mut dir, path, 1, limit, order)?)?);
    }
    let distinct = merge(runs, order, emit)?;
    Ok(Finished { distinct, spilled: true })
}

/// Phase 2 for one partition: its records from every chunk, in line order.
fn fill_partition(table: &mut KeyTable, p: usize, block: &[u8], outs: &[ChunkOut], bases: &[u64], file: u32) {
    for (out, &base) in outs.iter().zip(bases) {
        let chunk = &block[out.offset..];
        let view = |rec: &Rec| {
            let start = rec.start as usize;
            let raw = chunk.get(start..start + usize::from(rec.text_len))?;
            let key = match rec.key_at {
                KEY_IS_TEXT => raw.get(..usize::from(rec.key_len))?,
                at => out.keys.get(at as usize..at as usize + usize::from(rec.key_len))?,
            };
            Some(Occurrence { hash: rec.hash, key, raw, at: Position { file, offset: base + u64::from(rec.line) } })
        };
        table.insert_batch_hashed(&out.parts[p], |rec| Some((rec.hash, usize::from(rec.key_len))), view, intact);
    }
}

/// Whether a line about to be kept as a new class (the table's copy of
/// it, `raw`; a key not in it was copied in phase 1) still holds no zero
/// byte. A mapped file truncated between the two phases of a block reads
/// as zeros from its new end on, and no URN holds a zero byte: without
/// this, lines judged valid in phase 1 were kept as classes of zeros and
/// printed (`urnscan dedup` of a 375 MB dataset truncated to 100 MB while
/// it ran printed 22,203 lines of NUL bytes, 2026-11-28). Checked on the
/// copy, which is what is stored, and on all of it (a copy need not read
/// the bytes front to back). A file rewritten in place without shrinking
/// is not detected; its results are unspecified, as `urnscan scan`'s are.
fn intact(_: &Rec, _: &[u8], raw: &[u8]) -> bool {
    memchr::memchr(0, raw).is_none()
}

/// Reads until `buf` holds `target` bytes or the input ends; returns
/// whether it ended.
fn fill(reader: &mut dyn Read, buf: &mut Vec<u8>, target: usize) -> io::Result<bool> {
    let want = target.saturating_sub(buf.len());
    let got = (&mut *reader).take(want as u64).read_to_end(buf)?;
    Ok(got < want)
}

/// `buf` holds the start of a line and no `\n`: reads the rest of the line
/// and leaves in `buf` its condensed form (see the module docs), then the
/// `\n` and whatever followed it. Returns whether the input ended first.
fn condense_long_line(reader: &mut dyn Read, buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut head = Condensed::default();
    let mut piece = std::mem::take(buf);
    let mut scratch = vec![0u8; LONG_LINE];
    loop {
        if let Some(nl) = memchr::memchr(b'\n', &piece) {
            head.absorb(&piece[..nl]);
            *buf = head.into_line();
            buf.extend_from_slice(&piece[nl..]);
            return Ok(false);
        }
        head.absorb(&piece);
        let n = loop {
            match reader.read(&mut scratch) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        if n == 0 {
            *buf = head.into_line();
            return Ok(true);
        }
        piece.clear();
        piece.extend_from_slice(&scratch[..n]);
    }
}

/// A long line being condensed.
#[derive(Default)]
struct Condensed {
    head: Vec<u8>,
    started: bool,
    skipped_text: bool,
}

impl Condensed {
    fn absorb(&mut self, mut bytes: &[u8]) {
        if !self.started {
            match bytes.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => {
                    self.started = true;
                    bytes = &bytes[i..];
                }
                None => return,
            }
        }
        let take = (HEAD - self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        if !self.skipped_text && bytes[take..].iter().any(|b| !b.is_ascii_whitespace()) {
            self.skipped_text = true;
        }
    }

    fn into_line(mut self) -> Vec<u8> {
        if self.skipped_text {
            self.head.extend_from_slice(b"...");
        }
        self.head
    }
}

// ---------------------------------------------------------------------------
// Output: merging sorted sources

/// A sorted source of classes for [`merge`].
trait Cursor {
    fn head(&self) -> Option<Entry<'_>>;
    fn advance(&mut self) -> io::Result<()>;
}

/// The in-memory result: first-seen order merges the tables (each already
/// in first-seen order, see the module docs); key order sorts them all.
fn emit_tables(
    tables: &mut [KeyTable],
    order: Order,
    emit: &mut dyn FnMut(&Entry<'_>) -> io::Result<()>,
) -> io::Result<u64> {
    match order {
        Order::FirstSeen => {
            let entries = FirstSeenEntries::new(tables);
            entries.for_each(emit)?;
            Ok(entries.len() as u64)
        }
        Order::Key => {
            let sorted = SortedEntries::reusing_indexes(tables);
            for e in sorted.iter() {
                emit(&e)?;
            }
            Ok(sorted.len() as u64)
        }
    }
}

/// [`emit_tables`] for [`LineDedup::finish_parallel`]: the same classes in
/// the same order, formatted a range at a time on several threads.
fn write_tables(tables: &mut [KeyTable], order: Order, format: &Formatter<'_>, out: &mut dyn Write) -> io::Result<u64> {
    match order {
        Order::Key => {
            let sorted = SortedEntries::reusing_indexes(tables);
            sorted.write_in_order(out, format)?;
            Ok(sorted.len() as u64)
        }
        Order::FirstSeen => {
            let entries = FirstSeenEntries::new(tables);
            entries.write_in_order(out, format)?;
            Ok(entries.len() as u64)
        }
    }
}

/// An `emit` for [`merge`] that formats each class and writes it to `out`.
fn one_by_one<'a>(format: &'a Formatter<'_>, out: &'a mut dyn Write) -> impl FnMut(&Entry<'_>) -> io::Result<()> + 'a {
    let mut text = Vec::new();
    move |e| {
        text.clear();
        format(e, &mut text)?;
        out.write_all(&text)
    }
}

/// K-way merge of sorted cursors (a binary heap of cursor indexes).
fn merge<C: Cursor>(
    mut cursors: Vec<C>,
    order: Order,
    emit: &mut dyn FnMut(&Entry<'_>) -> io::Result<()>,
) -> io::Result<u64> {
    let less = |cursors: &[C], a: usize, b: usize| match (cursors[a].head(), cursors[b].head()) {
        (Some(x), Some(y)) => order.compare(&x, &y).then(a.cmp(&b)) == Ordering::Less,
        (x, _) => x.is_some(),
    };
    let mut heap: Vec<usize> = (0..cursors.len()).filter(|&i| cursors[i].head().is_some()).collect();
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, |a, b| less(&cursors, a, b));
    }
    let mut emitted = 0;
    while let Some(&top) = heap.first() {
        if let Some(e) = cursors[top].head() {
            emit(&e)?;
            emitted += 1;
        }
        cursors[top].advance()?;
        if cursors[top].head().is_none() {
            heap.swap_remove(0);
        }
        sift_down(&mut heap, 0, |a, b| less(&cursors, a, b));
    }
    Ok(emitted)
}

fn sift_down(heap: &mut [usize], mut i: usize, less: impl Fn(usize, usize) -> bool) {
    loop {
        let mut smallest = i;
        for child in [2 * i + 1, 2 * i + 2] {
            if child < heap.len() && less(heap[child], heap[smallest]) {
                smallest = child;
            }
        }
        if smallest == i {
            return;
        }
        heap.swap(i, smallest);
        i = smallest;
    }
}

// ---------------------------------------------------------------------------
// Spilling

/// A fresh directory for spill and run files, removed on drop.
struct SpillDir {
    path: PathBuf,
    next: u64,
}

impl SpillDir {
    fn create(base: Option<&Path>) -> io::Result<SpillDir> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        for attempt in 0..1000 {
            let path = base.join(format!("urnscan-dedup-{}-{nanos}-{attempt}", std::process::id()));
            match fs::create_dir(&path) {
                Ok(()) => return Ok(SpillDir { path, next: 0 }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))),
            }
        }
        Err(io::Error::other(format!("cannot create a spill directory in {}", base.display())))
    }

    fn new_file(&mut self) -> io::Result<(PathBuf, BufWriter<File>)> {
        self.next += 1;
        let path = self.path.join(format!("{}.bin", self.next));
        let file = File::options().write(true).create_new(true).open(&path)?;
        Ok((path, BufWriter::with_capacity(FILE_BUFFER, file)))
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Partition files of one spill level, created as entries arrive.
struct SpillSet {
    level: u32,
    files: Vec<Option<(PathBuf, BufWriter<File>)>>,
}

impl SpillSet {
    fn new(level: u32) -> SpillSet {
        SpillSet { level, files: (0..PARTS).map(|_| None).collect() }
    }

    fn write_table(&mut self, dir: &mut SpillDir, table: &KeyTable) -> io::Result<()> {
        for e in table.iter() {
            let slot = &mut self.files[partition(key_hash(e.key), self.level)];
            if slot.is_none() {
                *slot = Some(dir.new_file()?);
            }
            if let Some((_, w)) = slot {
                write_record(w, &e)?;
            }
        }
        Ok(())
    }

    /// Flushes and closes the files; their paths in partition order.
    fn finish(self) -> io::Result<Vec<PathBuf>> {
        let mut paths = Vec::new();
        for (path, mut w) in self.files.into_iter().flatten() {
            w.flush()?;
            paths.push(path);
        }
        Ok(paths)
    }
}

/// Reads one partition file into a table (splitting it again when it
/// exceeds the limit) and writes its classes, sorted, to a run file.
fn aggregate(dir: &mut SpillDir, path: PathBuf, level: u32, limit: u64, order: Order) -> io::Result<PathBuf> {
    let mut table = KeyTable::new();
    let mut split: Option<SpillSet> = None;
    let mut rec = OwnedEntry::default();
    let mut reader = BufReader::with_capacity(FILE_BUFFER, File::open(&path)?);
    while rec.read_from(&mut reader)? {
        let e = rec.entry();
        table.insert(e.key, rec.raw_bytes(), e.first, e.count);
        if table.heap_bytes() as u64 > limit && level < MAX_SPILL_LEVELS {
            split.get_or_insert_with(|| SpillSet::new(level)).write_table(dir, &table)?;
            table = KeyTable::new();
        }
    }
    drop(reader);
    let _ = fs::remove_file(&path);
    let (run, mut w) = dir.new_file()?;
    match split {
        None => {
            let mut all: Vec<Entry<'_>> = table.iter().collect();
            all.sort_unstable_by(|a, b| order.compare(a, b));
            for e in &all {
                write_record(&mut w, e)?;
            }
        }
        Some(mut set) => {
            set.write_table(dir, &table)?;
            drop(table);
            let mut parts = Vec::new();
            for sub in set.finish()? {
                parts.push(RunCursor::open(aggregate(dir, sub, level + 1, limit, order)?)?);
            }
            merge(parts, order, &mut |e| write_record(&mut w, e))?;
        }
    }
    w.flush()?;
    Ok(run)
}

/// A sorted run file being merged; deleted when dropped.
struct RunCursor {
    path: PathBuf,
    reader: BufReader<File>,
    rec: OwnedEntry,
    live: bool,
}

impl RunCursor {
    fn open(path: PathBuf) -> io::Result<RunCursor> {
        let reader = BufReader::with_capacity(FILE_BUFFER, File::open(&path)?);
        let mut cursor = RunCursor { path, reader, rec: OwnedEntry::default(), live: true };
        cursor.advance()?;
        Ok(cursor)
    }
}

impl Cursor for RunCursor {
    fn head(&self) -> Option<Entry<'_>> {
        self.live.then(|| self.rec.entry())
    }

    fn advance(&mut self) -> io::Result<()> {
        self.live = self.rec.read_from(&mut self.reader)?;
        Ok(())
    }
}

impl Drop for RunCursor {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// A class read back from a spill or run file.
#[derive(Default)]
struct OwnedEntry {
    key: Vec<u8>,
    raw: Vec<u8>,
    raw_is_key: bool,
    first: Position,
    count: u64,
}

/// Record layout (little-endian): key length (u16), first-form length
/// (u16, 0 when it is the key), input (u32), line (u64), count (u64), the
/// key, the first form.
const HEADER: usize = 24;

fn write_record(w: &mut impl Write, e: &Entry<'_>) -> io::Result<()> {
    let too_long = || io::Error::new(io::ErrorKind::InvalidData, "URN longer than 65535 bytes");
    let raw = match e.raw.as_bytes() {
        Some(b) if b == e.key => Cow::Borrowed(&[][..]),
        Some(b) => Cow::Borrowed(b),
        None => Cow::Owned(e.raw.to_vec()),
    };
    let mut header = [0u8; HEADER];
    header[0..2].copy_from_slice(&u16::try_from(e.key.len()).map_err(|_| too_long())?.to_le_bytes());
    header[2..4].copy_from_slice(&u16::try_from(raw.len()).map_err(|_| too_long())?.to_le_bytes());
    header[4..8].copy_from_slice(&e.first.file.to_le_bytes());
    header[8..16].copy_from_slice(&e.first.offset.to_le_bytes());
    header[16..24].copy_from_slice(&e.count.to_le_bytes());
    w.write_all(&header)?;
    w.write_all(e.key)?;
    w.write_all(&raw)
}

impl OwnedEntry {
    /// Reads the next record; false at the end of the file.
    fn read_from(&mut self, r: &mut impl Read) -> io::Result<bool> {
        let mut header = [0u8; HEADER];
        if !read_exact_or_end(r, &mut header)? {
            return Ok(false);
        }
        let u16_at = |i: usize| usize::from(u16::from_le_bytes([header[i], header[i + 1]]));
        let u64_at = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().unwrap_or_default());
        let (key_len, raw_len) = (u16_at(0), u16_at(2));
        self.first =
            Position { file: u32::from_le_bytes([header[4], header[5], header[6], header[7]]), offset: u64_at(8) };
        self.count = u64_at(16);
        self.key.resize(key_len, 0);
        r.read_exact(&mut self.key)?;
        self.raw_is_key = raw_len == 0;
        self.raw.resize(raw_len, 0);
        r.read_exact(&mut self.raw)?;
        Ok(true)
    }

    fn raw_bytes(&self) -> &[u8] {
        if self.raw_is_key {
            &self.key
        } else {
            &self.raw
        }
    }

    fn entry(&self) -> Entry<'_> {
        Entry { key: &self.key, raw: Raw::from(self.raw_bytes()), count: self.count, first: self.first }
    }
}

/// Fills `buf`; false if the input ends before its first byte.
fn read_exact_or_end(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "truncated spill record")),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::sorted;

    fn rule(f: fn(&mut [u8]), key: &str) -> String {
        let mut k = key.as_bytes().to_vec();
        f(&mut k);
        String::from_utf8(k).unwrap()
    }

    /// RFC 8141 key of a line, as `dedup` computes it before any rule.
    fn key8141(s: &str) -> String {
        parse(s.as_bytes(), Grammar::Rfc8141).unwrap().key().into_owned()
    }

    #[test]
    fn line_ranges_cover_the_bytes_in_whole_lines_of_about_the_target() {
        let mut bytes = Vec::new();
        for i in 0..500 {
            bytes.extend_from_slice(format!("urn:ab:{}\n", "x".repeat(i % 97)).as_bytes());
            if i % 50 == 0 {
                bytes.extend_from_slice(&[b'y'; 400]); // a line longer than most targets
            }
        }
        bytes.extend_from_slice(b"no final newline");
        for target in [1, 7, 100, 4096, bytes.len(), bytes.len() + 1] {
            let ranges = line_ranges(&bytes, target);
            let mut at = 0;
            for (i, r) in ranges.iter().enumerate() {
                assert_eq!(r.start, at, "target {target}: range {i} does not follow the one before");
                at = r.end;
                if i + 1 == ranges.len() {
                    continue;
                }
                let range = &bytes[r.clone()];
                assert!(range.ends_with(b"\n"), "target {target}: range {i} ends inside a line");
                // Longer than the target only as one line.
                assert!(
                    range.len() <= target || !range[..range.len() - 1].contains(&b'\n'),
                    "target {target}: range {i}"
                );
            }
            assert_eq!(at, bytes.len(), "target {target}");
        }
        assert!(line_ranges(b"", 10).is_empty());
    }

    #[test]
    fn uuid_rule_follows_rfc_4122() {
        // RFC 4122 §3 example, and the same UUID in upper case (hex is
        // "case insensitive on input").
        let lower = "urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6";
        assert_eq!(rule(uuid_rule, lower), lower);
        assert_eq!(rule(uuid_rule, &key8141("URN:UUID:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6")), lower);
        assert_eq!(rule(uuid_rule, &key8141("urn:uuid:F81d4FaE-7DEC-11d0-A765-00a0C91E6BF6")), lower);
        // Not the 8-4-4-4-12 string form: the RFC says nothing, so nothing changes.
        for other in [
            "urn:uuid:F81D4FAE7DEC11D0A76500A0C91E6BF6",
            "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF",
            "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6X",
            "urn:uuid:G81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
            "urn:uuid:F81D4FAE:7DEC-11D0-A765-00A0C91E6BF6",
            "urn:uuidx:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
            "urn:example:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
        ] {
            assert_eq!(rule(uuid_rule, other), other);
        }
    }

    #[test]
    fn ietf_rule_follows_rfc_2648() {
        // RFC 2648 §3 example; the sub-namespace literal in any case.
        assert_eq!(rule(ietf_rule, "urn:ietf:rfc:2648"), "urn:ietf:rfc:2648");
        assert_eq!(rule(ietf_rule, &key8141("URN:IETF:RFC:2648")), "urn:ietf:rfc:2648");
        assert_eq!(rule(ietf_rule, "urn:ietf:Std:66"), "urn:ietf:std:66");
        assert_eq!(rule(ietf_rule, "urn:ietf:BCP:14"), "urn:ietf:bcp:14");
        assert_eq!(rule(ietf_rule, "urn:ietf:fYi:4"), "urn:ietf:fyi:4");
        // draft-nss and mtg-nss: the token folds, the string keeps its case.
        assert_eq!(rule(ietf_rule, "urn:ietf:ID:ietf-urn-ietf-06"), "urn:ietf:id:ietf-urn-ietf-06");
        assert_eq!(rule(ietf_rule, "urn:ietf:MTG:41-URN"), "urn:ietf:mtg:41-URN");
        // Leading zeros are not dropped (the RFC does not say so).
        assert_eq!(rule(ietf_rule, "urn:ietf:RFC:02648"), "urn:ietf:rfc:02648");
        // Not one of the productions: left alone.
        for other in [
            "urn:ietf:RFC:26x48",
            "urn:ietf:RFC:",
            "urn:ietf:RFC",
            "urn:ietf:ID:draft_x",
            "urn:ietf:ID:a:b",
            "urn:ietf:Params:xml:ns:xmpp-tls",
            "urn:ietf:RFCS:1",
            "urn:example:RFC:2648",
            "urn:ietf:R:1",
        ] {
            assert_eq!(rule(ietf_rule, other), other);
        }
    }

    #[test]
    fn rules_only_merge_and_are_idempotent() {
        let spellings = [
            "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
            "URN:UUID:f81d4fae-7dec-11d0-a765-00a0c91e6bf6?=x",
            "urn:IETF:RFC:2648#sec",
            "urn:ietf:rfc:2648",
            "urn:example:A%2cb",
        ];
        for s in spellings {
            let k = key8141(s);
            let once = rule(apply_ns_rules, &k);
            assert_eq!(rule(apply_ns_rules, &once), once, "{s}");
            // Only the NSS's letter case may change.
            assert!(once.eq_ignore_ascii_case(&k), "{s}");
            let nss_start = 5 + k[4..].find(':').unwrap();
            assert_eq!(once[..nss_start], k[..nss_start], "{s}");
        }
    }

    #[test]
    fn trimming() {
        assert_eq!(trim_line(b"  urn:ab:c \r"), b"urn:ab:c");
        assert_eq!(trim_line(b"\t\r"), b"");
        assert_eq!(trim_line(b""), b"");
        assert_eq!(trim_line(b"urn:ab:c d"), b"urn:ab:c d");
    }

    fn opts() -> DedupOptions {
        DedupOptions::default()
    }

    /// (first form, count, first file, first line) of every class, and the
    /// rejects as (file, line, kind, text).
    type Classes = Vec<(String, u64, u32, u64)>;
    type Rejects = Vec<(u32, u64, &'static str, String)>;

    fn run(opts: DedupOptions, inputs: &[&[u8]], order: Order, stream: bool) -> (Classes, Rejects, LineCounts) {
        let mut dedup = LineDedup::new(opts);
        let mut rejects = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            let mut sink = |r: &Reject<'_>| {
                rejects.push((r.file, r.line, r.error.kind().as_str(), String::from_utf8_lossy(r.text).into_owned()));
                Ok(())
            };
            if stream {
                dedup.add_reader(&mut &input[..], i as u32, &mut sink).unwrap();
            } else {
                dedup.add_bytes(input, i as u32, &mut sink).unwrap();
            }
        }
        let counts = dedup.counts().clone();
        (classes_of(dedup, order), rejects, counts)
    }

    /// The classes `dedup` ends with, in `order`.
    fn classes_of(dedup: LineDedup, order: Order) -> Classes {
        let mut classes = Vec::new();
        dedup
            .finish(order, &mut |e| {
                classes.push((
                    String::from_utf8_lossy(&e.raw.to_vec()).into_owned(),
                    e.count,
                    e.first.file,
                    e.first.offset,
                ));
                Ok(())
            })
            .unwrap();
        classes
    }

    /// A stream that fails (a corrupt archive): the whole lines before the
    /// failure count as if the input had ended after them, and the line it
    /// cut short does not (it may be a URN cut short, `urn:isbn:978` of
    /// `urn:isbn:9780451450523`); the error is returned. Cuts in the first
    /// block, past it, right after a line break, inside a line longer than
    /// a block.
    #[test]
    fn a_read_error_keeps_the_whole_lines_before_it() {
        use crate::source::FailsOnce;
        let mut text: Vec<u8> =
            (0..20_000).flat_map(|i| format!("urn:ab:{i}\nURN:AB:{}\n", i / 2).into_bytes()).collect();
        let long = text.len();
        text.extend_from_slice(b"urn:ab:");
        text.resize(text.len() + (100 << 10), b'x');
        text.extend_from_slice(b"\nurn:ab:last\n");
        let nl = text.iter().position(|&b| b == b'\n').unwrap();
        for cut in [0, 3, nl, nl + 1, nl + 2, 70_000, 150_001, long, long + 9, long + (80 << 10), text.len() - 3] {
            let whole = text[..cut].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let expected = run(opts(), &[&text[..whole]], Order::FirstSeen, true);
            let mut dedup = LineDedup::new(opts());
            let mut rejects: Rejects = Vec::new();
            let mut sink = |r: &Reject<'_>| {
                rejects.push((r.file, r.line, r.error.kind().as_str(), String::from_utf8_lossy(r.text).into_owned()));
                Ok(())
            };
            let mut reader = (&text[..cut]).chain(FailsOnce(Some(io::Error::other("cut"))));
            match dedup.add_reader(&mut reader, 0, &mut sink) {
                Err(FeedError::Read(e)) => assert_eq!(e.to_string(), "cut"),
                other => panic!("cut at {cut}: {:?}", other.map_err(|_| "another error")),
            }
            let counts = dedup.counts().clone();
            let got = (classes_of(dedup, Order::FirstSeen), rejects, counts);
            assert!(got == expected, "cut at {cut} (whole lines up to {whole})");
        }
    }

    /// A mapped file truncated between the two phases of a block: phase 1
    /// judged its lines, phase 2 reads zeros from the cut on. Only the
    /// lines wholly before the cut become classes, whatever the key was
    /// made from (the line's own bytes, or a copy for a key that differs),
    /// and a rejected line is shown with the text it was judged by.
    #[test]
    fn lines_read_as_zeros_after_phase_1_become_no_class() {
        let text = b"urn:ab:one\nURN:AB:two\nurn:ab:three?+q\nurn:a:x\nurn:ab:four\n";
        for cut in 0..=text.len() {
            let mut block = text.to_vec();
            let judge = Judge { grammar: Grammar::Rfc8141, ns_rules: false, nids: None };
            let mut out = ChunkOut::default();
            out.scan(&block, 0..block.len(), judge);
            block[cut..].fill(0);
            // A rejected line is shown as it was judged.
            let shown: Vec<&[u8]> = out.rejects.iter().map(|r| out.reject_text(r)).collect();
            assert_eq!(shown, [&b"urn:a:x"[..]], "cut at {cut}");
            let mut tables: Vec<KeyTable> = (0..PARTS).map(|_| KeyTable::new()).collect();
            for (p, table) in tables.iter_mut().enumerate() {
                fill_partition(table, p, &block, std::slice::from_ref(&out), &[1], 0);
            }
            let mut kept: Vec<(u64, Vec<u8>)> =
                tables.iter().flat_map(KeyTable::iter).map(|e| (e.first.offset, e.raw.to_vec())).collect();
            kept.sort();
            let mut want = Vec::new();
            let mut start = 0;
            for (i, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
                if start + line.len() - 1 <= cut && line != b"urn:a:x\n" {
                    want.push((i as u64 + 1, line[..line.len() - 1].to_vec()));
                }
                start += line.len();
            }
            assert_eq!(kept, want, "cut at {cut}");
        }
    }

    #[test]
    fn first_seen_forms_counts_and_positions() {
        let a = b"urn:ab:x\n\n  URN:AB:x?+r \r\nurn:a:b\nurn:cd:y\r\n";
        let b = b"urn:cd:y\nUrn:Ab:x";
        let (classes, rejects, counts) = run(opts(), &[a, b], Order::FirstSeen, false);
        let own = |s: &str, n, f, l| (s.to_owned(), n, f, l);
        assert_eq!(classes, [own("urn:ab:x", 3, 0, 1), own("urn:cd:y", 2, 0, 5)]);
        assert_eq!(rejects, [(0, 4, "nid-too-short", "urn:a:b".to_owned())]);
        assert_eq!((counts.lines, counts.valid, counts.empty, counts.invalid_total()), (7, 5, 1, 1));
        let (by_key, _, _) = run(opts(), &[b"urn:zz:1\nurn:ab:2\n"], Order::Key, false);
        assert_eq!(by_key.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["urn:ab:2", "urn:zz:1"]);
    }

    #[test]
    fn ns_rules_merge_only_when_asked() {
        let input: &[u8] = b"urn:ietf:rfc:2648\nurn:ietf:RFC:2648\n";
        assert_eq!(run(opts(), &[input], Order::FirstSeen, false).0.len(), 2);
        let with_rules = DedupOptions { ns_rules: true, ..opts() };
        assert_eq!(run(with_rules, &[input], Order::FirstSeen, false).0, [("urn:ietf:rfc:2648".to_owned(), 2, 0, 1)]);
    }

    #[test]
    fn parse_only_counts_and_rejects_every_line_but_keeps_no_class() {
        let input = mixed_input(5_000);
        let (classes, rejects, counts) = run(opts(), &[&input], Order::FirstSeen, false);
        assert!(!classes.is_empty() && !rejects.is_empty());
        let mut dedup = LineDedup::new(DedupOptions { block_size: MIN_BLOCK_SIZE, ..opts() }).parse_only();
        let mut seen = Vec::new();
        let mut sink = |r: &Reject<'_>| {
            seen.push((r.file, r.line, r.error.kind().as_str(), String::from_utf8_lossy(r.text).into_owned()));
            Ok(())
        };
        assert_eq!(dedup.add_bytes(&input, 0, &mut sink).unwrap(), 5_000);
        assert_eq!((seen, dedup.counts()), (rejects, &counts));
        assert_eq!(dedup.table_len(), 0);
        let mut emitted = 0;
        let finished = dedup
            .finish(Order::FirstSeen, &mut |_| {
                emitted += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!((finished.distinct, emitted), (0, 0));
    }

    /// A deterministic mix: spellings of a few hundred classes, invalid,
    /// empty and decorated lines.
    fn mixed_input(lines: usize) -> Vec<u8> {
        let mut out = Vec::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..lines {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let class = x % 700;
            let line = match x % 13 {
                0 => String::new(),
                1 => format!("urn:a:{class}"),
                2 => format!("  URN:EX:{class}?+r{i} \r"),
                3 => format!("urn:ex:{class}\r"),
                4 => format!("\turn:Ex:{class}#f"),
                5 => "urn:ex:caf\u{e9}".to_owned(),
                _ => format!("urn:ex:{class}"),
            };
            out.extend_from_slice(line.as_bytes());
            out.push(b'\n');
        }
        out
    }

    #[test]
    fn blocks_streams_and_spilling_do_not_change_results() {
        let input = mixed_input(60_000);
        for order in [Order::FirstSeen, Order::Key] {
            let whole = run(opts(), &[&input, b"urn:ex:1\nurn:zz:tail"], order, false);
            assert_eq!(whole.2.lines, 60_002);
            let small = DedupOptions { block_size: 1, ..opts() };
            assert_eq!(run(small.clone(), &[&input, b"urn:ex:1\nurn:zz:tail"], order, false), whole);
            assert_eq!(run(small, &[&input, b"urn:ex:1\nurn:zz:tail"], order, true), whole);
            let spill = DedupOptions { memory_limit: Some(8 << 10), ..opts() };
            let mut dedup = LineDedup::new(spill.clone());
            dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
            assert!(dedup.spilled());
            assert_eq!(run(spill, &[&input, b"urn:ex:1\nurn:zz:tail"], order, false), whole);
        }
    }

    /// `--nid`: the classes, counts and rejects of a filtered run are the
    /// unfiltered run's, less the classes of other NIDs (compared in any
    /// case), whose lines are counted as excluded; in both orders, whole,
    /// streamed in small blocks and spilled.
    #[test]
    fn a_nid_filter_keeps_the_classes_of_its_nids() {
        let mixed = String::from_utf8(mixed_input(20_000)).unwrap();
        let input = mixed.replace("ex:1", "zz:1").replace("EX:2", "Zz:2").replace("Ex:3", "b-c:3").into_bytes();
        let filter = NidFilter::new(["ZZ", "b-c"], Grammar::Rfc8141).unwrap();
        let nid = |form: &str| form.split(':').nth(1).unwrap().to_ascii_lowercase();
        for order in [Order::FirstSeen, Order::Key] {
            let (classes, rejects, counts) = run(opts(), &[&input], order, false);
            let want: Classes = classes.into_iter().filter(|c| ["zz", "b-c"].contains(&nid(&c.0).as_str())).collect();
            assert!(want.len() > 100 && want.iter().any(|c| nid(&c.0) == "b-c"));
            let kept: u64 = want.iter().map(|c| c.1).sum();
            let with = |o: DedupOptions| DedupOptions { nids: Some(filter.clone()), ..o };
            for (filtered, stream) in [
                (with(opts()), false),
                (with(DedupOptions { block_size: 1, ..opts() }), true),
                (with(DedupOptions { memory_limit: Some(8 << 10), ..opts() }), false),
            ] {
                let (got, got_rejects, got_counts) = run(filtered, &[&input], order, stream);
                assert_eq!(got, want);
                assert_eq!(got_rejects, rejects);
                assert_eq!((got_counts.valid, got_counts.excluded), (kept, counts.valid - kept));
                assert_eq!(
                    (got_counts.lines, got_counts.empty, &got_counts.invalid),
                    (counts.lines, counts.empty, &counts.invalid)
                );
            }
        }
    }

    /// `lines` lines over `classes` classes (about 3 lines each), in
    /// several spellings: an entry's first-seen form is not its key.
    fn many_classes(lines: usize, classes: u64, seed: u64) -> Vec<u8> {
        let mut out = Vec::new();
        let mut x = seed;
        for _ in 0..lines {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let class = x % classes;
            let prefix = ["urn:ex", "URN:EX", "Urn:eX"][(x >> 32) as usize % 3];
            out.extend_from_slice(format!("{prefix}:{class}-{}\n", class % 97).as_bytes());
        }
        out
    }

    /// Every class as `format` puts it, through `finish` (one class at a
    /// time) or `finish_parallel`, in a pool of `threads`.
    fn output(opts: &DedupOptions, inputs: &[(u32, &[u8])], order: Order, parallel: bool, threads: usize) -> Vec<u8> {
        let format = |e: &Entry<'_>, text: &mut Vec<u8>| {
            e.raw.write_into(text);
            writeln!(text, "\t{}\t{}:{}", e.count, e.first.file, e.first.offset)
        };
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut dedup = LineDedup::new(opts.clone());
            for &(file, input) in inputs {
                dedup.add_bytes(input, file, &mut |_| Ok(())).unwrap();
            }
            let mut out = Vec::new();
            if parallel {
                dedup.finish_parallel(order, &format, &mut out).unwrap();
            } else {
                dedup.finish(order, &mut |e| format(e, &mut out)).unwrap();
            }
            out
        })
    }

    #[test]
    fn parallel_output_is_the_sequential_output() {
        let (a, b, c) = (many_classes(150_000, 50_000, 1), many_classes(40_000, 60_000, 2), mixed_input(5_000));
        let in_order: [(u32, &[u8]); 3] = [(0, &a), (1, &b), (2, &c)];
        // Files fed out of order replace first-seen forms: the tables are
        // no longer in position order, and the output must still match.
        let out_of_order: [(u32, &[u8]); 2] = [(1, &a), (0, &b)];
        for opts in [opts(), DedupOptions { block_size: 1, ..opts() }] {
            for inputs in [&in_order[..], &out_of_order] {
                for order in [Order::FirstSeen, Order::Key] {
                    let expected = output(&opts, inputs, order, false, 2);
                    assert!(
                        expected.iter().filter(|&&b| b == b'\n').count() > 2 * sorted::RANGE_ENTRIES,
                        "several ranges"
                    );
                    for threads in [1, 2, 3] {
                        let parallel = output(&opts, inputs, order, true, threads);
                        assert!(parallel == expected, "{order:?}, {threads} threads, {} inputs", inputs.len());
                    }
                }
            }
        }
    }

    #[test]
    fn parallel_first_seen_output_is_in_position_order() {
        let input = many_classes(100_000, 40_000, 3);
        let text = output(&opts(), &[(0, &input)], Order::FirstSeen, true, 2);
        let lines: Vec<u64> =
            String::from_utf8(text).unwrap().lines().map(|l| l.rsplit_once(':').unwrap().1.parse().unwrap()).collect();
        // Each class once, at the line where its first spelling is.
        let mut seen = std::collections::HashSet::new();
        let firsts: Vec<u64> = input
            .split(|&b| b == b'\n')
            .zip(1..)
            .filter(|(line, _)| !line.is_empty() && seen.insert(line.to_ascii_lowercase()))
            .map(|(_, n)| n)
            .collect();
        assert_eq!(lines, firsts);
    }

    #[test]
    fn deep_spills_are_still_exact() {
        // A limit far below one table forces every level of splitting.
        let input = mixed_input(20_000);
        let whole = run(opts(), &[&input], Order::FirstSeen, false);
        let tiny = DedupOptions { memory_limit: Some(1), ..opts() };
        assert_eq!(run(tiny, &[&input], Order::FirstSeen, false), whole);
    }

    #[test]
    fn key_order_needs_no_memory_beyond_the_tables() {
        // The sorted list lives in the tables' indexes: tables that fit the
        // limit are sorted in memory, with the same output as without one.
        let input = mixed_input(20_000);
        let whole = run(opts(), &[&input], Order::Key, false);
        let mut dedup = LineDedup::new(opts());
        dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
        let limited = DedupOptions { memory_limit: Some(dedup.table_bytes() as u64), ..opts() };
        let mut dedup = LineDedup::new(limited.clone());
        dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
        let finished = dedup.finish(Order::Key, &mut |_| Ok(())).unwrap();
        assert_eq!(finished, Finished { distinct: whole.0.len() as u64, spilled: false });
        assert_eq!(run(limited, &[&input], Order::Key, false), whole);
    }

    #[test]
    fn long_streamed_lines_are_judged_as_whole_lines() {
        let mut input = Vec::new();
        let long_valid = format!("{}urn:ab:x{}\n", " ".repeat(200_000), " ".repeat(300_000));
        let too_long = format!("urn:ab:{}\n", "x".repeat(100_000));
        let inner_space = format!("urn:ab:x{}y\n", " ".repeat(100_000));
        let spaces = format!("{}\n", " ".repeat(150_000));
        for line in [&long_valid, &too_long, &inner_space, &spaces, &"urn:ab:x\n".to_owned()] {
            input.extend_from_slice(line.as_bytes());
        }
        input.extend_from_slice("z".repeat(70_000).as_bytes());
        // 64 KiB blocks: the long lines straddle block boundaries.
        let small = DedupOptions { block_size: 1, ..opts() };
        let whole = run(small.clone(), &[&input], Order::FirstSeen, false);
        let streamed = run(small, &[&input], Order::FirstSeen, true);
        assert_eq!(whole.0, streamed.0);
        assert_eq!(whole.2, streamed.2);
        let kinds = |r: &Rejects| r.iter().map(|r| (r.1, r.2)).collect::<Vec<_>>();
        assert_eq!(kinds(&whole.1), [(2, "too-long"), (3, "nss-bad-char"), (6, "not-urn")]);
        assert_eq!(kinds(&streamed.1), kinds(&whole.1));
        assert_eq!(whole.0, [("urn:ab:x".to_owned(), 2, 0, 1)]);
        assert_eq!(whole.2.empty, 1);
    }

    #[test]
    fn spill_directory_is_removed() {
        let base = std::env::temp_dir().join(format!("urnscan-lines-test-{}", std::process::id()));
        fs::create_dir_all(&base).unwrap();
        let spill = DedupOptions { memory_limit: Some(4 << 10), temp_dir: Some(base.clone()), ..opts() };
        let input = mixed_input(5_000);
        let mut dedup = LineDedup::new(spill);
        dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
        assert!(dedup.spilled());
        assert_eq!(fs::read_dir(&base).unwrap().count(), 1);
        dedup.finish(Order::Key, &mut |_| Ok(())).unwrap();
        assert_eq!(fs::read_dir(&base).unwrap().count(), 0);
        fs::remove_dir(&base).unwrap();
    }

    #[test]
    fn partitions_use_successive_hash_bits() {
        let h = 0b101010_110011u64 << 52;
        assert_eq!(partition(h, 0), 0b101010);
        assert_eq!(partition(h, 1), 0b110011);
        assert_eq!(partition(u64::MAX, 11), 0);
    }

    /// Bytes per distinct key of the in-memory tables (documented in the
    /// module docs). Run with `cargo test --release --lib bytes_per -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn bytes_per_distinct_key() {
        let cfg = crate::gen::DatasetConfig { lines: 1_000_000, distinct: 1_000_000, seed: 7, invalid_per_mille: 0 };
        let mut data = Vec::new();
        crate::gen::generate_dataset(&cfg, &mut data, None).unwrap();
        let mut dedup = LineDedup::new(opts());
        dedup.add_bytes(&data, 0, &mut |_| Ok(())).unwrap();
        let (bytes, len) = (dedup.table_bytes(), dedup.table_len());
        let key_bytes = (data.len() - len) as f64 / len as f64;
        println!(
            "{len} keys, {bytes} bytes: {:.1} bytes per key (lines average {key_bytes:.1} bytes)",
            bytes as f64 / len as f64
        );
        assert_eq!(len, 1_000_000);
    }
}
