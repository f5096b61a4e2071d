//! The shipped datasets against their hand-derived expectations
//! (`datasets/expected/README.md` explains each one from the rules).

use std::path::Path;
use std::process::{Command, Output};

fn urnscan(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .current_dir(Path::new(env!("CARGO_MANIFEST_DIR")))
        .args(args)
        .output()
        .expect("run urnscan")
}

fn read(path: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(path)).unwrap()
}

#[test]
fn corpus_unique_matches_the_hand_written_expectation() {
    for threads in ["-j1", "-j2"] {
        let o = urnscan(&["scan", "--unique", threads, "datasets/corpus"]);
        assert_eq!(o.status.code(), Some(0));
        assert_eq!(String::from_utf8(o.stdout).unwrap(), read("datasets/expected/unique.txt"), "{threads}");
    }
}

#[test]
fn corpus_occurrences_match_the_hand_written_expectation() {
    let o = urnscan(&["scan", "--format", "jsonl", "datasets/corpus"]);
    let got: String = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let path = v["path"].as_str().unwrap().trim_start_matches("datasets/corpus/").to_owned();
            format!("{path}\t{}\n", v["urn"].as_str().unwrap())
        })
        .collect();
    assert_eq!(got, read("datasets/expected/occurrences.txt"));
}

#[test]
fn every_scanned_urn_passes_check_with_the_same_key() {
    let o = urnscan(&["scan", "--format", "jsonl", "datasets/corpus"]);
    let found: Vec<serde_json::Value> =
        String::from_utf8(o.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let urns: Vec<&str> = found.iter().map(|v| v["urn"].as_str().unwrap()).collect();
    let mut args = vec!["check", "--format", "jsonl"];
    args.extend(&urns);
    let checked = urnscan(&args);
    assert_eq!(checked.status.code(), Some(0), "every reported URN is valid");
    for (line, scanned) in String::from_utf8(checked.stdout).unwrap().lines().zip(&found) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["key"], scanned["key"]);
        assert_eq!(v["nid"].as_str().unwrap().to_ascii_lowercase(), scanned["nid"].as_str().unwrap());
    }
}

#[test]
fn valid_list_is_all_valid() {
    let o = Command::new(env!("CARGO_BIN_EXE_urnscan"))
        .args(["check", "--format", "jsonl"])
        .stdin(std::fs::File::open(Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/urns/valid.txt")).unwrap())
        .output()
        .unwrap();
    let lines = String::from_utf8(o.stdout).unwrap();
    assert!(lines.lines().count() >= 60);
    for line in lines.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["valid"], true, "{line}");
    }
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn invalid_list_has_the_annotated_kind_and_offset() {
    let table = read("datasets/urns/invalid.tsv");
    let rows: Vec<Vec<&str>> = table.lines().skip(1).map(|l| l.split('\t').collect()).collect();
    assert!(rows.len() >= 40);
    let mut args = vec!["check", "--format", "jsonl"];
    args.extend(rows.iter().map(|r| r[0]));
    let o = urnscan(&args);
    assert_eq!(o.status.code(), Some(1));
    for (line, row) in String::from_utf8(o.stdout).unwrap().lines().zip(&rows) {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["error"]["kind"], row[1], "{}", row[0]);
        assert_eq!(v["error"]["offset"].to_string(), row[2], "{}", row[0]);
    }
}
