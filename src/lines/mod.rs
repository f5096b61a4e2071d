//! Line-oriented deduplication: datasets of one URN per line, as
//! `urnscan dedup` reads them.
//!
//! # What a line is
//!
//! A line ends at `\n` (the last one may end at the end of input). Its
//! surrounding ASCII whitespace, `\r` included, is ignored ([`trim_line`]),
//! and so is a UTF-8 byte-order mark at the start of an input
//! ([`without_utf8_bom`]: Notepad and Excel write one); a line with nothing
//! else is *empty* and only counted. Every other line is judged as a whole
//! by [`crate::parse`]: it is a URN or it is *rejected* with the parser's
//! error, and a rejected line always reaches the caller's reject callback —
//! nothing is dropped silently.
//!
//! # Keys and namespace rules
//!
//! Lines are grouped by the RFC 8141 equivalence key ([`crate::Urn::write_key`]).
//! With [`DedupOptions::ns_rules`] the key is then passed through
//! [`apply_ns_rules`](crate::nid::rules::apply_ns_rules) ([`crate::nid::rules`]): what a namespace's own RFC
//! says on top of RFC 8141 (UUIDs: RFC 4122 §3; IETF sub-namespaces: RFC
//! 2648 §2). A rule can merge classes RFC 8141 keeps apart but never split
//! one it merges.
//!
//! With [`DedupOptions::nids`], a URN line of another namespace is counted
//! ([`LineCounts::excluded`]) and goes no further: no key, no class.
//!
//! # Position and first-seen order
//!
//! Each class keeps its count and its first occurrence as a [`Position`]:
//! the input's index and, *here*, the 1-based line number in
//! [`Position::offset`] (lines are in byte order, so the order is the same
//! as by byte offset). Output is in first-seen order ([`Order::FirstSeen`]),
//! by key bytes ([`Order::Key`]), or by count ([`Order::Count`]: most
//! first, then by key), each also when the tables spill (see below).
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
//!    ([`key_hash`](crate::dedup::key_hash)), and append a 24-byte record
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
//! positions, merged from the tables on its own ([`FirstSeenEntries`](crate::dedup::FirstSeenEntries),
//! which `urnscan scan --unique --sort first-seen` shares); key order cuts
//! the sorted handles. The bytes are those of [`LineDedup::finish`].
//! Per-NID statistics ([`LineDedup::finish_stats`], `dedup --stats`) need
//! no order: the tables are counted where they are, in parallel.
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
//! they are, and `--sort key` keeps its sorted list in their indexes
//! (`--sort count` adds 16 bytes per class while it reorders that list,
//! see [`CountedEntries`](crate::dedup::CountedEntries)). On
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
//! ignored). Each final table, whose counts are whole (a key's lines all
//! go to one file), is sorted into a run file, and the runs are
//! merged, so the output is byte for byte the output of the in-memory run
//! and the memory stays bounded by the limit plus one record per open run.
//! The spill directory goes when the [`LineDedup`] is dropped. A program
//! ended by a signal drops nothing: it calls [`remove_spill_dirs`] from its
//! own signal handling (the library installs none, as it keeps no global
//! state).
//! Key order needs no memory beyond the tables: the sorted list of entries
//! is kept in the tables' indexes, which the output does not use
//! ([`SortedEntries::reusing_indexes`](crate::dedup::SortedEntries::reusing_indexes)).
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
//! its first 2 × [`MAX_URN_LEN`] bytes are kept, the rest is skipped, and
//! `...` stands for any non-whitespace that was skipped. The parser looks at no more than
//! [`MAX_URN_LEN`]` + 1` bytes and at whether there are more, so the verdict
//! is the one the whole line would get; only the rejected text is shorter.
//! Mapped files are never copied and need no such step.
//!
//! # Files
//!
//! | file | what it does |
//! |---|---|
//! | `lines/mod.rs` | options, counts, [`LineDedup`]: blocks in, the two phases, classes out |
//! | `lines/judge.rs` | phase 1: lines found, trimmed and judged, keys hashed into partitions; [`line_ranges`] |
//! | `lines/condense.rs` | long lines of a stream condensed as they are read |
//! | `lines/output.rs` | the classes in first-seen or key order, in memory or merged from sorted sources |
//! | `lines/spill.rs` | spill files, their tables sorted into runs, the runs merged |

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Read, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering as AtomicOrdering};
use std::sync::Arc;

use rayon::prelude::*;

use crate::dedup::{Entry, KeyTable, Occurrence, Position};
use crate::error::{ErrorKind, UrnError};
use crate::grammar::{Grammar, MAX_URN_LEN};
use crate::nid::NidFilter;
use crate::source::Whole;
use crate::stats::{NidRuns, NidStats};
use crate::transcode::without_utf8_bom;

mod condense;
mod judge;
mod output;
mod spill;
#[cfg(test)]
mod tests;

use condense::condense_long_line;
pub use judge::line_ranges;
use judge::{line_boundary, ChunkOut, Judge, Rec};
use output::{emit_tables, one_by_one, write_tables};
pub use spill::remove_spill_dirs;
use spill::{merge_runs, SpillDir, SpillSet};

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

/// Partitions per level: the top `PART_BITS` bits of the key hash ([`key_hash`](crate::dedup::key_hash)).
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
    /// Apply [`apply_ns_rules`](crate::nid::rules::apply_ns_rules) to every key.
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
    /// costs nothing. Bytes fed through [`LineDedup::add_decoded_reader`]
    /// are not added (their input's own bytes are, as they are read).
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
    /// By count, most first; equal counts by key bytes.
    Count,
}

impl Order {
    /// Compares two classes in this order. Positions and keys are unique
    /// per class, so no two classes compare equal.
    pub fn compare(self, a: &Entry<'_>, b: &Entry<'_>) -> Ordering {
        match self {
            Order::FirstSeen => a.first.cmp(&b.first),
            Order::Key => a.key.cmp(b.key),
            Order::Count => b.count.cmp(&a.count).then_with(|| a.key.cmp(b.key)),
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
    /// How many of the input's lines before this one are empty (nothing
    /// but whitespace): `line - empty_before` is its number among the lines
    /// that were judged, which a caller needs to tell, as it goes, whether
    /// most of an input's lines are rejected (`urnscan dedup` hints at
    /// `scan` once most are not-urn, blank lines left out as in its
    /// summary).
    pub empty_before: u64,
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

/// The cause is the [`source`](std::error::Error::source), not part of the
/// message, so that a reporter of the chain (anyhow's `{:#}`) says it once.
impl fmt::Display for FeedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FeedError::Read(_) => f.write_str("cannot read the input"),
            FeedError::Write(_) => f.write_str("cannot write the rejected lines or the spill files"),
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
    /// The empty lines of the current input fed so far ([`Reject::empty_before`]).
    input_empty: u64,
}

/// Its settings and counts so far, not its tables.
impl fmt::Debug for LineDedup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LineDedup")
            .field("grammar", &self.grammar)
            .field("ns_rules", &self.ns_rules)
            .field("nids", &self.nids)
            .field("memory_limit", &self.limit)
            .field("block_size", &self.block_size)
            .field("counts", &self.counts)
            .field("spilled", &self.spill.is_some())
            .finish_non_exhaustive()
    }
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
            input_empty: 0,
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

    /// Feeds a decoded input (an archive's text, UTF-16 text transcoded)
    /// as [`LineDedup::add_reader`] does, without adding its decoded bytes
    /// to [`DedupOptions::progress`]: the input's own bytes are counted
    /// there as its decoder reads them ([`crate::source::decoded_counting`]),
    /// so that progress is measured against the inputs' size on disk.
    pub fn add_decoded_reader(
        &mut self,
        reader: &mut dyn Read,
        file: u32,
        on_reject: &mut RejectSink<'_>,
    ) -> Result<u64, FeedError> {
        let progress = self.progress.take();
        let fed = self.add_reader(reader, file, on_reject);
        self.progress = progress;
        fed
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
        let block = if first_line == 1 { self.past_utf8_bom(block) } else { block };
        if first_line == 1 {
            self.input_empty = 0;
        }
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
                let (line, empty_before) = (base + u64::from(r.line), self.input_empty + u64::from(r.empty_before));
                on_reject(&Reject { file, line, empty_before, text, error: r.error }).map_err(FeedError::Write)?;
            }
            self.input_empty += out.empty;
        }
        self.spill_if_over_limit().map_err(FeedError::Write)?;
        Ok(next - first_line)
    }

    /// The first block of an input without a UTF-8 byte-order mark, which
    /// is no part of its first line ([`without_utf8_bom`]); the mark's
    /// bytes still count as read.
    fn past_utf8_bom<'b>(&self, block: &'b [u8]) -> &'b [u8] {
        let text = without_utf8_bom(block);
        if let Some(counter) = &self.progress {
            counter.fetch_add((block.len() - text.len()) as u64, AtomicOrdering::Relaxed);
        }
        text
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

    /// The classes counted by NID instead of handed out: per NID, its
    /// lines ([`NidRow::occurrences`](crate::stats::NidRow::occurrences))
    /// and its classes ([`NidRow::unique`](crate::stats::NidRow::unique)),
    /// the rows [`LineDedup::finish`] would give if its classes were
    /// grouped by NID. In memory, the partitions are counted where they
    /// are, in parallel ([`NidStats::from_tables`]): no class is sorted or
    /// formatted. Spilled, the classes come back from the spill files in
    /// key order, where a NID's keys are one run ([`NidRuns`]).
    ///
    /// ```
    /// use urnscan::lines::{DedupOptions, LineDedup};
    /// use urnscan::NidClass;
    ///
    /// let mut dedup = LineDedup::new(DedupOptions::default());
    /// dedup.add_bytes(b"urn:ISBN:0451450523\nURN:isbn:0451450523\nurn:isbn:0140449116\nurn:x-acme:a\n", 0, &mut |_| Ok(()))?;
    /// let (stats, finished) = dedup.finish_stats()?;
    /// let rows: Vec<(&[u8], NidClass, u64, u64)> =
    ///     stats.rows().map(|r| (r.nid, r.class, r.occurrences, r.unique)).collect();
    /// assert_eq!(rows, [(&b"isbn"[..], NidClass::Formal, 3, 2), (b"x-acme", NidClass::Experimental, 1, 1)]);
    /// assert_eq!(finished.distinct, 3);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn finish_stats(mut self) -> io::Result<(NidStats, Finished)> {
        self.prepare_output()?;
        match self.spill.take() {
            None => {
                let distinct = self.table_len() as u64;
                Ok((NidStats::from_tables(&self.tables), Finished { distinct, spilled: false }))
            }
            Some(spill) => {
                let mut runs = NidRuns::default();
                let finished = merge_runs(spill, self.limit, Order::Key, &mut |e| {
                    runs.add(e.nid(), e.count);
                    Ok(())
                })?;
                Ok((runs.into_stats(), finished))
            }
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
