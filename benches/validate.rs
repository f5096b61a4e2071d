//! Benchmark: validation plus equivalence key, one URN at a time.
//!
//! The corpus is a fixed, generated mix of short (~20 B) and long (~200 B)
//! URNs, a quarter of them with an upper-case scheme and NID and a quarter
//! with lower-case percent-encodings, so both the borrowed fast path of the
//! key and the normalising path run. Every URN is valid under both grammars
//! (no "~", "&" or leading "/"), so the two grammars do the same work.
//!
//! Two groups measure the same loops: `validate_bytes` reports throughput in
//! bytes, `validate_urns` in URNs. The key is written with `write_key` into
//! one reused `Vec` whose capacity is checked to be unchanged afterwards: the
//! loop does no allocation per URN (parse borrows, and the buffer never
//! grows past its first size).
//!
//! One more case, `parse_prefix+write_key/rfc8141/in-text`, runs the same
//! URNs the way the scanner meets them: at the start of running text, so
//! the walk ends at a space instead of the end of its input.
//!
//! Run: `cargo bench --bench validate -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkGroup, Criterion, Throughput};
use urnscan::{parse, parse_prefix, Grammar, MAX_URN_LEN};

/// URNs in the corpus, half short and half long.
const CORPUS_LEN: usize = 1024;

/// A small xorshift generator: the corpus must be the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick(&mut self, set: &[u8]) -> u8 {
        set[self.below(set.len())]
    }
}

const NID_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
const NSS_CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._:/=,;";
const HEX: &[u8] = b"0123456789ABCDEF";

fn urn(rng: &mut Rng, long: bool, upper: bool, lower_hex: bool) -> Vec<u8> {
    let mut out = if upper { b"URN:".to_vec() } else { b"urn:".to_vec() };
    let nid_len = if long { 8 } else { 4 };
    for _ in 0..nid_len {
        let c = rng.pick(NID_CHARS);
        out.push(if upper { c.to_ascii_uppercase() } else { c });
    }
    out.push(b':');
    let nss_len = if long { 180 } else { 11 };
    // The first NSS character must not be "/" under RFC 8141.
    out.push(b'x');
    while out.len() < 4 + nid_len + 1 + nss_len {
        if rng.below(16) == 0 {
            let hex: &[u8] = if lower_hex { b"0123456789abcdef" } else { HEX };
            out.extend_from_slice(&[b'%', rng.pick(hex), rng.pick(hex)]);
        } else {
            out.push(rng.pick(NSS_CHARS));
        }
    }
    if long {
        out.extend_from_slice(b"?=lang=en#sec-2");
    }
    out
}

fn corpus() -> Vec<Vec<u8>> {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let urns: Vec<Vec<u8>> = (0..CORPUS_LEN)
        .map(|i| {
            let variant = rng.below(4);
            urn(&mut rng, i % 2 == 1, variant == 1, variant == 2)
        })
        .collect();
    for u in &urns {
        for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
            if let Err(e) = parse(u, grammar) {
                panic!("corpus URN invalid: {}", e.render(u));
            }
        }
    }
    urns
}

fn validate_only(urns: &[Vec<u8>], grammar: Grammar) -> usize {
    urns.iter().filter(|u| parse(black_box(u), grammar).is_ok()).count()
}

fn validate_and_key(urns: &[Vec<u8>], grammar: Grammar, key: &mut Vec<u8>) -> usize {
    let mut total = 0;
    for u in urns {
        if let Ok(urn) = parse(black_box(u), grammar) {
            key.clear();
            urn.write_key(key);
            total += black_box(&key).len();
        }
    }
    total
}

/// What the scanner does: the longest URN at the start of running text.
/// Each input is a corpus URN followed by text, so the walk stops at a byte
/// that is not the end of its input (throughput still counts URN bytes).
fn prefix_and_key(in_text: &[Vec<u8>], key: &mut Vec<u8>) -> usize {
    let mut total = 0;
    for t in in_text {
        if let Ok(urn) = parse_prefix(black_box(t), Grammar::Rfc8141) {
            key.clear();
            urn.write_key(key);
            total += black_box(&key).len();
        }
    }
    total
}

/// The corpus URNs, each followed by a space and some text.
fn in_text(urns: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let text = b" is cited here, in a line of a log or an XML file, followed by more words.";
    urns.iter().map(|u| [u.as_slice(), text].concat()).collect()
}

fn run_group<M: criterion::measurement::Measurement>(mut group: BenchmarkGroup<'_, M>, urns: &[Vec<u8>]) {
    let mut key = Vec::with_capacity(MAX_URN_LEN);
    let capacity = key.capacity();
    group.bench_function("parse/rfc8141", |b| b.iter(|| validate_only(urns, Grammar::Rfc8141)));
    for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
        group.bench_function(format!("parse+write_key/{}", grammar.as_str()), |b| {
            b.iter(|| validate_and_key(urns, grammar, &mut key))
        });
    }
    let in_text = in_text(urns);
    assert_eq!(prefix_and_key(&in_text, &mut key), validate_and_key(urns, Grammar::Rfc8141, &mut key));
    group.bench_function("parse_prefix+write_key/rfc8141/in-text", |b| b.iter(|| prefix_and_key(&in_text, &mut key)));
    assert_eq!(key.capacity(), capacity, "the key buffer grew: a URN allocated");
    group.finish();
}

fn bench(c: &mut Criterion) {
    let urns = corpus();
    let bytes: usize = urns.iter().map(Vec::len).sum();
    eprintln!("corpus: {} URNs, {} bytes, {:.1} B/URN", urns.len(), bytes, bytes as f64 / urns.len() as f64);

    let mut group = c.benchmark_group("validate_bytes");
    group.throughput(Throughput::Bytes(bytes as u64));
    run_group(group, &urns);

    let mut group = c.benchmark_group("validate_urns");
    group.throughput(Throughput::Elements(urns.len() as u64));
    run_group(group, &urns);
}

criterion_group!(benches, bench);
criterion_main!(benches);
