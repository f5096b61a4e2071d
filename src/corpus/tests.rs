//! Expected values come from the scanner rules as written (a naive
//! reference scanner below), from RFC 8141 §3 (an independent key
//! function), and from the configuration, never from the generator.

use super::classes::ISBN_BODIES;
use super::vocabulary::{
    COMPONENTS, COUNTRIES, DIRS, EXTENSIONS, HOSTS, ID_PREFIXES, JSON_LEVELS, LANGS, LEVELS, NON_ASCII_SNIPPETS,
    NON_ASCII_WORDS, WORDS, XML_TAGS,
};
use super::writers::format_date;
use super::*;
use crate::grammar::parse_prefix;
use std::collections::{HashMap, HashSet};

struct TextRun {
    text: Vec<u8>,
    planted: Vec<(u64, String, String)>,
    decoys: Vec<(u64, usize)>,
    summary: GenSummary,
}

fn text_cfg(size: u64, seed: u64, urns_per_mib: u32, decoys_per_mib: u32) -> TextConfig {
    TextConfig { size, seed, urns_per_mib, decoys_per_mib }
}

fn run_text(cfg: &TextConfig) -> TextRun {
    let (mut text, mut planted, mut decoys) = (Vec::new(), Vec::new(), Vec::new());
    let summary = generate_text_traced(
        cfg,
        &mut text,
        Some(&mut |p: Planted<'_>| planted.push((p.offset, p.urn.to_owned(), p.key.to_owned()))),
        Some(&mut |offset, len| decoys.push((offset, len))),
    )
    .unwrap();
    TextRun { text, planted, decoys, summary }
}

/// The scanner rules of the brief, applied one byte at a time.
fn reference_scan(text: &[u8]) -> Vec<(usize, usize)> {
    let mut found = Vec::new();
    let mut i = 0;
    while i + 4 <= text.len() {
        if text[i..i + 4].eq_ignore_ascii_case(b"urn:") && may_start(text, i) {
            if let Some(len) = urn_at(text, i) {
                found.push((i, len));
                i += len; // rule 4
                continue;
            }
        }
        i += 1;
    }
    found
}

/// Not preceded by a URI-scheme character, unless it ends a `%HH`.
fn may_start(text: &[u8], i: usize) -> bool {
    let scheme_char = |b: u8| b.is_ascii_alphanumeric() || b"+-.".contains(&b);
    i == 0
        || !scheme_char(text[i - 1])
        || (i >= 3 && text[i - 3] == b'%' && text[i - 2].is_ascii_hexdigit() && text[i - 1].is_ascii_hexdigit())
}

fn urn_at(text: &[u8], i: usize) -> Option<usize> {
    let mut end = text.len();
    if i > 0 && text[i - 1] == b'\'' {
        // Rule 2.
        if let Some(q) = text[i..].iter().position(|&b| b == b'\'') {
            end = i + q;
        }
    }
    // Rule 1.
    let mut len = parse_prefix(&text[i..end], Grammar::Rfc8141).ok()?.len();
    // Rule 3'': the marks before, nearest first, closing in that order.
    let mut marks: Vec<u8> = text[..i].iter().rev().take(3).take_while(|b| b"*_~".contains(b)).copied().collect();
    if marks.len() < 3 && i > marks.len() && text[i - marks.len() - 1].is_ascii_alphanumeric() {
        marks.clear();
    }
    loop {
        // Rule 3.
        let mut cut = len;
        while cut > 0 && trimmable(&text[i..i + cut]) {
            cut -= 1;
        }
        if !marks.is_empty() && text[i..i + cut].ends_with(&marks) {
            cut -= marks.len();
            marks.clear();
            while cut > 0 && trimmable(&text[i..i + cut]) {
                cut -= 1;
            }
        }
        if cut == len {
            return Some(len);
        }
        len = parse_prefix(&text[i..i + cut], Grammar::Rfc8141).ok()?.len();
    }
}

fn trimmable(s: &[u8]) -> bool {
    let count = |c: u8| s.iter().filter(|&&b| b == c).count();
    match s.last() {
        Some(b'.' | b',' | b';' | b':' | b'!' | b'?' | b'\'' | b'#') => true,
        Some(b')') => count(b')') > count(b'('),
        _ => false,
    }
}

/// RFC 8141 §3: lower-case scheme and NID, upper-case percent hex,
/// components dropped.
fn rfc_key(urn: &str) -> String {
    let end = ["?+", "?=", "#"].iter().filter_map(|c| urn.find(c)).min().unwrap_or(urn.len());
    let name = &urn[..end];
    let nid_end = 4 + name[4..].find(':').unwrap();
    let mut key = name[..=nid_end].to_ascii_lowercase();
    let nss = &name.as_bytes()[nid_end + 1..];
    let mut i = 0;
    while i < nss.len() {
        if nss[i] == b'%' {
            key.push('%');
            key.push(char::from(nss[i + 1].to_ascii_uppercase()));
            key.push(char::from(nss[i + 2].to_ascii_uppercase()));
            i += 3;
        } else {
            key.push(char::from(nss[i]));
            i += 1;
        }
    }
    key
}

fn urn_colon_hits(text: &[u8]) -> Vec<usize> {
    (0..text.len().saturating_sub(3)).filter(|&i| text[i..i + 4].eq_ignore_ascii_case(b"urn:")).collect()
}

#[test]
fn same_seed_same_bytes_other_seed_other_bytes() {
    let a = run_text(&text_cfg(300_000, 7, 1000, 300));
    let b = run_text(&text_cfg(300_000, 7, 1000, 300));
    let c = run_text(&text_cfg(300_000, 8, 1000, 300));
    assert!(a.text == b.text && a.planted == b.planted && a.summary == b.summary);
    assert_ne!(a.text, c.text);
    assert_ne!(a.planted, c.planted);
}

#[test]
fn size_is_exact_and_text_is_utf8() {
    for size in [0, 1, 2, 17, 100, 1000, 65_536, 300_001] {
        let run = run_text(&text_cfg(size, 3, 5000, 2000));
        assert_eq!(run.text.len() as u64, size);
        assert_eq!(run.summary.bytes, size);
        assert!(std::str::from_utf8(&run.text).is_ok(), "size {size}");
        if size > 0 {
            assert_eq!(run.text.last(), Some(&b'\n'));
        }
        assert_eq!(run.planted.len() as u64, run.summary.planted);
        assert_eq!(run.decoys.len() as u64, run.summary.decoys);
    }
}

#[test]
fn truth_is_what_the_scanner_rules_report() {
    for (seed, urns, decoys) in [(7, 2000, 1000), (1, 200, 50), (2, 20_000, 5000)] {
        let run = run_text(&text_cfg(2 << 20, seed, urns, decoys));
        let truth: Vec<(usize, usize)> = run.planted.iter().map(|(o, u, _)| (*o as usize, u.len())).collect();
        let scanned = reference_scan(&run.text);
        if truth != scanned {
            let first = truth.iter().zip(&scanned).position(|(a, b)| a != b).unwrap_or(truth.len().min(scanned.len()));
            let at = truth.get(first).or(scanned.get(first)).map_or(0, |p| p.0);
            let context = String::from_utf8_lossy(&run.text[at.saturating_sub(40)..(at + 120).min(run.text.len())]);
            panic!("seed {seed}: truth {:?} scan {:?} near {context:?}", truth.get(first), scanned.get(first));
        }
        assert!(run.planted.len() > 100, "seed {seed}");
    }
}

#[test]
fn planted_urns_sit_at_their_offsets_with_their_keys() {
    let run = run_text(&text_cfg(1 << 20, 11, 3000, 0));
    let mut last_end = 0;
    for (offset, urn, key) in &run.planted {
        let at = *offset as usize;
        assert!(at >= last_end, "offset order / overlap at {at}");
        assert_eq!(&run.text[at..at + urn.len()], urn.as_bytes());
        let parsed = parse(urn.as_bytes(), Grammar::Rfc8141).unwrap();
        assert_eq!(parsed.key(), key.as_str());
        assert_eq!(rfc_key(urn), *key, "{urn}");
        last_end = at + urn.len();
    }
}

#[test]
fn every_urn_colon_is_planted_or_a_decoy() {
    let run = run_text(&text_cfg(2 << 20, 5, 1000, 1000));
    let mut covered = vec![false; run.text.len()];
    let spans = run
        .planted
        .iter()
        .map(|(o, u, _)| (*o as usize, u.len()))
        .chain(run.decoys.iter().map(|&(o, l)| (o as usize, l)));
    for (start, len) in spans {
        covered[start..start + len].iter_mut().for_each(|c| *c = true);
    }
    for hit in urn_colon_hits(&run.text) {
        let context = String::from_utf8_lossy(&run.text[hit.saturating_sub(30)..(hit + 30).min(run.text.len())]);
        assert!(covered[hit] && covered[hit + 3], "stray urn: at {hit}: {context:?}");
    }
    // Each decoy holds exactly one `urn:` and yields no URN on its own.
    for &(offset, len) in &run.decoys {
        let decoy = &run.text[offset as usize..offset as usize + len];
        assert_eq!(urn_colon_hits(decoy).len(), 1, "{:?}", String::from_utf8_lossy(decoy));
        assert!(reference_scan(decoy).is_empty(), "{:?}", String::from_utf8_lossy(decoy));
    }
}

#[test]
fn decoys_alone_yield_nothing() {
    let run = run_text(&text_cfg(1 << 20, 9, 0, 20_000));
    assert!(run.planted.is_empty());
    assert!(run.summary.decoys > 10_000, "{}", run.summary.decoys);
    assert_eq!(reference_scan(&run.text), vec![]);
    assert!(urn_colon_hits(&run.text).len() as u64 >= run.summary.decoys);
}

#[test]
fn density_follows_the_configuration() {
    let run = run_text(&text_cfg(4 << 20, 3, 200, 50));
    // 4 MiB at 200 and 50 per MiB.
    assert!((720..=880).contains(&run.summary.planted), "{}", run.summary.planted);
    assert!((170..=230).contains(&run.summary.decoys), "{}", run.summary.decoys);
    let none = run_text(&text_cfg(1 << 20, 3, 0, 0));
    assert_eq!((none.summary.planted, none.summary.decoys), (0, 0));
    assert!(urn_colon_hits(&none.text).is_empty());
}

#[test]
fn about_30_percent_respell_earlier_classes() {
    let run = run_text(&text_cfg(2 << 20, 4, 2000, 0));
    let keys: HashSet<&str> = run.planted.iter().map(|(_, _, k)| k.as_str()).collect();
    assert_eq!(keys.len() as u64, run.summary.distinct_keys);
    let planted = run.summary.planted as f64;
    let repeats = (planted - keys.len() as f64) / planted;
    assert!((0.24..=0.36).contains(&repeats), "{repeats}");
    // Some repeats are spelled differently from the first occurrence.
    let mut first: HashMap<&str, &str> = HashMap::new();
    let respelled = run.planted.iter().filter(|(_, u, k)| *first.entry(k).or_insert(u) != u.as_str()).count();
    assert!(respelled > 100, "{respelled}");
}

#[test]
fn spellings_shapes_and_contexts_vary() {
    let run = run_text(&text_cfg(4 << 20, 21, 2000, 0));
    let has = |f: &dyn Fn(&str) -> bool| run.planted.iter().any(|(_, u, _)| f(u));
    assert!(has(&|u| u.starts_with("URN:")));
    assert!(has(&|u| u.starts_with("Urn:")));
    let nid = |u: &str| u[4..4 + u[4..].find(':').unwrap()].to_owned();
    assert!(has(&|u| nid(u).bytes().any(|b| b.is_ascii_uppercase())));
    assert!(has(&|u| u.contains("?+")));
    assert!(has(&|u| u.contains("?=")));
    assert!(has(&|u| u.contains('#')));
    assert!(has(&|u| u.contains('(') && u.ends_with(')')));
    assert!(has(&|u| u.contains('\'')));
    for c in [':', '/', ';', '=', '@', '~', '$', '&', '*', '+', ','] {
        assert!(has(&|u| u[nid(u).len() + 5..].contains(c)), "no {c:?} in an NSS");
    }
    assert!(has(&|u| u.as_bytes().windows(3).any(|w| w[0] == b'%' && w[1..].iter().any(u8::is_ascii_lowercase))));
    let nids: HashSet<String> = run.planted.iter().map(|(_, _, k)| nid(k)).collect();
    for family in ["isbn", "uuid", "ietf", "oid", "nbn", "epc", "iso", "mpeg", "example", "urn"] {
        assert!(nids.contains(family), "{family}");
    }
    assert!(nids.iter().any(|n| n.starts_with("urn-")));
    assert!(nids.iter().any(|n| n.starts_with("x-")));
    assert!(nids.iter().any(|n| n.len() == 2));
    assert!(nids.iter().any(|n| n.len() > 20));
    let text = &run.text;
    let before: HashSet<u8> = run.planted.iter().filter(|p| p.0 > 0).map(|p| text[p.0 as usize - 1]).collect();
    for b in b" \"'(=>\n\t<[`" {
        assert!(before.contains(b), "never after {:?}", char::from(*b));
    }
    assert!(run.planted.iter().any(|p| p.0 >= 3 && text[p.0 as usize - 3] == b'%'));
    let after: HashSet<u8> = run.planted.iter().map(|(o, u, _)| text[*o as usize + u.len()]).collect();
    for b in b" \"'.,;:!?)<>]`\n\t" {
        assert!(after.contains(b), "never before {:?}", char::from(*b));
    }
}

#[test]
fn classes_are_valid_distinct_and_in_key_form() {
    let catalog = Catalog::new();
    let mut class = Vec::new();
    for seed in [0, 7] {
        let mut seen = HashSet::new();
        for index in (0..40_000).chain(ISBN_BODIES - 5..ISBN_BODIES + 5).chain(u64::MAX - 5..=u64::MAX) {
            let nid_end = class_urn(&catalog, seed, index, &mut class);
            let urn = parse(&class, Grammar::Rfc8141).unwrap_or_else(|e| panic!("{}: {e:?}", ascii(&class)));
            assert_eq!(urn.nid_range().end, nid_end);
            assert_eq!(urn.key(), ascii(&class));
            assert_eq!(rfc_key(ascii(&class)), ascii(&class));
            assert!(!b".,;:!?'".contains(class.last().unwrap()), "{}", ascii(&class));
            assert!(seen.insert(class.clone()), "duplicate key {}", ascii(&class));
        }
    }
}

#[test]
fn spellings_keep_the_key_and_end_safely() {
    let catalog = Catalog::new();
    let (mut class, mut out) = (Vec::new(), Vec::new());
    let mut rng = Rng::new(1);
    for index in 0..20_000 {
        let nid_end = class_urn(&catalog, 3, index, &mut class);
        out.clear();
        render_spelling(&mut rng, &class, nid_end, &mut out);
        let spelled = ascii(&out).to_owned();
        assert_eq!(parse(&out, Grammar::Rfc8141).unwrap().key(), ascii(&class), "{spelled}");
        // Followed by a space, the scanner takes exactly the spelling.
        out.push(b'.');
        assert_eq!(reference_scan(&out), vec![(0, out.len() - 1)], "{spelled}");
    }
}

#[test]
fn vocabulary_never_spells_urn() {
    let lists: &[&[&str]] = &[
        WORDS,
        NON_ASCII_WORDS,
        NON_ASCII_SNIPPETS,
        LEVELS,
        JSON_LEVELS,
        COMPONENTS,
        ID_PREFIXES,
        XML_TAGS,
        HOSTS,
        DIRS,
        EXTENSIONS,
        LANGS,
        COUNTRIES,
    ];
    for word in lists.iter().flat_map(|l| l.iter()) {
        assert!(!word.to_ascii_lowercase().contains("urn"), "{word}");
        assert!(!word.contains(':') && !word.contains('%'), "{word}");
    }
    assert!(WORDS.iter().all(|w| w.bytes().all(|b| b.is_ascii_lowercase())));
}

#[test]
fn dates_match_the_calendar() {
    assert_eq!(&format_date(0), b"1970-01-01");
    assert_eq!(&format_date(11_016), b"2000-02-29");
    assert_eq!(&format_date(19_723), b"2024-01-01");
    assert_eq!(&format_date(19_782), b"2024-02-29");
}

#[test]
fn truth_tsv_lines() {
    let mut out = Vec::new();
    write_truth_tsv_line(&mut out, &Planted { offset: 42, urn: "URN:ISBN:1", key: "urn:isbn:1" }).unwrap();
    write_key_count_tsv_line(&mut out, &KeyCount { key: "urn:isbn:1", count: 3 }).unwrap();
    assert_eq!(out, b"42\tURN:ISBN:1\turn:isbn:1\nurn:isbn:1\t3\n");
}

struct DatasetRun {
    text: Vec<u8>,
    truth: Vec<(String, u64)>,
    summary: GenSummary,
}

fn run_dataset(cfg: &DatasetConfig) -> io::Result<DatasetRun> {
    let (mut text, mut truth) = (Vec::new(), Vec::new());
    let summary =
        generate_dataset(cfg, &mut text, Some(&mut |k: KeyCount<'_>| truth.push((k.key.to_owned(), k.count))))?;
    Ok(DatasetRun { text, truth, summary })
}

#[test]
fn dataset_truth_counts_the_lines() {
    let cfg = DatasetConfig { lines: 30_000, distinct: 8_000, seed: 5, invalid_per_mille: 25 };
    let run = run_dataset(&cfg).unwrap();
    assert_eq!(run.text.len() as u64, run.summary.bytes);
    let lines: Vec<&[u8]> = run.text.strip_suffix(b"\n").unwrap().split(|&b| b == b'\n').collect();
    assert_eq!(lines.len(), 30_000);
    let (mut order, mut counts, mut invalid) = (Vec::new(), HashMap::new(), 0u64);
    for line in &lines {
        match parse(line, Grammar::Rfc8141) {
            Ok(urn) => {
                let key = urn.key().into_owned();
                assert_eq!(rfc_key(urn.as_str()), key);
                assert_eq!(reference_scan(line), vec![(0, line.len())], "{}", urn.as_str());
                let count = counts.entry(key.clone()).or_insert(0u64);
                if *count == 0 {
                    order.push(key);
                }
                *count += 1;
            }
            Err(_) => {
                invalid += 1;
                assert!(reference_scan(line).is_empty(), "{}", String::from_utf8_lossy(line));
            }
        }
    }
    assert_eq!(invalid, 30_000 * 25 / 1000);
    assert_eq!(order.len(), 8_000);
    let expected: Vec<(String, u64)> = order.into_iter().map(|k| (k.clone(), counts[&k])).collect();
    assert_eq!(run.truth, expected);
    let s = run.summary;
    assert_eq!((s.planted, s.decoys, s.distinct_keys), (30_000 - invalid, invalid, 8_000));
    // Lines respell their class: case and components vary.
    let spelled_as_key = lines.iter().filter(|l| counts.contains_key(ascii(l))).count();
    // About 0.86 * 0.82 * 0.72 of the valid lines keep every part as in the key.
    assert!(spelled_as_key < lines.len() * 7 / 10 && spelled_as_key > lines.len() * 3 / 10, "{spelled_as_key}");
}

#[test]
fn dataset_is_deterministic_and_seeded() {
    let cfg = DatasetConfig { lines: 5_000, distinct: 1_000, seed: 1, invalid_per_mille: 10 };
    let a = run_dataset(&cfg).unwrap();
    let b = run_dataset(&cfg).unwrap();
    let c = run_dataset(&DatasetConfig { seed: 2, ..cfg }).unwrap();
    assert!(a.text == b.text && a.truth == b.truth);
    assert_ne!(a.text, c.text);
}

#[test]
fn dataset_edge_cases() {
    let clamped = run_dataset(&DatasetConfig { lines: 100, distinct: 1_000, seed: 0, invalid_per_mille: 100 }).unwrap();
    assert_eq!((clamped.summary.planted, clamped.summary.distinct_keys), (90, 90));
    assert!(clamped.truth.iter().all(|(_, n)| *n == 1));
    let empty = run_dataset(&DatasetConfig { lines: 0, distinct: 5, seed: 0, invalid_per_mille: 0 }).unwrap();
    assert!(empty.text.is_empty() && empty.truth.is_empty());
    let all_bad = run_dataset(&DatasetConfig { lines: 50, distinct: 0, seed: 0, invalid_per_mille: 1000 }).unwrap();
    assert_eq!((all_bad.summary.decoys, all_bad.summary.planted), (50, 0));
    let none = run_dataset(&DatasetConfig { lines: 10, distinct: 0, seed: 0, invalid_per_mille: 0 });
    assert_eq!(none.err().map(|e| e.kind()), Some(io::ErrorKind::InvalidInput));
    let huge =
        run_dataset(&DatasetConfig { lines: u64::from(u32::MAX) + 1, distinct: 1, seed: 0, invalid_per_mille: 0 });
    assert_eq!(huge.err().map(|e| e.kind()), Some(io::ErrorKind::InvalidInput));
}

// Throughput, for the record (no assertion), e.g.
// `cargo test --release --lib corpus::tests::throughput -- --ignored --nocapture`.

fn report(what: &str, bytes: u64, start: std::time::Instant) {
    let secs = start.elapsed().as_secs_f64();
    println!("{what}: {bytes} bytes in {secs:.2} s, {:.0} MB/s", bytes as f64 / secs / 1e6);
}

#[test]
#[ignore = "measures throughput; run in release"]
fn throughput_text() {
    let cfg = TextConfig { size: 1 << 30, seed: 7, urns_per_mib: 200, decoys_per_mib: 50 };
    let start = std::time::Instant::now();
    let s = generate_text(&cfg, &mut io::sink(), None).unwrap();
    report("text, 200 URNs/MiB, no truth", s.bytes, start);
}

#[test]
#[ignore = "measures throughput; run in release"]
fn throughput_text_with_truth() {
    let cfg = TextConfig { size: 1 << 30, seed: 7, urns_per_mib: 200, decoys_per_mib: 50 };
    let mut truth = Vec::new();
    let start = std::time::Instant::now();
    let s = generate_text(&cfg, &mut io::sink(), Some(&mut |p| write_truth_tsv_line(&mut truth, &p).unwrap())).unwrap();
    report("text, 200 URNs/MiB, TSV truth", s.bytes, start);
    let cfg = TextConfig { urns_per_mib: 5000, ..cfg };
    truth.clear();
    let start = std::time::Instant::now();
    let s = generate_text(&cfg, &mut io::sink(), Some(&mut |p| write_truth_tsv_line(&mut truth, &p).unwrap())).unwrap();
    report("text, 5000 URNs/MiB, TSV truth", s.bytes, start);
}

#[test]
#[ignore = "measures throughput; run in release"]
fn throughput_dataset() {
    let cfg = DatasetConfig { lines: 10_000_000, distinct: 3_000_000, seed: 7, invalid_per_mille: 10 };
    let mut keys = 0u64;
    let start = std::time::Instant::now();
    let s = generate_dataset(&cfg, &mut io::sink(), Some(&mut |_| keys += 1)).unwrap();
    report(&format!("dataset, 10M lines, {keys} keys"), s.bytes, start);
}
