//! `urnscan bench`: how close to the machine's limit does urnscan run here?
//!
//! The limit is the *floor*: reading every byte of the input once
//! ([`read_every_byte`]), which no scanner can beat. The command then times
//! the scanner's layers one on top of the other, each over the same bytes,
//! so the difference between two rows is what the added layer costs:
//!
//! 1. floor — every byte read (warm: the pages are already mapped in);
//! 2. floor + map — the same, with the file mapped afresh every run, so page
//!    faults and `munmap` are paid as a fresh `urnscan scan` process pays
//!    them (files only);
//! 3. search — counting [`Candidates`] (SIMD `urn:` search plus the
//!    left-boundary rule), with the best kernel (or the one `--kernel` /
//!    `--prefetch` choose; the rows below use it too), and single-threaded
//!    with every kernel this CPU has;
//! 4. search + validate — the events of a scan, window by window
//!    ([`Scanner::scan_windows`], each window a parallel [`Scanner::scan`]),
//!    as `urnscan scan` scans a large file;
//! 5. `+ dedup` — each chunk's URN keys written and hashed by the task that
//!    scanned it, from the key shapes its scan kept ([`scan_windows_keyed`]),
//!    then each window's keys inserted into a sharded key table ([`absorb`]),
//!    as `scan --unique` and `scan --stats` do;
//! 6. `+ NID stats` — the same table, then its entries counted by NID
//!    ([`NidStats::from_table`]), as `scan --stats` counts them;
//! 7. `+ sort` — the same table (not the NID counts), then its entries
//!    sorted by key and read in that order, each first-seen form rebuilt,
//!    in parallel blocks, as `scan --unique` prints them (all of its output
//!    work but writing the numbers and the bytes out);
//! 8. `+ sort by count` — the same, in the order of `scan --unique --sort
//!    count`: the key order, then that order sorted again by count
//!    ([`ShardedTable::by_count`]).
//!
//! With `--lines` the file is a URN dataset, one per line, and the rows
//! after the floor follow `urnscan dedup` instead of the scanner:
//!
//! 3. line ends — every line found as `dedup` finds them, each 4 KiB made
//!    into the bit maps its lines are judged by ([`for_each_line`]);
//! 4. `+ parse` — the file fed to a [`LineDedup`] as one input, with only
//!    its parse phase ([`LineDedup::parse_only`]): each line trimmed,
//!    judged, keyed and hashed, and its record put in its partition;
//! 5. `+ dedup` — the same with the count phase too: each record's key
//!    counted in its partition's table;
//! 6. `+ NID stats` — the same, then the classes counted by NID
//!    ([`LineDedup::finish_stats`]), as `dedup --stats` counts them;
//! 7. `+ first-seen output` — the same as `+ dedup` (not the NID counts),
//!    then the classes formatted in first-seen order (first-seen form and a
//!    newline) and written to nowhere, as `dedup` prints them;
//! 8. `+ output by key` and `+ output by count` — the same in the orders of
//!    `dedup --sort key` and `--sort count` (each class's position sorted
//!    first, as `dedup` sorts it);
//! 9. `lines in a HashSet` — a reference, not a layer: the distinct lines
//!    as bytes, as `sort -u` sees them (no trimming, validation or key),
//!    counted in the same two phases as `dedup` counts keys (each block's
//!    lines hashed with the same XXH3 by parallel chunks and grouped into
//!    64 partitions, then one std `HashSet` per partition, in parallel).
//!    It does less than any row above it, so the distance from it to
//!    `+ dedup` is what validation, the equivalence key and the
//!    first-seen bookkeeping cost, and its lines per second are about as
//!    fast as exact deduplication of these lines runs on this machine with
//!    a general-purpose hash table.
//!
//! Each row is the best of `--runs` runs (the least disturbed by other
//! processes), at one thread and at `-j` threads (default: every core), and
//! is shown as time, GB/s (10^9 bytes per second) and its ratio to the warm
//! floor at the same thread count. The rows from `search + validate` on also
//! show millions of valid URNs per second (every occurrence, repeats
//! included): the measure for dense inputs and URN datasets, since it does
//! not depend on how much other text surrounds the URNs. Before timing, one
//! untimed pass touches every page, so the warm rows measure memory and
//! compute, not page faults. For a mapped file that pass is also when the
//! `pages:` line is read: how much of the mapping is resident and how much
//! of it in huge pages ([`Whole::resident`]), which decides what mapping
//! costs: on the 1 GiB text of `benches/compare.sh` (Zen 5 guest, best of
//! 5) `floor + map` took 0.99–1.05× the warm floor in huge pages and
//! 1.20–1.35× in small ones. Two tables compare only with the same line.
//! `--floor` prints only the floor rows: the "program" to compare others to.
//!
//! Parallel rows split the input in [`DEFAULT_CHUNK_SIZE`] chunks, as the
//! scanner does, and run in a dedicated rayon pool of that many threads.
//! The scan rows call the library's own code paths, so they measure what
//! `urnscan scan` runs; only the window size is repeated here ([`WINDOW`]).

use std::collections::HashSet;
use std::hash::BuildHasherDefault;
use std::io::{self, Write};
use std::ops::Range;
use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use rayon::prelude::*;
use urnscan::corpus::{generate_text, TextConfig};
use urnscan::dedup::sorted::RANGE_ENTRIES;
use urnscan::dedup::{key_hash, Entry, ShardedTable};
use urnscan::find::Candidates;
use urnscan::hashed::{Hashed, StoredHash};
use urnscan::job::{absorb, scan_windows_keyed, Origin};
use urnscan::lines::{line_ranges, DedupOptions, LineDedup, Order, DEFAULT_BLOCK_SIZE};
use urnscan::platform::mmap::Resident;
use urnscan::platform::simd::line_bits::for_each_line;
use urnscan::platform::simd::{read_every_byte, Kernel, UrnFinder};
use urnscan::scan::{Event, DEFAULT_CHUNK_SIZE};
use urnscan::source::{self, Contents, Input, MmapPolicy, Whole};
use urnscan::stats::NidStats;
use urnscan::{ExtractOptions, Grammar, Scanner};

use super::output::thousands;
use super::{grammar, BenchArgs};

/// `bench --format` values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchFormat {
    /// A table.
    Text,
    /// One JSON object.
    Json,
}

/// Window of the scan rows: `urnscan scan` scans large files window by
/// window, holding one window's events at a time, in windows of up to
/// this length (the job module's private `WINDOW`; keep the two equal).
const WINDOW: usize = 32 << 20;

/// One measured row.
struct Row {
    phase: &'static str,
    kernel: Option<Kernel>,
    threads: usize,
    time: Duration,
    /// What the phase counted (candidates, events, URNs, keys), to show the
    /// work was done; `None` for the floor.
    count: Option<(&'static str, u64)>,
    /// Valid URNs the phase handled (rows from `search + validate` on).
    urns: Option<u64>,
}

pub fn run(args: &BenchArgs) -> Result<ExitCode> {
    let runs = args.runs.max(1);
    let many = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())).max(1);
    if let (true, Some(path)) = (args.once, &args.file) {
        return floor_once(path, many, args.format);
    }
    let thread_counts: Vec<usize> = if many == 1 { vec![1] } else { vec![1, many] };
    let pools = thread_counts
        .iter()
        .map(|&n| Ok((n, rayon::ThreadPoolBuilder::new().num_threads(n).build()?)))
        .collect::<Result<Vec<_>>>()?;
    let (name, whole) = load(args)?;
    let hay = whole.as_bytes();
    if hay.is_empty() {
        bail!("{name} is empty: nothing to measure");
    }
    // Page everything in before timing (black_box: a fold whose result is
    // dropped may be optimised away, and was).
    std::hint::black_box(read_every_byte(hay));
    let pages = whole.resident();
    let best = args.search.finder()?;
    let scanner = Scanner::new(ExtractOptions { grammar: grammar(args.rfc2141), trim: true }).with_finder(best);

    let mut rows = Vec::new();
    for (threads, pool) in &pools {
        let threads = *threads;
        let mut push = |phase, kernel, count, time| rows.push(Row { phase, kernel, threads, time, count, urns: None });
        push("floor", None, None, best_of(runs, || pool.install(|| floor(hay))).0);
        if let Some(path) = &args.file {
            let (time, mapped) = best_of(runs, || pool.install(|| mapped_floor(path)));
            mapped?;
            push("floor + map", None, None, time);
        }
        if args.floor {
            continue;
        }
        if args.lines {
            let grammar = scanner.options().grammar;
            let (time, n) = best_of(runs, || pool.install(|| count_lines(hay)));
            push("line ends", None, Some(("lines", n)), time);
            for (phase, upto) in [
                ("+ parse", Upto::Parse),
                ("+ dedup", Upto::Dedup),
                ("+ NID stats", Upto::Stats),
                ("+ first-seen output", Upto::Output(Order::FirstSeen)),
                ("+ output by key", Upto::Output(Order::Key)),
                ("+ output by count", Upto::Output(Order::Count)),
            ] {
                let (time, counted) = best_of(runs, || pool.install(|| dedup_lines(hay, grammar, upto)));
                let (valid, n) = counted?;
                let count = match upto {
                    Upto::Parse => ("valid", valid),
                    Upto::Stats => ("nids", n),
                    _ => ("unique", n),
                };
                rows.push(Row { phase, kernel: None, threads, time, count: Some(count), urns: Some(valid) });
            }
            let (time, (lines, distinct)) = best_of(runs, || pool.install(|| distinct_lines(hay, DEFAULT_BLOCK_SIZE)));
            let count = Some(("distinct lines", distinct));
            rows.push(Row { phase: "lines in a HashSet", kernel: None, threads, time, count, urns: Some(lines) });
            continue;
        }
        let kernels: Vec<Kernel> = if threads == 1 { Kernel::available() } else { vec![best.kernel()] };
        for kernel in kernels.into_iter().rev() {
            let finder = UrnFinder::with_kernel(kernel).context("kernel vanished")?.with_prefetch(best.prefetches());
            let (time, n) = best_of(runs, || pool.install(|| count_candidates(finder, hay)));
            push("search", Some(kernel), Some(("candidates", n)), time);
        }
        if threads == 1 && best.kernel() != Kernel::Scalar {
            // The best kernel with the other prefetch setting, so users
            // see whether the CPU-based default is right on their machine.
            let other = best.with_prefetch(!best.prefetches());
            let (time, n) = best_of(runs, || pool.install(|| count_candidates(other, hay)));
            let phase = if other.prefetches() { "search, prefetch" } else { "search, no prefetch" };
            push(phase, Some(other.kernel()), Some(("candidates", n)), time);
        }
        let (time, (n, urns)) = best_of(runs, || pool.install(|| count_events(&scanner, hay)));
        let mut push = |phase, count, time| {
            rows.push(Row { phase, kernel: None, threads, time, count: Some(count), urns: Some(urns) })
        };
        push("search + validate", ("events", n), time);
        let (time, n) = best_of(runs, || pool.install(|| key_table(&scanner, hay).len() as u64));
        push("+ dedup", ("unique", n), time);
        let (time, n) = best_of(runs, || pool.install(|| NidStats::from_table(&key_table(&scanner, hay)).len() as u64));
        push("+ NID stats", ("nids", n), time);
        let (time, n) = best_of(runs, || pool.install(|| sorted_entries(&scanner, hay, Sort::Key)));
        push("+ sort", ("unique", n), time);
        let (time, n) = best_of(runs, || pool.install(|| sorted_entries(&scanner, hay, Sort::Count)));
        push("+ sort by count", ("unique", n), time);
    }
    let out = &mut io::stdout().lock();
    let report = Report {
        name: &name,
        bytes: hay.len(),
        finder: best,
        by_cpu: args.search.is_default(),
        runs,
        pages,
        rows: &rows,
    };
    match args.format {
        BenchFormat::Text => report.text(out).context("cannot write to standard output")?,
        BenchFormat::Json => report.json(out).context("cannot write to standard output")?,
    }
    out.flush().context("cannot write to standard output")?;
    if let Some(note) = short_input_note(&rows) {
        super::say(format_args!("{note}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// A floor shorter than this says the rows are too: each is timed on its
/// own, and at a few milliseconds the timer, the scheduler and the first
/// touch of memory move a row by more than the phases differ (on 16 MiB,
/// `+ sort` once came out faster than `+ dedup`, which it includes).
const SHORT_FLOOR: Duration = Duration::from_millis(5);

/// What to tell the user when the input reads too fast for its rows to be
/// compared, or `None`.
fn short_input_note(rows: &[Row]) -> Option<String> {
    let floor = rows.iter().filter(|r| r.phase == "floor").map(|r| r.time).min()?;
    (floor < SHORT_FLOOR).then(|| {
        format!(
            "urnscan bench: note: reading every byte took {:.1} ms; rows this short are within timing noise \
             and can come out in any order: measure a file of 256 MiB or more (or --generate 1GiB)",
            floor.as_secs_f64() * 1e3
        )
    })
}

/// The bytes to measure: the file (mapped when it can be) or a generated corpus.
fn load(args: &BenchArgs) -> Result<(String, Whole)> {
    if let Some(size) = args.generate {
        let cfg = TextConfig { size, seed: args.seed, urns_per_mib: args.density, ..TextConfig::default() };
        let mut bytes = Vec::new();
        // A size the allocator refuses (past the address space, over a
        // `ulimit -v`) is a clear error, not an abort. One it grants but
        // the machine cannot hold is not caught here: it runs out of
        // memory as it is written.
        usize::try_from(size).ok().and_then(|n| bytes.try_reserve_exact(n).ok()).with_context(|| {
            format!(
                "cannot allocate {} bytes for the corpus: give a smaller --generate, or write one with \
                 `urnscan gen --size SIZE -o FILE` and bench the file",
                thousands(size)
            )
        })?;
        let started = Instant::now();
        generate_text(&cfg, &mut bytes, None).context("cannot generate the corpus")?;
        super::say(format_args!(
            "urnscan bench: generated {} bytes in {:.2} s",
            thousands(size),
            started.elapsed().as_secs_f64()
        ));
        let name = format!("generated {size} bytes, {} URNs/MiB, seed {}", args.density, args.seed);
        return Ok((name, Whole::Owned(bytes)));
    }
    let Some(path) = &args.file else { bail!("give a FILE or --generate SIZE") };
    let name = path.display().to_string();
    match source::open(&Input::File(path.clone()), MmapPolicy::Always).with_context(|| format!("cannot open {name}"))? {
        Contents::Whole(whole) => Ok((name, whole)),
        Contents::Stream(_) | Contents::Pipe(_) => {
            bail!("{name} is not a regular file: bench measures files it can map")
        }
    }
}

/// Runs `f` `runs` times; the shortest time and the last result.
fn best_of<T>(runs: u32, mut f: impl FnMut() -> T) -> (Duration, T) {
    let mut best = Duration::MAX;
    let mut last = None;
    for _ in 0..runs {
        let started = Instant::now();
        let out = std::hint::black_box(f());
        best = best.min(started.elapsed());
        last = Some(out);
    }
    (best, last.expect("at least one run"))
}

fn chunks(len: usize) -> impl IndexedParallelIterator<Item = (usize, usize)> {
    (0..len.div_ceil(DEFAULT_CHUNK_SIZE))
        .into_par_iter()
        .map(move |i| (i * DEFAULT_CHUNK_SIZE, ((i + 1) * DEFAULT_CHUNK_SIZE).min(len)))
}

/// Every byte read once, chunks spread over the pool.
fn floor(hay: &[u8]) -> u8 {
    chunks(hay.len()).map(|(s, e)| read_every_byte(&hay[s..e])).reduce(|| 0, |a, b| a ^ b)
}

/// The floor of a fresh process: map the file, fault every page in, unmap.
/// Returns the bytes read and their fold.
fn mapped_floor(path: &Path) -> Result<(usize, u8)> {
    match source::open(&Input::File(path.to_path_buf()), MmapPolicy::Always)? {
        Contents::Whole(whole) => Ok((whole.as_bytes().len(), floor(whole.as_bytes()))),
        Contents::Stream(_) | Contents::Pipe(_) => bail!("{} cannot be mapped", path.display()),
    }
}

/// `--floor --once`: one fresh map-and-read of the file with `threads`
/// threads, as a whole process does it, so that timing this process
/// compares with timing a whole `urnscan scan` (start-up, page faults and
/// unmapping included on both sides).
fn floor_once(path: &Path, threads: usize, format: BenchFormat) -> Result<ExitCode> {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let started = Instant::now();
    let (bytes, _) = pool.install(|| mapped_floor(path)).with_context(|| format!("cannot read {}", path.display()))?;
    let time = started.elapsed();
    if bytes == 0 {
        bail!("{} is empty: nothing to measure", path.display());
    }
    let mut out = io::stdout().lock();
    let written = match format {
        BenchFormat::Text => writeln!(
            out,
            "floor + map, once: {} bytes, {threads} thread{}, {:.1} ms, {:.2} GB/s",
            thousands(bytes as u64),
            if threads == 1 { "" } else { "s" },
            time.as_secs_f64() * 1e3,
            gbps(bytes, time)
        ),
        BenchFormat::Json => writeln!(
            out,
            "{}",
            serde_json::json!({
                "input": path.display().to_string(), "bytes": bytes, "phase": "floor + map",
                "once": true, "threads": threads, "seconds": time.as_secs_f64(), "gbps": gbps(bytes, time),
            })
        ),
    };
    written.and_then(|()| out.flush()).context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}

/// Candidates (before validation) of the whole buffer.
fn count_candidates(finder: UrnFinder, hay: &[u8]) -> u64 {
    chunks(hay.len()).map(|(s, e)| Candidates::new(finder, hay, s, e).count() as u64).sum()
}

/// Events of the whole buffer, scanned as `urnscan scan` scans a file, and
/// how many of them are URNs.
fn count_events(scanner: &Scanner, hay: &[u8]) -> (u64, u64) {
    let (mut events, mut urns) = (0, 0);
    scanner.scan_windows(hay, WINDOW, |window| {
        events += window.len() as u64;
        urns += window.iter().filter(|e| matches!(e, Event::Urn { .. })).count() as u64;
        true
    });
    (events, urns)
}

/// Lines of the whole buffer, found as `urnscan dedup` finds them (each
/// 4 KiB made into the maps of `platform::simd::line_bits`, then stepped
/// through from line end to line end), in parallel chunks of whole lines;
/// a last line without `\n` counts too.
fn count_lines(hay: &[u8]) -> u64 {
    let (lines, sum) = line_ranges(hay, DEFAULT_CHUNK_SIZE)
        .into_par_iter()
        .map(|range| {
            let (mut n, mut sum) = (0u64, 0u64);
            for_each_line(&hay[range.clone()], |line, _| {
                n += 1;
                sum = sum.wrapping_add((range.start + line.end) as u64);
            });
            (n, sum)
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.wrapping_add(b.1)));
    // The sum only keeps the line loop from being optimised away.
    std::hint::black_box(sum);
    lines
}

/// How far [`dedup_lines`] goes.
#[derive(Clone, Copy)]
enum Upto {
    /// The parse phase only ([`LineDedup::parse_only`]).
    Parse,
    /// Both phases: the keys counted in their tables.
    Dedup,
    /// Both phases, then the classes counted by NID.
    Stats,
    /// Both phases and the output in this order.
    Output(Order),
}

/// `urnscan dedup` on the buffer as one input, up to `upto`: lines parsed,
/// keyed and hashed; then counted; then the classes counted by NID, or
/// formatted in the given order (the first-seen form and a newline each)
/// and written nowhere. Returns the valid lines and the distinct keys (0
/// when not counted; the distinct NIDs for [`Upto::Stats`]).
fn dedup_lines(hay: &[u8], grammar: Grammar, upto: Upto) -> Result<(u64, u64)> {
    let mut dedup = LineDedup::new(DedupOptions { grammar, ..DedupOptions::default() });
    if let Upto::Parse = upto {
        dedup = dedup.parse_only();
    }
    dedup.add_bytes(hay, 0, &mut |_| Ok(())).context("cannot deduplicate the lines")?;
    let valid = dedup.counts().valid;
    let order = match upto {
        Upto::Parse | Upto::Dedup => return Ok((valid, dedup.table_len() as u64)),
        Upto::Stats => return Ok((valid, dedup.finish_stats()?.0.len() as u64)),
        Upto::Output(order) => order,
    };
    let format = |e: &Entry<'_>, line: &mut Vec<u8>| {
        e.raw.write_into(line);
        line.push(b'\n');
        Ok(())
    };
    let finished = dedup.finish_parallel(order, &format, &mut io::sink())?;
    Ok((valid, finished.distinct))
}

type LineSet<'a> = HashSet<Hashed<'a>, BuildHasherDefault<StoredHash>>;

/// Partitions of [`distinct_lines`], as many as `urnscan dedup` has.
const SET_PARTS: usize = 64;

/// The reference row of `--lines`: the buffer's lines, as `sort -u` sees
/// them, hashed by parallel chunks of each block of about `block` bytes and
/// grouped by hash ([`Hashed::part`]), then counted in one `HashSet` per
/// group, the groups in parallel (the two phases of `urnscan dedup`).
/// Returns the lines and the distinct ones.
fn distinct_lines(hay: &[u8], block: usize) -> (u64, u64) {
    let mut sets: Vec<LineSet<'_>> = (0..SET_PARTS).map(|_| LineSet::default()).collect();
    let mut groups: Vec<Vec<Vec<Hashed<'_>>>> = Vec::new();
    let mut lines = 0;
    for range in line_ranges(hay, block) {
        let block = &hay[range];
        let pieces = line_ranges(block, block.len() / (rayon::current_num_threads() * 4));
        let used = pieces.len();
        groups.resize_with(groups.len().max(used), || vec![Vec::new(); SET_PARTS]);
        groups[..used].par_iter_mut().zip(pieces).for_each(|(group, piece)| {
            group.iter_mut().for_each(Vec::clear);
            let piece = &block[piece];
            for_each_line(piece, |line, _| {
                let bytes = &piece[line];
                let line = Hashed { hash: key_hash(bytes), bytes };
                group[line.part(SET_PARTS)].push(line);
            });
        });
        let used = &groups[..used];
        lines += used.iter().flatten().map(|g| g.len() as u64).sum::<u64>();
        sets.par_iter_mut().enumerate().for_each(|(p, set)| {
            for group in used {
                set.extend(group[p].iter().copied());
            }
        });
    }
    (lines, sets.iter().map(|s| s.len() as u64).sum())
}

/// The key table of the whole buffer, built as `scan --unique` builds it.
fn key_table(scanner: &Scanner, hay: &[u8]) -> ShardedTable {
    let mut table = ShardedTable::new();
    // As a mapped file is scanned: keys written by each chunk's task, new
    // keys checked again.
    let origin = Origin { file: 0, base: 0, grammar: scanner.options().grammar, mapped: true, ns_rules: false };
    scan_windows_keyed(scanner, hay, WINDOW, origin, |_, keys| {
        absorb(&mut table, &keys, hay);
        true
    });
    table
}

/// The orders of `+ sort` and `+ sort by count`.
#[derive(Clone, Copy)]
enum Sort {
    Key,
    Count,
}

/// The key table of the whole buffer, its entries sorted and read in
/// `order` as `scan --unique` reads them to print them: blocks of
/// [`RANGE_ENTRIES`] entries, in parallel. Returns how many entries were read.
fn sorted_entries(scanner: &Scanner, hay: &[u8], order: Sort) -> u64 {
    let mut table = key_table(scanner, hay);
    match order {
        Sort::Key => {
            let sorted = table.sorted();
            read_in_blocks(sorted.len(), |range| sorted.iter_range(range))
        }
        Sort::Count => {
            let counted = table.by_count();
            read_in_blocks(counted.len(), |range| counted.iter_range(range))
        }
    }
}

/// Reads `len` entries in parallel blocks of [`RANGE_ENTRIES`], each as
/// printing needs it: its count, position and first-seen form, rebuilt
/// from the key and its delta. Returns how many were read.
fn read_in_blocks<'t, I>(len: usize, range: impl Fn(Range<usize>) -> I + Sync) -> u64
where
    I: Iterator<Item = Entry<'t>>,
{
    let blocks: Vec<usize> = (0..len).step_by(RANGE_ENTRIES).collect();
    let (read, sum) = blocks
        .par_iter()
        .map(|&start| {
            let mut raw = Vec::new();
            range(start..(start + RANGE_ENTRIES).min(len)).fold((0u64, 0u64), |(n, sum), e| {
                raw.clear();
                e.raw.write_into(&mut raw);
                (n + 1, sum.wrapping_add(e.count).wrapping_add(raw.len() as u64).wrapping_add(e.first.offset))
            })
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1.wrapping_add(b.1)));
    // The sum only keeps the reads from being optimised away.
    std::hint::black_box(sum);
    read
}

fn label(row: &Row) -> String {
    match row.kernel {
        Some(k) => format!("{} ({})", row.phase, k.name()),
        None => row.phase.to_owned(),
    }
}

/// The warm floor at the row's thread count.
fn floor_of(rows: &[Row], threads: usize) -> Duration {
    rows.iter().find(|r| r.phase == "floor" && r.threads == threads).map_or(Duration::MAX, |r| r.time)
}

fn gbps(bytes: usize, time: Duration) -> f64 {
    bytes as f64 / time.as_secs_f64().max(1e-9) / 1e9
}

/// Valid URNs per second of a row that counts them.
fn urns_per_second(row: &Row) -> Option<f64> {
    row.urns.map(|n| n as f64 / row.time.as_secs_f64().max(1e-9))
}

/// How the mapped input sits in memory once paged in: huge pages make
/// mapping it (`floor + map`, and every whole `urnscan` process) markedly
/// cheaper, so a reader of the table needs to know which it got.
fn pages_line(pages: Resident) -> String {
    let mib = |bytes: usize| thousands(bytes.div_ceil(1 << 20) as u64);
    let all = mib(pages.bytes);
    if pages.in_huge_pages == 0 {
        format!(
            "{all} MiB mapped, all in small pages (huge ones need the file cached in huge folios, \
             transparent huge pages not `never`, and Linux 6.18 or later)"
        )
    } else {
        format!("{all} MiB mapped, {} MiB of it in huge pages", mib(pages.in_huge_pages))
    }
}

/// A measured input's rows and what they were measured with, as printed.
struct Report<'a> {
    name: &'a str,
    bytes: usize,
    /// The search the scan rows use.
    finder: UrnFinder,
    /// Whether `finder` is the CPU-based default (or was chosen with --kernel / --prefetch).
    by_cpu: bool,
    runs: u32,
    pages: Option<Resident>,
    rows: &'a [Row],
}

impl Report<'_> {
    fn text(&self, out: &mut impl Write) -> io::Result<()> {
        let Report { name, bytes, finder, by_cpu, runs, pages, rows } = *self;
        writeln!(out, "input:  {name}, {} bytes", thousands(bytes as u64))?;
        let prefetch = if finder.prefetches() { "on" } else { "off" };
        let how = if by_cpu { "best this CPU supports" } else { "chosen with --kernel / --prefetch" };
        writeln!(
            out,
            "kernel: {} ({how}), software prefetch {prefetch}; best of {runs} runs per row",
            finder.kernel().name()
        )?;
        if let Some(line) = pages.map(pages_line) {
            writeln!(out, "pages:  {line}")?;
        }
        writeln!(out)?;
        writeln!(
            out,
            "{:<28} {:>7} {:>11} {:>8} {:>9} {:>10}  counted",
            "phase", "threads", "time", "GB/s", "x floor", "M URNs/s"
        )?;
        for row in rows {
            let ratio = row.time.as_secs_f64() / floor_of(rows, row.threads).as_secs_f64();
            let rate = urns_per_second(row).map_or(String::new(), |r| format!("{:.2}", r / 1e6));
            let counted = row.count.map_or(String::new(), |(what, n)| format!("{} {what}", thousands(n)));
            let line = format!(
                "{:<28} {:>7} {:>8.1} ms {:>8.2} {:>9.2} {rate:>10}  {counted}",
                label(row),
                row.threads,
                row.time.as_secs_f64() * 1e3,
                gbps(bytes, row.time),
                ratio
            );
            writeln!(out, "{}", line.trim_end())?;
        }
        Ok(())
    }

    fn json(&self, out: &mut impl Write) -> Result<()> {
        let Report { name, bytes, finder, runs, pages, rows, .. } = *self;
        let rows: Vec<serde_json::Value> = rows
            .iter()
            .map(|row| {
                serde_json::json!({
                    "phase": row.phase,
                    "kernel": row.kernel.map(Kernel::name),
                    "threads": row.threads,
                    "seconds": row.time.as_secs_f64(),
                    "gbps": gbps(bytes, row.time),
                    "ratio_to_floor": row.time.as_secs_f64() / floor_of(rows, row.threads).as_secs_f64(),
                    "counted": row.count.map(|(what, _)| what),
                    "count": row.count.map(|(_, n)| n),
                    "urns": row.urns,
                    "urns_per_second": urns_per_second(row),
                })
            })
            .collect();
        let report = serde_json::json!({
            "input": name,
            "bytes": bytes,
            "kernel": finder.kernel().name(),
            "prefetch": finder.prefetches(),
            "runs": runs,
            "resident_bytes": pages.map(|p| p.bytes),
            "resident_in_huge_pages": pages.map(|p| p.in_huge_pages),
            "rows": rows,
        });
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The note goes by the shortest floor row, whatever the other rows.
    #[test]
    fn a_short_floor_gets_a_note_and_a_long_one_none() {
        let row = |phase, ms| Row {
            phase,
            kernel: None,
            threads: 1,
            time: Duration::from_millis(ms),
            count: None,
            urns: None,
        };
        let note = short_input_note(&[row("floor", 3), row("search + validate", 40)]).expect("a note");
        assert!(note.contains("3.0 ms") && note.contains("--generate 1GiB"), "{note}");
        // The shortest floor of any thread count decides; other rows do not.
        assert!(short_input_note(&[row("floor", 40), row("floor", 4)]).is_some());
        assert_eq!(short_input_note(&[row("floor", 40), row("floor", 30), row("+ sort", 1)]), None);
        assert_eq!(short_input_note(&[]), None);
    }

    /// The reference set counts what `sort -u | wc -l` counts, whatever the
    /// block size: every line once, an unterminated last line included.
    #[test]
    fn distinct_lines_are_the_sorted_unique_lines() {
        let text: &[u8] = b"urn:a:1\nURN:a:1\n\nurn:a:1\nx y\n\nurn:b:2\nx y\nlast";
        let want = text.split(|&b| b == b'\n').collect::<std::collections::BTreeSet<_>>().len() as u64;
        assert_eq!(want, 6);
        for block in [1, 3, 8, 20, 1 << 20] {
            assert_eq!(distinct_lines(text, block), (9, want), "block {block}");
        }
        assert_eq!(distinct_lines(&text[..text.len() - 4], 5), (8, 5), "a final newline ends the last line");
        assert_eq!(distinct_lines(b"", 5), (0, 0));
    }
}
