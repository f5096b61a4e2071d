//! Candidate-search throughput: every `UrnFinder` kernel against baselines.
//!
//! One deterministic ~64 MiB buffer of log/XML-like text with about 200
//! `urn:` (mixed case) per MiB, plus many near misses (`return:`, `turn`,
//! `xmlns:`, timestamps with `:`). Every entry counts something over the whole
//! buffer so the work cannot be skipped:
//!
//! - `read_every_byte`: XOR of all bytes, the floor no search can beat;
//! - `memchr_newline`: `memchr_iter(b'\n').count()`, a tuned single-byte scan;
//! - `kernel/*`: candidates found by repeated `UrnFinder::find` per kernel;
//! - `regex_ci`: `(?i)urn:` with the regex crate;
//! - `memmem_cs`: case-sensitive `memmem` for `urn:` (fewer hits, not a
//!   correct answer; shows what a literal searcher does at this density);
//! - `memchr_colon`: memchr for `:`, then check the 3 bytes before it.
//!
//! A second group repeats them on the first 256 KiB, which stays in L2: that
//! shows compute cost apart from memory bandwidth, and is far less disturbed
//! by other processes on a shared machine than the 64 MiB numbers.
//!
//! Run: `cargo bench --bench search -- --warm-up-time 1 --measurement-time 3`

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use urnscan::platform::simd::{read_every_byte, Kernel, UrnFinder};

const CORPUS_BYTES: usize = 64 << 20;
const CACHED_BYTES: usize = 256 << 10;

/// xorshift64*: deterministic corpus, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

const WORDS: &[&str] = &[
    "return",
    "turnover",
    "burnt",
    "urnal",
    "journal",
    "nocturnal",
    "user",
    "run",
    "unit",
    "urgent",
    "saturn",
    "furnace",
    "urn",
    "Urns",
    "Return",
    "status",
    "request",
    "handler",
    "cache",
    "item",
    "record",
    "value",
];
const NIDS: &[&str] = &["isbn", "ietf", "uuid", "nbn", "oid", "issn", "mpeg", "lex", "example", "epc"];
const LEVELS: &[&str] = &["INFO ", "WARN ", "DEBUG", "ERROR", "TRACE"];
const URN_SPELLINGS: &[&str] = &["urn:", "urn:", "urn:", "URN:", "Urn:"];

/// One line of text; `with_urn` decides whether it carries a URN.
fn push_line(rng: &mut Rng, out: &mut String, with_urn: bool) {
    use std::fmt::Write;
    let (h, m, s, ms) = (rng.below(24), rng.below(60), rng.below(60), rng.below(1000));
    match rng.below(3) {
        0 => {
            let _ = write!(
                out,
                "2024-03-17T{h:02}:{m:02}:{s:02}.{ms:03}Z {} [worker-{}] ",
                rng.pick(LEVELS),
                rng.below(16)
            );
            for _ in 0..4 + rng.below(6) {
                let _ = write!(out, "{} ", rng.pick(WORDS));
            }
            let _ = write!(out, "took={}ms host=node{}.example.org:8080", rng.below(500), rng.below(99));
        }
        1 => {
            let _ = write!(
                out,
                r#"<record xmlns:dc="http://purl.org/dc/elements/1.1/" id="r{}"><dc:title>{} {}</dc:title>"#,
                rng.below(1 << 20),
                rng.pick(WORDS),
                rng.pick(WORDS)
            );
        }
        _ => {
            let _ = write!(
                out,
                "{h:02}:{m:02}:{s:02} {}: {} {} returned:{}",
                rng.pick(LEVELS),
                rng.pick(WORDS),
                rng.pick(WORDS),
                rng.below(9)
            );
        }
    }
    if with_urn {
        let _ = write!(out, " ref={}{}:{:x}", rng.pick(URN_SPELLINGS), rng.pick(NIDS), rng.next() >> 20);
    }
    out.push('\n');
}

/// ~`bytes` of text with about 200 URNs per MiB.
fn corpus(bytes: usize) -> Vec<u8> {
    let mut rng = Rng(0x5eed_cafe_f00d_1234);
    let mut out = String::with_capacity(bytes + 256);
    // Lines average ~95 bytes, so 1 MiB holds ~11 000 of them; 1 in 55 carries a URN.
    while out.len() < bytes {
        let with_urn = rng.below(55) == 0;
        push_line(&mut rng, &mut out, with_urn);
    }
    out.truncate(bytes);
    out.into_bytes()
}

fn count_kernel(finder: &UrnFinder, hay: &[u8]) -> usize {
    let mut count = 0;
    let mut from = 0;
    while let Some(at) = finder.find(hay, from) {
        count += 1;
        from = at + 1;
    }
    count
}

fn count_memchr_colon(hay: &[u8]) -> usize {
    memchr::memchr_iter(b':', hay).filter(|&c| c >= 3 && hay[c - 3..c].eq_ignore_ascii_case(b"urn")).count()
}

fn finders() -> Vec<UrnFinder> {
    // Each kernel as the finder runs it on this CPU, and the best kernel
    // with the other software-prefetch setting (see `UrnFinder::with_prefetch`).
    let mut finders: Vec<UrnFinder> = Kernel::available().into_iter().filter_map(UrnFinder::with_kernel).collect();
    let best = UrnFinder::new();
    if best.kernel() != Kernel::Scalar {
        finders.push(best.with_prefetch(!best.prefetches()));
    }
    finders
}

fn finder_name(f: &UrnFinder) -> String {
    match f.kernel() {
        Kernel::Scalar => "scalar".to_owned(),
        k if f.prefetches() => format!("{}+prefetch", k.name()),
        k => k.name().to_owned(),
    }
}

fn search(c: &mut Criterion) {
    let hay = corpus(CORPUS_BYTES);
    let want = hay.windows(4).filter(|w| w.eq_ignore_ascii_case(b"urn:")).count();
    eprintln!(
        "corpus: {} bytes, {} candidates ({:.0} per MiB), {} ':' bytes",
        hay.len(),
        want,
        want as f64 / (hay.len() as f64 / (1 << 20) as f64),
        memchr::memchr_iter(b':', &hay).count()
    );
    let regex = regex::bytes::Regex::new("(?i)urn:").unwrap();
    let memmem = memchr::memmem::Finder::new(b"urn:");
    for f in finders() {
        assert_eq!(count_kernel(&f, &hay), want, "{}", f.kernel().name());
    }
    assert_eq!(regex.find_iter(&hay).count(), want);
    assert_eq!(count_memchr_colon(&hay), want);

    let mut group = c.benchmark_group("search_64MiB");
    group.throughput(Throughput::Bytes(hay.len() as u64));
    group.sample_size(10);
    group.bench_function("read_every_byte", |b| b.iter(|| read_every_byte(black_box(&hay))));
    group.bench_function("memchr_newline", |b| b.iter(|| memchr::memchr_iter(b'\n', black_box(&hay)).count()));
    for f in finders() {
        group.bench_function(BenchmarkId::new("kernel", finder_name(&f)), |b| {
            b.iter(|| count_kernel(&f, black_box(&hay)))
        });
    }
    group.bench_function("regex_ci", |b| b.iter(|| regex.find_iter(black_box(&hay)).count()));
    group.bench_function("memmem_cs", |b| b.iter(|| memmem.find_iter(black_box(&hay)).count()));
    group.bench_function("memchr_colon", |b| b.iter(|| count_memchr_colon(black_box(&hay))));
    group.finish();

    let small = &hay[..CACHED_BYTES];
    let mut group = c.benchmark_group("search_256KiB_cached");
    group.throughput(Throughput::Bytes(small.len() as u64));
    group.bench_function("read_every_byte", |b| b.iter(|| read_every_byte(black_box(small))));
    group.bench_function("memchr_newline", |b| b.iter(|| memchr::memchr_iter(b'\n', black_box(small)).count()));
    for f in finders() {
        group.bench_function(BenchmarkId::new("kernel", finder_name(&f)), |b| {
            b.iter(|| count_kernel(&f, black_box(small)))
        });
    }
    group.bench_function("regex_ci", |b| b.iter(|| regex.find_iter(black_box(small)).count()));
    group.bench_function("memmem_cs", |b| b.iter(|| memmem.find_iter(black_box(small)).count()));
    group.bench_function("memchr_colon", |b| b.iter(|| count_memchr_colon(black_box(small))));
    group.finish();
}

criterion_group!(benches, search);
criterion_main!(benches);
