//! A whole run over many inputs: expand paths, scan each input, count,
//! deduplicate, and hand every result to a [`Sink`] in input order.
//!
//! Files are processed in parallel batches (rayon): each task maps or reads
//! its file, scans it in parallel chunks ([`Scanner::scan`]), and, when keys
//! are wanted, turns its URNs into [`KeyBatch`]es (key written and hashed,
//! filed by shard). The calling thread then consumes the batch in input
//! order — events to the sink, then each input's counts, totals added —
//! and the batch's keys enter the run's [`ShardedTable`] in one parallel
//! pass, a task per shard, so output never depends on scheduling and no
//! key is inserted twice.
//! Files larger than a window and streams (stdin, pipes) are scanned on the
//! calling thread a window or block at a time, each still in parallel
//! chunks, with the same two key phases per window. A stream's block is
//! 16 MiB, or what a pipe brought before its writer paused
//! ([`source::Live`]; stdin or a FIFO given by path): `tail -f log |
//! urnscan scan` and `urnscan scan <(tail -f log)` show each line's URNs
//! as the line comes, not when 16 MiB of log have gathered.
//!
//! For files, whole or a window at a time, each chunk's [`KeyBatch`] is
//! made by the task that scanned the chunk, right after it (`scan_keyed`),
//! and from what the validation already found: the scanner keeps the key
//! shape of every URN beside its event (where the NID and the assigned
//! name end, which fix-ups the key needs; see [`crate::scan`]), so the
//! bytes are not searched again (`walked_key_batch`); a stream's blocks
//! likewise. Callers of [`key_batch`] with events alone find the shape in
//! the bytes (`key::key_shape`: the same answer, from one pass over a URN
//! of up to 64 bytes, `memchr` searches over longer ones).
//! Either way a mapped file's new keys are checked against its bytes again
//! before they are kept, since the bytes may have changed since the scan.
//!
//! A run that prints events and keeps no keys, with a sink that gives a
//! [`Formatter`] ([`Sink::formatter`]), has each chunk's events formatted
//! by the task that scanned the chunk, from the parts the validation found,
//! into buffers that are used again once written; the calling thread only
//! hands the text to the sink, in input order. Before, the calling thread
//! printed every event: after each batch of files, with nothing to overlap
//! it, and for a large file beside the scan of the next window, which the
//! scanning threads then waited for. Measured (2026-11-28, 2-core KVM
//! guest, `benches/ab.sh`, 7 rounds, medians, output to `/dev/null`, with
//! the change to `scan` that goes with it), plain `scan` at one / two
//! threads: 45 files of a 10 M-line URN dataset 1,011 / 635 → 898 / 488
//! ms, the dataset as one file 802 / 524 → 803 / 483, 1 GiB of text with
//! 200 URNs per MiB 122 / 72 → 101 / 60. Into a pipe at one thread the
//! dataset lost (1,360 → 1,454 ms): the formatting no longer runs on a
//! thread of its own beside the one scanning thread.
//!
//! Compressed inputs (with [`JobOptions::decompress`]) cannot be split
//! either, and decoding is slower than scanning, so it must not run one
//! archive after the other on the calling thread. Inside the parallel batch
//! each archive is decoded up to [`INLINE_LIMIT`] bytes: one that ends
//! there is scanned in the batch like a small file; the rest of a larger
//! one is decoded ahead on a thread of its own with a bounded queue
//! ([`crate::decompress::read_ahead`]) while the calling thread consumes
//! the inputs before it. Memory per archive in flight is bounded by
//! [`INLINE_LIMIT`] plus the read-ahead queue, whatever its size; output
//! stays in input order.
//!
//! With [`JobOptions::nids`], the URNs of other namespaces are dropped
//! after the scan: the task that scanned a chunk notes which of its URNs
//! are kept (a flag per URN event, beside the key batch or the parts), and
//! counting ([`Totals::excluded`] instead of [`Totals::valid`]), the key
//! batches and the output read the flags. The scan itself is the same, so a
//! URN of another namespace still ends where it ends and hides what its
//! bytes contain.
//!
//! With [`JobOptions::line_numbers`], the sink gets each event's line
//! ([`Location::line`]) beside its offset: one more pass over each input's
//! bytes, counting the newlines between one event and the next. For files,
//! whole or a window at a time, the task that scanned a chunk counts them
//! between the chunk's events, while the bytes are in cache, and the gaps
//! between chunks and windows are added after (`SpanLines`); a stream's
//! lines are counted on the calling thread as its events reach the sink.
//! Measured (2026-11-29, 2-core KVM guest, hyperfine, 7 runs, means): `scan
//! -n -j2` of 1 GiB of text with 200 URNs per MiB took 182 ms with every
//! line counted on the calling thread, 144 ms counted by chunk (plain
//! `scan`: 87). A file's events are formatted too, when the sink has a
//! [`Formatter`], but in a second parallel pass over the span's chunks
//! (`format_chunks_with_lines`): a chunk's records need the lines of every
//! chunk before it, known once the counts are joined, and a window's those
//! of the windows before it, known when it is spawned. Before, every record
//! of `scan -n` was made on the calling thread (`benches/ab.sh`, 7 rounds,
//! medians, one / two threads: the 10 M line dataset 2,553 / 1,331 → 1,969
//! / 1,147 ms with this and the counting of close events in one pass, see
//! `newlines_from_first`, where plain `scan` takes 1,412 / 938; 256 MiB of
//! text with 5,000 URNs per MiB 467 / 277 → 427 / 228, plain 179 at two).
//! A stream's events still reach the sink one by one.
//!
//! Binary inputs ([`source::is_binary`]) are counted, and skipped when
//! [`JobOptions::binary`] says so. Stdin, pipes and devices are only read
//! when their turn comes (see `process`).

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::ops::{ControlFlow, Range};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rayon::prelude::*;

use crate::decompress;
use crate::dedup::{KeyBatch, ShardedTable};
use crate::error::{ErrorKind, UrnError};
use crate::extract::ExtractOptions;
use crate::grammar::{parse, Grammar};
use crate::key::{key_shape, Fixes, KeyShape};
use crate::nid::NidFilter;
use crate::platform::simd::UrnFinder;
use crate::scan::{resume_point, Event, Scanner, DEFAULT_CHUNK_SIZE, DEFAULT_STREAM_BLOCK};
use crate::source::{self, BinaryPolicy, Contents, Input, InputError, MmapPolicy, WalkOptions, Whole};
use crate::urn::{Parts, Urn};

/// What a run does.
#[derive(Clone, Debug)]
pub struct JobOptions {
    /// Grammar and trimming.
    pub extract: ExtractOptions,
    /// When to map files.
    pub mmap: MmapPolicy,
    /// How to walk directories.
    pub walk: WalkOptions,
    /// Parallel chunk size within one input.
    pub chunk_size: usize,
    /// Block size for streamed inputs (stdin, pipes, `--mmap never`).
    pub stream_block: usize,
    /// Build the key table (for unique URNs and statistics).
    pub keys: bool,
    /// Pass the table's keys through the namespace rules
    /// ([`crate::lines::apply_ns_rules`]: UUIDs and IETF sub-namespaces in
    /// any case), as `urnscan dedup --ns-rules` does. Off by default: RFC
    /// 8141 equivalence alone.
    pub ns_rules: bool,
    /// Hand every URN and rejected candidate to the sink.
    pub events: bool,
    /// Give each event's line number ([`Location::line`]) as well as its
    /// byte offset. Off by default: counting the lines is one more pass
    /// over every byte of each input, and the sink's [`Formatter`] is not
    /// used.
    pub line_numbers: bool,
    /// Bytes scanned so far, for a progress display: added to by the
    /// worker that scanned each 1 MiB chunk of a file, and once per block
    /// of a stream (never per URN), so it costs nothing measurable, and
    /// nothing at all when `None`.
    pub progress: Option<Arc<AtomicU64>>,
    /// Decode gzip and zstd inputs (recognised by their first bytes).
    pub decompress: bool,
    /// Scan or skip binary inputs.
    pub binary: BinaryPolicy,
    /// Keep only the URNs of these namespaces (`None`: all). Rejected
    /// candidates are not filtered: they have no NID to trust.
    pub nids: Option<NidFilter>,
    /// The `urn:` search: by default the widest kernel this CPU has, with
    /// the prefetch setting measured for it ([`UrnFinder::new`]). Speed
    /// only: every finder finds the same candidates.
    pub finder: UrnFinder,
    /// The sink will likely stop inputs early ([`Sink::input_progress`]),
    /// as `urnscan scan -l`, `-m` and `-q` do: an input of over 256 KiB
    /// is then scanned in windows that start at 256 KiB and grow fourfold,
    /// so that the sink is asked after the first, instead of whole (inputs
    /// up to 16 MiB) or a 16 MiB window at a time. Speed only: the events
    /// are the same. Off by default.
    pub early_stop: bool,
}

/// RFC 8141 with trimming ([`ExtractOptions::default`]), files of 1 MiB or
/// more mapped ([`MmapPolicy::Auto`]), directories walked without ignore
/// files or links, **`keys` and `events` both on** (a run that only wants
/// events should turn `keys` off: the key table is most of a run's memory),
/// no line numbers, nothing decompressed, binary files scanned, every NID kept, the widest
/// search kernel.
impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            extract: ExtractOptions::default(),
            mmap: MmapPolicy::Auto,
            walk: WalkOptions::default(),
            chunk_size: DEFAULT_CHUNK_SIZE,
            stream_block: DEFAULT_STREAM_BLOCK,
            keys: true,
            ns_rules: false,
            events: true,
            line_numbers: false,
            progress: None,
            decompress: false,
            binary: BinaryPolicy::Scan,
            nids: None,
            finder: UrnFinder::new(),
            early_stop: false,
        }
    }
}

/// Counts over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    /// Inputs scanned (including ones that failed part-way; not skipped ones).
    pub files: u64,
    /// Binary inputs seen ([`source::is_binary`]), scanned or skipped.
    pub binary: u64,
    /// Inputs skipped (binary ones under [`BinaryPolicy::Skip`]).
    pub skipped: u64,
    /// Bytes scanned.
    pub bytes: u64,
    /// Candidates: `urn:` that passed the left-boundary rule.
    pub candidates: u64,
    /// Candidates that yielded a URN (of a namespace [`JobOptions::nids`]
    /// keeps).
    pub valid: u64,
    /// URNs of the namespaces [`JobOptions::nids`] leaves out: valid, but
    /// not counted in [`Totals::valid`], not listed, not deduplicated.
    pub excluded: u64,
    /// Candidates that yielded none, by the error kind of their longest attempt.
    pub invalid_kinds: BTreeMap<ErrorKind, u64>,
    /// Inputs that could not be read (or changed while read).
    pub errors: u64,
}

impl Totals {
    /// Candidates that yielded no URN.
    pub fn invalid(&self) -> u64 {
        self.invalid_kinds.values().sum()
    }

    /// Counts `events`, whose URN events are kept or not as `kept` says
    /// (see [`Spanned::kept`]).
    fn count(&mut self, events: &[Event], kept: &[Vec<bool>]) {
        self.candidates += events.len() as u64;
        let mut kept = kept.iter().flatten();
        for event in events {
            match event {
                Event::Urn { .. } if *kept.next().unwrap_or(&true) => self.valid += 1,
                Event::Urn { .. } => self.excluded += 1,
                Event::Rejected { error, .. } => *self.invalid_kinds.entry(error.kind()).or_default() += 1,
            }
        }
    }

    fn add(&mut self, other: &Totals) {
        self.files += other.files;
        self.binary += other.binary;
        self.skipped += other.skipped;
        self.bytes += other.bytes;
        self.candidates += other.candidates;
        self.valid += other.valid;
        self.excluded += other.excluded;
        self.errors += other.errors;
        for (k, n) in &other.invalid_kinds {
            *self.invalid_kinds.entry(*k).or_default() += n;
        }
    }
}

/// An input as the sink sees it.
#[derive(Clone, Copy, Debug)]
pub struct FileRef<'a> {
    /// Position in input order.
    pub index: u32,
    /// The path as given or found (`-` for stdin).
    pub name: &'a str,
}

/// Where an event is in its input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Location {
    /// The byte offset of the event's first byte from the start of the
    /// input (of the decoded bytes, for a decompressed input).
    pub offset: u64,
    /// The 1-based number of the line that byte is on (lines end at
    /// `\n`; a URN holds none), with [`JobOptions::line_numbers`];
    /// `None` without.
    pub line: Option<u64>,
}

impl Location {
    /// A location without a line number.
    pub fn at(offset: u64) -> Location {
        Location { offset, line: None }
    }
}

/// Receives results in input order.
pub trait Sink {
    /// A URN at `at` in `file`. The default does nothing: a run that only
    /// keeps keys ([`JobOptions::events`] off) need not write it.
    fn urn(&mut self, file: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
        let _ = (file, at, urn);
        Ok(())
    }
    /// A candidate at `at` in `file` that yields no URN: `candidate` is
    /// its first bytes (up to 64, fewer at the end of the input), and
    /// `error`'s offset counts from its start. The default does nothing.
    fn rejected(&mut self, file: FileRef<'_>, at: Location, candidate: &[u8], error: &UrnError) -> io::Result<()> {
        let _ = (file, at, candidate, error);
        Ok(())
    }
    /// An input that could not be read. Required: an error dropped here
    /// would be lost without a word.
    fn input_error(&mut self, error: &InputError) -> io::Result<()>;
    /// `file` was scanned as far as it could be read: its own counts
    /// (`files` is 1), after its URNs and rejected candidates and before
    /// any error about it. Not called for inputs that could not be opened
    /// or were skipped. The default does nothing.
    fn input_done(&mut self, file: FileRef<'_>, totals: &Totals) -> io::Result<()> {
        let _ = (file, totals);
        Ok(())
    }
    /// The counts of `file`'s events so far, after each window of a large
    /// file and each block of a stream, once their events were handed
    /// over (and their keys taken). A sink that has seen enough of this
    /// input returns `ControlFlow::Break(())`: the rest of it is not read,
    /// [`Sink::input_done`] comes next with these counts (`bytes` is then
    /// what was scanned), and the run goes on with the next input, as
    /// `urnscan scan -l` and `--max-count` do. A sink that has seen
    /// enough of the whole run ends it by returning an error, as from any
    /// of its methods (`urnscan scan -q`). Not called for a file scanned
    /// whole: [`Sink::input_done`] comes next. The default goes on.
    ///
    /// Standard input, as a pipe or a terminal, is read
    /// [live](crate::source::Live): its blocks end where its writer pauses,
    /// so this call comes within about [`LIVE_DELAY`](crate::source::LIVE_DELAY)
    /// of the bytes it follows. A sink that prints flushes its output here
    /// for a reader of `tail -f log | urnscan scan` to see it.
    fn input_progress(&mut self, file: FileRef<'_>, totals: &Totals) -> io::Result<ControlFlow<()>> {
        let _ = (file, totals);
        Ok(ControlFlow::Continue(()))
    }
    /// A [`Formatter`] that writes, as text, what this sink does with
    /// [`Sink::urn`] and [`Sink::rejected`]; the default has none. With
    /// one, a run that prints events and keeps no keys formats them on
    /// the threads that scanned them (with line numbers, once the lines of
    /// the chunks before are counted), and hands the text to
    /// [`Sink::write_formatted`] in input order instead of calling those
    /// two: printing millions of URNs then no longer waits on the calling
    /// thread. (Runs that keep keys, and streams with line numbers, call
    /// them as before.)
    fn formatter(&self) -> Option<Arc<dyn Formatter>> {
        None
    }
    /// Text made by [`Sink::formatter`]'s formatter for consecutive events
    /// (possibly none), in input order. Called only for a sink that gave a
    /// formatter; the default refuses.
    fn write_formatted(&mut self, text: &[u8]) -> io::Result<()> {
        let _ = text;
        Err(io::Error::new(io::ErrorKind::Unsupported, "this sink has no formatter"))
    }
}

/// Formats events as a [`Sink`] would print them, on any thread (see
/// [`Sink::formatter`]). Each method appends one record, or nothing, to
/// `out`; the arguments are those of the sink's methods of the same names
/// (`at.line` is set when the run counts lines, as for the sink).
pub trait Formatter: Send + Sync {
    /// Appends the record of a URN at `at` in `file`.
    fn urn(&self, out: &mut Vec<u8>, file: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()>;
    /// Appends the record of a candidate that yields no URN.
    fn rejected(
        &self,
        out: &mut Vec<u8>,
        file: FileRef<'_>,
        at: Location,
        candidate: &[u8],
        error: &UrnError,
    ) -> io::Result<()>;
}

/// An input, and the sink's formatter when the run formats its events on
/// the threads that scan it (see [`Sink::formatter`]).
#[derive(Clone, Copy)]
struct Target<'a> {
    file: FileRef<'a>,
    formatter: Option<&'a dyn Formatter>,
    texts: &'a Texts,
}

/// The buffers that formatted text is written into, used again once
/// written out. A fresh buffer per chunk, grown from nothing as the
/// records are written and freed once written, cost a third of the run:
/// plain `scan` of a 10 M-line dataset (375 MB printed, 2026-11-28, 2-core
/// KVM guest, `benches/ab.sh`, 7 rounds, medians) 718 → 496 ms at two
/// threads, 1,020 → 779 ms at one.
#[derive(Default)]
struct Texts(Mutex<Vec<Vec<u8>>>);

impl Texts {
    fn take(&self) -> Vec<u8> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner).pop().unwrap_or_default()
    }

    fn give(&self, mut text: Vec<u8>) {
        text.clear();
        self.0.lock().unwrap_or_else(PoisonError::into_inner).push(text);
    }
}

/// The result of a run.
#[derive(Default)]
pub struct Outcome {
    /// Counts.
    pub totals: Totals,
    /// Distinct keys (empty unless [`JobOptions::keys`]).
    pub table: ShardedTable,
    /// Input names by index ([`Position::file`](crate::Position::file)), `-` for stdin.
    pub inputs: Vec<String>,
}

/// Runs over `paths` (none or `-` is stdin), feeding `sink` in input order.
/// Unreadable inputs go to [`Sink::input_error`] and the run goes on; only
/// an error from the sink itself (a closed output) stops it. The work runs
/// on the current rayon pool (call it inside `rayon::ThreadPool::install`
/// to choose the threads); mapping a file installs the process-wide
/// `SIGBUS` guard of [`crate::platform::mmap`].
///
/// # Example
///
/// The unique URNs of a directory, by key, with their counts, as `urnscan
/// scan --unique` finds them (no event is needed, so the sink only hears
/// of unreadable inputs):
///
/// ```
/// use std::io;
/// use urnscan::job::{self, JobOptions, Sink};
/// use urnscan::source::InputError;
///
/// struct Errors(Vec<String>);
/// impl Sink for Errors {
///     fn input_error(&mut self, error: &InputError) -> io::Result<()> {
///         self.0.push(error.to_string());
///         Ok(())
///     }
/// }
///
/// let dir = std::env::temp_dir().join(format!("urnscan-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir)?;
/// std::fs::write(dir.join("a.txt"), "see urn:ISBN:0451450523 and URN:isbn:0451450523.")?;
/// let opts = JobOptions { events: false, ..JobOptions::default() };
/// let mut errors = Errors(Vec::new());
/// let mut outcome = job::run(&[dir.clone()], &opts, &mut errors)?;
/// let unique: Vec<(String, u64)> = outcome
///     .table
///     .sorted()
///     .iter()
///     .map(|e| (String::from_utf8_lossy(e.key).into_owned(), e.count))
///     .collect();
/// assert_eq!(unique, [("urn:isbn:0451450523".to_owned(), 2)]);
/// assert!(errors.0.is_empty());
/// std::fs::remove_dir_all(&dir)?;
/// # Ok::<(), io::Error>(())
/// ```
pub fn run(paths: &[PathBuf], opts: &JobOptions, sink: &mut dyn Sink) -> io::Result<Outcome> {
    let inputs = source::expand(paths, &opts.walk);
    let scanner = Scanner::new(opts.extract).with_chunk_size(opts.chunk_size).with_finder(opts.finder);
    let names: Vec<String> =
        inputs.iter().map(|r| r.as_ref().map_or_else(|e| e.path.clone(), Input::display)).collect();
    // Runs that keep keys or count lines hand their events to the sink one
    // by one.
    let formatter = if opts.events && !opts.keys { sink.formatter() } else { None };
    let texts = Texts::default();
    let mut consumer = Consumer {
        scanner: &scanner,
        opts,
        sink,
        formatter: formatter.as_deref(),
        texts: &texts,
        outcome: Outcome::default(),
        pending: Vec::new(),
    };
    let batch_len = rayon::current_num_threads() * 4;
    for (b, batch) in inputs.chunks(batch_len).enumerate() {
        let base = b * batch_len;
        let target = |i: usize| Target {
            file: FileRef { index: (base + i) as u32, name: &names[base + i] },
            formatter: formatter.as_deref(),
            texts: &texts,
        };
        let results: Vec<Processed> =
            batch.par_iter().enumerate().map(|(i, input)| process(&scanner, opts, target(i), input)).collect();
        for ((i, input), result) in batch.iter().enumerate().zip(results) {
            consumer.consume((base + i) as u32, input, result)?;
        }
        consumer.absorb_pending();
    }
    Ok(Outcome { inputs: names, ..consumer.outcome })
}

enum Processed {
    Failed(InputError),
    Scanned(Box<Scanned>),
    /// Larger than a window: scanned window by window when consumed.
    Large(Whole),
    Stream(Box<dyn Read + Send>),
    /// A pipe (stdin or a path: a FIFO, a terminal, a device) read
    /// [live](source::Live), scanned before it is known to be binary or
    /// not: tested as its first bytes are read (a writer that pauses,
    /// `tail -f`, may take minutes to write what the test needs).
    Live(Box<dyn Read + Send>),
    /// Stdin or a pipe: read when its turn comes.
    Unread(Contents),
    /// A binary input (then what was done with it).
    Binary(Box<Processed>),
    /// Not scanned (a binary input under `--binary skip`).
    Skipped,
    /// What could be decoded before an error, then the error.
    Partial(Box<Processed>, InputError),
}

/// Decoded bytes of a compressed input read in its parallel batch: an
/// archive that decodes to less is scanned whole there; a larger one goes
/// on as a stream decoded ahead on its own thread.
pub const INLINE_LIMIT: usize = 4 << 20;

/// Inputs larger than this are scanned a window at a time, so the events
/// held at once (one per candidate) stay bounded whatever the file holds.
/// The first window is this long too; the next ones are sized from it.
const LARGE: usize = 16 << 20;

/// The longest window, which text with few URNs grows to. Each window is
/// a round of the pipeline ([`scan_large`]) that ends when its slowest
/// task does, so at two threads every round lost a little of a chunk's
/// time; longer windows are fewer rounds. Measured (2026-11-28, 2-core
/// KVM guest, 1 GiB of text with 200 URNs per MiB, `scan --unique
/// --stats`, `benches/ab.sh`, 11 rounds, medians; peak RSS, most of it the
/// file's pages mapped for the windows in flight): 16 MiB 184 / 113 ms at
/// one / two threads, 53 MB; 32 MiB 179 / 107 ms, 88 MB; 64 MiB 178 / 104
/// ms, 154 MB. Again, 16 against 32 MiB: 180 / 112 against 178 / 105 ms;
/// text with 5,000 URNs per MiB, whose windows stay shorter, 310 ms at
/// two threads with either.
const WINDOW: usize = 32 << 20;

/// About how many events a window should hold while keys are collected or
/// URNs printed: each window is sized from the density of the one before
/// (between [`MIN_WINDOW`] and [`WINDOW`]). Each event costs 24 bytes, and
/// a URN's key note or parts 24 more, twice over while the pipeline holds
/// two windows. A
/// URN dataset has some 27,000 URNs per MiB, so a 16 MiB window of it held
/// 40 MB of bookkeeping and 32 MiB of mapped pages beside the key table,
/// the one thing that should grow; at 32,768 events its windows are
/// 1.2 MiB, text with 5,000 URNs per MiB gets 6.5 MiB windows, and text
/// with 200 grows to [`WINDOW`]. (Measured on the 10 M-line dataset, `scan
/// --unique -j2`: peak RSS 194 MiB at 32,768 events, 202 MiB at 65,536;
/// time within noise. With 16 MiB windows, and the sorted output in a list
/// of its own, it was 351 MiB.)
const WINDOW_EVENTS: usize = 1 << 15;

/// The shortest window.
const MIN_WINDOW: usize = 1 << 20;

/// The first window of a run that will likely stop inputs early
/// ([`JobOptions::early_stop`]); each next one is at most four times the
/// one before. With whole files of 16 MiB, `scan -l` of 64 of them took
/// 70 ms where `grep -l` took 4: both stop at the first URN, but ours was
/// only asked after the whole file.
const EARLY_WINDOW: usize = 256 << 10;

/// The scanner for a window of `len` bytes. A run that prints every event
/// and keeps no keys cuts a window into at least eight chunks per thread
/// (of 128 KiB or more, and no more than `scanner`'s own size): dense
/// input's windows hold about [`WINDOW_EVENTS`] events, 1.2 MiB of a URN
/// dataset, which 1 MiB chunks made one or two tasks, and the other
/// thread had nothing to do. Measured (2026-11-28, 2-core KVM guest,
/// `benches/ab.sh`, medians): plain `scan -j2` of the 10 M-line dataset
/// with `--chunk-size` 1 MiB / 256 / 128 / 64 KiB 575 / 561 / 531 / 539
/// ms. Keyed runs keep whole chunks: their per-chunk work (a key batch
/// each) made smaller ones slower (`scan -u -j2` on the dataset 1,382 →
/// 1,417 ms with 256 KiB), and so does one thread (803 → 816 ms).
fn window_scanner(scanner: &Scanner, opts: &JobOptions, len: usize) -> Scanner {
    let threads = rayon::current_num_threads();
    if !opts.events || opts.keys || threads < 2 {
        return *scanner;
    }
    let chunk = (len / (8 * threads)).max(MIN_PRINTING_CHUNK).min(scanner.chunk_size());
    scanner.with_chunk_size(chunk)
}

/// The smallest chunk [`window_scanner`] cuts.
const MIN_PRINTING_CHUNK: usize = 128 << 10;

/// The length of the window after one of `len` bytes that held `events`.
fn next_window_len(len: usize, events: usize) -> usize {
    let scaled = len as u64 * WINDOW_EVENTS as u64 / events.max(1) as u64;
    usize::try_from(scaled).unwrap_or(WINDOW).clamp(MIN_WINDOW, WINDOW)
}

struct Scanned {
    /// Kept while events or keys refer to it.
    whole: Option<Whole>,
    events: Vec<Event>,
    keys: Vec<KeyBatch>,
    /// Per chunk, the parts of its URN events (see [`emit`]).
    parts: Vec<Vec<Parts>>,
    /// Per chunk, which URN events the run keeps (see [`Spanned::kept`]).
    kept: Vec<Vec<bool>>,
    /// Per chunk, its events formatted (see [`Spanned::text`]).
    text: Option<Vec<Formatted>>,
    /// With line numbers, the newlines before each event (see [`Spanned::lines`]).
    lines: Option<SpanLines>,
    totals: Totals,
    changed: bool,
}

fn process(scanner: &Scanner, opts: &JobOptions, target: Target<'_>, input: &Result<Input, InputError>) -> Processed {
    let input = match input {
        Ok(input) => input,
        Err(e) => return Processed::Failed(InputError { path: e.path.clone(), error: clone_io(&e.error) }),
    };
    match source::open(input, opts.mmap) {
        Err(error) => Processed::Failed(InputError { path: input.display(), error }),
        // Opened in the batch but read only when its turn comes: reading
        // it here could wait on a writer that itself waits for a later
        // input to be opened, and stdin may be given twice.
        Ok(contents @ Contents::Pipe(_)) => Processed::Unread(contents),
        Ok(Contents::Stream(reader)) if matches!(input, Input::Stdin) => Processed::Unread(Contents::Stream(reader)),
        Ok(contents) => opened(scanner, opts, target, input, contents),
    }
}

/// Decodes (with -z), looks at the first bytes, and scans small inputs whole.
fn opened(scanner: &Scanner, opts: &JobOptions, target: Target<'_>, input: &Input, contents: Contents) -> Processed {
    match source::decoded(contents, opts.decompress) {
        Err(error) => Processed::Failed(InputError { path: input.display(), error }),
        Ok(opened) => match (opened.contents, opened.codec) {
            (Contents::Whole(whole), _) => whole_input(scanner, opts, target, whole),
            (Contents::Pipe(pipe), None) if opts.binary == BinaryPolicy::Scan => {
                Processed::Live(pipe.live(source::LIVE_DELAY))
            }
            (Contents::Pipe(pipe), None) => stream_input(opts, pipe.into_reader()),
            (Contents::Stream(reader), None) => stream_input(opts, reader),
            (Contents::Stream(reader), Some(_)) => decoded_input(scanner, opts, target, input, reader),
            (Contents::Pipe(pipe), Some(_)) => decoded_input(scanner, opts, target, input, pipe.into_reader()),
        },
    }
}

/// Marks `processed` as binary when it is.
fn binary_if(binary: bool, processed: Processed) -> Processed {
    if binary {
        Processed::Binary(Box::new(processed))
    } else {
        processed
    }
}

fn skips(opts: &JobOptions, binary: bool) -> bool {
    binary && opts.binary == BinaryPolicy::Skip
}

fn whole_input(scanner: &Scanner, opts: &JobOptions, target: Target<'_>, whole: Whole) -> Processed {
    let binary = source::is_binary(whole.as_bytes());
    binary_if(
        binary,
        if skips(opts, binary) {
            Processed::Skipped
        } else if whole.as_bytes().len() > if opts.early_stop { EARLY_WINDOW } else { LARGE } {
            Processed::Large(whole)
        } else {
            Processed::Scanned(Box::new(scan_whole(scanner, opts, target, whole)))
        },
    )
}

/// A stream, whose first bytes say whether it is binary. (A pipe is read
/// [live](source::Live) and tested as its first bytes come, unless binary
/// inputs are skipped: see [`Processed::Live`].)
fn stream_input(opts: &JobOptions, reader: Box<dyn Read + Send>) -> Processed {
    let peeked = source::peek(reader, source::BINARY_PROBE);
    let binary = source::is_binary(&peeked.head);
    binary_if(binary, if skips(opts, binary) { Processed::Skipped } else { Processed::Stream(peeked.into_reader()) })
}

/// A decoded stream: whole if it ends within [`INLINE_LIMIT`], else the
/// rest decoded ahead on its own thread.
fn decoded_input(
    scanner: &Scanner,
    opts: &JobOptions,
    target: Target<'_>,
    input: &Input,
    reader: Box<dyn Read + Send>,
) -> Processed {
    let mut peeked = source::peek(reader, INLINE_LIMIT);
    if !peeked.is_complete(INLINE_LIMIT) {
        let binary = source::is_binary(&peeked.head);
        let rest =
            if skips(opts, binary) { Processed::Skipped } else { Processed::Stream(decompress::read_ahead(peeked)) };
        return binary_if(binary, rest);
    }
    let error = peeked.error.take();
    if error.is_some() {
        // The bytes after the last one no URN holds may be a URN cut short.
        peeked.head.truncate(crate::scan::judged_end(&peeked.head, 0));
    }
    let whole = whole_input(scanner, opts, target, Whole::Owned(peeked.head));
    match error {
        Some(error) => Processed::Partial(Box::new(whole), InputError { path: input.display(), error }),
        None => whole,
    }
}

fn clone_io(e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), e.to_string())
}

fn scan_whole(scanner: &Scanner, opts: &JobOptions, target: Target<'_>, whole: Whole) -> Scanned {
    let hay = whole.as_bytes();
    let grammar = scanner.options().grammar;
    let origin =
        Origin { file: target.file.index, base: 0, grammar, mapped: whole.is_mapped(), ns_rules: opts.ns_rules };
    let Spanned { events, keys, parts, kept, text, lines } =
        scan_keyed(scanner, opts, hay, 0..hay.len(), origin, target, 0);
    let mut totals = Totals { files: 1, bytes: hay.len() as u64, ..Totals::default() };
    totals.count(&events, &kept);
    let changed = whole.changed_during_use();
    // Formatted events need neither themselves nor the bytes any more.
    let printed = opts.events && text.is_none();
    let (events, kept) = if printed { (events, kept) } else { (Vec::new(), Vec::new()) };
    let whole = (printed || opts.keys).then_some(whole);
    Scanned { whole, events, keys, parts, kept, text, lines, totals, changed }
}

/// Events per [`KeyBatch`]: enough to amortise a batch, small enough that a
/// window's events spread over every thread.
const KEY_SLICE: usize = 1 << 14;

/// Where a buffer's URNs come from, as their key table records them.
#[derive(Clone, Copy, Debug)]
pub struct Origin {
    /// Index of the input.
    pub file: u32,
    /// Offset of the buffer's first byte in the input.
    pub base: u64,
    /// The grammar the URNs were validated under.
    pub grammar: Grammar,
    /// The buffer is a shared file mapping, whose bytes can change while
    /// they are read: new keys are checked again before they are kept
    /// (those of a batch that copies its URNs, when it copies them).
    pub mapped: bool,
    /// Keys pass through the namespace rules ([`JobOptions::ns_rules`]).
    pub ns_rules: bool,
}

/// Phase 1 of filling a [`ShardedTable`] (see [`crate::dedup`]) for the
/// URN events of `hay`: their keys written and hashed into one
/// [`KeyBatch`]. The URNs were validated by the scan, so the key is read
/// off their bytes without parsing them again (whole files and windows get
/// even that from the scan: see `walked_key_batch`).
pub fn key_batch(hay: &[u8], events: &[Event], origin: Origin) -> KeyBatch {
    let urns = urn_bytes(hay, events).map(|(offset, raw)| (offset, raw, key_shape(raw, origin.grammar)));
    batch_of(origin, events, events.len(), urns)
}

/// [`key_batch`] with the shape of each URN's key (one per URN event) as
/// the scan's validating walk found it ([`Scanner::scan_span_noted`]):
/// no pass over the bytes to find it again. A shape that no longer fits
/// the bytes (a mapping changed since the scan) drops the URN, and one that
/// fits is checked again before its key is kept, as for [`key_batch`].
/// URNs whose flag in `kept` is false are left out (see [`kept_flags`]).
fn walked_key_batch(hay: &[u8], events: &[Event], shapes: &[KeyShape], origin: Origin, kept: &[bool]) -> KeyBatch {
    debug_assert_eq!(urn_bytes(hay, events).count(), shapes.len());
    let urns = urn_bytes(hay, events)
        .zip(shapes)
        .enumerate()
        .filter(|&(i, _)| *kept.get(i).unwrap_or(&true))
        .map(|(_, ((offset, raw), shape))| (offset, raw, shape.apply(raw)));
    batch_of(origin, events, shapes.len(), urns)
}

/// Whether each URN event of `events` (offsets in `hay`) is of a namespace
/// `nids` keeps, in order; empty without a filter (every URN is kept). The
/// task that scanned the chunk finds them while its bytes are in cache:
/// read again on the calling thread, a window's URNs were a cache miss
/// each (dense text, `scan --nid isbn -j2`: the filter took 18 % of the
/// run and made it slower than printing every URN).
fn kept_flags(hay: &[u8], events: &[Event], nids: Option<&NidFilter>) -> Vec<bool> {
    match nids {
        None => Vec::new(),
        Some(filter) => urn_bytes(hay, events).map(|(_, raw)| filter.accepts(raw)).collect(),
    }
}

/// Phase 1 over a whole buffer: `hay` scanned a window of `window` bytes at
/// a time ([`Scanner::scan_windows_with`]), each chunk's [`KeyBatch`] made
/// by the task that scanned the chunk from the key shapes the scan kept, as
/// a run makes them for a file; `on_window` gets each window's events and
/// batches (for [`absorb`]) until it returns `false`.
pub fn scan_windows_keyed(
    scanner: &Scanner,
    hay: &[u8],
    window: usize,
    origin: Origin,
    on_window: impl FnMut(&[Event], Vec<KeyBatch>) -> bool,
) {
    let per_chunk = |events: &[Event], shapes: &[KeyShape]| walked_key_batch(hay, events, shapes, origin, &[]);
    scanner.scan_windows_shaped(hay, window, None, per_chunk, on_window);
}

/// The offset and bytes of each URN event, one item per event (so that
/// they stay in step with the scan's shapes): the events come from
/// scanning `hay` itself, so they lie inside it.
fn urn_bytes<'h>(hay: &'h [u8], events: &'h [Event]) -> impl Iterator<Item = (usize, &'h [u8])> {
    events.iter().filter_map(|event| match *event {
        Event::Urn { offset, len } => Some((offset, &hay[offset..offset + len])),
        Event::Rejected { .. } => None,
    })
}

/// How much of its URNs' bytes the batch of `events` should copy
/// ([`KeyBatch::copying`]): when they are less than an eighth of the bytes
/// from the first to the end of the last, as in running text (200 URNs per
/// MiB: 1 %). Each URN there is a cache line or two of its own, which phase
/// 2 of a window waits for again while the next window is scanned; copied
/// while in cache, the URNs of a batch lie side by side, and phase 2 reads
/// nothing of the mapping again (1 GiB of text, `scan --unique --stats
/// -j1`: 3.6 % faster; callgrind on its first 128 MiB: phase 2 24.3 M ->
/// 17.0 M instructions, its reads missing a 2 MiB cache 57,549 -> 43,332
/// times). Dense text and datasets are read in order anyway, and there a
/// copy of every URN cost time and memory (10 M lines, `scan --unique
/// -j2`: 10 MB more at the peak). Returns the bytes to copy, `None` for no
/// copy.
fn copied_bytes(events: &[Event]) -> Option<usize> {
    let urns = || {
        events.iter().filter_map(|e| match *e {
            Event::Urn { offset, len } => Some((offset, len)),
            Event::Rejected { .. } => None,
        })
    };
    let (first, _) = urns().next()?;
    let (last, last_len) = urns().next_back()?;
    let bytes: usize = urns().map(|(_, len)| len).sum();
    (bytes.saturating_mul(8) < last + last_len - first).then_some(bytes)
}

/// A batch of about `expected` URNs of `events`, each with its assigned name and key
/// fix-ups (`None`: no key, the URN is left out).
fn batch_of<'h>(
    origin: Origin,
    events: &[Event],
    expected: usize,
    urns: impl Iterator<Item = (usize, &'h [u8], Option<(&'h [u8], Fixes)>)>,
) -> KeyBatch {
    let Origin { file, base, grammar, mapped, ns_rules } = origin;
    let copied = copied_bytes(events);
    let mut batch = KeyBatch::new(file, base, mapped.then_some(grammar), expected)
        .with_ns_rules(ns_rules)
        .copying(copied.is_some())
        .with_room(copied.unwrap_or(0));
    for (offset, raw, shape) in urns {
        if let Some((name, fixes)) = shape {
            batch.push(offset, raw, name, fixes);
        }
    }
    batch.group();
    batch
}

/// What [`scan_keyed`] found in a span.
struct Spanned {
    events: Vec<Event>,
    /// One per chunk, when the run wants keys.
    keys: Vec<KeyBatch>,
    /// Per chunk, the parts of its URN events, when the run prints them
    /// and wants no keys (see [`emit`]).
    parts: Vec<Vec<Parts>>,
    /// Per chunk, a flag per URN event: whether its namespace is one
    /// [`JobOptions::nids`] keeps ([`kept_flags`]; empty without a filter).
    kept: Vec<Vec<bool>>,
    /// Per chunk, its events as the sink's formatter wrote them, when the
    /// run has one (see [`Target`]); then `parts` is empty.
    text: Option<Vec<Formatted>>,
    /// With line numbers ([`JobOptions::line_numbers`]), the newlines
    /// before each event from the span's start, counted by the tasks that
    /// scanned its chunks ([`SpanLines`]).
    lines: Option<SpanLines>,
}

/// The text of a chunk's events, or the formatter's error.
type Formatted = io::Result<Vec<u8>>;

/// The events of the candidates that start in `span` of `hay`, scanned in
/// parallel chunks, and what the scan's validating walk found of each URN
/// that the run will need again: when the run wants keys, each chunk's key
/// batch, made by the task that scanned the chunk, while its bytes are
/// still in cache, from the key shapes the scan kept; when it only prints
/// the URNs, their parts, so that printing need not parse them again.
/// `lines_before`: with line numbers, the newlines of the input before
/// `span` (its windows before it), for the lines of formatted events.
fn scan_keyed(
    scanner: &Scanner,
    opts: &JobOptions,
    hay: &[u8],
    span: Range<usize>,
    origin: Origin,
    target: Target<'_>,
    lines_before: u64,
) -> Spanned {
    let progress = opts.progress.as_deref();
    let (from, end) = (span.start, span.end);
    let flags = |events: &[Event]| kept_flags(hay, events, opts.nids.as_ref());
    // With line numbers each chunk's task counts the newlines between its
    // events while their bytes are in cache; only the gaps between chunks
    // are counted after (`SpanLines::join`).
    let counts_lines = opts.line_numbers && opts.events;
    let chunk_lines = |events: &[Event]| counts_lines.then(|| newlines_from_first(hay, events));
    let lines = |events: &[Event], chunks: Vec<Option<Vec<u64>>>| {
        counts_lines.then(|| SpanLines::join(hay, span.clone(), events, chunks.into_iter().flatten()))
    };
    let none =
        Spanned { events: Vec::new(), keys: Vec::new(), parts: Vec::new(), kept: Vec::new(), text: None, lines: None };
    if opts.keys {
        let per_chunk = |events: &[Event], shapes: &[KeyShape]| {
            let kept = flags(events);
            ((walked_key_batch(hay, events, shapes, origin, &kept), kept), chunk_lines(events))
        };
        let (events, results) = scanner.scan_span_noted(hay, from, end, progress, per_chunk);
        let (results, chunks): (Vec<_>, Vec<_>) = results.into_iter().unzip();
        let (keys, kept) = results.into_iter().unzip();
        let lines = lines(&events, chunks);
        Spanned { events, keys, kept, lines, ..none }
    } else if let (true, true, Some(formatter)) = (opts.events, counts_lines, target.formatter) {
        // Each chunk's records need the lines of every chunk before it:
        // the chunks are formatted once their counts are joined.
        let per_chunk = |events: &[Event], parts: &[Parts]| ((parts.to_vec(), flags(events)), chunk_lines(events));
        let (events, results) = scanner.scan_span_noted(hay, from, end, progress, per_chunk);
        let (notes, chunks): (Vec<ChunkNotes>, Vec<_>) = results.into_iter().unzip();
        let sizes: Vec<usize> = chunks.iter().map(|c| c.as_ref().map_or(0, Vec::len)).collect();
        let lines = lines(&events, chunks);
        let text = lines.as_ref().map(|lines| {
            let given = LinesGiven { before_span: lines_before, before: &lines.before };
            format_chunks_with_lines(Formatting { target, formatter, origin }, hay, &events, &notes, &sizes, given)
        });
        let kept = notes.into_iter().map(|(_, kept)| kept).collect();
        Spanned { events, kept, text, lines, ..none }
    } else if let (true, Some(formatter)) = (opts.events, target.formatter) {
        let per_chunk = |events: &[Event], parts: &[Parts]| {
            let kept = flags(events);
            let text = format_events(Formatting { target, formatter, origin }, hay, events, parts, &kept, None);
            (text, kept)
        };
        let (events, results) = scanner.scan_span_noted(hay, from, end, progress, per_chunk);
        let (text, kept) = results.into_iter().unzip();
        Spanned { events, kept, text: Some(text), ..none }
    } else if opts.events {
        let per_chunk = |events: &[Event], parts: &[Parts]| ((parts.to_vec(), flags(events)), chunk_lines(events));
        let (events, results) = scanner.scan_span_noted(hay, from, end, progress, per_chunk);
        let (results, chunks): (Vec<_>, Vec<_>) = results.into_iter().unzip();
        let (parts, kept) = results.into_iter().unzip();
        let lines = lines(&events, chunks);
        Spanned { events, parts, kept, lines, ..none }
    } else {
        let (events, kept) = scanner.scan_span_with(hay, from, end, progress, flags);
        Spanned { events, kept, ..none }
    }
}

/// Phase 1 over parallel slices of `events` (for buffers scanned without
/// [`Scanner::scan_span_with`]), one [`KeyBatch`] per slice.
pub fn fill_batches(hay: &[u8], events: &[Event], origin: Origin) -> Vec<KeyBatch> {
    events.par_chunks(KEY_SLICE).map(|slice| key_batch(hay, slice, origin)).collect()
}

/// Both phases: the keys of the URN events of `hay` into `table`.
pub fn add_keys(table: &mut ShardedTable, hay: &[u8], events: &[Event], origin: Origin) {
    absorb(table, &fill_batches(hay, events, origin), hay);
}

/// Phase 2: `batches`, whose offsets refer to `hay`, into `table`.
pub fn absorb(table: &mut ShardedTable, batches: &[KeyBatch], hay: &[u8]) {
    let refs: Vec<(&KeyBatch, &[u8])> = batches.iter().map(|b| (b, hay)).collect();
    table.absorb(&refs);
}

/// The calling thread's side of a run: takes each input's result in
/// input order.
struct Consumer<'a> {
    scanner: &'a Scanner,
    opts: &'a JobOptions,
    sink: &'a mut dyn Sink,
    /// The sink's, when the run formats events as it scans them.
    formatter: Option<&'a dyn Formatter>,
    texts: &'a Texts,
    outcome: Outcome,
    /// Whole files consumed in this batch whose keys are not in the table
    /// yet: they enter it together, in one parallel pass per batch.
    pending: Vec<Scanned>,
}

impl Consumer<'_> {
    fn consume(&mut self, index: u32, input: &Result<Input, InputError>, result: Processed) -> io::Result<()> {
        let (scanner, opts) = (self.scanner, self.opts);
        let name = input.as_ref().map(Input::display).unwrap_or_default();
        let file = FileRef { index, name: &name };
        let target = Target { file, formatter: self.formatter, texts: self.texts };
        match result {
            Processed::Failed(error) => {
                self.outcome.totals.errors += 1;
                self.sink.input_error(&error)
            }
            Processed::Scanned(mut scanned) => {
                if let Some(text) = scanned.text.take() {
                    write_formatted(text, self.sink, self.texts)?;
                } else if let Some(whole) = &scanned.whole {
                    // Bytes that changed under the scan are parsed again.
                    let parts = if scanned.changed { &[][..] } else { &scanned.parts[..] };
                    let notes = Notes { parts, kept: &scanned.kept };
                    let mut input = Emitting::new(file, opts, scanned.lines.take(), 0);
                    emit(opts, &mut input, whole.as_bytes(), 0, &scanned.events, notes, self.sink)?;
                }
                scanned.events = Vec::new();
                scanned.parts = Vec::new();
                scanned.kept = Vec::new();
                self.outcome.totals.add(&scanned.totals);
                self.sink.input_done(file, &scanned.totals)?;
                let changed = scanned.changed;
                if !scanned.keys.is_empty() {
                    self.pending.push(*scanned);
                }
                if changed {
                    self.outcome.totals.errors += 1;
                    self.sink.input_error(&changed_error(&name))?;
                }
                Ok(())
            }
            Processed::Large(whole) => scan_large(scanner, opts, target, &whole, self.sink, &mut self.outcome),
            Processed::Stream(reader) => {
                scan_stream(scanner, opts, target, reader, self.sink, &mut self.outcome).map(drop)
            }
            Processed::Live(reader) => {
                let probe = scan_stream(scanner, opts, target, reader, self.sink, &mut self.outcome)?;
                self.outcome.totals.binary += u64::from(probe.binary);
                Ok(())
            }
            Processed::Unread(contents) => {
                let Ok(unread) = input else { return Ok(()) };
                let opened = opened(scanner, opts, target, unread, contents);
                self.consume(index, input, opened)
            }
            Processed::Binary(inner) => {
                self.outcome.totals.binary += 1;
                self.consume(index, input, *inner)
            }
            Processed::Skipped => {
                self.outcome.totals.skipped += 1;
                Ok(())
            }
            Processed::Partial(inner, error) => {
                self.consume(index, input, *inner)?;
                self.outcome.totals.errors += 1;
                self.sink.input_error(&error)
            }
        }
    }

    /// The keys of the batch's whole files into the table, in input order.
    fn absorb_pending(&mut self) {
        let mut all: Vec<(&KeyBatch, &[u8])> = Vec::new();
        for scanned in &self.pending {
            if let Some(whole) = &scanned.whole {
                all.extend(scanned.keys.iter().map(|k| (k, whole.as_bytes())));
            }
        }
        self.outcome.table.absorb(&all);
        self.pending.clear();
    }
}

fn changed_error(name: &str) -> InputError {
    let error = io::Error::other(
        "the file shrank while it was being scanned, so results for it are incomplete; \
         scan a copy that is not being written, or use --mmap never",
    );
    InputError { path: name.to_owned(), error }
}

/// What the scan kept of each URN event of a span, chunk by chunk, for
/// [`emit`].
#[derive(Clone, Copy)]
struct Notes<'a> {
    /// The parts of each URN (see [`emit`]); empty: parse again.
    parts: &'a [Vec<Parts>],
    /// Whether each URN is kept ([`Spanned::kept`]); empty: all are.
    kept: &'a [Vec<bool>],
}

/// Hands `events` (offsets relative to `hay`, which starts at byte `base`
/// of the input) to the sink, but the URN events `notes.kept` leaves out
/// (see [`each_shown`]).
fn emit(
    opts: &JobOptions,
    input: &mut Emitting<'_>,
    hay: &[u8],
    base: u64,
    events: &[Event],
    notes: Notes<'_>,
    sink: &mut dyn Sink,
) -> io::Result<()> {
    let (parts, kept) = (notes.parts.iter().flatten(), notes.kept.iter().flatten());
    let file = input.file;
    each_shown(opts.extract.grammar, hay, events, parts, kept, |event, offset, shown| {
        let at = input.locate(event, hay, base, base + offset as u64);
        match shown {
            Shown::Urn(urn) => sink.urn(file, at, &urn),
            Shown::Rejected(candidate, error) => sink.rejected(file, at, candidate, error),
        }
    })
}

/// An input whose events are being handed to the sink, and with line
/// numbers ([`JobOptions::line_numbers`]) where their lines come from.
struct Emitting<'a> {
    file: FileRef<'a>,
    lines: Lines,
}

/// How an input's events get their lines.
enum Lines {
    /// No line numbers.
    Off,
    /// Counted here, from one event to the next (a stream's blocks).
    Counted(LineCount),
    /// Counted by the tasks that scanned the span of the events being
    /// emitted (a whole input, a window of a large file): the newlines
    /// before the span, and before each event from the span's start.
    Given { before_span: u64, before: Vec<u64> },
}

/// The newlines before byte `at` of an input. Events reach the sink in
/// input order, so each is located by counting the newlines between the
/// one before and it (`memchr`'s vectorised count).
#[derive(Clone, Copy, Default)]
struct LineCount {
    at: u64,
    newlines: u64,
}

/// The newlines of a span of an input (with line numbers), as the tasks
/// that scanned it counted them.
struct SpanLines {
    /// Before each of the span's events, from the span's start.
    before: Vec<u64>,
    /// In the span, up to where the next span starts (after the last URN
    /// that crosses its end, as [`resume_point`] decides).
    total: u64,
}

impl SpanLines {
    /// Joins the counts of a span's chunks (each chunk's newlines from its
    /// first event to each of its events, [`newlines_from_first`], in
    /// order; together one per event) by counting the gaps between them.
    fn join(hay: &[u8], span: Range<usize>, events: &[Event], chunks: impl Iterator<Item = Vec<u64>>) -> SpanLines {
        let mut count = LineCount { at: span.start as u64, newlines: 0 };
        let mut before = Vec::with_capacity(events.len());
        for chunk in chunks {
            let own = chunk.len().min(events.len() - before.len());
            if own == 0 {
                continue;
            }
            let base = count.move_to(hay, 0, events[before.len()].offset() as u64);
            before.extend(chunk[..own].iter().map(|n| base + n));
            // The chunk's own count takes the position to its last event.
            let last = before.len() - 1;
            count = LineCount { at: events[last].offset() as u64, newlines: before[last] };
        }
        // (Chunks hold every event; any left would be counted here.)
        for event in &events[before.len()..] {
            before.push(count.move_to(hay, 0, event.offset() as u64));
        }
        let total = count.move_to(hay, 0, resume_point(events, span.end) as u64);
        SpanLines { before, total }
    }
}

/// The newlines from the first of `events` to each of them (0 for the
/// first), counted by the task that scanned them.
///
/// Two ways to the same counts, chosen by how far apart the events are.
/// Far apart (running text: kilobytes between URNs), a `memchr` count of
/// each gap. Close together (a dataset: one URN per line, a few dozen bytes
/// apart), a count per gap spends more on starting than on counting (a
/// fifth of `scan -n` on 10 M lines), so one pass over the chunk's
/// newlines takes the events as it goes. Measured (2026-11-29, 2-core KVM
/// guest, `benches/ab.sh`, 5 rounds, medians, `scan -n -j1`): the 10 M
/// line dataset 1,997 ms with counts per gap, 1,591 with the one pass,
/// 1,747 with a plain loop for gaps under 256 bytes; 1 GiB of text with
/// 200 URNs per MiB took 1.7x as long with the one pass as with counts.
fn newlines_from_first(hay: &[u8], events: &[Event]) -> Vec<u64> {
    let (Some(first), Some(last)) = (events.first(), events.last()) else { return Vec::new() };
    let (start, end) = (first.offset(), last.offset());
    if end - start >= events.len() * CLOSE_EVENTS {
        let mut count = LineCount { at: start as u64, newlines: 0 };
        return events.iter().map(|e| count.move_to(hay, 0, e.offset() as u64)).collect();
    }
    let mut newlines = memchr::memchr_iter(b'\n', &hay[start..end]).map(|i| start + i).peekable();
    let mut count = 0;
    events
        .iter()
        .map(|e| {
            while newlines.next_if(|&at| at < e.offset()).is_some() {
                count += 1;
            }
            count
        })
        .collect()
}

/// Events closer than this, on average, are close together for
/// [`newlines_from_first`].
const CLOSE_EVENTS: usize = 256;

impl<'a> Emitting<'a> {
    /// An input whose events get their lines from `given` (a span's, whose
    /// events are the ones emitted, after `before_span` newlines), or
    /// counted here without it, when the run wants line numbers.
    fn new(file: FileRef<'a>, opts: &JobOptions, given: Option<SpanLines>, before_span: u64) -> Emitting<'a> {
        let lines = match given {
            _ if !opts.line_numbers => Lines::Off,
            Some(SpanLines { before, .. }) => Lines::Given { before_span, before },
            None => Lines::Counted(LineCount::default()),
        };
        Emitting { file, lines }
    }

    /// Where byte `offset` of the input, the start of the span's `event`-th
    /// event, is, with its line if lines are counted. `hay` starts at byte
    /// `base` of the input and, when lines are counted here, holds both
    /// `offset` and the byte counted to: a stream's next block starts at
    /// or before the end of the one before, which
    /// [`Emitting::count_to_end`] counts to.
    fn locate(&mut self, event: usize, hay: &[u8], base: u64, offset: u64) -> Location {
        let line = match &mut self.lines {
            Lines::Off => None,
            Lines::Counted(count) => Some(count.move_to(hay, base, offset) + 1),
            Lines::Given { before_span, before } => Some(*before_span + before[event] + 1),
        };
        Location { offset, line }
    }

    /// The newlines before byte `offset` of the input, counted from where
    /// the count stands, as [`Emitting::locate`] does (0 without counts).
    fn newlines_before(&mut self, hay: &[u8], base: u64, offset: u64) -> u64 {
        match &mut self.lines {
            Lines::Counted(count) => count.move_to(hay, base, offset),
            _ => 0,
        }
    }

    /// Takes `newlines` as the count before byte `offset`, counted by the
    /// caller.
    fn counted_to(&mut self, offset: u64, newlines: u64) {
        if let Lines::Counted(count) = &mut self.lines {
            *count = LineCount { at: offset, newlines };
        }
    }

    /// Counts the lines up to the end of `hay` (a stream's block, before
    /// the bytes before its end are dropped).
    fn count_to_end(&mut self, hay: &[u8], base: u64) {
        if let Lines::Counted(count) = &mut self.lines {
            count.move_to(hay, base, base + hay.len() as u64);
        }
    }
}

impl LineCount {
    /// The newlines before byte `offset`, counted from the last position
    /// (backwards, when a stream's block starts again before its end).
    fn move_to(&mut self, hay: &[u8], base: u64, offset: u64) -> u64 {
        let index = |at: u64| (at - base) as usize;
        let newlines = |bytes: &[u8]| memchr::memchr_iter(b'\n', bytes).count() as u64;
        if offset >= self.at {
            self.newlines += newlines(&hay[index(self.at)..index(offset)]);
        } else {
            self.newlines -= newlines(&hay[index(offset)..index(self.at)]);
        }
        self.at = offset;
        self.newlines
    }
}

/// The text `formatter` makes of a chunk's `events` (offsets relative to
/// `hay`, which starts at byte `origin.base` of the input), but the URN
/// events `kept` leaves out; `parts` are those of its URN events.
fn format_events(
    with: Formatting<'_>,
    hay: &[u8],
    events: &[Event],
    parts: &[Parts],
    kept: &[bool],
    lines: Option<LinesGiven<'_>>,
) -> Formatted {
    let Formatting { target, formatter, origin } = with;
    let (file, mut out) = (target.file, target.texts.take());
    each_shown(origin.grammar, hay, events, parts.iter(), kept.iter(), |i, offset, shown| {
        let line = lines.and_then(|l| Some(l.before_span + l.before.get(i)? + 1));
        let at = Location { offset: origin.base + offset as u64, line };
        match shown {
            Shown::Urn(urn) => formatter.urn(&mut out, file, at, &urn),
            Shown::Rejected(candidate, error) => formatter.rejected(&mut out, file, at, candidate, error),
        }
    })?;
    Ok(out)
}

/// Who formats the events of an input, and where its buffer starts.
#[derive(Clone, Copy)]
struct Formatting<'a> {
    target: Target<'a>,
    formatter: &'a dyn Formatter,
    origin: Origin,
}

/// A chunk's parts of its URN events and their kept flags.
type ChunkNotes = (Vec<Parts>, Vec<bool>);

/// The lines of a run of events: the newlines before the first byte of
/// their span, and before each of them from there.
#[derive(Clone, Copy)]
struct LinesGiven<'l> {
    before_span: u64,
    before: &'l [u64],
}

/// The text of each chunk of a span (`sizes[i]` events of `events` and its
/// `notes`, parts and kept flags), with line numbers: a second parallel
/// pass, a task per chunk, once the counts of every chunk are joined.
fn format_chunks_with_lines(
    with: Formatting<'_>,
    hay: &[u8],
    events: &[Event],
    notes: &[ChunkNotes],
    sizes: &[usize],
    lines: LinesGiven<'_>,
) -> Vec<Formatted> {
    let starts: Vec<usize> = sizes.iter().scan(0, |at, n| Some(std::mem::replace(at, *at + n))).collect();
    notes
        .par_iter()
        .zip(starts.par_iter().zip(sizes))
        .map(|((parts, kept), (&start, &n))| {
            // (Chunks hold every event; the bounds only keep a mismatch
            // from indexing out of range.)
            let range = start.min(events.len())..(start + n).min(events.len());
            let before = lines.before.get(range.clone()).unwrap_or_default();
            let given = LinesGiven { before, ..lines };
            format_events(with, hay, &events[range], parts, kept, Some(given))
        })
        .collect()
}

/// The text of each chunk of a stream's block (`buf`, whose `events` its
/// chunks' `notes` and newline counts cover, in order), with line numbers:
/// the newlines before its first event are counted from where `input`'s
/// count stands, the gaps between chunks and after the last event here,
/// and the count is left at the block's end.
fn format_block_with_lines(
    with: Formatting<'_>,
    input: &mut Emitting<'_>,
    buf: &[u8],
    events: &[Event],
    notes: &[ChunkNotes],
    chunks: Vec<Vec<u64>>,
) -> Vec<Formatted> {
    let base = with.origin.base;
    let first = events.first().map_or(buf.len(), Event::offset);
    let before_span = input.newlines_before(buf, base, base + first as u64);
    let sizes: Vec<usize> = chunks.iter().map(Vec::len).collect();
    let lines = SpanLines::join(buf, first..buf.len(), events, chunks.into_iter());
    input.counted_to(base + buf.len() as u64, before_span + lines.total);
    format_chunks_with_lines(with, buf, events, notes, &sizes, LinesGiven { before_span, before: &lines.before })
}

/// Hands chunks' formatted text to the sink, in order, and their buffers
/// back to `texts`.
fn write_formatted(text: Vec<Formatted>, sink: &mut dyn Sink, texts: &Texts) -> io::Result<()> {
    text.into_iter().try_for_each(|chunk| {
        let chunk = chunk?;
        let written = sink.write_formatted(&chunk);
        texts.give(chunk);
        written
    })
}

/// An event as the sink is given it.
enum Shown<'h, 'e> {
    Urn(Urn<'h>),
    /// The candidate's first bytes (up to 64), and why it is no URN.
    Rejected(&'h [u8], &'e UrnError),
}

/// Calls `show` with the index and the offset (in `hay`) of each of
/// `events` and what the sink is shown of it, but the URN events whose flag in `kept` is
/// false (no flags: all are kept). `parts`, if not empty, are the parts
/// the scan found of each URN event, in order; without them each URN is
/// parsed again.
///
/// The parts are trusted only while the bytes are there: a mapped file
/// cut short reads as zeros from its new end on, and no URN holds a zero
/// byte, so a URN whose last byte is not zero lies wholly before the cut.
/// (Against a truncation, parsing again checked no more than that: the
/// bytes can change between the check and the write either way.) Callers
/// pass no parts once the file is known to have changed. A file rewritten
/// in place without shrinking cannot be detected; the URNs printed for it
/// are the scan's positions over whatever bytes are there by then, as its
/// results are unspecified anyway (the advice for a changed file is to scan
/// a copy). Measured: printing from the parts took 15 % off a plain
/// `scan -j1` of 8 MB of dense text (59.9 M → 50.5 M instructions).
fn each_shown<'h, 'e>(
    grammar: Grammar,
    hay: &'h [u8],
    events: &'e [Event],
    mut parts: impl Iterator<Item = &'e Parts>,
    mut kept: impl Iterator<Item = &'e bool>,
    mut show: impl FnMut(usize, usize, Shown<'h, 'e>) -> io::Result<()>,
) -> io::Result<()> {
    for (i, event) in events.iter().enumerate() {
        match *event {
            Event::Urn { offset, len } => {
                // Both taken first: they follow every URN event.
                let (part, kept) = (parts.next(), kept.next());
                if kept == Some(&false) {
                    continue;
                }
                let bytes = &hay[offset..offset + len];
                let urn = match part {
                    Some(&p) if usize::from(p.end) == len && bytes.last() != Some(&0) => {
                        Some(Urn::from_parts(bytes, grammar, p))
                    }
                    _ => parse(bytes, grammar).ok(),
                };
                if let Some(urn) = urn {
                    show(i, offset, Shown::Urn(urn))?;
                }
            }
            Event::Rejected { offset, ref error } => {
                let end = hay.len().min(offset + 64);
                show(i, offset, Shown::Rejected(&hay[offset..end], error))?;
            }
        }
    }
    Ok(())
}

/// Scans a large mapped file window by window (each window in parallel
/// chunks), feeding the sink as it goes, as a pipeline: while window *k+1*
/// is scanned, the keys of window *k* enter the table (a task per shard)
/// and the calling thread hands window *k*'s events, or their formatted
/// text, to the sink (which need not be `Send`: `rayon::in_place_scope`
/// runs it here). So neither
/// the insertion tasks nor the printing of every occurrence waits for the
/// scan, or the scan for them. Keys still enter, and events still reach
/// the sink, in input order; a window's pages are given back only once its
/// keys are in and its events out, by a task of the next window's round.
fn scan_large(
    scanner: &Scanner,
    opts: &JobOptions,
    target: Target<'_>,
    whole: &Whole,
    sink: &mut dyn Sink,
    outcome: &mut Outcome,
) -> io::Result<()> {
    let (hay, file) = (whole.as_bytes(), target.file);
    let mut totals = Totals { files: 1, bytes: hay.len() as u64, ..Totals::default() };
    // With line numbers: the newlines before the window being emitted.
    let mut before_window = 0;
    let grammar = scanner.options().grammar;
    let origin = Origin { file: file.index, base: 0, grammar, mapped: whole.is_mapped(), ns_rules: opts.ns_rules };
    let window = |from: usize, len: usize| from..hay.len().min(from.saturating_add(len));
    let mut span = window(0, if opts.early_stop { EARLY_WINDOW } else { LARGE });
    // The chunk tasks count the bytes they scan; the few bytes a window
    // skips at its start (the tail of a URN that began in the window before)
    // are added at the end.
    let mut counted = span.len() as u64;
    let first = window_scanner(scanner, opts, span.len());
    let mut scanned = Some(scan_keyed(&first, opts, hay, span.clone(), origin, target, 0));
    // Pages before `done_before` (the last window's `done`) can go.
    let mut done_before = 0;
    while let Some(Spanned { events, keys, parts, kept, text, lines }) = scanned.take() {
        totals.count(&events, &kept);
        let next_from = resume_point(&events, span.end);
        let window_lines = lines.as_ref().map_or(0, |l| l.total);
        let mut input = Emitting::new(file, opts, lines, before_window);
        before_window += window_lines;
        // Windows shrink when the run keeps something per URN (keys for
        // the table, parts for the output); a run that only counts keeps
        // whole windows, each a pause less in the pipeline.
        let next_len = if opts.keys || opts.events { next_window_len(span.len(), events.len()) } else { WINDOW };
        let next_len = if opts.early_stop { next_len.min(span.len().saturating_mul(4)) } else { next_len };
        let next_span = (next_from < hay.len()).then(|| window(next_from, next_len));
        // Later windows read at most a few bytes before their start, and
        // every event is a candidate start: once this window's keys are in
        // and its events out, the bytes before its last event are done with.
        let done = events.last().map_or(done_before, Event::offset);
        // Without a sink for them the events are dropped now, so that only
        // the next window's are held while it is scanned.
        let events = if opts.events { events } else { Vec::new() };
        let table = &mut outcome.table;
        let mut emitted = Ok(());
        // The windows before it are counted: the next one's lines start
        // after them.
        let scan_next = |span: Range<usize>| {
            let scanner = window_scanner(scanner, opts, span.len());
            scan_keyed(&scanner, opts, hay, span, origin, target, before_window)
        };
        // A run that will likely stop and prints nothing per event (`-l`,
        // `-q`, `-c -m`) asks the sink before it scans on, so that a stop
        // wastes no window scanned meanwhile; one that prints (`-m`) keeps
        // printing beside the scan (`-m` above a file's count: 116 ms
        // without the pipeline against 85 for plain `scan -IN` of (a)).
        let pipelined = !opts.early_stop || opts.events;
        rayon::in_place_scope(|scope| {
            if let (true, Some(next_span)) = (pipelined, next_span.clone()) {
                let next = &mut scanned;
                scope.spawn(move |_| *next = Some(scan_next(next_span)));
            }
            scope.spawn(|_| absorb(table, &keys, hay));
            // The window before's pages, given back by a task of its own:
            // dropping their page-table entries took 36 ms per GiB on one
            // thread between rounds (1 GiB of text at `-j2`), now shared.
            let to = done_before;
            scope.spawn(move |_| whole.release_before(to));
            if let Some(text) = text {
                emitted = write_formatted(text, sink, target.texts);
            } else if opts.events {
                // Once the file has shrunk, its URNs are parsed again.
                let parts = if whole.changed_during_use() { &[][..] } else { &parts[..] };
                emitted = emit(opts, &mut input, hay, 0, &events, Notes { parts, kept: &kept }, sink);
            }
        });
        emitted?;
        let enough = next_span.is_some() && sink.input_progress(file, &totals)?.is_break();
        done_before = done;
        if let Some(next_span) = next_span {
            // Its chunk tasks count its bytes once it is scanned.
            if pipelined || !enough {
                counted += next_span.len() as u64;
            }
            if enough {
                // A next window scanned meanwhile is dropped unseen.
                totals.bytes = span.end as u64;
                break;
            }
            if !pipelined {
                scanned = Some(scan_next(next_span.clone()));
            }
            span = next_span;
        }
    }
    advance(opts, (hay.len() as u64).saturating_sub(counted));
    outcome.totals.add(&totals);
    sink.input_done(file, &totals)?;
    if whole.changed_during_use() {
        outcome.totals.errors += 1;
        sink.input_error(&changed_error(file.name))?;
    }
    Ok(())
}

/// Scans a stream in blocks on the calling thread (each block in parallel
/// chunks), feeding the sink as it goes so memory stays bounded. A read
/// error ends the stream where it happens: what came before is scanned
/// (the URNs before a corrupt part of an archive, but not one cut short
/// by it: see [`Scanner::scan_reader`]), then it is reported.
/// Returns the binary test of the bytes it read (see [`Probe`]).
fn scan_stream(
    scanner: &Scanner,
    opts: &JobOptions,
    target: Target<'_>,
    mut reader: Box<dyn Read + Send>,
    sink: &mut dyn Sink,
    outcome: &mut Outcome,
) -> io::Result<Probe> {
    let file = target.file;
    let mut totals = Totals { files: 1, ..Totals::default() };
    let mut input = Emitting::new(file, opts, None, 0);
    let mut sink_error = None;
    let mut reported = 0u64;
    let mut probe = Probe::default();
    let mut on_block = |buf: &[u8],
                        base: u64,
                        events: &[Event],
                        notes: Notes<'_>,
                        text: Option<Vec<Formatted>>,
                        input: &mut Emitting<'_>| {
        probe.test(buf, base);
        totals.count(events, notes.kept);
        let read = base + buf.len() as u64;
        advance(opts, read - reported);
        reported = read;
        let emitted = match text {
            Some(text) => write_formatted(text, sink, target.texts),
            None if opts.events => emit(opts, input, buf, base, events, notes, sink),
            None => Ok(()),
        };
        // The next block keeps only bytes from before this one's end.
        input.count_to_end(buf, base);
        match emitted.and_then(|()| sink.input_progress(file, &totals)) {
            Ok(flow) => flow.is_continue(),
            Err(e) => {
                sink_error = Some(e);
                false
            }
        }
    };
    // Each chunk's task flags the URNs kept (`kept_flags`) and, when the
    // run only prints, formats them or keeps their parts, as for files (the
    // buffer is our own: its bytes cannot change).
    let nids = opts.nids.as_ref();
    let block = opts.stream_block;
    let grammar = scanner.options().grammar;
    let origin = |base| Origin { file: file.index, base, grammar, mapped: false, ns_rules: opts.ns_rules };
    let result = match target.formatter {
        Some(formatter) if opts.events && !opts.keys && !opts.line_numbers => {
            let per_chunk = |buf: &[u8], base: u64, events: &[Event], parts: &[Parts]| {
                let kept = kept_flags(buf, events, nids);
                let with = Formatting { target, formatter, origin: origin(base) };
                (format_events(with, buf, events, parts, &kept, None), kept)
            };
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, results| {
                let (text, kept): (Vec<_>, Vec<_>) = results.into_iter().unzip();
                on_block(buf, base, events, Notes { parts: &[], kept: &kept }, Some(text), &mut input)
            })
        }
        // With line numbers, each chunk's task also counts the newlines
        // between its events, and the chunks are formatted in a second
        // parallel pass once this thread has joined the counts (as for
        // files: `scan_keyed`).
        Some(formatter) if opts.events && !opts.keys => {
            let per_chunk = |buf: &[u8], _: u64, events: &[Event], parts: &[Parts]| {
                ((parts.to_vec(), kept_flags(buf, events, nids)), newlines_from_first(buf, events))
            };
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, results| {
                let (notes, chunks): (Vec<ChunkNotes>, Vec<_>) = results.into_iter().unzip();
                let with = Formatting { target, formatter, origin: origin(base) };
                let text = format_block_with_lines(with, &mut input, buf, events, &notes, chunks);
                let kept: Vec<_> = notes.into_iter().map(|(_, kept)| kept).collect();
                on_block(buf, base, events, Notes { parts: &[], kept: &kept }, Some(text), &mut input)
            })
        }
        _ if opts.events && !opts.keys => {
            let per_chunk =
                |buf: &[u8], _: u64, events: &[Event], parts: &[Parts]| (parts.to_vec(), kept_flags(buf, events, nids));
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, results| {
                let (parts, kept): (Vec<_>, Vec<_>) = results.into_iter().unzip();
                on_block(buf, base, events, Notes { parts: &parts, kept: &kept }, None, &mut input)
            })
        }
        // Each chunk's task makes its key batch from the shapes its walk
        // found, while the bytes are in cache, as for files (`scan_keyed`);
        // the batches enter the table before the sink hears of the block
        // (so a sink that stops the input keeps the keys of what it saw).
        _ if opts.keys => {
            let per_chunk = |buf: &[u8], base: u64, events: &[Event], shapes: &[KeyShape]| {
                let kept = kept_flags(buf, events, nids);
                (walked_key_batch(buf, events, shapes, origin(base), &kept), kept)
            };
            let table = &mut outcome.table;
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, results| {
                let (batches, kept): (Vec<KeyBatch>, Vec<_>) = results.into_iter().unzip();
                absorb(table, &batches, buf);
                on_block(buf, base, events, Notes { parts: &[], kept: &kept }, None, &mut input)
            })
        }
        _ => {
            let per_chunk = |buf: &[u8], _: u64, events: &[Event], _: &[()]| kept_flags(buf, events, nids);
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, kept| {
                on_block(buf, base, events, Notes { parts: &[], kept: &kept }, None, &mut input)
            })
        }
    };
    if let Some(e) = sink_error {
        return Err(e);
    }
    // A read error ends the stream: what came before it was scanned.
    let (bytes, ended) = match result {
        Ok(bytes) => (bytes, Ok(())),
        Err(error) => (reported, Err(error)),
    };
    advance(opts, bytes.saturating_sub(reported));
    totals.bytes = bytes;
    outcome.totals.add(&totals);
    sink.input_done(file, &totals)?;
    if let Err(error) = ended {
        outcome.totals.errors += 1;
        sink.input_error(&InputError { path: file.name.to_owned(), error })?;
    }
    Ok(probe)
}

/// [`source::is_binary`] of a stream, made on its blocks as they are read
/// rather than on a [`source::peek`] of its first [`source::BINARY_PROBE`]
/// bytes before the scan: the same bytes decide, so the answer is the
/// same, unless the scan stops before they are all read (`-l`, `-q`,
/// `--max-count`), when it is made on those read.
#[derive(Default)]
struct Probe {
    /// Stream bytes tested so far (at most the probe's).
    tested: u64,
    binary: bool,
}

impl Probe {
    /// Tests the bytes of `buf` (stream bytes from `base` on) that fall in
    /// the probe and were not tested yet. Every byte of a stream passes
    /// through a block handed over before it leaves the buffer, so none
    /// is missed.
    fn test(&mut self, buf: &[u8], base: u64) {
        let end = (base + buf.len() as u64).min(source::BINARY_PROBE as u64);
        if self.binary || end <= self.tested {
            return;
        }
        let from = (self.tested.max(base) - base) as usize;
        self.binary = source::is_binary(&buf[from..(end - base) as usize]);
        self.tested = end;
    }
}

/// Adds `bytes` to the progress counter, if there is one.
fn advance(opts: &JobOptions, bytes: u64) {
    if let Some(counter) = &opts.progress {
        counter.fetch_add(bytes, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::key_of_valid;
    use proptest::prelude::*;
    use std::io::Write;

    #[test]
    fn runs_that_only_print_cut_short_windows_into_more_chunks() {
        let scanner = Scanner::new(ExtractOptions::default());
        let chunk = |opts: &JobOptions, threads: usize, len: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| window_scanner(&scanner, opts, len).chunk_size())
        };
        let printing = JobOptions { keys: false, ..JobOptions::default() };
        // A dense window: eight chunks per thread, but none under 128 KiB.
        assert_eq!(chunk(&printing, 2, 12 << 20), 768 << 10);
        assert_eq!(chunk(&printing, 4, 12 << 20), 384 << 10);
        assert_eq!(chunk(&printing, 2, 1_200_000), 128 << 10);
        // Long windows, one thread, keyed runs: the configured size.
        assert_eq!(chunk(&printing, 2, LARGE), DEFAULT_CHUNK_SIZE);
        assert_eq!(chunk(&printing, 2, WINDOW), DEFAULT_CHUNK_SIZE);
        assert_eq!(chunk(&printing, 1, 1_200_000), DEFAULT_CHUNK_SIZE);
        assert_eq!(chunk(&JobOptions::default(), 2, 1_200_000), DEFAULT_CHUNK_SIZE);
        let counting = JobOptions { keys: false, events: false, ..JobOptions::default() };
        assert_eq!(chunk(&counting, 2, 1_200_000), DEFAULT_CHUNK_SIZE);
        // A scanner's smaller size (`--chunk-size`) is kept.
        let small = scanner.with_chunk_size(64 << 10);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        assert_eq!(pool.install(|| window_scanner(&small, &printing, 1_200_000).chunk_size()), 64 << 10);
    }

    #[test]
    fn windows_are_sized_by_the_density_of_the_last() {
        // Text at 200 URNs per MiB keeps whole windows, and a first window
        // of it grows to one.
        assert_eq!(next_window_len(WINDOW, (WINDOW >> 20) * 200), WINDOW);
        assert_eq!(next_window_len(LARGE, (LARGE >> 20) * 200), WINDOW);
        // Twice the events wanted: half the length.
        assert_eq!(next_window_len(WINDOW, 2 * WINDOW_EVENTS), WINDOW / 2);
        // A short window with few events grows back, at most to WINDOW.
        assert_eq!(next_window_len(MIN_WINDOW, WINDOW_EVENTS / 4), 4 * MIN_WINDOW);
        assert_eq!(next_window_len(MIN_WINDOW, 0), WINDOW);
        // A candidate every 5 bytes: never under MIN_WINDOW.
        assert_eq!(next_window_len(WINDOW, WINDOW / 5), MIN_WINDOW);
    }

    /// Overwrites bytes of `hay` (the structure bytes of a URN, zeros as a
    /// truncated mapping reads, non-ASCII) and zero-fills from `cut` on.
    fn damaged(hay: &[u8], writes: &[(prop::sample::Index, u8)], cut: prop::sample::Index) -> Vec<u8> {
        let mut bytes = hay.to_vec();
        for (at, b) in writes {
            let i = at.index(bytes.len());
            bytes[i] = *b;
        }
        let cut = cut.index(bytes.len() + 1);
        bytes[cut..].fill(0);
        bytes
    }

    /// The URNs a sink is handed, as (offset, text); with `formats`, the
    /// sink gives a [`Formatter`] and reads them back from its text.
    #[derive(Default)]
    struct Printed(Vec<(u64, String)>, bool);

    impl Printed {
        fn formatting() -> Printed {
            Printed(Vec::new(), true)
        }
    }

    /// `OFFSET URN` lines.
    struct Lines;

    impl Formatter for Lines {
        fn urn(&self, out: &mut Vec<u8>, _: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
            writeln!(out, "{} {urn}", at.offset)
        }
        fn rejected(&self, _: &mut Vec<u8>, _: FileRef<'_>, _: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
            Ok(())
        }
    }

    impl Sink for Printed {
        fn urn(&mut self, _: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
            self.0.push((at.offset, urn.as_str().to_owned()));
            Ok(())
        }
        fn rejected(&mut self, _: FileRef<'_>, _: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
            Ok(())
        }
        fn input_error(&mut self, _: &InputError) -> io::Result<()> {
            Ok(())
        }
        fn formatter(&self) -> Option<Arc<dyn Formatter>> {
            self.1.then(|| Arc::new(Lines) as Arc<dyn Formatter>)
        }
        fn write_formatted(&mut self, text: &[u8]) -> io::Result<()> {
            for line in std::str::from_utf8(text).unwrap().lines() {
                let (offset, urn) = line.split_once(' ').unwrap();
                self.0.push((offset.parse().unwrap(), urn.to_owned()));
            }
            Ok(())
        }
    }

    /// What a sink sees of a run, in order: `urn NAME OFFSET`, `done NAME
    /// VALID INVALID`, `error PATH`.
    #[derive(Default)]
    struct Seen(Vec<String>);

    impl Sink for Seen {
        fn urn(&mut self, file: FileRef<'_>, at: Location, _: &Urn<'_>) -> io::Result<()> {
            self.0.push(format!("urn {} {}", file.name.rsplit('/').next().unwrap_or_default(), at.offset));
            Ok(())
        }
        fn rejected(&mut self, _: FileRef<'_>, _: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
            Ok(())
        }
        fn input_error(&mut self, error: &InputError) -> io::Result<()> {
            self.0.push(format!("error {}", error.path.rsplit('/').next().unwrap_or_default()));
            Ok(())
        }
        fn input_done(&mut self, file: FileRef<'_>, t: &Totals) -> io::Result<()> {
            let name = file.name.rsplit('/').next().unwrap_or_default();
            self.0.push(format!("done {name} {} {} {}", t.files, t.valid, t.invalid()));
            Ok(())
        }
    }

    /// Each input's own counts reach the sink once, in input order, after
    /// its URNs; a missing input gets an error instead.
    #[test]
    fn each_input_is_done_in_order_with_its_own_counts() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "urn:ab:c and urn:a:b, URN:AB:C\n").unwrap();
        std::fs::write(dir.path().join("b.txt"), "nothing\n").unwrap();
        let paths: Vec<PathBuf> = ["a.txt", "gone.txt", "b.txt"].iter().map(|n| dir.path().join(n)).collect();
        let runs = [(false, false), (true, true), (false, true)]
            .into_iter()
            .flat_map(|ke| [MmapPolicy::Always, MmapPolicy::Never, MmapPolicy::Auto].map(|m| (ke, m)));
        for ((keys, events), mmap) in runs {
            let opts = JobOptions { keys, events, mmap, ..JobOptions::default() };
            let mut seen = Seen::default();
            let outcome = run(&paths, &opts, &mut seen).unwrap();
            let mut want =
                vec!["urn a.txt 0", "urn a.txt 22", "done a.txt 1 2 1", "error gone.txt", "done b.txt 1 0 0"];
            if !events {
                want.retain(|line| !line.starts_with("urn"));
            }
            assert_eq!(seen.0, want, "keys {keys}, events {events}, {mmap:?}");
            assert_eq!((outcome.totals.valid, outcome.totals.errors), (2, 1));
        }
    }

    /// A file larger than a window, scanned at two threads (windows cut
    /// into finer chunks, see `window_scanner`), mapped and read: the text
    /// the sink's formatter made on the scanning threads holds the URNs
    /// the sink is handed one by one, in order.
    #[test]
    fn formatted_windows_hold_the_urns_the_sink_is_handed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        let mut text = Vec::new();
        let lines = LARGE / 24;
        for i in 0..lines {
            // Lines cut by chunk edges anywhere, a rejected candidate, a
            // URN inside a URN, and text without any.
            match i % 4 {
                0 => writeln!(text, "urn:ab:{i}%2c/urn:cd:{i}"),
                1 => writeln!(text, "see urn:a:b and <urn:Ef:{i}?=q>."),
                2 => writeln!(text, "nothing here at all, line {i}"),
                _ => writeln!(text, "URN:ISBN:{i}"),
            }
            .unwrap();
        }
        assert!(text.len() > LARGE + (1 << 20));
        std::fs::write(&path, &text).unwrap();
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let paths = [path];
        for mmap in [MmapPolicy::Always, MmapPolicy::Never] {
            let opts = JobOptions { mmap, keys: false, ..JobOptions::default() };
            let (mut own, mut formatted) = (Printed::default(), Printed::formatting());
            pool.install(|| run(&paths, &opts, &mut own)).unwrap();
            pool.install(|| run(&paths, &opts, &mut formatted)).unwrap();
            // One URN per line but the third of every four (`urn:a:b` has a
            // one-letter NID, RFC 8141 wants two or more).
            assert_eq!(own.0.len(), (0..lines).filter(|i| i % 4 != 2).count(), "{mmap:?}");
            assert_eq!(formatted.0, own.0, "{mmap:?}");
        }
    }

    /// `Sink::input_progress` comes after each window of a large file and
    /// each block of a stream with the counts so far, and an error from it
    /// ends the run there: the file is not scanned to its end.
    #[test]
    fn a_sink_ends_the_run_from_input_progress() {
        /// The valid counts it was shown; it stops at the first above 0.
        #[derive(Default)]
        struct Enough(Vec<u64>, bool);
        impl Sink for Enough {
            fn input_error(&mut self, _: &InputError) -> io::Result<()> {
                Ok(())
            }
            fn input_done(&mut self, _: FileRef<'_>, _: &Totals) -> io::Result<()> {
                self.1 = true;
                Ok(())
            }
            fn input_progress(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<ControlFlow<()>> {
                self.0.push(totals.valid);
                match totals.valid {
                    0 => Ok(ControlFlow::Continue(())),
                    _ => Err(io::Error::other("enough")),
                }
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("big.txt");
        // Three windows' worth of text without a URN, then one, then more.
        let mut text = vec![b'x'; 3 * LARGE];
        text.extend_from_slice(b" urn:ab:c ");
        text.resize(text.len() + 3 * LARGE, b'y');
        std::fs::write(&path, &text).unwrap();
        let paths = [path];
        for (mmap, block) in [(MmapPolicy::Always, DEFAULT_STREAM_BLOCK), (MmapPolicy::Never, 1 << 20)] {
            let opts = JobOptions { mmap, stream_block: block, keys: false, events: false, ..JobOptions::default() };
            let mut sink = Enough::default();
            let error = run(&paths, &opts, &mut sink).err();
            assert_eq!(error.map(|e| e.to_string()), Some("enough".to_owned()), "{mmap:?}");
            // Windows or blocks without the URN, then the one that holds it.
            assert_eq!(sink.0.last(), Some(&1), "{mmap:?}: {:?}", sink.0);
            assert!(sink.0[..sink.0.len() - 1].iter().all(|&n| n == 0), "{mmap:?}: {:?}", sink.0);
            assert!(sink.0.len() >= 2, "{mmap:?}: {:?}", sink.0);
            assert!(!sink.1, "{mmap:?}: input_done after the stop");
            // A sink that never stops sees the whole file.
            let mut all = Located::default();
            assert_eq!(run(&paths, &opts, &mut all).unwrap().totals.valid, 1);
        }
    }

    /// With `early_stop`, a file of a few MiB is scanned in windows from
    /// 256 KiB on, so a sink that has seen enough stops it after the first
    /// (and without, is not asked before its end: it is scanned whole);
    /// the events are those of a run without it.
    #[test]
    fn early_stop_asks_after_a_short_first_window() {
        #[derive(Default)]
        struct FirstOnly(Vec<u64>, usize, Vec<(u64, Option<u64>)>);
        impl Sink for FirstOnly {
            fn urn(&mut self, _: FileRef<'_>, at: Location, _: &Urn<'_>) -> io::Result<()> {
                self.2.push((at.offset, at.line));
                Ok(())
            }
            fn input_error(&mut self, _: &InputError) -> io::Result<()> {
                Ok(())
            }
            fn input_done(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<()> {
                self.0.push(totals.bytes);
                Ok(())
            }
            fn input_progress(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<ControlFlow<()>> {
                self.1 += 1;
                Ok(if totals.valid >= 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("some.txt");
        // A URN every 64 KiB of 3 MiB, on lines of 1 KiB.
        let mut text = Vec::new();
        for i in 0..3 * 1024 {
            let line = if i % 64 == 0 { format!("urn:ex:{i} ") } else { String::new() };
            text.extend_from_slice(line.as_bytes());
            text.resize((i + 1) * 1024 - 1, b'.');
            text.push(b'\n');
        }
        std::fs::write(&path, &text).unwrap();
        let paths = [path];
        let all = {
            let opts = JobOptions { keys: false, line_numbers: true, ..JobOptions::default() };
            let mut sink = FirstOnly::default();
            run(&paths, &opts, &mut sink).unwrap();
            assert_eq!((sink.0, sink.1), (vec![text.len() as u64], 0), "scanned whole, not asked");
            sink.2
        };
        assert_eq!(all.len(), 48);
        for events in [true, false] {
            let progress = Some(Arc::new(AtomicU64::new(0)));
            let opts = JobOptions {
                keys: false,
                events,
                line_numbers: true,
                early_stop: true,
                progress: progress.clone(),
                ..JobOptions::default()
            };
            let mut sink = FirstOnly::default();
            run(&paths, &opts, &mut sink).unwrap();
            // The progress counter ends at the file's size, stopped or not.
            let counted = progress.map(|p| p.load(Ordering::Relaxed));
            assert_eq!(counted, Some(text.len() as u64), "events {events}");
            // 256 KiB hold four URNs: asked once, stopped there (with
            // events, the 1 MiB window scanned meanwhile is dropped unseen).
            assert_eq!((sink.0, sink.1), (vec![EARLY_WINDOW as u64], 1), "events {events}");
            let seen = if events { 4 } else { 0 };
            assert_eq!(sink.2, all[..seen], "events {events}");
        }
    }

    /// Batches copy their URNs where the URNs are under an eighth of the
    /// bytes they span: running text, not a dataset or dense text.
    #[test]
    fn batches_copy_the_urns_of_sparse_text_only() {
        let urn = |offset, len| Event::Urn { offset, len };
        let rejected =
            Event::Rejected { offset: 0, error: UrnError::new(crate::ErrorKind::NidBadChar, 5, Grammar::Rfc8141) };
        // 40-byte URNs 5,000 bytes apart (200 per MiB), a rejected one among them.
        let sparse: Vec<Event> = (0..10).map(|i| urn(i * 5_000, 40)).chain([rejected]).collect();
        assert_eq!(copied_bytes(&sparse), Some(400));
        // One per line of a dataset; dense text, a third of the bytes.
        let dataset: Vec<Event> = (0..10).map(|i| urn(i * 41, 40)).collect();
        let dense: Vec<Event> = (0..10).map(|i| urn(i * 120, 40)).collect();
        assert_eq!((copied_bytes(&dataset), copied_bytes(&dense)), (None, None));
        // Just under and at an eighth: 2 × 40 bytes over 641 and 640.
        assert_eq!(copied_bytes(&[urn(0, 40), urn(601, 40)]), Some(80));
        assert_eq!(copied_bytes(&[urn(0, 40), urn(600, 40)]), None);
        // Nothing to copy.
        assert_eq!((copied_bytes(&[]), copied_bytes(&[rejected])), (None, None));
    }

    /// `ControlFlow::Break` from `Sink::input_progress` ends the input,
    /// not the run: `input_done` follows with the counts so far (the bytes
    /// scanned, the keys of the windows or blocks handed over), and the
    /// next input is scanned whole.
    #[test]
    fn a_sink_skips_the_rest_of_an_input_from_input_progress() {
        /// Each input's (valid, bytes) at its end; it breaks at a URN.
        #[derive(Default)]
        struct FirstOnly(Vec<(u64, u64)>);
        impl Sink for FirstOnly {
            fn input_error(&mut self, _: &InputError) -> io::Result<()> {
                Ok(())
            }
            fn input_done(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<()> {
                self.0.push((totals.valid, totals.bytes));
                Ok(())
            }
            fn input_progress(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<ControlFlow<()>> {
                Ok(if totals.valid > 0 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let (big, small) = (dir.path().join("big.txt"), dir.path().join("small.txt"));
        // A URN after two windows' worth of text, another three windows on.
        let mut text = vec![b'x'; 2 * LARGE];
        text.extend_from_slice(b" urn:ab:c ");
        text.resize(text.len() + 3 * LARGE, b'y');
        text.extend_from_slice(b" urn:ab:d\n");
        std::fs::write(&big, &text).unwrap();
        std::fs::write(&small, "urn:ab:e urn:ab:f\n").unwrap();
        let paths = [big, small];
        for (mmap, block) in [(MmapPolicy::Always, DEFAULT_STREAM_BLOCK), (MmapPolicy::Never, 1 << 20)] {
            let opts = JobOptions { mmap, stream_block: block, ..JobOptions::default() };
            let mut sink = FirstOnly::default();
            let outcome = run(&paths, &opts, &mut sink).unwrap();
            let [(big_valid, big_bytes), small_done] = sink.0[..] else { panic!("{mmap:?}: {:?}", sink.0) };
            assert_eq!(big_valid, 1, "{mmap:?}");
            // Stopped after the part that holds the first URN, well before the second.
            assert!(big_bytes > 2 * LARGE as u64 && big_bytes < 4 * LARGE as u64, "{mmap:?}: {big_bytes}");
            assert_eq!(small_done, (2, 18), "{mmap:?}");
            assert_eq!(outcome.totals.valid, 3, "{mmap:?}");
            let keys: std::collections::BTreeSet<Vec<u8>> = outcome.table.iter().map(|e| e.key.to_vec()).collect();
            let expected: Vec<&[u8]> = vec![b"urn:ab:c", b"urn:ab:e", b"urn:ab:f"];
            assert!(keys.iter().eq(expected), "{mmap:?}: {keys:?}");
        }
    }

    /// A sink that gives a formatter but cannot take its text fails the
    /// run with the default `write_formatted`'s error, instead of losing
    /// the text.
    #[test]
    fn formatted_text_is_never_dropped_silently() {
        struct Half;
        impl Sink for Half {
            fn urn(&mut self, _: FileRef<'_>, _: Location, _: &Urn<'_>) -> io::Result<()> {
                Ok(())
            }
            fn rejected(&mut self, _: FileRef<'_>, _: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
                Ok(())
            }
            fn input_error(&mut self, _: &InputError) -> io::Result<()> {
                Ok(())
            }
            fn formatter(&self) -> Option<Arc<dyn Formatter>> {
                Some(Arc::new(Lines))
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.txt");
        std::fs::write(&path, "urn:ab:c\n").unwrap();
        let opts = JobOptions { keys: false, ..JobOptions::default() };
        let error = run(&[path], &opts, &mut Half).err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::Unsupported);
    }

    fn printed(scanner: &Scanner, hay: &[u8], events: &[Event], parts: &[Vec<Parts>]) -> Vec<(u64, String)> {
        let mut sink = Printed::default();
        let opts = JobOptions { extract: scanner.options(), ..JobOptions::default() };
        let mut input = Emitting::new(FileRef { index: 0, name: "f" }, &opts, None, 0);
        emit(&opts, &mut input, hay, 0, events, Notes { parts, kept: &[] }, &mut sink).unwrap();
        sink.0
    }

    /// Where each event is: (offset, line), URNs and rejected candidates
    /// alike; `Located::formatting()` gives a formatter that writes them
    /// as text (`offset line` or `offset -`) and reads its text back.
    #[derive(Default)]
    struct Located(Vec<(u64, Option<u64>)>, bool);

    impl Located {
        fn formatting() -> Located {
            Located(Vec::new(), true)
        }
    }

    /// `OFFSET LINE` lines, `-` for no line.
    struct LocationLines;

    impl LocationLines {
        fn write(out: &mut Vec<u8>, at: Location) -> io::Result<()> {
            match at.line {
                Some(line) => writeln!(out, "{} {line}", at.offset),
                None => writeln!(out, "{} -", at.offset),
            }
        }
    }

    impl Formatter for LocationLines {
        fn urn(&self, out: &mut Vec<u8>, _: FileRef<'_>, at: Location, _: &Urn<'_>) -> io::Result<()> {
            LocationLines::write(out, at)
        }
        fn rejected(&self, out: &mut Vec<u8>, _: FileRef<'_>, at: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
            LocationLines::write(out, at)
        }
    }

    impl Sink for Located {
        fn urn(&mut self, _: FileRef<'_>, at: Location, _: &Urn<'_>) -> io::Result<()> {
            self.0.push((at.offset, at.line));
            Ok(())
        }
        fn rejected(&mut self, _: FileRef<'_>, at: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
            self.0.push((at.offset, at.line));
            Ok(())
        }
        fn input_error(&mut self, _: &InputError) -> io::Result<()> {
            Ok(())
        }
        fn formatter(&self) -> Option<Arc<dyn Formatter>> {
            self.1.then(|| Arc::new(LocationLines) as Arc<dyn Formatter>)
        }
        fn write_formatted(&mut self, text: &[u8]) -> io::Result<()> {
            for line in std::str::from_utf8(text).unwrap().lines() {
                let (offset, line) = line.split_once(' ').unwrap();
                self.0.push((offset.parse().unwrap(), line.parse().ok()));
            }
            Ok(())
        }
    }

    /// A stream's next block starts before the end of the one before: the
    /// count goes back as well as forward.
    #[test]
    fn line_count_moves_both_ways() {
        let hay = b"a\nb\n\nc\nd";
        let mut count = LineCount::default();
        assert_eq!(count.move_to(hay, 0, 5), 3);
        assert_eq!(count.move_to(hay, 0, 2), 1);
        assert_eq!(count.move_to(&hay[2..], 2, 8), 4);
        assert_eq!(count.move_to(&hay[2..], 2, 2), 1);
    }

    /// Both ways of [`newlines_from_first`] give the counts of the bytes
    /// themselves: URNs one per line (close together), and far apart with
    /// many lines between them.
    #[test]
    fn newlines_from_first_counts_close_and_far_events_alike() {
        for gap in ["\n", "\r\n\n", &"some text\n".repeat(100)] {
            let hay: Vec<u8> = (0..50).flat_map(|i| format!("urn:ab:{i}{gap}").into_bytes()).collect();
            let (events, _) =
                Scanner::new(ExtractOptions::default()).scan_span_noted(&hay, 0, hay.len(), None, |_, _: &[()]| ());
            assert_eq!(events.len(), 50);
            let first = events[0].offset();
            let want: Vec<u64> =
                events.iter().map(|e| hay[first..e.offset()].iter().filter(|&&b| b == b'\n').count() as u64).collect();
            assert_eq!(newlines_from_first(&hay, &events), want, "{gap:?}");
            assert_eq!(newlines_from_first(&hay, &events[7..9]), [0, want[8] - want[7]]);
        }
        assert_eq!(newlines_from_first(b"", &[]), Vec::<u64>::new());
    }

    fn byte() -> impl Strategy<Value = u8> {
        prop::sample::select(b":%?#+=/aF2 \0\xe9".to_vec())
    }

    proptest! {
        /// A stream's binary test made block by block, as its blocks come
        /// (any sizes, each keeping a few bytes of the one before, as a
        /// stream's do), is the test of its first 8 KiB.
        #[test]
        fn a_stream_tested_block_by_block_is_binary_as_its_head_is(
            len in 0usize..12_000,
            nul in prop::option::of(0usize..12_000),
            ends in prop::collection::vec((0usize..12_000, 0usize..4), 0..12),
        ) {
            let mut text: Vec<u8> = b"urn:ab:c ".iter().copied().cycle().take(len).collect();
            if let Some(at) = nul.filter(|&at| at < len) {
                text[at] = 0;
            }
            let mut ends: Vec<(usize, usize)> = ends.into_iter().filter(|&(end, _)| end < len).collect();
            ends.sort_unstable();
            ends.push((len, 0));
            let (mut probe, mut last_end) = (Probe::default(), 0usize);
            for (end, kept) in ends {
                let base = last_end.saturating_sub(kept);
                probe.test(&text[base..end], base as u64);
                last_end = end;
            }
            prop_assert_eq!(probe.binary, source::is_binary(&text));
        }

        /// The output from the parts the scan kept is the output of parsing
        /// every URN again, also when the file was cut short after the scan
        /// (a truncated mapping reads zeros from its new end on): exactly
        /// the URNs that end before the cut.
        #[test]
        fn printing_from_parts_equals_parsing_again(
            urns in prop::collection::vec("(urn|URN):[a-bA-B]{2,3}:[a-b%2cF]{1,10}(\\?\\+r|\\?=q|#f)?", 1..16),
            seps in prop::collection::vec(prop::sample::select(vec![" ", "\n", "<x>", "\"", "%", "urn:"]), 16),
            chunk in 1usize..40,
            cut in any::<prop::sample::Index>(),
        ) {
            let hay: Vec<u8> = urns.iter().zip(&seps).flat_map(|(u, s)| [u.as_bytes(), s.as_bytes()].concat()).collect();
            let scanner = Scanner::new(ExtractOptions::default()).with_chunk_size(chunk);
            let (events, parts) = scanner.scan_span_noted(&hay, 0, hay.len(), None, |_, p: &[Parts]| p.to_vec());
            let whole = printed(&scanner, &hay, &events, &parts);
            prop_assert_eq!(&whole, &printed(&scanner, &hay, &events, &[]));
            let cut_short = damaged(&hay, &[], cut);
            let end = cut_short.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            let survivors: Vec<(u64, String)> =
                whole.iter().filter(|(at, urn)| *at as usize + urn.len() <= end).cloned().collect();
            prop_assert_eq!(&printed(&scanner, &cut_short, &events, &parts), &survivors);
            prop_assert_eq!(&printed(&scanner, &cut_short, &events, &[]), &survivors);
        }

        /// A shared mapping rewritten under the run: the key shapes the scan
        /// took from the original bytes are applied to other bytes, and the
        /// batches go into the table against yet others. Nothing panics, and
        /// every entry kept still is its raw form's key in the final bytes.
        #[test]
        fn shapes_applied_to_changed_bytes_keep_only_consistent_keys(
            urns in prop::collection::vec("(urn|URN|Urn):[a-bA-B]{2,3}:[a-b%2cF]{1,10}(\\?\\+r|\\?=q|#f)?", 1..16),
            chunk in 1usize..40,
            during in prop::collection::vec((any::<prop::sample::Index>(), byte()), 0..8),
            after in prop::collection::vec((any::<prop::sample::Index>(), byte()), 0..8),
            cut in any::<prop::sample::Index>(),
        ) {
            let hay = urns.join(" ").into_bytes();
            let grammar = Grammar::Rfc8141;
            let scanner = Scanner::new(ExtractOptions::default()).with_chunk_size(chunk);
            let (_, chunks) = scanner.scan_span_noted(&hay, 0, hay.len(), None, |e, s: &[KeyShape]| (e.to_vec(), s.to_vec()));
            let origin = Origin { file: 0, base: 0, grammar, mapped: true, ns_rules: false };
            let during = damaged(&hay, &during, cut);
            let batches: Vec<KeyBatch> =
                chunks.iter().map(|(events, shapes)| walked_key_batch(&during, events, shapes, origin, &[])).collect();
            let after = damaged(&during, &after, cut);
            let mut table = ShardedTable::new();
            absorb(&mut table, &batches, &after);
            for entry in table.iter() {
                let raw = entry.raw.to_vec();
                let at = entry.first.offset as usize;
                prop_assert_eq!(&after[at..at + raw.len()], &raw[..]);
                prop_assert!(raw.iter().all(u8::is_ascii_graphic));
                let key = key_of_valid(&raw, grammar);
                prop_assert_eq!(key.as_deref(), Some(entry.key));
            }
        }

        /// With line numbers, every event's line is one more than the
        /// newlines before its offset, for a file mapped or read whole and
        /// a stream in blocks as short as 1 byte (whose next block starts
        /// before the last one's end), whether the run keeps keys or not,
        /// and whether the sink formats the events (whole files, chunk by
        /// chunk, once every chunk's lines are counted) or is handed them;
        /// the events are those of the run without line numbers.
        #[test]
        fn line_numbers_count_the_newlines_before_each_event(
            urns in prop::collection::vec("(urn|URN):(ab|a|cd):[a-b%2cF]{1,6}", 1..24),
            seps in prop::collection::vec(prop::sample::select(vec![" ", "\n", "\r\n", "\n\n", "urn:\n", "\nurn:x", "", "long", "long"]), 24),
            chunk in 1usize..48,
            block in 1usize..64,
            keys: bool,
        ) {
            // A stream's blocks hold 8 KiB beyond the bytes they scan (the
            // longest URN): several blocks need some 4 KiB separators.
            let long = "a line\n\nof text\r\n".repeat(200);
            let sep = |s: &str| if s == "long" { long.clone() } else { s.to_owned() };
            let hay: String = urns.iter().zip(&seps).map(|(u, s)| format!("{u}{}", sep(s))).collect();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.txt");
            std::fs::write(&path, &hay).unwrap();
            let paths = [path];
            for mmap in [MmapPolicy::Always, MmapPolicy::Never] {
                let plain = JobOptions { mmap, chunk_size: chunk, stream_block: block, keys, ..JobOptions::default() };
                // (Keys on: a run that keeps none would use the formatter.)
                let mut without = Located::default();
                run(&paths, &JobOptions { keys: true, ..plain.clone() }, &mut without).unwrap();
                let opts = JobOptions { line_numbers: true, ..plain };
                let (mut whole, mut streamed) = (Located::default(), Located::default());
                run(&paths, &opts, &mut whole).unwrap();
                let mut formatted = Located::formatting();
                run(&paths, &opts, &mut formatted).unwrap();
                let scanner = Scanner::new(opts.extract).with_chunk_size(chunk);
                let reader = Box::new(io::Cursor::new(hay.clone().into_bytes()));
                let target = Target { file: FileRef { index: 0, name: "-" }, formatter: None, texts: &Texts::default() };
                scan_stream(&scanner, &opts, target, reader, &mut streamed, &mut Outcome::default()).unwrap();
                // And streamed with the formatter: on the scanning threads.
                let mut streamed_formatted = Located::formatting();
                let reader = Box::new(io::Cursor::new(hay.clone().into_bytes()));
                let formatter = LocationLines;
                let target = Target { formatter: Some(&formatter), ..target };
                scan_stream(&scanner, &opts, target, reader, &mut streamed_formatted, &mut Outcome::default()).unwrap();
                let want: Vec<(u64, Option<u64>)> = without.0.iter().map(|&(offset, line)| {
                    assert_eq!(line, None);
                    (offset, Some(1 + hay.as_bytes()[..offset as usize].iter().filter(|&&b| b == b'\n').count() as u64))
                }).collect();
                prop_assert_eq!(&whole.0, &want, "{:?}", mmap);
                prop_assert_eq!(&formatted.0, &want, "formatted, {:?}", mmap);
                prop_assert_eq!(&streamed.0, &want, "streamed, {:?}", mmap);
                prop_assert_eq!(&streamed_formatted.0, &want, "streamed and formatted, {:?}", mmap);
            }
        }

        /// `--nid`: a run with a filter hands the sink, counts and keys
        /// exactly the URNs of the unfiltered run whose NID is one of the
        /// filter's (compared in any case), for whole files, mapped or read,
        /// and for streamed blocks. URNs of other NIDs still end where they
        /// end: `urn:cd:x/urn:ab:y` is one URN of NID `cd`, and nothing of
        /// it is kept.
        #[test]
        fn a_nid_filter_keeps_exactly_the_urns_of_its_nids(
            urns in prop::collection::vec("(urn|URN):(ab|AB|aB|cd|abc|a-b|b):[a-b%2cF]{1,6}", 1..24),
            seps in prop::collection::vec(prop::sample::select(vec![" ", "/", "\n", "<x>", "urn:", "."]), 24),
            chunk in 1usize..48,
            block in 8usize..96,
        ) {
            let hay: String = urns.iter().zip(&seps).map(|(u, s)| format!("{u}{s}")).collect();
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("t.txt");
            std::fs::write(&path, &hay).unwrap();
            let paths = [path];
            let filter = NidFilter::new(["AB", "a-b"], Grammar::Rfc8141).unwrap();
            // A file mapped, read whole, and streamed in blocks of `block` bytes.
            let job = |opts: &JobOptions, streamed: bool, sink: &mut Printed| {
                if !streamed {
                    return run(&paths, opts, sink).unwrap();
                }
                let scanner = Scanner::new(opts.extract).with_chunk_size(opts.chunk_size).with_finder(opts.finder);
                let mut outcome = Outcome::default();
                let reader = Box::new(io::Cursor::new(hay.clone().into_bytes()));
                let formatter = sink.formatter().filter(|_| opts.events && !opts.keys);
                let texts = Texts::default();
                let file = FileRef { index: 0, name: "-" };
                let target = Target { file, formatter: formatter.as_deref(), texts: &texts };
                scan_stream(&scanner, opts, target, reader, sink, &mut outcome).unwrap();
                outcome
            };
            for (mmap, streamed) in [(MmapPolicy::Always, false), (MmapPolicy::Never, false), (MmapPolicy::Never, true)] {
                let opts = JobOptions { mmap, chunk_size: chunk, stream_block: block, ..JobOptions::default() };
                let mut all = Printed::default();
                let unfiltered = job(&opts, streamed, &mut all);
                // A run that only prints formats the URNs it keeps, as the
                // sink would print them, on the threads that scanned them.
                let printing = JobOptions { nids: Some(filter.clone()), keys: false, ..opts.clone() };
                let (mut own, mut formatted) = (Printed::default(), Printed::formatting());
                job(&printing, streamed, &mut own);
                job(&printing, streamed, &mut formatted);
                prop_assert_eq!(&formatted.0, &own.0, "{:?}, streamed {}", mmap, streamed);
                let nid = |urn: &str| urn[4..].split(':').next().unwrap().to_ascii_lowercase();
                let want: Vec<(u64, String)> =
                    all.0.iter().filter(|(_, urn)| ["ab", "a-b"].contains(&nid(urn).as_str())).cloned().collect();
                let want_keys: std::collections::BTreeSet<Vec<u8>> =
                    want.iter().map(|(_, urn)| crate::parse(urn.as_bytes(), Grammar::Rfc8141).unwrap().key().as_bytes().to_vec()).collect();

                let opts = JobOptions { nids: Some(filter.clone()), ..opts };
                let mut kept = Printed::default();
                let filtered = job(&opts, streamed, &mut kept);
                prop_assert_eq!(&kept.0, &want, "{:?}, streamed {}", mmap, streamed);
                let t = &filtered.totals;
                prop_assert_eq!(t.valid, want.len() as u64);
                prop_assert_eq!(t.valid + t.excluded, unfiltered.totals.valid);
                prop_assert_eq!(t.candidates, unfiltered.totals.candidates);
                prop_assert_eq!(t.invalid(), unfiltered.totals.invalid());
                let keys: std::collections::BTreeSet<Vec<u8>> = filtered.table.iter().map(|e| e.key.to_vec()).collect();
                prop_assert_eq!(keys, want_keys);
                let counted: u64 = filtered.table.iter().map(|e| e.count).sum();
                prop_assert_eq!(counted, want.len() as u64);
            }
        }
    }
}
