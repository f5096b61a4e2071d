//! End-to-end scanner throughput and key-table inserts.
//!
//! Inputs come from the project's own generator ([`urnscan::corpus`]), so they
//! are the same bytes `urnscan gen` writes and `benches/compare.sh` uses:
//!
//! - `scan_64MiB_200`: 64 MiB of log/JSON/XML/prose text with 200 planted
//!   URNs (and 50 decoys) per MiB: URN-sparse, the candidate search dominates;
//! - `scan_16MiB_5000`: 16 MiB at 5000 URNs per MiB: URN-dense, validation
//!   dominates (smaller, so one iteration stays short).
//!
//! Each is scanned with [`Scanner::scan_sequential`] (the reference: one
//! loop, no chunking) and with [`Scanner::scan`] inside rayon pools of 1 and
//! 2 threads (chunked; the 1-thread row shows the chunking overhead, the
//! 2-thread row the scaling). Throughput is in bytes.
//!
//! `dedup_insert` inserts the equivalence keys of a generated dataset
//! (1,000,000 lines, 300,000 distinct keys, keys computed up front) into a
//! fresh [`KeyTable`]: the cost of `--unique`/`--stats` per URN, apart from
//! scanning. Throughput is in keys. Beside it, `std_hashmap`: the same keys
//! counted in a plain `std::collections::HashMap` of borrowed keys (count
//! and first line; foldhash), the structure a program without urnscan would
//! reach for. It copies no key and keeps no first-seen form, so it does less
//! than a [`KeyTable`]: the ratio between the rows shows what the table's
//! arena, first-seen forms and prefetching cost or save on this machine.
//!
//! Measurement times are kept short: CI only builds benches, people run them.
//! Run: `cargo bench --bench scan -- --warm-up-time 1 --measurement-time 3`

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use urnscan::corpus::{generate_dataset, generate_text, DatasetConfig, TextConfig};
use urnscan::dedup::{key_hash, KeyTable, Occurrence, Position};
use urnscan::{parse, Event, ExtractOptions, Grammar, Scanner};

fn corpus(size: u64, urns_per_mib: u32) -> Vec<u8> {
    let cfg = TextConfig { size, seed: 7, urns_per_mib, decoys_per_mib: 50 };
    let mut out = Vec::with_capacity(size as usize);
    generate_text(&cfg, &mut out, None).expect("writing to a Vec cannot fail");
    out
}

fn urn_count(events: &[Event]) -> usize {
    events.iter().filter(|e| matches!(e, Event::Urn { .. })).count()
}

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool")
}

fn scan_group(c: &mut Criterion, name: &str, hay: &[u8]) {
    let scanner = Scanner::new(ExtractOptions::default());
    let reference = scanner.scan_sequential(hay);
    eprintln!("{name}: {} bytes, {} events, {} URNs", hay.len(), reference.len(), urn_count(&reference));
    let mut group = c.benchmark_group(name);
    group.throughput(Throughput::Bytes(hay.len() as u64));
    group.sample_size(10);
    group.bench_function("sequential", |b| b.iter(|| scanner.scan_sequential(black_box(hay)).len()));
    for threads in [1, 2] {
        let pool = pool(threads);
        assert_eq!(pool.install(|| scanner.scan(hay)), reference);
        group.bench_function(format!("chunked_{threads}t"), |b| {
            b.iter(|| pool.install(|| scanner.scan(black_box(hay)).len()))
        });
    }
    group.finish();
}

fn scan(c: &mut Criterion) {
    scan_group(c, "scan_64MiB_200", &corpus(64 << 20, 200));
    scan_group(c, "scan_16MiB_5000", &corpus(16 << 20, 5000));
}

/// The keys of a generated dataset, in line order (invalid lines skipped).
fn dataset_keys() -> Vec<Vec<u8>> {
    let cfg = DatasetConfig { lines: 1_000_000, distinct: 300_000, seed: 7, invalid_per_mille: 10 };
    let mut text = Vec::new();
    let summary = generate_dataset(&cfg, &mut text, None).expect("writing to a Vec cannot fail");
    let mut keys = Vec::with_capacity(summary.planted as usize);
    for line in text.split(|&b| b == b'\n') {
        if let Ok(urn) = parse(line, Grammar::Rfc8141) {
            let mut key = Vec::new();
            urn.write_key(&mut key);
            keys.push(key);
        }
    }
    assert_eq!(keys.len() as u64, summary.planted);
    keys
}

fn fill(keys: &[Vec<u8>]) -> KeyTable {
    let mut table = KeyTable::new();
    for (i, key) in keys.iter().enumerate() {
        table.insert(key, key, Position { file: 0, offset: i as u64 }, 1);
    }
    table
}

/// The same keys through [`KeyTable::insert_batch`], hashes known (as the
/// scanner and `dedup` hand them over), with its prefetching.
fn fill_batch(keys: &[(u64, Vec<u8>)]) -> KeyTable {
    let mut table = KeyTable::new();
    let at = |i: usize| Position { file: 0, offset: i as u64 };
    let index: Vec<usize> = (0..keys.len()).collect();
    let view = |&i: &usize| Some(Occurrence { hash: keys[i].0, key: &keys[i].1, raw: &keys[i].1, at: at(i) });
    table.insert_batch(&index, view, |_, _, _| true);
    table
}

/// The baseline: a `HashMap` from each borrowed key to its count and first
/// line.
fn fill_std(keys: &[Vec<u8>]) -> usize {
    let mut map: HashMap<&[u8], (u64, usize), foldhash::fast::RandomState> = HashMap::default();
    for (i, key) in keys.iter().enumerate() {
        map.entry(key.as_slice()).or_insert((0, i)).0 += 1;
    }
    map.len()
}

fn dedup(c: &mut Criterion) {
    let keys = dataset_keys();
    let hashed: Vec<(u64, Vec<u8>)> = keys.iter().map(|k| (key_hash(k), k.clone())).collect();
    assert_eq!(fill(&keys).len(), 300_000);
    assert_eq!(fill_batch(&hashed).len(), 300_000);
    assert_eq!(fill_std(&keys), 300_000);
    let mut group = c.benchmark_group("dedup_insert");
    group.throughput(Throughput::Elements(keys.len() as u64));
    group.sample_size(10);
    group.bench_function("1M_keys_300k_distinct", |b| b.iter(|| fill(black_box(&keys)).len()));
    group.bench_function("1M_keys_300k_distinct_batch", |b| b.iter(|| fill_batch(black_box(&hashed)).len()));
    group.bench_function("1M_keys_300k_distinct_std_hashmap", |b| b.iter(|| fill_std(black_box(&keys))));
    group.finish();
}

criterion_group!(benches, scan, dedup);
criterion_main!(benches);
