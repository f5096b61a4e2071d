//! `urnscan check`, run as a user would: arguments, stdin, formats and exit
//! codes. Expectations come from RFC 8141 / RFC 2141 and the issue's JSON
//! schema, not from the program's output.

mod common;

use std::process::{Command, Output};

fn urnscan(args: &[&str], stdin: &[u8]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_urnscan"));
    cmd.args(args);
    common::run_fed(cmd, stdin)
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn exit_status_says_whether_all_are_valid() {
    assert_eq!(urnscan(&["check", "urn:ietf:rfc:8141", "URN:ISBN:0451450523"], b"").status.code(), Some(0));
    assert_eq!(urnscan(&["check", "urn:ietf:rfc:8141", "urn:a:b"], b"").status.code(), Some(1));
    assert_eq!(urnscan(&["check", "--no-such-flag"], b"").status.code(), Some(2));
}

/// A line that is a URN but for ASCII whitespace around it (a padded
/// list) is invalid, as RFC 8141 has no room for a space; check says at the
/// end how many such inputs there were and that `dedup` trims them, in
/// every format, on stderr. Lines invalid with or without the padding, and
/// blank lines, are not counted.
#[test]
fn inputs_valid_but_for_their_padding_get_a_hint() {
    let list = b"urn:ab:c \n\turn:ab:d\n urn:ab:e\r\r\nurn:ab:f\n urn:a:b \n\n  \nurn:ab:g\r\n";
    for format in ["text", "jsonl"] {
        let o = urnscan(&["check", "--format", format], list);
        assert_eq!(o.status.code(), Some(1), "{format}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(
            err,
            "hint: 3 lines would be valid URNs without the spaces, tabs or carriage returns around them: \
             check judges each input as it is; `urnscan dedup` trims every line\n",
            "{format}"
        );
    }
    let o = urnscan(&["check", "urn:ab:c", " urn:ab:d"], b"");
    assert!(String::from_utf8_lossy(&o.stderr).starts_with("hint: 1 argument would be a valid URN without "));
    for (args, stdin) in [(&["check"][..], &b"urn:ab:c\r\n\nurn:a:b\n"[..]), (&["check", "urn:ab:c", "urn:a:b "], b"")]
    {
        assert_eq!(String::from_utf8_lossy(&urnscan(args, stdin).stderr), "", "{args:?}");
    }
}

/// An argument that names a file or a directory is judged as the text it
/// is (not-urn at byte 0, the same verdict as without the path), and one
/// line on stderr says how check reads its input (its --help) and which
/// commands read files (scan, dedup); other invalid arguments, and a file
/// named like a URN, get no hint.
#[test]
fn a_path_given_as_an_argument_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("urns.txt");
    std::fs::write(&list, "urn:ab:c\n").unwrap();
    let list = list.to_str().unwrap();
    let folder = dir.path().to_str().unwrap();
    for (path, what) in [(list, "a file"), (folder, "a directory")] {
        let o = urnscan(&["check", path, "urn:ab:c"], b"");
        assert_eq!(o.status.code(), Some(1), "the path is no URN");
        let verdict = stdout(&urnscan(&["check", "no-such-path"], b"")).replace("no-such-path", path);
        assert!(stdout(&o).starts_with(&verdict), "{}", stdout(&o));
        assert!(verdict.starts_with(&format!("{path}\tinvalid\tnot-urn at byte 0")), "{verdict}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with(&format!("hint: {path} is {what}, not a URN")), "{err}");
        for says in ["urnscan check --help", &format!("urnscan scan {path}"), &format!("urnscan dedup {path}")] {
            assert!(err.contains(says), "{says}: {err}");
        }
        let o = urnscan(&["check", "--format", "jsonl", path], b"");
        assert_eq!(String::from_utf8_lossy(&o.stderr), err, "jsonl");
    }
    for args in [&["check", "no-such-file", "urn:a:b"][..], &["check", "urn:ab:c"]] {
        assert_eq!(urnscan(args, b"").stderr, b"", "{args:?}");
    }
    // `urnscan check urn:ab:x` beside a file of that name: a valid URN.
    std::fs::write(dir.path().join("urn:ab:x"), "").unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_urnscan"));
    cmd.current_dir(dir.path()).args(["check", "urn:ab:x"]);
    let o = common::run_fed(cmd, b"");
    assert_eq!((o.status.code(), o.stderr.len()), (Some(0), 0));
}

/// Stdin that is running text (more lines without `urn:` at their start
/// than URNs, valid or not; blank lines and padded URNs are no text) gets a hint
/// that `scan` finds URNs in text; compressed stdin, one that check reads
/// no archive (it has no `-z`), and no text hint: binary stdin is no text.
/// Arguments get neither.
#[test]
fn text_or_an_archive_on_stdin_gets_a_hint() {
    let text_hint = "hint: most lines do not start with \"urn:\": `urnscan check` judges each line as one URN; \
                     to find the URNs inside running text, use `urnscan scan`\n";
    let log = b"2024-03-11 INFO got urn:isbn:0451450523\nurn:ab:cd\nERROR no such urn:ab:x\n";
    for format in ["text", "jsonl"] {
        let o = urnscan(&["check", "--format", format], log);
        assert_eq!((o.status.code(), String::from_utf8_lossy(&o.stderr)), (Some(1), text_hint.into()), "{format}");
    }
    // As many URNs, valid or not, as lines of text, or no text but
    // padding and blanks: no hint. The shipped table of invalid URNs has 8
    // lines without `urn:` at their start (its header, `http://…`) among 67
    // that have it.
    let invalid = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/datasets/urns/invalid.tsv")).unwrap();
    let half = b"urn:ab:cd\nsome text\nurn:a:b\nmore text\n";
    for list in [&half[..], b" urn:ab:cd\n\n\t\nurn:a:b\nURN:ab:%g\n", &invalid] {
        let said = String::from_utf8_lossy(&urnscan(&["check"], list).stderr).into_owned();
        assert_eq!(said.matches("most lines").count(), 0, "{said}");
    }
    let said = urnscan(&["check"], &[&half[..], b"a third line of text\n"].concat()).stderr;
    assert_eq!(String::from_utf8_lossy(&said), text_hint, "3 lines of text, 2 URNs");
    assert_eq!(urnscan(&["check", "some", "text", "urn:ab:c"], b"").stderr, b"", "arguments");
    assert_eq!(urnscan(&["check"], b"some\0binary\nlines\n").stderr, b"", "binary");

    let list = b"urn:ab:cd\nurn:isbn:0451450523\n".repeat(100);
    let o = urnscan(&["check"], &common::gzip(&list));
    let err = String::from_utf8_lossy(&o.stderr);
    let archive = "hint: stdin starts with a gzip header: check reads no compressed input; decompress it first \
                   (`gzip -dc FILE | urnscan check`), or give the file to `urnscan dedup -z`\n";
    assert_eq!(err, archive, "an archive is not said to be text");
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn jsonl_has_exactly_the_schema_fields_in_order() {
    let o = urnscan(&["check", "--format", "jsonl", "urn:Example:a%2cb?+r?=q#", "urn:a:b"], b"");
    let lines: Vec<&str> = std::str::from_utf8(&o.stdout).unwrap().lines().collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(
        lines[0],
        r#"{"input":"urn:Example:a%2cb?+r?=q#","valid":true,"nid":"Example","nss":"a%2cb","r":"r","q":"q","f":"","key":"urn:example:a%2Cb","nid_class":"formal","error":null}"#
    );
    let v: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(v["valid"], false);
    for field in ["nid", "nss", "r", "q", "f", "key", "nid_class"] {
        assert!(v[field].is_null(), "{field}");
    }
    assert_eq!(v["error"]["kind"], "nid-too-short");
    assert_eq!(v["error"]["offset"], 5);
    // The one-line message, the first line of the text verdict's error,
    // without the drawing of the input and its caret (offset has that).
    let message = v["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("nid-too-short at byte 5: ") && !message.contains('\n'), "{message:?}");
    let text = stdout(&urnscan(&["check", "urn:a:b"], b""));
    assert_eq!(text.lines().next(), Some(format!("urn:a:b\tinvalid\t{message}").as_str()));
    assert!(text.lines().nth(2).is_some_and(|caret| caret.ends_with("     ^")), "{text}");
}

#[test]
fn stdin_lines_crlf_and_invalid_utf8() {
    let o = urnscan(&["check", "--format", "jsonl"], b"urn:ab:c\r\nurn:ab:\xff\xfe\n\nurn:x-y:z");
    assert_eq!(o.status.code(), Some(1));
    let v: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(v.len(), 4, "the empty line is an input too; a final line needs no newline");
    assert_eq!(v[0]["input"], "urn:ab:c");
    assert_eq!(v[0]["valid"], true);
    assert_eq!(v[1]["input"], "urn:ab:\u{FFFD}\u{FFFD}");
    assert_eq!(v[1]["error"]["kind"], "non-ascii");
    assert_eq!(v[1]["error"]["offset"], 7);
    assert_eq!(v[2]["error"]["kind"], "not-urn");
    assert_eq!(v[3]["nid_class"], "experimental");
}

/// A UTF-8 byte-order mark (Notepad's "UTF-8 with BOM") before the first
/// line is not part of it; before a later line it is, and the line is not
/// a URN (RFC 8141 §2: ASCII only).
#[test]
fn stdin_with_a_utf8_byte_order_mark() {
    let o = urnscan(&["check", "--format", "jsonl"], b"\xEF\xBB\xBFURN:ISBN:0451450523\r\n\xEF\xBB\xBFurn:ab:c\n");
    assert_eq!(o.status.code(), Some(1));
    let v: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(
        (&v[0]["input"], &v[0]["valid"], &v[0]["key"]),
        (&"URN:ISBN:0451450523".into(), &true.into(), &"urn:isbn:0451450523".into())
    );
    assert_eq!((&v[1]["input"], &v[1]["error"]["kind"]), (&"\u{feff}urn:ab:c".into(), &"non-ascii".into()));
    assert_eq!(v.len(), 2);
    let o = urnscan(&["check"], b"\xEF\xBB\xBFurn:ab:c\n");
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn rfc2141_mode() {
    let o = urnscan(&["check", "--rfc2141", "--format", "jsonl", "urn:a:b?c#d", "urn:urn:x", "urn:ab:~"], b"");
    let v: Vec<serde_json::Value> = stdout(&o).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(v[0]["nss"], "b?c#d");
    assert!(v[0]["q"].is_null() && v[0]["f"].is_null());
    assert_eq!(v[1]["error"]["kind"], "nid-reserved-urn");
    assert_eq!(v[2]["error"]["kind"], "nss-bad-char");
}

#[test]
fn text_shows_parts_or_a_caret() {
    // Every part, by RFC 8141 §2: NID "Example", NSS "a%2cb", r "r", q "q",
    // f "f"; the key with the NID lower-cased and the %-hex upper-cased
    // (§3), no components; "example" is a formal NID (RFC 6963).
    let o = urnscan(&["check", "urn:Example:a%2cb?+r?=q#f"], b"");
    assert_eq!(
        stdout(&o),
        "urn:Example:a%2cb?+r?=q#f\tvalid\tnid=Example nss=a%2cb r=r q=q f=f class=formal key=urn:example:a%2Cb\n"
    );
    let o = urnscan(&["check", "urn:IETF:rfc:8141?+res", "urn:ab:c d"], b"");
    let out = stdout(&o);
    let mut lines = out.lines();
    let valid = lines.next().unwrap();
    assert!(valid.starts_with("urn:IETF:rfc:8141?+res\tvalid\t"), "{valid}");
    assert!(valid.contains("nid=IETF") && valid.contains("r=res") && valid.contains("key=urn:ietf:rfc:8141"));
    assert!(valid.contains("class=formal"));
    let invalid = lines.next().unwrap();
    assert!(invalid.starts_with("urn:ab:c d\tinvalid\tnss-bad-char at byte 8"), "{invalid}");
    let echo = lines.next().unwrap();
    let caret = lines.next().unwrap();
    assert_eq!(caret.find('^').unwrap() - echo.find('u').unwrap(), 8);
}

#[cfg(unix)]
#[test]
fn non_utf8_arguments_are_judged() {
    use std::os::unix::ffi::OsStrExt;
    let arg = std::ffi::OsStr::from_bytes(b"urn:ab:\xe9");
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan")).args(["check".as_ref(), arg]).output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("non-ascii at byte 7"));
}

/// Lines on stdin are judged by several threads a piece at a time; what
/// comes out must be what the arguments (judged one after the other on one
/// thread) give, in input order, whatever the thread count and block size.
#[test]
fn stdin_lines_come_out_in_order_as_their_arguments_would() {
    let mut lines = Vec::new();
    for i in 0..3_000 {
        lines.push(match i % 4 {
            0 => format!("urn:ab{i}:x{i}?=q#f"), // valid (RFC 8141: NID of 2-32, NSS pchar)
            1 => format!("urn:a:{i}"),           // NID of one character
            2 => format!("URN:ISBN:{}", "0".repeat(i % 500 + 1)), // valid, of many lengths
            _ => format!("urn:x-y:{i}%{}g", i % 10), // a % not followed by two hex digits
        });
    }
    let stdin = lines.join("\n");
    let args: Vec<&str> = lines.iter().map(String::as_str).collect();
    for format in ["text", "jsonl"] {
        let by_args = urnscan(&[&["check", "--format", format][..], &args].concat(), b"");
        assert_eq!(by_args.status.code(), Some(1));
        let shown = stdout(&by_args);
        // A text verdict of an invalid URN goes on over lines that start with a tab.
        assert_eq!(shown.lines().filter(|l| !l.starts_with('\t')).count(), lines.len());
        assert_eq!(shown.lines().filter(|l| l.contains("\tvalid\t") || l.contains("\"valid\":true")).count(), 1_500);
        for j in ["1", "2", "3"] {
            for block in [None, Some("1"), Some("1000")] {
                let mut cmd = vec!["check", "--format", format, "-j", j];
                cmd.extend(block.iter().flat_map(|b| ["--block-size", b]));
                let by_stdin = urnscan(&cmd, stdin.as_bytes());
                assert_eq!(by_stdin.status.code(), Some(1), "{cmd:?}");
                assert!(by_stdin.stdout == by_args.stdout, "{cmd:?}: not the arguments' output");
            }
        }
    }
}

/// `--invalid` shows the invalid inputs alone, in input order, each as
/// without the option; the exit status is the same.
#[test]
fn invalid_shows_only_the_invalid_inputs() {
    // Invalid by RFC 8141 §2: a NID of one character; a space in the NSS.
    let inputs = ["urn:ietf:rfc:8141", "urn:a:b", "URN:ISBN:0451450523", "urn:ab:c d"];
    for format in ["text", "jsonl"] {
        let all = urnscan(&[&["check", "--format", format][..], &inputs].concat(), b"");
        let only = urnscan(&[&["check", "--invalid", "--format", format][..], &inputs].concat(), b"");
        assert_eq!(only.status.code(), Some(1));
        let wrong = urnscan(&["check", "--format", format, "urn:a:b", "urn:ab:c d"], b"");
        assert_eq!(stdout(&only), stdout(&wrong), "{format}");
        assert!(
            stdout(&all).starts_with("urn:ietf:rfc:8141\t")
                || stdout(&all).starts_with("{\"input\":\"urn:ietf:rfc:8141\"")
        );
        let stdin = inputs.join("\n");
        for j in ["1", "2"] {
            let by_stdin =
                urnscan(&["check", "--invalid", "--format", format, "-j", j, "--block-size", "9"], stdin.as_bytes());
            assert_eq!(by_stdin.status.code(), Some(1));
            assert_eq!(stdout(&by_stdin), stdout(&wrong), "{format}, -j {j}");
        }
    }
    let valid = urnscan(&["check", "--invalid", "urn:ietf:rfc:8141", "URN:ISBN:0451450523"], b"");
    assert_eq!(valid.status.code(), Some(0));
    assert!(valid.stdout.is_empty());
}

#[test]
fn control_characters_of_an_invalid_input_never_reach_the_terminal() {
    // An input is shown to a person: an escape sequence in it (here one
    // that would colour the terminal red), a NUL, a DEL or a C1 control
    // (U+009B is CSI on some terminals) is shown as a space, in the input
    // column and in the picture under the message alike.
    let input = b"urn:ab:c\x1b[31mRED\x00\x7f\xc2\x9bx\n";
    for args in [&["check"][..], &["check", "--invalid"], &["check", "-j1"]] {
        let o = urnscan(args, input);
        assert_eq!(o.status.code(), Some(1), "{args:?}");
        let out = stdout(&o);
        assert!(out.starts_with("urn:ab:c [31mRED   x\tinvalid\t"), "{args:?}: {out:?}");
        assert!(!out.chars().any(|c| c.is_control() && c != '\t' && c != '\n'), "{args:?}: {out:?}");
    }
}

#[test]
fn a_lone_dash_is_stdin() {
    // As for `scan` and `dedup`; "-" is no URN (RFC 8141 §2: "urn:" first).
    let stdin = b"urn:ab:c\nurn:a:b\n";
    let dash = urnscan(&["check", "-"], stdin);
    let none = urnscan(&["check"], stdin);
    assert_eq!(dash.status.code(), Some(1));
    assert_eq!(stdout(&dash), stdout(&none));
    // A NID is 2 to 32 characters (RFC 8141 §2).
    assert!(stdout(&dash).starts_with("urn:ab:c\tvalid\t"), "{}", stdout(&dash));
    assert!(stdout(&dash).contains("\nurn:a:b\tinvalid\tnid-too-short"), "{}", stdout(&dash));
    // Among other arguments it is an argument like them.
    let mixed = urnscan(&["check", "-", "urn:ab:c"], stdin);
    assert!(stdout(&mixed).starts_with("-\tinvalid\tnot-urn"), "{}", stdout(&mixed));
}

/// Lines on a pipe are judged as they are written (a user typing URNs, a
/// log followed with `tail -f`): each verdict comes while the writer keeps
/// the pipe open, a line cut off by a pause is judged once it is whole, and
/// the exit status still covers every line.
#[test]
fn stdin_lines_are_judged_as_they_are_written() {
    use std::io::Write;
    use std::time::Duration;
    let (mut child, lines) = common::piped(&["check", "--format", "jsonl"]);
    let mut stdin = child.stdin.take().unwrap();
    let next = || lines.recv_timeout(Duration::from_secs(20)).ok().map(|line| serde_json::from_str(&line).unwrap());
    stdin.write_all(b"URN:ISBN:0451450523\n").unwrap();
    let verdict: Option<serde_json::Value> = next();
    assert_eq!(
        verdict.map(|v| (v["input"].clone(), v["valid"].clone())),
        Some(("URN:ISBN:0451450523".into(), true.into()))
    );
    stdin.write_all(b"urn:a").unwrap();
    // Half a line: no verdict yet.
    assert!(lines.recv_timeout(Duration::from_millis(400)).is_err());
    stdin.write_all(b":b\n").unwrap();
    let verdict: Option<serde_json::Value> = next();
    assert_eq!(
        verdict.map(|v| (v["input"].clone(), v["error"]["kind"].clone())),
        Some(("urn:a:b".into(), "nid-too-short".into()))
    );
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(1), "one line was invalid");
    assert!(lines.recv().is_err(), "nothing more");
}
