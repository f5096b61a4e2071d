//! Compressed and binary inputs, run as a user would: `scan -z` and
//! `dedup -z` against the plain text they were compressed from (compressed
//! here with flate2 and zstd), detection by magic bytes rather than names,
//! multi-member archives, corrupt archives, thread counts, the binary
//! rule (a NUL byte in the first 8 KiB) under every way of reading a file,
//! stdin redirected from a file, and the hint for archives read without
//! `-z`.
//!
//! Expected values come from the text each test builds: the offset of
//! every URN it plants is known before anything is run.

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::process::Command;

mod common;
use common::gzip;

/// What a run of the binary gave: exit status, stdout, stderr.
struct Run {
    code: Option<i32>,
    out: String,
    err: String,
}

/// Runs urnscan with `stdin` (from a temporary file) as its standard input.
fn urnscan_in(args: &[&str], stdin: &[u8]) -> Run {
    let mut file = tempfile::tempfile().unwrap();
    file.write_all(stdin).unwrap();
    file.seek(SeekFrom::Start(0)).unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan")).args(args).stdin(file).output().expect("run urnscan");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Run { code: o.status.code(), out: text(&o.stdout), err: text(&o.stderr) }
}

fn urnscan(args: &[&str]) -> Run {
    urnscan_in(args, b"")
}

fn zstd(data: &[u8]) -> Vec<u8> {
    zstd::encode_all(data, 3).unwrap()
}

/// Text with `n` planted URNs `urn:example:<tag>-<i>`, each between
/// spaces on a line of filler whose length varies; the URNs with their
/// offsets in the text.
fn corpus(tag: &str, n: usize, filler: usize) -> (Vec<u8>, Vec<(usize, String)>) {
    let mut text = Vec::new();
    let mut planted = Vec::new();
    for i in 0..n {
        let pad = filler + (i * 7919) % (filler + 1);
        text.resize(text.len() + pad, b'a' + (i % 26) as u8);
        text.push(b' ');
        let urn = format!("urn:example:{tag}-{i}");
        planted.push((text.len(), urn.clone()));
        text.extend_from_slice(urn.as_bytes());
        text.extend_from_slice(b" end\n");
    }
    (text, planted)
}

/// `offset:urn` lines, as `scan` prints a single input.
fn lines(planted: &[(usize, String)]) -> String {
    planted.iter().map(|(o, u)| format!("{o}:{u}\n")).collect()
}

/// `path:offset:urn` lines, as `scan` prints several inputs.
fn lines_with_path(path: &Path, planted: &[(usize, String)]) -> String {
    planted.iter().map(|(o, u)| format!("{}:{o}:{u}\n", path.display())).collect()
}

fn write(dir: &Path, name: &str, data: &[u8]) -> String {
    let path = dir.join(name);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, data).unwrap();
    path.to_str().unwrap().to_owned()
}

#[test]
fn decompressed_offsets_and_urns_equal_the_plain_text() {
    let dir = tempfile::tempdir().unwrap();
    let (text, planted) = corpus("p", 200, 300);
    let plain = write(dir.path(), "plain.txt", &text);
    let expected = lines(&planted);
    assert_eq!(urnscan(&["scan", &plain]).out, expected, "the plain text itself");
    for (name, data) in [("a.gz", gzip(&text)), ("a.zst", zstd(&text))] {
        let path = write(dir.path(), name, &data);
        let o = urnscan(&["scan", "-z", &path]);
        assert_eq!(o.code, Some(0), "{name}: {}", o.err);
        assert_eq!(o.out, expected, "{name}");
        let o = urnscan_in(&["scan", "--decompress", "-"], &data);
        assert_eq!(o.out, expected, "{name} on stdin");
        // Without -z nothing is decoded: the planted URNs are not in the compressed bytes.
        let o = urnscan(&["scan", &path]);
        assert_ne!(o.out, expected, "{name} without -z");
    }
}

#[test]
fn archives_in_directories_are_decoded() {
    let dir = tempfile::tempdir().unwrap();
    let (a, pa) = corpus("a", 20, 50);
    let (b, pb) = corpus("b", 30, 40);
    let (c, pc) = corpus("c", 10, 500);
    let (d, pd) = corpus("d", 5, 5);
    // The walk goes in name order: a.txt, b.gz, c.zst, sub/d.gz.
    write(dir.path(), "a.txt", &a);
    write(dir.path(), "b.gz", &gzip(&b));
    write(dir.path(), "c.zst", &zstd(&c));
    write(dir.path(), "sub/d.gz", &gzip(&d));
    let root = dir.path();
    let expected = [
        lines_with_path(&root.join("a.txt"), &pa),
        lines_with_path(&root.join("b.gz"), &pb),
        lines_with_path(&root.join("c.zst"), &pc),
        lines_with_path(&root.join("sub/d.gz"), &pd),
    ]
    .concat();
    let o = urnscan(&["scan", "-z", root.to_str().unwrap()]);
    assert_eq!(o.code, Some(0), "{}", o.err);
    assert_eq!(o.out, expected);
}

#[test]
fn members_and_frames_are_one_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (text, planted) = corpus("m", 40, 100);
    // Split inside a URN: it is only found if the parts are joined.
    let (_, straddling) = planted[20].clone();
    let cut = planted[20].0 + 7;
    assert!(straddling.len() > 7);
    let gz = [gzip(&text[..cut]), gzip(&text[cut..])].concat();
    let zst = [zstd(&text[..cut]), zstd(&text[cut..])].concat();
    for (name, data) in [("multi.gz", gz), ("multi.zst", zst)] {
        let path = write(dir.path(), name, &data);
        let o = urnscan(&["scan", "-z", &path]);
        assert_eq!(o.code, Some(0), "{name}: {}", o.err);
        assert_eq!(o.out, lines(&planted), "{name}");
    }
}

#[test]
fn magic_bytes_decide_not_names() {
    let dir = tempfile::tempdir().unwrap();
    let (text, planted) = corpus("n", 15, 60);
    let text_named_gz = write(dir.path(), "text.gz", &text);
    let gzip_named_txt = write(dir.path(), "gzip.txt", &gzip(&text));
    let zstd_named_log = write(dir.path(), "zstd.log", &zstd(&text));
    for path in [&text_named_gz, &gzip_named_txt, &zstd_named_log] {
        let o = urnscan(&["scan", "-z", path]);
        assert_eq!(o.out, lines(&planted), "{path}");
    }
}

/// What a decoder of its own makes of `data` before it fails.
fn decodable_prefix(mut decoder: impl Read) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    while let Ok(n) = decoder.read(&mut buf) {
        if n == 0 {
            break;
        }
        out.extend_from_slice(&buf[..n]);
    }
    out
}

/// `err` is one line saying that `bad` is a corrupt `codec` archive (in
/// the decoder's words), how to check it, and that it was cut short there
/// while the other inputs were read.
fn assert_corrupt(err: &str, bad: &str, codec: &str) {
    let failed = format!("urnscan: {bad}: {codec} data is corrupt or truncated: ");
    let hint = format!("(check the archive with `{codec} -t`)");
    let fate = "cut short there (what came before it was read), the other inputs were read";
    assert!(err.starts_with(&failed) && err.ends_with(&format!(" {hint}; {fate}\n")), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

#[test]
fn a_corrupt_archive_keeps_what_came_before_and_fails_alone() {
    let dir = tempfile::tempdir().unwrap();
    let (other, other_planted) = corpus("o", 10, 30);
    // Small archives are decoded whole in the file batch; a large one (over
    // 4 MiB before the cut) is decoded ahead on its own thread.
    for (count, filler) in [(3000, 200), (30_000, 300)] {
        let (text, planted) = corpus("k", count, filler);
        corrupt_cases(dir.path(), &text, &planted, &other, &other_planted);
    }
}

fn corrupt_cases(
    dir: &Path,
    text: &[u8],
    planted: &[(usize, String)],
    other: &[u8],
    other_planted: &[(usize, String)],
) {
    let gz = gzip(text);
    let zst = zstd(text);
    let cases = [("cut.gz", gz[..gz.len() / 2].to_vec(), "gzip"), ("cut.zst", zst[..zst.len() / 2].to_vec(), "zstd")];
    for (name, data, codec) in cases {
        let prefix = match codec {
            "gzip" => decodable_prefix(flate2::read::MultiGzDecoder::new(&data[..])),
            _ => decodable_prefix(zstd::stream::read::Decoder::new(&data[..]).unwrap()),
        };
        assert!(prefix.len() < text.len() && text.starts_with(&prefix), "{name}: the test's own decoding");
        if text.len() > 8 << 20 {
            assert!(prefix.len() > 4 << 20, "{name}: past the inline limit");
        }
        // The URNs whose text and following space were decoded.
        let before: Vec<(usize, String)> =
            planted.iter().filter(|(o, u)| o + u.len() < prefix.len()).cloned().collect();
        assert!(before.len() > 100, "{name}: the cut leaves URNs before it");
        let bad = write(dir, name, &data);
        let good = write(dir, &format!("z-{name}.txt"), other);
        for threads in ["1", "2"] {
            let o = urnscan(&["scan", "-z", "-j", threads, &bad, &good]);
            assert_eq!(o.code, Some(2), "{name}");
            assert_corrupt(&o.err, &bad, codec);
            let out = o.out;
            let expected_head = lines_with_path(Path::new(&bad), &before);
            assert!(out.starts_with(&expected_head), "{name}: every URN before the damage");
            let expected_tail = lines_with_path(Path::new(&good), other_planted);
            assert!(out.ends_with(&expected_tail), "{name}: the other file is scanned");
            // Nothing more: not a URN cut short by the damage.
            assert_eq!(out.len(), expected_head.len() + expected_tail.len(), "{name}");
        }
    }
}

#[test]
fn a_damaged_byte_is_an_error_for_that_file_only() {
    let dir = tempfile::tempdir().unwrap();
    let (text, _) = corpus("x", 500, 100);
    let mut gz = gzip(&text);
    let n = gz.len();
    gz[n - 6] ^= 0xff; // inside the CRC-32 of the trailer
    let bad = write(dir.path(), "bad.gz", &gz);
    let (other, other_planted) = corpus("o", 3, 10);
    let good = write(dir.path(), "good.txt", &other);
    let o = urnscan(&["scan", "-z", &bad, &good]);
    assert_eq!(o.code, Some(2));
    assert!(o.err.contains(&format!("urnscan: {bad}: gzip data is corrupt")), "{}", o.err);
    assert!(o.out.ends_with(&lines_with_path(Path::new(&good), &other_planted)));
}

#[test]
fn thread_counts_give_identical_output() {
    let dir = tempfile::tempdir().unwrap();
    let mut expected = String::new();
    // 5 MiB of text decodes past the inline limit and is decoded ahead on its own thread.
    let sizes = [(3usize, 20usize), (9000, 600), (40, 30), (1, 0), (700, 100)];
    for (i, &(n, filler)) in sizes.iter().enumerate() {
        let (text, planted) = corpus(&format!("t{i}"), n, filler);
        let (name, data) =
            if i % 2 == 0 { (format!("f{i}.gz"), gzip(&text)) } else { (format!("f{i}.zst"), zstd(&text)) };
        write(dir.path(), &name, &data);
        expected += &lines_with_path(&dir.path().join(&name), &planted);
    }
    let root = dir.path().to_str().unwrap();
    for threads in ["1", "2", "3"] {
        let o = urnscan(&["scan", "-z", "-j", threads, root]);
        assert_eq!(o.code, Some(0), "-j{threads}: {}", o.err);
        assert!(o.out == expected, "-j{threads}");
    }
    let big = fs::read(dir.path().join("f1.zst")).unwrap();
    let (text, planted) = corpus("t1", 9000, 600);
    assert!(text.len() > 4 << 20, "the large one is past the inline limit");
    let o = urnscan_in(&["scan", "-z", "-j2"], &big);
    assert!(o.out == lines(&planted), "stdin, decoded ahead");
}

/// Text of `len` bytes with a URN in it and a NUL at `nul` (if any).
fn with_nul(len: usize, nul: Option<usize>) -> Vec<u8> {
    let mut data = vec![b'x'; len];
    data[100..100 + 11].copy_from_slice(b" urn:ab:cd ");
    if let Some(at) = nul {
        data[at] = 0;
    }
    data
}

/// The `binary` row of `scan --stats` text, and `binary_files` of its JSON.
fn binary_counts(args: &[&str]) -> (u64, u64) {
    let text = urnscan(&[&["scan", "--stats"], args].concat()).out;
    let row = text.lines().find_map(|l| l.strip_prefix("binary ")).expect("a binary row");
    let json = urnscan(&[&["scan", "--stats", "--format", "json"], args].concat()).out;
    let json: serde_json::Value = serde_json::from_str(&json).unwrap();
    (row.trim().replace(',', "").parse().unwrap(), json["binary_files"].as_u64().unwrap())
}

#[test]
fn binary_is_a_nul_in_the_first_8_kib_however_the_file_is_read() {
    let dir = tempfile::tempdir().unwrap();
    // Over 1 MiB, so `--mmap never` streams them and `always` maps them.
    let len = (1 << 20) + 5000;
    let inside = write(dir.path(), "inside.bin", &with_nul(len, Some(8191)));
    let after = write(dir.path(), "after.txt", &with_nul(len, Some(8192)));
    let none = write(dir.path(), "none.txt", &with_nul(len, None));
    let small = write(dir.path(), "small.bin", &with_nul(200, Some(0)));
    for mmap in ["always", "never", "auto"] {
        for (path, binary) in [(&inside, 1), (&after, 0), (&none, 0), (&small, 1)] {
            assert_eq!(binary_counts(&["--mmap", mmap, path]), (binary, binary), "{path} --mmap {mmap}");
        }
        assert_eq!(binary_counts(&["--mmap", mmap, dir.path().to_str().unwrap()]), (2, 2), "--mmap {mmap}");
    }
    let o = urnscan_in(&["scan", "--stats", "--format", "json"], &with_nul(len, Some(8191)));
    let json: serde_json::Value = serde_json::from_str(&o.out).unwrap();
    assert_eq!(json["binary_files"], 1, "stdin is streamed");
    let o = urnscan_in(&["scan", "--stats", "--format", "json"], &with_nul(len, Some(8192)));
    let json: serde_json::Value = serde_json::from_str(&o.out).unwrap();
    assert_eq!(json["binary_files"], 0, "stdin, NUL past 8 KiB");
}

#[test]
fn binary_under_z_is_judged_on_the_decoded_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let inside = write(dir.path(), "inside.gz", &gzip(&with_nul(9000, Some(8191))));
    let after = write(dir.path(), "after.zst", &zstd(&with_nul(9000, Some(8192))));
    assert_eq!(binary_counts(&["-z", &inside]), (1, 1));
    assert_eq!(binary_counts(&["-z", &after]), (0, 0));
    // Undecoded, gzip's header has NUL bytes: binary like any compressed file.
    assert_eq!(binary_counts(&[&after, &inside]).0, 2);
}

#[test]
fn binary_skip_skips_without_error() {
    let dir = tempfile::tempdir().unwrap();
    let bin = write(dir.path(), "a.bin", &with_nul(20_000, Some(5)));
    let (text, planted) = corpus("s", 4, 10);
    let txt = write(dir.path(), "b.txt", &text);
    // Scanned by default: the URN in the binary file is found.
    let o = urnscan(&["scan", &bin, &txt]);
    assert_eq!(o.code, Some(0));
    assert!(o.out.starts_with(&format!("{bin}:101:urn:ab:cd\n")), "{}", o.out);
    for mmap in ["always", "never"] {
        let o = urnscan(&["scan", "--binary", "skip", "--mmap", mmap, &bin, &txt]);
        assert_eq!((o.code, o.err.as_str()), (Some(0), ""), "--mmap {mmap}");
        assert_eq!(o.out, lines_with_path(Path::new(&txt), &planted), "--mmap {mmap}");
    }
    let o = urnscan(&["scan", "--binary", "skip", &bin]);
    assert_eq!(o.code, Some(1), "nothing found, and no error");
    let o = urnscan(&["scan", "--binary", "skip", "--stats", "--format", "json", &bin, &txt]);
    let json: serde_json::Value = serde_json::from_str(&o.out).unwrap();
    assert_eq!((json["binary_files"].as_u64(), json["files"].as_u64()), (Some(1), Some(1)), "skipped, not scanned");
    assert_eq!(json["valid"].as_u64(), Some(planted.len() as u64));
}

/// One URN per line: `urn:ex:<tag>-<i>`, with every tenth repeated in upper case (the same class).
fn url_lines(tag: &str, n: usize) -> (Vec<u8>, Vec<String>) {
    let mut text = String::new();
    let mut firsts = Vec::new();
    for i in 0..n {
        let urn = format!("urn:ex:{tag}-{i}");
        text += &format!("{urn}\n");
        firsts.push(urn);
        if i % 10 == 0 {
            text += &format!("URN:EX:{tag}-{i}\n");
        }
    }
    (text.into_bytes(), firsts)
}

/// Archives read without `-z` (whose bytes show at most the URNs the
/// compressor left as literals) end a scan with a hint on stderr that
/// counts them and names the first three, whichever way they are read: a
/// small file whole, a large one streamed (`--mmap never`) or mapped, stdin
/// as a pipe or as a file; not with `-z`, not under `-q`, not for plain
/// text. `dedup` skips them, each with an error.
#[test]
fn archives_read_as_they_are_get_a_hint_to_use_z() {
    let dir = tempfile::tempdir().unwrap();
    let (text, _) = corpus("h", 20, 300);
    let gz = write(dir.path(), "a.log.gz", &gzip(&text));
    let zst = write(dir.path(), "b.log", &zstd(&text));
    let txt = write(dir.path(), "c.log", &text);
    // Over 1 MiB of compressed bytes: random bytes do not compress.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let noise: Vec<u8> = (0..3 << 19)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 56) as u8
        })
        .collect();
    let big = write(dir.path(), "big.gz", &gzip(&noise));
    assert!(fs::metadata(&big).unwrap().len() > 1 << 20);
    let one = |name: &str| {
        format!(
            "hint: 1 input ({name}) starts with a gzip or zstd header and was not decompressed: add -z to decompress it\n"
        )
    };
    let many = |n: usize, names: &str| {
        format!("hint: {n} inputs ({names}) start with a gzip or zstd header and were not decompressed: add -z to decompress them\n")
    };
    let two = many(2, &format!("{gz}, {zst}"));
    for mmap in ["never", "always"] {
        assert_eq!(urnscan(&["scan", "--mmap", mmap, &big]).err, one(&big), "--mmap {mmap}");
    }
    // Skipped as binary (a NUL in its first 8 KiB), it was not decompressed either.
    let o = urnscan(&["scan", "--binary", "skip", "--stats", "--format", "json", &big]);
    let stats: serde_json::Value = serde_json::from_str(&o.out).unwrap();
    assert_eq!((&stats["files"], &stats["binary_files"], o.err), (&0.into(), &1.into(), one(&big)));
    let o = urnscan(&["scan", &gz, &txt, &zst]);
    assert_eq!((o.code, o.err.as_str()), (Some(0), two.as_str()), "the text's URNs are found");
    // `--stats` counts them too: a `compressed` row when there are any,
    // `compressed_files` in JSON always.
    let row = |args: &[&str]| {
        let out = urnscan(&[&["scan", "--stats"], args].concat()).out;
        out.lines().find_map(|l| l.strip_prefix("compressed ").map(|n| n.trim().to_owned()))
    };
    assert_eq!((row(&[&gz, &txt, &zst]), row(&[&txt]), row(&["-z", &gz])), (Some("2".into()), None, None));
    let json = |args: &[&str]| {
        let out = urnscan(&[&["scan", "--stats", "--format", "json"], args].concat()).out;
        serde_json::from_str::<serde_json::Value>(&out).unwrap()["compressed_files"].as_u64()
    };
    assert_eq!((json(&[&gz, &txt, &zst]), json(&[&txt]), json(&["-z", &gz])), (Some(2), Some(0), Some(0)));
    assert_eq!(urnscan(&["scan", "-z", &gz, &txt, &zst]).err, "");
    assert_eq!(urnscan(&["scan", "-q", &gz]).err, "");
    assert_eq!(urnscan(&["scan", &txt]).err, "");
    assert_eq!(urnscan_in(&["scan"], &gzip(&text)).err, one("stdin"), "stdin from a file");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_urnscan"));
    cmd.args(["scan", "-c"]);
    let o = common::run_fed(cmd, &zstd(&text));
    assert_eq!(String::from_utf8_lossy(&o.stderr), one("stdin"), "a pipe");
    // `dedup` reads lines, which compressed bytes cannot be: it skips each
    // archive as it comes, with the error of an input it cannot read
    // (status 2) and no reject for its bytes, and reads the others.
    let skipped = |name: &str, codec: &str| {
        format!(
            "urnscan: {name}: starts with a {codec} header and -z was not given: add -z to decompress it; skipped, \
             the other inputs were read\n"
        )
    };
    let list = write(dir.path(), "urns.txt", b"urn:ab:x\n");
    let o = urnscan(&["dedup", &gz, &list, &zst]);
    assert_eq!((o.code, o.out.as_str()), (Some(2), "urn:ab:x\n"));
    assert!(o.err.starts_with(&(skipped(&gz, "gzip") + &skipped(&zst, "zstd"))), "{}", o.err);
    assert!(!o.err.contains("not-urn") && !o.err.contains("hint"), "{}", o.err);
    let o = urnscan_in(&["dedup", "--stats", "--format", "json"], &gzip(&text));
    let stats: serde_json::Value = serde_json::from_str(&o.out).unwrap();
    assert_eq!((o.code, &stats["compressed_files"], &stats["unreadable_files"]), (Some(2), &1.into(), &1.into()));
    assert_eq!(urnscan(&["dedup", "-z", &gz, &zst]).code, Some(0));
    // Under --binary skip an archive (its header holds a NUL) is skipped
    // as binary files are, with the hint, as scan does.
    let o = urnscan(&["dedup", "--binary", "skip", &gz]);
    assert_eq!((o.code, o.err.ends_with(&one(&gz))), (Some(0), true), "{}", o.err);
    // Of a directory, the first three in walking order, and how many more.
    let archives = dir.path().join("archives");
    fs::create_dir(&archives).unwrap();
    for name in ["d.gz", "a.gz", "c.zst", "b.gz"] {
        write(&archives, name, &gzip(b"urn:ab:x\n"));
    }
    let path = |name: &str| archives.join(name).to_string_lossy().into_owned();
    let names = format!("{}, {}, {} and 1 more", path("a.gz"), path("b.gz"), path("c.zst"));
    let dir_arg = archives.to_string_lossy().into_owned();
    assert_eq!(urnscan(&["scan", "-c", &dir_arg]).err, many(4, &names));
    let o = urnscan(&["dedup", &dir_arg]);
    assert_eq!((o.code, o.err.matches("add -z to decompress it; skipped").count()), (Some(2), 4), "{}", o.err);
}

#[test]
fn dedup_decodes_and_skips_binary() {
    let dir = tempfile::tempdir().unwrap();
    let (a, fa) = url_lines("a", 500);
    let (b, fb) = url_lines("b", 300);
    let (c, fc) = url_lines("c", 20);
    let gz = write(dir.path(), "a.gz", &gzip(&a));
    let zst = write(dir.path(), "b.txt", &zstd(&b));
    let txt = write(dir.path(), "c.txt", &c);
    let expected: String = [fa, fb, fc].concat().iter().map(|u| format!("{u}\n")).collect();
    for threads in ["1", "2"] {
        let o = urnscan(&["dedup", "-z", "-j", threads, &gz, &zst, &txt]);
        assert_eq!(o.code, Some(0), "{}", o.err);
        assert_eq!(o.out, expected, "-j{threads}");
        assert!(!o.err.contains("binary"), "{}", o.err);
    }
    let o = urnscan_in(&["dedup", "--decompress"], &gzip(&a));
    assert_eq!(o.out.lines().count(), 500, "stdin");

    let mut bin = b"urn:ex:bin-1\n\0\n".to_vec();
    bin.extend_from_slice(&c);
    let bin = write(dir.path(), "d.bin", &bin);
    let o = urnscan(&["dedup", "--binary", "skip", &txt, &bin]);
    assert_eq!(o.code, Some(0), "{}", o.err);
    assert!(!o.out.contains("urn:ex:bin-1"), "the binary file is skipped");
    let summary = o.err;
    assert!(summary.lines().any(|l| l.starts_with("binary") && l.contains('1') && l.contains("skipped")), "{summary}");
    let o = urnscan(&["dedup", &txt, &bin]);
    assert!(o.out.contains("urn:ex:bin-1\n"), "scanned by default");
    assert!(o.err.lines().any(|l| l.starts_with("binary")), "{}", o.err);
}

#[test]
fn dedup_keeps_the_lines_before_a_corrupt_archive() {
    let dir = tempfile::tempdir().unwrap();
    let (a, fa) = url_lines("a", 20_000);
    let gz = gzip(&a);
    let cut = gz[..gz.len() / 2].to_vec();
    let prefix = decodable_prefix(flate2::read::MultiGzDecoder::new(&cut[..]));
    let whole_lines = prefix.iter().filter(|&&b| b == b'\n').count();
    assert!(whole_lines > 1000);
    let bad = write(dir.path(), "bad.gz", &cut);
    let (c, fc) = url_lines("c", 5);
    let txt = write(dir.path(), "c.txt", &c);
    let o = urnscan(&["dedup", "-z", "-j2", &bad, &txt]);
    assert_eq!(o.code, Some(2));
    let error = o.err.lines().find(|l| l.starts_with("urnscan: ")).unwrap_or_default();
    assert_corrupt(&format!("{error}\n"), &bad, "gzip");
    let out = o.out;
    // The classes of the whole lines decoded before the damage come first, then c.txt's.
    let complete = String::from_utf8(prefix[..prefix.iter().rposition(|&b| b == b'\n').unwrap()].to_vec()).unwrap();
    let last = complete.lines().last().unwrap().to_ascii_lowercase();
    let upto = fa.iter().position(|u| *u == last).unwrap();
    let head: String = fa[..=upto].iter().map(|u| format!("{u}\n")).collect();
    assert!(out.starts_with(&head), "every class before the damage");
    let tail: String = fc.iter().map(|u| format!("{u}\n")).collect();
    assert!(out.ends_with(&tail));
    assert_eq!(out, head + &tail, "not a line cut short");
}

/// An archive that yields nothing (a corrupt header; a header and no
/// data) was skipped, and `dedup` says so as `scan` does; one that yields
/// lines before its damage was cut short there (the test above).
#[test]
fn an_archive_that_yields_nothing_is_said_to_be_skipped() {
    let dir = tempfile::tempdir().unwrap();
    let header = write(dir.path(), "header.gz", b"\x1f\x8bxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    let empty = write(dir.path(), "empty.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03");
    let good = write(dir.path(), "good.txt", b"urn:ab:two\n");
    let fate = "(check the archive with `gzip -t`); skipped, the other inputs were read";
    for bad in [&header, &empty] {
        for command in ["scan", "dedup"] {
            let o = urnscan(&[command, "-z", bad, &good]);
            assert_eq!(o.code, Some(2), "{command} {bad}");
            let error = o.err.lines().find(|l| l.starts_with("urnscan: ")).unwrap_or_default();
            let failed = format!("urnscan: {bad}: gzip data is corrupt or truncated: ");
            assert!(error.starts_with(&failed) && error.ends_with(fate), "{command}: {error}");
        }
    }
}

/// An archive cut off in the middle of a URN (`urn:isbn:978…` of
/// `urn:isbn:9780451450523`): what the cut leaves of it is no URN to
/// `scan` or `dedup`, not even a rejected one; the URNs before it are.
#[test]
fn a_urn_cut_short_by_a_truncated_archive_is_not_reported() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(b"urn:ab:one\nurn:isbn:978").unwrap();
    gz.flush().unwrap(); // everything so far decodable; no end, no trailer
    let bad = write(dir.path(), "cut.gz", gz.get_ref());
    let good = write(dir.path(), "good.txt", b"urn:ab:two\n");
    let o = urnscan(&["scan", "-z", "-N", &bad, &good]);
    assert_eq!((o.code, o.out.as_str()), (Some(2), format!("{bad}:urn:ab:one\n{good}:urn:ab:two\n").as_str()));
    assert!(o.err.contains(&format!("urnscan: {bad}: gzip data is corrupt or truncated")), "{}", o.err);
    let o = urnscan(&["scan", "-z", "--invalid", &bad]);
    assert_eq!(o.out, "", "no rejected candidate either");
    let o = urnscan(&["dedup", "-z", &bad, &good]);
    assert_eq!((o.code, o.out.as_str()), (Some(2), "urn:ab:one\nurn:ab:two\n"));
    assert!(o.err.lines().any(|l| l.starts_with("lines read") && l.ends_with(" 2")), "{}", o.err);
    assert!(!o.err.contains("978"), "the cut line is not rejected: {}", o.err);
}

/// Stdin redirected from a file (`urnscan scan < FILE`, mapped when the
/// file is large enough) gives what the file gives by name, from where
/// its offset stands, and is left at its end as a stream read to its end
/// would be, whatever the mapping policy.
#[test]
fn stdin_redirected_from_a_file_reads_from_its_offset_to_its_end() {
    let dir = tempfile::tempdir().unwrap();
    let (text, planted) = corpus("r", 3000, 400);
    assert!(text.len() > 1 << 20, "large enough to be mapped by default");
    let path = write(dir.path(), "r.txt", &text);
    let from = planted[1000].0;
    for mmap in ["auto", "always", "never"] {
        for start in [0, from] {
            let mut file = fs::File::open(&path).unwrap();
            file.seek(SeekFrom::Start(start as u64)).unwrap();
            let mut shared = file.try_clone().unwrap();
            let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
                .args(["scan", "--mmap", mmap, "-"])
                .stdin(file)
                .output()
                .expect("run urnscan");
            let want: Vec<(usize, String)> =
                planted.iter().filter(|(o, _)| *o >= start).map(|(o, u)| (o - start, u.clone())).collect();
            assert_eq!(o.status.code(), Some(0), "--mmap {mmap} from {start}");
            assert!(String::from_utf8_lossy(&o.stdout) == lines(&want), "--mmap {mmap} from {start}");
            assert_eq!(shared.stream_position().unwrap(), text.len() as u64, "--mmap {mmap} from {start}: offset left");
        }
    }
}

/// A file whose reported size is 0 but that has content (/proc's) is
/// read whatever the mapping policy: how a file is read never changes
/// what is found. `/proc/self/environ` is the running urnscan's own
/// environment, in which the test plants a URN; where /proc is absent
/// the test has nothing to check.
#[test]
fn a_size_0_file_with_content_is_read_under_every_mmap_policy() {
    let environ = Path::new("/proc/self/environ");
    if !fs::metadata(environ).is_ok_and(|m| m.is_file() && m.len() == 0) {
        eprintln!("skipped: no /proc/self/environ of size 0 here");
        return;
    }
    for mmap in ["always", "auto", "never"] {
        let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
            .args(["scan", "-u", "--mmap", mmap, "/proc/self/environ"])
            .env_clear()
            .env("URNSCAN_TEST_PLANT", "urn:ab:planted")
            .output()
            .expect("run urnscan");
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!((o.status.code(), out.as_ref()), (Some(0), "1\turn:ab:planted\n"), "--mmap {mmap}");
    }
}

#[test]
fn files_from_lists_paths_by_line_or_by_nul() {
    // Three files, one in a directory and one whose name holds a line
    // break: each URN's key appears in two files, so the unique URNs of
    // one run count 2 for each (RFC 8141 §3.1: `URN:` and the NID in any
    // case are the same key).
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.txt", b"urn:ab:1\nurn:ab:2\n");
    fs::create_dir(dir.path().join("d")).unwrap();
    let d = dir.path().join("d");
    write(&d, "b.txt", b"URN:AB:1\n");
    let odd = write(dir.path(), "c\nd.txt", b"urn:Ab:2\n");
    let d = d.to_str().unwrap();
    let by_args = urnscan(&["scan", "-u", &a, d, &odd]);
    assert_eq!(by_args.code, Some(0), "{}", by_args.err);
    assert_eq!(by_args.out, "2\turn:ab:1\n2\turn:ab:2\n");
    // NUL-separated (as `find -print0` writes), from a file and from stdin,
    // and after a path given as an argument.
    let nul = format!("{d}\0{odd}\0");
    let list = write(dir.path(), "list0", nul.as_bytes());
    for run in [
        urnscan(&["scan", "-u", &a, "--files-from", &list]),
        urnscan_in(&["scan", "-u", "--files-from", "-", &a], nul.as_bytes()),
    ] {
        assert_eq!((run.code, &run.out, &run.err), (Some(0), &by_args.out, &String::new()));
    }
    // One per line: the name with a line break cannot be listed so, and is
    // reported as two missing paths; the others are still read.
    let run = urnscan_in(&["dedup", "-q", "-c", "--files-from", "-"], format!("{a}\n{d}\n").as_bytes());
    assert_eq!((run.code, run.out.as_str()), (Some(0), "2\turn:ab:1\n1\turn:ab:2\n"));
    let run = urnscan_in(&["scan", "-c", "--files-from", "-"], format!("{a}\n{odd}\n").as_bytes());
    assert_eq!(run.code, Some(2));
    assert_eq!(run.err.matches("No such file").count(), 2, "{}", run.err);
    assert!(run.out.contains("a.txt:2\n"), "{}", run.out);
    // A list saved by Notepad: a UTF-8 byte-order mark and CR LF line ends
    // (the last line without one) name the same files.
    let windows = format!("\u{feff}{a}\r\n\r\n{d}");
    let run = urnscan_in(&["dedup", "-q", "-c", "--files-from", "-"], windows.as_bytes());
    assert_eq!((run.code, run.out.as_str(), run.err.as_str()), (Some(0), "2\turn:ab:1\n1\turn:ab:2\n", ""));
    // Not every line ends in CR LF: the CRs are part of the names.
    let mixed = format!("{a}\r\n{d}\n");
    let run = urnscan_in(&["scan", "-c", "--files-from", "-"], mixed.as_bytes());
    assert_eq!(run.code, Some(2));
    assert_eq!(run.err.matches("No such file").count(), 1, "{}", run.err);
    assert!(run.out.contains("b.txt:1\n"), "{}", run.out);
    // Stdin both the list and an input: an error before anything is read.
    let both = urnscan_in(&["dedup", "--files-from", "-", "-"], a.as_bytes());
    assert_eq!(both.code, Some(2));
    assert!(both.err.contains("stdin cannot be an input too"), "{}", both.err);
}

/// An empty `--files-from` list (`find -newer last-run` when nothing
/// changed) with no path given is a run over no input, not an error and
/// not a read of stdin: `scan` finds nothing (status 1, zero totals),
/// `dedup` is done with an empty result (status 0), as README's exit
/// status table has them.
#[test]
fn an_empty_files_from_list_is_a_run_over_no_input() {
    let dir = tempfile::tempdir().unwrap();
    let list = write(dir.path(), "empty", b"");
    let on_stdin = b"urn:ab:1\n";
    let quiet = |r: &Run| (r.code, r.out.clone(), r.err.clone());
    // Listed on stdin, as the README's recipe pipes them.
    let run = urnscan_in(&["scan", "--unique", "--files-from", "-"], b"");
    assert_eq!(quiet(&run), (Some(1), String::new(), String::new()));
    // Listed in a file: stdin, which holds a URN, is not read instead.
    let run = urnscan_in(&["scan", "--files-from", &list], on_stdin);
    assert_eq!(quiet(&run), (Some(1), String::new(), String::new()));
    let run = urnscan_in(&["scan", "--stats", "--format", "json", "--files-from", &list], on_stdin);
    assert_eq!(run.code, Some(1), "{}", run.err);
    for zero in ["\"files\":0,", "\"bytes\":0,", "\"candidates\":0,", "\"unique\":0,"] {
        assert!(run.out.contains(zero), "{zero} in {}", run.out);
    }
    let run = urnscan_in(&["dedup", "-q", "--files-from", &list], on_stdin);
    assert_eq!(quiet(&run), (Some(0), String::new(), String::new()));
    let run = urnscan_in(&["dedup", "--stats", "--format", "json", "--files-from", "-"], b"");
    assert_eq!(run.code, Some(0), "{}", run.err);
    assert!(run.out.contains("\"lines\":0,") && run.out.contains("\"distinct\":0,"), "{}", run.out);
}

/// Runs urnscan in `cwd`, with an empty stdin.
fn urnscan_at(cwd: &Path, args: &[&str]) -> Run {
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(args)
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("run urnscan");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    Run { code: o.status.code(), out: text(&o.stdout), err: text(&o.stderr) }
}

/// `--respect-ignore` honours `.gitignore` in a directory that is no git
/// repository (a dump rarely is; the walker's default reads one only in a
/// repository), `.ignore` too, and skips hidden files; without it every
/// file is read. (The directory's parents' ignore files apply as well, as
/// in ripgrep: a temporary directory's parents have none.)
#[test]
fn respect_ignore_honours_ignore_files_outside_a_repository() {
    let root = tempfile::tempdir().unwrap();
    let d = root.path().join("d");
    fs::create_dir_all(d.join("skip")).unwrap();
    for (name, text) in [
        ("a.txt", "urn:ab:a\n"),
        ("b.log", "urn:ab:b\n"),
        ("skip/c.txt", "urn:ab:c\n"),
        (".hidden", "urn:ab:h\n"),
        (".gitignore", "*.log\n"),
        (".ignore", "skip/\n"),
    ] {
        fs::write(d.join(name), text).unwrap();
    }
    // Git's global excludes would apply too: none here (HOME and
    // XDG_CONFIG_HOME point into the test's directory).
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["scan", "-HN", "--respect-ignore", "d"])
        .current_dir(root.path())
        .env("HOME", root.path())
        .env("XDG_CONFIG_HOME", root.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!((o.status.code(), out.as_ref()), (Some(0), "d/a.txt:urn:ab:a\n"), "{o:?}");
    let run = urnscan_at(root.path(), &["scan", "-HN", "d"]);
    assert_eq!(run.out, "d/.hidden:urn:ab:h\nd/a.txt:urn:ab:a\nd/b.log:urn:ab:b\nd/skip/c.txt:urn:ab:c\n");
}

#[test]
fn globs_choose_the_files_of_walked_directories() {
    // One URN per file, named after it, so the listing says which files
    // were read; the expected lists follow gitignore's rules by hand: a
    // glob without `/` matches a name at any depth, one with `/` is
    // anchored at the working directory, the last match decides, a
    // directory left out is not entered.
    let root = tempfile::tempdir().unwrap();
    let d = root.path().join("d");
    for sub in ["sub", "skip"] {
        fs::create_dir_all(d.join(sub)).unwrap();
    }
    let planted = [
        ("a.xml", "urn:ab:a"),
        ("b.log", "urn:ab:b"),
        ("F.XML", "urn:ab:f"),
        ("sub/c.xml", "urn:ab:c"),
        ("sub/d.txt", "urn:ab:d"),
        ("skip/e.xml", "urn:ab:e"),
    ];
    for (name, urn) in planted {
        fs::write(d.join(name), format!("{urn}\n")).unwrap();
    }
    let urn_of = |name: &str| planted.iter().find(|(n, _)| *n == name).map(|(_, u)| *u).unwrap();
    let listed = |args: &[&str]| {
        let run = urnscan_at(root.path(), &[&["scan", "-HN"], args].concat());
        assert_eq!(run.err, "", "{args:?}");
        (run.code, run.out)
    };
    let files = |names: &[&str]| names.iter().map(|n| format!("d/{n}:{}\n", urn_of(n))).collect();
    let all = files(&["F.XML", "a.xml", "b.log", "skip/e.xml", "sub/c.xml", "sub/d.txt"]);
    assert_eq!(listed(&["d"]), (Some(0), all));
    assert_eq!(listed(&["-g", "*.xml", "d"]), (Some(0), files(&["a.xml", "skip/e.xml", "sub/c.xml"])));
    assert_eq!(listed(&["-g", "*.xml", "-g", "!skip", "d"]), (Some(0), files(&["a.xml", "sub/c.xml"])));
    assert_eq!(
        listed(&["--glob", "!*.log", "d"]),
        (Some(0), files(&["F.XML", "a.xml", "skip/e.xml", "sub/c.xml", "sub/d.txt"]))
    );
    assert_eq!(listed(&["--iglob", "*.xml", "d"]), (Some(0), files(&["F.XML", "a.xml", "skip/e.xml", "sub/c.xml"])));
    // The later glob wins: the second takes back what the first left out.
    assert_eq!(listed(&["-g", "!*.xml", "-g", "a.*", "d"]), (Some(0), files(&["a.xml"])));
    // Anchored at the working directory, also for a directory given by
    // its absolute path.
    let sub = files(&["sub/c.xml", "sub/d.txt"]);
    assert_eq!(listed(&["-g", "d/sub/*", "d"]), (Some(0), sub.clone()));
    let absolute = urnscan_at(root.path(), &["scan", "-N", "-g", "d/sub/*", d.to_str().unwrap()]);
    assert_eq!(absolute.out.lines().count(), 2, "{}", absolute.out);
    assert!(absolute.out.lines().all(|l| l.contains("/d/sub/")), "{}", absolute.out);
    // A file named on the command line is read whatever the globs say.
    let named = listed(&["-g", "*.xml", "d/b.log", "d/sub"]);
    assert_eq!(named, (Some(0), files(&["b.log", "sub/c.xml"])));
    // No file left: nothing found, not an error.
    assert_eq!(listed(&["-g", "*.none", "d"]), (Some(1), String::new()));
    // dedup walks with the same globs.
    let dedup = urnscan_at(root.path(), &["dedup", "-q", "-g", "*.txt", "-g", "b.*", "d"]);
    assert_eq!((dedup.code, dedup.out.as_str()), (Some(0), "urn:ab:b\nurn:ab:d\n"));
    // An invalid glob is a usage error that names it, before anything is
    // read (here: before --files-from reads stdin).
    for cmd in ["scan", "dedup"] {
        let bad = urnscan_in(&[cmd, "-g", "*.xml", "--iglob", "a[b", "--files-from", "-"], b"d\n");
        assert_eq!((bad.code, bad.out.as_str()), (Some(2), ""), "{cmd}");
        assert!(bad.err.contains("invalid glob `a[b`"), "{cmd}: {}", bad.err);
    }
}

/// An empty path argument names no file: reported on stderr as a missing
/// path is (the same message, with the empty name), the other inputs
/// still read, status 2 (README: "an input could not be read"), as `grep
/// x ''` does; not a usage error, and not a reason to read stdin instead.
#[test]
fn an_empty_path_argument_is_a_missing_input() {
    let dir = tempfile::tempdir().unwrap();
    let a = write(dir.path(), "a.txt", b"see urn:ab:1\n");
    let d = write(dir.path(), "d.txt", b"urn:ab:1\n");
    let gone = "no-such-input-here";
    for (args, out) in [
        (vec!["scan", "", &a], format!("{a}:4:urn:ab:1\n")),
        (vec!["scan", &a, ""], format!("{a}:4:urn:ab:1\n")),
        (vec!["dedup", "-q", "", &d], "urn:ab:1\n".to_owned()),
    ] {
        let run = urnscan_in(&args, b"urn:zz:stdin\n");
        assert_eq!((run.code, &run.out), (Some(2), &out), "{args:?}: {}", run.err);
        let named: Vec<&str> = args.iter().map(|&arg| if arg.is_empty() { gone } else { arg }).collect();
        let missing = urnscan_in(&named, b"urn:zz:stdin\n");
        assert_eq!((missing.code, &missing.out), (Some(2), &out), "{named:?}");
        assert_eq!(run.err, missing.err.replace(gone, ""), "{args:?}");
        assert_eq!(run.err.lines().count(), 1, "{args:?}: {}", run.err);
    }
    let alone = urnscan_in(&["scan", ""], b"urn:zz:stdin\n");
    assert_eq!((alone.code, alone.out.as_str(), alone.err.lines().count()), (Some(2), "", 1), "{}", alone.err);
}
