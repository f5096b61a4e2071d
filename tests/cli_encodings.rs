//! UTF-16 inputs (Windows exports), run as a user would: `scan`, `dedup`
//! and `check` find the URNs of a UTF-16 file with a byte-order mark as
//! those of its text in UTF-8, offsets counted in the UTF-8 text without
//! the mark; `--encoding` names the byte order of a file without a mark,
//! or turns transcoding off.
//!
//! Expected values are worked out by hand from the text each test writes
//! (the offsets in the comments), or are the output of the same text in
//! UTF-8, which the other test files check against planted URNs.

use std::fs;
use std::path::Path;
use std::process::Command;

mod common;
use common::{gzip, utf16le};

/// What a run of the binary gave: exit status, stdout, stderr.
struct Run {
    code: Option<i32>,
    out: String,
    err: String,
}

fn run(args: &[&str], stdin: &[u8]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_urnscan"));
    cmd.args(args);
    let o = common::run_fed(cmd, stdin);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Run { code: o.status.code(), out: text(&o.stdout), err: text(&o.stderr) }
}

fn urnscan(args: &[&str]) -> Run {
    run(args, b"")
}

/// UTF-16BE of `text`, after the mark.
fn utf16be(text: &str) -> Vec<u8> {
    [0xfe, 0xff].into_iter().chain(text.encode_utf16().flat_map(u16::to_be_bytes)).collect()
}

fn write(dir: &Path, name: &str, data: &[u8]) -> String {
    let path = dir.join(name);
    fs::write(&path, data).unwrap();
    path.to_str().unwrap().to_owned()
}

/// Two URNs after non-ASCII characters. In UTF-8: `café ` is 6 bytes (é
/// is 2), so the first URN is at 6; it is 19 bytes, then `\r\n` (27), `€`
/// (3 bytes, 30), a space and `<id>` (35): the second URN is at 35.
const TEXT: &str = "café urn:isbn:0451450523\r\n€ <id>URN:IETF:rfc:8141</id>\r\n";
const FOUND: &str = "6:urn:isbn:0451450523\n35:URN:IETF:rfc:8141\n";

#[test]
fn a_file_with_a_mark_is_scanned_as_its_text() {
    let dir = tempfile::tempdir().unwrap();
    let le = write(dir.path(), "le.xml", &utf16le(TEXT, true));
    let be = write(dir.path(), "be.xml", &utf16be(TEXT));
    for file in [&le, &be] {
        for mmap in ["auto", "always", "never"] {
            for threads in ["1", "2"] {
                let r = urnscan(&["scan", "--mmap", mmap, "-j", threads, file]);
                assert_eq!((r.code, r.out.as_str(), r.err.as_str()), (Some(0), FOUND, ""), "{file} --mmap {mmap}");
            }
        }
    }
    let r = urnscan(&["scan", "-n", &le]);
    assert_eq!(r.out, "1:6:urn:isbn:0451450523\n2:35:URN:IETF:rfc:8141\n");
    // Stdin, from the file and through a pipe.
    let r = run(&["scan"], &utf16be(TEXT));
    assert_eq!((r.code, r.out.as_str()), (Some(0), FOUND), "a pipe");
    let r = Command::new(env!("CARGO_BIN_EXE_urnscan")).arg("scan").stdin(fs::File::open(&le).unwrap()).output();
    assert_eq!(String::from_utf8_lossy(&r.unwrap().stdout), FOUND, "stdin from the file");
    // In a directory beside an ASCII file, and decompressed by -z.
    write(dir.path(), "z.gz", &gzip(&utf16le(TEXT, true)));
    let r = urnscan(&["scan", "-z", "-I", dir.path().to_str().unwrap()]);
    assert_eq!(r.out, FOUND.repeat(3));
}

#[test]
fn the_mark_or_the_option_decides() {
    let dir = tempfile::tempdir().unwrap();
    let marked = write(dir.path(), "marked.xml", &utf16le(TEXT, true));
    let unmarked = write(dir.path(), "unmarked.xml", &utf16le(TEXT, false));
    // Without a mark nothing is guessed: the bytes are `u\0r\0n\0:\0`.
    let r = urnscan(&["scan", &unmarked]);
    assert_eq!((r.code, r.out.as_str()), (Some(1), ""));
    for (args, file) in [
        (&["-E", "utf-16le"][..], &unmarked),
        (&["--encoding", "utf16le"], &unmarked),
        // A mark, when there is one, wins over the option.
        (&["-E", "utf-16be"], &marked),
    ] {
        let r = urnscan(&[&["scan"], args, &[file.as_str()]].concat());
        assert_eq!((r.code, r.out.as_str()), (Some(0), FOUND), "{args:?}");
    }
    // A named order read off text that is not UTF-16 garbles it: no URN.
    let ascii = write(dir.path(), "ascii.txt", TEXT.as_bytes());
    assert_eq!(urnscan(&["scan", "-E", "utf-16le", &ascii]).code, Some(1));
    // `none` reads the bytes as they are: a binary file without URNs.
    let r = urnscan(&["scan", "-E", "none", "--stats", "--format", "json", &marked]);
    assert!(r.out.contains(r#""binary_files":1"#) && r.out.contains(r#""valid":0"#), "{}", r.out);
    // Transcoded, the text holds no NUL: not binary, not skipped.
    let r = urnscan(&["scan", "--binary", "skip", "--stats", "--format", "json", &marked]);
    assert!(r.out.contains(r#""binary_files":0"#) && r.out.contains(r#""valid":2"#), "{}", r.out);
}

/// The hint (a line of stderr) for `n` inputs, `names` as the hint shows
/// them, that look like UTF-16 of byte `order` without a mark: it names
/// the `-E` value (`flag`) that reads them as text.
fn hint(n: &str, names: &str, order: &str, flag: &str) -> String {
    let (look, was, them) = if n == "1" { ("looks", "was", "it") } else { ("look", "were", "them") };
    let inputs = if n == "1" { "input" } else { "inputs" };
    format!(
        "hint: {n} {inputs} ({names}) {look} like {order} text without a byte-order mark and {was} not \
         transcoded: add -E {flag} to read {them} as text\n"
    )
}

/// UTF-16 without a mark is read as its bytes, in which `urn:` is not
/// found: the run ends with a hint naming the files and the `-E` value,
/// from a file, a directory, a pipe and `dedup` alike; not with `-E none`
/// or `-q`, and not for text or other binary files.
#[test]
fn utf16_without_a_mark_gets_a_hint() {
    let dir = tempfile::tempdir().unwrap();
    let le = write(dir.path(), "le.csv", &utf16le(TEXT, false));
    let be_bytes: Vec<u8> = TEXT.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let be = write(dir.path(), "be.csv", &be_bytes);
    let r = urnscan(&["scan", &le]);
    assert_eq!((r.code, r.out.as_str(), r.err), (Some(1), "", hint("1", &le, "UTF-16LE", "utf-16le")));
    let r = urnscan(&["scan", "--mmap", "never", &be]);
    assert_eq!(r.err, hint("1", &be, "UTF-16BE", "utf-16be"));
    let r = run(&["scan", "--binary", "skip"], &utf16le(TEXT, false));
    assert_eq!(r.err, hint("1", "stdin", "UTF-16LE", "utf-16le"), "a pipe, skipped as binary");
    let r = run(&["scan"], &utf16le(TEXT, false));
    assert_eq!(r.err, hint("1", "stdin", "UTF-16LE", "utf-16le"), "a pipe read live");
    for quiet in [&["scan", "-E", "none"][..], &["scan", "-q"]] {
        let r = urnscan(&[quiet, &[le.as_str()]].concat());
        assert_eq!(r.err, "", "{quiet:?}");
    }
    // Text, binary bytes that are not UTF-16, and UTF-16 with its mark: no hint.
    let ascii = write(dir.path(), "ascii.txt", TEXT.as_bytes());
    let random: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    let binary = write(dir.path(), "random.bin", &random);
    let marked = write(dir.path(), "marked.csv", &utf16le(TEXT, true));
    let r = urnscan(&["scan", &ascii, &binary, &marked]);
    assert_eq!((r.code, r.err.as_str()), (Some(0), ""));
    // A directory of four: three named, in name order; one hint per byte order.
    let many = dir.path().join("many");
    fs::create_dir(&many).unwrap();
    for name in ["a", "b", "c", "d"] {
        write(&many, name, &utf16le(TEXT, false));
    }
    write(&many, "e", &be_bytes);
    let name = |n: &str| many.join(n).to_str().unwrap().to_owned();
    let r = urnscan(&["scan", many.to_str().unwrap()]);
    let names = format!("{}, {}, {} and 1 more", name("a"), name("b"), name("c"));
    let want = hint("4", &names, "UTF-16LE", "utf-16le") + &hint("1", &name("e"), "UTF-16BE", "utf-16be");
    assert_eq!(r.err, want);
    // dedup: the hint instead of the one for running text.
    let r = urnscan(&["dedup", &le]);
    assert!(r.err.ends_with(&hint("1", &le, "UTF-16LE", "utf-16le")), "{}", r.err);
    assert!(!r.err.contains("urnscan scan --unique"), "{}", r.err);
}

/// A large file (past the size decoded whole, 4 MiB) gives the same lines
/// as its text in UTF-8, at both thread counts, mapped or streamed.
#[test]
fn a_large_utf16_file_gives_what_its_utf8_text_gives() {
    let mut text = String::new();
    for i in 0..80_000 {
        text.push_str(&format!("line {i} née urn:example:é{i} urn:ex:a-{i}%C3%A9 (urn:isbn:{i})\n"));
    }
    let dir = tempfile::tempdir().unwrap();
    let utf8 = write(dir.path(), "utf8.txt", text.as_bytes());
    let utf16 = write(dir.path(), "utf16.txt", &utf16be(&text));
    assert!(text.len() > 4 << 20);
    let want = urnscan(&["scan", "-n", "-I", &utf8]).out;
    assert_eq!(want.lines().count(), 160_000, "two URNs a line: `urn:example:` is followed by é");
    for threads in ["1", "2"] {
        for mmap in ["auto", "never"] {
            let got = urnscan(&["scan", "-n", "-I", "-j", threads, "--mmap", mmap, &utf16]);
            assert!(got.out == want, "-j{threads} --mmap {mmap}");
        }
    }
    let unique = |file: &str| common::without_timing(&urnscan(&["scan", "-u", "--stats", file]).out);
    assert_eq!(unique(&utf16), unique(&utf8));
}

#[test]
fn dedup_and_check_read_utf16_lines() {
    // Lines 1 and 2 are one class (the NID's case does not count, RFC 8141
    // §3.1); line 4 is no URN.
    let lines = "urn:isbn:0451450523\r\nURN:ISBN:0451450523\r\nurn:ietf:rfc:8141\r\nnot a urn\r\n";
    let dir = tempfile::tempdir().unwrap();
    let file = write(dir.path(), "urns.txt", &utf16le(lines, true));
    let r = urnscan(&["dedup", &file]);
    assert_eq!(r.out, "urn:isbn:0451450523\nurn:ietf:rfc:8141\n");
    assert!(r.err.contains(":4: not-urn") && r.err.contains("distinct     2"), "{}", r.err);
    let r = run(&["dedup", "--stats", "--format", "csv"], &utf16be(lines));
    assert_eq!(r.out, "nid,class,occurrences,unique\nisbn,formal,2,1\nietf,formal,1,1\n");
    let r = run(&["check", "--format", "jsonl"], &utf16le(lines, true));
    assert_eq!(r.code, Some(1));
    let valid: Vec<bool> = r.out.lines().map(|l| l.contains(r#""valid":true"#)).collect();
    assert_eq!(valid, [true, true, true, false]);
    let r = run(&["check", "-E", "none"], &utf16le(lines, true));
    assert_eq!(r.out.lines().filter(|l| l.contains("\tvalid\t")).count(), 0);
}

/// `check` reads lines on stdin as `dedup` does, and ends as its `-E`
/// help says, with the hint naming stdin when the lines look like UTF-16
/// without a mark (read as bytes, each is invalid); not when the byte
/// order is named, the text has its mark, or `-E none` asks for bytes.
#[test]
fn check_ends_with_the_hint_for_utf16_without_a_mark() {
    let lines = "urn:isbn:0451450523\r\nurn:ietf:rfc:8141\r\n";
    let le = utf16le(lines, false);
    let be: Vec<u8> = lines.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let r = run(&["check"], &le);
    assert_eq!((r.code, r.err), (Some(1), hint("1", "stdin", "UTF-16LE", "utf-16le")));
    let r = run(&["check", "--format", "jsonl"], &be);
    assert_eq!((r.code, r.err), (Some(1), hint("1", "stdin", "UTF-16BE", "utf-16be")));
    let r = run(&["check", "-E", "utf-16le"], &le);
    assert_eq!((r.code, r.err.as_str()), (Some(0), ""), "the byte order named: both lines are valid");
    let r = run(&["check"], &utf16le(lines, true));
    assert_eq!((r.code, r.err.as_str()), (Some(0), ""), "a mark: transcoded");
    let r = run(&["check", "-E", "none"], &le);
    assert_eq!((r.code, r.err.as_str()), (Some(1), ""), "bytes asked for");
    // Arguments are text already: -E, which says how stdin is encoded,
    // would change nothing, so it is refused ("-" alone is stdin).
    let r = run(&["check", "-E", "utf-16le", "urn:isbn:0451450523"], b"");
    assert_eq!((r.code, r.out.as_str()), (Some(2), ""));
    assert!(r.err.contains("-E says how the lines of stdin are encoded"), "{}", r.err);
    let r = run(&["check", "-E", "utf-16le", "-"], &le);
    assert_eq!((r.code, r.err.as_str()), (Some(0), ""), "stdin named as -");
}

/// Broken UTF-16 is text with U+FFFD in it: no error, no panic, and the
/// URNs around it are found.
#[test]
fn broken_utf16_is_read_with_replacement_characters() {
    let mut bytes = utf16le("urn:ab:c ", true);
    bytes.extend_from_slice(&0xdc00u16.to_le_bytes()); // a lone low surrogate
    bytes.extend_from_slice(&utf16le(" urn:de:f ", false)[..]);
    bytes.extend_from_slice(&0xd800u16.to_le_bytes()); // a lone high surrogate at the end
    bytes.push(b'x'); // and an odd byte
    let r = run(&["scan"], &bytes);
    // `urn:ab:c ` is 9 bytes, U+FFFD 3 and a space: the second URN is at 13.
    assert_eq!((r.code, r.out.as_str(), r.err.as_str()), (Some(0), "0:urn:ab:c\n13:urn:de:f\n", ""));
    let r = run(&["scan"], &[0xff, 0xfe]);
    assert_eq!((r.code, r.out.as_str(), r.err.as_str()), (Some(1), "", ""), "the mark alone");
}
