//! Tests of line deduplication: lines, keys, namespace rules through the
//! engine, positions, orders, streams and long lines, spilling.

use super::judge::partition;
use super::*;
use crate::dedup::sorted;
use std::fs;

#[test]
fn line_ranges_cover_the_bytes_in_whole_lines_of_about_the_target() {
    let mut bytes = Vec::new();
    for i in 0..500 {
        bytes.extend_from_slice(format!("urn:ab:{}\n", "x".repeat(i % 97)).as_bytes());
        if i % 50 == 0 {
            bytes.extend_from_slice(&[b'y'; 400]); // a line longer than most targets
        }
    }
    bytes.extend_from_slice(b"no final newline");
    for target in [1, 7, 100, 4096, bytes.len(), bytes.len() + 1] {
        let ranges = line_ranges(&bytes, target);
        let mut at = 0;
        for (i, r) in ranges.iter().enumerate() {
            assert_eq!(r.start, at, "target {target}: range {i} does not follow the one before");
            at = r.end;
            if i + 1 == ranges.len() {
                continue;
            }
            let range = &bytes[r.clone()];
            assert!(range.ends_with(b"\n"), "target {target}: range {i} ends inside a line");
            // Longer than the target only as one line.
            assert!(range.len() <= target || !range[..range.len() - 1].contains(&b'\n'), "target {target}: range {i}");
        }
        assert_eq!(at, bytes.len(), "target {target}");
    }
    assert!(line_ranges(b"", 10).is_empty());
}

#[test]
fn trimming() {
    assert_eq!(trim_line(b"  urn:ab:c \r"), b"urn:ab:c");
    assert_eq!(trim_line(b"\t\r"), b"");
    assert_eq!(trim_line(b""), b"");
    assert_eq!(trim_line(b"urn:ab:c d"), b"urn:ab:c d");
}

/// A UTF-8 byte-order mark at the start of an input is no part of its
/// first line (Notepad and Excel write one), in every input, whole or read
/// in small blocks; U+FEFF at the start of a later line is part of that
/// line, a non-ASCII byte (RFC 8141 §2: a URN is ASCII), and rejected.
#[test]
fn a_utf8_mark_before_the_first_line_is_ignored() {
    let a: &[u8] = b"\xEF\xBB\xBFurn:isbn:0451450523\nURN:ISBN:0451450523\n\xEF\xBB\xBFurn:ab:c\n";
    // A mark before an empty line, then a line of U+FEFF alone.
    let b: &[u8] = b"\xEF\xBB\xBF\n\xEF\xBB\xBF";
    let small = DedupOptions { block_size: 1, ..opts() };
    for (opts, stream) in [(opts(), false), (opts(), true), (small.clone(), false), (small, true)] {
        let (classes, rejects, counts) = run(opts, &[a, b], Order::FirstSeen, stream);
        assert_eq!(classes, [("urn:isbn:0451450523".to_owned(), 2, 0, 1)], "stream {stream}");
        let want = [(0, 3, "non-ascii", "\u{feff}urn:ab:c".to_owned()), (1, 2, "non-ascii", "\u{feff}".to_owned())];
        assert_eq!(rejects, want, "stream {stream}");
        assert_eq!((counts.lines, counts.valid, counts.empty, counts.invalid_total()), (5, 2, 1, 2));
    }
}

/// Progress counts the bytes of each input fed, its UTF-8 mark too, as
/// blocks or as a stream, except those of a decoded input (its own bytes
/// are counted as it is read); the results are the same either way.
#[test]
fn progress_counts_every_byte_fed_but_not_decoded_ones() {
    let a: &[u8] = b"\xEF\xBB\xBFurn:isbn:0451450523\nURN:ISBN:0451450523\nnot a urn\n";
    let b = mixed_input(5_000);
    for block_size in [1, DEFAULT_BLOCK_SIZE] {
        let results = ["bytes", "reader", "decoded reader"].map(|how| {
            let progress = Arc::new(AtomicU64::new(0));
            let mut dedup =
                LineDedup::new(DedupOptions { block_size, progress: Some(Arc::clone(&progress)), ..opts() });
            let mut sink = |_: &Reject<'_>| Ok(());
            for (i, input) in [a, &b[..]].into_iter().enumerate() {
                match how {
                    "bytes" => dedup.add_bytes(input, i as u32, &mut sink),
                    "reader" => dedup.add_reader(&mut &input[..], i as u32, &mut sink),
                    _ => dedup.add_decoded_reader(&mut &input[..], i as u32, &mut sink),
                }
                .unwrap();
            }
            let counts = dedup.counts().clone();
            (progress.load(AtomicOrdering::Relaxed), counts, classes_of(dedup, Order::Key))
        });
        let fed = (a.len() + b.len()) as u64;
        assert_eq!([results[0].0, results[1].0, results[2].0], [fed, fed, 0], "block {block_size}");
        assert_eq!(results[0].1, results[2].1, "block {block_size}");
        assert_eq!(results[1].2, results[2].2, "block {block_size}");
    }
}

fn opts() -> DedupOptions {
    DedupOptions::default()
}

/// (first form, count, first file, first line) of every class, and the
/// rejects as (file, line, kind, text).
type Classes = Vec<(String, u64, u32, u64)>;
type Rejects = Vec<(u32, u64, &'static str, String)>;

fn run(opts: DedupOptions, inputs: &[&[u8]], order: Order, stream: bool) -> (Classes, Rejects, LineCounts) {
    let mut dedup = LineDedup::new(opts);
    let mut rejects = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let mut sink = |r: &Reject<'_>| {
            rejects.push((r.file, r.line, r.error.kind().as_str(), String::from_utf8_lossy(r.text).into_owned()));
            Ok(())
        };
        if stream {
            dedup.add_reader(&mut &input[..], i as u32, &mut sink).unwrap();
        } else {
            dedup.add_bytes(input, i as u32, &mut sink).unwrap();
        }
    }
    let counts = dedup.counts().clone();
    (classes_of(dedup, order), rejects, counts)
}

/// The classes `dedup` ends with, in `order`.
fn classes_of(dedup: LineDedup, order: Order) -> Classes {
    let mut classes = Vec::new();
    dedup
        .finish(order, &mut |e| {
            classes.push((
                String::from_utf8_lossy(&e.raw.to_vec()).into_owned(),
                e.count,
                e.first.file,
                e.first.offset,
            ));
            Ok(())
        })
        .unwrap();
    classes
}

/// A stream that fails (a corrupt archive): the whole lines before the
/// failure count as if the input had ended after them, and the line it
/// cut short does not (it may be a URN cut short, `urn:isbn:978` of
/// `urn:isbn:9780451450523`); the error is returned. Cuts in the first
/// block, past it, right after a line break, inside a line longer than
/// a block.
#[test]
fn a_read_error_keeps_the_whole_lines_before_it() {
    use crate::source::FailsOnce;
    let mut text: Vec<u8> = (0..20_000).flat_map(|i| format!("urn:ab:{i}\nURN:AB:{}\n", i / 2).into_bytes()).collect();
    let long = text.len();
    text.extend_from_slice(b"urn:ab:");
    text.resize(text.len() + (100 << 10), b'x');
    text.extend_from_slice(b"\nurn:ab:last\n");
    let nl = text.iter().position(|&b| b == b'\n').unwrap();
    for cut in [0, 3, nl, nl + 1, nl + 2, 70_000, 150_001, long, long + 9, long + (80 << 10), text.len() - 3] {
        let whole = text[..cut].iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let expected = run(opts(), &[&text[..whole]], Order::FirstSeen, true);
        let mut dedup = LineDedup::new(opts());
        let mut rejects: Rejects = Vec::new();
        let mut sink = |r: &Reject<'_>| {
            rejects.push((r.file, r.line, r.error.kind().as_str(), String::from_utf8_lossy(r.text).into_owned()));
            Ok(())
        };
        let mut reader = (&text[..cut]).chain(FailsOnce(Some(io::Error::other("cut"))));
        match dedup.add_reader(&mut reader, 0, &mut sink) {
            Err(FeedError::Read(e)) => assert_eq!(e.to_string(), "cut"),
            other => panic!("cut at {cut}: {:?}", other.map_err(|_| "another error")),
        }
        let counts = dedup.counts().clone();
        let got = (classes_of(dedup, Order::FirstSeen), rejects, counts);
        assert!(got == expected, "cut at {cut} (whole lines up to {whole})");
    }
}

/// A mapped file truncated between the two phases of a block: phase 1
/// judged its lines, phase 2 reads zeros from the cut on. Only the
/// lines wholly before the cut become classes, whatever the key was
/// made from (the line's own bytes, or a copy for a key that differs),
/// and a rejected line is shown with the text it was judged by.
#[test]
fn lines_read_as_zeros_after_phase_1_become_no_class() {
    let text = b"urn:ab:one\nURN:AB:two\nurn:ab:three?+q\nurn:a:x\nurn:ab:four\n";
    for cut in 0..=text.len() {
        let mut block = text.to_vec();
        let judge = Judge { grammar: Grammar::Rfc8141, ns_rules: false, nids: None };
        let mut out = ChunkOut::default();
        out.scan(&block, 0..block.len(), judge);
        block[cut..].fill(0);
        // A rejected line is shown as it was judged.
        let shown: Vec<&[u8]> = out.rejects.iter().map(|r| out.reject_text(r)).collect();
        assert_eq!(shown, [&b"urn:a:x"[..]], "cut at {cut}");
        let mut tables: Vec<KeyTable> = (0..PARTS).map(|_| KeyTable::new()).collect();
        for (p, table) in tables.iter_mut().enumerate() {
            fill_partition(table, p, &block, std::slice::from_ref(&out), &[1], 0);
        }
        let mut kept: Vec<(u64, Vec<u8>)> =
            tables.iter().flat_map(KeyTable::iter).map(|e| (e.first.offset, e.raw.to_vec())).collect();
        kept.sort();
        let mut want = Vec::new();
        let mut start = 0;
        for (i, line) in text.split_inclusive(|&b| b == b'\n').enumerate() {
            if start + line.len() - 1 <= cut && line != b"urn:a:x\n" {
                want.push((i as u64 + 1, line[..line.len() - 1].to_vec()));
            }
            start += line.len();
        }
        assert_eq!(kept, want, "cut at {cut}");
    }
}

#[test]
fn first_seen_forms_counts_and_positions() {
    let a = b"urn:ab:x\n\n  URN:AB:x?+r \r\nurn:a:b\nurn:cd:y\r\n";
    let b = b"urn:cd:y\nUrn:Ab:x";
    let (classes, rejects, counts) = run(opts(), &[a, b], Order::FirstSeen, false);
    let own = |s: &str, n, f, l| (s.to_owned(), n, f, l);
    assert_eq!(classes, [own("urn:ab:x", 3, 0, 1), own("urn:cd:y", 2, 0, 5)]);
    assert_eq!(rejects, [(0, 4, "nid-too-short", "urn:a:b".to_owned())]);
    assert_eq!((counts.lines, counts.valid, counts.empty, counts.invalid_total()), (7, 5, 1, 1));
    let (by_key, _, _) = run(opts(), &[b"urn:zz:1\nurn:ab:2\n"], Order::Key, false);
    assert_eq!(by_key.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), ["urn:ab:2", "urn:zz:1"]);
}

#[test]
fn ns_rules_merge_only_when_asked() {
    let input: &[u8] = b"urn:ietf:rfc:2648\nurn:ietf:RFC:2648\n";
    assert_eq!(run(opts(), &[input], Order::FirstSeen, false).0.len(), 2);
    let with_rules = DedupOptions { ns_rules: true, ..opts() };
    assert_eq!(run(with_rules, &[input], Order::FirstSeen, false).0, [("urn:ietf:rfc:2648".to_owned(), 2, 0, 1)]);
}

#[test]
fn parse_only_counts_and_rejects_every_line_but_keeps_no_class() {
    let input = mixed_input(5_000);
    let (classes, rejects, counts) = run(opts(), &[&input], Order::FirstSeen, false);
    assert!(!classes.is_empty() && !rejects.is_empty());
    let mut dedup = LineDedup::new(DedupOptions { block_size: MIN_BLOCK_SIZE, ..opts() }).parse_only();
    let mut seen = Vec::new();
    let mut sink = |r: &Reject<'_>| {
        seen.push((r.file, r.line, r.error.kind().as_str(), String::from_utf8_lossy(r.text).into_owned()));
        Ok(())
    };
    assert_eq!(dedup.add_bytes(&input, 0, &mut sink).unwrap(), 5_000);
    assert_eq!((seen, dedup.counts()), (rejects, &counts));
    assert_eq!(dedup.table_len(), 0);
    let mut emitted = 0;
    let finished = dedup
        .finish(Order::FirstSeen, &mut |_| {
            emitted += 1;
            Ok(())
        })
        .unwrap();
    assert_eq!((finished.distinct, emitted), (0, 0));
}

/// A deterministic mix: spellings of a few hundred classes, invalid,
/// empty and decorated lines.
fn mixed_input(lines: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    for i in 0..lines {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let class = x % 700;
        let line = match x % 13 {
            0 => String::new(),
            1 => format!("urn:a:{class}"),
            2 => format!("  URN:EX:{class}?+r{i} \r"),
            3 => format!("urn:ex:{class}\r"),
            4 => format!("\turn:Ex:{class}#f"),
            5 => "urn:ex:caf\u{e9}".to_owned(),
            _ => format!("urn:ex:{class}"),
        };
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    out
}

#[test]
fn blocks_streams_and_spilling_do_not_change_results() {
    let input = mixed_input(60_000);
    for order in [Order::FirstSeen, Order::Key, Order::Count] {
        let whole = run(opts(), &[&input, b"urn:ex:1\nurn:zz:tail"], order, false);
        assert_eq!(whole.2.lines, 60_002);
        let small = DedupOptions { block_size: 1, ..opts() };
        assert_eq!(run(small.clone(), &[&input, b"urn:ex:1\nurn:zz:tail"], order, false), whole);
        assert_eq!(run(small, &[&input, b"urn:ex:1\nurn:zz:tail"], order, true), whole);
        let spill = DedupOptions { memory_limit: Some(8 << 10), ..opts() };
        let mut dedup = LineDedup::new(spill.clone());
        dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
        assert!(dedup.spilled());
        assert_eq!(run(spill, &[&input, b"urn:ex:1\nurn:zz:tail"], order, false), whole);
    }
}

/// `--nid`: the classes, counts and rejects of a filtered run are the
/// unfiltered run's, less the classes of other NIDs (compared in any
/// case), whose lines are counted as excluded; in both orders, whole,
/// streamed in small blocks and spilled.
#[test]
fn a_nid_filter_keeps_the_classes_of_its_nids() {
    let mixed = String::from_utf8(mixed_input(20_000)).unwrap();
    let input = mixed.replace("ex:1", "zz:1").replace("EX:2", "Zz:2").replace("Ex:3", "b-c:3").into_bytes();
    let filter = NidFilter::new(["ZZ", "b-c"], Grammar::Rfc8141).unwrap();
    let nid = |form: &str| form.split(':').nth(1).unwrap().to_ascii_lowercase();
    for order in [Order::FirstSeen, Order::Key, Order::Count] {
        let (classes, rejects, counts) = run(opts(), &[&input], order, false);
        let want: Classes = classes.into_iter().filter(|c| ["zz", "b-c"].contains(&nid(&c.0).as_str())).collect();
        assert!(want.len() > 100 && want.iter().any(|c| nid(&c.0) == "b-c"));
        let kept: u64 = want.iter().map(|c| c.1).sum();
        let with = |o: DedupOptions| DedupOptions { nids: Some(filter.clone()), ..o };
        for (filtered, stream) in [
            (with(opts()), false),
            (with(DedupOptions { block_size: 1, ..opts() }), true),
            (with(DedupOptions { memory_limit: Some(8 << 10), ..opts() }), false),
        ] {
            let (got, got_rejects, got_counts) = run(filtered, &[&input], order, stream);
            assert_eq!(got, want);
            assert_eq!(got_rejects, rejects);
            assert_eq!((got_counts.valid, got_counts.excluded), (kept, counts.valid - kept));
            assert_eq!(
                (got_counts.lines, got_counts.empty, &got_counts.invalid),
                (counts.lines, counts.empty, &counts.invalid)
            );
        }
    }
}

/// `lines` lines over `classes` classes (about 3 lines each), in
/// several spellings: an entry's first-seen form is not its key.
fn many_classes(lines: usize, classes: u64, seed: u64) -> Vec<u8> {
    let mut out = Vec::new();
    let mut x = seed;
    for _ in 0..lines {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let class = x % classes;
        let prefix = ["urn:ex", "URN:EX", "Urn:eX"][(x >> 32) as usize % 3];
        out.extend_from_slice(format!("{prefix}:{class}-{}\n", class % 97).as_bytes());
    }
    out
}

/// Every class as `format` puts it, through `finish` (one class at a
/// time) or `finish_parallel`, in a pool of `threads`.
fn output(opts: &DedupOptions, inputs: &[(u32, &[u8])], order: Order, parallel: bool, threads: usize) -> Vec<u8> {
    let format = |e: &Entry<'_>, text: &mut Vec<u8>| {
        e.raw.write_into(text);
        writeln!(text, "\t{}\t{}:{}", e.count, e.first.file, e.first.offset)
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
    pool.install(|| {
        let mut dedup = LineDedup::new(opts.clone());
        for &(file, input) in inputs {
            dedup.add_bytes(input, file, &mut |_| Ok(())).unwrap();
        }
        let mut out = Vec::new();
        if parallel {
            dedup.finish_parallel(order, &format, &mut out).unwrap();
        } else {
            dedup.finish(order, &mut |e| format(e, &mut out)).unwrap();
        }
        out
    })
}

#[test]
fn parallel_output_is_the_sequential_output() {
    let (a, b, c) = (many_classes(150_000, 50_000, 1), many_classes(40_000, 60_000, 2), mixed_input(5_000));
    let in_order: [(u32, &[u8]); 3] = [(0, &a), (1, &b), (2, &c)];
    // Files fed out of order replace first-seen forms: the tables are
    // no longer in position order, and the output must still match.
    let out_of_order: [(u32, &[u8]); 2] = [(1, &a), (0, &b)];
    for opts in [opts(), DedupOptions { block_size: 1, ..opts() }] {
        for inputs in [&in_order[..], &out_of_order] {
            for order in [Order::FirstSeen, Order::Key, Order::Count] {
                let expected = output(&opts, inputs, order, false, 2);
                assert!(expected.iter().filter(|&&b| b == b'\n').count() > 2 * sorted::RANGE_ENTRIES, "several ranges");
                for threads in [1, 2, 3] {
                    let parallel = output(&opts, inputs, order, true, threads);
                    assert!(parallel == expected, "{order:?}, {threads} threads, {} inputs", inputs.len());
                }
            }
        }
    }
}

#[test]
fn parallel_first_seen_output_is_in_position_order() {
    let input = many_classes(100_000, 40_000, 3);
    let text = output(&opts(), &[(0, &input)], Order::FirstSeen, true, 2);
    let lines: Vec<u64> =
        String::from_utf8(text).unwrap().lines().map(|l| l.rsplit_once(':').unwrap().1.parse().unwrap()).collect();
    // Each class once, at the line where its first spelling is.
    let mut seen = std::collections::HashSet::new();
    let firsts: Vec<u64> = input
        .split(|&b| b == b'\n')
        .zip(1..)
        .filter(|(line, _)| !line.is_empty() && seen.insert(line.to_ascii_lowercase()))
        .map(|(_, n)| n)
        .collect();
    assert_eq!(lines, firsts);
}

#[test]
fn deep_spills_are_still_exact() {
    // A limit far below one table forces every level of splitting.
    let input = mixed_input(20_000);
    let whole = run(opts(), &[&input], Order::FirstSeen, false);
    let tiny = DedupOptions { memory_limit: Some(1), ..opts() };
    assert_eq!(run(tiny, &[&input], Order::FirstSeen, false), whole);
}

#[test]
fn key_order_needs_no_memory_beyond_the_tables() {
    // The sorted list lives in the tables' indexes: tables that fit the
    // limit are sorted in memory, with the same output as without one.
    let input = mixed_input(20_000);
    let whole = run(opts(), &[&input], Order::Key, false);
    let mut dedup = LineDedup::new(opts());
    dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
    let limited = DedupOptions { memory_limit: Some(dedup.table_bytes() as u64), ..opts() };
    let mut dedup = LineDedup::new(limited.clone());
    dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
    let finished = dedup.finish(Order::Key, &mut |_| Ok(())).unwrap();
    assert_eq!(finished, Finished { distinct: whole.0.len() as u64, spilled: false });
    assert_eq!(run(limited, &[&input], Order::Key, false), whole);
}

#[test]
fn long_streamed_lines_are_judged_as_whole_lines() {
    let mut input = Vec::new();
    let long_valid = format!("{}urn:ab:x{}\n", " ".repeat(200_000), " ".repeat(300_000));
    let too_long = format!("urn:ab:{}\n", "x".repeat(100_000));
    let inner_space = format!("urn:ab:x{}y\n", " ".repeat(100_000));
    let spaces = format!("{}\n", " ".repeat(150_000));
    for line in [&long_valid, &too_long, &inner_space, &spaces, &"urn:ab:x\n".to_owned()] {
        input.extend_from_slice(line.as_bytes());
    }
    input.extend_from_slice("z".repeat(70_000).as_bytes());
    // 64 KiB blocks: the long lines straddle block boundaries.
    let small = DedupOptions { block_size: 1, ..opts() };
    let whole = run(small.clone(), &[&input], Order::FirstSeen, false);
    let streamed = run(small, &[&input], Order::FirstSeen, true);
    assert_eq!(whole.0, streamed.0);
    assert_eq!(whole.2, streamed.2);
    let kinds = |r: &Rejects| r.iter().map(|r| (r.1, r.2)).collect::<Vec<_>>();
    assert_eq!(kinds(&whole.1), [(2, "too-long"), (3, "nss-bad-char"), (6, "not-urn")]);
    assert_eq!(kinds(&streamed.1), kinds(&whole.1));
    assert_eq!(whole.0, [("urn:ab:x".to_owned(), 2, 0, 1)]);
    assert_eq!(whole.2.empty, 1);
}

#[test]
fn spill_directory_is_removed() {
    let base = std::env::temp_dir().join(format!("urnscan-lines-test-{}", std::process::id()));
    fs::create_dir_all(&base).unwrap();
    let spill = DedupOptions { memory_limit: Some(4 << 10), temp_dir: Some(base.clone()), ..opts() };
    let input = mixed_input(5_000);
    let mut dedup = LineDedup::new(spill);
    dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
    assert!(dedup.spilled());
    assert_eq!(fs::read_dir(&base).unwrap().count(), 1);
    dedup.finish(Order::Key, &mut |_| Ok(())).unwrap();
    assert_eq!(fs::read_dir(&base).unwrap().count(), 0);
    fs::remove_dir(&base).unwrap();
}

#[test]
fn partitions_use_successive_hash_bits() {
    let h = 0b101010_110011u64 << 52;
    assert_eq!(partition(h, 0), 0b101010);
    assert_eq!(partition(h, 1), 0b110011);
    assert_eq!(partition(u64::MAX, 11), 0);
}

/// Bytes per distinct key of the in-memory tables (documented in the
/// module docs). Run with `cargo test --release --lib bytes_per -- --ignored --nocapture`.
#[test]
#[ignore]
fn bytes_per_distinct_key() {
    let cfg = crate::corpus::DatasetConfig { lines: 1_000_000, distinct: 1_000_000, seed: 7, invalid_per_mille: 0 };
    let mut data = Vec::new();
    crate::corpus::generate_dataset(&cfg, &mut data, None).unwrap();
    let mut dedup = LineDedup::new(opts());
    dedup.add_bytes(&data, 0, &mut |_| Ok(())).unwrap();
    let (bytes, len) = (dedup.table_bytes(), dedup.table_len());
    let key_bytes = (data.len() - len) as f64 / len as f64;
    println!(
        "{len} keys, {bytes} bytes: {:.1} bytes per key (lines average {key_bytes:.1} bytes)",
        bytes as f64 / len as f64
    );
    assert_eq!(len, 1_000_000);
}

/// The rows of [`LineDedup::finish_stats`], from the classes [`LineDedup::finish`]
/// gives, grouped by the NID of their key in a map: (nid, occurrences,
/// unique), most occurrences first, then by NID.
fn classes_grouped_by_nid(dedup: LineDedup) -> (Vec<(Vec<u8>, u64, u64)>, u64) {
    let mut by_nid: BTreeMap<Vec<u8>, (u64, u64)> = BTreeMap::new();
    let mut classes = 0;
    dedup
        .finish(Order::FirstSeen, &mut |e| {
            let nid = e.key.split(|&b| b == b':').nth(1).unwrap().to_vec();
            let slot = by_nid.entry(nid).or_default();
            slot.0 += e.count;
            slot.1 += 1;
            classes += 1;
            Ok(())
        })
        .unwrap();
    let mut rows: Vec<(Vec<u8>, u64, u64)> = by_nid.into_iter().map(|(nid, (o, u))| (nid, o, u)).collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    (rows, classes)
}

/// Lines of `nids` spelled in several cases, with NSS of a few classes.
fn lines_of_nids(nids: &[(usize, u8, bool)]) -> Vec<u8> {
    const NIDS: [&str; 5] = ["ab", "Ab-C", "isbn", "x-acme", "urn-7"];
    let mut out = Vec::new();
    for &(nid, nss, upper) in nids {
        let nid = NIDS[nid % NIDS.len()];
        let nid = if upper { nid.to_ascii_uppercase() } else { nid.to_owned() };
        out.extend_from_slice(format!("urn:{nid}:{}%2f\n", nss % 7).as_bytes());
    }
    out
}

proptest::proptest! {
    /// Per-NID rows equal the classes grouped by NID in a plain map, in
    /// memory and spilled (the rows then come from the spill files in key
    /// order), with each NID's class from the classifier.
    #[test]
    fn nid_stats_are_the_classes_grouped_by_nid(
        nids in proptest::collection::vec((0usize..5, 0u8..20, proptest::bool::ANY), 0..400),
        spill: bool,
    ) {
        let input = lines_of_nids(&nids);
        let opts = DedupOptions { memory_limit: spill.then_some(1), ..opts() };
        let feed = |opts: DedupOptions| {
            let mut dedup = LineDedup::new(opts);
            dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
            dedup
        };
        let (want, classes) = classes_grouped_by_nid(feed(opts.clone()));
        let (stats, finished) = feed(opts).finish_stats().unwrap();
        let got: Vec<(Vec<u8>, u64, u64)> = stats.rows().map(|r| (r.nid.to_vec(), r.occurrences, r.unique)).collect();
        proptest::prop_assert_eq!(got, want);
        proptest::prop_assert!(stats.rows().all(|r| r.class == crate::classify_nid(r.nid)));
        proptest::prop_assert_eq!(finished, Finished { distinct: classes, spilled: spill && !input.is_empty() });
    }
}

/// The same on the mixed input, whole, streamed in small blocks and
/// spilled at every level: rejected and empty lines count in no row.
#[test]
fn nid_stats_of_mixed_input_in_every_mode() {
    let mixed = String::from_utf8(mixed_input(30_000)).unwrap();
    let input = mixed.replace("ex:1", "zz:1").replace("EX:2", "Zz:2").replace("Ex:3", "b-c:3").into_bytes();
    let feed = |opts: DedupOptions, stream: bool| {
        let mut dedup = LineDedup::new(opts);
        if stream {
            dedup.add_reader(&mut &input[..], 0, &mut |_| Ok(())).unwrap();
        } else {
            dedup.add_bytes(&input, 0, &mut |_| Ok(())).unwrap();
        }
        dedup
    };
    let (want, classes) = classes_grouped_by_nid(feed(opts(), false));
    // `urn:a:` lines are rejected (a NID has 2 to 32 characters).
    let mut nids: Vec<&[u8]> = want.iter().map(|r| r.0.as_slice()).collect();
    nids.sort();
    assert_eq!(nids, [&b"b-c"[..], b"ex", b"zz"]);
    for (opts, stream) in [
        (opts(), false),
        (DedupOptions { block_size: 1, ..opts() }, true),
        (DedupOptions { memory_limit: Some(1), ..opts() }, false),
    ] {
        let (stats, finished) = feed(opts, stream).finish_stats().unwrap();
        let got: Vec<(Vec<u8>, u64, u64)> = stats.rows().map(|r| (r.nid.to_vec(), r.occurrences, r.unique)).collect();
        assert_eq!((got, finished.distinct), (want.clone(), classes));
    }
}

/// The cause is the error's source, not part of its message: a reporter of
/// the chain (anyhow's `{:#}`) printed "write error: stop: stop".
#[test]
fn a_feed_error_says_its_cause_once() {
    let e = FeedError::Write(io::Error::other("stop"));
    assert_eq!(crate::error::chain_report(&e), "cannot write the rejected lines or the spill files: stop");
    // The I/O error stays reachable as the source, for callers that look at its kind.
    assert_eq!(std::error::Error::source(&e).map(ToString::to_string).as_deref(), Some("stop"));
    let e = FeedError::Read(io::Error::other("cut"));
    assert_eq!(crate::error::chain_report(&e), "cannot read the input: cut");
}

/// Each reject says how many lines of its input before it are empty
/// (nothing but whitespace), counted afresh for each input, whether the
/// input comes whole, in small blocks or as a stream: the count a plain
/// walk over the lines gives.
#[test]
fn a_reject_counts_the_empty_lines_of_its_input_before_it() {
    let mut a = mixed_input(20_000);
    a.extend_from_slice(b" \t\r\nnot a urn\n\n\x0c\nurn:ex:caf\xc3\xa9");
    let b: &[u8] = b"\n\nnot a urn\n";
    let inputs: [&[u8]; 3] = [&a, b, &a];
    let mut want = Vec::new();
    for (file, input) in inputs.iter().enumerate() {
        let mut empty = 0;
        for (i, line) in input.split(|&b| b == b'\n').enumerate() {
            if trim_line(line).is_empty() {
                empty += 1;
            } else if crate::grammar::parse(trim_line(line), Grammar::Rfc8141).is_err() {
                want.push((file as u32, i as u64 + 1, empty));
            }
        }
    }
    assert!(want.len() > 1_000 && want.iter().any(|w| w.2 > 1_000), "rejects after many empty lines");
    let small = DedupOptions { block_size: 1, ..opts() };
    for (opts, stream) in [(opts(), false), (opts(), true), (small.clone(), false), (small, true)] {
        let mut dedup = LineDedup::new(opts).parse_only();
        let mut got = Vec::new();
        for (file, input) in inputs.iter().enumerate() {
            let mut sink = |r: &Reject<'_>| {
                got.push((r.file, r.line, r.empty_before));
                Ok(())
            };
            match stream {
                true => dedup.add_reader(&mut &input[..], file as u32, &mut sink).unwrap(),
                false => dedup.add_bytes(input, file as u32, &mut sink).unwrap(),
            };
        }
        assert!(got == want, "stream {stream}: {} rejects, {} wanted", got.len(), want.len());
    }
}
