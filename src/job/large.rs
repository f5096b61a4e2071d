//! Files too large to scan at once, scanned window by window as a
//! pipeline ([`scan_large`]), and how the windows are sized.

use std::io;
use std::ops::Range;

use super::emit::{emit, write_formatted, Notes};
use super::keys::{absorb, Origin};
use super::line_numbers::Emitting;
use super::span::{scan_keyed, Spanned};
use super::{advance, changed_error, JobOptions, Outcome, Sink, Target, Totals};
use crate::scan::{resume_point, Event, Scanner};
use crate::source::Whole;

/// Inputs larger than this are scanned a window at a time, so the events
/// held at once (one per candidate) stay bounded whatever the file holds.
/// The first window is this long too; the next ones are sized from it.
pub(super) const LARGE: usize = 16 << 20;

/// The longest window, which text with few URNs grows to. Each window is
/// a round of the pipeline ([`scan_large`]) that ends when its slowest
/// task does, so at two threads every round lost a little of a chunk's
/// time; longer windows are fewer rounds. Measured (2026-11-28, 2-core
/// KVM guest, 1 GiB of text with 200 URNs per MiB, `scan --unique
/// --stats`, `benches/ab.sh`, 11 rounds, medians; peak RSS, most of it the
/// file's pages mapped for the windows in flight): 16 MiB 184 / 113 ms at
/// one / two threads, 53 MB; 32 MiB 179 / 107 ms, 88 MB; 64 MiB 178 / 104
/// ms, 154 MB. Again, 16 against 32 MiB: 180 / 112 against 178 / 105 ms;
/// text with 5,000 URNs per MiB, whose windows stay shorter, 310 ms at
/// two threads with either.
const WINDOW: usize = 32 << 20;

/// About how many events a window should hold while keys are collected or
/// URNs printed: each window is sized from the density of the one before
/// (between [`MIN_WINDOW`] and [`WINDOW`]). Each event costs 24 bytes, and
/// a URN's key note or parts 24 more, twice over while the pipeline holds
/// two windows. A
/// URN dataset has some 27,000 URNs per MiB, so a 16 MiB window of it held
/// 40 MB of bookkeeping and 32 MiB of mapped pages beside the key table,
/// the one thing that should grow; at 32,768 events its windows are
/// 1.2 MiB, text with 5,000 URNs per MiB gets 6.5 MiB windows, and text
/// with 200 grows to [`WINDOW`]. (Measured on the 10 M-line dataset, `scan
/// --unique -j2`: peak RSS 194 MiB at 32,768 events, 202 MiB at 65,536;
/// time within noise. With 16 MiB windows, and the sorted output in a list
/// of its own, it was 351 MiB.)
const WINDOW_EVENTS: usize = 1 << 15;

/// The shortest window.
const MIN_WINDOW: usize = 1 << 20;

/// The first window of a run that will likely stop inputs early
/// ([`JobOptions::early_stop`]); each next one is at most four times the
/// one before. With whole files of 16 MiB, `scan -l` of 64 of them took
/// 70 ms where `grep -l` took 4: both stop at the first URN, but ours was
/// only asked after the whole file.
pub(super) const EARLY_WINDOW: usize = 256 << 10;

/// The scanner for a window of `len` bytes. A run that prints every event
/// and keeps no keys cuts a window into at least eight chunks per thread
/// (of 128 KiB or more, and no more than `scanner`'s own size): dense
/// input's windows hold about [`WINDOW_EVENTS`] events, 1.2 MiB of a URN
/// dataset, which 1 MiB chunks made one or two tasks, and the other
/// thread had nothing to do. Measured (2026-11-28, 2-core KVM guest,
/// `benches/ab.sh`, medians): plain `scan -j2` of the 10 M-line dataset
/// with `--chunk-size` 1 MiB / 256 / 128 / 64 KiB 575 / 561 / 531 / 539
/// ms. Keyed runs keep whole chunks: their per-chunk work (a key batch
/// each) made smaller ones slower (`scan -u -j2` on the dataset 1,382 →
/// 1,417 ms with 256 KiB), and so does one thread (803 → 816 ms).
fn window_scanner(scanner: &Scanner, opts: &JobOptions, len: usize) -> Scanner {
    let threads = rayon::current_num_threads();
    if !opts.events || opts.keys || threads < 2 {
        return *scanner;
    }
    let chunk = (len / (8 * threads)).max(MIN_PRINTING_CHUNK).min(scanner.chunk_size());
    scanner.with_chunk_size(chunk)
}

/// The smallest chunk [`window_scanner`] cuts.
const MIN_PRINTING_CHUNK: usize = 128 << 10;

/// The length of the window after one of `len` bytes that held `events`.
fn next_window_len(len: usize, events: usize) -> usize {
    let scaled = len as u64 * WINDOW_EVENTS as u64 / events.max(1) as u64;
    usize::try_from(scaled).unwrap_or(WINDOW).clamp(MIN_WINDOW, WINDOW)
}

/// Scans a large mapped file window by window (each window in parallel
/// chunks), feeding the sink as it goes, as a pipeline: while window *k+1*
/// is scanned, the keys of window *k* enter the table (a task per shard)
/// and the calling thread hands window *k*'s events, or their formatted
/// text, to the sink (which need not be `Send`: `rayon::in_place_scope`
/// runs it here). So neither
/// the insertion tasks nor the printing of every occurrence waits for the
/// scan, or the scan for them. Keys still enter, and events still reach
/// the sink, in input order; a window's pages are given back only once its
/// keys are in and its events out, by a task of the next window's round.
pub(super) fn scan_large(
    scanner: &Scanner,
    opts: &JobOptions,
    target: Target<'_>,
    whole: &Whole,
    sink: &mut dyn Sink,
    outcome: &mut Outcome,
) -> io::Result<()> {
    let (hay, file) = (whole.as_bytes(), target.file);
    let mut totals = Totals { files: 1, bytes: hay.len() as u64, ..Totals::default() };
    // With line numbers: the newlines before the window being emitted.
    let mut before_window = 0;
    let grammar = scanner.options().grammar;
    let origin = Origin { file: file.index, base: 0, grammar, mapped: whole.is_mapped(), ns_rules: opts.ns_rules };
    let window = |from: usize, len: usize| from..hay.len().min(from.saturating_add(len));
    let mut span = window(0, if opts.early_stop { EARLY_WINDOW } else { LARGE });
    // The chunk tasks count the bytes they scan; the few bytes a window
    // skips at its start (the tail of a URN that began in the window before)
    // are added at the end.
    let mut counted = span.len() as u64;
    let first = window_scanner(scanner, opts, span.len());
    let mut scanned = Some(scan_keyed(&first, opts, hay, span.clone(), origin, target, 0));
    // Pages before `done_before` (the last window's `done`) can go.
    let mut done_before = 0;
    while let Some(Spanned { events, keys, parts, kept, text, lines }) = scanned.take() {
        totals.count(&events, &kept);
        let next_from = resume_point(&events, span.end);
        let window_lines = lines.as_ref().map_or(0, |l| l.total);
        let mut input = Emitting::new(file, opts, lines, before_window);
        before_window += window_lines;
        // Windows shrink when the run keeps something per URN (keys for
        // the table, parts for the output); a run that only counts keeps
        // whole windows, each a pause less in the pipeline.
        let next_len = if opts.keys || opts.events { next_window_len(span.len(), events.len()) } else { WINDOW };
        let next_len = if opts.early_stop { next_len.min(span.len().saturating_mul(4)) } else { next_len };
        let next_span = (next_from < hay.len()).then(|| window(next_from, next_len));
        // Later windows read at most a few bytes before their start, and
        // every event is a candidate start: once this window's keys are in
        // and its events out, the bytes before its last event are done with.
        let done = events.last().map_or(done_before, Event::offset);
        // Without a sink for them the events are dropped now, so that only
        // the next window's are held while it is scanned.
        let events = if opts.events { events } else { Vec::new() };
        let table = &mut outcome.table;
        let mut emitted = Ok(());
        // The windows before it are counted: the next one's lines start
        // after them.
        let scan_next = |span: Range<usize>| {
            let scanner = window_scanner(scanner, opts, span.len());
            scan_keyed(&scanner, opts, hay, span, origin, target, before_window)
        };
        // A run that will likely stop and prints nothing per event (`-l`,
        // `-q`, `-c -m`) asks the sink before it scans on, so that a stop
        // wastes no window scanned meanwhile; one that prints (`-m`) keeps
        // printing beside the scan (`-m` above a file's count: 116 ms
        // without the pipeline against 85 for plain `scan -IN` of (a)).
        let pipelined = !opts.early_stop || opts.events;
        rayon::in_place_scope(|scope| {
            if let (true, Some(next_span)) = (pipelined, next_span.clone()) {
                let next = &mut scanned;
                scope.spawn(move |_| *next = Some(scan_next(next_span)));
            }
            scope.spawn(|_| absorb(table, &keys, hay));
            // The window before's pages, given back by a task of its own:
            // dropping their page-table entries took 36 ms per GiB on one
            // thread between rounds (1 GiB of text at `-j2`), now shared.
            let to = done_before;
            scope.spawn(move |_| whole.release_before(to));
            if let Some(text) = text {
                emitted = write_formatted(text, sink, target.texts);
            } else if opts.events {
                // Once the file has shrunk, its URNs are parsed again.
                let parts = if whole.changed_during_use() { &[][..] } else { &parts[..] };
                emitted = emit(opts, &mut input, hay, 0, &events, Notes { parts, kept: &kept }, sink);
            }
        });
        emitted?;
        let enough = next_span.is_some() && sink.input_progress(file, &totals)?.is_break();
        done_before = done;
        if let Some(next_span) = next_span {
            // Its chunk tasks count its bytes once it is scanned.
            if pipelined || !enough {
                counted += next_span.len() as u64;
            }
            if enough {
                // A next window scanned meanwhile is dropped unseen.
                totals.bytes = span.end as u64;
                break;
            }
            if !pipelined {
                scanned = Some(scan_next(next_span.clone()));
            }
            span = next_span;
        }
    }
    advance(target, (hay.len() as u64).saturating_sub(counted));
    outcome.totals.add(&totals);
    sink.input_done(file, &totals)?;
    if whole.changed_during_use() {
        outcome.totals.errors += 1;
        sink.input_error(&changed_error(file.name))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::ExtractOptions;
    use crate::scan::DEFAULT_CHUNK_SIZE;

    #[test]
    fn runs_that_only_print_cut_short_windows_into_more_chunks() {
        let scanner = Scanner::new(ExtractOptions::default());
        let chunk = |opts: &JobOptions, threads: usize, len: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| window_scanner(&scanner, opts, len).chunk_size())
        };
        let printing = JobOptions { keys: false, ..JobOptions::default() };
        // A dense window: eight chunks per thread, but none under 128 KiB.
        assert_eq!(chunk(&printing, 2, 12 << 20), 768 << 10);
        assert_eq!(chunk(&printing, 4, 12 << 20), 384 << 10);
        assert_eq!(chunk(&printing, 2, 1_200_000), 128 << 10);
        // Long windows, one thread, keyed runs: the configured size.
        assert_eq!(chunk(&printing, 2, LARGE), DEFAULT_CHUNK_SIZE);
        assert_eq!(chunk(&printing, 2, WINDOW), DEFAULT_CHUNK_SIZE);
        assert_eq!(chunk(&printing, 1, 1_200_000), DEFAULT_CHUNK_SIZE);
        assert_eq!(chunk(&JobOptions::default(), 2, 1_200_000), DEFAULT_CHUNK_SIZE);
        let counting = JobOptions { keys: false, events: false, ..JobOptions::default() };
        assert_eq!(chunk(&counting, 2, 1_200_000), DEFAULT_CHUNK_SIZE);
        // A scanner's smaller size (`--chunk-size`) is kept.
        let small = scanner.with_chunk_size(64 << 10);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        assert_eq!(pool.install(|| window_scanner(&small, &printing, 1_200_000).chunk_size()), 64 << 10);
    }

    #[test]
    fn windows_are_sized_by_the_density_of_the_last() {
        // Text at 200 URNs per MiB keeps whole windows, and a first window
        // of it grows to one.
        assert_eq!(next_window_len(WINDOW, (WINDOW >> 20) * 200), WINDOW);
        assert_eq!(next_window_len(LARGE, (LARGE >> 20) * 200), WINDOW);
        // Twice the events wanted: half the length.
        assert_eq!(next_window_len(WINDOW, 2 * WINDOW_EVENTS), WINDOW / 2);
        // A short window with few events grows back, at most to WINDOW.
        assert_eq!(next_window_len(MIN_WINDOW, WINDOW_EVENTS / 4), 4 * MIN_WINDOW);
        assert_eq!(next_window_len(MIN_WINDOW, 0), WINDOW);
        // A candidate every 5 bytes: never under MIN_WINDOW.
        assert_eq!(next_window_len(WINDOW, WINDOW / 5), MIN_WINDOW);
    }
}
