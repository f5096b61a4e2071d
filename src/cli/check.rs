//! `urnscan check`: validate URNs one by one and show their parts or what is
//! wrong with them.
//!
//! Arguments are judged in order on the calling thread. Lines on stdin (a
//! dataset of millions of URNs) are read a block at a time; the block's
//! complete lines are cut into pieces that the pool's threads judge and
//! format, and the pieces are written in input order ([`InOrder`], whose
//! buffers serve every block), so the output is the same at any thread
//! count. Judging and formatting are what take the time (about 120 ns a
//! line at one thread, against a few for reading it), so the reading stays
//! on the calling thread. A block ends early where a pipe's writer pauses
//! (`urnscan::source::Live`): its whole lines are judged and shown then. A
//! valid URN's parts are written as bytes (see [`write_text`]). Stdin
//! that looks like UTF-16 without a byte-order mark gets the hint `scan`
//! and `dedup` end with, decided from its first bytes as they went by
//! ([`Head`]).

use std::ffi::OsString;
use std::io::{self, BufWriter, Read, Write};
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use anyhow::{Context, Result};
use urnscan::decompress::Codec;
use urnscan::job::Misread;
use urnscan::lines::{line_ranges, trim_line};
use urnscan::ordered::InOrder;
use urnscan::source::{self, Contents, Input, MmapPolicy};
use urnscan::transcode::{without_utf8_bom, Encoding};
use urnscan::{parse, ErrorKind, Grammar, NidClassifier, Urn, UrnError};

use super::color::{self, Palette, INVALID, VALID};
use super::output::{is_broken_pipe, json_appended, json_str, shown};
use super::{grammar, CheckArgs, CheckFormat, Ui};

/// Whether the URNs are the lines of stdin: no arguments, or `-` alone,
/// as for `scan` and `dedup` (it is no URN).
fn reads_stdin(args: &CheckArgs) -> bool {
    args.urns.is_empty() || args.urns == ["-"]
}

/// Refuses the combinations of options that clap cannot see, as they
/// depend on other options' values (see `Command::refuse_combinations`).
pub(super) fn refuse_combinations(args: &CheckArgs) -> Result<()> {
    if !reads_stdin(args) && args.encoding.encoding() != Encoding::Auto {
        anyhow::bail!("-E says how the lines of stdin are encoded; URNs given as arguments are judged as given");
    }
    Ok(())
}

pub fn run(args: &CheckArgs, ui: Ui) -> Result<ExitCode> {
    let judge = Judge { only_invalid: args.invalid, ..Judge::new(grammar(args.rfc2141), args.format, ui.out) };
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, color::stream(stdout.lock(), ui.out));
    let (hints, binary) = match judge_all(args, &judge, &mut out) {
        // The reader has what it wanted (`| head -1`), and the status still
        // says whether an input it was shown or not was invalid.
        Err(e) if is_broken_pipe(&e) => return Ok(status(&judge)),
        judged => judged?,
    };
    let verdict = status(&judge);
    for hint in hints {
        super::say(format_args!("{hint}"));
    }
    if let Some(hint) = args.urns.iter().find_map(|arg| path_hint(arg, judge.grammar)) {
        super::say(format_args!("{hint}"));
    }
    if let Some(hint) = padding_hint(judge.padded.into_inner(), reads_stdin(args)) {
        super::say(format_args!("{hint}"));
    }
    let (text, blank) = (judge.text.into_inner(), judge.blank.into_inner());
    let urns = judge.inputs.into_inner() - text - blank;
    if let Some(hint) = text_hint(text, urns, reads_stdin(args)).filter(|_| !binary) {
        super::say(format_args!("{hint}"));
    }
    Ok(verdict)
}

/// 1 if an input judged so far was invalid, else 0.
fn status(judge: &Judge) -> ExitCode {
    if judge.any_invalid.load(Ordering::Relaxed) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Judges stdin's lines or the arguments into `out`, flushed; the hints for
/// stdin's encoding, and whether stdin was binary (an archive, UTF-16 read
/// as bytes: no running text, so the text hint would not say why its lines
/// fail).
fn judge_all(args: &CheckArgs, judge: &Judge, out: &mut impl Write) -> Result<(Vec<String>, bool)> {
    let mut hints = Vec::new();
    let mut binary = false;
    if reads_stdin(args) {
        let encoding = args.encoding.encoding();
        let mut input = Head { inner: stdin(encoding), head: Vec::new() };
        judge_lines(&mut input, out, judge, args.block_size.unwrap_or(BLOCK_BYTES))?;
        hints = misread_hints(encoding, &input.head);
        binary = source::is_binary(&input.head) || Codec::sniff(&input.head).is_some();
    } else {
        let mut text = Vec::new();
        for urn in &args.urns {
            text.clear();
            judge.write(&os_bytes(urn), &mut text, &mut Tally::default())?;
            out.write_all(&text).context("cannot write to standard output")?;
        }
    }
    out.flush().context("cannot write to standard output")?;
    Ok((hints, binary))
}

/// The hint for stdin whose lines are mostly text (no `urn:` at their
/// start, even trimmed; blank lines aside) rather than URNs, valid or
/// not: a log or a document given to `check`, whose user most likely
/// wants `scan`, as `dedup` says of the same. Arguments are judged as
/// given, and a path among them has [`path_hint`].
fn text_hint(text: u64, urns: u64, from_stdin: bool) -> Option<&'static str> {
    (from_stdin && text > urns).then_some(
        "hint: most lines do not start with \"urn:\": `urnscan check` judges each line as one URN; to find \
         the URNs inside running text, use `urnscan scan`",
    )
}

impl Tally {
    /// Counts an input that is `not-urn`: blank, text, or a URN with
    /// whitespace around it (neither).
    fn add_not_urn(&mut self, input: &[u8]) {
        let trimmed = trim_line(input);
        if trimmed.is_empty() {
            self.blank += 1;
        } else if !trimmed.get(..4).is_some_and(|start| start.eq_ignore_ascii_case(b"urn:")) {
            self.text += 1;
        }
    }
}

/// The hint for a command-line argument that is no URN at all (not-urn)
/// and names an existing file or directory: `urnscan check urns.txt` or
/// `urnscan check dump/` judges the path itself, where its user most
/// likely meant what it holds. The verdict stays what it is; the hint
/// says how `check` reads its input and which commands read files.
fn path_hint(arg: &OsString, grammar: Grammar) -> Option<String> {
    // Only a verdict of not-urn asks the file system (no stat per URN).
    if !parse(&os_bytes(arg), grammar).is_err_and(|e| e.kind() == ErrorKind::NotUrn) {
        return None;
    }
    let path = Path::new(arg);
    let what = if std::fs::metadata(path).ok()?.is_dir() { "a directory" } else { "a file" };
    let path = path.display();
    Some(format!(
        "hint: {path} is {what}, not a URN: check judges its arguments as URNs, or the lines of stdin \
         (`urnscan check < FILE`; see `urnscan check --help`); `urnscan scan {path}` finds the URNs in \
         files and `urnscan dedup {path}` reads files of one URN per line"
    ))
}

/// The hint for inputs that are invalid only for the ASCII whitespace
/// around them (`urn:ab:c ` from a list padded by a spreadsheet or a
/// `printf`): their verdict names a bad character at the space, which
/// does not say that `dedup` (which trims every line) would take them.
fn padding_hint(padded: u64, from_stdin: bool) -> Option<String> {
    let (what, them) = match (padded, from_stdin) {
        (0, _) => return None,
        (1, true) => ("1 line would be a valid URN".to_owned(), "it"),
        (1, false) => ("1 argument would be a valid URN".to_owned(), "it"),
        (n, true) => (format!("{n} lines would be valid URNs"), "them"),
        (n, false) => (format!("{n} arguments would be valid URNs"), "them"),
    };
    Some(format!(
        "hint: {what} without the spaces, tabs or carriage returns around {them}: check judges each \
         input as it is; `urnscan dedup` trims every line"
    ))
}

/// Bytes of stdin read per round: enough lines for every thread to have
/// several pieces of [`PIECE_BYTES`], few enough that memory stays small.
const BLOCK_BYTES: usize = 4 << 20;

/// Bytes of lines one thread judges and formats at a time, in one output
/// buffer ([`line_ranges`] cuts them).
const PIECE_BYTES: usize = 64 << 10;

/// Standard input to judge: a pipe or terminal as it is written
/// (`source::Live`), so that a line typed or logged gets its verdict
/// without waiting for 4 MiB; a file as any stream. UTF-16 is transcoded
/// as `encoding` decides.
fn stdin(encoding: Encoding) -> Box<dyn Read + Send> {
    let opened = source::open(&Input::Stdin, MmapPolicy::Never).and_then(|c| source::decoded(c, false, encoding));
    match opened.map(|opened| opened.contents) {
        Ok(Contents::Pipe(pipe)) => pipe.live(source::LIVE_DELAY),
        Ok(Contents::Stream(reader)) => reader,
        Ok(Contents::Whole(whole)) => whole.into_reader(),
        // Opening stdin only looks at it: it is never refused.
        Err(_) => Box::new(io::stdin()),
    }
}

/// A reader that keeps the first [`source::BINARY_PROBE`] bytes read
/// through it. Stdin is judged as it comes (a live pipe is not waited on
/// for 8 KiB before its first line), so whether it looks like UTF-16
/// without a mark is decided at the end from what was read: the same
/// first bytes `scan` and `dedup` decide it from.
struct Head<R> {
    inner: R,
    head: Vec<u8>,
}

impl<R: Read> Read for Head<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let room = source::BINARY_PROBE.saturating_sub(self.head.len());
        self.head.extend_from_slice(&buf[..n.min(room)]);
        Ok(n)
    }
}

/// The hint `scan` and `dedup` end with for stdin whose first bytes
/// `head` (after any transcoding) are binary and look like UTF-16 without
/// a mark: read as bytes, its lines are letters and NULs, every one
/// invalid, and nothing else would say why.
///
/// Compressed stdin gets a hint of its own: `check` has no `-z`.
fn misread_hints(encoding: Encoding, head: &[u8]) -> Vec<String> {
    if let Some(codec) = Codec::sniff(head) {
        let name = codec.name();
        return vec![format!(
            "hint: stdin starts with a {name} header: check reads no compressed input; decompress it first \
             (`{name} -dc FILE | urnscan check`), or give the file to `urnscan dedup -z`"
        )];
    }
    let mut misreads = super::Misreads::default();
    if let Some(order) = encoding.unmarked(head).filter(|_| source::is_binary(head)) {
        misreads.add("-", Misread::Utf16(order));
    }
    misreads.hints()
}

/// Judges every line of `input` and writes the results to `out` in input
/// order. Lines read before a read error are judged and written; a line the
/// error cut short is not, and the error is returned after them. A
/// `WouldBlock` (a live stream whose writer paused) is no error: the whole
/// lines read so far are judged and their verdicts flushed, and reading
/// goes on.
fn judge_lines(mut input: impl Read, out: &mut dyn Write, judge: &Judge, block: usize) -> Result<()> {
    let mut buf = Vec::new();
    let mut in_order = InOrder::new();
    let mut at_start = true;
    loop {
        let asked = block.max(1);
        // What is left of the last round is part of a line: a line end can
        // only be in the bytes read now (searching from the start made a
        // gigantic line quadratic).
        let start = buf.len();
        let read = (&mut input).take(asked as u64).read_to_end(&mut buf);
        let last_end = memchr::memrchr(b'\n', &buf[start..]).map(|i| start + i + 1);
        let end = match (&read, last_end) {
            (Ok(n), Some(end)) if *n == asked => end,
            // One line longer than a block: read on.
            (Ok(n), None) if *n == asked => continue,
            (Ok(_), _) => buf.len(),
            (Err(_), end) => end.unwrap_or(0),
        };
        let mut lines = &buf[..end];
        if at_start && end > 0 {
            // The first line is whole: a UTF-8 byte-order mark is no part of it.
            lines = without_utf8_bom(lines);
            at_start = false;
        }
        in_order
            .write(&line_ranges(lines, PIECE_BYTES), out, |piece, text| {
                let mut tally = Tally::default();
                let judged = lines_of(&lines[piece.clone()])
                    .try_for_each(|line| judge.write(strip_line_end(line), text, &mut tally));
                judge.add(&tally);
                judged
            })
            .context("cannot write to standard output")?;
        match read {
            Ok(n) if n == asked => buf.drain(..end),
            Ok(_) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                out.flush().context("cannot write to standard output")?;
                buf.drain(..end)
            }
            Err(e) => return Err(e).context("cannot read standard input"),
        };
    }
}

/// The lines of `bytes`, each with its line end (the last one may have
/// none), found with `memchr` (a byte-by-byte split was 5 % of `check`'s
/// time at one thread).
fn lines_of(mut bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let end = memchr::memchr(b'\n', bytes).map_or(bytes.len(), |i| i + 1);
        let (line, rest) = bytes.split_at(end);
        bytes = rest;
        Some(line)
    })
}

/// What `check` needs to judge one input and show the verdict.
struct Judge {
    grammar: Grammar,
    format: CheckFormat,
    classifier: NidClassifier,
    /// Show nothing for a valid input (`--invalid`).
    only_invalid: bool,
    /// The verdicts' words, painted once.
    valid: String,
    invalid: String,
    /// Set by any invalid input (the exit status).
    any_invalid: AtomicBool,
    /// Invalid inputs that are valid once trimmed ([`padding_hint`]).
    padded: AtomicU64,
    /// The inputs' [`Tally`], added a piece of lines at a time.
    inputs: AtomicU64,
    text: AtomicU64,
    blank: AtomicU64,
}

/// What a piece's inputs were, as far as [`text_hint`] asks: counted on
/// its thread and added to the [`Judge`]'s once (an atomic add per line
/// would have the threads contend for it).
#[derive(Default)]
struct Tally {
    inputs: u64,
    /// Not blank, and no `urn:` at their start even trimmed.
    text: u64,
    blank: u64,
}

impl Judge {
    fn new(grammar: Grammar, format: CheckFormat, palette: Palette) -> Judge {
        Judge {
            grammar,
            format,
            classifier: NidClassifier::new(),
            only_invalid: false,
            valid: palette.paint(VALID, "valid").to_string(),
            invalid: palette.paint(INVALID, "invalid").to_string(),
            any_invalid: AtomicBool::new(false),
            padded: AtomicU64::new(0),
            inputs: AtomicU64::new(0),
            text: AtomicU64::new(0),
            blank: AtomicU64::new(0),
        }
    }

    fn add(&self, tally: &Tally) {
        self.inputs.fetch_add(tally.inputs, Ordering::Relaxed);
        self.text.fetch_add(tally.text, Ordering::Relaxed);
        self.blank.fetch_add(tally.blank, Ordering::Relaxed);
    }

    /// Writes the verdict on `input`, and counts it in `tally`.
    fn write(&self, input: &[u8], out: &mut Vec<u8>, tally: &mut Tally) -> io::Result<()> {
        let result = parse(input, self.grammar);
        tally.inputs += 1;
        if result.as_ref().is_err_and(|e| e.kind() == ErrorKind::NotUrn) {
            tally.add_not_urn(input);
        }
        // Read before it is written: once set, the flag's cache line stays
        // shared by the threads instead of being written by every invalid
        // line.
        if result.is_err() && !self.any_invalid.load(Ordering::Relaxed) {
            self.any_invalid.store(true, Ordering::Relaxed);
        }
        if result.is_err() && self.valid_once_trimmed(input) {
            self.padded.fetch_add(1, Ordering::Relaxed);
        }
        if self.only_invalid && result.is_ok() {
            return Ok(());
        }
        match self.format {
            CheckFormat::Text => write_text(out, input, &result, self),
            CheckFormat::Jsonl => write_jsonl(out, input, &result, self),
        }
    }
}

impl Judge {
    /// `input` has ASCII whitespace around it, and is a URN without it.
    fn valid_once_trimmed(&self, input: &[u8]) -> bool {
        let trimmed = trim_line(input);
        trimmed.len() < input.len() && !trimmed.is_empty() && parse(trimmed, self.grammar).is_ok()
    }
}

/// The line without its "\n" and one "\r" before it.
fn strip_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// An argument's raw bytes: on Unix arguments need not be UTF-8, and
/// invalid bytes are judged like any others.
fn os_bytes(arg: &OsString) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        arg.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        arg.to_string_lossy().into_owned().into_bytes()
    }
}

/// Writes the text verdict. A valid URN's parts are written as bytes
/// (they are ASCII, the grammar saw to it): through `&str` and `write!`,
/// UTF-8 checks and the formatting machinery were a third of `check`'s time.
fn write_text(out: &mut Vec<u8>, input: &[u8], result: &Result<Urn, UrnError>, judge: &Judge) -> io::Result<()> {
    match result {
        Ok(urn) => {
            let text = urn.as_bytes();
            out.extend_from_slice(text);
            out.push(b'\t');
            out.extend_from_slice(judge.valid.as_bytes());
            out.extend_from_slice(b"\tnid=");
            out.extend_from_slice(&text[urn.nid_range()]);
            out.extend_from_slice(b" nss=");
            out.extend_from_slice(&text[urn.nss_range()]);
            for (name, part) in [(&b" r="[..], urn.r_range()), (b" q=", urn.q_range()), (b" f=", urn.f_range())] {
                if let Some(part) = part {
                    out.extend_from_slice(name);
                    out.extend_from_slice(&text[part]);
                }
            }
            out.extend_from_slice(b" class=");
            out.extend_from_slice(judge.classifier.classify(&text[urn.nid_range()]).as_str().as_bytes());
            out.extend_from_slice(b" key=");
            urn.write_key(out);
            out.push(b'\n');
            Ok(())
        }
        // Control characters as spaces: an input is shown to a person, and
        // an escape sequence in it would reach their terminal.
        Err(e) => writeln!(out, "{}\t{}\t{}", shown(input), judge.invalid, e.render(input).replace('\n', "\n\t")),
    }
}

/// Writes the JSON Lines verdict; a valid URN's parts as bytes, as in
/// [`write_text`].
fn write_jsonl(out: &mut Vec<u8>, input: &[u8], result: &Result<Urn, UrnError>, judge: &Judge) -> io::Result<()> {
    out.extend_from_slice(b"{\"input\":");
    json_appended(out, true, |o| o.extend_from_slice(input))?;
    match result {
        Ok(urn) => {
            let text = urn.as_bytes();
            out.extend_from_slice(b",\"valid\":true,\"nid\":");
            json_part(out, &text[urn.nid_range()]);
            out.extend_from_slice(b",\"nss\":");
            json_part(out, &text[urn.nss_range()]);
            for (name, part) in
                [(&b",\"r\":"[..], urn.r_range()), (b",\"q\":", urn.q_range()), (b",\"f\":", urn.f_range())]
            {
                out.extend_from_slice(name);
                match part {
                    Some(part) => json_part(out, &text[part]),
                    None => out.extend_from_slice(b"null"),
                }
            }
            out.extend_from_slice(b",\"key\":\"");
            urn.write_key(out);
            out.push(b'"');
            out.extend_from_slice(b",\"nid_class\":\"");
            out.extend_from_slice(judge.classifier.classify(&text[urn.nid_range()]).as_str().as_bytes());
            out.extend_from_slice(b"\",\"error\":null}\n");
            Ok(())
        }
        Err(e) => {
            out.extend_from_slice(
                b",\"valid\":false,\"nid\":null,\"nss\":null,\"r\":null,\"q\":null,\"f\":null,\"key\":null,\
                  \"nid_class\":null,\"error\":{\"kind\":",
            );
            json_str(out, e.kind().as_str())?;
            // The one-line message: the caret drawing is for a person,
            // and `offset` says where.
            write!(out, ",\"offset\":{},\"message\":", e.offset())?;
            json_str(out, &e.message())?;
            out.extend_from_slice(b"}}\n");
            Ok(())
        }
    }
}

/// A part of a valid URN as a JSON string. It needs no escape: the
/// characters of either grammar are printable ASCII without `"` or `\`
/// (RFC 8141 §2 with RFC 3986's pchar; RFC 2141 §2.2 and §2.3).
fn json_part(out: &mut Vec<u8>, part: &[u8]) {
    out.push(b'"');
    out.extend_from_slice(part);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge(format: CheckFormat) -> Judge {
        Judge::new(Grammar::Rfc8141, format, Palette::new(false))
    }

    /// The plain reference: every line judged in turn, as `read_until`
    /// splits them, after a UTF-8 byte-order mark at the start of the input.
    fn one_by_one(input: &[u8], judge: &Judge) -> Vec<u8> {
        let mut out = Vec::new();
        let input = input.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(input);
        for line in input.split_inclusive(|&b| b == b'\n') {
            judge.write(strip_line_end(line), &mut out, &mut Tally::default()).unwrap();
        }
        out
    }

    fn lines() -> Vec<u8> {
        let mut input = Vec::new();
        for i in 0..2_000 {
            match i % 5 {
                0 => input.extend_from_slice(format!("urn:ab{i}:x{i}?+r#f\n").as_bytes()),
                1 => input.extend_from_slice(format!("urn:a:{i}\r\n").as_bytes()),
                2 => input.extend_from_slice(b"\n"),
                3 => {
                    input.extend_from_slice(format!("URN:X-Y:%{i:x}zz").as_bytes());
                    input.extend_from_slice(b"\xff\n");
                }
                _ => input.extend_from_slice(format!("urn:isbn:{}\n", "9".repeat(i % 300)).as_bytes()),
            }
        }
        input.extend_from_slice(b"urn:ab:no-final-newline");
        input
    }

    #[test]
    fn lines_of_gives_each_line_with_its_end_like_split_inclusive() {
        let input = lines();
        for bytes in [&input[..], b"", b"\n", b"\n\n", b"a", b"a\nb", b"a\nb\n", b"\r\n\r"] {
            let want: Vec<&[u8]> = bytes.split_inclusive(|&b| b == b'\n').collect();
            assert_eq!(lines_of(bytes).collect::<Vec<_>>(), want, "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    #[test]
    fn lines_read_a_block_at_a_time_come_out_as_judged_one_by_one() {
        let input = lines();
        for format in [CheckFormat::Text, CheckFormat::Jsonl] {
            let want = one_by_one(&input, &judge(format));
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
                for block in [1, 5, 64, 1000, BLOCK_BYTES] {
                    let judge = judge(format);
                    let mut out = Vec::new();
                    pool.install(|| judge_lines(&input[..], &mut out, &judge, block)).unwrap();
                    assert!(out == want, "{format:?}, {threads} threads, blocks of {block}");
                    assert!(judge.any_invalid.into_inner());
                }
            }
        }
    }

    #[test]
    fn a_read_error_ends_the_lines_after_the_complete_ones_before_it() {
        let input = b"urn:ab:c\nurn:a:b\nurn:ab:cut-sh";
        let failing = (&input[..]).chain(source_error());
        let judge = judge(CheckFormat::Text);
        let mut out = Vec::new();
        let err = judge_lines(failing, &mut out, &judge, 4).unwrap_err();
        assert!(format!("{err:#}").contains("cannot read standard input: disk gone"), "{err:#}");
        assert_eq!(out, one_by_one(b"urn:ab:c\nurn:a:b\n", &judge));
    }

    /// Gives `pieces` (none empty) one after the other, with a
    /// `WouldBlock` (a live stream's pause) after each.
    struct Pausing<'a>(Vec<&'a [u8]>, bool);

    impl Read for Pausing<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if std::mem::take(&mut self.1) {
                return Err(io::ErrorKind::WouldBlock.into());
            }
            let Some(piece) = self.0.first_mut() else { return Ok(0) };
            let n = piece.len().min(buf.len());
            buf[..n].copy_from_slice(&piece[..n]);
            *piece = &piece[n..];
            if piece.is_empty() {
                self.0.remove(0);
                self.1 = true;
            }
            Ok(n)
        }
    }

    #[test]
    fn a_pause_anywhere_judges_the_same_lines() {
        let text = b"urn:ab:c\nurn:a:b\nURN:ISBN:0451450523\nurn:ab:cd";
        let judge = judge(CheckFormat::Text);
        let want = one_by_one(text, &judge);
        for first in 0..=text.len() {
            for second in first..=text.len() {
                for block in [4, 1000] {
                    // An empty piece would read as the end.
                    let mut pieces = vec![&text[..first], &text[first..second], &text[second..]];
                    pieces.retain(|piece| !piece.is_empty());
                    let mut out = Vec::new();
                    judge_lines(Pausing(pieces, false), &mut out, &judge, block).unwrap();
                    assert!(out == want, "pauses at {first} and {second}, blocks of {block}");
                }
            }
        }
    }

    #[test]
    fn only_invalid_lines_set_the_exit_status() {
        let judge = judge(CheckFormat::Jsonl);
        judge_lines(&b"urn:ab:c\nURN:ISBN:0451450523\n"[..], &mut Vec::new(), &judge, 8).unwrap();
        assert!(!judge.any_invalid.load(Ordering::Relaxed));
        judge_lines(&b"urn:ab:c\nurn:ab:c d"[..], &mut Vec::new(), &judge, 8).unwrap();
        assert!(judge.any_invalid.load(Ordering::Relaxed));
    }

    /// A UTF-8 byte-order mark before the first line is not judged, in
    /// any block size; U+FEFF at the start of a later line is a non-ASCII
    /// byte there (RFC 8141 §2: a URN is ASCII), and is judged so.
    #[test]
    fn a_utf8_mark_before_the_first_line_is_not_judged() {
        let input = b"\xEF\xBB\xBFurn:isbn:0451450523\n\xEF\xBB\xBFurn:isbn:0451450523\n";
        for block in [1, 2, 3, 4, 64] {
            let judge = judge(CheckFormat::Jsonl);
            let mut out = Vec::new();
            judge_lines(&input[..], &mut out, &judge, block).unwrap();
            let verdicts: Vec<serde_json::Value> = out
                .split(|&b| b == b'\n')
                .filter(|l| !l.is_empty())
                .map(|l| serde_json::from_slice(l).unwrap())
                .collect();
            assert_eq!(verdicts.len(), 2, "block {block}");
            assert_eq!((&verdicts[0]["input"], &verdicts[0]["valid"]), (&"urn:isbn:0451450523".into(), &true.into()));
            assert_eq!(verdicts[1]["valid"], false, "block {block}");
            assert_eq!(
                (&verdicts[1]["error"]["kind"], &verdicts[1]["error"]["offset"]),
                (&"non-ascii".into(), &0.into())
            );
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]
        /// Any bytes, rich in line ends and URN pieces, read in blocks of
        /// any size by up to three threads: what comes out is what judging
        /// the lines one by one gives.
        #[test]
        fn any_bytes_in_any_blocks_come_out_as_judged_one_by_one(
            bytes in proptest::collection::vec(proptest::sample::select(b"urn:ab\n\r%2cZ?+=#\x00\xff ".to_vec()), 0..600),
            marked in proptest::bool::ANY,
            block in 1usize..80,
            threads in 1usize..4,
            jsonl in proptest::bool::ANY,
            only_invalid in proptest::bool::ANY,
        ) {
            let bytes = if marked { [&b"\xEF\xBB\xBF"[..], &bytes].concat() } else { bytes };
            let format = if jsonl { CheckFormat::Jsonl } else { CheckFormat::Text };
            let judge = || Judge { only_invalid, ..judge(format) };
            let want = one_by_one(&bytes, &judge());
            let judge = judge();
            let mut out = Vec::new();
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| judge_lines(&bytes[..], &mut out, &judge, block)).unwrap();
            proptest::prop_assert!(out == want, "{:?}", String::from_utf8_lossy(&bytes));
        }
    }

    /// The plain reference for one verdict: the text line put together
    /// from [`Urn`]'s `&str` accessors with `format!`, and the JSON record
    /// as a `serde_json` value (the field order is pinned by
    /// `tests/cli_check.rs`).
    fn reference(input: &[u8], grammar: Grammar) -> (String, serde_json::Value) {
        let classifier = NidClassifier::new();
        match parse(input, grammar) {
            Ok(urn) => {
                let mut text = format!("{}\tvalid\tnid={} nss={}", urn.as_str(), urn.nid(), urn.nss());
                for (name, part) in [("r", urn.r_component()), ("q", urn.q_component()), ("f", urn.f_component())] {
                    if let Some(part) = part {
                        text += &format!(" {name}={part}");
                    }
                }
                let class = classifier.classify(urn.nid().as_bytes()).as_str();
                text += &format!(" class={class} key={}\n", urn.key());
                let json = serde_json::json!({
                    "input": String::from_utf8_lossy(input), "valid": true, "nid": urn.nid(), "nss": urn.nss(),
                    "r": urn.r_component(), "q": urn.q_component(), "f": urn.f_component(),
                    "key": urn.key(), "nid_class": class, "error": null,
                });
                (text, json)
            }
            Err(e) => {
                let shown = String::from_utf8_lossy(input);
                let text = format!("{shown}\tinvalid\t{}\n", e.render(input).replace('\n', "\n\t"));
                let json = serde_json::json!({
                    "input": shown, "valid": false, "nid": null, "nss": null, "r": null, "q": null, "f": null,
                    "key": null, "nid_class": null,
                    "error": {"kind": e.kind().as_str(), "offset": e.offset(), "message": e.message()},
                });
                (text, json)
            }
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Verdicts written as bytes are what the reference writes through
        /// `&str`, for URNs with every component, in either grammar.
        #[test]
        fn verdicts_are_written_as_the_str_reference_writes_them(
            input in "(?i:urn):(?i:isbn|example|x-[a-z]{1,3}|[a-z0-9-]{0,34})(:[a-zA-Z0-9%:/?#=+~\"\\\\-]{0,12}){0,2}(\\?\\+[a-z?=]{0,4})?(\\?=[a-z?]{0,4})?(#[a-z?#]{0,4})?",
            rfc2141 in proptest::bool::ANY,
        ) {
            let grammar = if rfc2141 { Grammar::Rfc2141 } else { Grammar::Rfc8141 };
            let (text, json) = reference(input.as_bytes(), grammar);
            for (format, want) in [(CheckFormat::Text, None), (CheckFormat::Jsonl, Some(&json))] {
                let judge = Judge::new(grammar, format, Palette::new(false));
                let mut out = Vec::new();
                judge.write(input.as_bytes(), &mut out, &mut Tally::default()).unwrap();
                match want {
                    None => proptest::prop_assert_eq!(String::from_utf8(out).unwrap(), text.clone()),
                    Some(json) => {
                        let got: serde_json::Value = serde_json::from_slice(&out).unwrap();
                        proptest::prop_assert_eq!(&got, json);
                    }
                }
            }
        }
    }

    /// A reader whose first read fails.
    fn source_error() -> impl Read {
        struct Fails;
        impl Read for Fails {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                Err(io::Error::other("disk gone"))
            }
        }
        Fails
    }
}
