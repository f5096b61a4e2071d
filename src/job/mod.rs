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
//! Compressed inputs (with [`JobOptions::decompress`]) cannot be split
//! either, and decoding is slower than scanning, so it must not run one
//! archive after the other on the calling thread. Inside the parallel batch
//! each archive is decoded up to [`INLINE_LIMIT`] bytes: one that ends
//! there is scanned in the batch like a small file; the rest of a larger
//! one is decoded ahead on a thread of its own with a bounded queue
//! ([`crate::decompress::read_ahead`]) while the calling thread consumes
//! the inputs before it. Memory per archive in flight is bounded by
//! [`INLINE_LIMIT`] plus the read-ahead queue, whatever its size; output
//! stays in input order. UTF-16 text (not compressed) is transcoded the
//! same way up to [`INLINE_LIMIT`], and the rest of a larger file on the
//! thread that scans it: transcoding is fast enough that the read-ahead
//! queue's copies cost more than it saves (see `decoded_input`).
//!
//! With [`JobOptions::nids`], the URNs of other namespaces are dropped
//! after the scan: the task that scanned a chunk notes which of its URNs
//! are kept (a flag per URN event, beside the key batch or the parts), and
//! counting ([`Totals::excluded`] instead of [`Totals::valid`]), the key
//! batches and the output read the flags. The scan itself is the same, so a
//! URN of another namespace still ends where it ends and hides what its
//! bytes contain.
//!
//! Binary inputs ([`source::is_binary`]) are counted, and skipped when
//! [`JobOptions::binary`] says so; so are inputs that start with a gzip or
//! zstd magic but are read as they are, without [`JobOptions::decompress`]
//! ([`Totals::compressed`]: most likely `-z` forgotten, and a run that
//! finds nothing in them should say why), and binary inputs that look like
//! UTF-16 text without a byte-order mark ([`Totals::utf16_unmarked`]:
//! `--encoding` wanted). Stdin, pipes and devices are only read when their
//! turn comes (see `process`).
//!
//! # Files
//!
//! | file | what it does |
//! |---|---|
//! | `job/mod.rs` | the run: inputs opened and sorted by kind (small file, large file, stream, pipe, archive), results consumed in input order ([`run`]) |
//! | `job/span.rs` | one span of a buffer scanned in parallel chunks, with each chunk's work done by its task |
//! | `job/keys.rs` | key batches made per chunk, and their entry into the [`ShardedTable`] ([`key_batch`], [`absorb`]) |
//! | `job/emit.rs` | events handed to the [`Sink`] or formatted by the chunk tasks for it |
//! | `job/line_numbers.rs` | line numbers (`scan -n`) counted per chunk and joined |
//! | `job/large.rs` | a large file scanned window by window as a pipeline |
//! | `job/stream.rs` | a stream scanned block by block, tested for binary bytes as it comes |

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rayon::prelude::*;

use crate::decompress;
use crate::dedup::{KeyBatch, ShardedTable};
use crate::error::{ErrorKind, UrnError};
use crate::extract::ExtractOptions;
use crate::nid::NidFilter;
use crate::platform::simd::UrnFinder;
use crate::scan::{Event, Scanner, DEFAULT_CHUNK_SIZE, DEFAULT_STREAM_BLOCK};
use crate::source::{self, BinaryPolicy, Contents, Input, InputError, MmapPolicy, Opened, WalkOptions, Whole};
use crate::transcode::{Encoding, Utf16};
use crate::urn::{Parts, Urn};

mod emit;
mod keys;
mod large;
mod line_numbers;
mod span;
mod stream;
#[cfg(test)]
mod tests;

use emit::{emit, write_formatted, Formatted, Notes};
pub use keys::{absorb, add_keys, fill_batches, key_batch, scan_windows_keyed, Origin};
use large::{scan_large, EARLY_WINDOW, LARGE};
use line_numbers::{Emitting, SpanLines};
use span::{scan_keyed, Spanned};
use stream::scan_stream;

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
    /// ([`crate::nid::rules::apply_ns_rules`]: UUIDs and IETF sub-namespaces in
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
    /// nothing at all when `None`. A decoded input (an archive, UTF-16
    /// text) adds its own bytes as its decoder reads them
    /// ([`source::decoded_counting`]), not the decoded ones, and a skipped
    /// binary file its size: the count ends at the inputs' size on disk.
    pub progress: Option<Arc<AtomicU64>>,
    /// Decode gzip and zstd inputs (recognised by their first bytes).
    pub decompress: bool,
    /// How the bytes (decoded ones with `decompress`) are taken as text:
    /// by default, inputs that start with a UTF-16 byte-order mark are
    /// transcoded to UTF-8 ([`crate::transcode`]).
    pub encoding: Encoding,
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
            encoding: Encoding::Auto,
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
    /// Inputs that start with a gzip or zstd magic
    /// ([`decompress::Codec::sniff`]) and were not decompressed, for want
    /// of [`JobOptions::decompress`] (scanned as they are, or skipped as
    /// binary).
    pub compressed: u64,
    /// Binary inputs that look like UTF-16 text without a byte-order mark
    /// ([`Utf16::guess`]) and were read as their bytes under
    /// [`Encoding::Auto`], where `urn:` is not found (scanned as they are,
    /// or skipped as binary).
    pub utf16_unmarked: u64,
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
        self.compressed += other.compressed;
        self.utf16_unmarked += other.utf16_unmarked;
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

/// Why an input read as its bytes most likely wanted another reading.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misread {
    /// It starts with a gzip or zstd magic and was not decompressed (no
    /// [`JobOptions::decompress`]).
    Compressed,
    /// It is binary and looks like UTF-16 text in this byte order without
    /// a byte-order mark ([`Utf16::guess`]), under [`Encoding::Auto`].
    Utf16(Utf16),
}

/// An input as the sink sees it.
#[derive(Clone, Copy, Debug)]
pub struct FileRef<'a> {
    /// Position in input order.
    pub index: u32,
    /// The path as given or found (`-` for stdin), as UTF-8 text: a byte
    /// that is not UTF-8 is U+FFFD here, which names no file. For output
    /// that must be text (JSON, CSV) and for messages.
    pub name: &'a str,
    /// The path itself, whatever its bytes (`None` for stdin).
    pub path: Option<&'a Path>,
}

impl<'a> FileRef<'a> {
    /// The input's name as bytes to print where any bytes may go (text
    /// records, `-l -0` for `xargs -0`), as grep and ripgrep print paths:
    /// on Unix the path's own bytes, so that what is printed names the
    /// file; elsewhere, and for stdin, [`FileRef::name`]. No copy: output
    /// prints it once per record.
    pub fn name_bytes(&self) -> &'a [u8] {
        self.path.and_then(source::raw_path_bytes).unwrap_or(self.name.as_bytes())
    }
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
    /// its text up to where it ends, at most its first 64 bytes (see
    /// [`candidate_text`](crate::extract::candidate_text): `urn:ab:/a` of
    /// `urn:ab:/a urn:ab:c`, never the text after it), and `error`'s
    /// offset counts from its start. That offset lies within `candidate` or
    /// at its end, but for a candidate longer than 64 bytes, where it may
    /// lie past the bytes given. The default does nothing.
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
    /// `file` is read as its bytes although its first bytes ask for
    /// another reading ([`Misread`]): once per input that
    /// [`Totals::compressed`] or [`Totals::utf16_unmarked`] counts, before
    /// its events (a pipe's, after them: it is known from its first
    /// block). A sink can name these inputs to its user. The default does
    /// nothing.
    fn input_misread(&mut self, file: FileRef<'_>, misread: Misread) -> io::Result<()> {
        let _ = (file, misread);
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
    /// The counter the scan adds this input's bytes to: the run's
    /// ([`JobOptions::progress`]) for an input read as it is, none for a
    /// decoded one, whose own bytes are counted as they are read
    /// ([`source::decoded_counting`]), not its decoded ones as scanned.
    progress: Option<&'a AtomicU64>,
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
#[derive(Debug, Default)]
pub struct Outcome {
    /// Counts.
    pub totals: Totals,
    /// Distinct keys (empty unless [`JobOptions::keys`]).
    pub table: ShardedTable,
    /// Input names by index ([`Position::file`](crate::Position::file)), `-` for stdin
    /// (as [`FileRef::name`]: UTF-8, lossy).
    pub inputs: Vec<String>,
    /// Input paths by index, whatever their bytes (as [`FileRef::path`]):
    /// `None` for stdin and for a path that could not be listed (not
    /// found, or a walk error: its [`InputError`] names it).
    pub paths: Vec<Option<PathBuf>>,
}

/// Runs over `paths` (none or `-` is stdin), feeding `sink` in input order.
/// An empty slice reads stdin until it ends, as the command line does
/// without paths: a caller whose own filter left no path should not call
/// it (or use [`run_inputs`] with an empty list, which reads nothing).
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
    run_inputs(&source::expand(paths, &opts.walk), opts, sink)
}

/// As [`run`], over inputs already expanded ([`source::expand`]), which
/// may be none: a caller whose list of paths came out empty (`find` found
/// nothing) runs over no input where `run` would read stdin.
pub fn run_inputs(inputs: &[Result<Input, InputError>], opts: &JobOptions, sink: &mut dyn Sink) -> io::Result<Outcome> {
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
        progress: opts.progress.as_deref(),
    };
    let batch_len = rayon::current_num_threads() * 4;
    for (b, batch) in inputs.chunks(batch_len).enumerate() {
        let base = b * batch_len;
        let target = |i: usize| Target {
            file: FileRef { index: (base + i) as u32, name: &names[base + i], path: input_path(&batch[i]) },
            formatter: formatter.as_deref(),
            texts: &texts,
            progress: opts.progress.as_deref(),
        };
        let results: Vec<Processed> =
            batch.par_iter().enumerate().map(|(i, input)| process(&scanner, opts, target(i), input)).collect();
        for ((i, input), result) in batch.iter().enumerate().zip(results) {
            consumer.consume((base + i) as u32, input, result)?;
        }
        consumer.absorb_pending();
    }
    let paths = inputs.iter().map(|input| input_path(input).map(Path::to_path_buf)).collect();
    Ok(Outcome { inputs: names, paths, ..consumer.outcome })
}

/// The path of an input that has one (see [`FileRef::path`]).
fn input_path(input: &Result<Input, InputError>) -> Option<&Path> {
    input.as_ref().ok().and_then(Input::path)
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
    /// An input read as its bytes although its first bytes ask for
    /// another reading (then what was done with it).
    Misread(Misread, Box<Processed>),
    /// Not scanned (a binary input under `--binary skip`).
    Skipped,
    /// A decoded input (then what was done with it), whose bytes were
    /// counted for progress as they were read: its scan counts none.
    Decoded(Box<Processed>),
    /// What could be decoded before an error, then the error.
    Partial(Box<Processed>, InputError),
}

/// Decoded bytes of a compressed input read in its parallel batch: an
/// archive that decodes to less is scanned whole there; a larger one goes
/// on as a stream decoded ahead on its own thread.
pub const INLINE_LIMIT: usize = 4 << 20;

struct Scanned {
    /// Kept while events or keys refer to it.
    whole: Option<Whole>,
    events: Vec<Event>,
    keys: Vec<KeyBatch>,
    /// Per chunk, the parts of its URN events (see [`emit()`]).
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

/// Decodes (with -z), transcodes UTF-16, looks at the first bytes, and
/// scans small inputs whole.
fn opened(scanner: &Scanner, opts: &JobOptions, target: Target<'_>, input: &Input, contents: Contents) -> Processed {
    match source::decoded_counting(contents, opts.decompress, opts.encoding, opts.progress.as_ref()) {
        Err(error) => Processed::Failed(InputError { path: input.display(), error }),
        Ok(opened) if opened.is_decoded() => {
            let target = Target { progress: None, ..target };
            Processed::Decoded(Box::new(by_contents(scanner, opts, target, input, opened)))
        }
        Ok(opened) => by_contents(scanner, opts, target, input, opened),
    }
}

/// An opened input, decoded or not, by what its contents are.
fn by_contents(scanner: &Scanner, opts: &JobOptions, target: Target<'_>, input: &Input, opened: Opened) -> Processed {
    let decoded = opened.is_decoded();
    match (opened.contents, opened.codec) {
        (Contents::Whole(whole), codec) => {
            let archive = codec.is_none() && decompress::Codec::sniff(whole.as_bytes()).is_some();
            misread_if(compressed(archive), whole_input(scanner, opts, target, whole))
        }
        // A transcoded pipe is still read live.
        (Contents::Pipe(pipe), None) if opts.binary == BinaryPolicy::Scan => {
            Processed::Live(pipe.live(source::LIVE_DELAY))
        }
        (Contents::Pipe(pipe), None) => stream_input(opts, target, input, pipe.into_reader()),
        (Contents::Stream(reader), codec) if decoded => decoded_input(scanner, opts, target, input, reader, codec),
        (Contents::Stream(reader), _) => stream_input(opts, target, input, reader),
        (Contents::Pipe(pipe), codec @ Some(_)) => {
            decoded_input(scanner, opts, target, input, pipe.into_reader(), codec)
        }
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

/// Marks `processed` as read as its bytes although `misread` says it
/// wanted another reading, when it does.
fn misread_if(misread: Option<Misread>, processed: Processed) -> Processed {
    match misread {
        Some(misread) => Processed::Misread(misread, Box::new(processed)),
        None => processed,
    }
}

/// What the first bytes `head` of an input read as its bytes say: whether
/// it is binary, and whether it looks like UTF-16 text without a mark
/// ([`Encoding::unmarked`]).
fn sniff(opts: &JobOptions, head: &[u8]) -> (bool, Option<Misread>) {
    let binary = source::is_binary(head);
    let utf16 = if binary { opts.encoding.unmarked(head) } else { None };
    (binary, utf16.map(Misread::Utf16))
}

/// A compressed input read as its bytes, when `compressed`.
fn compressed(compressed: bool) -> Option<Misread> {
    compressed.then_some(Misread::Compressed)
}

fn skips(opts: &JobOptions, binary: bool) -> bool {
    binary && opts.binary == BinaryPolicy::Skip
}

fn whole_input(scanner: &Scanner, opts: &JobOptions, target: Target<'_>, whole: Whole) -> Processed {
    let (binary, misread) = sniff(opts, whole.as_bytes());
    let processed = if skips(opts, binary) {
        // Gone through, as far as progress goes.
        advance(target, whole.as_bytes().len() as u64);
        Processed::Skipped
    } else if whole.as_bytes().len() > if opts.early_stop { EARLY_WINDOW } else { LARGE } {
        Processed::Large(whole)
    } else {
        Processed::Scanned(Box::new(scan_whole(scanner, opts, target, whole)))
    };
    misread_if(misread, binary_if(binary, processed))
}

/// A stream read as it is, whose first bytes say whether it is binary or
/// compressed. (A pipe is read [live](source::Live) and tested as its
/// first bytes come, unless binary inputs are skipped: see
/// [`Processed::Live`].)
fn stream_input(opts: &JobOptions, target: Target<'_>, input: &Input, reader: Box<dyn Read + Send>) -> Processed {
    let peeked = source::peek(reader, source::BINARY_PROBE);
    let (binary, misread) = sniff(opts, &peeked.head);
    let archive = decompress::Codec::sniff(&peeked.head).is_some();
    let rest = if skips(opts, binary) {
        // Gone through, as far as progress goes: a file streamed (one not
        // mapped) by its size on disk, as the display's total counts it.
        if target.progress.is_some() {
            advance(target, input.regular_file_size().unwrap_or(0));
        }
        Processed::Skipped
    } else {
        Processed::Stream(peeked.into_reader())
    };
    misread_if(compressed(archive), misread_if(misread, binary_if(binary, rest)))
}

/// A decoded stream: whole if it ends within [`INLINE_LIMIT`], else the
/// rest of an archive (`codec`) decoded ahead on its own thread, and the
/// rest of UTF-16 text alone transcoded where it is scanned: transcoding
/// runs at about 2.4 GB/s, and handing its text through the read-ahead
/// queue cost more than running beside the scan saved (`scan -c -j2` of
/// one 535 MB UTF-16 file 259 ms with it, 194 without; of two, 530 and
/// 379: BENCHMARKS.md, item 134).
fn decoded_input(
    scanner: &Scanner,
    opts: &JobOptions,
    target: Target<'_>,
    input: &Input,
    reader: Box<dyn Read + Send>,
    codec: Option<decompress::Codec>,
) -> Processed {
    let mut peeked = source::peek(reader, INLINE_LIMIT);
    if !peeked.is_complete(INLINE_LIMIT) {
        let (binary, misread) = sniff(opts, &peeked.head);
        let rest = match codec {
            _ if skips(opts, binary) => Processed::Skipped,
            Some(_) => Processed::Stream(decompress::read_ahead(peeked)),
            None => Processed::Stream(peeked.into_reader()),
        };
        return misread_if(misread, binary_if(binary, rest));
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
    /// The counter the input being consumed is scanned with ([`Target::progress`]).
    progress: Option<&'a AtomicU64>,
}

impl Consumer<'_> {
    fn consume(&mut self, index: u32, input: &Result<Input, InputError>, result: Processed) -> io::Result<()> {
        let (scanner, opts) = (self.scanner, self.opts);
        let name = input.as_ref().map(Input::display).unwrap_or_default();
        let file = FileRef { index, name: &name, path: input_path(input) };
        let target = Target { file, formatter: self.formatter, texts: self.texts, progress: self.progress };
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
                // The probe guessed from the first block, whatever the encoding.
                let utf16 = probe.utf16.filter(|_| probe.binary && opts.encoding == Encoding::Auto);
                for misread in [compressed(probe.compressed), utf16.map(Misread::Utf16)].into_iter().flatten() {
                    self.misread(file, misread)?;
                }
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
            Processed::Misread(misread, inner) => {
                self.misread(file, misread)?;
                self.consume(index, input, *inner)
            }
            Processed::Skipped => {
                self.outcome.totals.skipped += 1;
                Ok(())
            }
            Processed::Decoded(inner) => {
                let progress = self.progress.take();
                let consumed = self.consume(index, input, *inner);
                self.progress = progress;
                consumed
            }
            Processed::Partial(inner, error) => {
                self.consume(index, input, *inner)?;
                self.outcome.totals.errors += 1;
                self.sink.input_error(&error)
            }
        }
    }

    /// Counts `file` as read as its bytes although `misread`, and tells the sink.
    fn misread(&mut self, file: FileRef<'_>, misread: Misread) -> io::Result<()> {
        match misread {
            Misread::Compressed => self.outcome.totals.compressed += 1,
            Misread::Utf16(_) => self.outcome.totals.utf16_unmarked += 1,
        }
        self.sink.input_misread(file, misread)
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

/// The error of input `name`, mapped, that shrank while it was scanned.
fn changed_error(name: &str) -> InputError {
    InputError { path: name.to_owned(), error: io::Error::other(source::Shrank) }
}

/// Adds `bytes` to the progress counter of `target`, if it has one.
fn advance(target: Target<'_>, bytes: u64) {
    if let Some(counter) = target.progress {
        counter.fetch_add(bytes, Ordering::Relaxed);
    }
}
