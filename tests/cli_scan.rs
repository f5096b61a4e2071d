//! `urnscan scan`, run as a user would: boundary rules end to end, output
//! formats, determinism across thread counts, exit codes and failing inputs.

mod common;

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn urnscan_in(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_urnscan"));
    cmd.args(args);
    common::run_fed(cmd, stdin)
}

fn text(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

/// The README's boundary rules, one example each (input → URNs reported).
#[test]
fn boundary_rules_end_to_end() {
    let cases: &[(&str, &[&str])] = &[
        ("return:x turn:a:b x-urn:y a.urn:b", &[]),
        (
            ":urn:ab:1 \"urn:ab:2\" (urn:ab:3) {urn:ab:4} =urn:ab:5",
            &["urn:ab:1", "urn:ab:2", "urn:ab:3", "urn:ab:4", "urn:ab:5"],
        ),
        ("q=%22urn:ab:x%22", &["urn:ab:x%22"]),
        ("<x xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>", &["urn:ietf:params:xml:ns:xmpp-tls"]),
        (
            "See urn:isbn:0451450523. Or (urn:isbn:123), or urn:x1:f(a).",
            &["urn:isbn:0451450523", "urn:isbn:123", "urn:x1:f(a)"],
        ),
        ("Is it urn:ab:c?+r?", &["urn:ab:c?+r"]),
        ("urn:urn:ietf:x", &["urn:urn:ietf:x"]),
        ("urn:a:urn:bc:d", &["urn:bc:d"]),
        ("urn::x urn:ab: urn:", &[]),
        ("URN:ISBN:1 Urn:Isbn:1", &["URN:ISBN:1", "Urn:Isbn:1"]),
    ];
    for (input, expected) in cases {
        let o = urnscan_in(&["scan", "--format", "jsonl"], input.as_bytes());
        let got: Vec<String> = text(&o)
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["urn"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(&got, expected, "input {input:?}");
        assert_eq!(o.status.code(), Some(if expected.is_empty() { 1 } else { 0 }), "{input:?}");
    }
}

/// RFC 4180 records, read strictly: a field is quoted or not; inside
/// quotes a doubled quote is one quote and commas and line breaks are
/// text; a quote anywhere else, or text after a closing quote, is an error.
fn csv_records(text: &str) -> Vec<Vec<String>> {
    let (mut records, mut record, mut field) = (Vec::new(), Vec::new(), String::new());
    let mut chars = text.chars().peekable();
    let (mut quoted, mut closed) = (false, false);
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    field.push('"');
                }
                '"' => (quoted, closed) = (false, true),
                c => field.push(c),
            }
            continue;
        }
        match c {
            ',' | '\n' => {
                record.push(std::mem::take(&mut field));
                closed = false;
                if c == '\n' {
                    records.push(std::mem::take(&mut record));
                }
            }
            '"' if field.is_empty() && !closed => quoted = true,
            c => {
                assert!(c != '"' && !closed, "not RFC 4180: {c:?} after {field:?} in {text:?}");
                field.push(c);
            }
        }
    }
    assert!(!quoted && field.is_empty() && record.is_empty(), "CSV ends inside a record: {text:?}");
    records
}

/// Files whose names need JSON escapes or CSV quotes (a quote, a
/// backslash, a tab, a comma, a line break, a control character, bytes
/// that are not UTF-8), holding URNs with a comma and a lower-case escape:
/// every record of `scan`, `scan --unique` and `dedup` in JSON Lines and
/// CSV reads back, with a JSON parser and the RFC 4180 reader above, as
/// the path (as urnscan shows it), the URN, its key and its NID.
#[cfg(unix)]
#[test]
fn paths_and_urns_that_need_escapes_read_back() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let dir = tempfile::tempdir().unwrap();
    let names: [&[u8]; 5] = [b"a\"b\\c.txt", b"tab\there,comma", b"nl\nx\x01.txt", b"bad\xff", "\u{e9}.txt".as_bytes()];
    let mut paths = Vec::new();
    for name in names {
        let path = dir.path().join(OsStr::from_bytes(name));
        fs::write(&path, "x urn:ab:c,d URN:Ab:%2c\n").unwrap();
        paths.push(path.to_string_lossy().into_owned());
    }
    let dir_arg = dir.path().to_str().unwrap();
    let mut want_scan: Vec<Vec<String>> = Vec::new();
    for path in &paths {
        want_scan.push(vec![path.clone(), "2".into(), "urn:ab:c,d".into(), "urn:ab:c,d".into(), "ab".into()]);
        want_scan.push(vec![path.clone(), "13".into(), "URN:Ab:%2c".into(), "urn:ab:%2C".into(), "ab".into()]);
    }
    want_scan.sort();
    let field = |v: &serde_json::Value, name: &str| match &v[name] {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let json_rows = |args: &[&str], names: &[&str]| -> Vec<Vec<String>> {
        let o = urnscan_in(args, b"");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        let mut rows: Vec<Vec<String>> = text(&o)
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{args:?}: {e}: {l}"));
                names.iter().map(|n| field(&v, n)).collect()
            })
            .collect();
        rows.sort();
        rows
    };
    let csv_rows = |args: &[&str], header: &str| -> Vec<Vec<String>> {
        let o = urnscan_in(args, b"");
        assert_eq!(o.status.code(), Some(0), "{args:?}");
        let mut rows = csv_records(&text(&o));
        assert_eq!(rows.remove(0).join(","), header, "{args:?}");
        rows.sort();
        rows
    };

    let occurrence = ["path", "offset", "urn", "key", "nid"];
    assert_eq!(json_rows(&["scan", "--format", "jsonl", dir_arg], &occurrence), want_scan);
    assert_eq!(csv_rows(&["scan", "--format", "csv", dir_arg], "path,offset,urn,key,nid"), want_scan);

    // One class per key, first seen in the first file urnscan read.
    let unique = |rows: Vec<Vec<String>>| -> Vec<(String, String, String, String)> {
        rows.into_iter()
            .map(|r| {
                assert!(paths.contains(&r[4]), "not an input path: {:?}", r[4]);
                (r[0].clone(), r[1].clone(), r[2].clone(), r[3].clone())
            })
            .collect()
    };
    let want_unique = vec![
        ("urn:ab:%2C".to_owned(), "URN:Ab:%2c".to_owned(), "5".to_owned(), "ab".to_owned()),
        ("urn:ab:c,d".to_owned(), "urn:ab:c,d".to_owned(), "5".to_owned(), "ab".to_owned()),
    ];
    let entry = ["key", "urn", "count", "nid", "path"];
    assert_eq!(unique(json_rows(&["scan", "-u", "--format", "jsonl", dir_arg], &entry)), want_unique);
    assert_eq!(
        unique(csv_rows(&["scan", "-u", "--format", "csv", dir_arg], "key,urn,count,nid,path,offset")),
        want_unique
    );

    // `dedup` reads lines: the same URNs, one per line, in the files whose
    // names are UTF-8 (given as arguments here).
    let mut dedup_files = Vec::new();
    for name in names {
        let path = dir.path().join(OsStr::from_bytes(name));
        fs::write(&path, "urn:ab:c,d\nURN:Ab:%2c\n").unwrap();
        dedup_files.push(path);
    }
    let mut dedup_args: Vec<&str> = vec!["dedup", "-q", "--format", "jsonl"];
    let lossless: Vec<&str> = dedup_files.iter().filter_map(|p| p.to_str()).collect();
    dedup_args.extend(&lossless);
    let got = unique(json_rows(&dedup_args, &entry));
    let n = lossless.len().to_string();
    let want: Vec<_> =
        want_unique.iter().map(|(k, u, _, nid)| (k.clone(), u.clone(), n.clone(), nid.clone())).collect();
    assert_eq!(got, want);
    dedup_args[3] = "csv";
    assert_eq!(unique(csv_rows(&dedup_args, "key,urn,count,nid,path,line")), want);
}

#[test]
fn no_trim_keeps_punctuation() {
    let o = urnscan_in(&["scan", "--no-trim"], b"See urn:isbn:0451450523.\n");
    assert_eq!(text(&o), "4:urn:isbn:0451450523.\n");
}

#[test]
fn occurrence_records() {
    let o = urnscan_in(&["scan", "--format", "jsonl"], b"xx URN:Example:a%2cb#f\n");
    assert_eq!(
        text(&o),
        "{\"path\":\"-\",\"offset\":3,\"urn\":\"URN:Example:a%2cb#f\",\"key\":\"urn:example:a%2Cb\",\"nid\":\"example\"}\n"
    );
    let o = urnscan_in(&["scan", "--format", "csv"], b"urn:ab:c,d urn:ab:\"x\n");
    assert_eq!(text(&o), "path,offset,urn,key,nid\n-,0,\"urn:ab:c,d\",\"urn:ab:c,d\",ab\n");
}

fn corpus(dir: &Path) {
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::write(dir.join("b.txt"), "urn:ISBN:1 then urn:isbn:1 and urn:ab:%2c\n").unwrap();
    fs::write(dir.join("a.txt"), "first URN:isbn:1, then urn:zz:q.\n").unwrap();
    fs::write(dir.join("sub/c.txt"), "urn:ab:%2C urn:a:b\n").unwrap();
}

/// [`corpus`] in a new directory, with e.txt, which holds no URN (`return:x`
/// is no candidate: `urn:` right after a letter is not at a left boundary).
fn corpus_and_a_file_of_none() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    fs::write(dir.path().join("e.txt"), "no identifiers, return:x\n").unwrap();
    dir
}

#[test]
fn unique_sorted_by_key_first_seen_in_input_order() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let d = dir.path().to_str().unwrap();
    let o = urnscan_in(&["scan", "--unique", d], b"");
    // Files in name order: a.txt, b.txt, sub/c.txt. Keys sorted bytewise.
    assert_eq!(text(&o), "2\turn:ab:%2c\n3\tURN:isbn:1\n1\turn:zz:q\n");
    let o = urnscan_in(&["scan", "--unique", "--format", "jsonl", d], b"");
    let first: serde_json::Value = serde_json::from_str(text(&o).lines().next().unwrap()).unwrap();
    assert_eq!(first["key"], "urn:ab:%2C");
    assert_eq!(first["count"], 2);
    assert_eq!(first["path"], format!("{d}/b.txt"));
    assert_eq!(first["offset"], 31);
}

#[test]
fn stats_json_object() {
    let dir = tempfile::tempdir().unwrap();
    corpus(dir.path());
    let o = urnscan_in(&["scan", "--stats", "--format", "json", dir.path().to_str().unwrap()], b"");
    let v: serde_json::Value = serde_json::from_str(&text(&o)).unwrap();
    assert_eq!(v["files"], 3);
    assert_eq!(v["candidates"], 7);
    assert_eq!(v["valid"], 6);
    assert_eq!(v["invalid"], 1);
    assert_eq!(v["invalid_kinds"]["nid-too-short"], 1);
    assert_eq!(v["unique"], 3);
    let nids = v["nids"].as_array().unwrap();
    assert_eq!(nids[0], serde_json::json!({"nid": "isbn", "class": "formal", "occurrences": 3, "unique": 1}));
    assert_eq!(nids[1], serde_json::json!({"nid": "ab", "class": "reserved", "occurrences": 2, "unique": 1}));
    assert_eq!(nids[2], serde_json::json!({"nid": "zz", "class": "reserved", "occurrences": 1, "unique": 1}));
    // The time taken ends the object (issue schema: `"elapsed_s": float`),
    // as a number of seconds; nothing goes to stderr.
    let raw = text(&o);
    assert!(raw.find("],\"elapsed_s\":").is_some_and(|at| at > raw.find("\"nids\":").unwrap()), "{raw}");
    assert!(v["elapsed_s"].as_f64().is_some_and(|s| (0.0..60.0).contains(&s)), "{}", v["elapsed_s"]);
    assert!(o.stderr.is_empty(), "{}", String::from_utf8_lossy(&o.stderr));
}

/// `--count` on the corpus above, files in name order: a.txt holds
/// `URN:isbn:1` and `urn:zz:q` (its `.` trimmed), b.txt three URNs,
/// sub/c.txt `urn:ab:%2C` and `urn:a:b`, which is rejected (RFC 8141: a NID
/// has 2 to 32 characters); e.txt holds none and is left out.
#[test]
fn count_per_input() {
    let dir = corpus_and_a_file_of_none();
    let d = dir.path().to_str().unwrap();
    let o = urnscan_in(&["scan", "--count", d], b"");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o), format!("{d}/a.txt:2\n{d}/b.txt:3\n{d}/sub/c.txt:1\n"));
    let o = urnscan_in(&["scan", "-c", "--invalid", d], b"");
    assert_eq!(text(&o), format!("{d}/sub/c.txt:1\n"));
    let o = urnscan_in(&["scan", "-c", "--format", "jsonl", d], b"");
    let rows: Vec<serde_json::Value> = text(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[1], serde_json::json!({"path": format!("{d}/b.txt"), "count": 3}));
    let o = urnscan_in(&["scan", "-c", "--format", "csv", d], b"");
    assert_eq!(text(&o), format!("path,count\n{d}/a.txt,2\n{d}/b.txt,3\n{d}/sub/c.txt,1\n"));
    // One input: the number alone, 0 too (with status 1: nothing found).
    let o = urnscan_in(&["scan", "-c", &format!("{d}/b.txt")], b"");
    assert_eq!((text(&o).as_str(), o.status.code()), ("3\n", Some(0)));
    let o = urnscan_in(&["scan", "-c", &format!("{d}/e.txt")], b"");
    assert_eq!((text(&o).as_str(), o.status.code()), ("0\n", Some(1)));
    let o = urnscan_in(&["scan", "-c"], b"urn:ab:c, URN:AB:C and urn:a:b\n");
    assert_eq!(text(&o), "2\n");
    let o = urnscan_in(&["scan", "-c", "--format", "jsonl"], b"urn:ab:c\n");
    assert_eq!(text(&o), "{\"path\":\"-\",\"count\":1}\n");
}

/// `-H`, `-I`, `-N` and `-0` shape text records as grep's and ripgrep's
/// options of those letters do, and `-l` lists the inputs holding a URN.
/// The offsets are counted by hand in the files of `corpus`: a.txt holds
/// `URN:isbn:1` at 6 and `urn:zz:q` at 23 (the comma and the full stop
/// trimmed), b.txt three URNs at 0, 16 and 31, sub/c.txt `urn:ab:%2C` at 0
/// and `urn:a:b` (a one-letter NID, RFC 8141 §2) at 11.
#[test]
fn paths_and_offsets_shown_or_left_out() {
    let dir = corpus_and_a_file_of_none();
    let d = dir.path().to_str().unwrap();
    let (a, b) = (format!("{d}/a.txt"), format!("{d}/b.txt"));
    let run = |args: &[&str], stdin: &[u8]| {
        let o = urnscan_in(args, stdin);
        (text(&o), o.status.code())
    };
    // The URNs alone, in input order, as `grep -oh`.
    let (out, code) = run(&["scan", "-IN", d], b"");
    assert_eq!(out, "URN:isbn:1\nurn:zz:q\nurn:ISBN:1\nurn:isbn:1\nurn:ab:%2c\nurn:ab:%2C\n");
    assert_eq!(code, Some(0));
    assert_eq!(
        run(&["scan", "-N", &a, &b], b"").0,
        format!("{a}:URN:isbn:1\n{a}:urn:zz:q\n{b}:urn:ISBN:1\n{b}:urn:isbn:1\n{b}:urn:ab:%2c\n")
    );
    // The path of a single file, and stdin's `-`; the last of -H and -I wins.
    assert_eq!(run(&["scan", "-H", &a], b"").0, format!("{a}:6:URN:isbn:1\n{a}:23:urn:zz:q\n"));
    assert_eq!(run(&["scan", "-H"], b"x urn:ab:c\n").0, "-:2:urn:ab:c\n");
    assert_eq!(run(&["scan", "-H", "-I", &a], b"").0, "6:URN:isbn:1\n23:urn:zz:q\n");
    assert_eq!(run(&["scan", "-I", "-H", &a], b"").0, format!("{a}:6:URN:isbn:1\n{a}:23:urn:zz:q\n"));
    assert_eq!(run(&["scan", "-0", &a, &b], b"").0.lines().next(), Some(format!("{a}\u{0}6:URN:isbn:1").as_str()));
    // A rejected candidate is shown with its path even from one input: -I
    // leaves it out, -N the offset. The text shown is the candidate's, up
    // to the newline that ends it.
    let c = format!("{d}/sub/c.txt");
    assert_eq!(run(&["scan", "--invalid", &c], b"").0, format!("{c}:11:nid-too-short\turn:a:b\n"));
    assert_eq!(run(&["scan", "--invalid", "-IN", d], b"").0, "nid-too-short\turn:a:b\n");
    // Counts: the path of one input with -H, none of many with -I.
    assert_eq!(run(&["scan", "-c", "-H", &b], b"").0, format!("{b}:3\n"));
    assert_eq!(run(&["scan", "-c", "-I", d], b"").0, "2\n3\n1\n");
    // -l: the inputs that hold a URN (with --invalid, a rejected candidate), by name.
    assert_eq!(run(&["scan", "-l", d], b""), (format!("{a}\n{b}\n{c}\n"), Some(0)));
    assert_eq!(run(&["scan", "--files-with-matches", "--invalid", d], b"").0, format!("{c}\n"));
    assert_eq!(run(&["scan", "-l", "-0", &a, &c], b"").0, format!("{a}\u{0}{c}\u{0}"));
    assert_eq!(run(&["scan", "-l", &format!("{d}/e.txt")], b""), (String::new(), Some(1)));
    assert_eq!(run(&["scan", "-l"], b"urn:ab:c\n").0, "-\n");
    assert_eq!(run(&["scan", "-l", "--format", "csv", &a, &c], b"").0, format!("path\n{a}\n{c}\n"));
    let (out, _) = run(&["scan", "-l", "--nid", "zz", "--format", "jsonl", d], b"");
    assert_eq!(out, format!("{{\"path\":{}}}\n", serde_json::to_string(&a).unwrap()));
    // Text only: jsonl and csv records keep their fields; -l lists no URN.
    for args in
        [&["-N", "--format", "jsonl"][..], &["-I", "--format", "csv"], &["-l", "-u"], &["-l", "-c"], &["-N", "-u"]]
    {
        let o = urnscan_in(&[&["scan"][..], args, &[d]].concat(), b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// `-n`: the line of each record (from 1), before the offset as `grep -nbo`
/// prints them. Counted by hand in `t`: line 1 is `first line`, line 2
/// holds `urn:isbn:0451450523` at 15, line 3 is empty, line 4 (from 40)
/// `urn:ietf:rfc:2141` at 40, `urn:a:b` (rejected: one-letter NID) at 59
/// and `urn:x-y:z` at 67, and line 5 (from 77, no newline at the end)
/// `urn:ab:c` at 82. A CR before a newline is part of the line before it.
#[test]
fn line_numbers_before_the_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let t = "first line\nsee urn:isbn:0451450523 and\r\n\nurn:ietf:rfc:2141, urn:a:b urn:x-y:z\nlast urn:ab:c";
    let path = dir.path().join("t.txt");
    fs::write(&path, t).unwrap();
    let p = path.to_str().unwrap();
    let run = |args: &[&str], stdin: &[u8]| {
        let o = urnscan_in(args, stdin);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
        text(&o)
    };
    let want = "2:15:urn:isbn:0451450523\n4:41:urn:ietf:rfc:2141\n4:68:urn:x-y:z\n5:83:urn:ab:c\n";
    for mmap in ["always", "never"] {
        assert_eq!(run(&["scan", "-n", "--mmap", mmap, p], b""), want, "{mmap}");
    }
    assert_eq!(run(&["scan", "-n"], t.as_bytes()), want);
    assert_eq!(run(&["scan", "-nN", p], b""), "2:urn:isbn:0451450523\n4:urn:ietf:rfc:2141\n4:urn:x-y:z\n5:urn:ab:c\n");
    assert_eq!(
        run(&["scan", "-n", "-H", p], b"").lines().next(),
        Some(format!("{p}:2:15:urn:isbn:0451450523").as_str())
    );
    assert_eq!(run(&["scan", "-n", "--invalid", "-I", p], b""), "4:60:nid-too-short\turn:a:b\n");
    // jsonl and csv gain a line field, after the path.
    let jsonl = run(&["scan", "-n", "--format", "jsonl", p], b"");
    let lines: Vec<(u64, u64)> = jsonl
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .map(|v| (v["line"].as_u64().unwrap(), v["offset"].as_u64().unwrap()))
        .collect();
    assert_eq!(lines, [(2, 15), (4, 41), (4, 68), (5, 83)]);
    let csv = csv_records(&run(&["scan", "-n", "--format", "csv", "--invalid", p], b""));
    assert_eq!(csv[0], ["path", "line", "offset", "kind", "error_offset", "candidate"]);
    assert_eq!(csv[1][..4], [p, "4", "60", "nid-too-short"]);
    // Without -n, no line field; with -u, -c, -l or --stats it has no meaning.
    assert!(!run(&["scan", "--format", "jsonl", p], b"").contains("\"line\""));
    for args in [&["-n", "-u"][..], &["-n", "-c"], &["-n", "-l"], &["-n", "--stats"]] {
        let o = urnscan_in(&[&["scan"][..], args, &[p]].concat(), b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

/// `scan -u -d` / `--min-count N`: only the URNs that occur at least 2 (N)
/// times, with their whole counts; `--stats` still counts them all. In the
/// input below `urn:a1:x` occurs twice (its NID in two cases), `urn:b2:y`
/// once and `urn:c3:%2F` three times (its hex in two cases).
#[test]
fn unique_with_repeated_and_min_count() {
    let input = b"see urn:a1:x and URN:A1:x, urn:b2:y\n(urn:c3:%2f) urn:c3:%2F urn:c3:%2f.";
    let run = |args: &[&str]| text(&urnscan_in(&[&["scan", "-u"][..], args].concat(), input));
    assert_eq!(run(&["-d"]), "2\turn:a1:x\n3\turn:c3:%2f\n");
    assert_eq!(
        run(&["--min-count", "3", "--format", "csv"]),
        "key,urn,count,nid,path,offset\nurn:c3:%2F,urn:c3:%2f,3,c3,-,37\n"
    );
    assert_eq!(run(&["-d", "--sort", "first-seen"]), "2\turn:a1:x\n3\turn:c3:%2f\n");
    assert_eq!(run(&["--sort", "count"]), "3\turn:c3:%2f\n2\turn:a1:x\n1\turn:b2:y\n");
    assert_eq!(run(&["-d", "--sort", "count"]), "3\turn:c3:%2f\n2\turn:a1:x\n");
    let stats = run(&["--min-count", "3", "--stats", "--format", "jsonl"]);
    let last: serde_json::Value = serde_json::from_str(stats.lines().last().unwrap()).unwrap();
    assert_eq!((last["valid"].as_u64(), last["unique"].as_u64()), (Some(6), Some(3)), "{last}");
    for args in [&["-d"][..], &["--min-count", "2"], &["-u", "-d", "--min-count", "2"]] {
        let o = urnscan_in(&[&["scan"][..], args].concat(), input);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
    }
}

/// README's exit status: 0 when the run selected something to print.
/// With `--unique` that is the URNs it lists, so `-d` or `--min-count`
/// that leave every URN out mean 1 (as `uniq -d` selecting nothing, and
/// `grep` selecting no line); with `--unique --invalid` the rejected
/// candidates and the unique URNs both are listed, and either is found.
#[test]
fn unique_status_follows_the_urns_it_lists() {
    let status = |args: &[&str], input: &[u8]| {
        let o = urnscan_in(&[&["scan", "-u"][..], args].concat(), input);
        (o.status.code(), text(&o).is_empty())
    };
    // Every URN once: -d and --min-count 2 list none.
    let once = b"urn:ab:c urn:ab:d\n";
    assert_eq!(status(&[], once), (Some(0), false));
    assert_eq!(status(&["-d"], once), (Some(1), true));
    assert_eq!(status(&["--min-count", "2", "--sort", "first-seen"], once), (Some(1), true));
    assert_eq!(status(&["-d", "--sort", "count", "--format", "jsonl"], once), (Some(1), true));
    assert_eq!(status(&["-d"], b"urn:ab:c urn:ab:c\n"), (Some(0), false));
    // --invalid beside --unique: the rejected candidates and the unique
    // URNs are listed; either one found is 0, neither 1.
    assert_eq!(status(&["--invalid"], b"urn:ab:c urn:a:b\n"), (Some(0), false));
    assert_eq!(status(&["--invalid"], b"urn:a:b\n"), (Some(0), false));
    assert_eq!(status(&["--invalid"], once), (Some(0), false));
    assert_eq!(status(&["--invalid", "-d"], once), (Some(1), true));
    assert_eq!(status(&["--invalid"], b"no urn\n"), (Some(1), true));
}

#[test]
fn count_reports_unreadable_inputs_and_counts_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let ok = dir.path().join("ok.txt");
    fs::write(&ok, "urn:ab:c urn:ab:d\n").unwrap();
    let missing = dir.path().join("missing.txt");
    let o = urnscan_in(&["scan", "--count", missing.to_str().unwrap(), ok.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(text(&o), format!("{}:2\n", ok.display()));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.txt"));
}

/// --ns-rules changes keys: where the output shows no key it would change
/// nothing, and is refused; where it shows one, it merges (a UUID in upper
/// and lower case is one class under RFC 4122 §3).
#[test]
fn ns_rules_is_refused_where_no_key_is_shown() {
    let input = b"urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6 urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6\n";
    for shape in [&[][..], &["-c"], &["-l"], &["-q"], &["-n"], &["--invalid"], &["--invalid", "--format", "jsonl"]] {
        let o = urnscan_in(&[&["scan", "--ns-rules"][..], shape, &["-"]].concat(), input);
        assert_eq!((o.status.code(), o.stdout.len()), (Some(2), 0), "{shape:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--ns-rules changes equivalence keys"), "{shape:?}");
    }
    let unique = urnscan_in(&["scan", "--ns-rules", "-u", "-"], input);
    assert_eq!(
        (unique.status.code(), text(&unique)),
        (Some(0), "2\turn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6\n".to_owned())
    );
    let jsonl = urnscan_in(&["scan", "--ns-rules", "--format", "jsonl", "-"], input);
    let keys = text(&jsonl).matches(r#""key":"urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6""#).count();
    assert_eq!((jsonl.status.code(), keys), (Some(0), 2), "{}", text(&jsonl));
    let stats = urnscan_in(&["scan", "--ns-rules", "--stats", "-"], input);
    assert!(text(&stats).lines().any(|l| l.split_whitespace().eq(["unique", "1"])), "{}", text(&stats));
}

/// -l prints paths alone, so -H (a path before each record) has nothing to
/// add, as -I, -N and -n have nothing to take away: all are refused with it.
#[test]
fn files_with_urns_refuses_the_record_shaping_options() {
    for other in ["-H", "-I", "-N", "-n"] {
        let o = urnscan_in(&["scan", "-l", other, "-"], b"urn:ab:c\n");
        assert_eq!((o.status.code(), o.stdout.len()), (Some(2), 0), "{other}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"), "{other}");
    }
}

#[test]
fn count_is_not_combined_with_unique_or_stats() {
    for other in ["--unique", "--stats"] {
        let o = urnscan_in(&["scan", "--count", other], b"urn:ab:c\n");
        assert_eq!(o.status.code(), Some(2), "{other}");
        assert!(o.stdout.is_empty());
        assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"), "{other}");
    }
}

#[test]
fn same_output_for_every_thread_count_and_mmap_policy() {
    let dir = tempfile::tempdir().unwrap();
    let mut big = String::new();
    for i in 0..200_000 {
        big.push_str(&format!("line {i} id=urn:ex{}:item-{} (urn:a:b) return:x\n", i % 7, i % 5000));
    }
    fs::write(dir.path().join("big.log"), &big).unwrap();
    corpus(dir.path());
    let d = dir.path().to_str().unwrap();
    let modes = [
        &["scan", d][..],
        &["scan", "--unique", d],
        &["scan", "-u", "--sort", "first-seen", "--stats", "--format", "json", d],
        &["scan", "--stats", "--format", "json", d],
        &["scan", "-u", "--stats", d],
        &["scan", "-c", d],
        &["scan", "-IN", d],
        &["scan", "-l", d],
        &["scan", "-n", d],
        &["scan", "-n", "--invalid", "--format", "csv", d],
    ];
    for mode in modes {
        let run = |extra: &[&str]| {
            let mut args = mode.to_vec();
            args.extend_from_slice(extra);
            let o = urnscan_in(&args, b"");
            assert_eq!(o.status.code(), Some(0));
            common::without_timing(&text(&o))
        };
        let reference = run(&["-j1", "--mmap", "never"]);
        for extra in [&["-j2"][..], &["-j4", "--mmap", "always"], &["-j3", "--mmap", "auto"]] {
            assert_eq!(run(extra), reference, "{mode:?} {extra:?}");
        }
    }
}

/// `--kernel` and `--prefetch` change speed only: every kernel this CPU has,
/// with and without the prefetch, gives the default's output byte for byte
/// (lines long enough for the main loops and the prefetch 4 KiB ahead), and
/// one it lacks is refused with exit 2, not swapped for another.
#[test]
fn same_output_for_every_search_kernel_and_prefetch() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::new();
    for i in 0..3_000 {
        let pad = "x".repeat(i % 97);
        text.push_str(&format!("{pad} URN:Ex{}:item-{} turn:no urn:a:b%2f{i} urn:x:bad", i % 11, i % 400));
        if i % 50 == 49 {
            text.push('\n');
        }
    }
    let file = dir.path().join("text.log");
    fs::write(&file, &text).unwrap();
    let f = file.to_str().unwrap();
    for mode in [&["scan", f][..], &["scan", "-u", "--stats", f], &["scan", "--invalid", f]] {
        let run = |extra: &[&str]| {
            let mut args = mode.to_vec();
            args.extend_from_slice(extra);
            urnscan_in(&args, b"")
        };
        let reference = run(&[]);
        assert_eq!(reference.status.code(), Some(0), "{mode:?}");
        for kernel in ["auto", "avx2", "sse2", "scalar"] {
            for prefetch in ["auto", "on", "off"] {
                let o = run(&["--kernel", kernel, "--prefetch", prefetch]);
                if o.status.code() == Some(2) {
                    let err = String::from_utf8_lossy(&o.stderr);
                    assert!(err.contains(&format!("--kernel {kernel}: this CPU cannot run it")), "{err}");
                    assert!(kernel == "avx2" || (kernel == "sse2" && !cfg!(target_arch = "x86_64")), "{err}");
                    continue;
                }
                assert_eq!(
                    common::without_timing(&text_of(&o)),
                    common::without_timing(&text_of(&reference)),
                    "{mode:?} --kernel {kernel} --prefetch {prefetch}"
                );
            }
        }
    }
}

fn text_of(o: &Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    text(o)
}

/// A mapped file of dense URNs is scanned in windows sized by their density
/// (down to 1 MiB here, where a 16 MiB window holds 860,000 events; a run
/// that only prints cuts those windows into chunks of 128 KiB at two
/// threads); a stream is read in blocks. Both give the same output, and the
/// counts are those the file was built with.
#[test]
fn dense_file_in_shrinking_windows_matches_the_stream() {
    let dir = tempfile::tempdir().unwrap();
    let mut dense = String::new();
    for i in 0..2_000_000 {
        // (i % 3, i % 250,000) repeats after 750,000 lines; every fifth
        // line has the scheme and NID in capitals, which keys fold.
        let scheme = if i % 5 == 0 { "URN:EX" } else { "urn:ex" };
        dense.push_str(&format!("{scheme}{}:item-{}\n", i % 3, i % 250_000));
    }
    assert!(dense.len() > 32 << 20);
    let path = dir.path().join("dense.txt");
    fs::write(&path, &dense).unwrap();
    let p = path.to_str().unwrap();
    let modes =
        [&["scan", "--unique", p][..], &["scan", "--stats", "--format", "json", p], &["scan", p], &["scan", "-nN", p]];
    for mode in modes {
        let run = |extra: &[&str]| {
            let o = urnscan_in(&[mode, extra].concat(), b"");
            assert_eq!(o.status.code(), Some(0));
            common::without_timing(&text(&o)).lines().map(str::to_owned).collect::<Vec<_>>()
        };
        let streamed = run(&["-j1", "--mmap", "never"]);
        let mapped = run(&["-j2", "--mmap", "always"]);
        // (The first difference only: the outputs are 750,000 lines.)
        let differ = mapped.iter().zip(&streamed).position(|(a, b)| a != b);
        assert!(
            mapped == streamed,
            "{mode:?}: {} lines mapped, {} streamed, first difference at {differ:?}",
            mapped.len(),
            streamed.len()
        );
        if mode[1] == "--unique" {
            assert_eq!(streamed.len(), 750_000);
        } else if mode[1] == p {
            assert_eq!(streamed.len(), 2_000_000);
        } else if mode[1] == "-nN" {
            // One URN per line: the i-th is on line i + 1, windows or not.
            assert_eq!(streamed.len(), 2_000_000);
            let line_of = |l: &str| l.split_once(':').and_then(|(n, _)| n.parse::<usize>().ok());
            let off = streamed.iter().enumerate().find(|(i, l)| line_of(l) != Some(i + 1));
            assert_eq!(off, None);
        } else {
            let v: serde_json::Value = serde_json::from_str(&streamed[0]).unwrap();
            assert_eq!((v["valid"].as_u64(), v["unique"].as_u64()), (Some(2_000_000), Some(750_000)), "{v}");
        }
    }
}

#[test]
fn unreadable_input_is_reported_and_the_rest_scanned() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("ok.txt"), "urn:ab:c\n").unwrap();
    let missing = dir.path().join("missing.txt");
    let ok = dir.path().join("ok.txt");
    let o = urnscan_in(&["scan", missing.to_str().unwrap(), ok.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).contains("ok.txt:0:urn:ab:c"));
    let err = String::from_utf8_lossy(&o.stderr);
    let said = format!(
        "urnscan: {}: No such file or directory (os error 2); check the path; skipped, the other inputs were read\n",
        missing.display()
    );
    assert_eq!(err, said);
    // A path through a file: what failed, then what became of the input.
    let through = ok.join("x");
    let o = urnscan_in(&["scan", through.to_str().unwrap(), ok.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    let said =
        format!("urnscan: {}: Not a directory (os error 20); skipped, the other inputs were read\n", through.display());
    assert_eq!(err, said);
    // The only input: no word of other inputs.
    let o = urnscan_in(&["scan", missing.to_str().unwrap()], b"");
    assert_eq!(o.status.code(), Some(2));
    let said = format!("urnscan: {}: No such file or directory (os error 2); check the path\n", missing.display());
    assert_eq!(String::from_utf8_lossy(&o.stderr), said);
}

#[test]
fn nothing_found_is_status_1() {
    let o = urnscan_in(&["scan"], b"no identifiers here, return:x\n");
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
}

#[test]
fn invalid_lists_rejected_candidates() {
    let o = urnscan_in(&["scan", "--invalid"], b"ok urn:ab:c bad urn:a:b and urn::x\n");
    // Each candidate's text ends where it does: at the space, the newline.
    assert_eq!(text(&o), "-:16:nid-too-short\turn:a:b\n-:28:nid-empty\turn::x\n");
    assert_eq!(o.status.code(), Some(0));
}

/// With `--invalid` the status says whether a rejected candidate was found,
/// as grep's says whether it selected a line: listed, counted or `-l`, with
/// or without a valid URN beside it.
#[test]
fn invalid_status_follows_the_rejected_candidates() {
    for mode in [&["--invalid"][..], &["--invalid", "-c"], &["--invalid", "-l"]] {
        let status = |stdin: &[u8]| urnscan_in(&[&["scan"][..], mode].concat(), stdin).status.code();
        assert_eq!(status(b"bad urn:a:b\n"), Some(0), "{mode:?}");
        assert_eq!(status(b"ok urn:ab:c, bad urn:a:b\n"), Some(0), "{mode:?}");
        assert_eq!(status(b"ok urn:ab:c\n"), Some(1), "{mode:?}");
        assert_eq!(status(b""), Some(1), "{mode:?}");
    }
    // Without it, a URN.
    assert_eq!(urnscan_in(&["scan", "-l"], b"bad urn:a:b\n").status.code(), Some(1));
}

/// The path of file `name`, written in `dir` with `text`.
fn written(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p.to_str().unwrap().to_owned()
}

/// `-q`: nothing on stdout, the status as `--count`'s would be (0 found, 1
/// none, 2 an input failed), except that the run ends at the first input
/// holding what it looks for, so a failing input after it is never reached
/// and one before it does not change the 0 (as `grep -q`).
#[test]
fn quiet_says_by_its_status_alone() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str, text: &str| written(dir.path(), name, text);
    let (urn, none, bad) =
        (path("urn.txt", "see urn:ab:c\n"), path("none.txt", "nothing\n"), path("bad.txt", "urn:a:b\n"));
    let missing = dir.path().join("missing.txt").to_str().unwrap().to_owned();
    let run = |args: &[&str], stdin: &[u8]| {
        let o = urnscan_in(&[&["scan", "-q"][..], args].concat(), stdin);
        assert_eq!(text(&o), "", "{args:?}");
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned())
    };
    assert_eq!(run(&[&urn], b""), (Some(0), String::new()));
    assert_eq!(run(&[&none], b""), (Some(1), String::new()));
    assert_eq!(run(&[&bad], b""), (Some(1), String::new()));
    assert_eq!(run(&["--invalid", &bad], b""), (Some(0), String::new()));
    assert_eq!(run(&["--invalid", &urn], b""), (Some(1), String::new()));
    assert_eq!(run(&["--format", "csv", "-"], b"urn:ab:c"), (Some(0), String::new()));
    assert_eq!(run(&["-"], b"no urn here"), (Some(1), String::new()));
    // Found first: the missing file after it is not reached.
    for threads in ["-j1", "-j2"] {
        assert_eq!(run(&[threads, &none, &urn, &missing], b""), (Some(0), String::new()), "{threads}");
    }
    // A failure before the find is reported, and the find still decides.
    let (code, err) = run(&[&missing, &urn], b"");
    assert_eq!(code, Some(0));
    assert!(err.contains("missing.txt"), "{err}");
    let (code, err) = run(&[&missing, &none], b"");
    assert_eq!(code, Some(2));
    assert!(err.contains("missing.txt"), "{err}");
    // What would print something is a usage error.
    for other in ["-u", "--stats", "-c", "-l"] {
        let o = urnscan_in(&["scan", "-q", other, &urn], b"");
        assert_eq!(o.status.code(), Some(2), "{other}");
    }
}

/// `-q`, `-l` and `--max-count` on a stream that has not ended: the run
/// ends once it has what it needs, without waiting for the end of its
/// input (nor for a block of 16 MiB to fill), as grep does; the writer
/// writes one line and keeps the pipe open. The status and what was printed.
fn run_on_an_open_stream(args: &[&str]) -> (Option<i32>, String) {
    use std::io::Write;
    use std::time::{Duration, Instant};
    let (mut child, lines) = common::piped(args);
    let mut stdin = child.stdin.take().unwrap();
    // One line, then nothing more and no end.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(b"see urn:ab:c and urn:ab:d\n");
        // Held open until the test ends.
        std::thread::sleep(Duration::from_secs(60));
        drop(stdin);
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(writer);
    let status = status.unwrap_or_else(|| panic!("{args:?} waited for the end of its input"));
    (status.code(), lines.iter().map(|line| line + "\n").collect())
}

/// Standard input is scanned as it is written, as `tail -f app.log |
/// urnscan scan` needs: a URN is printed while the writer keeps the pipe
/// open (about 0.1 s after its line came), and one cut off by a pause
/// waits for the rest of it. The same URNs, offsets and counts as the
/// whole input in one write: a NUL in the first 8 KiB, written after a
/// pause, still makes it binary.
#[test]
fn a_pipe_is_scanned_as_it_is_written() {
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::Duration;
    let spawn = common::piped;
    let next = |lines: &mpsc::Receiver<String>| lines.recv_timeout(Duration::from_secs(20)).ok();
    let (mut child, lines) = spawn(&["scan", "-"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"see urn:ab:c\n").unwrap();
    assert_eq!(next(&lines).as_deref(), Some("4:urn:ab:c"), "printed before the pipe closes");
    stdin.write_all(b"and urn:ab:d").unwrap();
    // Nothing can be printed yet: `urn:ab:d` may go on.
    assert_eq!(lines.recv_timeout(Duration::from_millis(400)).ok(), None);
    stdin.write_all(b"e (end)\n").unwrap();
    assert_eq!(next(&lines).as_deref(), Some("17:urn:ab:de"));
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert_eq!(next(&lines), None);

    let mut text = b"urn:ab:c\n".to_vec();
    text.resize(8191, b'x');
    text.extend_from_slice(b"\0 urn:ab:d\n");
    let (mut child, lines) = spawn(&["scan", "--stats", "--format", "json", "-"]);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&text[..9]).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    stdin.write_all(&text[9..]).unwrap();
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
    let paused: serde_json::Value =
        serde_json::from_str(&common::without_timing(&lines.iter().collect::<String>())).unwrap();
    let whole = common::without_timing(
        &String::from_utf8(urnscan_in(&["scan", "--stats", "--format", "json"], &text).stdout).unwrap(),
    );
    let whole: serde_json::Value = serde_json::from_str(&whole).unwrap();
    assert_eq!((paused["binary_files"].as_u64(), paused["valid"].as_u64()), (Some(1), Some(2)), "{paused}");
    assert_eq!(paused, whole);
}

/// A FIFO given by path (`urnscan scan <(tail -f app.log)`, a named pipe)
/// is read as it is written too, beside a file: its URN is printed while
/// its writer keeps it open, and the file after it is scanned once it ends.
#[cfg(unix)]
#[test]
fn a_fifo_given_by_path_is_scanned_as_it_is_written() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("log.fifo");
    assert!(Command::new("mkfifo").arg(&fifo).status().expect("run mkfifo").success());
    let after = written(dir.path(), "after.txt", "urn:ab:z\n");
    let mut child = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["scan", "-IN", fifo.to_str().unwrap(), &after])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = common::lines_of(child.stdout.take().unwrap());
    let next = || lines.recv_timeout(Duration::from_secs(20)).ok();
    // Opening blocks until urnscan has opened the FIFO for reading.
    let mut writer = std::fs::OpenOptions::new().write(true).open(&fifo).unwrap();
    writer.write_all(b"see urn:ab:c\n").unwrap();
    assert_eq!(next().as_deref(), Some("urn:ab:c"), "printed before the FIFO closes");
    writer.write_all(b"and urn:ab:d\n").unwrap();
    assert_eq!(next().as_deref(), Some("urn:ab:d"));
    drop(writer);
    assert_eq!(next().as_deref(), Some("urn:ab:z"));
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn quiet_list_and_max_count_end_without_waiting_for_the_end_of_a_stream() {
    assert_eq!(run_on_an_open_stream(&["scan", "-q", "-"]), (Some(0), String::new()));
    assert_eq!(run_on_an_open_stream(&["scan", "-l", "-"]), (Some(0), "-\n".to_owned()));
    assert_eq!(run_on_an_open_stream(&["scan", "-m", "1", "-"]), (Some(0), "4:urn:ab:c\n".to_owned()));
    assert_eq!(run_on_an_open_stream(&["scan", "-m", "2", "-c", "-"]), (Some(0), "2\n".to_owned()));
}

/// `--max-count NUM`: each input's first NUM records (URNs, or with
/// `--invalid` rejected candidates) of what the run prints without it, and
/// counts of at most NUM; the inputs after one cut short are still scanned.
#[test]
fn max_count_keeps_the_first_records_of_each_input() {
    let dir = tempfile::tempdir().unwrap();
    let path = |name: &str, text: &str| written(dir.path(), name, text);
    // Offsets by hand: 0, 9 and 18 (after "urn:ab:1 urn:ab:2\n"), then the
    // invalid `urn:x` (a NID of one letter) at 27 and urn:ab:4 at 33.
    let a = path("a.txt", "urn:ab:1 urn:ab:2\nurn:ab:3 urn:x urn:ab:4\n");
    let (b, none) = (path("b.txt", "and urn:cd:1\n"), path("none.txt", "nothing\n"));
    let o = urnscan_in(&["scan", "-m", "2", &a, &b, &none], b"");
    assert_eq!(text(&o), format!("{a}:0:urn:ab:1\n{a}:9:urn:ab:2\n{b}:4:urn:cd:1\n"));
    assert_eq!(o.status.code(), Some(0));
    let o = urnscan_in(&["scan", "-c", "-m", "3", &a, &b, &none], b"");
    assert_eq!(text(&o), format!("{a}:3\n{b}:1\n"));
    let o = urnscan_in(&["scan", "-IN", "-m", "1", &none, &b, &a], b"");
    assert_eq!(text(&o), "urn:cd:1\nurn:ab:1\n");
    let o = urnscan_in(&["scan", "-m", "1", "--invalid", &a], b"");
    assert!(text(&o).starts_with(&format!("{a}:27:nid-")), "{}", text(&o));
    assert_eq!(text(&o).lines().count(), 1);
    let o = urnscan_in(&["scan", "-m", "2", "--format", "csv", "-n", "-"], b"urn:ab:1 urn:ab:2\nurn:ab:3\n");
    assert_eq!(text(&o), "path,line,offset,urn,key,nid\n-,1,0,urn:ab:1,urn:ab:1,ab\n-,1,9,urn:ab:2,urn:ab:2,ab\n");
    // More than there are: everything.
    assert_eq!(text(&urnscan_in(&["scan", "-m", "9", &a], b"")), text(&urnscan_in(&["scan", &a], b"")));
    for (args, error) in [
        (&["-m", "0"][..], "0 would read nothing"),
        (&["-m", "1", "-u"], "--unique"),
        (&["-m", "1", "--stats"], "--stats"),
    ] {
        let o = urnscan_in(&[&["scan"][..], args, &[a.as_str()]].concat(), b"");
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains(error), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// A file of many windows, cut short at its NUM-th URN: every thread count
/// and mapping policy prints the first NUM lines of the whole run, and `-l`
/// lists it (and the file after it) as when read to the end; so does a file
/// of a few MiB, which such runs scan in windows too.
#[test]
fn max_count_and_list_on_a_file_of_many_windows() {
    let dir = tempfile::tempdir().unwrap();
    // A URN per MiB, 40 of them: windows are 16 MiB or more.
    let mut big = Vec::new();
    for i in 0..40 {
        big.extend_from_slice(format!("urn:ex:item-{i} ").as_bytes());
        big.resize((i + 1) << 20, b' ');
    }
    let (path, after) = (dir.path().join("big.txt"), dir.path().join("after.txt"));
    fs::write(&path, &big).unwrap();
    fs::write(&after, "urn:ex:last\n").unwrap();
    let (p, q) = (path.to_str().unwrap(), after.to_str().unwrap());
    let whole = text_of(&urnscan_in(&["scan", "-IN", p], b""));
    assert_eq!(whole.lines().count(), 40);
    for threads in ["-j1", "-j2"] {
        for mmap in ["always", "never"] {
            let run =
                |args: &[&str]| text_of(&urnscan_in(&[&["scan", threads, "--mmap", mmap][..], args].concat(), b""));
            for n in [1, 17, 39, 40, 41] {
                let first: String = whole.lines().take(n).map(|l| format!("{l}\n")).collect();
                assert_eq!(run(&["-IN", "-m", &n.to_string(), p]), first, "{threads} {mmap} -m {n}");
                assert_eq!(run(&["-c", "-m", &n.to_string(), p]), format!("{}\n", n.min(40)), "{threads} {mmap}");
            }
            assert_eq!(run(&["-l", p, q]), format!("{p}\n{q}\n"), "{threads} {mmap}");
            assert_eq!(run(&["-IN", "-m", "2", p, q]), "urn:ex:item-0\nurn:ex:item-1\nurn:ex:last\n");
        }
    }
    // A file short enough to be scanned whole, unless the run may stop
    // (then in windows from 256 KiB on): a URN every 64 KiB of 3 MiB.
    let mut some = Vec::new();
    for i in 0..48 {
        some.extend_from_slice(format!("urn:ex:part-{i} ").as_bytes());
        some.resize((i + 1) << 16, b' ');
    }
    let path = dir.path().join("some.txt");
    fs::write(&path, &some).unwrap();
    let p = path.to_str().unwrap();
    let whole = text_of(&urnscan_in(&["scan", "-n", p], b""));
    assert_eq!(whole.lines().count(), 48);
    for threads in ["-j1", "-j2"] {
        let run = |args: &[&str]| text_of(&urnscan_in(&[&["scan", threads][..], args].concat(), b""));
        for n in [1, 4, 5, 20, 47, 48, 49] {
            let first: String = whole.lines().take(n).map(|l| format!("{l}\n")).collect();
            assert_eq!(run(&["-n", "-m", &n.to_string(), p]), first, "{threads} -m {n}");
            assert_eq!(run(&["-c", "-m", &n.to_string(), p]), format!("{}\n", n.min(48)), "{threads} -m {n}");
        }
        assert_eq!(run(&["-l", p]), format!("{p}\n"), "{threads}");
    }
}

/// `--nid`: only the URNs of the namespaces given, NIDs compared in any case
/// (RFC 8141 §3.1). `urn:example:a/urn:isbn:1` is one URN of NID `example`
/// (`/` is allowed in an NSS), so `--nid isbn` takes nothing from it; and
/// `urn:a:b` is no URN at all (a NID has 2 to 32 characters), so it is
/// counted as invalid, not as excluded.
#[test]
fn nid_filter_keeps_the_namespaces_given() {
    let input =
        "urn:ISBN:0451450523 urn:issn:0167-6423 urn:example:a/urn:isbn:1 URN:isbn:0451450523 urn:isbnx:1 urn:a:b\n";
    let second = input.find("URN:isbn").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("in.txt");
    fs::write(&file, input).unwrap();
    let file = file.to_str().unwrap();
    for source in ["-", file] {
        let o = urnscan_in(&["scan", "--nid", "isbn", source], input.as_bytes());
        assert_eq!(text(&o), format!("0:urn:ISBN:0451450523\n{second}:URN:isbn:0451450523\n"), "{source}");
        assert_eq!(o.status.code(), Some(0));
        // Any case, repeated or comma-separated, listed once each.
        for args in [&["--nid", "ISBN,issn"][..], &["--nid", "Isbn", "--nid", "ISSN", "--nid", "isbn"]] {
            let o = urnscan_in(&[&["scan", "--unique"], args, &[source]].concat(), input.as_bytes());
            assert_eq!(text(&o), "2\turn:ISBN:0451450523\n1\turn:issn:0167-6423\n", "{args:?}");
        }
        let o = urnscan_in(&["scan", "--nid", "isbn", "--count", source], input.as_bytes());
        assert_eq!(text(&o), "2\n");
        let o = urnscan_in(&["scan", "--nid", "isbn", "--stats", "--format", "json", source], input.as_bytes());
        let v: serde_json::Value = serde_json::from_str(&text(&o)).unwrap();
        // candidates = valid + excluded + invalid
        assert_eq!(
            (&v["candidates"], &v["valid"], &v["excluded"], &v["invalid"]),
            (&6.into(), &2.into(), &3.into(), &1.into())
        );
        assert_eq!(v["unique"], 1);
        assert_eq!(v["nids"], serde_json::json!([{"nid": "isbn", "class": "formal", "occurrences": 2, "unique": 1}]));
        let o = urnscan_in(&["scan", "--nid", "isbn", "--stats", source], input.as_bytes());
        assert!(text(&o).contains("\nvalid        2\nexcluded     3\ninvalid      1\n"), "{}", text(&o));
        // Without --nid there is no `excluded`, in either format.
        let o = urnscan_in(&["scan", "--stats", "--format", "json", source], input.as_bytes());
        let v: serde_json::Value = serde_json::from_str(&text(&o)).unwrap();
        assert!(v.get("excluded").is_none());
        assert_eq!(v["valid"], 5);
    }
    // None of that namespace: nothing printed, exit 1 (nothing found).
    let o = urnscan_in(&["scan", "--nid", "uuid", file], b"");
    assert_eq!((text(&o).as_str(), o.status.code()), ("", Some(1)));
    // RFC 2141 allows a one-letter NID, so there `urn:a:b` is a URN.
    let o = urnscan_in(&["scan", "--rfc2141", "--nid", "A", file], b"");
    assert_eq!(text(&o), format!("{}:urn:a:b\n", input.find("urn:a:b").unwrap()));
}

/// `--stats` text ends with two timing rows, and the tests' `without_timing`
/// drops those alone: a NID may be called `elapsed` (its row stays).
#[test]
fn timing_rows_end_the_totals_and_a_nid_called_elapsed_stays() {
    let o = urnscan_in(&["scan", "--stats", "-"], b"urn:elapsed:x urn:elapsed:y\n");
    let raw = text(&o);
    let lines: Vec<&str> = raw.lines().collect();
    assert!(lines[1].starts_with("elapsed ") && lines[1].contains("unregistered"), "{raw}");
    let n = lines.len();
    assert!(lines[n - 2].starts_with("elapsed ") && lines[n - 2].ends_with(" s"), "{raw}");
    assert!(lines[n - 1].starts_with("GB/s "), "{raw}");
    let kept: String = lines[..n - 2].iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(common::without_timing(&raw), kept);
}

/// Rule 3 under RFC 2141: trimming drops the sentence's `.`, and the
/// longest valid prefix taken again keeps the `#`, `?+` or `?=` before it,
/// which RFC 2141 admits in the NSS (§2.2: `<reserved>` holds `#` and `?`,
/// `<other>` holds `+` and `=`); under RFC 8141 they are components left
/// empty, and go. Each URN reported passes `check` with that grammar.
#[test]
fn trimming_under_rfc2141_keeps_what_its_nss_holds() {
    let input = b"See urn:ab:c#. Or urn:ab:d?+. Or urn:ab:e?=, or urn:ab:#. Is it urn:ab:f?\n";
    let found = |grammar: &[&str]| {
        let o = urnscan_in(&[&["scan", "-u", "--format", "jsonl"][..], grammar].concat(), input);
        text(&o)
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (v["urn"].as_str().unwrap().to_owned(), v["key"].as_str().unwrap().to_owned())
            })
            .collect::<Vec<_>>()
    };
    let pairs = |list: &[&str]| list.iter().map(|u| (u.to_string(), u.to_string())).collect::<Vec<_>>();
    let rfc2141 = found(&["--rfc2141"]);
    assert_eq!(rfc2141, pairs(&["urn:ab:#", "urn:ab:c#", "urn:ab:d?+", "urn:ab:e?=", "urn:ab:f"]));
    // `urn:ab:#` has nothing left but its `#` under RFC 8141: rejected.
    assert_eq!(found(&[]), pairs(&["urn:ab:c", "urn:ab:d", "urn:ab:e", "urn:ab:f"]));
    for (urn, _) in &rfc2141 {
        let o = urnscan_in(&["check", "--rfc2141", urn], b"");
        assert_eq!(o.status.code(), Some(0), "{urn}: {}", text(&o));
    }
}

#[test]
fn nid_filter_rejects_what_is_not_a_nid() {
    for (nid, why) in [
        ("a", "the NID must be 2 to 32 characters long (RFC 8141 §2)"),
        ("is bn", "the NID may hold only ASCII letters, digits and \"-\""),
        ("isbn:1", "a NID holds no colon"),
        ("-isbn", "the NID must start with a letter or digit"),
    ] {
        let o = urnscan_in(&["scan", &format!("--nid={nid}"), "-"], b"urn:isbn:1\n");
        assert_eq!(o.status.code(), Some(2), "{nid}");
        assert!(o.stdout.is_empty());
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains(&format!("invalid --nid: {nid:?} is not a namespace identifier (NID): {why}")), "{err}");
    }
    // Spaces around a NID are how the list was typed (no NID holds one).
    let o = urnscan_in(&["scan", "--nid", " isbn , issn", "-"], b"urn:isbn:1 urn:issn:2 urn:ab:3\n");
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(text(&o), "0:urn:isbn:1\n11:urn:issn:2\n");
    // It selects URNs; rejected candidates have no NID to trust.
    let o = urnscan_in(&["scan", "--nid", "isbn", "--invalid", "-"], b"urn:isbn:1\n");
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"));
}

/// A file larger than 16 MiB goes through the windowed pipeline, whose
/// first window ends there: the filtered output is the unfiltered output's
/// lines of that NID, at every thread count, also around a window's end,
/// where a URN of another NID that holds `urn:isbn:` runs across it.
#[test]
fn nid_filter_on_a_file_scanned_in_windows() {
    let window = 16 << 20;
    let mut input = Vec::with_capacity(window + (1 << 20));
    let mut n = 0;
    while input.len() < window + (1 << 20) {
        if input.len() + 40 >= window && input.len() < window {
            input.extend_from_slice(b" urn:example:straddle/urn:isbn:inside/urn:isbn:too ");
        }
        let nid = ["isbn", "ISBN", "issn", "example"][n % 4];
        input.extend_from_slice(format!("line {n} urn:{nid}:{} and filler text\n", n % 1000).as_bytes());
        n += 1;
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    fs::write(&path, &input).unwrap();
    let path = path.to_str().unwrap();
    let all = urnscan_in(&["scan", "-j2", path], b"");
    // `offset:urn`: the NID is the third field.
    let nid = |line: &str| line.split(':').nth(2).unwrap_or_default().to_ascii_lowercase();
    let want: String = text(&all).lines().filter(|l| nid(l) == "isbn").map(|l| format!("{l}\n")).collect();
    let straddling = text(&all).lines().filter(|l| l.contains("straddle")).map(nid).collect::<Vec<_>>();
    assert_eq!(straddling, ["example"]);
    assert!(want.lines().count() > 1000);
    for j in ["-j1", "-j2"] {
        let o = urnscan_in(&["scan", j, "--nid", "isbn", path], b"");
        assert_eq!(text(&o), want, "{j}");
        let o = urnscan_in(&["scan", j, "--nid", "isbn", "--count", path], b"");
        assert_eq!(text(&o), format!("{}\n", want.lines().count()));
    }
}

#[test]
fn invalid_records_have_the_same_fields_in_jsonl_and_csv() {
    // "urn:a,b": a NID is letters, digits and inner hyphens (RFC 8141 §2),
    // so the `,` at byte 5 of the candidate ends it wrongly; the candidate
    // starts at byte 16 of the input.
    let input = b"x urn:ab-:x and urn:a,b\n";
    let names = ["path", "offset", "kind", "error_offset", "candidate"];
    let o = urnscan_in(&["scan", "--invalid", "--format", "jsonl"], input);
    let from_json: Vec<Vec<String>> = text(&o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v.as_object().unwrap().len(), names.len(), "{l}");
            let field = |name: &&str| match &v[*name] {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            names.iter().map(field).collect()
        })
        .collect();
    let o = urnscan_in(&["scan", "--invalid", "--format", "csv"], input);
    let mut from_csv = csv_records(&text(&o));
    assert_eq!(from_csv.remove(0), names);
    assert_eq!(from_csv, from_json);
    assert_eq!(from_csv.len(), 2);
    // A `,` may be in a URN (sub-delims, RFC 8141 §2), so it ends no
    // candidate; the space and the newline do.
    // (`urn:ab-:x`'s error is the one `check urn:ab-:x` gives.)
    assert_eq!(from_csv[0][1..], ["2", "nid-trailing-hyphen", "7", "urn:ab-:x"]);
    assert_eq!(from_csv[1][1..], ["16", "nid-bad-char", "5", "urn:a,b"]);
}

/// A rejected candidate's text is the candidate's, up to where it ends
/// (README, `--invalid`): before an ASCII byte no URN holds (a tab, a line
/// end, a space, a quote, `<`), after an apostrophe before the next one,
/// at most 64 bytes; a non-ASCII byte ends nothing. Before, it was the 64
/// bytes from its start, which showed the URNs after it (the example of
/// the review below). So it holds no tab or line end; a C1 control
/// (U+0085, two bytes) it may hold, kept in jsonl and csv, a space in text.
/// Every text and offset below is counted by hand from the input.
#[test]
fn invalid_candidates_are_shown_up_to_where_they_end() {
    let input = "x urn:ab:/a urn:a:b urn:abcdefghijklmnopqrstuvwxyz0123456:x urn:ab\n\
                 'urn:ab:/b'c' <urn:ab:\u{e9}x> urn:\tab\r\nurn:ab:\u{85}y z\n";
    let want = [
        (2, "nss-leading-slash", 7, "urn:ab:/a"),
        (12, "nid-too-short", 5, "urn:a:b"),
        (20, "nid-too-long", 36, "urn:abcdefghijklmnopqrstuvwxyz0123456:x"),
        (60, "missing-nss-colon", 6, "urn:ab"),
        (68, "nss-leading-slash", 7, "urn:ab:/b"),
        (82, "non-ascii", 7, "urn:ab:\u{e9}x"),
        (94, "nid-empty", 4, "urn:"),
        (103, "non-ascii", 7, "urn:ab:\u{85}y"),
    ];
    let o = urnscan_in(&["scan", "--invalid", "--format", "jsonl"], input.as_bytes());
    let got: Vec<(u64, String, u64, String)> = text(&o)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |f: &str| v[f].as_str().unwrap().to_owned();
            (v["offset"].as_u64().unwrap(), s("kind"), v["error_offset"].as_u64().unwrap(), s("candidate"))
        })
        .collect();
    let want_owned: Vec<(u64, String, u64, String)> =
        want.iter().map(|&(o, k, e, c)| (o, k.to_owned(), e, c.to_owned())).collect();
    assert_eq!(got, want_owned);
    let o = urnscan_in(&["scan", "--invalid", "--format", "csv"], input.as_bytes());
    let csv = csv_records(&text(&o));
    let from_csv: Vec<Vec<String>> = csv[1..].iter().map(|r| r[1..].to_vec()).collect();
    let want_csv: Vec<Vec<String>> =
        want.iter().map(|&(o, k, e, c)| vec![o.to_string(), k.to_owned(), e.to_string(), c.to_owned()]).collect();
    assert_eq!(from_csv, want_csv);
    let o = urnscan_in(&["scan", "--invalid"], input.as_bytes());
    let want_text: String =
        want.iter().map(|&(o, k, _, c)| format!("-:{o}:{k}\t{}\n", c.replace('\u{85}', " "))).collect();
    assert_eq!(text(&o), want_text);
}

#[test]
fn stats_as_csv_is_the_nid_table_of_the_json() {
    // Three NIDs: `isbn` (formal: registered with IANA) twice, in two
    // spellings of one key (RFC 8141 §3.1: the NID's case does not matter),
    // `x-y` (experimental: RFC 3406's prefix, §5.1 item 4) and `ab`
    // (reserved: a formal NID is more than two characters, §5.1 item 3)
    // once each; most occurrences first, then by NID.
    let input = b"urn:isbn:1 URN:ISBN:1 urn:x-y:a urn:ab:c\n";
    let o = urnscan_in(&["scan", "--stats", "--format", "json"], input);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let from_json: Vec<Vec<String>> = v["nids"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let n = |k: &str| r[k].as_u64().unwrap().to_string();
            vec![
                r["nid"].as_str().unwrap().to_owned(),
                r["class"].as_str().unwrap().to_owned(),
                n("occurrences"),
                n("unique"),
            ]
        })
        .collect();
    let o = urnscan_in(&["scan", "--stats", "--format", "csv"], input);
    assert_eq!(o.status.code(), Some(0));
    let mut rows = csv_records(&text(&o));
    assert_eq!(rows.remove(0), ["nid", "class", "occurrences", "unique"]);
    assert_eq!(rows, from_json);
    assert_eq!(rows[0], ["isbn", "formal", "2", "1"]);
    assert_eq!(rows[1..], [["ab", "reserved", "1", "1"], ["x-y", "experimental", "1", "1"]]);
    // A second table would share the stream: a usage error, and no output;
    // so are --unique's and --invalid's tables together (they were written
    // one after the other, a second header between them).
    for modes in [&["--stats", "--unique"], &["--stats", "--invalid"], &["--unique", "--invalid"]] {
        let o = urnscan_in(&["scan", modes[0], modes[1], "--format", "csv"], input);
        assert_eq!(o.status.code(), Some(2), "{modes:?}");
        assert!(o.stdout.is_empty(), "{modes:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("no single CSV form"), "{modes:?}");
    }
}

/// `--ns-rules` merges what RFC 4122 §3 (a UUID's hex digits in any case)
/// and RFC 2648 §2 (the `rfc`, `fyi`, `std`, `bcp`, `id`, `mtg` literals in
/// any case) declare equal, and nothing else: an NSS that is not a UUID
/// string, and `params` (RFC 3553), keep their case. The classes below are
/// counted by hand; without the option RFC 8141 keeps the three spellings
/// of each apart. Every way the scan reaches the key table (a mapped file,
/// whose keys are checked again before they are kept; a stream) and every
/// thread count gives them, and `dedup --ns-rules` of the same lines too.
#[test]
fn ns_rules_merge_uuids_and_ietf_literals_in_scan() {
    let lines = "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6\nurn:ietf:RFC:2648\nurn:uuid:not-a-uuid-X\n\
                 urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6\nurn:ietf:params:XML\nurn:isbn:0451450523\n\
                 URN:UUID:f81d4fae-7DEC-11d0-a765-00a0c91e6bf6\nurn:ietf:rfc:2648\nurn:uuid:NOT-A-UUID-X\n\
                 urn:IETF:Rfc:2648\nurn:ietf:params:xml\n";
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("urns.txt");
    fs::write(&path, lines).unwrap();
    let p = path.to_str().unwrap();
    let ruled = "1\turn:ietf:params:XML\n1\turn:ietf:params:xml\n3\turn:ietf:RFC:2648\n1\turn:isbn:0451450523\n\
                 1\turn:uuid:NOT-A-UUID-X\n3\turn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6\n1\turn:uuid:not-a-uuid-X\n";
    for extra in [&["-j1", "--mmap", "always"][..], &["-j2", "--mmap", "always"], &["-j1", "--mmap", "never"], &["-j2"]]
    {
        let o = urnscan_in(&[&["scan", "-u", "--ns-rules", p][..], extra].concat(), b"");
        assert_eq!(text(&o), ruled, "{extra:?}");
    }
    assert_eq!(text(&urnscan_in(&["scan", "-u", "--ns-rules"], lines.as_bytes())), ruled, "stdin");
    let dedup = urnscan_in(&["dedup", "-q", "--ns-rules", "--count", "--sort", "key", p], b"");
    assert_eq!(text(&dedup), ruled);
    // Without the rule: 11 classes, the unique count of --stats says so.
    let o = urnscan_in(&["scan", "--stats", "--format", "json", p], b"");
    let stats: serde_json::Value = serde_json::from_str(&text(&o)).unwrap();
    assert_eq!(stats["unique"], 11);
    let o = urnscan_in(&["scan", "--stats", "--ns-rules", "--format", "json", p], b"");
    let stats: serde_json::Value = serde_json::from_str(&text(&o)).unwrap();
    assert_eq!(stats["unique"], 7);
    // The key field of a listing is the table's key.
    let o = urnscan_in(&["scan", "--ns-rules", "--format", "csv", p], b"");
    let keys: Vec<String> = text(&o).lines().skip(1).map(|l| l.split(',').nth(3).unwrap().to_owned()).collect();
    assert_eq!(keys[6], "urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6");
    assert_eq!(keys[9], "urn:ietf:rfc:2648");
}

/// A URN in Markdown emphasis is the same URN as in plain text: the closing
/// run of `*`, `_` or `~` that matches the opening one goes (rule 3''), so
/// a name written in bold and plain is one class, not two.
#[test]
fn markdown_emphasis_around_a_urn_is_not_part_of_it() {
    let input =
        b"- **urn:isbn:0451450523**: a book\nSee urn:isbn:0451450523.\n_urn:ab:c_ and ~~urn:ab:c~~ and urn:ab:c\n";
    let o = urnscan_in(&["scan", "--unique"], input);
    assert_eq!(text(&o), "3\turn:ab:c\n2\turn:isbn:0451450523\n");
    // --no-trim keeps every mark, as it keeps punctuation.
    let o = urnscan_in(&["scan", "--unique", "--no-trim"], input);
    assert!(text(&o).contains("1\turn:isbn:0451450523**:\n"), "{}", text(&o));
}
