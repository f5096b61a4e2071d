//! `urnscan dedup`, run as a user would: the shipped dataset against its
//! hand-written expectation, output modes and formats, rejected lines,
//! summary counts, exit codes, and the guarantees that thread counts, block
//! sizes, streams and `--memory-limit` never change the output.
//!
//! Expected values come from the rules (README of `datasets/expected/`,
//! RFC 8141 §3, RFC 4122 §3, RFC 2648 §2) or from the generator's own truth
//! file, never from a previous run of `dedup`.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn urnscan_in(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_urnscan"));
    cmd.current_dir(Path::new(env!("CARGO_MANIFEST_DIR"))).args(args);
    common::run_fed(cmd, stdin)
}

fn dedup(args: &[&str], stdin: &[u8]) -> Output {
    let mut all = vec!["dedup"];
    all.extend_from_slice(args);
    urnscan_in(&all, stdin)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn read(path: &str) -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

/// The summary rows of stderr (`name   1,234`), by name.
fn summary(o: &Output) -> BTreeMap<String, u64> {
    stderr(o)
        .lines()
        .filter_map(|l| {
            let (name, value) = l.trim_end().rsplit_once(' ')?;
            Some((name.trim().to_owned(), value.replace(',', "").parse().ok()?))
        })
        .collect()
}

/// Reject messages on stderr: `FILE:LINE: kind: ...` as (file, line, kind).
fn reject_messages(o: &Output) -> Vec<(String, u64, String)> {
    stderr(o)
        .lines()
        .filter_map(|l| {
            let mut parts = l.splitn(4, ": ");
            let (where_, kind) = (parts.next()?, parts.next()?);
            parts.next()?;
            let (file, line) = where_.rsplit_once(':')?;
            Some((file.to_owned(), line.parse().ok()?, kind.to_owned()))
        })
        .collect()
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("urnscan-cli-dedup-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    fn file(&self, name: &str, contents: &[u8]) -> String {
        let path = self.0.join(name);
        fs::write(&path, contents).unwrap();
        path.to_str().unwrap().to_owned()
    }

    fn path(&self, name: &str) -> String {
        self.0.join(name).to_str().unwrap().to_owned()
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// `urnscan gen --dataset`, with its truth file (`key<TAB>count`, first-seen order).
fn generate(dir: &TempDir, lines: u64, distinct: u64) -> (String, String) {
    let (data, truth) = (dir.path("data.txt"), dir.path("truth.tsv"));
    let o = urnscan_in(
        &[
            "gen",
            "--dataset",
            "--lines",
            &lines.to_string(),
            "--distinct",
            &distinct.to_string(),
            "--truth",
            &truth,
            "-o",
            &data,
        ],
        b"",
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    (data, truth)
}

#[test]
fn mixed_dataset_matches_the_hand_written_expectation() {
    let expected = read("datasets/expected/mixed.dedup.txt");
    let file = "datasets/urns/mixed.txt";
    for args in [&["-j1", file][..], &["-j2", file], &["--block-size", "1", file], &[]] {
        // No file argument: the same bytes on stdin (a stream, not a file).
        let stdin = if args.is_empty() { fs::read(file).unwrap() } else { Vec::new() };
        let o = dedup(args, &stdin);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert_eq!(stdout(&o), expected, "{args:?}");
        // The counts of datasets/expected/README.md.
        let s = summary(&o);
        let row = |name: &str| s.get(name).copied().unwrap_or(u64::MAX);
        assert_eq!(
            (row("lines read"), row("valid"), row("invalid"), row("empty"), row("distinct")),
            (300, 278, 17, 5, 34),
            "{args:?}"
        );
        let kinds = [
            ("not-urn", 1),
            ("nid-empty", 1),
            ("nid-too-short", 2),
            ("nid-too-long", 1),
            ("nid-leading-hyphen", 1),
            ("nid-trailing-hyphen", 1),
            ("missing-nss-colon", 1),
            ("nss-empty", 1),
            ("nss-leading-slash", 1),
            ("nss-bad-char", 1),
            ("bad-percent-encoding", 1),
            ("lone-question-mark", 1),
            ("empty-r-component", 1),
            ("empty-q-component", 1),
            ("component-bad-char", 1),
            ("non-ascii", 1),
        ];
        for (kind, n) in kinds {
            assert_eq!(row(kind), n, "{kind} {args:?}");
        }
        let messages = reject_messages(&o);
        assert_eq!(messages.len(), 17);
        let name = if args.is_empty() { "-" } else { file };
        assert!(messages.iter().all(|m| m.0 == name), "{messages:?}");
        assert!(messages.contains(&(name.to_owned(), 127, "not-urn".to_owned())), "{messages:?}");
        assert!(messages.windows(2).all(|w| w[0].1 < w[1].1), "in line order");
    }
}

#[test]
fn mixed_dataset_with_namespace_rules() {
    // RFC 4122 §3 merges the upper-case UUID into the lower-case one (first
    // seen at line 13), RFC 2648 §2 merges urn:ietf:RFC:8141 into
    // URN:IETF:rfc:8141 (line 21): two classes of the expectation go.
    let expected: String = read("datasets/expected/mixed.dedup.txt")
        .lines()
        .filter(|l| *l != "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6" && *l != "urn:ietf:RFC:8141")
        .map(|l| format!("{l}\n"))
        .collect();
    let o = dedup(&["--ns-rules", "datasets/urns/mixed.txt"], b"");
    assert_eq!(stdout(&o), expected);
    assert_eq!(summary(&o)["distinct"], 32);
    // Class sizes: uuid lines 13, 116, 240, 177, 273 (lower hex) + 75, 88,
    // 119, 157, 169 (upper); ietf 21, 202, 211, 215, 229, 292 + 30, 129,
    // 185, 236, 277 + 208, 260.
    let o = dedup(&["--ns-rules", "--count", "--keys", "datasets/urns/mixed.txt"], b"");
    let text = stdout(&o);
    assert!(text.contains("\n10\turn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6\n"), "{text}");
    assert!(text.contains("\n13\turn:ietf:rfc:8141\n"), "{text}");
}

#[test]
fn namespace_rules_examples() {
    let input = b"urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6\n\
                  urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6\n\
                  URN:IETF:RFC:2648\n\
                  urn:ietf:rfc:2648\n\
                  urn:ietf:rfc:02648\n\
                  urn:ietf:id:IETF-URN-IETF-06\n\
                  urn:ietf:ID:ietf-urn-ietf-06\n\
                  urn:example:F81D4FAE\n\
                  urn:example:f81d4fae\n";
    // Without --ns-rules only RFC 8141 applies: nine lines, eight classes
    // (URN:IETF:RFC:2648 and urn:ietf:RFC:2648 differ in the NSS).
    assert_eq!(stdout(&dedup(&[], input)).lines().count(), 9);
    let o = dedup(&["--ns-rules", "--count"], input);
    assert_eq!(
        stdout(&o),
        "2\turn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6\n\
         2\tURN:IETF:RFC:2648\n\
         1\turn:ietf:rfc:02648\n\
         1\turn:ietf:id:IETF-URN-IETF-06\n\
         1\turn:ietf:ID:ietf-urn-ietf-06\n\
         1\turn:example:F81D4FAE\n\
         1\turn:example:f81d4fae\n"
    );
    let o = dedup(&["--ns-rules", "--keys"], input);
    assert_eq!(
        stdout(&o).lines().take(2).collect::<Vec<_>>(),
        ["urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6", "urn:ietf:rfc:2648"]
    );
}

const ORDER_INPUT: &[u8] = b"urn:ex:b\nURN:EX:a\nurn:ex:A\nurn:ex:a?+x\nurn:Ex:b#f\n";

#[test]
fn first_seen_order_and_forms() {
    // Classes by RFC 8141 key: urn:ex:b (lines 1, 5), urn:ex:a (2, 4), urn:ex:A (3).
    assert_eq!(stdout(&dedup(&[], ORDER_INPUT)), "urn:ex:b\nURN:EX:a\nurn:ex:A\n");
    assert_eq!(stdout(&dedup(&["--count"], ORDER_INPUT)), "2\turn:ex:b\n2\tURN:EX:a\n1\turn:ex:A\n");
    assert_eq!(stdout(&dedup(&["--keys"], ORDER_INPUT)), "urn:ex:b\nurn:ex:a\nurn:ex:A\n");
}

#[test]
fn sort_by_key() {
    // Byte order of the keys: "A" (0x41) < "a" < "b".
    assert_eq!(stdout(&dedup(&["--sort", "key"], ORDER_INPUT)), "urn:ex:A\nURN:EX:a\nurn:ex:b\n");
    assert_eq!(
        stdout(&dedup(&["--sort", "key", "--keys", "--count"], ORDER_INPUT)),
        "1\turn:ex:A\n2\turn:ex:a\n2\turn:ex:b\n"
    );
    assert_eq!(stdout(&dedup(&["--sort", "first-seen"], ORDER_INPUT)), "urn:ex:b\nURN:EX:a\nurn:ex:A\n");
}

#[test]
fn sort_by_count() {
    // Two lines each for urn:ex:a and urn:ex:b, tied, so by key ("a" <
    // "b"), then urn:ex:A with one line.
    assert_eq!(stdout(&dedup(&["--sort", "count", "--count"], ORDER_INPUT)), "2\tURN:EX:a\n2\turn:ex:b\n1\turn:ex:A\n");
    // urn:ex:b gets a third line and comes first; csv keeps the order.
    let input = [ORDER_INPUT, b"URN:ex:b\n"].concat();
    assert_eq!(
        stdout(&dedup(&["--sort", "count", "--format", "csv"], &input)),
        "key,urn,count,nid,path,line\nurn:ex:b,urn:ex:b,3,ex,-,1\nurn:ex:a,URN:EX:a,2,ex,-,2\nurn:ex:A,urn:ex:A,1,ex,-,3\n"
    );
}

#[test]
fn jsonl_and_csv_give_the_first_occurrence() {
    let dir = TempDir::new("formats");
    let a = dir.file("a.txt", b"urn:ex:one\n\nURN:Ex:Two,2\n");
    let b = dir.file("b.txt", b"urn:ex:two,2\nurn:isbn:1\nurn:ex:one\n");
    let o = dedup(&["--format", "jsonl", &a, &b], b"");
    let rows: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let expect = |key: &str, urn: &str, count: u64, nid: &str, path: &str, line: u64| serde_json::json!({"key": key, "urn": urn, "count": count, "nid": nid, "path": path, "line": line});
    assert_eq!(
        rows,
        [
            expect("urn:ex:one", "urn:ex:one", 2, "ex", &a, 1),
            expect("urn:ex:Two,2", "URN:Ex:Two,2", 1, "ex", &a, 3),
            expect("urn:ex:two,2", "urn:ex:two,2", 1, "ex", &b, 1),
            expect("urn:isbn:1", "urn:isbn:1", 1, "isbn", &b, 2),
        ]
    );
    // --keys and --count only shape text output.
    assert_eq!(stdout(&dedup(&["--format", "jsonl", "--keys", "--count", &a, &b], b"")), stdout(&o));
    let o = dedup(&["--format", "csv", "--sort", "key", &a, &b], b"");
    assert_eq!(
        stdout(&o),
        format!(
            "key,urn,count,nid,path,line\n\
             \"urn:ex:Two,2\",\"URN:Ex:Two,2\",1,ex,{a},3\n\
             urn:ex:one,urn:ex:one,2,ex,{a},1\n\
             \"urn:ex:two,2\",\"urn:ex:two,2\",1,ex,{b},1\n\
             urn:isbn:1,urn:isbn:1,1,isbn,{b},2\n"
        )
    );
    // Stdin is "-".
    let o = dedup(&["--format", "jsonl"], b"\n\nurn:ex:x\n");
    assert_eq!(
        stdout(&o),
        "{\"key\":\"urn:ex:x\",\"urn\":\"urn:ex:x\",\"count\":1,\"nid\":\"ex\",\"path\":\"-\",\"line\":3}\n"
    );
}

/// A rejected line is quoted on stderr with its bytes escaped as
/// `<[u8]>::escape_ascii` does (`\xff`, `\x00`, `\x01`, `\"`), so a byte
/// that is not UTF-8 or not printable shows as itself, not as U+FFFD or a
/// Rust escape of its lossy text; a line longer than 120 bytes is cut there.
#[test]
fn rejected_lines_are_quoted_with_their_bytes_escaped() {
    // Printable text as itself (é), every other byte as escape_ascii
    // escapes it: not UTF-8, NUL, a C1 control (U+0085), quotes, a
    // backslash; 120 bytes at most, not cutting a character in two.
    let long = [&b"urn:a:"[..], &[1u8; 150]].concat();
    let accents = format!("urn:a:x{}", "é".repeat(100));
    let input = [
        &b"urn:ex:\xff\x00a\n\"urn:ab\"\n"[..],
        "urn:x:é\u{85}\\\n".as_bytes(),
        &long,
        b"\n",
        accents.as_bytes(),
        b"\n",
    ]
    .concat();
    let o = dedup(&[], &input);
    let err = stderr(&o);
    let quoted: Vec<&str> = err.lines().filter_map(|l| l.split_once(", at byte ").map(|(_, q)| q)).collect();
    let cut = format!("5 of \"urn:a:{}...\"", r"\x01".repeat(114));
    // 7 bytes, then 56 two-byte é make 119: the 57th would end at byte 121.
    let cut_accents = format!("5 of \"urn:a:x{}...\"", "é".repeat(56));
    assert_eq!(
        quoted,
        [
            r#"7 of "urn:ex:\xff\x00a""#,
            r#"0 of "\"urn:ab\"""#,
            r#"5 of "urn:x:é\xc2\x85\\""#,
            cut.as_str(),
            cut_accents.as_str()
        ],
        "{err}"
    );
}

/// Characters that look like nothing, or like a space, are escaped in the
/// quote as their UTF-8 bytes, as a C1 control is: every character that
/// Rust's `char::escape_debug` escapes (whitespace other than the space,
/// format characters, combining marks, unassigned and private-use ones) but
/// `'`. Before, `urn:ab:x` and a NO-BREAK SPACE was quoted as
/// `"urn:ab:x "`, which reads as a trailing space that dedup trims.
#[test]
fn invisible_characters_are_escaped_in_quotes() {
    let lines = [
        "urn:ab:x\u{a0}",
        "urn:ab:x\u{200b}y",
        "urn:ab:\u{feff}x",
        "urn:ab:x\u{3000}",
        "urn:ab:x\u{ad}y\u{2028}\u{202f}\u{205f}\u{2000}\u{200f}\u{2029}",
        "urn:ab:e\u{301}",
        "urn:ab:it's-caf\u{e9}-\u{1f600}",
    ];
    let o = dedup(&[], lines.join("\n").as_bytes());
    let err = stderr(&o);
    let quoted: Vec<&str> = err.lines().filter_map(|l| l.split_once(", at byte ").map(|(_, q)| q)).collect();
    assert_eq!(
        quoted,
        [
            r#"8 of "urn:ab:x\xc2\xa0""#,
            r#"8 of "urn:ab:x\xe2\x80\x8by""#,
            r#"7 of "urn:ab:\xef\xbb\xbfx""#,
            r#"8 of "urn:ab:x\xe3\x80\x80""#,
            r#"8 of "urn:ab:x\xc2\xady\xe2\x80\xa8\xe2\x80\xaf\xe2\x81\x9f\xe2\x80\x80\xe2\x80\x8f\xe2\x80\xa9""#,
            r#"8 of "urn:ab:e\xcc\x81""#,
            r#"15 of "urn:ab:it's-café-😀""#,
        ],
        "{err}"
    );
}

#[test]
fn rejects_on_stderr_and_in_a_file() {
    let input = b"urn:ab:x\nurn:a:b\n\nnot a urn\nurn:ab:x\n";
    let o = dedup(&[], input);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "urn:ab:x\n");
    assert_eq!(
        reject_messages(&o),
        [("-".to_owned(), 2, "nid-too-short".to_owned()), ("-".to_owned(), 4, "not-urn".to_owned())]
    );
    assert!(stderr(&o).contains("-:2: nid-too-short: "), "{}", stderr(&o));

    let dir = TempDir::new("rejects");
    let rejects = dir.path("rejects.tsv");
    let o = dedup(&["--rejects", &rejects], input);
    assert_eq!(fs::read_to_string(&rejects).unwrap(), "2\tnid-too-short\turn:a:b\n4\tnot-urn\tnot a urn\n");
    assert!(reject_messages(&o).is_empty(), "{}", stderr(&o));
    assert_eq!(summary(&o)["invalid"], 2);

    // --quiet: nothing on stderr, the rejects file all the same.
    fs::remove_file(&rejects).unwrap();
    let o = dedup(&["--quiet", "--rejects", &rejects], input);
    assert_eq!(stderr(&o), "");
    assert_eq!(fs::read_to_string(&rejects).unwrap(), "2\tnid-too-short\turn:a:b\n4\tnot-urn\tnot a urn\n");
    let o = dedup(&["--quiet"], input);
    assert_eq!((stderr(&o).as_str(), stdout(&o).as_str()), ("", "urn:ab:x\n"));

    // Several inputs: the path comes first.
    let a = dir.file("a.txt", b"urn:a:b\n");
    let b = dir.file("b.txt", b"urn:ok:1\n urn:: \r\n");
    let o = dedup(&["--rejects", &rejects, &a, &b], b"");
    assert_eq!(
        fs::read_to_string(&rejects).unwrap(),
        format!("{a}\t1\tnid-too-short\turn:a:b\n{b}\t2\tnid-empty\turn::\n")
    );
    let o2 = dedup(&[&a, &b], b"");
    assert_eq!(
        reject_messages(&o2),
        [(a.clone(), 1, "nid-too-short".to_owned()), (b.clone(), 2, "nid-empty".to_owned())]
    );
    assert_eq!(stdout(&o), "urn:ok:1\n");

    // The text is the last column, trimmed, with a tab, a carriage return
    // and a backslash inside it escaped: a row splits into its three
    // fields at every tab.
    let o = dedup(&["--rejects", &rejects], b"\turn:ab:x\ty\\z\rw \t\nurn:ab:x\n");
    assert_eq!(stdout(&o), "urn:ab:x\n");
    let row = fs::read_to_string(&rejects).unwrap();
    let fields: Vec<&str> = row.trim_end_matches('\n').split('\t').collect();
    assert_eq!(fields, ["1", "nss-bad-char", r"urn:ab:x\ty\\z\rw"], "{row:?}");
}

/// urnscan run in `dir` (so that a file named `-` would land there).
fn urnscan_at(dir: &TempDir, args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_urnscan"));
    cmd.current_dir(&dir.0).args(args);
    common::run_fed(cmd, stdin)
}

/// A bad value is refused before any output file is created or any input
/// read: the rejects file and gen's corpus and truth keep what they held
/// (each was emptied once, the value being checked only after the file
/// was created), and `--files-from -` leaves stdin unread.
#[test]
fn a_bad_value_leaves_the_output_files_alone() {
    let dir = TempDir::new("bad-value");
    let (kept, input) = (dir.file("kept.txt", b"keep"), dir.file("in.txt", b"urn:ab:x\n"));
    let runs = [
        &["dedup", "--rejects", &kept, "--nid", "a b", &input][..],
        &["gen", "-o", &kept, "--size", "5XB"],
        &["gen", "--dataset", "--distinct", "0", "-o", &kept, "--truth", &kept],
    ];
    for args in runs {
        let o = urnscan_at(&dir, args, b"");
        assert_eq!(
            (o.status.code(), fs::read(&kept).unwrap()),
            (Some(2), b"keep".to_vec()),
            "{args:?}: {}",
            stderr(&o)
        );
    }
    // Stdin would hold the list: the refusal does not wait for it (a pipe
    // that never ends would hang the run).
    let mut child = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["scan", "--files-from", "-", "--nid", "a b"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > std::time::Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("the refusal waited for stdin");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(2));
}

/// An output file that is also an input is refused before it is created,
/// which would have emptied the dataset before it was read: `dedup
/// --rejects` naming an input by any of its names, found in a directory
/// given (a run again over the directory that holds the last rejects read
/// the rows it was writing), or the file stdin reads; gen's `-o` and
/// `--truth` naming one file, also one that does not exist yet.
#[test]
fn an_output_file_that_is_an_input_is_refused() {
    let dir = TempDir::new("same-file");
    let data = b"urn:ab:1\nnot a urn\n";
    let kept = dir.file("kept.txt", data);
    fs::create_dir(dir.path("d")).unwrap();
    let in_dir = dir.file("d/old-rejects.tsv", data);
    #[cfg(unix)]
    std::os::unix::fs::symlink(&kept, dir.path("link.txt")).unwrap();
    let mut runs = vec![
        vec!["dedup", "--rejects", &kept, &kept],
        vec!["dedup", "-q", "--rejects", "./kept.txt", "d", &kept],
        vec!["dedup", "--rejects", "d/old-rejects.tsv", "d"],
    ];
    if cfg!(unix) {
        runs.push(vec!["dedup", "--rejects", "link.txt", "kept.txt"]);
    }
    for args in &runs {
        let o = urnscan_at(&dir, args, b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains("would empty it before it is read"), "{args:?}: {}", stderr(&o));
        assert_eq!((fs::read(&kept).unwrap(), fs::read(&in_dir).unwrap()), (data.to_vec(), data.to_vec()), "{args:?}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .current_dir(&dir.0)
        .args(["dedup", "--rejects", "kept.txt"])
        .stdin(fs::File::open(&kept).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is the file standard input reads"), "{}", stderr(&o));
    assert_eq!(fs::read(&kept).unwrap(), data);
    // gen: one file by two names, existing or not.
    fs::create_dir(dir.path("e")).unwrap();
    for (o_file, truth) in [(kept.as_str(), "./kept.txt"), ("new.txt", "e/../new.txt"), ("new2.txt", "new2.txt")] {
        let o = urnscan_at(&dir, &["gen", "--size", "4KiB", "-o", o_file, "--truth", truth], b"");
        assert_eq!(o.status.code(), Some(2), "{o_file} {truth}");
        assert!(stderr(&o).contains("name one file"), "{}", stderr(&o));
    }
    assert_eq!(fs::read(&kept).unwrap(), data);
    // gen's corpus on stdout, redirected to the truth file.
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .current_dir(&dir.0)
        .args(["gen", "--size", "4KiB", "--truth", "t.tsv"])
        .stdout(fs::File::create(dir.path("t.tsv")).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("is the file standard output writes the corpus to"), "{}", stderr(&o));
    // Files of their own: no refusal; nor for a device, where writing
    // loses nothing (`/dev/null` read and written).
    let o = urnscan_at(&dir, &["dedup", "-q", "--rejects", "r.tsv", "d", &kept], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["dedup", "--rejects", "/dev/null"])
        .stdin(fs::File::open("/dev/null").unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

/// `-` is stdout for an output file as it is stdin for an input (README,
/// `dedup --help`): `dedup --rejects -` writes the rejects' rows to stdout
/// instead of the classes, `-q` or not, and refuses the options that
/// shape the classes; `gen -o -` and `gen --truth -` write to stdout. No
/// file named `-` is created; a closed pipe ends the run quietly.
#[test]
fn dash_as_an_output_file_is_stdout() {
    let dir = TempDir::new("dash");
    let input = b"urn:ab:x\nurn:a:b\n\nnot a urn\nurn:ab:x\n";
    let rows = "2\tnid-too-short\turn:a:b\n4\tnot-urn\tnot a urn\n";
    for quiet in [&["-q"][..], &[]] {
        let o = urnscan_at(&dir, &[&["dedup"][..], quiet, &["--rejects", "-"]].concat(), input);
        assert_eq!((o.status.code(), stdout(&o)), (Some(0), rows.to_owned()), "{quiet:?}: {}", stderr(&o));
        assert!(reject_messages(&o).is_empty(), "{}", stderr(&o));
        assert_eq!(stderr(&o).is_empty(), !quiet.is_empty(), "{}", stderr(&o));
    }
    assert_eq!(summary(&urnscan_at(&dir, &["dedup", "--rejects", "-"], input))["distinct"], 1);
    let shaping = [
        &["--stats"][..],
        &["-c"],
        &["--keys"],
        &["-d"],
        &["--min-count", "2"],
        &["--sort", "count"],
        &["--format", "jsonl"],
    ];
    for option in shaping {
        let o = urnscan_at(&dir, &[&["dedup", "--rejects", "-"][..], option].concat(), input);
        assert_eq!((o.status.code(), stdout(&o)), (Some(2), String::new()), "{option:?}");
        assert!(
            stderr(&o).contains("--rejects - writes the rejected lines to stdout instead of the classes"),
            "{}",
            stderr(&o)
        );
    }
    // gen: the corpus with -o -, the truth with --truth - (then -o FILE is needed).
    let o = urnscan_at(&dir, &["gen", "--dataset", "--lines", "10", "--distinct", "3", "-o", "-"], b"");
    assert_eq!((o.status.code(), stdout(&o).lines().count()), (Some(0), 10), "{}", stderr(&o));
    let data = dir.path("data.txt");
    let o =
        urnscan_at(&dir, &["gen", "--dataset", "--lines", "10", "--distinct", "3", "--truth", "-", "-o", &data], b"");
    assert_eq!((o.status.code(), stdout(&o).lines().count()), (Some(0), 3), "{}", stderr(&o));
    assert_eq!(fs::read_to_string(&data).unwrap().lines().count(), 10);
    let o = urnscan_at(&dir, &["gen", "--dataset", "--lines", "10", "--truth", "-"], b"");
    assert_eq!((o.status.code(), stdout(&o)), (Some(2), String::new()));
    assert!(stderr(&o).contains("--truth - writes the truth to stdout"), "{}", stderr(&o));
    assert!(!dir.0.join("-").exists(), "a file named - was written");

    // A closed pipe: quiet, status 0, as for the classes.
    let many = dir.file("many.txt", &b"urn:a:b\n".repeat(200_000));
    let mut child = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["dedup", "-q", "--rejects", "-", &many])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut first).unwrap();
    assert_eq!(first, "1\tnid-too-short\turn:a:b\n");
    let o = child.wait_with_output().unwrap();
    assert_eq!((o.status.code(), stderr(&o)), (Some(0), String::new()));
}

/// A write error that stops the run names what could not be written: the
/// rejects' destination (stdout with `--rejects -`, or the file), or the
/// spill files' directory, not "rejected lines or spill files" for both.
/// Linux: a full disk is `/dev/full`; stdout is made that file.
#[test]
fn a_write_error_names_what_could_not_be_written() {
    let dir = TempDir::new("write-error");
    let Ok(full) = fs::OpenOptions::new().write(true).open("/dev/full") else {
        eprintln!("skipped: no /dev/full");
        return;
    };
    // Enough rejects to fill the 64 KiB buffer before the end.
    let bad = dir.file("bad.txt", &b"not a urn\n".repeat(20_000));
    let o = dedup(&["--rejects", "/dev/full", &bad], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot write /dev/full: "), "{}", stderr(&o));

    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["dedup", "--rejects", "-", &bad])
        .stdout(full)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("cannot write to standard output: "), "{}", stderr(&o));

    // A spill directory that cannot be made: named, with the option that moves it.
    let many: Vec<u8> = (0..20_000).flat_map(|i| format!("urn:ab:{i}\n").into_bytes()).collect();
    let many = dir.file("many.txt", &many);
    let missing = dir.path("missing");
    let o = dedup(&["-q", "--memory-limit", "64KiB", "--temp-dir", &missing, &many], b"");
    assert_eq!(o.status.code(), Some(2));
    let want = format!("cannot write the spill files in {missing} (--temp-dir chooses where): ");
    assert!(stderr(&o).contains(&want), "{}", stderr(&o));
    assert!(!stderr(&o).contains("rejected"), "{}", stderr(&o));
}

/// A field of the rejects file as its documented rule writes it: a tab, a
/// line feed, a carriage return and a backslash as `\t`, `\n`, `\r`, `\\`.
fn tsv_escaped(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for &b in bytes {
        match b {
            b'\t' => out.extend_from_slice(br"\t"),
            b'\n' => out.extend_from_slice(br"\n"),
            b'\r' => out.extend_from_slice(br"\r"),
            b'\\' => out.extend_from_slice(br"\\"),
            _ => out.push(b),
        }
    }
    out
}

/// The path column is there whenever the inputs are not one file (as
/// `scan` prints paths): a directory of one file has it too. Paths are
/// escaped as the line is, and written as their own bytes, so that a row
/// always has four fields and its path names the file.
#[test]
fn rejects_file_path_column_for_directories_and_escaped() {
    use std::os::unix::ffi::OsStrExt;
    let dir = TempDir::new("reject-paths");
    let many = dir.0.join("many");
    fs::create_dir(&many).unwrap();
    let names: [&[u8]; 4] = [b"back\\slash", b"bad\xff.txt", b"n\nl.txt", b"t\tab"];
    for name in names {
        fs::write(many.join(std::ffi::OsStr::from_bytes(name)), b"urn:ok:1\nbad line\n").unwrap();
    }
    let rejects = dir.path("rejects.tsv");
    let row = |path: &Path| [&tsv_escaped(path.as_os_str().as_bytes())[..], b"\t2\tnot-urn\tbad line\n"].concat();
    let o = dedup(&["-q", "--rejects", &rejects, many.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want: Vec<u8> = names.iter().flat_map(|n| row(&many.join(std::ffi::OsStr::from_bytes(n)))).collect();
    let got = fs::read(&rejects).unwrap();
    assert_eq!(got, want, "{}", String::from_utf8_lossy(&got));

    // One directory of one file: still a directory, still the path.
    let one = dir.0.join("one");
    fs::create_dir(&one).unwrap();
    let only = dir.file("one/only.txt", b"bad line\n");
    dedup(&["-q", "--rejects", &rejects, one.to_str().unwrap()], b"");
    assert_eq!(fs::read_to_string(&rejects).unwrap(), format!("{only}\t1\tnot-urn\tbad line\n"));
    // That file alone, or stdin: no path column.
    dedup(&["-q", "--rejects", &rejects, &only], b"");
    assert_eq!(fs::read_to_string(&rejects).unwrap(), "1\tnot-urn\tbad line\n");
    dedup(&["-q", "--rejects", &rejects], b"bad line\n");
    assert_eq!(fs::read_to_string(&rejects).unwrap(), "1\tnot-urn\tbad line\n");
}

#[test]
fn summary_counts() {
    let input = b"urn:ab:1\n\n  \nURN:AB:1\nurn:ab:2\nurn:a:1\nurn:a:2\nurn::x\n";
    let s = summary(&dedup(&[], input));
    let rows: Vec<(&str, u64)> = ["lines read", "valid", "invalid", "nid-too-short", "nid-empty", "empty", "distinct"]
        .iter()
        .map(|k| (*k, s[*k]))
        .collect();
    assert_eq!(
        rows,
        [
            ("lines read", 8),
            ("valid", 3),
            ("invalid", 3),
            ("nid-too-short", 2),
            ("nid-empty", 1),
            ("empty", 2),
            ("distinct", 2)
        ]
    );
}

#[test]
fn exit_status() {
    let bad = b"urn:ab:x\nurn:a:b\n";
    assert_eq!(dedup(&[], bad).status.code(), Some(0));
    assert_eq!(dedup(&["--strict"], bad).status.code(), Some(1));
    assert_eq!(stdout(&dedup(&["--strict"], bad)), "urn:ab:x\n", "the output is still complete");
    assert_eq!(dedup(&["--strict"], b"urn:ab:x\n\n").status.code(), Some(0));
    // An empty result is a success, in every format.
    for (args, out) in
        [(&[][..], ""), (&["--format", "csv"], "key,urn,count,nid,path,line\n"), (&["--format", "jsonl"], "")]
    {
        let o = dedup(args, b"");
        assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(0), out), "{args:?}");
        assert_eq!((summary(&o)["lines read"], summary(&o)["distinct"]), (0, 0));
    }
    let o = dedup(&["--strict"], b"not a urn\n");
    assert_eq!((o.status.code(), stdout(&o).as_str()), (Some(1), ""));
}

/// Text given to `dedup` (lines that hold URNs but do not start with one)
/// ends its summary with a pointer to `scan --unique`, unless it was said
/// under the rejects already (see the next test); a dataset with a few
/// stray lines, or a quiet run, gets none.
#[test]
fn text_instead_of_a_dataset_gets_a_hint() {
    let hint = "use `urnscan scan --unique`";
    // Every line of the shipped log starts with a timestamp, not `urn:`:
    // the hint under its 20th line, and not again.
    let o = dedup(&["datasets/corpus/app.log"], b"");
    let s = summary(&o);
    assert!(s["not-urn"] > s["valid"], "{s:?}");
    assert_eq!(stderr(&o).matches(hint).count(), 1, "{}", stderr(&o));
    // Five lines of text: too few to judge early, so after the summary.
    let o = dedup(&[], b"one\ntwo\nurn:ab:1\nthree\nfour\nfive\n");
    assert!(stderr(&o).trim_end().ends_with(hint), "{}", stderr(&o));
    // As many stray lines as URNs: still a dataset.
    let o = dedup(&[], b"urn:ab:1\nfoo\nurn:ab:2\nbar\n");
    assert_eq!((summary(&o)["not-urn"], summary(&o)["valid"]), (2, 2));
    assert!(!stderr(&o).contains(hint), "{}", stderr(&o));
    // Broken URNs are URNs: three of them beside a line of text, or the
    // shipped table of invalid URNs (8 lines without `urn:` at their
    // start, its header among them, and 67 with it), get no hint.
    assert!(!stderr(&dedup(&[], b"urn:a:1\nurn:b:2\nurn:ab:3\n")).contains(hint));
    assert!(!stderr(&dedup(&[], b"urn:a:1\nurn:b:2\nurn:c:3\nsome text\n")).contains(hint));
    assert!(!stderr(&dedup(&["datasets/urns/invalid.tsv"], b"")).contains(hint));
    let o = dedup(&["-q", "datasets/corpus/app.log"], b"");
    assert_eq!(stderr(&o), "", "--quiet");
}

/// Text on stderr is hinted at under its first rejects, not only after
/// them all: once 20 lines of an input fail to start with `urn:` and they
/// are more than half its lines so far, the hint is said, and the input's
/// further such lines are counted, not shown. Another input starts over;
/// other kinds of reject are all shown; `--rejects FILE` keeps every line.
#[test]
fn text_is_hinted_at_early_and_its_further_lines_counted() {
    let dir = TempDir::new("early-hint");
    let text: String = (1..=100).map(|i| format!("log line {i}\n")).collect();
    let log = dir.file("app.log", text.as_bytes());
    // A dataset whose every third line is text (and one URN invalid).
    let mut mixed = String::new();
    for i in 1..=30 {
        let second = if i == 1 { "urn:a:bad" } else { "urn:ab:x" };
        mixed.push_str(&format!("note {i}\nurn:ab:good\n{second}\n"));
    }
    let other = dir.file("mixed.txt", mixed.as_bytes());
    let o = dedup(&[&log, &other], b"");
    let err = stderr(&o);
    let shown: Vec<(String, u64, String)> = reject_messages(&o);
    let of_log: Vec<u64> = shown.iter().filter(|(f, _, _)| *f == log).map(|(_, l, _)| *l).collect();
    assert_eq!(of_log, (1..=20).collect::<Vec<u64>>(), "{err}");
    let hint = format!("hint: most lines of {log} so far do not start with \"urn:\"");
    let after = err.split_once(&format!("{log}:20: ")).unwrap().1.lines().nth(1).unwrap();
    assert!(after.starts_with(&hint), "{err}");
    assert!(err.contains(&format!("{log}: 80 more lines not starting with \"urn:\" not shown\n")), "{err}");
    // Its 20th line of text is its 58th line: never more than half, all
    // 30 shown, and the invalid URN.
    let of_other = shown.iter().filter(|(f, _, _)| *f == other).count();
    assert_eq!(of_other, 31, "{err}");
    assert_eq!(err.matches("so far do not start").count(), 1, "{err}");
    // Said once: not again after the summary.
    assert_eq!(err.matches("use `urnscan scan --unique`").count(), 1, "{err}");
    assert_eq!(summary(&o)["not-urn"], 130);
    // The rejects file is not watched: every line.
    let rejects = dir.path("rejects.tsv");
    let o = dedup(&["--rejects", &rejects, &log], b"");
    assert_eq!(fs::read_to_string(&rejects).unwrap().lines().count(), 100);
    assert!(!stderr(&o).contains("so far"), "{}", stderr(&o));
    // Standard input is named as such.
    let o = dedup(&[], text.as_bytes());
    assert!(stderr(&o).contains("hint: most lines of standard input so far"), "{}", stderr(&o));
    assert!(stderr(&o).contains("-: 80 more lines"), "{}", stderr(&o));
}

/// Blank lines are left out of the early hint's count, as out of the
/// summary's: prose with two blank lines after each line (paragraphs,
/// double spacing) is hinted at by its 20th line of text, its 58th line,
/// where the blank lines once kept its text under half its lines and
/// every line of it was shown. A dataset under blank lines whose text is
/// a third of its URN lines is still never hinted at.
#[test]
fn text_under_blank_lines_is_hinted_at_early_too() {
    let dir = TempDir::new("early-hint-blank");
    let text: String = (1..=100).map(|i| format!("prose line {i}\n \n\n")).collect();
    let prose = dir.file("prose.txt", text.as_bytes());
    let o = dedup(&[&prose], b"");
    let err = stderr(&o);
    let shown: Vec<u64> = reject_messages(&o).iter().map(|(_, l, _)| *l).collect();
    assert_eq!(shown, (0..20).map(|i| 3 * i + 1).collect::<Vec<u64>>(), "{err}");
    let hint = format!("hint: most lines of {prose} so far do not start with \"urn:\"");
    let after = err.split_once(&format!("{prose}:58: ")).unwrap().1.lines().nth(1).unwrap();
    assert!(after.starts_with(&hint), "{err}");
    assert!(err.contains(&format!("{prose}: 80 more lines not starting with \"urn:\" not shown\n")), "{err}");
    assert_eq!(summary(&o)["empty"], 200);

    let mixed: String = (1..=30).map(|i| format!("note {i}\n\n\n\nurn:ab:{i}\nurn:ab:x\n\n")).collect();
    let other = dir.file("mixed.txt", mixed.as_bytes());
    let o = dedup(&[&other], b"");
    assert_eq!(reject_messages(&o).len(), 30, "{}", stderr(&o));
    assert!(!stderr(&o).contains("so far"), "{}", stderr(&o));
}

#[test]
fn unreadable_input_is_reported_and_the_others_processed() {
    let dir = TempDir::new("unreadable");
    let good = dir.file("good.txt", b"urn:ab:x\n");
    let missing = dir.path("missing.txt");
    let o = dedup(&[&missing, &good], b"");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(stdout(&o), "urn:ab:x\n");
    let said = format!("urnscan: {missing}: No such file or directory (os error 2); check the path; skipped, the other inputs were read\n");
    assert!(stderr(&o).starts_with(&said), "{}", stderr(&o));
    // The only input: no word of other inputs.
    let o = dedup(&["--quiet", &missing], b"");
    let said = format!("urnscan: {missing}: No such file or directory (os error 2); check the path\n");
    assert_eq!(stderr(&o), said);
    let o = dedup(&["--quiet", "--strict", &good, &missing], b"");
    assert_eq!(o.status.code(), Some(2), "an error outranks --strict");
    assert!(stderr(&o).contains("missing.txt"), "errors are shown even with --quiet");
    // The classes of the second file keep their input index.
    let o = dedup(&["--format", "jsonl", &missing, &good], b"");
    assert!(stdout(&o).contains(&format!("\"path\":\"{good}\",\"line\":1")), "{}", stdout(&o));
}

/// A UTF-8 byte-order mark before the first line of an input (Notepad's
/// and Excel's "UTF-8 with BOM") is not part of it, in a file and on
/// stdin; at the start of a later line it is, and that line is not a URN
/// (RFC 8141 §2: ASCII only).
#[test]
fn a_utf8_byte_order_mark_before_the_first_line_is_ignored() {
    let dir = TempDir::new("bom");
    let text = b"\xEF\xBB\xBFurn:isbn:0451450523\r\nURN:ISBN:0451450523\r\n\xEF\xBB\xBFurn:ab:c\r\n";
    let file = dir.file("excel.csv", text);
    for (args, stdin) in [(vec!["-c", &file[..]], &b""[..]), (vec!["-c"], text)] {
        let o = dedup(&args, stdin);
        assert_eq!(stdout(&o), "2\turn:isbn:0451450523\n", "{args:?}");
        let s = summary(&o);
        assert_eq!((s["lines read"], s["valid"], s["invalid"]), (3, 2, 1), "{args:?}");
        assert!(stderr(&o).contains(":3: non-ascii"), "{}", stderr(&o));
    }
}

#[test]
fn crlf_and_surrounding_whitespace_are_ignored() {
    let input = b"  urn:ab:x \r\n\turn:ab:y\r\n \r\n\r\nurn:ab:x\x0c\nurn:ab:z\r";
    let o = dedup(&["--count"], input);
    assert_eq!(stdout(&o), "2\turn:ab:x\n1\turn:ab:y\n1\turn:ab:z\n");
    let s = summary(&o);
    assert_eq!((s["lines read"], s["valid"], s["empty"], s["invalid"]), (6, 4, 2, 0));
    // Whitespace inside a line is not trimmed: it breaks the URN.
    let o = dedup(&[], b"urn:ab:x y\n");
    assert_eq!(reject_messages(&o), [("-".to_owned(), 1, "nss-bad-char".to_owned())]);
}

#[test]
fn invalid_utf8_lines_are_rejected_as_non_ascii() {
    let dir = TempDir::new("utf8");
    let rejects = dir.path("rejects.tsv");
    let input = b"urn:ab:caf\xe9\n\xff\xfeurn:ab:x\nurn:ab:ok\nurn:\xc3\xa9x:y\n";
    let o = dedup(&["--rejects", &rejects], input);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout(&o), "urn:ab:ok\n");
    assert_eq!(summary(&o)["non-ascii"], 3);
    // The rejects file keeps the bytes as they were.
    assert_eq!(
        fs::read(&rejects).unwrap(),
        b"1\tnon-ascii\turn:ab:caf\xe9\n2\tnon-ascii\t\xff\xfeurn:ab:x\n4\tnon-ascii\turn:\xc3\xa9x:y\n"
    );
    let o = dedup(&[], input);
    let kinds: Vec<(u64, String)> = reject_messages(&o).into_iter().map(|m| (m.1, m.2)).collect();
    assert_eq!(kinds, [(1, "non-ascii".to_owned()), (2, "non-ascii".to_owned()), (4, "non-ascii".to_owned())]);
}

#[test]
fn rfc2141_grammar() {
    // RFC 2141: one-character NIDs are valid, "?" and "#" are NSS characters
    // (so they are part of the key), "~" is not allowed.
    let o = dedup(&["--rfc2141", "--keys"], b"urn:a:b\nurn:ab:x?y\nurn:ab:x#f\nurn:ab:~\n");
    assert_eq!(stdout(&o), "urn:a:b\nurn:ab:x?y\nurn:ab:x#f\n");
    assert_eq!(summary(&o)["nss-bad-char"], 1);
}

/// Ways to read the dataset `data` (whose bytes are `bytes`) that must not
/// change any output: one or two threads, small blocks, a stream on stdin.
/// Each is the arguments and the stdin.
fn reading_modes<'a>(data: &'a str, bytes: &'a [u8]) -> Vec<(Vec<&'a str>, &'a [u8])> {
    vec![
        (vec!["-j1", data], &[]),
        (vec!["-j2", data], &[]),
        (vec!["-j2", "--block-size", "65536", data], &[]),
        (vec!["-j1", "--block-size", "65536"], bytes),
    ]
}

#[test]
fn generated_dataset_matches_its_truth_for_any_threads_blocks_and_streams() {
    let dir = TempDir::new("truth");
    let (data, truth) = generate(&dir, 60_000, 15_000);
    // The truth is key<TAB>count in first-seen order: --keys --count prints
    // the same facts as count<TAB>key.
    let expected: String = fs::read_to_string(&truth)
        .unwrap()
        .lines()
        .map(|l| {
            let (key, count) = l.split_once('\t').unwrap();
            format!("{count}\t{key}\n")
        })
        .collect();
    let bytes = fs::read(&data).unwrap();
    let mut outputs = Vec::new();
    for (args, stdin) in reading_modes(&data, &bytes) {
        let mut all = vec!["--keys", "--count"];
        all.extend(&args);
        let o = dedup(&all, stdin);
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        assert!(stdout(&o) == expected, "{args:?}: output differs from the truth file");
        let s = summary(&o);
        // gen: exactly lines * 10 / 1000 invalid lines, none empty.
        assert_eq!(
            (s["lines read"], s["valid"], s["invalid"], s["empty"], s["distinct"]),
            (60_000, 59_400, 600, 0, 15_000)
        );
        outputs.push((stdout(&o), stderr(&o)));
    }
    let first = &outputs[0];
    assert!(outputs.iter().all(|o| o.0 == first.0), "same output for any -j, block size, file or stream");
}

#[test]
fn memory_limit_gives_identical_output_in_every_mode() {
    let dir = TempDir::new("spill");
    let (data, _) = generate(&dir, 100_000, 30_000);
    assert!(fs::metadata(&data).unwrap().len() > 2 << 20, "the dataset is far above the limit");
    let spill_dir = dir.path("tmp");
    fs::create_dir(&spill_dir).unwrap();
    let modes: [&[&str]; 7] = [
        &[],
        &["--count"],
        &["--keys"],
        &["--sort", "key", "--count"],
        &["--format", "jsonl"],
        &["--format", "csv", "--sort", "key"],
        &["--sort", "count", "--count"],
    ];
    for mode in modes {
        let mut unlimited = mode.to_vec();
        unlimited.push(&data);
        let mut limited = vec!["--memory-limit", "64KiB", "--temp-dir", &spill_dir];
        limited.extend(&unlimited);
        let (a, b) = (dedup(&unlimited, b""), dedup(&limited, b""));
        assert_eq!((a.status.code(), b.status.code()), (Some(0), Some(0)), "{mode:?}: {}", stderr(&b));
        assert!(a.stdout == b.stdout, "{mode:?}: the spilled output differs");
        assert!(!a.stdout.is_empty());
        assert!(stderr(&b).contains("spilled"), "{mode:?}: the 64 KiB run must spill");
        assert!(!stderr(&a).contains("spilled"), "{mode:?}");
        assert_eq!(summary(&a), summary(&b), "{mode:?}");
        assert_eq!(fs::read_dir(&spill_dir).unwrap().count(), 0, "spill files are removed");
    }
    // Spilling from a stream too.
    let bytes = fs::read(&data).unwrap();
    let a = dedup(&["--count", &data], b"");
    let b = dedup(&["--count", "--memory-limit", "100k", "--temp-dir", &spill_dir], &bytes);
    assert!(a.stdout == b.stdout);
}

/// `-d`/`--repeated` and `--min-count N` print only the classes of at least
/// 2 (or N) lines, with their whole counts, as `uniq -d` does after `sort`:
/// the generator's truth file filtered by its own counts, with and without
/// spilling (where a class's lines are counted across the spill files).
/// The summary still counts every class.
#[test]
fn repeated_and_min_count_keep_the_classes_seen_often_enough() {
    let dir = TempDir::new("repeated");
    let small = dir.file("small.txt", b"urn:a1:x\nURN:A1:x\nurn:b2:y\nurn:c3:%2f\nurn:c3:%2F\nurn:c3:%2f\n");
    let o = dedup(&["-c", "-d", &small], b"");
    assert_eq!(stdout(&o), "2\turn:a1:x\n3\turn:c3:%2f\n");
    assert_eq!(summary(&o)["distinct"], 3);
    assert_eq!(stdout(&dedup(&["-q", "--min-count", "3", "--keys", &small], b"")), "urn:c3:%2F\n");
    assert_eq!(stdout(&dedup(&["-q", "--min-count", "4", &small], b"")), "");
    assert_eq!(stdout(&dedup(&["-q", "--min-count", "0", &small], b"")), stdout(&dedup(&["-q", &small], b"")));
    let o = dedup(&["-q", "-d", "--min-count", "2", &small], b"");
    assert_eq!(o.status.code(), Some(2), "-d is --min-count 2: not both");

    let (data, truth) = generate(&dir, 60_000, 15_000);
    let truth = fs::read_to_string(&truth).unwrap();
    let spill_dir = dir.path("tmp");
    fs::create_dir(&spill_dir).unwrap();
    for (filter, least) in [(&["-d"][..], 2), (&["--min-count", "5"], 5)] {
        let want: String = truth
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(_, count)| count.parse::<u64>().unwrap() >= least)
            .map(|(key, count)| format!("{count}\t{key}\n"))
            .collect();
        assert!(!want.is_empty() && want.lines().count() < 15_000, "{filter:?}: some classes in, some out");
        for limit in [&[][..], &["--memory-limit", "64KiB", "--temp-dir", &spill_dir]] {
            let o = dedup(&[&["-q", "--keys", "--count"][..], filter, limit, &[&data]].concat(), b"");
            assert_eq!(o.status.code(), Some(0), "{filter:?} {limit:?}");
            assert!(stdout(&o) == want, "{filter:?} {limit:?}: not the truth's classes of {least} or more lines");
        }
    }
}

/// Without a memory limit nothing spills, so a spill directory would be
/// ignored: it is a usage error that names the limit.
#[test]
fn temp_dir_needs_a_memory_limit() {
    let o = dedup(&["--temp-dir", "/no/such/dir", "-"], b"urn:ab:c\n");
    assert_eq!((o.status.code(), stdout(&o)), (Some(2), String::new()));
    assert!(stderr(&o).contains("--memory-limit"), "{}", stderr(&o));
}

#[test]
fn bad_memory_limit_is_a_usage_error() {
    let o = dedup(&["--memory-limit", "lots"], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--memory-limit"), "{}", stderr(&o));
}

#[test]
fn output_in_parallel_ranges_matches_the_truth_at_any_threads() {
    // Enough classes for several ranges of parallel output.
    let dir = TempDir::new("ranges");
    let (data, truth) = generate(&dir, 200_000, 60_000);
    let truth: Vec<(String, String)> = fs::read_to_string(&truth)
        .unwrap()
        .lines()
        .map(|l| l.split_once('\t').map(|(k, n)| (k.to_owned(), n.to_owned())).unwrap())
        .collect();
    let first_seen: String = truth.iter().map(|(key, count)| format!("{count}\t{key}\n")).collect();
    let mut by_key: Vec<&(String, String)> = truth.iter().collect();
    by_key.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
    let by_count = {
        // Most lines first; `sort_by` is stable, so equal counts stay in
        // key order.
        let mut by_count = by_key.clone();
        by_count.sort_by_key(|(_, count)| std::cmp::Reverse(count.parse::<u64>().unwrap()));
        by_count.iter().map(|(key, count)| format!("{count}\t{key}\n")).collect::<String>()
    };
    let by_key: String = by_key.iter().map(|(key, count)| format!("{count}\t{key}\n")).collect();
    for j in ["-j1", "-j2"] {
        let o = dedup(&["--keys", "--count", j, &data], b"");
        assert_eq!(o.status.code(), Some(0), "{j}");
        assert!(stdout(&o) == first_seen, "{j}: first-seen output differs from the truth file");
        let o = dedup(&["--keys", "--count", "--sort", "key", j, &data], b"");
        assert!(stdout(&o) == by_key, "{j}: key-order output differs from the sorted truth file");
        let o = dedup(&["--keys", "--count", "--sort", "count", j, &data], b"");
        assert!(stdout(&o) == by_count, "{j}: count-order output differs from the truth file sorted by count");
    }
}

/// `--nid`: only the classes of the namespaces given, NIDs compared in any
/// case (RFC 8141 §3.1); the other URN lines are valid, so they are neither
/// rejected nor a reason for `--strict` to fail, and the summary counts them
/// as `excluded`.
#[test]
fn nid_filter_keeps_the_classes_of_the_namespaces_given() {
    let input = b"urn:ISBN:1\nurn:isbn:1\nurn:issn:2\n\nurn:a:b\nURN:Isbn:3\nurn:example:x\n";
    let o = dedup(&["--nid", "isbn", "--count", "-"], input);
    assert_eq!(stdout(&o), "2\turn:ISBN:1\n1\tURN:Isbn:3\n");
    assert_eq!(o.status.code(), Some(0));
    let counts = summary(&o);
    assert_eq!((counts["valid"], counts["excluded"], counts["invalid"], counts["distinct"]), (3, 2, 1, 2));
    let o = dedup(&["--nid", "ISSN,Isbn", "--sort", "key", "-"], input);
    assert_eq!(stdout(&o), "urn:ISBN:1\nURN:Isbn:3\nurn:issn:2\n");
    // Only `urn:a:b` is invalid (a NID has 2 to 32 characters).
    let o = dedup(&["--nid", "isbn", "--strict", "-q", "-"], input);
    assert_eq!(o.status.code(), Some(1));
    let o = dedup(&["--nid", "isbn", "--strict", "-q", "-"], b"urn:isbn:1\nurn:example:x\n");
    assert_eq!((stdout(&o).as_str(), o.status.code()), ("urn:isbn:1\n", Some(0)));
    // No `excluded` line without --nid.
    assert!(!summary(&dedup(&["-"], input)).contains_key("excluded"));
    let o = dedup(&["--nid", "is bn", "-"], input);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("invalid --nid: \"is bn\" is not a namespace identifier (NID)"), "{}", stderr(&o));
}

/// Counts far past what an entry holds itself (one byte, 255), also
/// through spills and their merges: each class's count is the number of
/// lines written for it, whatever the memory limit, thread count or source.
#[test]
fn counts_past_an_entrys_own_field_are_exact_with_and_without_spilling() {
    let dir = TempDir::new("counts");
    let spill_dir = dir.path("tmp");
    fs::create_dir(&spill_dir).unwrap();
    // (first spelling, another spelling of the same class (RFC 8141 §3:
    // scheme and NID case, %-hex case), lines of it)
    let heavy = [
        ("urn:isbn:0451450523", "URN:ISBN:0451450523", 1000),
        ("urn:ab:x%2Fy", "urn:AB:x%2fy", 300),
        ("urn:ab:c", "Urn:Ab:c", 256),
        ("urn:ab:d", "URN:ab:d", 255),
        ("urn:ab:e", "urn:aB:e", 254),
    ];
    let mut text = String::new();
    for round in 0..1000 {
        for (first, other, n) in heavy {
            if round < n {
                text += if round % 2 == 0 { first } else { other };
                text.push('\n');
            }
        }
        // Distinct keys halfway, so that a small limit spills the heavy
        // classes with counts past 255 (read back into fresh tables, they
        // start there so) while more of them are still to come.
        if (500..520).contains(&round) {
            for i in 0..1000 {
                text += &format!("urn:filler:{round}-{i}\n");
            }
        }
    }
    let data = dir.file("counts.txt", text.as_bytes());
    for limit in [None, Some("64KiB")] {
        for j in ["1", "2"] {
            for from_stdin in [false, true] {
                let mut args = vec!["--count", "--sort", "key", "-j", j];
                if let Some(limit) = limit {
                    args.extend(["--memory-limit", limit, "--temp-dir", &spill_dir]);
                }
                let stdin = if from_stdin { text.as_bytes() } else { b"" };
                if !from_stdin {
                    args.push(&data);
                }
                let o = dedup(&args, stdin);
                assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
                assert_eq!(stderr(&o).contains("spilled"), limit.is_some(), "{args:?}");
                let out = stdout(&o);
                assert_eq!(out.lines().count(), 20_000 + heavy.len(), "{args:?}");
                for (first, _, n) in heavy {
                    assert!(out.lines().any(|l| l == format!("{n}\t{first}")), "{args:?}: {first} x {n}");
                }
                assert_eq!(out.lines().filter(|l| l.starts_with("1\turn:filler:")).count(), 20_000);
            }
        }
    }
}

/// `--stats`: one row per NID instead of the classes. By hand, from RFC
/// 8141 §3.1: scheme and NID compare in any case, percent-encoding hex
/// digits in any case, r-, q- and f-components not at all, and the NSS
/// is otherwise case-sensitive; classes from §5 (`isbn` and `example`
/// are formal, `urn-7` informal).
#[test]
fn stats_count_lines_and_classes_per_nid() {
    let input = b"urn:ISBN:0451450523\nURN:isbn:0451450523\nurn:example:a%2fb\nurn:EXAMPLE:a%2Fb?=x#f\n\
                  urn:example:A%2Fb\nurn:urn-7:x\nnot a urn\n\n";
    let o = dedup(&["--stats", "--format", "jsonl", "-"], input);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let row = |nid: &str, class: &str, occurrences: u64, unique: u64| serde_json::json!({"nid": nid, "class": class, "occurrences": occurrences, "unique": unique});
    // Most lines first, then by NID.
    assert_eq!(rows, [row("example", "formal", 3, 2), row("isbn", "formal", 2, 1), row("urn-7", "informal", 1, 1)]);
    let s = summary(&o);
    assert_eq!((s["lines read"], s["valid"], s["invalid"], s["empty"], s["distinct"]), (8, 6, 1, 1, 4));
    assert_eq!(reject_messages(&o), [("-".to_owned(), 7, "not-urn".to_owned())]);

    let csv = stdout(&dedup(&["-q", "--stats", "--format", "csv", "-"], input));
    assert_eq!(csv, "nid,class,occurrences,unique\nexample,formal,3,2\nisbn,formal,2,1\nurn-7,informal,1,1\n");
    let text = stdout(&dedup(&["-q", "--stats", "-"], input));
    let cells: Vec<Vec<&str>> = text.lines().map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(cells[0], ["nid", "class", "occurrences", "unique"]);
    let csv_cells: Vec<Vec<&str>> = csv.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(cells[1..], csv_cells[..], "the text table holds the csv's rows");
    // Padded cells, right-aligned counts: every row as wide as the header.
    let width = text.lines().next().unwrap().len();
    assert!(text.lines().all(|l| l.len() == width), "{text}");

    // One JSON object: the summary's counts and the same rows.
    let o = dedup(&["-q", "--stats", "--format", "json", "-"], input);
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let want = serde_json::json!({
        "lines": 8, "valid": 6, "invalid": 1, "empty": 1, "distinct": 4,
        "binary_files": 0, "compressed_files": 0, "unreadable_files": 0,
        "invalid_kinds": {"not-urn": 1}, "nids": rows,
    });
    assert_eq!(json, want);
    // With --nid, `excluded` (the isbn and urn-7 lines); an unreadable input is counted.
    let o = dedup(&["-q", "--stats", "--format", "json", "--nid", "example", "-", "no/such/file"], input);
    assert_eq!(o.status.code(), Some(2));
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!((&json["valid"], &json["excluded"], &json["distinct"]), (&3.into(), &3.into(), &2.into()));
    assert_eq!((&json["unreadable_files"], &json["nids"]), (&1.into(), &serde_json::json!([rows[0]])));
    // Without --stats, json is jsonl.
    assert_eq!(
        dedup(&["-q", "--format", "json", "-"], input).stdout,
        dedup(&["-q", "--format", "jsonl", "-"], input).stdout
    );

    for other in ["--count", "--keys", "-d", "--sort=key"] {
        let o = dedup(&["--stats", other, "-"], input);
        assert_eq!(o.status.code(), Some(2), "{other}: the classes are not printed");
        assert!(stderr(&o).contains("cannot be used with"), "{other}: {}", stderr(&o));
    }
}

/// `--stats` on a generated dataset: the truth file's classes (`key<TAB>count`)
/// grouped by the NID of the key give every row, whatever the threads,
/// the block size, a stream or spilling; the output is the same bytes.
#[test]
fn stats_of_a_dataset_are_its_truth_grouped_by_nid() {
    let dir = TempDir::new("stats");
    let (data, truth) = generate(&dir, 60_000, 15_000);
    let mut by_nid: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for line in fs::read_to_string(&truth).unwrap().lines() {
        let (key, count) = line.split_once('\t').unwrap();
        let nid = key.split(':').nth(1).unwrap().to_owned();
        let slot = by_nid.entry(nid).or_default();
        slot.0 += count.parse::<u64>().unwrap();
        slot.1 += 1;
    }
    assert!(by_nid.len() > 100, "many NIDs: {}", by_nid.len());
    let spill_dir = dir.path("tmp");
    fs::create_dir(&spill_dir).unwrap();
    let bytes = fs::read(&data).unwrap();
    let mut modes = reading_modes(&data, &bytes);
    modes.push((vec!["-j2", "--memory-limit", "64KiB", "--temp-dir", &spill_dir, &data], &[]));
    let mut outputs = Vec::new();
    for (args, stdin) in modes {
        let o = dedup(&[&["--stats", "--format", "csv"][..], &args].concat(), stdin);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(summary(&o)["distinct"], 15_000, "{args:?}");
        assert_eq!(stderr(&o).contains("spilled"), args.contains(&"64KiB"), "{args:?}");
        let out = stdout(&o);
        let mut rows: Vec<(u64, String, u64)> = Vec::new();
        for line in out.lines().skip(1) {
            let f: Vec<&str> = line.split(',').collect();
            assert_eq!(f[1], urnscan::classify_nid(f[0].as_bytes()).as_str(), "{line}");
            let (occurrences, unique) = (f[2].parse().unwrap(), f[3].parse().unwrap());
            assert_eq!(by_nid.get(f[0]), Some(&(occurrences, unique)), "{args:?}: {line}");
            rows.push((occurrences, f[0].to_owned(), unique));
        }
        assert_eq!(rows.len(), by_nid.len(), "{args:?}: one row per NID");
        assert!(rows.windows(2).all(|w| (w[1].0, &w[0].1) < (w[0].0, &w[1].1)), "most lines first, then by NID");
        outputs.push(out);
    }
    // The JSON object: gen writes exactly lines * 10 / 1000 invalid lines, none empty.
    let o = dedup(&["--stats", "--format", "json", &data], b"");
    let json: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let counts: Vec<u64> = ["lines", "valid", "invalid", "empty", "distinct"].map(|f| json[f].as_u64().unwrap()).into();
    assert_eq!(counts, [60_000, 59_400, 600, 0, 15_000]);
    let nids = json["nids"].as_array().unwrap();
    assert_eq!(nids.len(), by_nid.len());
    for row in nids {
        let nid = row["nid"].as_str().unwrap();
        assert_eq!(Some(&(row["occurrences"].as_u64().unwrap(), row["unique"].as_u64().unwrap())), by_nid.get(nid));
    }
    assert!(outputs.iter().all(|o| *o == outputs[0]), "same bytes in every mode");
    assert_eq!(fs::read_dir(&spill_dir).unwrap().count(), 0, "spill files are removed");
}

/// `-c` and `-k` shape text output only: with `--format jsonl`, `json` or
/// `csv`, whose records always carry the key and the count, they are
/// accepted and change nothing, and their --help says so.
#[test]
fn count_and_keys_say_they_do_nothing_to_jsonl_and_csv() {
    let input = b"URN:AB:x\nurn:ab:x\nurn:cd:y\n";
    for format in ["jsonl", "json", "csv"] {
        let plain = dedup(&["--format", format], input);
        let both = dedup(&["--format", format, "-c", "-k"], input);
        assert_eq!((both.status.code(), stdout(&both)), (Some(0), stdout(&plain)), "{format}");
    }
    let help = stdout(&dedup(&["--help"], b""));
    let help = help.split_whitespace().collect::<Vec<_>>().join(" ");
    for (option, next) in [("-c, --count", "-k, --keys"), ("-k, --keys", "--min-count")] {
        let start = help.find(option).unwrap();
        let text = &help[start..start + help[start..].find(next).unwrap()];
        assert!(text.to_lowercase().contains("no effect with --format jsonl, json or csv"), "{text}");
    }
}
