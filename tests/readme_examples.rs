//! The README's `console` examples print what the README shows.
//!
//! Each block is run as written, command after command, by `bash` in a
//! fresh directory where `datasets` links to the shipped data (the
//! commands name `datasets/…` and write files such as `urns.csv` beside
//! it), with the built binary first on `PATH`. What a command prints on
//! stdout and stderr, in the order it prints it, must be the lines the
//! README shows after it: a line `...` stands for any number of lines, and
//! the `elapsed` and `GB/s` rows of `--stats` are compared by name, not by
//! figure. (That every command the README shows is one urnscan accepts is
//! checked without running it, in the binary's `cli::documented` tests.)

#![cfg(unix)]

mod common;

use std::path::Path;
use std::process::Command;

use common::is_timing_row;

/// A `$ command` of a console block and the lines shown after it.
#[derive(Debug)]
struct Shown {
    command: String,
    lines: Vec<String>,
}

/// The `console` blocks of `markdown`, each as its commands.
fn console_blocks(markdown: &str) -> Vec<Vec<Shown>> {
    let mut blocks = Vec::new();
    let mut block: Option<Vec<Shown>> = None;
    for line in markdown.lines() {
        if line.starts_with("```") {
            match block.take() {
                Some(done) => blocks.push(done),
                None if line == "```console" => block = Some(Vec::new()),
                None => {}
            }
            continue;
        }
        let Some(block) = block.as_mut() else { continue };
        match line.strip_prefix("$ ") {
            Some(command) => block.push(Shown { command: command.to_owned(), lines: Vec::new() }),
            None => block.last_mut().expect("a console block starts with a command").lines.push(line.to_owned()),
        }
    }
    blocks
}

/// A line as compared: without trailing spaces, and a timing row as its name.
fn compared(line: &str) -> &str {
    let line = line.trim_end();
    if is_timing_row(line) {
        line.split(' ').next().unwrap_or(line)
    } else {
        line
    }
}

/// Whether `printed` is what `shown` shows, `...` standing for any lines.
fn matches(shown: &[String], printed: &[&str]) -> bool {
    match shown.split_first() {
        None => printed.is_empty(),
        Some((dots, rest)) if dots == "..." => (0..=printed.len()).any(|skip| matches(rest, &printed[skip..])),
        Some((line, rest)) => {
            printed.first().is_some_and(|p| compared(p) == compared(line)) && matches(rest, &printed[1..])
        }
    }
}

/// Runs `command` with bash in `dir`, stderr into the same pipe as stdout:
/// what it printed, and its exit status.
fn run(dir: &Path, command: &str) -> (String, Option<i32>) {
    let binary = Path::new(env!("CARGO_BIN_EXE_urnscan"));
    let path = format!("{}:{}", binary.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let o = Command::new("bash")
        .arg("-c")
        .arg(format!("{{ {command}\n}} 2>&1"))
        .current_dir(dir)
        .env("PATH", path)
        .output()
        .expect("run bash");
    (String::from_utf8_lossy(&o.stdout).into_owned(), o.status.code())
}

#[test]
fn every_console_example_prints_what_it_shows() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = console_blocks(&readme);
    assert!(blocks.len() >= 6, "only {} console blocks found", blocks.len());
    let mut failures = Vec::new();
    for block in &blocks {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(root.join("datasets"), dir.path().join("datasets")).unwrap();
        for shown in block {
            // No example shows an error: a status of 2 is one, whatever a
            // trailing `...` would let through.
            let (printed, status) = run(dir.path(), &shown.command);
            let printed: Vec<&str> = printed.lines().collect();
            if !matches(&shown.lines, &printed) || !matches!(status, Some(0 | 1)) {
                failures.push(format!(
                    "$ {}\n--- README shows:\n{}\n--- urnscan printed (exit status {status:?}):\n{}",
                    shown.command,
                    shown.lines.join("\n"),
                    printed.join("\n")
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn shown_lines_match_with_elision_and_timing_rows_by_name() {
    let shown = |lines: &[&str]| lines.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let totals = shown(&["valid        3", "...", "elapsed      0.000389 s", "GB/s         0.22"]);
    assert!(matches(&totals, &["valid        3", "invalid      0", "elapsed      0.5 s", "GB/s         12.1"]));
    assert!(matches(&totals, &["valid        3", "elapsed      0.5 s", "GB/s         12.1"]), "... is zero lines too");
    assert!(!matches(&totals, &["valid        4", "elapsed      0.5 s", "GB/s         12.1"]), "a count differs");
    assert!(!matches(&totals, &["valid        3", "elapsed      0.5 s"]), "a row is missing");
    assert!(!matches(&totals, &["valid        3", "GB/s         12.1", "elapsed      0.5 s"]), "rows out of order");
    let exact = shown(&["a", "b"]);
    assert!(matches(&exact, &["a", "b  "]), "trailing spaces");
    assert!(!matches(&exact, &["a", "b", "c"]), "a line more, with no ... to take it");
    assert!(!matches(&exact, &["a"]));
}

#[test]
fn console_blocks_are_split_into_commands_and_their_lines() {
    let markdown = "```sh\nurnscan x\n```\n```console\n$ a > f\n$ head f\none\ntwo\n```\ntext\n```console\n$ b\n```\n";
    let blocks = console_blocks(markdown);
    let commands: Vec<Vec<(&str, usize)>> =
        blocks.iter().map(|b| b.iter().map(|s| (s.command.as_str(), s.lines.len())).collect()).collect();
    assert_eq!(commands, [vec![("a > f", 0), ("head f", 2)], vec![("b", 0)]]);
}
