//! `urnscan bench` as a user runs it: the rows it promises are there, every
//! search row counts the same candidates, and the unique counts of the
//! dedup and sort rows are the generator's ground truth. Only counts are
//! checked, never times.

use std::collections::HashSet;
use std::fs;
use std::path::Path;
use std::process::{Command, Output};

fn urnscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_urnscan")).args(args).output().expect("run urnscan")
}

fn json(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "exit {:?}: {}", out.status, String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("bench --format json prints one JSON object")
}

/// The NID of a key (`urn:NID:...`, lower-cased already).
fn nid(key: &str) -> &str {
    key.split(':').nth(1).unwrap()
}

/// A generated corpus, the number of distinct keys its truth file lists,
/// and the number of URN occurrences (a line each).
fn corpus(dir: &Path) -> (String, usize, usize) {
    let file = dir.join("corpus.txt");
    let truth = dir.join("truth.tsv");
    let (f, t) = (file.to_str().unwrap(), truth.to_str().unwrap());
    let out = urnscan(&["gen", "--size", "2MiB", "--density", "2000", "--seed", "3", "-o", f, "--truth", t]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let truth = fs::read_to_string(&truth).unwrap();
    let keys: HashSet<&str> = truth.lines().map(|l| l.rsplit('\t').next().unwrap()).collect();
    (f.to_owned(), keys.len(), truth.lines().count())
}

fn rows(report: &serde_json::Value) -> &Vec<serde_json::Value> {
    report["rows"].as_array().expect("rows")
}

fn phases(report: &serde_json::Value, threads: u64) -> Vec<String> {
    rows(report).iter().filter(|r| r["threads"] == threads).map(|r| r["phase"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn every_phase_is_reported_and_counts_agree_with_the_truth() {
    let dir = tempfile::tempdir().unwrap();
    let (file, distinct, occurrences) = corpus(dir.path());
    let report = json(&urnscan(&["bench", "--runs", "1", "-j", "2", "--format", "json", &file]));
    assert_eq!(report["bytes"], 2 * 1024 * 1024);

    let one = phases(&report, 1);
    let layers =
        ["floor", "floor + map", "search", "search + validate", "+ dedup", "+ NID stats", "+ sort", "+ sort by count"];
    for phase in layers {
        assert!(one.iter().any(|p| p == phase), "no {phase:?} row at 1 thread: {one:?}");
    }
    assert_eq!(phases(&report, 2), layers);

    // The best kernel is measured once more with the other prefetch setting.
    let best = report["kernel"].as_str().unwrap();
    let other = if report["prefetch"] == true { "search, no prefetch" } else { "search, prefetch" };
    if best != "scalar" {
        let row = rows(&report).iter().find(|r| r["phase"] == other).expect(other);
        assert_eq!(row["kernel"], best);
    }
    // The scalar kernel runs on every CPU, so the 1-thread rows always have it.
    assert!(rows(&report).iter().any(|r| r["phase"] == "search" && r["kernel"] == "scalar"));

    // Every search row finds the same candidates; the scan's events and the
    // table's keys are then the truth's.
    let count = |r: &serde_json::Value| r["count"].as_u64().unwrap();
    let searches: Vec<u64> = rows(&report)
        .iter()
        .filter(|r| r["phase"].as_str().unwrap().starts_with("search,") || r["phase"] == "search")
        .map(count)
        .collect();
    assert!(searches.windows(2).all(|w| w[0] == w[1]), "{searches:?}");
    for r in rows(&report)
        .iter()
        .filter(|r| ["+ dedup", "+ sort", "+ sort by count"].contains(&r["phase"].as_str().unwrap()))
    {
        assert_eq!(count(r), distinct as u64, "{} at {} threads", r["phase"], r["threads"]);
    }
    let truth = fs::read_to_string(dir.path().join("truth.tsv")).unwrap();
    let nids: HashSet<&str> = truth.lines().map(|l| nid(l.rsplit('\t').next().unwrap())).collect();
    for r in rows(&report).iter().filter(|r| r["phase"] == "+ NID stats") {
        assert_eq!((count(r), r["counted"].as_str()), (nids.len() as u64, Some("nids")), "{} threads", r["threads"]);
    }
    for r in rows(&report).iter().filter(|r| r["phase"] == "floor") {
        assert_eq!(r["ratio_to_floor"], 1.0);
    }

    // The URN rate counts every valid occurrence (the truth's lines), from
    // validation on, and divides by the row's own time.
    for r in rows(&report) {
        let phase = r["phase"].as_str().unwrap();
        if ["search + validate", "+ dedup", "+ NID stats", "+ sort", "+ sort by count"].contains(&phase) {
            assert_eq!(r["urns"].as_u64(), Some(occurrences as u64), "{phase}");
            let rate = r["urns_per_second"].as_f64().unwrap();
            let want = occurrences as f64 / r["seconds"].as_f64().unwrap();
            assert!((rate - want).abs() <= want * 1e-9, "{phase}: {rate} against {want}");
        } else {
            assert!(r["urns"].is_null() && r["urns_per_second"].is_null(), "{phase}");
        }
    }
}

#[test]
fn the_text_table_shows_the_urn_rate_beside_the_rows_that_count_urns() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _, _) = corpus(dir.path());
    let out = urnscan(&["bench", "--runs", "1", "-j", "1", &file]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let header = text.lines().find(|l| l.starts_with("phase")).expect("header");
    assert!(header.contains("M URNs/s"), "{header}");
    // "+ dedup 1 12.3 ms 0.17 8.40 1.23 5,000 unique": a rate before the count.
    let dedup: Vec<&str> = text.lines().find(|l| l.starts_with("+ dedup")).unwrap().split_whitespace().collect();
    assert!(dedup[dedup.len() - 3].parse::<f64>().is_ok_and(|r| r > 0.0), "{dedup:?}");
    let search: Vec<&str> = text.lines().find(|l| l.starts_with("search (")).unwrap().split_whitespace().collect();
    assert_eq!(search.last(), Some(&"candidates"), "{search:?}");
    assert_eq!(search.len(), 9, "no rate on a search row: {search:?}");
}

#[test]
fn floor_only_prints_the_floor_rows() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _, _) = corpus(dir.path());
    let report = json(&urnscan(&["bench", "--floor", "--runs", "1", "-j", "2", "--format", "json", &file]));
    assert_eq!(phases(&report, 1), ["floor", "floor + map"]);
    assert_eq!(phases(&report, 2), ["floor", "floor + map"]);
}

/// The mapped input's pages are reported (all of the file, paged in before
/// the rows), with how much of them are huge; a generated corpus, in memory,
/// has no such line.
#[test]
fn the_pages_of_a_mapped_input_are_reported() {
    if !Path::new("/proc/self/smaps").exists() {
        eprintln!("skipped: no /proc/self/smaps");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (file, _, _) = corpus(dir.path());
    let report = json(&urnscan(&["bench", "--floor", "--runs", "1", "-j", "1", "--format", "json", &file]));
    let (resident, huge) = (report["resident_bytes"].as_u64(), report["resident_in_huge_pages"].as_u64());
    assert_eq!(resident, Some(2 << 20), "{report}");
    assert!(huge.is_some_and(|h| h <= 2 << 20 && h % (2 << 20) == 0), "{report}");
    let out = urnscan(&["bench", "--floor", "--runs", "1", "-j", "1", &file]);
    let text = String::from_utf8(out.stdout).unwrap();
    let line = text.lines().find(|l| l.starts_with("pages:")).expect("a pages: line");
    assert!(line.starts_with("pages:  2 MiB mapped, "), "{line}");
    let generated = urnscan(&["bench", "--floor", "--runs", "1", "-j", "1", "--generate", "1MiB"]);
    assert!(!String::from_utf8(generated.stdout).unwrap().contains("pages:"));
    let report = json(&urnscan(&["bench", "--floor", "--runs", "1", "--generate", "1MiB", "--format", "json"]));
    assert!(report["resident_bytes"].is_null() && report["resident_in_huge_pages"].is_null());
}

#[test]
fn an_empty_missing_or_impossible_input_is_an_error_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty.txt");
    fs::write(&empty, b"").unwrap();
    for path in [empty.to_str().unwrap(), dir.path().join("missing").to_str().unwrap()] {
        let out = urnscan(&["bench", "--runs", "1", path]);
        assert_eq!(out.status.code(), Some(2), "{path}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(path) || err.contains("empty"), "{err}");
        assert!(out.stdout.is_empty());
    }
    // A corpus larger than any address space is an error, not an abort of
    // the allocator (status 134 and a backtrace).
    let out = urnscan(&["bench", "--generate", "99999999GiB"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot allocate"), "{out:?}");
}

#[test]
fn floor_once_reads_the_file_once_and_reports_it() {
    let dir = tempfile::tempdir().unwrap();
    let (file, _, _) = corpus(dir.path());
    let report = json(&urnscan(&["bench", "--floor", "--once", "-j", "2", "--format", "json", &file]));
    assert_eq!((report["bytes"].as_u64(), report["threads"].as_u64()), (Some(2 << 20), Some(2)));
    assert_eq!((report["phase"].as_str(), report["once"].as_bool()), (Some("floor + map"), Some(true)));
    let text = urnscan(&["bench", "--floor", "--once", "-j", "1", &file]);
    let line = String::from_utf8(text.stdout).unwrap();
    assert!(line.starts_with("floor + map, once: 2,097,152 bytes, 1 thread, "), "{line}");

    // --once needs --floor and a file; an empty file is an error, as for every row.
    let out = urnscan(&["bench", "--once", &file]);
    assert_eq!(out.status.code(), Some(2));
    let empty = dir.path().join("empty");
    fs::write(&empty, b"").unwrap();
    let out = urnscan(&["bench", "--floor", "--once", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty"));
}

/// `--lines` measures a URN dataset as `urnscan dedup` reads it: its rows
/// count the generator's lines, its valid lines (the truth's counts add up
/// to them) and its distinct keys, and a last line without `\n` counts.
#[test]
fn lines_mode_counts_the_datasets_lines_and_classes() {
    let dir = tempfile::tempdir().unwrap();
    let (file, truth) = (dir.path().join("urns.txt"), dir.path().join("truth.tsv"));
    let (f, t) = (file.to_str().unwrap(), truth.to_str().unwrap());
    let out =
        urnscan(&["gen", "--dataset", "--lines", "20000", "--distinct", "6000", "--seed", "5", "-o", f, "--truth", t]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let truth = fs::read_to_string(&truth).unwrap();
    let valid: u64 = truth.lines().map(|l| l.rsplit('\t').next().unwrap().parse::<u64>().unwrap()).sum();
    let distinct = truth.lines().count() as u64;
    let bytes = fs::read(&file).unwrap();
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    assert_eq!(lines, 20_000);

    // The reference row counts lines as `sort -u` does: whole lines, bytes as they are.
    let distinct_lines = bytes.split(|&b| b == b'\n').take(20_000).collect::<std::collections::BTreeSet<_>>().len();
    assert!(distinct_lines as u64 > distinct, "the dataset spells keys in more than one way");

    let report = json(&urnscan(&["bench", "--lines", "--runs", "1", "-j", "2", "--format", "json", f]));
    let nids = truth.lines().map(|l| nid(l.split('\t').next().unwrap())).collect::<HashSet<_>>().len() as u64;
    let want = [
        "floor",
        "floor + map",
        "line ends",
        "+ parse",
        "+ dedup",
        "+ NID stats",
        "+ first-seen output",
        "+ output by key",
        "+ output by count",
        "lines in a HashSet",
    ];
    assert_eq!(phases(&report, 1), want);
    assert_eq!(phases(&report, 2), want);
    let count = |r: &serde_json::Value| r["count"].as_u64().unwrap();
    for r in rows(&report) {
        match r["phase"].as_str().unwrap() {
            "line ends" => assert_eq!((count(r), r["counted"].as_str()), (lines, Some("lines"))),
            "+ parse" => {
                assert_eq!((count(r), r["counted"].as_str(), r["urns"].as_u64()), (valid, Some("valid"), Some(valid)))
            }
            "+ dedup" | "+ first-seen output" | "+ output by key" | "+ output by count" => {
                assert_eq!((count(r), r["urns"].as_u64()), (distinct, Some(valid)), "{}", r["phase"]);
            }
            "+ NID stats" => {
                assert_eq!((count(r), r["counted"].as_str(), r["urns"].as_u64()), (nids, Some("nids"), Some(valid)))
            }
            "lines in a HashSet" => {
                assert_eq!((count(r), r["urns"].as_u64()), (distinct_lines as u64, Some(lines)));
                assert_eq!(r["counted"].as_str(), Some("distinct lines"));
            }
            _ => assert!(r["count"].is_null()),
        }
    }

    // Without its last "\n" the last line is still a line.
    let cut = dir.path().join("cut.txt");
    fs::write(&cut, &bytes[..bytes.len() - 1]).unwrap();
    let report =
        json(&urnscan(&["bench", "--lines", "--runs", "1", "-j", "1", "--format", "json", cut.to_str().unwrap()]));
    let ends = rows(&report).iter().find(|r| r["phase"] == "line ends").unwrap();
    assert_eq!(count(ends), lines);
    let set = rows(&report).iter().find(|r| r["phase"] == "lines in a HashSet").unwrap();
    assert_eq!((count(set), set["urns"].as_u64()), (distinct_lines as u64, Some(lines)));

    // --lines measures a file, not a generated text corpus.
    let out = urnscan(&["bench", "--lines", "--generate", "1MiB"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_small_input_gets_a_note_on_stderr_and_the_report_stays_clean() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.txt");
    fs::write(&path, "see urn:isbn:0451450523 here\n".repeat(8192)).unwrap();
    let file = path.to_str().unwrap();
    // 240 KiB reads in well under the note's 5 ms, even in a debug build,
    // but whether it did is a time: the test checks that the note agrees
    // with the floor reported.
    let out = urnscan(&["bench", "--floor", "--runs", "3", "-j", "1", "--format", "json", file]);
    let report = json(&out);
    let floor = rows(&report).iter().filter(|r| r["phase"] == "floor").map(|r| r["seconds"].as_f64().unwrap());
    let short = floor.fold(f64::INFINITY, f64::min) < 0.005;
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(err.contains("rows this short are within timing noise"), short, "{err}");
    assert!(!String::from_utf8(out.stdout).unwrap().contains("timing noise"), "the note is not in the report");
    let text = urnscan(&["bench", "--floor", "--runs", "3", "-j", "1", file]);
    assert!(text.status.success());
    assert!(!String::from_utf8(text.stdout).unwrap().contains("timing noise"), "nor in the text table");
}

/// `--kernel` and `--prefetch` choose the search the rows run, and the
/// report says it was chosen rather than picked for the CPU.
#[test]
fn a_kernel_chosen_on_the_command_line_is_measured_and_named() {
    let dir = tempfile::tempdir().unwrap();
    let (file, distinct, _) = corpus(dir.path());
    let chosen = ["bench", "--runs", "1", "-j", "1", "--kernel", "sse2", "--prefetch", "off"];
    let report = json(&urnscan(&[&chosen[..], &["--format", "json", &file]].concat()));
    assert_eq!((report["kernel"].as_str(), report["prefetch"].as_bool()), (Some("sse2"), Some(false)));
    let sort = rows(&report).iter().find(|r| r["phase"] == "+ sort").expect("+ sort row");
    assert_eq!(sort["count"], distinct as u64);

    let out = urnscan(&[&chosen[..], &[&file]].concat());
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("kernel: sse2 (chosen with --kernel / --prefetch), software prefetch off"), "{text}");
    let default = String::from_utf8(urnscan(&["bench", "--runs", "1", "-j", "1", &file]).stdout).unwrap();
    assert!(default.contains("(best this CPU supports)"), "{default}");
}

/// An option that would not change what a mode measures is refused with
/// it, rather than ignored: the floor runs no kernel and no grammar, a
/// dataset (`--lines`) no search kernel, and `--once` runs once.
#[test]
fn options_a_mode_would_ignore_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f.txt");
    fs::write(&file, "urn:ab:c\n").unwrap();
    let f = file.to_str().unwrap();
    for args in [
        &["--floor", "--kernel", "sse2"][..],
        &["--floor", "--prefetch", "on"],
        &["--floor", "--rfc2141"],
        &["--floor", "--lines"],
        &["--lines", "--kernel", "scalar"],
        &["--lines", "--prefetch", "off"],
        &["--floor", "--once", "--runs", "2"],
    ] {
        let o = urnscan(&[&["bench"][..], args, &[f]].concat());
        assert_eq!((o.status.code(), o.stdout.len()), (Some(2), 0), "{args:?}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("cannot be used with"), "{args:?}");
    }
}
