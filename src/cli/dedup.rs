//! `urnscan dedup`: one URN per line in, each equivalence class once out.
//!
//! The work is done by [`urnscan::lines::LineDedup`]; this module opens the
//! inputs (mapped or streamed, as `scan` does; with `-z` gzip and zstd
//! inputs are decoded, ahead on their own threads, and binary inputs are
//! counted or skipped as `scan` does), sends rejected lines to
//! stderr or to the `--rejects` file as they come, prints the classes, the
//! summary, and picks the exit status. All diagnostics go through one
//! buffered stderr writer, so a file with many bad lines costs no system
//! call per line, and messages stay in input order; it writes whole lines
//! only, around the progress display ([`WholeLines`]).

use std::fs::File;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::ValueEnum;
use urnscan::decompress;
use urnscan::dedup::Entry;
use urnscan::job::Misread;
use urnscan::lines::{DedupOptions, FeedError, Finished, LineCounts, LineDedup, Order, Reject, DEFAULT_BLOCK_SIZE};
use urnscan::source::{self, BinaryPolicy, Contents, Input, InputError, MmapPolicy, OpenOptions, WalkOptions};
use urnscan::stats::NidStats;
use urnscan::transcode::Encoding;
use urnscan::{ErrorKind, UrnError};

use super::color::{self, Palette};
use super::output::{
    entry_csv, entry_json, is_broken_pipe, kinds_and_nids_json, nid_row_json, nid_table_csv, nid_table_text, thousands,
    write_tsv_field, write_u64, BestEffort,
};
use super::progress::{self, Progress, WholeLines};
use super::{grammar, nid_filter, DedupArgs, Ui};

/// `dedup --format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DedupFormat {
    /// One class per line: the first-seen form (or key), optionally after its count.
    Text,
    /// One JSON object per class: key, urn, count, nid, path, line.
    Jsonl,
    /// With --stats, one JSON object: the summary's counts and the NID rows; otherwise as jsonl.
    Json,
    /// Comma-separated: key,urn,count,nid,path,line, with a header row.
    Csv,
}

/// `--sort` values of `dedup` and `scan --unique`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum SortOrder {
    /// In the order the classes first appear.
    FirstSeen,
    /// By equivalence key, byte by byte.
    Key,
    /// By count, most first; equal counts by equivalence key.
    Count,
}

pub fn run(args: &DedupArgs, ui: Ui) -> Result<ExitCode> {
    // Before --files-from, which may read stdin, and before the rejects
    // file is created: a bad glob or NID reads and writes nothing.
    let walk = WalkOptions { globs: args.inputs.globs()?, ..WalkOptions::default() };
    let nids = nid_filter(&args.nids, args.rfc2141)?;
    let files = args.inputs.paths(&args.files)?;
    if files.stdin_only() && io::stdin().is_terminal() && !args.quiet {
        super::say(format_args!("urnscan: reading standard input (end with Ctrl-D); give files to read them"));
    }
    let inputs = files.expand(&walk);
    if let Some(rejects) = args.rejects.as_deref().filter(|p| p.as_os_str() != "-") {
        refuse_rejects_among(rejects, &inputs)?;
    }
    let names: Vec<String> =
        inputs.iter().map(|r| r.as_ref().map_or_else(|e| e.path.clone(), Input::display)).collect();
    // --quiet keeps stderr quiet unless progress is asked for by name.
    let flag = args.progress.flag().or(args.quiet.then_some(false));
    let progress = Progress::for_run(flag, || progress::total_size(&inputs));
    let columns = (!super::single_input(&files.list)).then(|| path_columns(&inputs));
    let rejects_out = rejects_to_stdout(args);
    let mut reporter = Reporter::new(args, &names, columns, &progress, ui.err)?;
    let filtered = nids.is_some();
    // Only a run with a limit can spill.
    #[cfg(unix)]
    if args.memory_limit.is_some() {
        super::interrupt::remove_spills_on_signal(args.temp_dir.clone())
            .context("cannot watch for signals (to remove spill files on one)")?;
    }
    let mut dedup = LineDedup::new(DedupOptions {
        nids,
        grammar: grammar(args.rfc2141),
        ns_rules: args.ns_rules,
        memory_limit: args.memory_limit,
        temp_dir: args.temp_dir.clone(),
        block_size: args.block_size.unwrap_or(DEFAULT_BLOCK_SIZE),
        progress: progress.counter(),
    });
    let mut input_errors = 0u64;
    let mut binary = BinaryCounts {
        policy: args.inputs.binary_policy(),
        decompress: args.inputs.decompress,
        encoding: args.inputs.encoding(),
        ..BinaryCounts::default()
    };
    let open =
        OpenOptions { mmap: MmapPolicy::Auto, decompress: args.inputs.decompress, encoding: args.inputs.encoding() };
    for (i, input) in inputs.iter().enumerate() {
        let outcome = match input {
            Err(e) => Err((io::Error::new(e.error.kind(), e.error.to_string()), false)),
            Ok(input) => {
                let file = u32::try_from(i).context("too many inputs")?;
                match feed(&mut dedup, input, open, progress.counter(), &mut binary, file, &mut reporter) {
                    Err(e) => return write_failed(e, args, input_errors),
                    Ok(fed) => fed,
                }
            }
        };
        reporter.input_done(&names[i]);
        if let Err((error, cut_short)) = outcome {
            input_errors += 1;
            reporter.input_error(&names[i], error, cut_short);
        }
    }
    if let Err(e) = reporter.finish_rejects() {
        return write_failed(e, args, input_errors);
    }
    progress.finish();
    // Rejects before the classes, for a reader of both streams.
    let _ = reporter.err.flush(); // Stderr never fails a run: see BestEffort.
    let summary = Summary { counts: dedup.counts().clone(), input_errors, binary, filtered };
    // Every input has been read: the status is known before the classes
    // are printed, and stands if the reader of stdout leaves early.
    let status = exit_status(args, input_errors, summary.counts.invalid_total());
    let printed = if rejects_out {
        // `--rejects -`: stdout carries the rejects, in place of the classes.
        dedup.finish_stats().with_context(|| spill_failure(args, "finish")).map(|(_, finished)| finished)
    } else if args.stats {
        print_stats(args, dedup, &summary, ui.out)
    } else {
        print_classes(args, &names, dedup)
    };
    let finished = match printed {
        Err(e) if is_broken_pipe(&e) => return Ok(status),
        printed => printed?,
    };
    if !args.quiet {
        let _ = write_summary(&mut reporter.err, &summary, finished, reporter.text.hinted_any);
    }
    let _ = reporter.err.flush();
    Ok(status)
}

/// The run's end when writing rejected lines (or spill files) failed.
/// `--rejects -` whose reader left (`| head`) ends quietly, with the status
/// known by then: a rejected line was being written, so --strict has its
/// verdict. A `--rejects FILE` that is a pipe whose reader left is a file
/// that cannot be written, an error (status 2), not a closed output to end
/// quietly on.
fn write_failed(e: anyhow::Error, args: &DedupArgs, input_errors: u64) -> Result<ExitCode> {
    match (is_broken_pipe(&e), rejects_to_stdout(args)) {
        (true, true) => Ok(exit_status(args, input_errors, 1)),
        // Told as a message, no longer an io::Error of a closed pipe.
        (true, false) => Err(anyhow::anyhow!("{e:#}")),
        (false, _) => Err(e),
    }
}

/// 2 if an input could not be read, 1 if --strict and a line was invalid, else 0.
fn exit_status(args: &DedupArgs, input_errors: u64, invalid: u64) -> ExitCode {
    if input_errors > 0 {
        ExitCode::from(2)
    } else if args.strict && invalid > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// `--rejects -`: the rejected lines go to stdout.
fn rejects_to_stdout(args: &DedupArgs) -> bool {
    args.rejects.as_ref().is_some_and(|p| p.as_os_str() == "-")
}

/// Refuses the combinations of options that clap cannot see, as they
/// depend on other options' values (see `Command::refuse_combinations`).
///
/// `--rejects -` writes the rejects to stdout instead of the classes: the
/// options that shape the classes (or put the NID table there) would do
/// nothing, so they are refused rather than ignored. (Both on stdout, one
/// after the other, was not an option: a `-c` class row, `3<TAB>urn:...`,
/// and a rejects row, `5<TAB>kind<TAB>text`, cannot be told apart.)
pub(super) fn refuse_combinations(args: &DedupArgs) -> Result<()> {
    args.inputs.refuse_combinations(&args.files)?;
    if !rejects_to_stdout(args) {
        return Ok(());
    }
    let given = [
        (args.stats, "--stats"),
        (args.count, "--count"),
        (args.keys, "--keys"),
        (args.repeated, "--repeated"),
        (args.min_count.is_some(), "--min-count"),
        (args.sort != SortOrder::FirstSeen, "--sort"),
        (args.format != DedupFormat::Text, "--format"),
    ];
    if let Some((_, option)) = given.iter().find(|(on, _)| *on) {
        anyhow::bail!(
            "--rejects - writes the rejected lines to stdout instead of the classes, so {option} would do \
             nothing: give --rejects a file to have both"
        );
    }
    Ok(())
}

/// Refuses a `--rejects` file that is one of the inputs: given, found in a
/// directory (a run again over the directory that holds the last run's
/// rejects), or stdin redirected from it. Creating it would empty it
/// before it is read, and a walk would read the rows being written. Before
/// the file is created; a file that does not exist yet is no input.
fn refuse_rejects_among(rejects: &Path, inputs: &[Result<Input, InputError>]) -> Result<()> {
    use super::FileId;
    let Some(id) = FileId::of_path(rejects) else { return Ok(()) };
    for input in inputs.iter().flatten() {
        let (same, what) = match input {
            Input::File(path) => (FileId::of_path(path) == Some(id), format!("the input {}", path.display())),
            Input::Stdin => (FileId::of_stdin() == Some(id), "the file standard input reads".to_owned()),
        };
        if same {
            anyhow::bail!(
                "--rejects {} is {what}: creating it would empty it before it is read (give the rejects \
                 another file)",
                rejects.display()
            );
        }
    }
    Ok(())
}

/// What the summary reports besides the classes: the lines' counts, the
/// inputs that could not be read, binary and compressed inputs, and
/// whether `--nid` left some namespaces out.
struct Summary {
    counts: LineCounts,
    input_errors: u64,
    binary: BinaryCounts,
    filtered: bool,
}

/// Binary inputs seen, and what is done with them; inputs read as their
/// bytes although UTF-16 without a mark; archives not decompressed.
#[derive(Default)]
struct BinaryCounts {
    policy: BinaryPolicy,
    seen: u64,
    skipped: u64,
    decompress: bool,
    encoding: Encoding,
    misreads: super::Misreads,
    /// Inputs skipped as archives without `-z` ([`BinaryCounts::archive`]).
    compressed: u64,
}

impl BinaryCounts {
    /// The error for input `name` when it starts with a gzip or zstd
    /// header (`head`, its first bytes) and `-z` is not given. Its lines
    /// would be compressed bytes, none of them a URN, and a reject for each
    /// would bury the one thing to say (where `scan` reads such bytes for
    /// the URNs a compressor leaves as they are): it is skipped, as an
    /// input that cannot be read. Under `--binary skip` a binary archive is
    /// skipped as binary files are, with the hint at the end, as before.
    fn archive(&mut self, name: &str, head: &[u8]) -> Option<io::Error> {
        let codec = decompress::Codec::sniff(head).filter(|_| !self.decompress)?;
        self.compressed += 1;
        if self.policy == BinaryPolicy::Skip && source::is_binary(head) {
            self.misreads.add(name, Misread::Compressed);
            return None;
        }
        let why = format!("starts with a {} header and -z was not given: add -z to decompress it", codec.name());
        Some(io::Error::new(io::ErrorKind::InvalidData, why))
    }

    /// Counts input `name`, whose first bytes (decoded ones with `-z`)
    /// are `head`; true if it is to be skipped.
    fn skips(&mut self, name: &str, head: &[u8]) -> bool {
        if !source::is_binary(head) {
            return false;
        }
        if let Some(order) = self.encoding.unmarked(head) {
            self.misreads.add(name, Misread::Utf16(order));
        }
        self.seen += 1;
        let skip = self.policy == BinaryPolicy::Skip;
        self.skipped += u64::from(skip);
        skip
    }
}

/// Feeds one input. The outer error stops the run (rejects or spill files
/// cannot be written); the inner one is this input's read error, and
/// whether it came after some of the input was read (it cut the input
/// short rather than skipping it: an archive whose header is corrupt is
/// skipped, as `scan` says of it). A read error (a corrupt archive) ends the
/// input where it happens: the lines before it are kept. `progress` counts a decoded input's own bytes as
/// they are read (the dedup counts the bytes of the others).
fn feed(
    dedup: &mut LineDedup,
    input: &Input,
    open: OpenOptions,
    progress: Option<Arc<AtomicU64>>,
    binary: &mut BinaryCounts,
    file: u32,
    reporter: &mut Reporter<'_>,
) -> Result<Result<(), (io::Error, bool)>> {
    let opened = source::open(input, open.mmap)
        .and_then(|contents| source::decoded_counting(contents, open.decompress, open.encoding, progress.as_ref()));
    let opened = match opened {
        Ok(opened) => opened,
        Err(e) => return Ok(Err((e, false))),
    };
    let name = &input.display();
    let mut sink = |r: &Reject<'_>| reporter.reject(r);
    let decoded = opened.is_decoded();
    if let Contents::Whole(whole) = &opened.contents {
        if let Some(error) = binary.archive(name, whole.as_bytes()) {
            if let Some(counter) = &progress {
                counter.fetch_add(whole.as_bytes().len() as u64, Ordering::Relaxed);
            }
            return Ok(Err((error, false)));
        }
    }
    let reader = match opened.contents {
        Contents::Whole(whole) if binary.skips(name, whole.as_bytes()) => {
            if let Some(counter) = &progress {
                counter.fetch_add(whole.as_bytes().len() as u64, Ordering::Relaxed);
            }
            return Ok(Ok(()));
        }
        Contents::Whole(whole) => {
            let fed = dedup.add_whole(&whole, file, &mut sink);
            if fed.is_ok() && whole.changed_during_use() {
                return Ok(Err((io::Error::other(source::Shrank), true)));
            }
            return settled(fed, true, reporter);
        }
        Contents::Stream(reader) => reader,
        // Nothing is printed before the end: a pipe is read as any stream.
        Contents::Pipe(pipe) => pipe.into_reader(),
    };
    let peeked = source::peek(reader, source::BINARY_PROBE);
    if let Some(error) = binary.archive(name, &peeked.head) {
        return Ok(Err((error, false)));
    }
    if binary.skips(name, &peeked.head) {
        return Ok(Ok(()));
    }
    let read_some = !peeked.head.is_empty();
    // A read error (a corrupt archive) is returned after the whole lines
    // before it were fed.
    let fed = if decoded {
        dedup.add_decoded_reader(&mut decompress::read_ahead(peeked), file, &mut sink)
    } else {
        dedup.add_reader(&mut peeked.into_reader(), file, &mut sink)
    };
    settled(fed, read_some, reporter)
}

/// What feeding an input came to: the run's error (rejects or spill files
/// that cannot be written, told apart by `reporter`), or the input's read
/// error, if any, and whether some of the input was read before it
/// (`read_some`: cut short, not skipped).
fn settled<T>(
    fed: Result<T, FeedError>,
    read_some: bool,
    reporter: &Reporter<'_>,
) -> Result<Result<(), (io::Error, bool)>> {
    match fed {
        Ok(_) => Ok(Ok(())),
        Err(FeedError::Read(e)) => Ok(Err((e, read_some))),
        Err(FeedError::Write(e)) => Err(e).context(reporter.write_failure()),
    }
}

/// Each input's path as the rejects file's path column holds it: its own
/// bytes (see [`Input::name_bytes`]), escaped ([`write_tsv_field`]).
/// Made once per input: a file may have millions of rejected lines.
fn path_columns(inputs: &[Result<Input, InputError>]) -> Vec<Vec<u8>> {
    let column = |name: &[u8]| {
        let mut out = Vec::with_capacity(name.len() + 1);
        // Writing to a Vec cannot fail.
        let _ = write_tsv_field(&mut out, name);
        out.push(b'\t');
        out
    };
    inputs.iter().map(|r| r.as_ref().map_or_else(|e| column(e.path.as_bytes()), |i| column(&i.name_bytes()))).collect()
}

/// Where rejected lines and input errors go.
struct Reporter<'a> {
    names: &'a [String],
    /// Per input, the rejects file's path column and its tab; `None` when
    /// the file has no path column (one input file, or stdin).
    columns: Option<Vec<Vec<u8>>>,
    /// The rejects' writer, and what an error writing it is told as.
    rejects: Option<(String, BufWriter<Box<dyn Write>>)>,
    /// Writing a rejected line failed: the run's write error is the
    /// rejects', not a spill file's (both come back as one error kind).
    rejects_failed: bool,
    /// Where the spill files' directory is made, for an error writing them.
    spill_base: PathBuf,
    err: WholeLines<'a, BestEffort<anstream::AutoStream<io::Stderr>>>,
    palette: Palette,
    quiet: bool,
    /// The current input's not-urn rejects on stderr: text given for a dataset.
    text: TextWatch,
}

/// Text given to `dedup` (a log, a document) is rejected line by line, as
/// not-urn. On stderr, once most of an input's first lines are such, the
/// hint to use `scan` is said there and then, not only after the summary
/// under the whole input's rejects, and the input's further not-urn lines
/// are counted rather than shown: a terminal is no place for a million of
/// them (`--rejects FILE` lists every one, and is not watched).
#[derive(Debug, Default, PartialEq)]
struct TextWatch {
    /// The current input's not-urn lines seen, and whether it was hinted at.
    not_urn: u64,
    hinted: bool,
    /// Its not-urn lines not shown since.
    hidden: u64,
    /// Whether any input was: the summary need not say it again.
    hinted_any: bool,
}

/// How many not-urn lines an input shows before [`TextWatch`] may judge it
/// text: enough to see what is wrong, few enough to fit a screen.
const SHOWN_BEFORE_HINT: u64 = 20;

/// What [`TextWatch::see`] makes of one not-urn reject.
#[derive(Debug, PartialEq)]
enum TextVerdict {
    Show,
    ShowAndHint,
    Hide,
}

impl TextWatch {
    /// A not-urn reject that is the `judged`-th line of the current input
    /// not empty ([`Reject::empty_before`] left out of its line number, as
    /// the summary's rule leaves out empty lines): hinted once more than
    /// half the lines judged up to it are not-urn, after the first
    /// [`SHOWN_BEFORE_HINT`].
    fn see(&mut self, judged: u64) -> TextVerdict {
        if self.hinted {
            self.hidden += 1;
            return TextVerdict::Hide;
        }
        self.not_urn += 1;
        if self.not_urn >= SHOWN_BEFORE_HINT && self.not_urn * 2 > judged {
            (self.hinted, self.hinted_any) = (true, true);
            return TextVerdict::ShowAndHint;
        }
        TextVerdict::Show
    }

    /// The end of an input: how many of its lines were not shown; the
    /// next input starts over.
    fn input_done(&mut self) -> u64 {
        let hidden = self.hidden;
        *self = TextWatch { hinted_any: self.hinted_any, ..TextWatch::default() };
        hidden
    }
}

impl<'a> Reporter<'a> {
    fn new(
        args: &DedupArgs,
        names: &'a [String],
        columns: Option<Vec<Vec<u8>>>,
        progress: &'a Progress,
        palette: Palette,
    ) -> Result<Reporter<'a>> {
        let rejects = match &args.rejects {
            // `-` is stdout, as for the inputs and --files-from.
            Some(path) if path.as_os_str() == "-" => {
                let out: Box<dyn Write> = Box::new(io::stdout());
                Some(("cannot write to standard output".to_owned(), BufWriter::with_capacity(64 << 10, out)))
            }
            Some(path) => {
                let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
                let out: Box<dyn Write> = Box::new(file);
                Some((format!("cannot write {}", path.display()), BufWriter::with_capacity(64 << 10, out)))
            }
            None => None,
        };
        let err = WholeLines::new(BestEffort::new(color::stream(io::stderr(), palette)), progress);
        let spill_base = spill_base(args);
        let quiet = args.quiet;
        let text = TextWatch::default();
        Ok(Reporter { names, columns, rejects, rejects_failed: false, spill_base, err, palette, quiet, text })
    }

    fn reject(&mut self, r: &Reject<'_>) -> io::Result<()> {
        let written = self.write_reject(r);
        self.rejects_failed |= written.is_err();
        written
    }

    fn write_reject(&mut self, r: &Reject<'_>) -> io::Result<()> {
        let name = self.names.get(r.file as usize).map_or("-", String::as_str);
        let kind = r.error.kind().as_str();
        match &mut self.rejects {
            Some((_, w)) => {
                if let Some(column) = self.columns.as_ref().and_then(|c| c.get(r.file as usize)) {
                    w.write_all(column)?;
                }
                write!(w, "{}\t{kind}\t", r.line)?;
                write_tsv_field(w, r.text)?;
                w.write_all(b"\n")
            }
            None if self.quiet => Ok(()),
            None => {
                let verdict = match r.error.kind() {
                    ErrorKind::NotUrn => self.text.see(r.line - r.empty_before),
                    _ => TextVerdict::Show,
                };
                if verdict != TextVerdict::Hide {
                    writeln!(self.err, "{name}:{}: {kind}: {}", r.line, describe(&r.error, r.text))?;
                }
                if verdict == TextVerdict::ShowAndHint {
                    writeln!(self.err, "{}", early_text_hint(name))?;
                }
                Ok(())
            }
        }
    }

    /// After each input: how many of its not-urn lines went unshown.
    fn input_done(&mut self, name: &str) {
        let hidden = self.text.input_done();
        if hidden > 0 {
            let lines = if hidden == 1 { "line" } else { "lines" };
            let _ =
                writeln!(self.err, "{name}: {} more {lines} not starting with \"urn:\" not shown", thousands(hidden));
        }
    }

    /// Input errors are shown even with `--quiet`: they change the exit status.
    fn input_error(&mut self, name: &str, error: io::Error, cut_short: bool) {
        let error = InputError { path: name.to_owned(), error };
        let others = self.names.len() > 1;
        let error = super::Unreadable { error: &error, cut_short, mmap_flag: false, others };
        let _ = writeln!(self.err, "{} {error}", self.palette.error_prefix());
    }

    /// What the run's write error is told as: the rejects file (or stdout),
    /// when writing a rejected line failed, else the spill files. (Stderr
    /// never fails a run: see [`BestEffort`].)
    fn write_failure(&self) -> String {
        match &self.rejects {
            Some((failed, _)) if self.rejects_failed => failed.clone(),
            _ => spill_failure_in(&self.spill_base, "write"),
        }
    }

    fn finish_rejects(&mut self) -> Result<()> {
        if let Some((failed, w)) = &mut self.rejects {
            w.flush().context(failed.clone())?;
        }
        Ok(())
    }
}

/// Where the spill files' directory is made: `--temp-dir`, else the
/// system's temporary directory, as the library chooses it.
fn spill_base(args: &DedupArgs) -> PathBuf {
    args.temp_dir.clone().unwrap_or_else(std::env::temp_dir)
}

/// What an error of the spill files is told as: `what` went wrong (write
/// them while counting; finish them, which writes the tables still in
/// memory and reads every file back) and where, with the option that
/// moves them (a full disk is the likely cause).
fn spill_failure(args: &DedupArgs, what: &str) -> String {
    spill_failure_in(&spill_base(args), what)
}

fn spill_failure_in(base: &Path, what: &str) -> String {
    format!("cannot {what} the spill files in {} (--temp-dir chooses where)", base.display())
}

/// `the NID must be ... (RFC 8141 §2), at byte 5 of "urn:a:b"`: the line's
/// first [`SHOWN`] bytes (not cutting a character in two), [`quoted`].
fn describe(error: &UrnError, text: &[u8]) -> String {
    let message = error.message();
    let detail = message.split_once(": ").map_or(message.as_str(), |(_, d)| d);
    let mut end = text.len().min(SHOWN);
    // Back to the start of a UTF-8 character, at most 3 continuation bytes.
    for _ in 0..3 {
        if end < text.len() && end > 0 && text[end] & 0xc0 == 0x80 {
            end -= 1;
        }
    }
    let more = if end < text.len() { "..." } else { "" };
    format!("{detail}, at byte {} of \"{}{more}\"", error.offset(), quoted(&text[..end]))
}

/// The most bytes of a rejected line quoted on stderr.
const SHOWN: usize = 120;

/// A line's bytes as a rejected line is quoted: a character that can be
/// seen as itself (`é` too, as the user wrote it), and every other one
/// escaped as its UTF-8 bytes, each as `<[u8]>::escape_ascii` escapes it
/// (`\t`, `\"`, `\\`, `\x00`, a C1 control as `\xc2\x85`, a NO-BREAK
/// SPACE as `\xc2\xa0`), as the bytes that are not UTF-8 are (`\xff`),
/// so that the quote is one line and every byte of it can be told. Escaped
/// are the characters `char::escape_debug` escapes, but `'`: control
/// characters, whitespace other than the space (U+00A0, U+2000 to U+200A,
/// U+2028, U+3000, ...), format characters (U+00AD, U+200B to U+200F,
/// U+FEFF, ...), combining marks (which would join what comes before
/// them), and private-use and unassigned characters. Before, a line that
/// ended in a NO-BREAK SPACE was quoted as if it ended in a space, which
/// dedup trims: the user could not see why it was rejected.
fn quoted(text: &[u8]) -> String {
    let mut out = String::with_capacity(text.len());
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c != '\'' && c.escape_debug().next() == Some('\\') {
                out.extend(c.encode_utf8(&mut [0; 4]).as_bytes().escape_ascii().map(char::from));
            } else {
                out.push(c);
            }
        }
        out.extend(chunk.invalid().escape_ascii().map(char::from));
    }
    out
}

/// Prints every class to stdout.
fn print_classes(args: &DedupArgs, names: &[String], dedup: LineDedup) -> Result<Finished> {
    let stdout = io::stdout();
    let mut printer = Printer {
        out: BufWriter::with_capacity(256 << 10, stdout.lock()),
        format: args.format,
        count: args.count,
        keys: args.keys,
        names,
    };
    let order = match args.sort {
        SortOrder::FirstSeen => Order::FirstSeen,
        SortOrder::Key => Order::Key,
        SortOrder::Count => Order::Count,
    };
    let (format, count, keys) = (args.format, args.count, args.keys);
    let min_count = super::min_count(args.min_count, args.repeated);
    let formatter = |e: &Entry<'_>, text: &mut Vec<u8>| {
        if e.count < min_count {
            return Ok(());
        }
        Printer { out: text, format, count, keys, names }.entry(e)
    };
    // Errors of the output are told apart from errors reading back the
    // spill files, which go through the same call.
    let mut output_error = None;
    let finished = printer.header().and_then(|()| {
        let mut out = NoteError { inner: &mut printer.out, error: &mut output_error };
        dedup.finish_parallel(order, &formatter, &mut out)
    });
    if let Some(err) = output_error {
        return Err(err).context("cannot write to standard output");
    }
    let finished = finished.with_context(|| spill_failure(args, "finish"))?;
    printer.out.flush().context("cannot write to standard output")?;
    Ok(finished)
}

/// Prints the per-NID rows (`--stats`) to stdout instead of the classes;
/// as JSON, in one object with the summary's counts.
fn print_stats(args: &DedupArgs, dedup: LineDedup, summary: &Summary, palette: Palette) -> Result<Finished> {
    let (nids, finished) = dedup.finish_stats().with_context(|| spill_failure(args, "finish"))?;
    let mut out = BufWriter::with_capacity(256 << 10, io::stdout().lock());
    match args.format {
        DedupFormat::Text => nid_table_text(&mut out, &nids, palette),
        DedupFormat::Jsonl => nids.rows().try_for_each(|row| {
            nid_row_json(&mut out, &row)?;
            out.write_all(b"\n")
        }),
        DedupFormat::Json => write_stats_json(&mut out, summary, finished, &nids),
        DedupFormat::Csv => nid_table_csv(&mut out, &nids),
    }
    .and_then(|()| out.flush())
    .context("cannot write to standard output")?;
    Ok(finished)
}

/// A writer that keeps its first error for the caller and passes on a
/// stand-in.
struct NoteError<'a, W> {
    inner: W,
    error: &'a mut Option<io::Error>,
}

impl<W: Write> NoteError<'_, W> {
    fn note<T>(&mut self, result: io::Result<T>) -> io::Result<T> {
        result.map_err(|err| {
            let kind = err.kind();
            self.error.get_or_insert(err);
            io::Error::new(kind, "output failed")
        })
    }
}

impl<W: Write> Write for NoteError<'_, W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let result = self.inner.write(buf);
        self.note(result)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        let result = self.inner.write_all(buf);
        self.note(result)
    }

    fn flush(&mut self) -> io::Result<()> {
        let result = self.inner.flush();
        self.note(result)
    }
}

struct Printer<'a, W: Write> {
    out: W,
    format: DedupFormat,
    count: bool,
    keys: bool,
    names: &'a [String],
}

impl<'a, W: Write> Printer<'a, W> {
    fn header(&mut self) -> io::Result<()> {
        match self.format {
            DedupFormat::Csv => self.out.write_all(b"key,urn,count,nid,path,line\n"),
            _ => Ok(()),
        }
    }
}

impl<'a> Printer<'a, &mut Vec<u8>> {
    /// Formats one class into the output buffer.
    fn entry(&mut self, e: &Entry<'_>) -> io::Result<()> {
        match self.format {
            DedupFormat::Text => {
                if self.count {
                    write_u64(&mut self.out, e.count)?;
                    self.out.write_all(b"\t")?;
                }
                if self.keys {
                    self.out.write_all(e.key)?;
                } else {
                    e.raw.write_into(self.out);
                }
                self.out.write_all(b"\n")
            }
            DedupFormat::Jsonl | DedupFormat::Json => entry_json(self.out, e, self.path(e), "line"),
            DedupFormat::Csv => entry_csv(self.out, e, self.path(e)),
        }
    }

    fn path(&self, e: &Entry<'_>) -> &'a str {
        self.names.get(e.first.file as usize).map_or("-", String::as_str)
    }
}

/// `hinted` says whether the text hint was said already, under an input's
/// rejects ([`TextWatch`]).
fn write_summary(out: &mut impl Write, summary: &Summary, finished: Finished, hinted: bool) -> io::Result<()> {
    let Summary { counts, input_errors, binary, filtered } = summary;
    writeln!(out, "{:<12} {}", "lines read", thousands(counts.lines))?;
    writeln!(out, "{:<12} {}", "valid", thousands(counts.valid))?;
    if *filtered {
        // URN lines of the namespaces --nid leaves out.
        writeln!(out, "{:<12} {}", "excluded", thousands(counts.excluded))?;
    }
    writeln!(out, "{:<12} {}", "invalid", thousands(counts.invalid_total()))?;
    for (kind, n) in &counts.invalid {
        writeln!(out, "  {:<24} {}", kind.as_str(), thousands(*n))?;
    }
    writeln!(out, "{:<12} {}", "empty", thousands(counts.empty))?;
    writeln!(out, "{:<12} {}", "distinct", thousands(finished.distinct))?;
    if finished.spilled {
        writeln!(out, "{:<12} yes (the key tables exceeded --memory-limit)", "spilled")?;
    }
    if binary.seen > 0 {
        let what = if binary.skipped > 0 { "skipped" } else { "read as text" };
        let files = if binary.seen == 1 { "file" } else { "files" };
        writeln!(out, "{:<12} {} {files} ({what}: a NUL byte in the first 8 KiB)", "binary", thousands(binary.seen))?;
    }
    if *input_errors > 0 {
        writeln!(out, "{:<12} {}", "unreadable", thousands(*input_errors))?;
    }
    // UTF-16 bytes read as text are rejected lines too, and archives
    // skipped as binary (`--binary skip`) were not decompressed: those
    // hints first.
    let hints = binary.misreads.hints();
    for hint in &hints {
        writeln!(out, "{hint}")?;
    }
    if hints.is_empty() && reads_like_text(counts) && !hinted {
        writeln!(out, "{}", text_hint("most lines"))?;
    }
    Ok(())
}

/// `dedup --stats --format json`: the summary's counts (`excluded` only
/// with `--nid`, as in the summary; not whether the tables spilled, since
/// `--memory-limit` never changes stdout) and the NID rows, in one object
/// on one line, as `scan --stats --format json` gives its own.
fn write_stats_json(out: &mut impl Write, summary: &Summary, finished: Finished, nids: &NidStats) -> io::Result<()> {
    let Summary { counts, input_errors, binary, filtered } = summary;
    write!(out, "{{\"lines\":{},\"valid\":{},", counts.lines, counts.valid)?;
    if *filtered {
        write!(out, "\"excluded\":{},", counts.excluded)?;
    }
    write!(
        out,
        "\"invalid\":{},\"empty\":{},\"distinct\":{},\"binary_files\":{},\"compressed_files\":{},\"unreadable_files\":{input_errors},",
        counts.invalid_total(),
        counts.empty,
        finished.distinct,
        binary.seen,
        binary.compressed,
    )?;
    kinds_and_nids_json(out, &counts.invalid, nids)?;
    out.write_all(b"}\n")
}

/// The hint for text given for a dataset: `lines` do not start with
/// `urn:` (`most lines` after the summary when [`reads_like_text`], `most
/// lines of app.log so far` under an input's first rejects, when
/// [`TextWatch`] judges it text).
fn text_hint(lines: &str) -> String {
    format!(
        "hint: {lines} do not start with \"urn:\": `urnscan dedup` reads one URN per line; to find the URNs \
         inside running text, use `urnscan scan --unique`"
    )
}

/// [`text_hint`] under an input's first rejects, and what becomes of the rest.
fn early_text_hint(name: &str) -> String {
    let name = if name == "-" { "standard input" } else { name };
    let hint = text_hint(&format!("most lines of {name} so far"));
    format!("{hint}. Its further lines not starting with \"urn:\" are counted, not shown (--rejects FILE lists every rejected line)")
}

/// Whether more lines fail to start with `urn:` (`not-urn`) than start
/// with it, valid or not (every other non-empty line): text given to
/// `dedup` (a log, a document) rather than a dataset, whose user most
/// likely wants `scan --unique` and was just shown a reject per line of
/// it. (As `check` decides its hint; comparing with the valid lines only
/// said "most lines do not start with urn:" of a list of broken URNs with
/// one line of text.)
fn reads_like_text(counts: &LineCounts) -> bool {
    let not_urn = counts.invalid.get(&ErrorKind::NotUrn).copied().unwrap_or(0);
    not_urn > counts.lines - counts.empty - not_urn
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The verdicts for not-urn rejects at `lines` of one input.
    fn verdicts(lines: impl IntoIterator<Item = u64>) -> Vec<TextVerdict> {
        let mut watch = TextWatch::default();
        lines.into_iter().map(|line| watch.see(line)).collect()
    }

    #[test]
    fn text_is_hinted_after_its_first_lines_and_then_hidden() {
        // Every line text: shown up to the 20th, hinted there, hidden after.
        let v = verdicts(1..=25);
        assert!(v[..19].iter().all(|v| *v == TextVerdict::Show));
        assert_eq!(v[19], TextVerdict::ShowAndHint);
        assert!(v[20..].iter().all(|v| *v == TextVerdict::Hide));
    }

    #[test]
    fn a_dataset_with_some_text_is_never_hinted() {
        // One text line in every three: 20 of them by line 58, a third.
        assert!(verdicts((1..=300).step_by(3)).iter().all(|v| *v == TextVerdict::Show));
        // Just half is not more than half.
        assert!(verdicts((2..=400).step_by(2)).iter().all(|v| *v == TextVerdict::Show));
        // A preface of 19 lines of text, then URNs: never 20 not-urn lines.
        assert!(verdicts(1..=19).iter().all(|v| *v == TextVerdict::Show));
    }

    #[test]
    fn each_input_is_watched_on_its_own() {
        let mut watch = TextWatch::default();
        for line in 1..=20 {
            watch.see(line);
        }
        assert_eq!((watch.see(21), watch.see(22)), (TextVerdict::Hide, TextVerdict::Hide));
        assert_eq!(watch.input_done(), 2);
        // The next input starts over: its first line is shown, and the
        // run remembers that a hint was said.
        assert_eq!(watch.see(1), TextVerdict::Show);
        assert_eq!(watch, TextWatch { not_urn: 1, hinted: false, hidden: 0, hinted_any: true });
    }
}
