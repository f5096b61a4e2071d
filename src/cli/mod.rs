//! Command-line interface: argument definitions and dispatch.
//!
//! Exit codes follow ripgrep: 0 when the run selected something (for
//! `scan`, what it lists: URNs, unique URNs past `-d`, rejected
//! candidates; for `check`, every input is valid), 1 when nothing was
//! selected (or an input is invalid), 2 on an error. A closed output pipe (`urnscan ... | head`) ends the
//! program quietly with the status it would have had.

mod bench;
mod check;
mod color;
mod dedup;
#[cfg(test)]
mod documented;
mod gen;
mod interrupt;
mod kernel;
mod man;
mod output;
mod progress;
mod scan;

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use urnscan::job::Misread;
use urnscan::transcode::Utf16;

use color::{ColorWhen, Palette};
use progress::ProgressArgs;

/// Find, validate, deduplicate and count URNs (RFC 8141 / RFC 2141).
#[derive(Parser, Debug)]
#[command(name = "urnscan", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    /// When to use colour on stdout and stderr (each decided on its own).
    #[arg(long, global = true, value_enum, value_name = "WHEN", default_value_t = ColorWhen::Auto)]
    color: ColorWhen,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate URNs given as arguments, or one per line on stdin.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
    /// Find URNs in files, directories or stdin.
    #[command(after_help = SCAN_EXAMPLES)]
    Scan(ScanArgs),
    /// Deduplicate URNs given one per line, by RFC 8141 equivalence.
    #[command(after_help = DEDUP_EXAMPLES)]
    Dedup(DedupArgs),
    /// Generate a test corpus with planted URNs and its ground truth.
    #[command(after_help = GEN_EXAMPLES)]
    Gen(GenArgs),
    /// Measure how close to the memory-read floor urnscan runs on this machine.
    #[command(after_help = BENCH_EXAMPLES)]
    Bench(BenchArgs),
    /// Print a shell completion script to stdout.
    #[command(after_help = COMPLETIONS_EXAMPLES)]
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to stdout, or write one page per subcommand to a directory.
    #[command(after_help = MAN_EXAMPLES)]
    Man(ManArgs),
}

const COMPLETIONS_EXAMPLES: &str = "\
Examples:
  urnscan completions bash > ~/.local/share/bash-completion/completions/urnscan
  urnscan completions zsh > ~/.zfunc/_urnscan    with fpath+=~/.zfunc before compinit
  urnscan completions fish > ~/.config/fish/completions/urnscan.fish
  urnscan completions powershell >> $PROFILE
  urnscan completions elvish >> ~/.config/elvish/rc.elv

Exit status: 0 on success, 2 on an error.";

/// Options of `urnscan completions`.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

const MAN_EXAMPLES: &str = "\
Examples:
  urnscan man | man -l -                           read it now
  urnscan man --out-dir ~/.local/share/man/man1    install; then man urnscan-scan
  sudo urnscan man --out-dir /usr/local/share/man/man1

Exit status: 0 on success, 2 if a page could not be written.";

/// Options of `urnscan man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write urnscan.1 and urnscan-SUBCOMMAND.1 here instead of printing urnscan.1.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

const BENCH_EXAMPLES: &str = "\
Examples:
  urnscan bench big.log                   each phase, 1 thread and all cores
  urnscan bench --generate 1GiB           the same on generated text in memory
  urnscan bench --generate 256MiB --density 5000    URN-dense text
  urnscan bench --floor big.log           only the floor: read every byte
  urnscan bench --floor --once big.log    the floor as one whole process, to time with hyperfine
  urnscan bench --format json -j 2 --runs 5 big.log
  urnscan bench --lines urns.txt          a URN dataset as `urnscan dedup` reads it
  urnscan bench --kernel sse2 big.log     the rows with another search kernel (also --prefetch on|off)

Rows: floor (read every byte; + map: mapped afresh, as a new process
pays), search (SIMD `urn:` search + left boundary), search + validate
(the scan's events), + dedup (key table, as --unique and --stats), then
on top of + dedup (not of the row above): + NID stats (the table counted
by NID, as --stats), + sort (the table's entries in key order, as
--unique prints them), + sort by count (+ sort, then by count, as --sort
count). With --lines: line ends (found as `urnscan dedup` finds them), +
parse (each line judged, keyed and hashed), + dedup (each key counted),
and each on top of + dedup: + NID stats (as dedup --stats), + first-seen
output (the classes formatted in first-seen order, written nowhere), +
output by key and + output by count (as --sort key and count); for
reference the distinct lines in a plain hash set.
\"x floor\" = time / warm floor at the same thread count, a ratio of
times: 1.00 means as fast as reading the bytes, 0.80 faster (1.25x the
floor's throughput). Each row is the best of --runs runs, timed on its
own: on an input read in a few ms, rows can come out in any order (a
note on stderr says so); measure 256 MiB or more.

Exit status: 0 on success, 2 on an error.";

/// The options `bench --floor` would ignore, and so refuses. --once, which
/// needs --floor, names them too (clap would let `--lines --once` through
/// otherwise: see [`NOT_UNIQUE`]).
const NOT_WITH_FLOOR: &[&str] = &["lines", "rfc2141", "kernel", "prefetch"];

/// Options of `urnscan bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// File to measure (memory-mapped).
    #[arg(value_name = "FILE", required_unless_present = "generate", conflicts_with = "generate")]
    file: Option<PathBuf>,
    /// Measure a text corpus of this size generated in memory (e.g. 256MiB, 1GiB).
    #[arg(long, value_name = "SIZE", value_parser = gen::parse_size)]
    generate: Option<u64>,
    /// Planted URNs per MiB of the generated corpus.
    #[arg(long, default_value_t = 200, requires = "generate", conflicts_with_all = ["file", "lines"])]
    density: u32,
    /// Seed of the generated corpus.
    #[arg(long, default_value_t = 7, requires = "generate", conflicts_with_all = ["file", "lines"])]
    seed: u64,
    /// Runs per row; the best (least disturbed) is shown.
    #[arg(long, default_value_t = 3, value_name = "N")]
    runs: u32,
    /// Threads of the multi-threaded rows (default: one per core, at most 8 per CPU); 1 thread is always measured.
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
    /// Only the floor: the time to read every byte, nothing else (so no --lines, --rfc2141,
    /// --kernel or --prefetch).
    #[arg(long, conflicts_with_all = NOT_WITH_FLOOR)]
    floor: bool,
    /// With --floor: map the file, read every byte once with -j threads
    /// (default: all cores), unmap and exit, with no untimed pass first. Time
    /// this process with hyperfine beside `urnscan scan` for a whole-process
    /// floor.
    #[arg(long, requires = "floor", requires = "file", conflicts_with_all = [NOT_WITH_FLOOR, &["generate", "runs"]].concat())]
    once: bool,
    /// Judge by RFC 2141 (1997) instead of RFC 8141.
    #[arg(long)]
    rfc2141: bool,
    /// Measure FILE as a URN dataset, one per line, as `urnscan dedup` reads
    /// it: rows for finding the lines, + parse, + dedup, + NID stats, + the
    /// output in each order (first-seen, key, count), instead of the search
    /// rows, and for reference the distinct lines counted in a plain hash
    /// set (no validation, no key). No search kernel runs, so no --kernel or --prefetch.
    #[arg(long, conflicts_with_all = ["generate", "kernel", "prefetch"])]
    lines: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = bench::BenchFormat::Text)]
    format: bench::BenchFormat,
    #[command(flatten)]
    search: kernel::SearchArgs,
}

const GEN_EXAMPLES: &str = "\
Examples:
  urnscan gen --size 1GiB --seed 7 --truth truth.tsv -o corpus.txt     log/XML/JSON/prose text
  urnscan gen --size 64MiB --density 5000 -o dense.txt                 dense: 5,000 URNs per MiB
  urnscan gen --dataset --lines 10000000 --distinct 3000000 -o urns.txt   one URN per line

The truth file has one line per planted URN: offset, URN, key (with --dataset: key and count).
The same options always give the same bytes.

Exit status: 0 on success, 2 on an error.";

/// The options of `gen` for running text, which a dataset does not take.
/// The dataset's options name them as conflicts too, since clap would let
/// `gen --size 1GiB --lines 5` through otherwise (see [`NOT_UNIQUE`]).
const TEXT_ONLY: [&str; 3] = ["size", "density", "decoys"];

/// Options of `urnscan gen`.
#[derive(clap::Args, Debug)]
pub struct GenArgs {
    /// Size of the text corpus (e.g. 64MiB, 1GiB).
    #[arg(long, default_value = "64MiB", value_parser = gen::parse_size, conflicts_with = "dataset")]
    size: u64,
    /// Seed: the same seed and options give the same bytes.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// Planted URNs per MiB of text.
    #[arg(long, default_value_t = 200, conflicts_with = "dataset")]
    density: u32,
    /// Decoys (near-URNs that must not match) per MiB of text, in the slots the URNs leave (default: 50).
    #[arg(long, conflicts_with = "dataset")]
    decoys: Option<u32>,
    /// Write a URN dataset (one per line) instead of running text.
    #[arg(long)]
    dataset: bool,
    /// With --dataset: its lines.
    #[arg(long, default_value_t = 1_000_000, requires = "dataset", conflicts_with_all = TEXT_ONLY)]
    lines: u64,
    /// With --dataset: its distinct equivalence classes (default: 300000), at most its valid lines.
    #[arg(long, requires = "dataset", conflicts_with_all = TEXT_ONLY,
          value_parser = gen::distinct_arg)]
    distinct: Option<u64>,
    /// With --dataset: invalid lines per thousand.
    #[arg(long, default_value_t = 10, requires = "dataset", conflicts_with_all = TEXT_ONLY,
          value_parser = clap::value_parser!(u32).range(0..=1000))]
    invalid_per_mille: u32,
    /// Write the ground truth (TSV) here, not to the corpus's file; `-` is stdout (the corpus then
    /// needs -o FILE).
    #[arg(long, value_name = "FILE")]
    truth: Option<PathBuf>,
    /// Write the corpus here instead of stdout (`-`: stdout).
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

const SCAN_EXAMPLES: &str = "\
Examples:
  urnscan scan app.log                      every URN with its byte offset
  urnscan scan --unique logs/               unique URNs (by RFC 8141 equivalence) with counts
  urnscan scan --unique --format csv dump/  the same as CSV, with first occurrence
  urnscan scan -u --sort first-seen dump/   unique URNs in the order they first appear
  urnscan scan -u -d dump/                  only the URNs that occur more than once
  urnscan scan -u --sort count dump/ | head  the most frequent URNs
  urnscan scan --stats --format json big.xml  per-NID statistics as one JSON object
  urnscan scan --invalid export.json        candidates that are not valid URNs, and why
  urnscan scan --count dump/                how many URNs each file holds (path:count)
  urnscan scan -IN dump/                    the URNs alone, one per line (as grep -oh)
  urnscan scan -n app.log                   each URN's line number too (line:offset:urn)
  urnscan scan -l dump/                     the files that hold a URN (as grep -l)
  urnscan scan -m 1 -IN dump/               the first URN of each file (as grep -m)
  urnscan scan -q dump/ && echo found       the status alone, nothing printed (as grep -q)
  urnscan scan -u -g '*.xml' dump/          only the .xml files of dump/ (gitignore globs, as rg -g)
  urnscan scan -z logs/                     .gz and .zst files decompressed (by content, not name)
  urnscan scan -E utf-16le export.csv       UTF-16 without a byte-order mark (with one: nothing to add)
  urnscan scan --nid isbn,issn -u dump/     only ISBNs and ISSNs, each once
  zcat dump.gz | urnscan scan --format jsonl  a stdin-to-stdout filter
  tail -f app.log | urnscan scan -IN        each URN as its line is written (pipes are read live)
  find d -print0 | urnscan scan -u --files-from -  the files find lists, in one run
  urnscan scan -l -0 dump/ | xargs -0 ls -l  the files that hold a URN, whatever bytes their names hold

Text output prints paths as their bytes are (on Unix, as grep does), so a printed path names its
file; jsonl, json and csv must be UTF-8 and show a byte that is not UTF-8 as U+FFFD there.

Exit status: 0 if a URN was found (with --invalid: a rejected candidate; with --unique: a URN it
lists, -d or --min-count may leave none; with both, either), 1 if none, 2 if an input could not be
read (with -q: 0 once one is found).";

/// `--max-count`'s NUM: 1 or more, since a scan that may read nothing
/// of its inputs had better not be run.
fn max_count_arg(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("0 would read nothing: give 1 or more".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

/// The parser of input paths: any argument, an empty one too. clap's own
/// refuses `''` as a missing value; here it is a path that names no file,
/// reported as any missing input is (as `grep PATTERN ''` does), while the
/// other inputs are still read.
fn any_path() -> impl clap::builder::TypedValueParser<Value = PathBuf> {
    use clap::builder::TypedValueParser;
    clap::builder::OsStringValueParser::new().map(PathBuf::from)
}

/// Paths are printed (scan's `path:` prefix, dedup's rejects column)
/// unless there is only one input file (or stdin): a directory may hold
/// any number of files, so one directory counts as many, as in grep -r.
fn single_input(paths: &[PathBuf]) -> bool {
    match paths {
        [] => true,
        [one] => one.as_os_str() == "-" || !one.is_dir(),
        _ => false,
    }
}

/// The fewest occurrences a class needs to be printed: `--min-count N`,
/// or 2 with `-d`/`--repeated` (clap lets only one of them through), else 1.
fn min_count(min_count: Option<u64>, repeated: bool) -> u64 {
    min_count.unwrap_or(if repeated { 2 } else { 1 })
}

/// The options of `scan` that list occurrences or files and so cannot go
/// with --unique. clap lets an option that `requires` --unique through when
/// one of these is given instead (it takes the conflict as standing in for
/// the requirement: clap-rs/clap#4520), so the options that need --unique
/// also name them as conflicts, and `scan -c -d` is refused rather than
/// run with -d ignored. Likewise `bench`'s --density, --seed and --once.
const NOT_UNIQUE: [&str; 9] = [
    "count",
    "quiet",
    "max_count",
    "files_with_urns",
    "with_filename",
    "no_filename",
    "no_offset",
    "line_number",
    "null",
];

/// Options of `urnscan scan`.
#[derive(clap::Args, Debug)]
pub struct ScanArgs {
    /// Files or directories to scan; none or `-` reads stdin.
    #[arg(value_name = "PATH", value_parser = any_path())]
    paths: Vec<PathBuf>,
    /// One line per distinct URN (RFC 8141 equivalence), sorted by key:
    /// count and first-seen form.
    #[arg(short, long)]
    unique: bool,
    /// With --unique: the order of the lines, by equivalence key (byte
    /// order, as `sort -u`), by first occurrence (inputs in the order
    /// given, then offset; no sort, so faster on many distinct URNs), or by
    /// count (most first, equal counts by key, as `sort | uniq -c | sort -rn`).
    #[arg(long, value_enum, default_value_t = dedup::SortOrder::Key, requires = "unique", conflicts_with_all = NOT_UNIQUE)]
    sort: dedup::SortOrder,
    /// With --unique: only the URNs that occur at least N times (each still with its whole count;
    /// --stats counts them all).
    #[arg(long, value_name = "N", requires = "unique", conflicts_with = "repeated", conflicts_with_all = NOT_UNIQUE)]
    min_count: Option<u64>,
    /// With --unique: only the URNs that occur more than once, as `uniq -d` (--min-count 2).
    #[arg(short = 'd', long, requires = "unique", conflicts_with_all = NOT_UNIQUE)]
    repeated: bool,
    /// Per-NID statistics and totals; in text the totals end with `elapsed` (seconds) and `GB/s`
    /// rows, in JSON with "elapsed_s": the only part of the output that differs between runs of
    /// the same input (csv: the NID table alone).
    #[arg(short, long)]
    stats: bool,
    /// Only count, as `grep -c` does: the number of URNs of each input as
    /// `path:count` (inputs with none left out), or the number alone for a
    /// single input (0 too). With --invalid, counts the rejected
    /// candidates instead.
    #[arg(short, long, conflicts_with_all = ["unique", "stats"])]
    count: bool,
    /// List candidates that are not valid URNs (path, offset, kind, and the candidate's text up
    /// to where it ends, at most 64 bytes: in text output with control characters as spaces, in
    /// jsonl and csv as they are, escaped or quoted).
    #[arg(long)]
    invalid: bool,
    /// Only URNs of these namespaces (NIDs, any case; repeat the option or
    /// separate them with commas): the others are not listed, counted or
    /// deduplicated, and --stats gives their number as `excluded`.
    #[arg(long = "nid", value_name = "NID", value_delimiter = ',', conflicts_with = "invalid")]
    nids: Vec<String>,
    /// Output format (`json` is for --stats: one object).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Print nothing: the exit status alone says whether a URN was found
    /// (with --invalid: a rejected candidate), as `grep -q`. The run stops
    /// as soon as one is found (in a file or a stream, after the part
    /// read that holds it), and then exits with 0 even if an input before
    /// it could not be read; errors still go to stderr.
    #[arg(short = 'q', long, conflicts_with_all = ["unique", "stats", "count", "files_with_urns"])]
    quiet: bool,
    /// Stop reading each input after its NUM-th URN (with --invalid: rejected candidate), as
    /// `grep -m`: at most NUM records per input, and with --count at most NUM per input.
    #[arg(short = 'm', long, value_name = "NUM", value_parser = max_count_arg, conflicts_with_all = ["unique", "stats"])]
    max_count: Option<u64>,
    /// Only the paths of the inputs that hold a URN (with --invalid: a
    /// rejected candidate), one per line, as `grep -l`; stdin is `-`. Each
    /// input is read only as far as its first one.
    #[arg(short = 'l', long, visible_alias = "files-with-matches", conflicts_with_all = ["unique", "stats", "count"])]
    files_with_urns: bool,
    /// Print the path before each text record, also for a single file or
    /// stdin (`-`), as `grep -H`.
    #[arg(short = 'H', long, overrides_with = "no_filename", conflicts_with_all = ["unique", "stats", "files_with_urns"])]
    with_filename: bool,
    /// Never print the path before a text record: `-IN` prints the URNs
    /// alone, one per line, as `grep -oh`.
    #[arg(short = 'I', long, overrides_with = "with_filename", conflicts_with_all = ["unique", "stats", "files_with_urns"])]
    no_filename: bool,
    /// Leave out the byte offset before each text record (occurrences and --invalid).
    #[arg(short = 'N', long, conflicts_with_all = ["unique", "stats", "count", "files_with_urns"])]
    no_offset: bool,
    /// Show the line number of each occurrence or rejected candidate (from 1; lines end at `\n`):
    /// `path:line:offset:urn` in text, as `grep -nbo`, and a `line` field in jsonl and csv.
    #[arg(short = 'n', long, conflicts_with_all = ["unique", "stats", "count", "files_with_urns"])]
    line_number: bool,
    /// End each printed path with a NUL byte instead of `:` or a newline
    /// (text, which prints each path's own bytes; for `xargs -0` and paths with any bytes), as
    /// `grep -Z`. It ends paths only: with -I, which prints none, nothing changes.
    #[arg(short = '0', long, conflicts_with_all = ["unique", "stats"])]
    null: bool,
    /// Judge by RFC 2141 (1997) instead of RFC 8141.
    #[arg(long)]
    rfc2141: bool,
    /// With --unique and --stats (and the key field of jsonl and csv), also merge what a
    /// namespace's own RFC declares equivalent, as `urnscan dedup --ns-rules` does: uuid (RFC 4122
    /// §3) and ietf (RFC 2648 §2) in any case. Refused where the output shows no key: a text
    /// listing of occurrences, -c, -l, -q, or --invalid without --unique or --stats.
    #[arg(long)]
    ns_rules: bool,
    /// Keep trailing punctuation (`.` `,` `;` `:` `!` `?` `'` and unbalanced `)`), and a closing run of
    /// `*`, `_` or `~` after the same run before `urn:` (Markdown emphasis).
    #[arg(long)]
    no_trim: bool,
    /// Memory-map files: auto maps regular files of 1 MiB or more.
    #[arg(long, value_enum, default_value_t = MmapArg::Auto)]
    mmap: MmapArg,
    #[command(flatten)]
    inputs: InputArgs,
    /// Honour .gitignore and .ignore files (in a git repository or not) and skip hidden files in
    /// directories.
    #[arg(long)]
    respect_ignore: bool,
    /// Follow symbolic links in directories.
    #[arg(short = 'L', long)]
    follow: bool,
    /// Worker threads (default: one per core, at most 8 per CPU). Output is the same for any value, but
    /// for the time taken that --stats ends with.
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
    /// Bytes per parallel chunk, at most (tests and tuning; output is the same for any value).
    #[arg(long, value_name = "BYTES", hide = true)]
    chunk_size: Option<usize>,
    #[command(flatten)]
    search: kernel::SearchArgs,
    #[command(flatten)]
    progress: ProgressArgs,
}

/// Which inputs `scan` and `dedup` read, and how they treat compressed and
/// binary ones.
#[derive(clap::Args, Debug)]
pub struct InputArgs {
    /// Only the files of directories whose path matches GLOB (gitignore syntax, as ripgrep's -g;
    /// `*.xml` at any depth, `dump/2024/**` from the working directory); `!GLOB` leaves out the
    /// files and directories that match. Repeat for more; the last glob that matches decides.
    /// Files named on the command line or listed by --files-from are always read.
    #[arg(short = 'g', long = "glob", value_name = "GLOB")]
    globs: Vec<String>,
    /// As --glob, ignoring case (`*.xml` also takes `A.XML`).
    #[arg(long = "iglob", value_name = "GLOB")]
    iglobs: Vec<String>,
    /// Decompress gzip and zstd inputs (files, files in directories, stdin), recognised by their first
    /// bytes (1f 8b, 28 b5 2f fd), not their names; offsets and line numbers are those of the
    /// decompressed data. Without it, scan reads such inputs as they are, and a hint at the end
    /// says how many and names the first three; dedup skips each with an error (status 2).
    #[arg(short = 'z', long)]
    decompress: bool,
    /// Binary files (a NUL byte in their first 8 KiB, as grep decides): scan them too, or skip them.
    #[arg(long, value_enum, default_value_t = BinaryArg::Scan)]
    binary: BinaryArg,
    #[command(flatten)]
    encoding: EncodingArgs,
    /// Also read the paths listed in LIST (`-`: stdin), after those given: one per line (CR LF
    /// too), or NUL-separated when LIST holds a NUL byte (`find -print0`). One run, however many
    /// paths, where `xargs` would split them over several runs, each with its own unique URNs. An
    /// empty LIST adds no path: with none given either, the run reads nothing (not stdin) and finds
    /// nothing, as when `find` matched no file.
    #[arg(long, value_name = "LIST")]
    files_from: Option<PathBuf>,
}

impl InputArgs {
    /// Refuses what the paths `given` cannot go with (see
    /// `Command::refuse_combinations`).
    fn refuse_combinations(&self, given: &[PathBuf]) -> anyhow::Result<()> {
        let paths_from_stdin = self.files_from.as_ref().is_some_and(|list| list.as_os_str() == "-");
        if paths_from_stdin && given.iter().any(|p| p.as_os_str() == "-") {
            anyhow::bail!("--files-from - reads the paths from stdin, so stdin cannot be an input too");
        }
        Ok(())
    }

    /// The paths `given` and those of `--files-from`, in that order.
    fn paths(&self, given: &[PathBuf]) -> anyhow::Result<Paths> {
        use anyhow::Context;
        let Some(list) = &self.files_from else { return Ok(Paths { list: given.to_vec(), stdin_if_none: true }) };
        let bytes = if list.as_os_str() == "-" {
            let mut bytes = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes).map(|_| bytes)
        } else {
            std::fs::read(list)
        }
        .with_context(|| format!("cannot read --files-from {}", list.display()))?;
        let list = given.iter().cloned().chain(listed_paths(&bytes)).collect();
        Ok(Paths { list, stdin_if_none: false })
    }

    /// The --glob and --iglob filters, anchored at the working directory
    /// (as ripgrep anchors them).
    fn globs(&self) -> anyhow::Result<urnscan::source::Globs> {
        let root = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        Ok(urnscan::source::Globs::new(&root, &self.globs, &self.iglobs)?)
    }

    fn encoding(&self) -> urnscan::transcode::Encoding {
        self.encoding.encoding()
    }

    fn binary_policy(&self) -> urnscan::source::BinaryPolicy {
        match self.binary {
            BinaryArg::Scan => urnscan::source::BinaryPolicy::Scan,
            BinaryArg::Skip => urnscan::source::BinaryPolicy::Skip,
        }
    }
}

/// What a run reads: the paths given, then those of `--files-from`.
struct Paths {
    list: Vec<PathBuf>,
    /// Whether no path at all means stdin: not after a `--files-from`
    /// list, where no path means that nothing matched (`find -newer` when
    /// nothing changed), and stdin may have been the list itself.
    stdin_if_none: bool,
}

impl Paths {
    /// Whether the run reads stdin for want of any path.
    fn stdin_only(&self) -> bool {
        self.list.is_empty() && self.stdin_if_none
    }

    /// The inputs the paths name, in input order (none for an empty
    /// `--files-from` list).
    fn expand(
        &self,
        walk: &urnscan::source::WalkOptions,
    ) -> Vec<Result<urnscan::source::Input, urnscan::source::InputError>> {
        if self.list.is_empty() && !self.stdin_if_none {
            return Vec::new();
        }
        urnscan::source::expand(&self.list, walk)
    }
}

/// The paths of a `--files-from` list: split at NUL bytes when it holds
/// one (no path holds a NUL, while a name may hold a line break), else at
/// line ends; empty entries are skipped. A name's bytes are kept as they
/// are on Unix, where a path is bytes, but for what a list saved on
/// Windows adds: a UTF-8 byte-order mark before the first path (Notepad's
/// "UTF-8 with BOM") and, when every line ends in CR LF, the CRs. (A name
/// that ends in CR is legal on Unix; in a list of such names alone, each
/// loses its CR. Without this, every path of a CRLF list was reported
/// missing.)
fn listed_paths(bytes: &[u8]) -> Vec<PathBuf> {
    let bytes = urnscan::transcode::without_utf8_bom(bytes);
    let separator = if bytes.contains(&0) { 0 } else { b'\n' };
    let crlf = separator == b'\n'
        && bytes.contains(&b'\n')
        && memchr::memchr_iter(b'\n', bytes).all(|i| i > 0 && bytes[i - 1] == b'\r');
    bytes
        .split(|&b| b == separator)
        .map(|p| if crlf { p.strip_suffix(b"\r").unwrap_or(p) } else { p })
        .filter(|p| !p.is_empty())
        .map(path_of_bytes)
        .collect()
}

#[cfg(unix)]
fn path_of_bytes(bytes: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
}

#[cfg(not(unix))]
fn path_of_bytes(bytes: &[u8]) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
}

/// `--binary` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum BinaryArg {
    /// Scan binary files like text (URNs do appear in binary dumps).
    Scan,
    /// Skip binary files (not an error; `scan --stats` and `dedup` count them in a `binary` row).
    Skip,
}

/// `--encoding`, for the commands that read inputs as text.
#[derive(clap::Args, Debug)]
pub struct EncodingArgs {
    /// How input bytes are taken as text. By default an input that starts with a UTF-16
    /// byte-order mark (ff fe, fe ff: Windows exports), also once -z has decompressed it, is
    /// transcoded to UTF-8; offsets are then those of the UTF-8 text, without the mark. Other
    /// inputs are read as their bytes: URNs are ASCII, the same bytes in UTF-8, Latin-1 and the
    /// like. A hint at the end names files that look like UTF-16 without a mark.
    #[arg(short = 'E', long, value_enum, value_name = "ENCODING", default_value_t = EncodingArg::Auto)]
    encoding: EncodingArg,
}

impl EncodingArgs {
    pub fn encoding(&self) -> urnscan::transcode::Encoding {
        self.encoding.encoding()
    }
}

impl EncodingArg {
    pub fn encoding(self) -> urnscan::transcode::Encoding {
        use urnscan::transcode::Encoding;
        match self {
            EncodingArg::Auto => Encoding::Auto,
            EncodingArg::None => Encoding::None,
            EncodingArg::Utf16le => Encoding::Utf16Le,
            EncodingArg::Utf16be => Encoding::Utf16Be,
        }
    }
}

/// `--encoding` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EncodingArg {
    /// UTF-16 if the input starts with its byte-order mark, else the bytes as they are.
    Auto,
    /// The bytes as they are, whatever they start with (UTF-16 is then binary).
    None,
    /// UTF-16 little-endian, for inputs without a mark (a mark, if present, still decides).
    #[value(name = "utf-16le", alias = "utf16le")]
    Utf16le,
    /// UTF-16 big-endian, for inputs without a mark (a mark, if present, still decides).
    #[value(name = "utf-16be", alias = "utf16be")]
    Utf16be,
}

/// `--mmap` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MmapArg {
    /// Map regular files of 1 MiB or more.
    Auto,
    /// Map every regular file.
    Always,
    /// Never map; read or stream.
    Never,
}

const DEDUP_EXAMPLES: &str = "\
Examples:
  urnscan dedup urns.txt > unique.txt            each class once, as first seen
  urnscan dedup --count --sort key a.txt b.txt   count<TAB>urn, by equivalence key
  urnscan dedup --keys --rejects bad.tsv in.txt  keys; invalid lines to bad.tsv
  urnscan dedup -q --rejects - in.txt            only the invalid lines, as TSV on stdout
  urnscan dedup --format jsonl --ns-rules in.txt  key, urn, count, nid, path, line
  urnscan dedup -z urns.txt.gz part2.zst        compressed inputs, decoded in-process
  urnscan dedup --nid uuid --sort key urns.txt  only one namespace's classes
  urnscan dedup -c -d urns.txt                  the classes of more than one line, with counts
  urnscan dedup -c --sort count urns.txt        the classes with the most lines first
  urnscan dedup --stats urns.txt                lines and distinct URNs per namespace (NID)
  urnscan dedup --stats --format json urns.txt  the same and the summary's counts, one JSON object
  zcat u.gz | urnscan dedup --memory-limit 1GiB  spill above 1 GiB of key tables

Each line is one URN: surrounding ASCII whitespace and a trailing CR are ignored, empty lines are
skipped, and so is a UTF-8 byte-order mark before an input's first line (as Notepad writes it).
Invalid lines go to stderr as FILE:LINE: kind: message, at byte N of \"text\" (FILE is - for stdin;
the text is the line's first 120 bytes: visible characters as themselves, é too; a byte that is not
UTF-8, a control, a space other than U+0020, an invisible character such as U+200B or U+FEFF, a
combining mark, \\ and \" escaped byte by byte: \\xff, \\t, \\xc2\\xa0 for a no-break space),
or with --rejects to a TSV file ([path<TAB>]line<TAB>kind<TAB>text: the path column unless the
input is one file or stdin, so a directory, even of one file, has it; the text is the trimmed line;
with --rejects - the rows go to stdout, instead of the classes;
in the path (its own bytes) and the text, a tab, line feed, carriage return and backslash are
written \\t, \\n, \\r and \\\\, so a row splits at every tab); then a summary of the counts.
--quiet hides both on stderr but never skips the --rejects file. To find URNs inside running text
(logs, XML, JSON), use `urnscan scan --unique`: dedup judges each line whole. On stderr, once 20
lines of an input fail to start with urn: and they are more than half of its lines so far, a hint
says so, and its further such lines are counted, not shown (--rejects lists them all).

Exit status: 0 on success (also when no URN is left), 1 with --strict if a line is invalid,
2 if an input could not be read (the other inputs are still processed).";

/// Options of `urnscan dedup`.
#[derive(clap::Args, Debug)]
pub struct DedupArgs {
    /// Files of one URN per line (directories: their files, walked as `scan` walks them); none or
    /// `-` reads stdin.
    #[arg(value_name = "FILE", value_parser = any_path())]
    files: Vec<PathBuf>,
    #[command(flatten)]
    inputs: InputArgs,
    /// Judge by RFC 2141 (1997) instead of RFC 8141.
    #[arg(long)]
    rfc2141: bool,
    /// Output order: by first occurrence, by equivalence key (byte order), or
    /// by count (most lines first, equal counts by key).
    #[arg(long, value_enum, default_value_t = dedup::SortOrder::FirstSeen)]
    sort: dedup::SortOrder,
    /// Text output: prefix each class with its number of lines (count<TAB>urn). No effect with
    /// --format jsonl, json or csv, whose records always carry the count.
    #[arg(short, long)]
    count: bool,
    /// Text output: print the equivalence key instead of the first-seen form. No effect with
    /// --format jsonl, json or csv, whose records always carry both.
    #[arg(short, long)]
    keys: bool,
    /// Only the classes of at least N lines (the summary's `distinct` still counts them all).
    #[arg(long, value_name = "N", conflicts_with = "repeated")]
    min_count: Option<u64>,
    /// Only the classes of more than one line, as `uniq -d` (--min-count 2).
    #[arg(short = 'd', long)]
    repeated: bool,
    /// Instead of the classes, one row per namespace: the NID, its NID class (RFC 8141 §5), its lines
    /// (occurrences) and its equivalence classes (unique), most lines first; in text a table, in jsonl
    /// one object per NID, in csv a record per NID, in json one object with the summary's counts and
    /// the rows. The summary on stderr is unchanged.
    #[arg(long, conflicts_with_all = ["sort", "count", "keys", "min_count", "repeated"])]
    stats: bool,
    /// Output format; jsonl and csv give key, urn, count, nid, path and line of the first occurrence.
    #[arg(long, value_enum, default_value_t = dedup::DedupFormat::Text)]
    format: dedup::DedupFormat,
    /// Write invalid lines to FILE (TSV: [path], line, kind, text; tabs, line ends and backslashes
    /// escaped) instead of stderr; not one of the inputs. `-` writes them to stdout instead of the
    /// classes (so --stats, --count, --keys, -d, --min-count, --sort and a --format other than
    /// text are refused with it: the rows are TSV).
    #[arg(long, value_name = "FILE")]
    rejects: Option<PathBuf>,
    /// No reject messages, no summary and no default progress bar on stderr (a --rejects file is still
    /// written).
    #[arg(short, long)]
    quiet: bool,
    /// Exit with status 1 if any line is not a valid URN.
    #[arg(long)]
    strict: bool,
    /// Also merge what a namespace's own RFC declares equivalent (applied to the RFC 8141 key, so it only
    /// merges): uuid (RFC 4122 §3: hex digits are case-insensitive, so an 8-4-4-4-12 UUID is lower-cased) and
    /// ietf (RFC 2648 §2: the ABNF literals rfc, fyi, std, bcp, id, mtg are case-insensitive, RFC 2234 §2.3,
    /// so that token is lower-cased).
    #[arg(long)]
    ns_rules: bool,
    /// Only URNs of these namespaces (NIDs, any case; repeat the option or separate them with
    /// commas): lines of other namespaces are valid but left out, and counted as `excluded` in the
    /// summary.
    #[arg(long = "nid", value_name = "NID", value_delimiter = ',')]
    nids: Vec<String>,
    /// Spill the key tables to temporary files when they exceed SIZE (e.g. 512MiB); the output is the same.
    #[arg(long, value_name = "SIZE", value_parser = gen::parse_size)]
    memory_limit: Option<u64>,
    /// With --memory-limit: the directory for spill files (default: $TMPDIR, else /tmp). Without
    /// a limit nothing spills, so it is refused.
    #[arg(long, value_name = "DIR", requires = "memory_limit")]
    temp_dir: Option<PathBuf>,
    /// Worker threads (default: one per core, at most 8 per CPU). Output is the same for any value.
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
    /// Bytes per block of input (tests and tuning; output is the same for any value).
    #[arg(long, value_name = "BYTES", hide = true)]
    block_size: Option<usize>,
    #[command(flatten)]
    progress: ProgressArgs,
}

const CHECK_EXAMPLES: &str = "\
Examples:
  urnscan check urn:ietf:rfc:8141 'URN:ISBN:0451450523?=lang=en#p3'
  urnscan check --format jsonl < datasets/urns/valid.txt
  urnscan check --rfc2141 urn:foo:a123,456
  urnscan check --invalid < list.txt    only the invalid lines, each with a caret

Arguments are URNs, never files: a list of URNs is read on stdin. An argument that is no URN and
names a file or directory gets a hint on stderr: `urnscan scan PATH` finds the URNs in files, and
`urnscan dedup PATH` reads files of one URN per line. Each input is judged as it is: a line with
spaces or tabs around a URN is invalid (dedup trims them), and a hint on stderr counts such lines.

-E says how the lines of stdin are encoded; with URNs given as arguments it is refused.

Exit status: 0 if every input is valid, 1 if any is invalid, 2 on an error. When the reader of
stdout leaves early (`| head`), 1 if an input judged so far was invalid.";

/// Options of `urnscan check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Judge by RFC 2141 (1997) instead of RFC 8141.
    #[arg(long)]
    rfc2141: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckFormat::Text)]
    format: CheckFormat,
    /// Show only the inputs that are not valid URNs (the exit status still says whether there
    /// were any).
    #[arg(long)]
    invalid: bool,
    /// URNs to check; none (or `-` alone) means one per line on stdin (a trailing CR, and a UTF-8
    /// byte-order mark before the first line, are not part of a line).
    #[arg(value_name = "URN")]
    urns: Vec<OsString>,
    /// How the lines of stdin are taken as text. By default stdin that starts with a UTF-16
    /// byte-order mark (ff fe, fe ff: Windows exports) is transcoded to UTF-8; other input is read
    /// as its bytes: URNs are ASCII, the same bytes in UTF-8, Latin-1 and the like. A hint at the
    /// end says when stdin looks like UTF-16 without a mark. Any but auto is refused with URN
    /// arguments, which are judged as given.
    #[arg(short = 'E', long, value_enum, value_name = "ENCODING", default_value_t = EncodingArg::Auto)]
    encoding: EncodingArg,
    /// Worker threads for lines on stdin (default: one per core, at most 8 per CPU). Output is the same for any value.
    #[arg(short = 'j', long, value_name = "N")]
    threads: Option<usize>,
    /// Bytes of stdin read per round (tests and tuning; output is the same for any value).
    #[arg(long, value_name = "BYTES", hide = true)]
    block_size: Option<usize>,
}

/// `check --format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckFormat {
    /// One line per input: parts, or the error with a caret.
    Text,
    /// One JSON object per input (an error's message on one line, without the caret).
    Jsonl,
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Jsonl,
    /// Comma-separated values with a header row.
    Csv,
    /// JSON (for `scan --stats`: one object; otherwise as jsonl).
    Json,
}

fn grammar(rfc2141: bool) -> urnscan::Grammar {
    if rfc2141 {
        urnscan::Grammar::Rfc2141
    } else {
        urnscan::Grammar::Rfc8141
    }
}

/// An input error as `scan` and `dedup` print it after `urnscan: `: the
/// library's message (the path and what failed), then what became of the
/// input and, where there is something to do, what: `d.txt/x: Not a
/// directory (os error 20); skipped, the other inputs were read`. A file
/// that shrank while mapped gets what to do about it (its results are
/// incomplete, the library says). A corrupt archive has its check in the
/// library's message (``(check the archive with `gzip -t`)``) and gets what
/// became of it: cut short where the damage is, or skipped if nothing of
/// it could be decoded. Of a run's only input, nothing is said of others.
pub struct Unreadable<'a> {
    pub error: &'a urnscan::source::InputError,
    /// Whether some of the input was read before the error (a read error
    /// after the open): it was cut short rather than skipped.
    pub cut_short: bool,
    /// Whether the command has `--mmap` (`scan` does): a file that shrank
    /// while mapped can be read instead.
    pub mmap_flag: bool,
    /// Whether the run has other inputs, which were read all the same (a
    /// run of one input says nothing of others).
    pub others: bool,
}

impl Unreadable<'_> {
    /// What to do about a file that shrank while mapped.
    fn shrank_advice(&self) -> &'static str {
        match self.mmap_flag {
            true => "; scan a copy that is not being written, or use --mmap never",
            false => "; use a copy that is not being written",
        }
    }
}

impl std::fmt::Display for Unreadable<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        use std::io::ErrorKind;
        write!(f, "{}", self.error)?;
        if self.error.shrank() {
            return f.write_str(self.shrank_advice());
        }
        match self.error.error.kind() {
            // `scan urn:isbn:…`: a URN where a file was expected.
            ErrorKind::NotFound if self.error.path.get(..4).is_some_and(|s| s.eq_ignore_ascii_case("urn:")) => {
                f.write_str("; to validate a URN given as an argument, use `urnscan check URN`")?
            }
            ErrorKind::NotFound => f.write_str("; check the path")?,
            ErrorKind::PermissionDenied => f.write_str("; check its permissions")?,
            _ => {}
        }
        match (self.cut_short, self.others) {
            (true, true) => f.write_str("; cut short there (what came before it was read), the other inputs were read"),
            (true, false) => f.write_str("; cut short there (what came before it was read)"),
            (false, true) => f.write_str("; skipped, the other inputs were read"),
            (false, false) => Ok(()),
        }
    }
}

/// The inputs of a run read as their bytes although their first bytes
/// asked for another reading ([`urnscan::job::Misread`]), for the hints
/// `scan` and `dedup` end with on stderr: those bytes show few URNs or
/// none, and nothing else would tell the user why the rest are missing.
/// Each hint says how many there were and names the first of them (at
/// most [`MISREAD_NAMED`]), so that in a directory of many files the user
/// sees which.
#[derive(Debug, Default)]
pub struct Misreads {
    compressed: Named,
    utf16le: Named,
    utf16be: Named,
}

/// How many inputs, and the first of their names.
#[derive(Debug, Default)]
struct Named {
    count: u64,
    names: Vec<String>,
}

/// How many inputs of each kind a hint names.
const MISREAD_NAMED: usize = 3;

impl Misreads {
    /// Counts input `name`.
    pub fn add(&mut self, name: &str, misread: Misread) {
        let named = match misread {
            Misread::Compressed => &mut self.compressed,
            Misread::Utf16(Utf16::Le) => &mut self.utf16le,
            Misread::Utf16(Utf16::Be) => &mut self.utf16be,
        };
        named.count += 1;
        if named.names.len() < MISREAD_NAMED {
            named.names.push(name.to_owned());
        }
    }

    /// One line for each kind of input counted. (Under `--binary skip`,
    /// archives and UTF-16 files were mostly skipped as binary rather than
    /// read, hence "not decompressed" and "not transcoded".)
    pub fn hints(&self) -> Vec<String> {
        let mut hints = Vec::new();
        if self.compressed.count > 0 {
            let (start, read, them) = self.compressed.by_count(("starts", "was", "it"), ("start", "were", "them"));
            hints.push(format!(
                "hint: {} {start} with a gzip or zstd header and {read} not decompressed: add -z to decompress {them}",
                self.compressed.inputs()
            ));
        }
        for (named, order, flag) in [(&self.utf16le, Utf16::Le, "utf-16le"), (&self.utf16be, Utf16::Be, "utf-16be")] {
            if named.count > 0 {
                let (look, read, them) = named.by_count(("looks", "was", "it"), ("look", "were", "them"));
                hints.push(format!(
                    "hint: {} {look} like {} text without a byte-order mark and {read} not transcoded: \
                     add -E {flag} to read {them} as text",
                    named.inputs(),
                    order.name()
                ));
            }
        }
        hints
    }
}

impl Named {
    /// `one` or `many`, as the count asks.
    fn by_count<T>(&self, one: T, many: T) -> T {
        if self.count == 1 {
            one
        } else {
            many
        }
    }

    /// "1 input (a.gz)", "4 inputs (a.gz, b.gz, c.zst and 1 more)".
    fn inputs(&self) -> String {
        let inputs = self.by_count("input", "inputs");
        // Standard input is `-` in the records, but "(-)" reads as a typo.
        let shown: Vec<&str> = self.names.iter().map(|name| if name == "-" { "stdin" } else { name }).collect();
        let mut names = shown.join(", ");
        let more = self.count.saturating_sub(self.names.len() as u64);
        if more > 0 && !self.names.is_empty() {
            names.push_str(&format!(" and {more} more"));
        }
        if names.is_empty() {
            format!("{} {inputs}", self.count)
        } else {
            format!("{} {inputs} ({names})", self.count)
        }
    }
}

/// The filter of `--nid` (none when not given), its NIDs checked against
/// the grammar of the run.
fn nid_filter(nids: &[String], rfc2141: bool) -> anyhow::Result<Option<urnscan::NidFilter>> {
    use anyhow::Context;
    if nids.is_empty() {
        return Ok(None);
    }
    // `--nid 'isbn, issn'`: no NID holds a space, so spaces around one are
    // only how it was typed.
    let nids = nids.iter().map(|n| n.trim_matches(' '));
    urnscan::NidFilter::new(nids, grammar(rfc2141)).map(Some).context("invalid --nid")
}

/// Runs `f` on a rayon pool of `threads` workers (default: one per core;
/// see [`worker_threads`]).
fn with_threads<T: Send>(
    threads: Option<usize>,
    ui: Ui,
    f: impl FnOnce() -> anyhow::Result<T> + Send,
) -> anyhow::Result<T> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(worker_threads(threads, ui).unwrap_or(0)).build()?;
    pool.install(f)
}

/// The most worker threads a run starts, per CPU the system offers. The
/// output is the same for any number, and past a few per CPU threads only
/// cost time and memory: on 2 CPUs, `scan -j 10000` of a 22-byte file took
/// 152 s, and `-j 99999` aborted when the threads' stacks could not be
/// allocated.
const MAX_THREADS_PER_CPU: usize = 8;

/// `-j N` as a run uses it: `None` when not given (one per core), else `N`
/// up to [`MAX_THREADS_PER_CPU`] per CPU, with a note on stderr when it is
/// lowered. 0 stays 0, which rayon also takes as one per core.
fn worker_threads(requested: Option<usize>, ui: Ui) -> Option<usize> {
    let cpus = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let most = cpus.saturating_mul(MAX_THREADS_PER_CPU);
    let n = requested?;
    if n <= most {
        return Some(n);
    }
    ui.note(format_args!("-j {n} is more than {MAX_THREADS_PER_CPU} threads per CPU ({cpus} here): using {most}"));
    Some(most)
}

/// Colour decisions for the two output streams.
#[derive(Clone, Copy, Debug)]
pub struct Ui {
    /// For stdout.
    out: Palette,
    /// For stderr.
    err: Palette,
}

impl Ui {
    fn detect(when: ColorWhen) -> Ui {
        Ui { out: Palette::detect(when, &std::io::stdout()), err: Palette::detect(when, &std::io::stderr()) }
    }

    /// `urnscan: MESSAGE` on stderr, the prefix in the error colour.
    fn error(self, message: std::fmt::Arguments<'_>) {
        use std::io::Write;
        let line = format!("{} {message}\n", self.err.error_prefix());
        let _ = color::stream(std::io::stderr().lock(), self.err).write_all(line.as_bytes());
    }

    /// `urnscan: MESSAGE` on stderr, uncoloured: something the run changed
    /// and goes on with, not an error.
    fn note(self, message: std::fmt::Arguments<'_>) {
        say(format_args!("urnscan: {message}"));
    }
}

/// What clap has to say instead of a run: help or the version on stdout
/// (status 0), or a usage error on stderr (status 2). clap's own `exit`
/// ignores a failed write, so `urnscan --help > /dev/full` exited 0 with
/// nothing written; here output that cannot be written is an error
/// (status 2), as for any other output, except a closed pipe (`urnscan
/// --help | head -1`), which ends the program quietly with the status it
/// would have had, as [`run`] treats one.
fn parse_error(err: &clap::Error) -> ExitCode {
    use std::io::Write;
    let status = ExitCode::from(u8::try_from(err.exit_code()).unwrap_or(2));
    let printed = err.print().and_then(|()| if err.use_stderr() { Ok(()) } else { std::io::stdout().flush() });
    match printed {
        Ok(()) => status,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => status,
        Err(e) => {
            let stream = if err.use_stderr() { "standard error" } else { "standard output" };
            Ui::detect(ColorWhen::Auto).error(format_args!("cannot write to {stream}: {e}"));
            ExitCode::from(2)
        }
    }
}

impl Command {
    /// Refuses the combinations of options that clap's declarations cannot
    /// express, as they depend on other options' values (`--format`,
    /// whether `-` alone is given): each subcommand's own rules, checked
    /// before anything is read or written. The documentation's commands
    /// are checked against them too (`documented`).
    fn refuse_combinations(&self) -> anyhow::Result<()> {
        match self {
            Command::Check(args) => check::refuse_combinations(args),
            Command::Scan(args) => scan::refuse_combinations(args),
            Command::Dedup(args) => dedup::refuse_combinations(args),
            Command::Gen(args) => gen::refuse_combinations(args),
            Command::Bench(_) | Command::Completions(_) | Command::Man(_) => Ok(()),
        }
    }
}

/// A file's identity, its device and inode, so that two names of one file
/// (a hard link, a symbolic link, `./a` and `a`, `d/../a`) are told as
/// one. Used to refuse an output file that is also an input, which creating
/// it would empty before it is read. `None` where it cannot be known or
/// nothing can be lost: a file that does not exist, one that is no regular
/// file (`/dev/null` read and written is harmless), or a system other
/// than Unix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FileId(u64, u64);

impl FileId {
    #[cfg(unix)]
    fn of(meta: &std::fs::Metadata) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        meta.is_file().then(|| FileId(meta.dev(), meta.ino()))
    }

    #[cfg(unix)]
    fn of_path(path: &std::path::Path) -> Option<FileId> {
        FileId::of(&std::fs::metadata(path).ok()?)
    }

    #[cfg(unix)]
    fn of_file(file: &std::fs::File) -> Option<FileId> {
        FileId::of(&file.metadata().ok()?)
    }

    /// Stdin's file, when it is redirected from one (`< in.txt`).
    #[cfg(unix)]
    fn of_stdin() -> Option<FileId> {
        use std::os::fd::AsFd;
        FileId::of_fd(std::io::stdin().as_fd())
    }

    /// Stdout's file, when it is redirected to one (`> out.txt`).
    #[cfg(unix)]
    fn of_stdout() -> Option<FileId> {
        use std::os::fd::AsFd;
        FileId::of_fd(std::io::stdout().as_fd())
    }

    #[cfg(unix)]
    fn of_fd(fd: std::os::fd::BorrowedFd<'_>) -> Option<FileId> {
        FileId::of_file(&std::fs::File::from(fd.try_clone_to_owned().ok()?))
    }

    #[cfg(not(unix))]
    fn of_path(_: &std::path::Path) -> Option<FileId> {
        None
    }

    #[cfg(not(unix))]
    fn of_file(_: &std::fs::File) -> Option<FileId> {
        None
    }

    #[cfg(not(unix))]
    fn of_stdin() -> Option<FileId> {
        None
    }

    #[cfg(not(unix))]
    fn of_stdout() -> Option<FileId> {
        None
    }
}

/// A line on stderr that the run can do without (a hint, a summary, a
/// note): `eprintln!`, which panics when stderr cannot be written (`2>&1 |
/// head` closed, `2>/dev/full`), would end the run with status 101 and
/// lose its output and status; such a line is dropped instead.
fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// Parses the arguments, runs the subcommand, and turns its outcome into an
/// exit status.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return parse_error(&err),
    };
    let ui = Ui::detect(cli.color);
    let outcome = cli.command.refuse_combinations().and_then(|()| match cli.command {
        Command::Check(args) => with_threads(args.threads, ui, || check::run(&args, ui)),
        Command::Scan(args) => with_threads(args.threads, ui, || scan::run(&args, ui)),
        Command::Dedup(args) => with_threads(args.threads, ui, || dedup::run(&args, ui)),
        Command::Gen(args) => gen::run(&args),
        Command::Bench(mut args) => {
            args.threads = worker_threads(args.threads, ui);
            bench::run(&args)
        }
        Command::Completions(args) => man::completions(args.shell),
        Command::Man(args) => man::run(args.out_dir.as_deref()),
    });
    match outcome {
        Ok(code) => code,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            ui.error(format_args!("{err:#}"));
            ExitCode::from(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Unreadable;
    use std::io;
    use urnscan::decompress::{Codec, DecodeError};
    use urnscan::source::{InputError, Shrank};

    /// The library's message, then the command's words: what to do, and
    /// what became of the input.
    #[test]
    fn input_errors_say_what_became_of_the_input() {
        let said = |error: io::Error, cut_short, mmap_flag| {
            let error = InputError { path: "a.txt".into(), error };
            Unreadable { error: &error, cut_short, mmap_flag, others: true }.to_string()
        };
        let shrank = "a.txt: the file shrank while it was mapped, so results for it are incomplete";
        let advice = "scan a copy that is not being written, or use --mmap never";
        assert_eq!(said(io::Error::other(Shrank), true, true), format!("{shrank}; {advice}"));
        let advice = "use a copy that is not being written";
        assert_eq!(said(io::Error::other(Shrank), true, false), format!("{shrank}; {advice}"), "dedup has no --mmap");
        let walked = "a walk's loop; the loop was not followed";
        let fate = "skipped, the other inputs were read";
        assert_eq!(said(io::Error::other(walked), false, true), format!("a.txt: {walked}; {fate}"));

        let decode = || {
            let source = io::Error::new(io::ErrorKind::UnexpectedEof, "eof");
            io::Error::new(io::ErrorKind::InvalidData, DecodeError { codec: Codec::Zstd, source })
        };
        let failed = "a.txt: zstd data is corrupt or truncated: eof (check the archive with `zstd -t`)";
        let fate = "cut short there (what came before it was read), the other inputs were read";
        assert_eq!(said(decode(), true, true), format!("{failed}; {fate}"));
        let fate = "skipped, the other inputs were read";
        assert_eq!(said(decode(), false, false), format!("{failed}; {fate}"), "nothing decoded");
    }

    /// A run of one input says nothing of other inputs: there are none.
    #[test]
    fn an_only_input_is_not_said_to_leave_others_read() {
        let said = |error: io::Error, cut_short| {
            let error = InputError { path: "a.txt".into(), error };
            Unreadable { error: &error, cut_short, mmap_flag: true, others: false }.to_string()
        };
        let missing = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(said(missing, false), "a.txt: entity not found; check the path");
        let error = InputError { path: "URN:isbn:0451450523".into(), error: io::Error::from(io::ErrorKind::NotFound) };
        let urn = Unreadable { error: &error, cut_short: false, mmap_flag: true, others: false }.to_string();
        let advice = "; to validate a URN given as an argument, use `urnscan check URN`";
        assert_eq!(urn, format!("URN:isbn:0451450523: entity not found{advice}"));
        let broken = io::Error::other("bad block");
        assert_eq!(said(broken, true), "a.txt: bad block; cut short there (what came before it was read)");
    }
}

/// Options that only mean something beside another are refused without it,
/// whatever else is on the command line.
#[cfg(test)]
mod requirements {
    use clap::error::ErrorKind;
    use clap::{Arg, Command, CommandFactory, Parser};

    use super::Cli;

    /// Each option (with a value) that `requires` another, that other, and
    /// what else it needs (bench's --once needs --floor and a path both).
    const NEEDS: [(&str, &[&str], &str, &[&str]); 11] = [
        ("scan", &["--sort", "count"], "unique", &[]),
        ("scan", &["--min-count", "2"], "unique", &[]),
        ("scan", &["-d"], "unique", &[]),
        ("bench", &["--density", "5000"], "generate", &[]),
        ("bench", &["--seed", "3"], "generate", &[]),
        ("bench", &["--once"], "floor", &["x"]),
        ("bench", &["--once"], "file", &["--floor"]),
        ("gen", &["--lines", "5"], "dataset", &[]),
        ("gen", &["--distinct", "3"], "dataset", &[]),
        ("gen", &["--invalid-per-mille", "0"], "dataset", &[]),
        ("dedup", &["--temp-dir", "x"], "memory_limit", &[]),
    ];

    fn owned(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    /// The arguments that cannot go with `id`, in either direction.
    fn conflicting<'a>(sub: &'a Command, id: &str) -> Vec<&'a Arg> {
        let needed = sub.get_arguments().find(|a| a.get_id() == id).unwrap_or_else(|| panic!("no {id}"));
        let mut found = sub.get_arg_conflicts_with(needed);
        found.extend(sub.get_arguments().filter(|a| sub.get_arg_conflicts_with(a).iter().any(|c| c.get_id() == id)));
        found
    }

    /// How `arg` is written on a command line.
    fn written(arg: &Arg) -> Vec<String> {
        let Some(long) = arg.get_long() else { return vec!["x".into()] }; // a positional: a path
        let mut words = vec![format!("--{long}")];
        if arg.get_action().takes_values() {
            let value = arg.get_possible_values().first().map_or("1".into(), |v| v.get_name().to_owned());
            words.push(value);
        }
        words
    }

    fn accepted(words: &[String]) -> bool {
        Cli::try_parse_from(words).is_ok()
    }

    #[test]
    fn an_option_is_refused_without_what_it_needs_whatever_else_is_given() {
        let cli = Cli::command();
        let mut checked = 0;
        for (sub, option, needed, also) in NEEDS {
            let command = cli.find_subcommand(sub).unwrap();
            for other in conflicting(command, needed) {
                // A command line that is fine without the option (a path
                // added if the subcommand needs one).
                let plain: Vec<String> = [owned(&["urnscan", sub]), owned(also), written(other)].concat();
                let with_path: Vec<String> = plain.iter().cloned().chain(["x".to_string()]).collect();
                let base = [plain, with_path].into_iter().find(|words| accepted(words));
                // `other` that makes no valid command line with a path alone
                // (it needs more, or refuses the path) is not this test's
                // case; the count below says how many are left.
                let Some(mut words) = base else { continue };
                words.extend(owned(option));
                let error = Cli::try_parse_from(&words).err();
                let kind = error.as_ref().map(|e| e.kind());
                assert!(
                    matches!(kind, Some(ErrorKind::ArgumentConflict | ErrorKind::MissingRequiredArgument)),
                    "`{}` gave {kind:?}, not a usage error: {option:?} needs {needed}",
                    words.join(" ")
                );
                checked += 1;
            }
        }
        // scan's nine listing options against --unique; bench's path and
        // --lines against --generate, --generate against the path, the four
        // options the floor ignores against --floor; gen's three text
        // options against --dataset.
        assert_eq!(checked, 9 * 3 + 2 * 2 + 1 + 4 + 3 * 3, "combinations checked");
    }

    #[test]
    fn each_option_alone_is_refused_and_accepted_with_what_it_needs() {
        let cli = Cli::command();
        for (sub, option, needed, also) in NEEDS {
            let needed_arg = cli.find_subcommand(sub).unwrap().get_arguments().find(|a| a.get_id() == needed).unwrap();
            let without = [owned(&["urnscan", sub]), owned(option), owned(also)].concat();
            let with = [without.clone(), written(needed_arg)].concat();
            assert!(accepted(&with), "{with:?} refused");
            assert!(!accepted(&without), "{without:?} accepted without {needed}");
        }
    }
}
