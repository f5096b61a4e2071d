//! A whole run over many inputs: expand paths, scan each input, count,
//! deduplicate, and hand every result to a [`Sink`] in input order.
//!
//! Files are processed in parallel batches (rayon): each task maps or reads
//! its file, scans it in parallel chunks ([`Scanner::scan`]), and, when keys
//! are wanted, fills a [`KeyTable`] from the URNs in parallel. The calling
//! thread then consumes the batch in input order — events to the sink,
//! tables merged, totals added — so output never depends on scheduling.
//! Streams (stdin, pipes) cannot be split up front; they are scanned in
//! blocks on the calling thread, each block still in parallel chunks.
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
//! Binary inputs ([`source::is_binary`]) are counted, and skipped when
//! [`JobOptions::binary`] says so. Stdin, pipes and devices are only read
//! when their turn comes (see `is_regular_file`).

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::PathBuf;

use rayon::prelude::*;

use crate::decompress;
use crate::dedup::{KeyTable, Position};
use crate::error::{ErrorKind, UrnError};
use crate::extract::ExtractOptions;
use crate::grammar::parse;
use crate::scan::{Event, Scanner, DEFAULT_CHUNK_SIZE, DEFAULT_STREAM_BLOCK};
use crate::source::{
    self, BinaryPolicy, Contents, Input, InputError, MmapPolicy, Peeked, StopAtError, WalkOptions, Whole,
};
use crate::urn::Urn;

/// What a run does.
#[derive(Clone, Copy, Debug)]
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
    /// Hand every URN and rejected candidate to the sink.
    pub events: bool,
    /// Decode gzip and zstd inputs (recognised by their first bytes).
    pub decompress: bool,
    /// Scan or skip binary inputs.
    pub binary: BinaryPolicy,
}

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            extract: ExtractOptions::default(),
            mmap: MmapPolicy::Auto,
            walk: WalkOptions::default(),
            chunk_size: DEFAULT_CHUNK_SIZE,
            stream_block: DEFAULT_STREAM_BLOCK,
            keys: true,
            events: true,
            decompress: false,
            binary: BinaryPolicy::Scan,
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
    /// Candidates that yielded a URN.
    pub valid: u64,
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

    fn count(&mut self, event: &Event) {
        self.candidates += 1;
        match event {
            Event::Urn { .. } => self.valid += 1,
            Event::Rejected { error, .. } => *self.invalid_kinds.entry(error.kind()).or_default() += 1,
        }
    }

    fn add(&mut self, other: &Totals) {
        self.files += other.files;
        self.binary += other.binary;
        self.skipped += other.skipped;
        self.bytes += other.bytes;
        self.candidates += other.candidates;
        self.valid += other.valid;
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

/// Receives results in input order.
pub trait Sink {
    /// A URN at byte `offset` of `file`.
    fn urn(&mut self, file: FileRef<'_>, offset: u64, urn: &Urn<'_>) -> io::Result<()>;
    /// A candidate that yields no URN; `candidate` is the text from its start.
    fn rejected(&mut self, file: FileRef<'_>, offset: u64, candidate: &[u8], error: &UrnError) -> io::Result<()>;
    /// An input that could not be read.
    fn input_error(&mut self, error: &InputError) -> io::Result<()>;
}

/// The result of a run.
#[derive(Default)]
pub struct Outcome {
    /// Counts.
    pub totals: Totals,
    /// Distinct keys (empty unless [`JobOptions::keys`]).
    pub table: KeyTable,
    /// Input names by index ([`Position::file`]), `-` for stdin.
    pub inputs: Vec<String>,
}

/// Runs over `paths` (none or `-` is stdin), feeding `sink` in input order.
/// Unreadable inputs go to [`Sink::input_error`] and the run goes on; only
/// an error from the sink itself (a closed output) stops it.
pub fn run(paths: &[PathBuf], opts: &JobOptions, sink: &mut dyn Sink) -> io::Result<Outcome> {
    let inputs = source::expand(paths, opts.walk);
    let scanner = Scanner::new(opts.extract).with_chunk_size(opts.chunk_size);
    let names = inputs.iter().map(|r| r.as_ref().map_or_else(|e| e.path.clone(), Input::display)).collect();
    let mut outcome = Outcome { inputs: names, ..Outcome::default() };
    let batch_len = rayon::current_num_threads() * 4;
    for (b, batch) in inputs.chunks(batch_len).enumerate() {
        let base = b * batch_len;
        let results: Vec<Processed> =
            batch.par_iter().enumerate().map(|(i, input)| process(&scanner, opts, (base + i) as u32, input)).collect();
        for ((i, input), result) in batch.iter().enumerate().zip(results) {
            consume(&scanner, opts, (base + i) as u32, input, result, sink, &mut outcome)?;
        }
    }
    Ok(outcome)
}

enum Processed {
    Failed(InputError),
    Scanned(Box<Scanned>),
    /// Larger than a window: scanned window by window when consumed.
    Large(Whole),
    Stream(Box<dyn Read + Send>),
    /// Stdin, a pipe or a device: read when its turn comes.
    Unread(Box<dyn Read + Send>),
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
const WINDOW: usize = 16 << 20;

struct Scanned {
    whole: Option<Whole>,
    events: Vec<Event>,
    table: KeyTable,
    totals: Totals,
    changed: bool,
}

fn process(scanner: &Scanner, opts: &JobOptions, index: u32, input: &Result<Input, InputError>) -> Processed {
    let input = match input {
        Ok(input) => input,
        Err(e) => return Processed::Failed(InputError { path: e.path.clone(), error: clone_io(&e.error) }),
    };
    match source::open(input, opts.mmap) {
        Err(error) => Processed::Failed(InputError { path: input.display(), error }),
        Ok(Contents::Stream(reader)) if !is_regular_file(input) => Processed::Unread(reader),
        Ok(contents) => opened(scanner, opts, index, input, contents),
    }
}

/// Stdin, pipes, FIFOs and devices are opened in the batch but read only
/// when their turn comes: reading them there could wait on a writer that
/// itself waits for a later input to be opened, and stdin may be given
/// twice.
fn is_regular_file(input: &Input) -> bool {
    match input {
        Input::Stdin => false,
        Input::File(path) => std::fs::metadata(path).is_ok_and(|m| m.is_file()),
    }
}

/// Decodes (with -z), looks at the first bytes, and scans small inputs whole.
fn opened(scanner: &Scanner, opts: &JobOptions, index: u32, input: &Input, contents: Contents) -> Processed {
    match source::decoded(contents, opts.decompress) {
        Err(error) => Processed::Failed(InputError { path: input.display(), error }),
        Ok(opened) => match (opened.contents, opened.codec) {
            (Contents::Whole(whole), _) => whole_input(scanner, opts, index, whole),
            (Contents::Stream(reader), None) => stream_input(opts, source::peek(reader, source::BINARY_PROBE)),
            (Contents::Stream(reader), Some(_)) => decoded_input(scanner, opts, index, input, reader),
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

fn whole_input(scanner: &Scanner, opts: &JobOptions, index: u32, whole: Whole) -> Processed {
    let binary = source::is_binary(whole.as_bytes());
    binary_if(
        binary,
        if skips(opts, binary) {
            Processed::Skipped
        } else if whole.as_bytes().len() > WINDOW {
            Processed::Large(whole)
        } else {
            Processed::Scanned(Box::new(scan_whole(scanner, opts, index, whole)))
        },
    )
}

fn stream_input(opts: &JobOptions, peeked: Peeked) -> Processed {
    let binary = source::is_binary(&peeked.head);
    binary_if(binary, if skips(opts, binary) { Processed::Skipped } else { Processed::Stream(peeked.into_reader()) })
}

/// A decoded stream: whole if it ends within [`INLINE_LIMIT`], else the
/// rest decoded ahead on its own thread.
fn decoded_input(
    scanner: &Scanner,
    opts: &JobOptions,
    index: u32,
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
    let whole = whole_input(scanner, opts, index, Whole::Owned(peeked.head));
    match error {
        Some(error) => Processed::Partial(Box::new(whole), InputError { path: input.display(), error }),
        None => whole,
    }
}

fn clone_io(e: &io::Error) -> io::Error {
    io::Error::new(e.kind(), e.to_string())
}

fn scan_whole(scanner: &Scanner, opts: &JobOptions, index: u32, whole: Whole) -> Scanned {
    let hay = whole.as_bytes();
    let events = scanner.scan(hay);
    let mut totals = Totals { files: 1, bytes: hay.len() as u64, ..Totals::default() };
    events.iter().for_each(|e| totals.count(e));
    let table = if opts.keys { table_of(hay, &events, index, scanner, 0) } else { KeyTable::new() };
    let changed = whole.changed_during_use();
    if opts.events {
        Scanned { whole: Some(whole), events, table, totals, changed }
    } else {
        Scanned { whole: None, events: Vec::new(), table, totals, changed }
    }
}

/// The key table of the URN events of `hay` (as `scan --unique` and
/// `--stats` build it): parallel slices of events, one table each, merged.
/// Positions are `file` and `base` + the event's offset.
pub fn table_of(hay: &[u8], events: &[Event], file: u32, scanner: &Scanner, base: u64) -> KeyTable {
    let grammar = scanner.options().grammar;
    events
        .par_chunks(1 << 15)
        .map(|slice| {
            let mut table = KeyTable::new();
            let mut key = Vec::with_capacity(128);
            for event in slice {
                if let Event::Urn { offset, len } = *event {
                    let text = &hay[offset..offset + len];
                    if let Ok(urn) = parse(text, grammar) {
                        key.clear();
                        urn.write_key(&mut key);
                        table.insert(&key, text, Position { file, offset: base + offset as u64 }, 1);
                    }
                }
            }
            table
        })
        .reduce(KeyTable::new, |mut a, b| {
            a.merge(&b);
            a
        })
}

fn consume(
    scanner: &Scanner,
    opts: &JobOptions,
    index: u32,
    input: &Result<Input, InputError>,
    result: Processed,
    sink: &mut dyn Sink,
    outcome: &mut Outcome,
) -> io::Result<()> {
    let name = input.as_ref().map(Input::display).unwrap_or_default();
    let file = FileRef { index, name: &name };
    match result {
        Processed::Failed(error) => {
            outcome.totals.errors += 1;
            sink.input_error(&error)
        }
        Processed::Scanned(scanned) => {
            if let Some(whole) = &scanned.whole {
                emit(scanner, file, whole.as_bytes(), 0, &scanned.events, sink)?;
            }
            outcome.totals.add(&scanned.totals);
            outcome.table.merge(&scanned.table);
            if scanned.changed {
                outcome.totals.errors += 1;
                sink.input_error(&changed_error(&name))?;
            }
            Ok(())
        }
        Processed::Large(whole) => scan_large(scanner, opts, file, &whole, sink, outcome),
        Processed::Stream(reader) => scan_stream(scanner, opts, file, reader, sink, outcome),
        Processed::Unread(reader) => {
            let Ok(unread) = input else { return Ok(()) };
            let opened = opened(scanner, opts, index, unread, Contents::Stream(reader));
            consume(scanner, opts, index, input, opened, sink, outcome)
        }
        Processed::Binary(inner) => {
            outcome.totals.binary += 1;
            consume(scanner, opts, index, input, *inner, sink, outcome)
        }
        Processed::Skipped => {
            outcome.totals.skipped += 1;
            Ok(())
        }
        Processed::Partial(inner, error) => {
            consume(scanner, opts, index, input, *inner, sink, outcome)?;
            outcome.totals.errors += 1;
            sink.input_error(&error)
        }
    }
}

fn changed_error(name: &str) -> InputError {
    let error = io::Error::other(
        "the file shrank while it was being scanned, so results for it are incomplete; \
         scan a copy that is not being written, or use --mmap never",
    );
    InputError { path: name.to_owned(), error }
}

fn emit(
    scanner: &Scanner,
    file: FileRef<'_>,
    hay: &[u8],
    base: u64,
    events: &[Event],
    sink: &mut dyn Sink,
) -> io::Result<()> {
    let grammar = scanner.options().grammar;
    for event in events {
        match *event {
            Event::Urn { offset, len } => {
                if let Ok(urn) = parse(&hay[offset..offset + len], grammar) {
                    sink.urn(file, base + offset as u64, &urn)?;
                }
            }
            Event::Rejected { offset, ref error } => {
                let end = hay.len().min(offset + 64);
                sink.rejected(file, base + offset as u64, &hay[offset..end], error)?;
            }
        }
    }
    Ok(())
}

/// Scans a large mapped file window by window on the calling thread (each
/// window in parallel chunks), feeding the sink as it goes.
fn scan_large(
    scanner: &Scanner,
    opts: &JobOptions,
    file: FileRef<'_>,
    whole: &Whole,
    sink: &mut dyn Sink,
    outcome: &mut Outcome,
) -> io::Result<()> {
    let hay = whole.as_bytes();
    let mut totals = Totals { files: 1, bytes: hay.len() as u64, ..Totals::default() };
    let mut result = Ok(());
    scanner.scan_windows(hay, WINDOW, |events| {
        events.iter().for_each(|e| totals.count(e));
        if opts.events {
            if let Err(e) = emit(scanner, file, hay, 0, events, sink) {
                result = Err(e);
                return false;
            }
        }
        if opts.keys {
            outcome.table.merge(&table_of(hay, events, file.index, scanner, 0));
        }
        true
    });
    result?;
    outcome.totals.add(&totals);
    if whole.changed_during_use() {
        outcome.totals.errors += 1;
        sink.input_error(&changed_error(file.name))?;
    }
    Ok(())
}

/// Scans a stream in blocks on the calling thread (each block in parallel
/// chunks), feeding the sink as it goes so memory stays bounded. A read
/// error ends the stream where it happens: what came before is scanned
/// (the URNs before a corrupt part of an archive), then it is reported.
fn scan_stream(
    scanner: &Scanner,
    opts: &JobOptions,
    file: FileRef<'_>,
    reader: Box<dyn Read + Send>,
    sink: &mut dyn Sink,
    outcome: &mut Outcome,
) -> io::Result<()> {
    let mut totals = Totals { files: 1, ..Totals::default() };
    let mut sink_error = None;
    let mut reader = StopAtError::new(reader);
    let result = scanner.scan_reader(&mut reader, opts.stream_block, |buf, base, events| {
        events.iter().for_each(|e| totals.count(e));
        if opts.events {
            if let Err(e) = emit(scanner, file, buf, base, events, sink) {
                sink_error = Some(e);
                return false;
            }
        }
        if opts.keys {
            outcome.table.merge(&table_of(buf, events, file.index, scanner, base));
        }
        true
    });
    if let Some(e) = sink_error {
        return Err(e);
    }
    match result.map(|bytes| totals.bytes = bytes).and_then(|()| reader.finish()) {
        Ok(()) => {
            outcome.totals.add(&totals);
            Ok(())
        }
        Err(error) => {
            outcome.totals.add(&totals);
            outcome.totals.errors += 1;
            sink.input_error(&InputError { path: file.name.to_owned(), error })
        }
    }
}
