//! What the integration tests share: running the built binary with a
//! given standard input, and inputs to be decoded (gzip, UTF-16).

use std::io::Write;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;

/// Runs `cmd` with `stdin` fed from a thread (so a large input cannot
/// deadlock against a full stdout pipe) and collects its output.
#[allow(dead_code)] // not every test file feeds stdin
pub fn run_fed(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run urnscan");
    let mut input = child.stdin.take().expect("piped stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The program may exit without reading all of it: that is its answer.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait for urnscan");
    writer.join().expect("stdin writer");
    out
}

/// urnscan running with `args`, its stdin a pipe of ours, and its stdout
/// lines as they come (a thread reads them into the channel).
#[allow(dead_code)] // not every test file runs a live pipe
pub fn piped(args: &[&str]) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("run urnscan");
    let lines = lines_of(child.stdout.take().expect("piped stdout"));
    (child, lines)
}

/// The lines of `stdout` as they come (a thread reads them into the
/// channel).
#[allow(dead_code)] // not every test file runs a live pipe
pub fn lines_of(stdout: std::process::ChildStdout) -> mpsc::Receiver<String> {
    use std::io::BufRead;
    let (tx, lines) = mpsc::channel();
    let stdout = std::io::BufReader::new(stdout);
    std::thread::spawn(move || stdout.lines().map_while(Result::ok).try_for_each(|line| tx.send(line)));
    lines
}

/// `data` compressed as gzip.
#[allow(dead_code)] // not every test file reads archives
pub fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// UTF-16LE of `text`, after the mark when `mark`.
#[allow(dead_code)] // not every test file reads UTF-16
pub fn utf16le(text: &str, mark: bool) -> Vec<u8> {
    let mark = if mark { &[0xff, 0xfe][..] } else { &[] };
    mark.iter().copied().chain(text.encode_utf16().flat_map(u16::to_le_bytes)).collect()
}

/// `scan --stats` output without the time the run took: the `elapsed` and
/// `GB/s` rows of the text totals (`elapsed      0.213 s`, `GB/s
/// 5.04`: by their shape, since `elapsed` is a valid NID whose row must
/// stay), and the `elapsed_s` field that ends the JSON object. It is the
/// one part of stdout that differs between two runs of the same input;
/// everything else is compared byte for byte.
#[allow(dead_code)] // not every test file runs --stats
pub fn without_timing(stdout: &str) -> String {
    let mut out = String::with_capacity(stdout.len());
    for line in stdout.split_inclusive('\n') {
        if is_timing_row(line.trim_end_matches('\n')) {
            continue;
        }
        match line.rfind(",\"elapsed_s\":") {
            Some(at) => {
                out.push_str(&line[..at]);
                out.push('}');
                out.push_str(&line[line.trim_end_matches('\n').len()..]);
            }
            None => out.push_str(line),
        }
    }
    out
}

/// One of the two rows that end `scan --stats`' text totals: `elapsed`,
/// spaces, then seconds with ` s`, or `GB/s`, spaces, then a decimal number.
#[allow(dead_code)] // not every test file runs --stats
pub fn is_timing_row(line: &str) -> bool {
    let figure = |name: &str, unit: &str| {
        let value = line.strip_prefix(name).map(str::trim_start).and_then(|v| v.strip_suffix(unit));
        value.is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit() || b == b'.'))
    };
    figure("elapsed ", " s") || figure("GB/s ", "")
}
