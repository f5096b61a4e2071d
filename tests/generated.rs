//! Generated corpora against their ground truth: every planted URN is found
//! at its offset with its key, no decoy is reported, the unique count is
//! the number of distinct planted keys, and each NID's counts are the
//! truth's, and the unique URNs come out in key or first-seen order with
//! their counts and first occurrences — at several thread counts and chunk
//! sizes, mapped, read and streamed.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};

fn urnscan(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_urnscan")).args(args).stdin(Stdio::null()).output().expect("run urnscan")
}

fn generate(dir: &Path, size: &str, density: &str, seed: &str) -> (String, Vec<(u64, String, String)>) {
    let corpus = dir.join(format!("corpus-{seed}.txt"));
    let truth = dir.join(format!("truth-{seed}.tsv"));
    let o = urnscan(&[
        "gen",
        "--size",
        size,
        "--density",
        density,
        "--seed",
        seed,
        "--truth",
        truth.to_str().unwrap(),
        "-o",
        corpus.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let rows = std::fs::read_to_string(&truth)
        .unwrap()
        .lines()
        .map(|l| {
            let mut f = l.split('\t');
            (f.next().unwrap().parse().unwrap(), f.next().unwrap().to_owned(), f.next().unwrap().to_owned())
        })
        .collect();
    (corpus.to_str().unwrap().to_owned(), rows)
}

fn scanned(args: &[&str]) -> Vec<(u64, String, String)> {
    let o = urnscan(args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            (
                v["offset"].as_u64().unwrap(),
                v["urn"].as_str().unwrap().to_owned(),
                v["key"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// What `scan --count` prints for one input.
fn count(args: &[&str]) -> usize {
    let o = urnscan(args);
    assert!(o.status.code().is_some_and(|c| c < 2), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap().trim_end().parse().unwrap()
}

#[test]
fn planted_urns_are_found_exactly() {
    let dir = tempfile::tempdir().unwrap();
    for (size, density, seed) in [("3MiB", "200", "7"), ("2MiB", "5000", "11")] {
        let (corpus, truth) = generate(dir.path(), size, density, seed);
        assert!(truth.len() > 500, "{size} at {density}/MiB planted {}", truth.len());
        for extra in [
            &["-j1"][..],
            &["-j2", "--chunk-size", "4093"],
            &["-j3", "--chunk-size", "65536", "--mmap", "always"],
            &["-j2", "--mmap", "never"],
        ] {
            let mut args = vec!["scan", "--format", "jsonl", corpus.as_str()];
            args.extend_from_slice(extra);
            assert_eq!(scanned(&args), truth, "{size} {density} {extra:?}");
            let mut args = vec!["scan", "--count", corpus.as_str()];
            args.extend_from_slice(extra);
            assert_eq!(count(&args), truth.len(), "--count {size} {density} {extra:?}");
        }
        let distinct: BTreeSet<&str> = truth.iter().map(|(_, _, k)| k.as_str()).collect();
        let o = urnscan(&["scan", "--stats", "--format", "json", &corpus]);
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["unique"].as_u64().unwrap() as usize, distinct.len());
        assert_eq!(v["valid"].as_u64().unwrap() as usize, truth.len());
        // The decoys the generator plants are rejected candidates.
        let invalid = v["invalid"].as_u64().unwrap() as usize;
        assert!(invalid > 0);
        assert_eq!(count(&["scan", "--count", "--invalid", &corpus]), invalid);
    }
}

#[test]
fn stdin_stream_equals_file_scan() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = generate(dir.path(), "20MiB", "200", "3");
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["scan", "--format", "jsonl"])
        .stdin(std::fs::File::open(&corpus).unwrap())
        .output()
        .unwrap();
    let from_stdin: Vec<(u64, String)> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["path"], "-");
            (v["offset"].as_u64().unwrap(), v["urn"].as_str().unwrap().to_owned())
        })
        .collect();
    // Larger than a window: files are scanned a window at a time.
    for jobs in ["-j1", "-j2"] {
        assert_eq!(count(&["scan", "--count", jobs, &corpus]), truth.len(), "{jobs}");
    }
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["scan", "--count"])
        .stdin(std::fs::File::open(&corpus).unwrap())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(o.stdout).unwrap(), format!("{}\n", truth.len()));
    let expected: Vec<(u64, String)> = truth.into_iter().map(|(o, u, _)| (o, u)).collect();
    assert_eq!(from_stdin, expected);
}

#[test]
fn per_nid_stats_equal_the_truth() {
    // Thousands of NIDs (the generator invents NIDs beside the registered
    // ones), counted at several thread counts: every NID's occurrences and
    // distinct keys, as the truth file gives them, whatever the split of
    // the counting maps between threads, and counted from the unique URNs
    // in key order when those are printed too.
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = generate(dir.path(), "16MiB", "5000", "23");
    let mut want: std::collections::BTreeMap<String, (u64, BTreeSet<&str>)> = Default::default();
    for (_, _, key) in &truth {
        let nid = key.split(':').nth(1).unwrap().to_owned();
        let slot = want.entry(nid).or_default();
        slot.0 += 1;
        slot.1.insert(key);
    }
    assert!(want.len() > 1000, "only {} NIDs planted", want.len());
    let want: Vec<(String, u64, u64)> = want.into_iter().map(|(nid, (n, keys))| (nid, n, keys.len() as u64)).collect();
    // With --unique the counts come from the unique URNs in key order, in
    // blocks of 16,384 keys: the corpus has several blocks' worth.
    let keys: BTreeSet<&str> = truth.iter().map(|(_, _, key)| key.as_str()).collect();
    assert!(keys.len() > 3 * 16_384, "only {} distinct keys planted", keys.len());
    let runs = ["-j1", "-j2", "-j3"].into_iter().flat_map(|jobs| [(jobs, false), (jobs, true)]);
    for (jobs, unique) in runs {
        let mut args = vec!["scan", "--stats", "--format", "json", jobs, "--chunk-size", "65536", &corpus];
        if unique {
            args.push("--unique");
        }
        let o = urnscan(&args);
        assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
        // The statistics object is the last line (after the unique URNs).
        let last = o.stdout.trim_ascii_end().rsplit(|&b| b == b'\n').next().unwrap();
        let v: serde_json::Value = serde_json::from_slice(last).unwrap();
        let rows = v["nids"].as_array().unwrap();
        // Most occurrences first, then by NID.
        let order: Vec<(u64, &str)> =
            rows.iter().map(|r| (r["occurrences"].as_u64().unwrap(), r["nid"].as_str().unwrap())).collect();
        assert!(order.windows(2).all(|w| w[0].0 > w[1].0 || (w[0].0 == w[1].0 && w[0].1 < w[1].1)), "{jobs} {unique}");
        let mut got: Vec<(String, u64, u64)> = rows
            .iter()
            .map(|r| {
                let nid = r["nid"].as_str().unwrap().to_owned();
                (nid, r["occurrences"].as_u64().unwrap(), r["unique"].as_u64().unwrap())
            })
            .collect();
        got.sort();
        assert_eq!(got, want, "{jobs} {unique}");
    }
}

/// `scan --unique` in every order against the truth: one line per distinct
/// key with its count, first-seen form and offset; by key bytes, by the
/// offset of the key's first occurrence, or by count and then key. Over
/// 16,384 distinct keys, so the first-seen output is merged in several
/// ranges, and over 16 MiB, so a mapped file is scanned in windows.
#[test]
fn unique_urns_in_every_order_equal_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let (corpus, truth) = generate(dir.path(), "20MiB", "2000", "31");
    // key -> (count, first offset, first-seen form); the truth is one
    // planted URN per row, with its offset, form and key.
    let mut classes: BTreeMap<&str, (u64, u64, &str)> = BTreeMap::new();
    let mut in_order = truth.clone();
    in_order.sort_by_key(|(offset, _, _)| *offset);
    for (offset, raw, key) in &in_order {
        let class = classes.entry(key.as_str()).or_insert((0, *offset, raw.as_str()));
        class.0 += 1;
    }
    assert!(classes.len() > 16_384, "{} distinct keys", classes.len());
    let by_key: Vec<(String, u64, u64, String)> =
        classes.iter().map(|(k, &(n, at, raw))| (k.to_string(), n, at, raw.to_owned())).collect();
    let mut first_seen = by_key.clone();
    first_seen.sort_by_key(|&(_, _, at, _)| at);
    // Most occurrences first; the sort is stable, so equal counts stay in
    // key order.
    let mut by_count = by_key.clone();
    by_count.sort_by_key(|c| std::cmp::Reverse(c.1));
    assert!(by_count[0].1 > 1 && by_count.last().map(|c| c.1) == Some(1), "counts differ");
    let unique = |extra: &[&str], stdin: bool| -> Vec<(String, u64, u64, String)> {
        let mut args = vec!["scan", "--unique", "--format", "jsonl"];
        args.extend_from_slice(extra);
        let o = if stdin {
            let mut child = Command::new(env!("CARGO_BIN_EXE_urnscan"))
                .args(&args)
                .stdin(std::fs::File::open(&corpus).unwrap())
                .stdout(Stdio::piped())
                .spawn()
                .unwrap();
            let mut out = Vec::new();
            std::io::Read::read_to_end(child.stdout.as_mut().unwrap(), &mut out).unwrap();
            assert!(child.wait().unwrap().success());
            out
        } else {
            args.push(&corpus);
            let o = urnscan(&args);
            assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
            o.stdout
        };
        String::from_utf8(o)
            .unwrap()
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                (
                    v["key"].as_str().unwrap().to_owned(),
                    v["count"].as_u64().unwrap(),
                    v["offset"].as_u64().unwrap(),
                    v["urn"].as_str().unwrap().to_owned(),
                )
            })
            .collect()
    };
    for extra in [&["-j1"][..], &["-j2", "--mmap", "never"], &["-j3", "--chunk-size", "100000"]] {
        assert!(unique(extra, false) == by_key, "key order {extra:?}");
        let mut args = extra.to_vec();
        args.extend_from_slice(&["--sort", "first-seen"]);
        assert!(unique(&args, false) == first_seen, "first-seen order {extra:?}");
        let mut args = extra.to_vec();
        args.extend_from_slice(&["--sort", "count"]);
        assert!(unique(&args, false) == by_count, "count order {extra:?}");
    }
    assert!(unique(&["-j2", "--sort", "first-seen"], true) == first_seen, "first-seen order from stdin");
}

/// What the options ask for and the corpus cannot hold is said, with the
/// counts of the truth file; what fits, or a default that does not, is
/// not. A dataset's keys need valid lines (1,000 lines at 10 invalid per
/// thousand: 990), and text has a few slots per line for URNs and decoys,
/// URNs first.
#[test]
fn what_gen_cannot_give_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let (out, truth) = (dir.path().join("out.txt"), dir.path().join("truth.tsv"));
    let (out, truth) = (out.to_str().unwrap(), truth.to_str().unwrap());
    let gen = |args: &[&str]| {
        let o = urnscan(&[&["gen", "-o", out, "--truth", truth][..], args].concat());
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let said = String::from_utf8(o.stderr).unwrap();
        (said, std::fs::read_to_string(truth).unwrap())
    };
    let (said, rows) = gen(&["--dataset", "--lines", "1000", "--distinct", "5000"]);
    let counts: Vec<u64> = rows.lines().map(|l| l.rsplit('\t').next().unwrap().parse().unwrap()).collect();
    assert_eq!((counts.len(), counts.iter().sum::<u64>()), (990, 990));
    assert!(said.contains("990 valid lines, 10 invalid, 990 distinct keys"), "{said}");
    let shortfall =
        "990 distinct keys, not the 5,000 --distinct asks for: each key needs a valid line, and the dataset has 990";
    assert!(said.contains(shortfall), "{said}");
    for fits in [&["--dataset", "--lines", "1000", "--distinct", "990"][..], &["--dataset", "--lines", "1000"]] {
        let (said, _) = gen(fits);
        assert_eq!(said.lines().count(), 1, "{fits:?}: {said}");
    }

    // Text: the planted URNs are the truth's rows; the room per MiB is
    // that of the URNs and decoys the summary line counts.
    let text = |args: &[&str]| {
        let (said, rows) = gen(args);
        let bytes = std::fs::metadata(out).unwrap().len();
        let summary = said.lines().next().unwrap().replace(',', "");
        let decoys: u64 = summary.split(" decoys").next().unwrap().rsplit(' ').next().unwrap().parse().unwrap();
        let planted = rows.lines().count() as u64;
        assert!(summary.contains(&format!(" {planted} URNs planted")), "{said}");
        let room =
            format!("room for about {} URNs and decoys per MiB", thousands((planted + decoys) * (1 << 20) / bytes));
        (said.lines().skip(1).map(str::to_owned).collect::<Vec<_>>(), planted, decoys, room)
    };
    let (notes, planted, _, room) = text(&["--size", "1MiB", "--density", "50000"]);
    assert!((9_000..11_000).contains(&planted), "{planted}");
    let urns =
        format!("{} URNs planted, not the 50,000 --density 50000 asks for: the text has {room}", thousands(planted));
    assert_eq!(notes, [format!("urnscan gen: {urns}, URNs first")]);
    // 1 KiB at 900,000 per MiB asks for 878 URNs.
    let (notes, planted, _, _) = text(&["--size", "1KiB", "--density", "900000"]);
    assert!(planted < 100, "{planted}");
    assert!(notes.len() == 1 && notes[0].contains("not the 878 --density 900000 asks for"), "{notes:?}");
    // URNs first: 5,000 fit, 50,000 decoys do not.
    let (notes, planted, decoys, room) = text(&["--size", "1MiB", "--density", "5000", "--decoys", "50000"]);
    assert!((4_500..5_500).contains(&planted), "{planted}");
    let decoys = format!("{} decoys, not the 50,000 --decoys 50000 asks for: the text has {room}", thousands(decoys));
    assert_eq!(notes, [format!("urnscan gen: {decoys}, URNs first")]);
    let (notes, planted, _, _) = text(&["--size", "1MiB", "--density", "5000"]);
    assert!((4_500..5_500).contains(&planted), "{planted}");
    assert!(notes.is_empty(), "{notes:?}");
}

/// 1234567 as "1,234,567".
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}
