//! The generator's ground truth against the real scanner.
//!
//! `urnscan::corpus` plants URNs by the written scanner rules; these tests check
//! that `Scanner` finds exactly the planted URNs (offset, extent, key) and
//! nothing in the decoys, on corpora of several shapes and densities, and
//! that the dataset truth (keys, counts, first-seen order) is what parsing
//! every line gives. They also exercise the public API end to end, the TSV
//! truth format included.

use std::collections::HashMap;

use urnscan::corpus::{
    generate_dataset, generate_text, write_key_count_tsv_line, write_truth_tsv_line, DatasetConfig, TextConfig,
};
use urnscan::{parse, Event, ExtractOptions, Grammar, Scanner};

/// Generates a corpus and its truth TSV, then reads the TSV back.
fn corpus(cfg: &TextConfig) -> (Vec<u8>, Vec<(usize, String, String)>) {
    let (mut text, mut tsv) = (Vec::new(), Vec::new());
    let summary = generate_text(cfg, &mut text, Some(&mut |p| write_truth_tsv_line(&mut tsv, &p).unwrap())).unwrap();
    assert_eq!(summary.bytes, cfg.size);
    let truth: Vec<(usize, String, String)> = String::from_utf8(tsv)
        .unwrap()
        .lines()
        .map(|line| {
            let mut cols = line.split('\t');
            let offset = cols.next().unwrap().parse().unwrap();
            let (urn, key) = (cols.next().unwrap().to_owned(), cols.next().unwrap().to_owned());
            assert_eq!(cols.next(), None);
            (offset, urn, key)
        })
        .collect();
    assert_eq!(truth.len() as u64, summary.planted);
    (text, truth)
}

fn found_urns(events: &[Event]) -> Vec<(usize, usize)> {
    events
        .iter()
        .filter_map(|e| match *e {
            Event::Urn { offset, len } => Some((offset, len)),
            Event::Rejected { .. } => None,
        })
        .collect()
}

#[test]
fn scanner_finds_exactly_the_planted_urns() {
    let scanner = Scanner::new(ExtractOptions::default());
    for (seed, urns_per_mib, decoys_per_mib) in [(7, 200, 50), (1, 3000, 1000), (2, 20_000, 5000), (3, 0, 20_000)] {
        let cfg = TextConfig { size: 3 << 20, seed, urns_per_mib, decoys_per_mib };
        let (text, truth) = corpus(&cfg);
        let expected: Vec<(usize, usize)> = truth.iter().map(|(o, u, _)| (*o, u.len())).collect();
        let found = found_urns(&scanner.scan_sequential(&text));
        if found != expected {
            let i = found.iter().zip(&expected).position(|(a, b)| a != b).unwrap_or(found.len().min(expected.len()));
            let at = expected.get(i).or(found.get(i)).map_or(0, |p| p.0);
            let near = String::from_utf8_lossy(&text[at.saturating_sub(40)..(at + 120).min(text.len())]);
            panic!("seed {seed}: expected {:?}, scanner {:?}, near {near:?}", expected.get(i), found.get(i));
        }
        // The parallel scan agrees, and keys are the library's.
        assert_eq!(found_urns(&scanner.scan(&text)), expected, "seed {seed}");
        for (offset, urn, key) in &truth {
            assert_eq!(&text[*offset..offset + urn.len()], urn.as_bytes());
            assert_eq!(parse(urn.as_bytes(), Grammar::Rfc8141).unwrap().key(), key.as_str());
        }
    }
}

#[test]
fn dataset_truth_is_what_the_lines_say() {
    let cfg = DatasetConfig { lines: 50_000, distinct: 12_000, seed: 7, invalid_per_mille: 20 };
    let (mut text, mut tsv) = (Vec::new(), Vec::new());
    let summary =
        generate_dataset(&cfg, &mut text, Some(&mut |k| write_key_count_tsv_line(&mut tsv, &k).unwrap())).unwrap();
    let (mut order, mut counts, mut invalid) = (Vec::new(), HashMap::new(), 0u64);
    for line in text.strip_suffix(b"\n").unwrap().split(|&b| b == b'\n') {
        match parse(line, Grammar::Rfc8141) {
            Ok(urn) => {
                let count = counts.entry(urn.key().into_owned()).or_insert(0u64);
                if *count == 0 {
                    order.push(urn.key().into_owned());
                }
                *count += 1;
            }
            Err(_) => invalid += 1,
        }
    }
    let expected: String = order.iter().map(|k| format!("{k}\t{}\n", counts[k])).collect();
    assert_eq!(String::from_utf8(tsv).unwrap(), expected);
    assert_eq!(invalid, 50_000 * 20 / 1000);
    assert_eq!((summary.planted, summary.decoys, summary.distinct_keys), (50_000 - invalid, invalid, 12_000));
    // Scanning the dataset finds one URN per valid line, none in invalid ones.
    let found = found_urns(&Scanner::new(ExtractOptions::default()).scan(&text));
    assert_eq!(found.len() as u64, summary.planted);
}
