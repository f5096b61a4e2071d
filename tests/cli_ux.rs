//! The parts of the command that are about comfort rather than results:
//! shell completions, man pages, colour, the progress display and the size
//! of the pipes it is given. Each test runs the built binary with stdout
//! and stderr piped, as a script would.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

mod common;
use common::{gzip, utf16le};

const SUBCOMMANDS: [&str; 7] = ["check", "scan", "dedup", "gen", "bench", "completions", "man"];

/// The binary with a clean environment for colour and progress decisions.
fn urnscan() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_urnscan"));
    cmd.env_remove("NO_COLOR").env_remove("CI").env_remove("CLICOLOR_FORCE").env("TERM", "xterm-256color");
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().expect("run urnscan")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

fn has_escape(bytes: &[u8]) -> bool {
    bytes.contains(&0x1b)
}

/// Removes SGR sequences (`ESC [ ... m`), the only ones urnscan writes.
fn strip_sgr(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find("\x1b[") {
        out.push_str(&rest[..at]);
        let end = rest[at..].find('m').expect("unterminated escape");
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    out
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn completions_for_every_shell_name_the_subcommands() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let o = run(urnscan().args(["completions", shell]));
        assert_eq!(o.status.code(), Some(0), "{shell}: {}", stderr(&o));
        let script = stdout(&o);
        assert!(script.len() > 500, "{shell}: {} bytes", script.len());
        for sub in SUBCOMMANDS {
            assert!(script.contains(sub), "{shell} script does not mention {sub}");
        }
        // An option of a subcommand, not just the subcommand names.
        assert!(script.contains("unique") && script.contains("memory-limit"), "{shell} lacks subcommand options");
    }
    let bash = stdout(&run(urnscan().args(["completions", "bash"])));
    assert!(bash.contains("--unique") && bash.contains("complete"), "bash script");
}

#[test]
fn completions_reject_an_unknown_shell() {
    let o = run(urnscan().args(["completions", "tcsh"]));
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
}

/// `man` output with roff's escapes for `-` and `'` undone.
fn unescape_roff(page: &str) -> String {
    page.replace("\\-", "-").replace("\\*(Aq", "'")
}

/// The example commands of `urnscan SUB --help` (the text users see).
fn help_examples(sub: &str) -> Vec<String> {
    let help = stdout(&run(urnscan().args([sub, "--help"])));
    let examples = help.split("Examples:\n").nth(1).unwrap_or_else(|| panic!("{sub} --help has no examples"));
    examples
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  "))
        .map(|l| l.trim().split("  ").next().unwrap().to_owned())
        .collect()
}

#[test]
fn man_page_has_sections_subcommands_and_the_help_examples() {
    let o = run(urnscan().arg("man"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let page = stdout(&o);
    assert!(page.starts_with(".ie") || page.starts_with(".TH"), "not roff: {}", &page[..40.min(page.len())]);
    for section in [".TH urnscan 1", ".SH NAME", ".SH SYNOPSIS", ".SH OPTIONS", ".SH EXAMPLES", ".SH EXIT STATUS"] {
        assert!(page.contains(section), "missing {section}");
    }
    let plain = unescape_roff(&page);
    for sub in SUBCOMMANDS {
        assert!(plain.contains(&format!("urnscan-{sub}(1)")), "subcommand {sub} not listed");
        let examples = help_examples(sub);
        assert!(!examples.is_empty(), "{sub} --help has no examples");
        for example in examples {
            assert!(plain.contains(&example), "example of {sub} not in the man page: {example}");
        }
    }
    // The exit status of each convention named in the issue.
    let status = plain.split(".SH EXIT STATUS").nth(1).unwrap();
    assert!(
        status.contains(
            "0 if a URN was found (with --invalid: a rejected candidate; with --unique: a URN it lists, -d or \
             --min-count may leave none; with both, either), 1 if none, 2"
        ),
        "scan's exit status"
    );
    assert!(status.contains("1 with --strict"), "dedup's exit status");
    assert!(status.contains("0 if every input is valid, 1 if any is invalid"), "check's exit status");
}

#[test]
fn man_out_dir_writes_one_page_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let o = run(urnscan().args(["man", "--out-dir", path(dir.path())]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(o.stdout.is_empty(), "pages go to files only");
    let main = fs::read_to_string(dir.path().join("urnscan.1")).expect("urnscan.1");
    assert_eq!(main, stdout(&run(urnscan().arg("man"))), "urnscan.1 is what `man` prints");
    for sub in SUBCOMMANDS {
        let name = format!("urnscan-{sub}.1");
        let page = fs::read_to_string(dir.path().join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(page.contains(&format!(".TH urnscan-{sub} 1")), "{name} title");
        assert!(page.contains(".SH EXAMPLES") && page.contains(".SH EXIT STATUS"), "{name} sections");
        for example in help_examples(sub) {
            assert!(unescape_roff(&page).contains(&example), "{name} lacks {example}");
        }
    }
    let dedup = unescape_roff(&fs::read_to_string(dir.path().join("urnscan-dedup.1")).unwrap());
    let status = dedup.split(".SH EXIT STATUS").nth(1).unwrap();
    assert!(status.contains("0 on success") && status.contains("1 with --strict"), "{status}");
    assert!(!status.contains("1 if none"), "dedup's page shows dedup's status only");
}

#[test]
fn man_out_dir_is_created_but_must_be_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("share/man/man1");
    let o = run(urnscan().args(["man", "--out-dir", path(&fresh)]));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(fresh.join("urnscan-scan.1").is_file());
    let file = dir.path().join("file");
    fs::write(&file, "x").unwrap();
    let o = run(urnscan().args(["man", "--out-dir", path(&file)]));
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).starts_with("urnscan: cannot create"), "{}", stderr(&o));
}

#[test]
fn every_subcommand_help_has_examples() {
    for sub in SUBCOMMANDS {
        let help = stdout(&run(urnscan().args([sub, "--help"])));
        assert!(help.contains("Examples:\n  "), "{sub} --help");
        assert!(help.contains("Exit status:"), "{sub} --help");
    }
}

/// A corpus with a long NID, several classes and an invalid candidate.
fn stats_corpus(dir: &Path) -> String {
    let long_nid = "abcdefghijklmnopqrstuvwxyz012345"; // 32 characters: the longest NID (RFC 8141 §2)
    let mut text = String::new();
    for i in 0..1500 {
        text.push_str(&format!("urn:ietf:rfc:{i} urn:isbn:{i} urn:x-foo:{i} urn:{long_nid}:{}\n", i % 7));
    }
    text.push_str("urn:a:b\n"); // a one-character NID: rejected
    let file = dir.join("corpus.txt");
    fs::write(&file, text).unwrap();
    path(&file).to_owned()
}

#[test]
fn stats_colour_always_never_and_no_color() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = stats_corpus(dir.path());
    let always = run(urnscan().args(["--color", "always", "scan", "--stats", &corpus]));
    assert_eq!(always.status.code(), Some(0));
    assert!(has_escape(&always.stdout), "--color always colours a pipe");
    // The option is global: it works after the subcommand too.
    let after = run(urnscan().args(["scan", "--stats", "--color", "always", &corpus]));
    assert!(has_escape(&after.stdout));
    // The no-color.org FAQ: a command-line flag overrides NO_COLOR.
    let forced = run(urnscan().args(["scan", "--stats", "--color=always", &corpus]).env("NO_COLOR", "1"));
    assert!(has_escape(&forced.stdout));

    let never = run(urnscan().args(["scan", "--stats", "--color", "never", &corpus]));
    let piped = run(urnscan().args(["scan", "--stats", &corpus]));
    let no_color = run(urnscan().args(["scan", "--stats", "--color", "auto", &corpus]).env("NO_COLOR", "1"));
    for (name, o) in [("never", &never), ("piped", &piped), ("NO_COLOR", &no_color)] {
        assert!(!has_escape(&o.stdout) && !has_escape(&o.stderr), "{name}: escapes in the output");
    }
    // Colour adds codes and nothing else: padding is the same.
    let plain = common::without_timing(&stdout(&never));
    assert_eq!(common::without_timing(&strip_sgr(&stdout(&always))), plain);
    assert_eq!(common::without_timing(&stdout(&piped)), plain);
}

#[test]
fn stats_table_columns_line_up() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = stats_corpus(dir.path());
    let text = stdout(&run(urnscan().args(["scan", "--stats", "--color", "always", &corpus])));
    let text = strip_sgr(&text);
    let table: Vec<&str> = text.lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(table.len(), 5, "header and four NIDs: {text}");
    let header = table[0];
    let class_at = header.find("class").unwrap();
    assert_eq!(class_at, 32 + 2, "the NID column is as wide as the longest NID");
    for row in &table[1..] {
        assert_eq!(row.len(), header.len(), "ragged row {row:?} under {header:?}");
        assert!(row[..class_at].ends_with("  ") && !row[class_at..].starts_with(' '), "class column: {row:?}");
    }
    // 1,500 of each, with a thousands separator, right-aligned under the header.
    let ietf = table.iter().find(|r| r.starts_with("ietf ")).unwrap();
    let occurrences_end = header.find("occurrences").unwrap() + "occurrences".len();
    assert_eq!(&ietf[occurrences_end - 5..occurrences_end], "1,500");
    assert!(ietf.ends_with("1,500"), "{ietf}");
    assert!(text.contains("  nid-too-short"), "invalid kinds listed: {text}");
    // The totals end with the time taken and the throughput (issue schema:
    // "... unique, elapsed, GB/s"), in the same columns.
    let last: Vec<&str> = text.lines().rev().take(2).collect();
    let aligned =
        last[1].starts_with(&format!("{:<12} ", "elapsed")) && last[0].starts_with(&format!("{:<12} ", "GB/s"));
    assert!(aligned && last.iter().all(|row| common::is_timing_row(row)), "{last:?}");
}

#[test]
fn check_markers_and_error_prefix_are_coloured_only_when_asked() {
    let args = ["check", "urn:ietf:rfc:8141", "urn:a:b"];
    let plain = run(urnscan().args(args).arg("--color=never"));
    let text = stdout(&plain);
    assert!(!has_escape(&plain.stdout));
    assert!(text.starts_with("urn:ietf:rfc:8141\tvalid\t") && text.contains("\nurn:a:b\tinvalid\t"), "{text}");
    let coloured = run(urnscan().args(args).arg("--color=always"));
    assert_eq!(coloured.status.code(), Some(1));
    let shown = stdout(&coloured);
    assert!(shown.contains("\t\x1b[") && shown.contains("valid\x1b[0m\t"), "{shown:?}");
    assert_eq!(strip_sgr(&shown), text, "colour changes nothing else");

    let dir = tempfile::tempdir().unwrap();
    let missing = path(&dir.path().join("missing.txt")).to_owned();
    let o = run(urnscan().args(["scan", "--color", "always", &missing]));
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.starts_with("\x1b[") && strip_sgr(&err).starts_with("urnscan: "), "{err:?}");
    let o = run(urnscan().args(["dedup", "--color", "always", &missing]));
    assert!(strip_sgr(&stderr(&o)).starts_with("urnscan: ") && has_escape(&o.stderr), "{:?}", stderr(&o));
    let o = run(urnscan().args(["scan", &missing]));
    assert!(stderr(&o).starts_with("urnscan: ") && !has_escape(&o.stderr), "{:?}", stderr(&o));
}

/// A corpus for the progress tests, with URNs and invalid lines for dedup.
fn progress_corpus(dir: &Path) -> String {
    let mut text = String::new();
    for i in 0..20_000 {
        text.push_str(&format!("urn:isbn:{}\nurn:ietf:rfc:{}\n", i % 5000, i % 300));
        if i % 1000 == 0 {
            text.push_str("urn:a:b\n");
        }
    }
    let file = dir.join("urns.txt");
    fs::write(&file, text).unwrap();
    path(&file).to_owned()
}

fn progress_lines(err: &str) -> Vec<&str> {
    err.lines().filter(|l| l.starts_with("urnscan: progress: ")).collect()
}

#[test]
fn forced_progress_into_a_pipe_changes_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = progress_corpus(dir.path());
    let runs: [&[&str]; 4] = [
        &["scan", &corpus],
        &["scan", "--unique", "--format", "jsonl", &corpus],
        &["dedup", "--count", &corpus],
        &["dedup", "--strict", "--format", "csv", &corpus],
    ];
    for args in runs {
        let quiet = run(urnscan().args(args));
        let shown = run(urnscan().args(args).arg("--progress"));
        assert_eq!(shown.stdout, quiet.stdout, "{args:?}: stdout changed");
        assert_eq!(shown.status.code(), quiet.status.code(), "{args:?}");
        assert!(progress_lines(&stderr(&quiet)).is_empty(), "{args:?}: progress without --progress");
        // A forced display on a pipe is plain lines, and at least the last one.
        let err = stderr(&shown);
        let lines = progress_lines(&err);
        let last = lines.last().unwrap_or_else(|| panic!("{args:?}: no progress line in {err:?}"));
        assert!(last.contains(" in ") && last.contains("/s"), "{last}");
        assert!(!err.contains('\r') && !has_escape(&shown.stderr), "{args:?}: terminal control in a pipe");
        // Everything else on stderr is what the quiet run printed.
        let rest: Vec<&str> = err.lines().filter(|l| !l.starts_with("urnscan: progress: ")).collect();
        assert_eq!(rest, stderr(&quiet).lines().collect::<Vec<_>>(), "{args:?}");
    }
}

#[test]
fn last_progress_flag_wins_and_stdin_has_no_eta() {
    let dir = tempfile::tempdir().unwrap();
    let corpus = progress_corpus(dir.path());
    let o = run(urnscan().args(["scan", "--progress", "--no-progress", &corpus]));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    let o = run(urnscan().args(["scan", "--no-progress", "--progress", &corpus]));
    assert_eq!(progress_lines(&stderr(&o)).len(), 1, "{}", stderr(&o));
    // CI and --quiet only change the default; --progress still wins.
    let o = run(urnscan().args(["dedup", "--progress", "-q", &corpus]).env("CI", "true"));
    assert_eq!(progress_lines(&stderr(&o)).len(), 1, "{}", stderr(&o));
    assert!(!stderr(&o).contains("lines read"), "--quiet still hides the summary");

    let o = run(urnscan().args(["scan", "--progress"]).stdin(fs::File::open(&corpus).unwrap()));
    let err = stderr(&o);
    let lines = progress_lines(&err);
    assert_eq!(lines.len(), 1, "{err}");
    let size = fs::metadata(&corpus).unwrap().len();
    assert!(!lines[0].contains("ETA") && !lines[0].contains('%'), "{err}");
    assert!(lines[0].contains(&format!("{:.2} kB", size as f64 / 1000.0)), "all {size} bytes counted: {err}");
}

/// Progress measures decoded inputs against their size on disk, as the
/// bar's total is: an archive's compressed bytes (one decoded inline, one
/// of over 4 MiB decoded ahead on a thread), a UTF-16 file's two bytes
/// per unit, not the text they decode to.
#[test]
fn progress_of_decoded_inputs_counts_their_bytes_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..400_000).map(|i| format!("urn:isbn:{}\n", i % 1000)).collect();
    let utf16 = utf16le(&text[..200_000], true);
    let files =
        [("small.gz", gzip(&text.as_bytes()[..300_000])), ("large.gz", gzip(text.as_bytes())), ("utf16.txt", utf16)];
    assert!(text.len() > 4 << 20);
    let mut paths = Vec::new();
    for (name, bytes) in &files {
        // Sizes written as "{:.2} kB", which none of the decoded sizes is.
        assert!((1_000..1_000_000).contains(&bytes.len()), "{name}: {}", bytes.len());
        let path = dir.path().join(name);
        fs::write(&path, bytes).unwrap();
        paths.push(path);
    }
    let all = paths.iter().map(|p| path(p).to_owned()).collect::<Vec<_>>();
    let runs = paths.iter().map(|p| vec![path(p).to_owned()]).chain([all]);
    for inputs in runs {
        let size: u64 = inputs.iter().map(|p| fs::metadata(p).unwrap().len()).sum();
        let want = format!("urnscan: progress: {:.2} kB in ", size as f64 / 1000.0);
        for (command, threads) in [("scan", "-j1"), ("scan", "-j2"), ("dedup", "-j1"), ("dedup", "-j2")] {
            let o = run(urnscan().args([command, "-z", "--progress", threads]).args(&inputs));
            let err = stderr(&o);
            let last = progress_lines(&err).last().copied().unwrap_or_default();
            assert!(last.starts_with(&want), "{command} {threads} {inputs:?}: {last:?}, want {want:?}");
        }
    }
}

/// A binary file skipped (`--binary skip`) counts as gone through: its size
/// on disk, whether it is mapped or, not mapped, streamed (a large one;
/// its first 8 KiB are all that is read of it).
#[test]
fn progress_counts_skipped_binary_files_by_their_size() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..20_000).map(|i| format!("urn:isbn:{:0>9}\n", i % 1000)).collect();
    let mut binary = b"urn:ex:1 \0".to_vec();
    binary.resize(1_500_000, b'x');
    let (t, b) = (dir.path().join("t.txt"), dir.path().join("b.bin"));
    fs::write(&t, &text).unwrap();
    fs::write(&b, &binary).unwrap();
    // Written "1.88 MB"; the text alone would be "380.00 kB".
    assert_eq!(text.len() + binary.len(), 1_880_000);
    for mmap in ["auto", "never"] {
        let o =
            run(urnscan().args(["scan", "-c", "--binary", "skip", "--progress", "--mmap", mmap, path(&t), path(&b)]));
        assert_eq!(o.status.code(), Some(0), "{mmap}: {}", stderr(&o));
        assert_eq!(stdout(&o), format!("{}:20000\n", path(&t)));
        let err = stderr(&o);
        let last = progress_lines(&err).last().copied().unwrap_or_default();
        assert!(last.starts_with("urnscan: progress: 1.88 MB in "), "--mmap {mmap}: {last:?}");
    }
}

/// The default never shows progress when stderr is not a terminal, even for
/// an input large enough that a terminal would get a bar (a sparse file, so
/// the test writes almost nothing).
#[test]
fn no_progress_in_a_pipe_even_for_large_inputs() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("sparse.bin");
    let file = fs::File::create(&big).unwrap();
    file.set_len(300 << 20).unwrap();
    drop(file);
    let o = run(urnscan().args(["scan", "--stats", "--format", "json", path(&big)]));
    assert_eq!(o.status.code(), Some(1), "no URN in zeros");
    assert!(o.stderr.is_empty(), "stderr: {}", stderr(&o));
    let stats: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(stats["bytes"], 300 << 20);
}

/// A pipeline's pipes are grown to 1 MiB by the command where the system
/// allows it (64 KiB made every block read and buffer written wait on the
/// other process several times; see `urnscan::platform::pipe`), on standard
/// input whether or not it is read. Linux only: elsewhere there is no such
/// setting.
#[cfg(target_os = "linux")]
#[test]
fn the_pipes_on_stdin_and_stdout_are_grown() {
    use std::process::Stdio;
    use urnscan::platform::pipe::{capacity, PIPE_BYTES};

    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("in.txt");
    fs::write(&path, "see urn:isbn:0451450523\n").unwrap();
    let max: usize = fs::read_to_string("/proc/sys/fs/pipe-max-size").unwrap().trim().parse().unwrap();
    let mut child = urnscan()
        .args(["scan", path.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("run urnscan");
    // This end of each pipe outlives the command, so the pipes can be
    // asked for their size after it has exited (taken first: `wait` closes
    // the child's stdin).
    let (stdin, stdout) = (child.stdin.take().unwrap(), child.stdout.take().unwrap());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let sizes = (capacity(&stdin), capacity(&stdout));
    if max >= PIPE_BYTES {
        assert_eq!(sizes, (Some(PIPE_BYTES), Some(PIPE_BYTES)));
    } else {
        // The system refuses 1 MiB: the pipes get the largest power of two
        // below it that the system grants (see `pipe::grow`), if any.
        assert!(sizes.0.is_some() && sizes.1.is_some(), "{sizes:?}");
    }
}

#[test]
fn thread_counts_past_eight_per_cpu_are_lowered_with_a_note() {
    // Uncapped, `-j 99999` aborted (the threads' stacks could not be
    // allocated) and `-j 10000` took minutes on a 2-CPU machine; the
    // output is the same for any number of threads.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("u.txt");
    fs::write(&file, "urn:ab:c\nurn:AB:c\n").unwrap();
    for sub in [&["scan", "-u"][..], &["dedup"], &["check"]] {
        let o = run(urnscan().args(sub).args(["-j", "99999"]).arg(path(&file)));
        let want = run(urnscan().args(sub).args(["-j", "1"]).arg(path(&file)));
        assert_eq!(o.status.code(), want.status.code(), "{sub:?}: {}", stderr(&o));
        assert_eq!(o.stdout, want.stdout, "{sub:?}");
        let note = format!("urnscan: -j 99999 is more than 8 threads per CPU ({cpus} here): using {}\n", cpus * 8);
        assert_eq!(stderr(&o), note + &stderr(&want), "{sub:?}");
        // Within the limit, nothing more is said.
        let o = run(urnscan().args(sub).args(["-j", &(cpus * 8).to_string()]).arg(path(&file)));
        assert_eq!(stderr(&o), stderr(&want), "{sub:?}");
    }
}

/// Help and the version that cannot be written are an error, as any
/// output that fails is (README: status 2, one line on stderr naming
/// standard output); a closed pipe (`urnscan --help | head -1`) ends the
/// program quietly with the status it would have had (0).
#[test]
fn help_and_version_that_cannot_be_written_exit_2() {
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    for args in [&["--help"][..], &["--version"], &["-V"], &["scan", "--help"], &["help", "dedup"], &["check", "-h"]] {
        let o = run(urnscan().args(args).stdout(full.try_clone().unwrap()));
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = stderr(&o);
        assert!(err.contains("standard output") && err.contains("No space left on device"), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        // Where it can be written, the same arguments succeed.
        let o = run(urnscan().args(args));
        assert_eq!((o.status.code(), o.stderr.is_empty(), o.stdout.is_empty()), (Some(0), true, false), "{args:?}");
    }
    // A closed pipe: our end of it is gone before (or while) urnscan writes.
    for args in [&["--help"][..], &["--version"]] {
        let mut child = urnscan()
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let o = child.wait_with_output().unwrap();
        assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()), "{args:?}");
    }
}
