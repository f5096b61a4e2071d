//! Fuzz target: line deduplication ([`urnscan::lines::LineDedup`], the
//! engine of `urnscan dedup`) against a plain reference.
//!
//! The input is split in two "files" (at a point chosen by its first byte)
//! and fed to three engines: one with [`LineDedup::add_bytes`], finished in
//! first-seen order, one with [`LineDedup::add_reader`] from a reader that
//! returns a few bytes per call, finished in key order, and one with
//! `add_bytes` again, finished in count order (most lines first, equal
//! counts by key). The grammar, the namespace rules and spilling to
//! temporary files (a memory limit of one byte, for one input in eight; in
//! `/dev/shm` when there is one) are chosen by the input's length. The
//! reference is the module docs written out: a UTF-8 byte-order mark at
//! the start of an input is dropped, a line ends at `\n` (the last may end
//! at the end of input), its surrounding ASCII whitespace (space, tab, CR,
//! LF, form feed) is ignored, a line with nothing else is empty, any other
//! line is judged whole by [`parse`] and grouped by its key (through
//! [`apply_ns_rules`] when they are on), with its count and its first
//! occurrence (file, 1-based line, first-seen form). Checked: line counts
//! per file, the totals, every rejected line in order with its error, and
//! every class in all three orders. (The engine judges most lines from the
//! bit maps of their span, `grammar::bits`, and walks the rest: the
//! reference's `parse` checks the first path against the second.)
//!
//! Not reached: lines over 64 KiB, which a stream condenses (inputs stay
//! far below that), and blocks cut inside one file (the smallest block is
//! 64 KiB).

#![no_main]

use std::collections::{BTreeMap, HashMap};
#[path = "shared/dribble.rs"]
mod dribble;
use dribble::Dribble;

use libfuzzer_sys::fuzz_target;
use urnscan::lines::{DedupOptions, LineDedup, Order};
use urnscan::nid::rules::apply_ns_rules;
use urnscan::{parse, ErrorKind, Grammar, UrnError};

#[derive(Clone, Debug, PartialEq, Eq)]
struct Class {
    key: Vec<u8>,
    raw: Vec<u8>,
    count: u64,
    first: (u32, u64),
}

#[derive(Debug, Default, PartialEq, Eq)]
struct Outcome {
    lines_per_file: Vec<u64>,
    lines: u64,
    valid: u64,
    empty: u64,
    invalid: BTreeMap<ErrorKind, u64>,
    rejects: Vec<(u32, u64, Vec<u8>, UrnError)>,
    classes: Vec<Class>,
}

fuzz_target!(|data: &[u8]| {
    let split = data.first().map_or(0, |&b| usize::from(b) * data.len() / 256);
    let files = [&data[..split], &data[split..]];
    let opts = DedupOptions {
        grammar: if data.len().is_multiple_of(2) { Grammar::Rfc8141 } else { Grammar::Rfc2141 },
        ns_rules: (data.len() / 2).is_multiple_of(2),
        memory_limit: (data.len() / 4).is_multiple_of(8).then_some(1),
        // Spill files cost more than the rest of a run: keep them in memory.
        temp_dir: Some(std::path::PathBuf::from("/dev/shm")).filter(|d| d.is_dir()),
        ..DedupOptions::default()
    };
    let mut expected = reference(&files, &opts);

    let by_bytes = engine(&files, &opts, Order::FirstSeen, |d, bytes, file, sink| d.add_bytes(bytes, file, sink));
    assert_eq!(by_bytes, expected, "add_bytes, first-seen order");

    expected.classes.sort_by(|a, b| a.key.cmp(&b.key));
    let by_reader =
        engine(&files, &opts, Order::Key, |d, bytes, file, sink| d.add_reader(&mut Dribble::new(bytes), file, sink));
    assert_eq!(by_reader, expected, "add_reader, key order");

    // Stable: equal counts stay in key order.
    expected.classes.sort_by_key(|c| std::cmp::Reverse(c.count));
    let by_count = engine(&files, &opts, Order::Count, |d, bytes, file, sink| d.add_bytes(bytes, file, sink));
    assert_eq!(by_count, expected, "add_bytes, count order");
});

type Sink<'s> = urnscan::lines::RejectSink<'s>;

fn engine(
    files: &[&[u8]],
    opts: &DedupOptions,
    order: Order,
    feed: impl Fn(&mut LineDedup, &[u8], u32, &mut Sink<'_>) -> Result<u64, urnscan::lines::FeedError>,
) -> Outcome {
    let mut dedup = LineDedup::new(opts.clone());
    let mut out = Outcome::default();
    for (file, bytes) in files.iter().enumerate() {
        let mut rejects = Vec::new();
        let lines = feed(&mut dedup, bytes, file as u32, &mut |r| {
            rejects.push((r.file, r.line, r.text.to_vec(), r.error));
            Ok(())
        })
        .expect("in-memory input and a collecting sink cannot fail");
        out.lines_per_file.push(lines);
        out.rejects.extend(rejects);
    }
    let counts = dedup.counts().clone();
    (out.lines, out.valid, out.empty, out.invalid) = (counts.lines, counts.valid, counts.empty, counts.invalid);
    let classes = &mut out.classes;
    let spill = opts.memory_limit.is_some();
    let finished = dedup
        .finish(order, &mut |e| {
            classes.push(Class {
                key: e.key.to_vec(),
                raw: e.raw.to_vec(),
                count: e.count,
                first: (e.first.file, e.first.offset),
            });
            Ok(())
        })
        .expect("finish");
    assert_eq!(finished.distinct as usize, out.classes.len(), "finish's count");
    // No limit never spills; a one-byte limit spills once a class is kept.
    if !spill || !out.classes.is_empty() {
        assert_eq!(finished.spilled, spill, "spilled");
    }
    out
}

fn reference(files: &[&[u8]], opts: &DedupOptions) -> Outcome {
    let mut out = Outcome::default();
    let mut index: HashMap<Vec<u8>, usize> = HashMap::new();
    for (file, bytes) in files.iter().enumerate() {
        let file = file as u32;
        // A UTF-8 byte-order mark at the start of an input is no part of it.
        let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        if bytes.is_empty() || bytes.ends_with(b"\n") {
            lines.pop(); // nothing after the last newline is not a line
        }
        out.lines_per_file.push(lines.len() as u64);
        for (i, line) in lines.iter().enumerate() {
            let number = i as u64 + 1;
            out.lines += 1;
            let text = trim(line);
            if text.is_empty() {
                out.empty += 1;
                continue;
            }
            match parse(text, opts.grammar) {
                Ok(urn) => {
                    out.valid += 1;
                    let mut key = urn.key().into_owned().into_bytes();
                    if opts.ns_rules {
                        apply_ns_rules(&mut key);
                    }
                    match index.get(&key) {
                        Some(&at) => out.classes[at].count += 1,
                        None => {
                            index.insert(key.clone(), out.classes.len());
                            out.classes.push(Class { key, raw: text.to_vec(), count: 1, first: (file, number) });
                        }
                    }
                }
                Err(error) => {
                    *out.invalid.entry(error.kind()).or_default() += 1;
                    out.rejects.push((file, number, text.to_vec(), error));
                }
            }
        }
    }
    out
}

fn trim(line: &[u8]) -> &[u8] {
    let ws = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'\x0c');
    let start = line.iter().position(|b| !ws(b)).unwrap_or(line.len());
    let end = line.iter().rposition(|b| !ws(b)).map_or(start, |i| i + 1);
    &line[start..end]
}
