//! `urnscan scan`: find URNs in files, directories or stdin, and print every
//! occurrence, the unique URNs, per-NID statistics, the rejected candidates
//! or only how many of them each input holds.

use std::cell::Cell;
use std::io::{self, BufWriter, IsTerminal, Write};
use std::ops::ControlFlow;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use urnscan::dedup::sorted::RANGE_ENTRIES;
use urnscan::dedup::Entry;
use urnscan::job::{self, FileRef, Formatter, JobOptions, Location, Misread, Outcome, Sink, Totals};
use urnscan::nid::rules::apply_ns_rules;
use urnscan::ordered::write_in_order;
use urnscan::source::{InputError, MmapPolicy, WalkOptions};
use urnscan::stats::{NidRuns, NidStats};
use urnscan::{ExtractOptions, Urn, UrnError};

use super::color::{self, Palette, ERROR};
use super::dedup::SortOrder;
use super::output::{
    csv_appended, entry_csv, entry_json, is_broken_pipe, json_appended, json_str, kinds_and_nids_json, nid_table_csv,
    nid_table_text, shown, thousands, write_csv_field, write_csv_record, write_u64,
};
use super::progress::{self, Progress};
use super::{grammar, nid_filter, Format, MmapArg, ScanArgs, Ui};

/// Refuses the combinations of options that clap cannot see, as they
/// depend on other options' values (see `Command::refuse_combinations`).
pub(super) fn refuse_combinations(args: &ScanArgs) -> Result<()> {
    args.inputs.refuse_combinations(&args.paths)?;
    if args.stats && (args.unique || args.invalid) && args.format == Format::Csv {
        // Two tables of different columns would share one CSV stream.
        bail!("--stats with --unique or --invalid has no single CSV form: run them apart, or use --format jsonl (the statistics are its last line)");
    }
    if args.unique && args.invalid && args.format == Format::Csv {
        // The same: the URNs' table and the rejected candidates'.
        bail!("--unique with --invalid lists the URNs and the rejected candidates, two tables of different columns, which have no single CSV form: run them apart, or use --format jsonl");
    }
    if args.format != Format::Text && (args.with_filename || args.no_filename || args.no_offset || args.null) {
        // Their records always have both fields: dropping one would change
        // the columns a reader of the format relies on.
        bail!("-H, -I, -N and -0 shape text output only: jsonl and csv records always hold the path and the offset (-n adds a line field to them)");
    }
    let shows_keys = args.unique || args.stats || (args.format != Format::Text && !args.invalid);
    if args.ns_rules && (!shows_keys || args.count || args.files_with_urns || args.quiet) {
        bail!("--ns-rules changes equivalence keys, and this output shows none: use it with --unique, --stats, or the key field of --format jsonl or csv");
    }
    Ok(())
}

pub fn run(args: &ScanArgs, ui: Ui) -> Result<ExitCode> {
    let unreadable = Cell::new(0);
    match scan(args, ui, &unreadable) {
        // The reader of stdout has what it wanted (`| head`), which ends
        // the run quietly; an input that could not be read before that
        // (its message is on stderr) still makes the status 2.
        Err(e) if is_broken_pipe(&e) && unreadable.get() > 0 => Ok(ExitCode::from(2)),
        ran => ran,
    }
}

/// The run; `unreadable` counts the inputs that could not be read as it goes.
fn scan(args: &ScanArgs, ui: Ui, unreadable: &Cell<u64>) -> Result<ExitCode> {
    // Before --files-from, which may read stdin: a bad glob, NID or
    // kernel reads nothing.
    let globs = args.inputs.globs()?;
    let nids = nid_filter(&args.nids, args.rfc2141)?;
    let finder = args.search.finder()?;
    let paths = args.inputs.paths(&args.paths)?;
    if paths.stdin_only() && io::stdin().is_terminal() {
        super::say(format_args!(
            "urnscan: reading standard input (end with Ctrl-D); give files or directories to scan them"
        ));
    }
    let walk = WalkOptions { respect_ignore: args.respect_ignore, follow_links: args.follow, globs };
    // The time `--stats` gives is the run's: walking directories included.
    let started = Instant::now();
    let inputs = paths.expand(&walk);
    let progress = Progress::for_run(args.progress.flag(), || progress::total_size(&inputs));
    let per_input = match (args.count, args.files_with_urns, args.quiet) {
        (true, _, _) => PerInput::Count,
        (false, true, _) => PerInput::Path,
        (false, false, true) => PerInput::Found,
        (false, false, false) => PerInput::Nothing,
    };
    let filtered = nids.is_some();
    let opts = JobOptions {
        extract: ExtractOptions { grammar: grammar(args.rfc2141), trim: !args.no_trim },
        mmap: match args.mmap {
            MmapArg::Auto => MmapPolicy::Auto,
            MmapArg::Always => MmapPolicy::Always,
            MmapArg::Never => MmapPolicy::Never,
        },
        walk,
        keys: args.unique || args.stats,
        ns_rules: args.ns_rules,
        line_numbers: args.line_number,
        // Counting and listing inputs need only the totals of each input.
        events: per_input == PerInput::Nothing && (!(args.unique || args.stats) || args.invalid),
        chunk_size: args.chunk_size.unwrap_or(urnscan::scan::DEFAULT_CHUNK_SIZE).max(1),
        progress: progress.counter(),
        decompress: args.inputs.decompress,
        encoding: args.inputs.encoding(),
        binary: args.inputs.binary_policy(),
        nids,
        finder,
        // -l, -q and -m stop reading an input once they have what they need.
        early_stop: matches!(per_input, PerInput::Path | PerInput::Found) || args.max_count.is_some(),
        ..JobOptions::default()
    };
    let stdout = io::stdout();
    let mut printer = Printer {
        out: BufWriter::with_capacity(256 * 1024, color::stream(stdout.lock(), ui.out)),
        records: Records {
            format: args.format,
            with_path: args.with_filename || (!args.no_filename && !super::single_input(&paths.list)),
            no_path: args.no_filename,
            with_offset: !args.no_offset,
            with_line: args.line_number,
            path_end: if args.null { b'\0' } else { b':' },
            many_inputs: !super::single_input(&paths.list),
            ns_rules: args.ns_rules,
            mode: if args.invalid { Mode::Invalid } else { Mode::Occurrences },
            quiet: args.unique || args.stats || per_input != PerInput::Nothing,
        },
        header_done: false,
        line: Vec::new(),
        per_input,
        max_count: args.max_count.unwrap_or(u64::MAX),
        shown: 0,
        ui,
        progress: &progress,
        misreads: super::Misreads::default(),
        read_some: String::new(),
        others: inputs.len() > 1,
        unreadable,
    };
    let mut outcome = match job::run_inputs(&inputs, &opts, &mut printer) {
        Err(e) if FoundOne::is(&e) => return Ok(ExitCode::SUCCESS),
        run => run.context("cannot write to standard output")?,
    };
    progress.finish();
    // With both, the per-NID counts are taken from the unique URNs as they
    // are printed in key order; `--stats` alone, or after the first-seen
    // order, counts them in hash maps.
    let mut nids = None;
    // What the run found, for its status: the URNs it lists (with
    // --unique, those of enough occurrences), or the rejected candidates.
    let mut found = printer.records.sought(&outcome.totals);
    if args.unique {
        let min_count = super::min_count(args.min_count, args.repeated);
        let listed;
        (nids, listed) = printer
            .unique(&mut outcome, args.stats, args.sort, min_count)
            .context("cannot write to standard output")?;
        // --invalid beside --unique lists both.
        found = if args.invalid { found + u64::from(listed) } else { u64::from(listed) };
    }
    if args.stats {
        let nids = nids.unwrap_or_else(|| NidStats::from_table(&outcome.table));
        printer.stats(&outcome, &nids, filtered, started.elapsed()).context("cannot write to standard output")?;
    }
    printer.out.flush().context("cannot write to standard output")?;
    if !args.quiet {
        for hint in printer.misreads.hints() {
            super::say(format_args!("{hint}"));
        }
    }
    Ok(exit_code(&outcome.totals, found))
}

/// ripgrep's convention: 2 when any input failed, else 0 if what the run
/// selects was `found`, 1 if not: a URN (with `--unique`, one it lists:
/// `-d` may leave out every one), or with `--invalid` a rejected candidate
/// (as grep's status follows the lines it selects, so that `scan --invalid
/// -l` says by its status whether it listed a file).
fn exit_code(totals: &Totals, found: u64) -> ExitCode {
    if totals.errors > 0 {
        ExitCode::from(2)
    } else if found > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Occurrences,
    Invalid,
}

/// What is printed when an input is done.
#[derive(Clone, Copy, PartialEq, Eq)]
enum PerInput {
    Nothing,
    /// How many URNs it holds (`--count`).
    Count,
    /// Its path, if it holds one (`--files-with-urns`).
    Path,
    /// Nothing; the run ends at the first window, block or input that
    /// holds one (`--quiet`).
    Found,
}

/// What `input_progress` and `input_done` return under `--quiet` once an
/// input holds what the run looks for: an error, so that the run stops
/// there (as a closed output pipe stops it), which `run` turns into exit
/// status 0.
#[derive(Debug)]
struct FoundOne;

impl FoundOne {
    fn error() -> io::Error {
        io::Error::other(FoundOne)
    }

    fn is(error: &io::Error) -> bool {
        error.get_ref().is_some_and(|e| e.is::<FoundOne>())
    }
}

impl std::fmt::Display for FoundOne {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("found one (--quiet)")
    }
}

impl std::error::Error for FoundOne {}

struct Printer<'p, W: Write> {
    out: W,
    records: Records,
    header_done: bool,
    /// A record made for `out` (see [`Records::urn`]).
    line: Vec<u8>,
    /// Only each input's count or path is printed (`--count`, `-l`).
    per_input: PerInput,
    /// The most records, or the highest count, printed per input
    /// (`--max-count`; `u64::MAX` without).
    max_count: u64,
    /// Records printed of the input being scanned.
    shown: u64,
    ui: Ui,
    /// Input errors on stderr are written around it.
    progress: &'p Progress,
    /// Inputs read as their bytes although compressed or UTF-16, for the hints.
    misreads: super::Misreads,
    /// The name of the input just done if some of it was read (else
    /// empty; a buffer reused): an error about it next cut it short (see
    /// [`super::Unreadable`]).
    read_some: String,
    /// The run has more than one input (see [`super::Unreadable::others`]).
    others: bool,
    /// Inputs that could not be read so far.
    unreadable: &'p Cell<u64>,
}

impl<W: Write> Printer<'_, W> {
    /// `path:` before a text record, if the run shows paths (see [`Records::path_prefix`]).
    fn path_prefix(&mut self, path: &[u8]) -> io::Result<()> {
        self.records.path_prefix(&mut self.out, path)
    }

    fn header(&mut self, header: &str) -> io::Result<()> {
        if self.records.format == Format::Csv && !self.header_done {
            self.header_done = true;
            writeln!(self.out, "{header}")?;
        }
        Ok(())
    }

    /// The unique URNs of `min_count` occurrences or more, in `order`, and
    /// whether there was any to list.
    /// Millions of lines take a while to format, so ranges of entries are
    /// formatted in parallel and written in order ([`write_in_order`]). In
    /// key order, with `count_nids`, the same pass counts every entry (the
    /// ones left out too) by NID, which key order groups into runs: the
    /// per-NID statistics without a second pass over the entries and
    /// without hashing (see [`NidRuns`]). First-seen and count order do not
    /// group them, and return `None` for the caller to count apart.
    fn unique(
        &mut self,
        outcome: &mut Outcome,
        count_nids: bool,
        order: SortOrder,
        min_count: u64,
    ) -> io::Result<(Option<NidStats>, bool)> {
        self.header_done = false;
        self.header("key,urn,count,nid,path,offset")?;
        let inputs = &outcome.inputs;
        let format = self.records.format;
        let listed = AtomicBool::new(false);
        let record = |e: &Entry<'_>, text: &mut Vec<u8>| {
            if e.count < min_count {
                return Ok(());
            }
            // Read before it is written: the flag's cache line stays shared
            // by the formatting threads once it is set.
            if !listed.load(Ordering::Relaxed) {
                listed.store(true, Ordering::Relaxed);
            }
            let path = inputs.get(e.first.file as usize).map_or("", String::as_str);
            unique_record(text, format, e, path)
        };
        match order {
            SortOrder::FirstSeen => {
                outcome.table.first_seen().write_in_order(&mut self.out, &record)?;
                return Ok((None, listed.into_inner()));
            }
            SortOrder::Count => {
                outcome.table.by_count().write_in_order(&mut self.out, &record)?;
                return Ok((None, listed.into_inner()));
            }
            SortOrder::Key => {}
        }
        // In the table's own indexes: every key is in.
        let sorted = outcome.table.sorted();
        let blocks: Vec<(usize, Mutex<NidRuns>)> =
            (0..sorted.len()).step_by(RANGE_ENTRIES).map(|start| (start, Mutex::default())).collect();
        write_in_order(&blocks, &mut self.out, |(start, runs), text| {
            let mut block_runs = NidRuns::default();
            sorted.iter_range(*start..start + RANGE_ENTRIES).try_for_each(|e| {
                if count_nids {
                    block_runs.add(e.nid(), e.count);
                }
                record(&e, text)
            })?;
            *runs.lock().unwrap_or_else(PoisonError::into_inner) = block_runs;
            Ok(())
        })?;
        let listed = listed.into_inner();
        if !count_nids {
            return Ok((None, listed));
        }
        let blocks = blocks.into_iter().map(|(_, runs)| runs.into_inner().unwrap_or_else(PoisonError::into_inner));
        Ok((Some(NidRuns::joined(blocks.collect()).into_stats()), listed))
    }

    /// An input's count (`--count`): `path:count`, or the count alone.
    fn input_count(&mut self, file: FileRef<'_>, n: u64) -> io::Result<()> {
        self.header("path,count")?;
        match self.records.format {
            Format::Text => {
                self.path_prefix(file.name_bytes())?;
                write_u64(&mut self.out, n)?;
                self.out.write_all(b"\n")
            }
            Format::Jsonl | Format::Json => {
                self.out.write_all(b"{\"path\":")?;
                json_str(&mut self.out, file.name)?;
                writeln!(self.out, ",\"count\":{n}}}")
            }
            Format::Csv => {
                write_csv_record(&mut self.out, &[file.name.as_bytes(), itoa::Buffer::new().format(n).as_bytes()])
            }
        }
    }

    /// The path of an input that holds what is looked for (`-l`): a line,
    /// or NUL-terminated with `-0`.
    fn input_path(&mut self, file: FileRef<'_>) -> io::Result<()> {
        self.header("path")?;
        match self.records.format {
            Format::Text => {
                self.out.write_all(file.name_bytes())?;
                self.out.write_all(if self.records.path_end == 0 { b"\0" } else { b"\n" })
            }
            Format::Jsonl | Format::Json => {
                self.out.write_all(b"{\"path\":")?;
                json_str(&mut self.out, file.name)?;
                self.out.write_all(b"}\n")
            }
            Format::Csv => write_csv_record(&mut self.out, &[file.name.as_bytes()]),
        }
    }

    /// The NID table and the totals, the time the run took last: the one
    /// part of stdout that differs between runs of the same input.
    /// `filtered`: the run kept only some NIDs (`--nid`), so the totals
    /// say how many URNs of the others were left out.
    fn stats(&mut self, outcome: &Outcome, nids: &NidStats, filtered: bool, elapsed: Duration) -> io::Result<()> {
        let t = &outcome.totals;
        let unique = outcome.table.len();
        match self.records.format {
            Format::Json | Format::Jsonl => write_stats_json(&mut self.out, t, nids, unique, filtered, elapsed),
            Format::Csv => nid_table_csv(&mut self.out, nids),
            Format::Text => write_stats_text(&mut self.out, t, nids, unique, filtered, elapsed, self.ui.out),
        }
    }
}

/// How `scan` writes an occurrence or a rejected candidate: the part of
/// the printer that any thread may run, so that the job formats the
/// events of a run that only prints them on the threads that scan them
/// (see [`Sink::formatter`]).
#[derive(Clone, Copy)]
struct Records {
    format: Format,
    /// `path:` before an occurrence or a count in text (`-H`, `-I`, and
    /// by default when there is more than one input).
    with_path: bool,
    /// No path before a rejected candidate in text either (`-I`).
    no_path: bool,
    /// The offset before an occurrence or a rejected candidate in text (not `-N`).
    with_offset: bool,
    /// The line number before the offset in text, and a `line` field in
    /// jsonl and csv (`-n`; the job then gives every event's line).
    with_line: bool,
    /// What follows a path in text: `:`, or NUL with `-0`.
    path_end: u8,
    /// More than one input, or a directory: counts of 0 are left out.
    many_inputs: bool,
    /// The key field passes through the namespace rules (`--ns-rules`).
    ns_rules: bool,
    mode: Mode,
    /// Occurrences are not printed (unique, stats and count runs).
    quiet: bool,
}

impl Records {
    fn shows_urns(&self) -> bool {
        !self.quiet && self.mode == Mode::Occurrences
    }

    /// How many of what the run looks for `totals` holds: URNs, or with
    /// `--invalid` rejected candidates (what -c counts, -l and -q look for).
    fn sought(&self, totals: &Totals) -> u64 {
        if self.mode == Mode::Invalid {
            totals.invalid()
        } else {
            totals.valid
        }
    }

    /// The CSV header of what this run prints per event.
    fn header(&self) -> &'static str {
        match (self.mode, self.with_line) {
            (Mode::Occurrences, false) => "path,offset,urn,key,nid",
            (Mode::Occurrences, true) => "path,line,offset,urn,key,nid",
            (Mode::Invalid, false) => "path,offset,kind,error_offset,candidate",
            (Mode::Invalid, true) => "path,line,offset,kind,error_offset,candidate",
        }
    }

    /// `path:` (`path` and NUL with `-0`) before a text record, if the run
    /// shows paths: with `-H`, or with more than one input and no `-I`.
    fn path_prefix(&self, out: &mut impl Write, path: &[u8]) -> io::Result<()> {
        if self.with_path {
            out.write_all(path)?;
            out.write_all(&[self.path_end])?;
        }
        Ok(())
    }

    /// The URN's key, as the key table has it (with `--ns-rules`, ruled).
    fn write_key(&self, out: &mut Vec<u8>, urn: &Urn<'_>) {
        let start = out.len();
        urn.write_key(out);
        if self.ns_rules {
            apply_ns_rules(&mut out[start..]);
        }
    }

    /// `line:` (with `-n`) and `offset:` (unless `-N`) before a text
    /// record: grep's order for `-nbo`.
    fn location_prefix(&self, out: &mut impl Write, at: Location) -> io::Result<()> {
        if let Some(line) = at.line {
            write_u64(out, line)?;
            out.write_all(b":")?;
        }
        if self.with_offset {
            write_u64(out, at.offset)?;
            out.write_all(b":")?;
        }
        Ok(())
    }

    /// The URN, its key and its NID are made straight into `out` and checked
    /// there (see `output`): with a `String` per key and a UTF-8 check and
    /// `serde_json` per field, JSON Lines and CSV output took 2.5 times as
    /// long as text; now about 1.5 times, for 2.6 times the bytes.
    fn urn(&self, out: &mut Vec<u8>, file: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
        match self.format {
            Format::Text => {
                self.path_prefix(out, file.name_bytes())?;
                self.location_prefix(out, at)?;
                out.extend_from_slice(urn.as_bytes());
                out.push(b'\n');
            }
            Format::Jsonl | Format::Json => {
                out.extend_from_slice(b"{\"path\":");
                json_str(out, file.name)?;
                if let Some(line) = at.line {
                    out.extend_from_slice(b",\"line\":");
                    write_u64(out, line)?;
                }
                out.extend_from_slice(b",\"offset\":");
                write_u64(out, at.offset)?;
                out.extend_from_slice(b",\"urn\":");
                // The key and the NID change the case of the URN's letters
                // only: when the URN needs no escape (no URN the grammar
                // accepts does), neither do they.
                let check = !json_appended(out, true, |out| out.extend_from_slice(urn.as_bytes()))?;
                out.extend_from_slice(b",\"key\":");
                json_appended(out, check, |out| self.write_key(out, urn))?;
                out.extend_from_slice(b",\"nid\":");
                json_appended(out, check, |out| write_key_nid(out, urn))?;
                out.extend_from_slice(b"}\n");
            }
            Format::Csv => {
                write_csv_field(out, file.name.as_bytes())?;
                out.push(b',');
                if let Some(line) = at.line {
                    write_u64(out, line)?;
                    out.push(b',');
                }
                write_u64(out, at.offset)?;
                out.push(b',');
                // As for JSON: what the URN needs, its key and NID need.
                let check = !csv_appended(out, true, |out| out.extend_from_slice(urn.as_bytes()))?;
                out.push(b',');
                csv_appended(out, check, |out| self.write_key(out, urn))?;
                out.push(b',');
                csv_appended(out, check, |out| write_key_nid(out, urn))?;
                out.push(b'\n');
            }
        }
        Ok(())
    }

    fn rejected(
        &self,
        out: &mut impl Write,
        file: FileRef<'_>,
        at: Location,
        candidate: &[u8],
        error: &UrnError,
    ) -> io::Result<()> {
        let kind = error.kind().as_str();
        match self.format {
            Format::Text => {
                // Control characters as spaces: one record per line, and no
                // escape sequence reaches a terminal. JSON and CSV carry
                // the candidate's own bytes (as UTF-8, U+FFFD for what is
                // not): escaped in JSON, in a quoted field in CSV.
                let shown = shown(candidate);
                // The path even of a single input (as this record always
                // had it before -H and -I), unless -I.
                if !self.no_path {
                    out.write_all(file.name_bytes())?;
                    out.write_all(&[self.path_end])?;
                }
                self.location_prefix(out, at)?;
                out.write_all(kind.as_bytes())?;
                out.write_all(b"\t")?;
                out.write_all(shown.as_bytes())?;
                out.write_all(b"\n")
            }
            Format::Jsonl | Format::Json => {
                out.write_all(b"{\"path\":")?;
                json_str(out, file.name)?;
                if let Some(line) = at.line {
                    write!(out, ",\"line\":{line}")?;
                }
                write!(
                    out,
                    ",\"offset\":{},\"kind\":\"{kind}\",\"error_offset\":{},\"candidate\":",
                    at.offset,
                    error.offset()
                )?;
                json_str(out, &String::from_utf8_lossy(candidate))?;
                out.write_all(b"}\n")
            }
            Format::Csv => {
                let candidate = String::from_utf8_lossy(candidate);
                let (mut line_text, mut offset_text, mut error_text) =
                    (itoa::Buffer::new(), itoa::Buffer::new(), itoa::Buffer::new());
                let (path, kind) = (file.name.as_bytes(), kind.as_bytes());
                let offset = offset_text.format(at.offset).as_bytes();
                let error_offset = error_text.format(error.offset()).as_bytes();
                match at.line {
                    Some(line) => {
                        let line = line_text.format(line).as_bytes();
                        write_csv_record(out, &[path, line, offset, kind, error_offset, candidate.as_bytes()])
                    }
                    None => write_csv_record(out, &[path, offset, kind, error_offset, candidate.as_bytes()]),
                }
            }
        }
    }
}

/// The NID as the key holds it: in lower case.
fn write_key_nid(out: &mut Vec<u8>, urn: &Urn<'_>) {
    let start = out.len();
    out.extend_from_slice(&urn.as_bytes()[urn.nid_range()]);
    out[start..].make_ascii_lowercase();
}

impl Formatter for Records {
    fn urn(&self, out: &mut Vec<u8>, file: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
        if self.shows_urns() {
            Records::urn(self, out, file, at, urn)?;
        }
        Ok(())
    }

    fn rejected(
        &self,
        out: &mut Vec<u8>,
        file: FileRef<'_>,
        at: Location,
        candidate: &[u8],
        error: &UrnError,
    ) -> io::Result<()> {
        if self.mode == Mode::Invalid {
            Records::rejected(self, out, file, at, candidate, error)?;
        }
        Ok(())
    }
}

impl<W: Write> Sink for Printer<'_, W> {
    fn urn(&mut self, file: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
        if self.records.shows_urns() && self.shown < self.max_count {
            self.shown += 1;
            self.header(self.records.header())?;
            self.line.clear();
            self.records.urn(&mut self.line, file, at, urn)?;
            self.out.write_all(&self.line)?;
        }
        Ok(())
    }

    fn rejected(&mut self, file: FileRef<'_>, at: Location, candidate: &[u8], error: &UrnError) -> io::Result<()> {
        if self.records.mode == Mode::Invalid && self.shown < self.max_count {
            self.shown += 1;
            self.header(self.records.header())?;
            self.records.rejected(&mut self.out, file, at, candidate, error)?;
        }
        Ok(())
    }

    /// None with `--max-count`: the records past it are left out one by
    /// one, as they come to `urn` and `rejected`.
    fn formatter(&self) -> Option<Arc<dyn Formatter>> {
        (self.max_count == u64::MAX).then(|| Arc::new(self.records) as Arc<dyn Formatter>)
    }

    fn write_formatted(&mut self, text: &[u8]) -> io::Result<()> {
        if !text.is_empty() {
            self.header(self.records.header())?;
            self.out.write_all(text)?;
        }
        Ok(())
    }

    fn input_done(&mut self, file: FileRef<'_>, totals: &Totals) -> io::Result<()> {
        self.shown = 0;
        self.read_some.clear();
        if totals.bytes > 0 {
            self.read_some.push_str(file.name);
        }
        let n = self.records.sought(totals).min(self.max_count);
        match self.per_input {
            PerInput::Nothing => Ok(()),
            PerInput::Path if n == 0 => Ok(()),
            PerInput::Path => self.input_path(file),
            // As `rg -c`: of many inputs, only those with something to count.
            PerInput::Count if n == 0 && self.records.many_inputs => Ok(()),
            PerInput::Count => self.input_count(file, n),
            PerInput::Found if n == 0 => Ok(()),
            PerInput::Found => Err(FoundOne::error()),
        }
    }

    /// Reads no more of an input than what it prints needs: up to its
    /// first URN for `-l`, its NUM-th with `--max-count`; `-q` ends the
    /// run at the first. What was printed so far goes out: a block of a
    /// live stream (`tail -f log | urnscan scan`) is shown as it is
    /// scanned, not when 256 KiB of output have gathered.
    fn input_progress(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<ControlFlow<()>> {
        self.out.flush()?;
        let enough = match self.per_input {
            PerInput::Found if self.records.sought(totals) > 0 => return Err(FoundOne::error()),
            PerInput::Found => false,
            PerInput::Path => self.records.sought(totals) > 0,
            PerInput::Count => self.records.sought(totals) >= self.max_count,
            PerInput::Nothing => self.shown >= self.max_count,
        };
        Ok(if enough { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
    }

    fn input_misread(&mut self, file: FileRef<'_>, misread: Misread) -> io::Result<()> {
        self.misreads.add(file.name, misread);
        Ok(())
    }

    fn input_error(&mut self, error: &InputError) -> io::Result<()> {
        self.unreadable.set(self.unreadable.get() + 1);
        // Keep stdout and stderr in order for a reader of both.
        self.out.flush()?;
        let cut_short = !self.read_some.is_empty() && self.read_some == error.path;
        self.read_some.clear();
        let error = super::Unreadable { error, cut_short, mmap_flag: true, others: self.others };
        self.progress.suspend(|| self.ui.error(format_args!("{error}")));
        Ok(())
    }
}

/// One line of `scan --unique` output.
fn unique_record(out: &mut Vec<u8>, format: Format, e: &Entry<'_>, path: &str) -> io::Result<()> {
    match format {
        Format::Text => {
            // Raw forms are ASCII: written as they are, without a UTF-8 check.
            write_u64(out, e.count)?;
            out.write_all(b"\t")?;
            e.raw.write_into(out);
            out.write_all(b"\n")
        }
        Format::Jsonl | Format::Json => entry_json(out, e, path, "offset"),
        Format::Csv => entry_csv(out, e, path),
    }
}

fn write_stats_text(
    out: &mut impl Write,
    t: &Totals,
    nids: &NidStats,
    unique: usize,
    filtered: bool,
    elapsed: Duration,
    palette: Palette,
) -> io::Result<()> {
    nid_table_text(out, nids, palette)?;
    writeln!(out)?;
    let rows: [(&str, u64); 10] = [
        ("files", t.files),
        ("binary", t.binary),
        // Archives read without -z: shown when there are any.
        ("compressed", t.compressed),
        // Inputs that could not be read: shown when there are any, as
        // `dedup --stats` shows them, so that totals short of what was
        // asked for say why (each one also has its message on stderr).
        ("unreadable", t.errors),
        ("bytes", t.bytes),
        ("candidates", t.candidates),
        ("valid", t.valid),
        // URNs of the NIDs --nid leaves out: candidates = valid + excluded + invalid.
        ("excluded", t.excluded),
        ("invalid", t.invalid()),
        ("unique", unique as u64),
    ];
    let shown = |&(name, value): &(&str, u64)| match name {
        "excluded" => filtered,
        "compressed" | "unreadable" => value > 0,
        _ => true,
    };
    for (name, value) in rows.into_iter().filter(shown) {
        writeln!(out, "{name:<12} {}", thousands(value))?;
    }
    for (kind, n) in &t.invalid_kinds {
        let row = format!("  {:<24} {}", kind.as_str(), thousands(*n));
        writeln!(out, "{}", palette.paint(ERROR, &row))?;
    }
    writeln!(out, "{:<12} {} s", "elapsed", seconds_text(elapsed.as_secs_f64()))?;
    // Decimal GB, as the progress bar counts them.
    writeln!(out, "{:<12} {:.2}", "GB/s", progress::bytes_per_second(t.bytes, elapsed) / 1e9)
}

/// Seconds to three significant digits, at least to the millisecond:
/// `0.000271` for a small file, `0.213`, `12.345`.
fn seconds_text(secs: f64) -> String {
    let decimals = if secs >= 1.0 || secs <= 0.0 { 3 } else { (2 - secs.log10().floor() as i32).clamp(3, 9) };
    format!("{secs:.*}", decimals as usize)
}

fn write_stats_json(
    out: &mut impl Write,
    t: &Totals,
    nids: &NidStats,
    unique: usize,
    filtered: bool,
    elapsed: Duration,
) -> io::Result<()> {
    write!(
        out,
        "{{\"files\":{},\"binary_files\":{},\"compressed_files\":{},\"unreadable_files\":{},\"bytes\":{},\"candidates\":{},\"valid\":{},",
        t.files, t.binary, t.compressed, t.errors, t.bytes, t.candidates, t.valid
    )?;
    if filtered {
        write!(out, "\"excluded\":{},", t.excluded)?;
    }
    write!(out, "\"invalid\":{},\"unique\":{},", t.invalid(), unique)?;
    kinds_and_nids_json(out, &t.invalid_kinds, nids)?;
    writeln!(out, ",\"elapsed_s\":{:.6}}}", elapsed.as_secs_f64())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn seconds_have_three_significant_digits_at_least_to_the_millisecond() {
        let cases =
            [(0.000_271_4, "0.000271"), (0.021_34, "0.0213"), (0.213_4, "0.213"), (12.345_6, "12.346"), (0.0, "0.000")];
        for (secs, want) in cases {
            assert_eq!(seconds_text(secs), want, "{secs}");
        }
    }

    proptest! {
        /// Records are written straight into the buffer, with the key's and
        /// the NID's checks skipped when the URN's passed: read back, a JSON
        /// record holds what the library says of the URN, and a CSV record
        /// is the fields written one by one by the RFC 4180 writer.
        #[test]
        fn records_read_back_as_the_urn_key_and_nid(
            urn in "[uU][rR][nN]:[a-zA-Z0-9][a-zA-Z0-9-]{0,4}[a-zA-Z0-9]:([a-zA-Z0-9,;'()/+=:@!$&*._~-]|%[0-9a-fA-F]{2}){1,12}(\\?\\+[a-z,]{0,5})?(\\?=[a-z,]{0,5})?(#[a-z,]{0,5})?",
            path in "(?s).{0,12}",
            offset: u64,
            line: Option<u64>,
            rfc2141: bool,
        ) {
            let grammar = if rfc2141 { urnscan::Grammar::Rfc2141 } else { urnscan::Grammar::Rfc8141 };
            let urn = urnscan::parse(urn.as_bytes(), grammar);
            prop_assume!(urn.is_ok());
            let urn = urn.unwrap();
            let file = FileRef { index: 0, name: &path, path: None };
            let records = |format| Records {
                format,
                with_path: true,
                no_path: false,
                with_offset: true,
                with_line: line.is_some(),
                path_end: b':',
                many_inputs: true,
                ns_rules: false,
                mode: Mode::Occurrences,
                quiet: false,
            };
            let (mut out, at) = (Vec::new(), Location { offset, line });
            records(Format::Jsonl).urn(&mut out, file, at, &urn).unwrap();
            prop_assert_eq!(out.pop(), Some(b'\n'));
            let json: serde_json::Value = serde_json::from_slice(&out).unwrap();
            let key = urn.key();
            let nid = urn.nid().to_ascii_lowercase();
            let mut want = serde_json::json!({"path": path, "offset": offset, "urn": urn.as_str(), "key": key, "nid": nid});
            if let Some(line) = line {
                want["line"] = line.into();
            }
            prop_assert_eq!(&json, &want);
            out.clear();
            records(Format::Csv).urn(&mut out, file, at, &urn).unwrap();
            let mut want = Vec::new();
            let (offset, line) = (offset.to_string(), line.map(|l| l.to_string()));
            let mut fields = vec![path.as_bytes()];
            fields.extend(line.as_ref().map(String::as_bytes));
            fields.extend([offset.as_bytes(), urn.as_bytes(), key.as_bytes(), nid.as_bytes()]);
            write_csv_record(&mut want, &fields).unwrap();
            prop_assert_eq!(out, want);
        }
    }
}
