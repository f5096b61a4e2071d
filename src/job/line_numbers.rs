//! Line numbers (`scan -n`, [`JobOptions::line_numbers`]): the sink gets
//! each event's line ([`Location::line`]) beside its offset, at the cost
//! of one more pass over each input's bytes, counting the newlines between
//! one event and the next.
//!
//! For files, whole or a window at a time, the task that scanned a chunk
//! counts them between the chunk's events while the bytes are in cache
//! ([`newlines_from_first`]), and the gaps between chunks and windows are
//! added after ([`SpanLines`]). A stream's blocks are counted the same
//! way when the sink formats them; handed over one by one, a stream's
//! events are located on the calling thread ([`LineCount`], from where the
//! count stands). [`Emitting`] is an input's side of it while its events
//! reach the sink. Measured (2026-11-29, 2-core KVM guest, hyperfine, 7
//! runs, means): `scan -n -j2` of 1 GiB of text with 200 URNs per MiB took
//! 182 ms with every line counted on the calling thread, 144 ms counted by
//! chunk (plain `scan`: 87).
//!
//! A file's events are formatted too, when the sink has a
//! [`Formatter`](super::Formatter), but in a second parallel pass over the
//! span's chunks (`format_chunks_with_lines`): a chunk's records need the
//! lines of every chunk before it, known once the counts are joined, and a
//! window's those of the windows before it, known when it is spawned.
//! Before, every record of `scan -n` was made on the calling thread
//! (`benches/ab.sh`, 7 rounds, medians, one / two threads: the 10 M line
//! dataset 2,553 / 1,331 → 1,969 / 1,147 ms with this and the counting of
//! close events in one pass, see [`newlines_from_first`], where plain
//! `scan` takes 1,412 / 938; 256 MiB of text with 5,000 URNs per MiB 467 /
//! 277 → 427 / 228, plain 179 at two).

use std::ops::Range;

use super::{FileRef, JobOptions, Location};
use crate::scan::{resume_point, Event};

/// An input whose events are being handed to the sink, and with line
/// numbers ([`JobOptions::line_numbers`]) where their lines come from.
pub(super) struct Emitting<'a> {
    pub(super) file: FileRef<'a>,
    lines: Lines,
}

/// How an input's events get their lines.
enum Lines {
    /// No line numbers.
    Off,
    /// Counted here, from one event to the next (a stream's blocks).
    Counted(LineCount),
    /// Counted by the tasks that scanned the span of the events being
    /// emitted (a whole input, a window of a large file): the newlines
    /// before the span, and before each event from the span's start.
    Given { before_span: u64, before: Vec<u64> },
}

/// The newlines before byte `at` of an input. Events reach the sink in
/// input order, so each is located by counting the newlines between the
/// one before and it (`memchr`'s vectorised count).
#[derive(Clone, Copy, Default)]
struct LineCount {
    at: u64,
    newlines: u64,
}

/// The newlines of a span of an input (with line numbers), as the tasks
/// that scanned it counted them.
pub(super) struct SpanLines {
    /// Before each of the span's events, from the span's start.
    pub(super) before: Vec<u64>,
    /// In the span, up to where the next span starts (after the last URN
    /// that crosses its end, as [`resume_point`] decides).
    pub(super) total: u64,
}

impl SpanLines {
    /// Joins the counts of a span's chunks (each chunk's newlines from its
    /// first event to each of its events, [`newlines_from_first`], in
    /// order; together one per event) by counting the gaps between them.
    pub(super) fn join(
        hay: &[u8],
        span: Range<usize>,
        events: &[Event],
        chunks: impl Iterator<Item = Vec<u64>>,
    ) -> SpanLines {
        let mut count = LineCount { at: span.start as u64, newlines: 0 };
        let mut before = Vec::with_capacity(events.len());
        for chunk in chunks {
            let own = chunk.len().min(events.len() - before.len());
            if own == 0 {
                continue;
            }
            let base = count.move_to(hay, 0, events[before.len()].offset() as u64);
            before.extend(chunk[..own].iter().map(|n| base + n));
            // The chunk's own count takes the position to its last event.
            let last = before.len() - 1;
            count = LineCount { at: events[last].offset() as u64, newlines: before[last] };
        }
        // (Chunks hold every event; any left would be counted here.)
        for event in &events[before.len()..] {
            before.push(count.move_to(hay, 0, event.offset() as u64));
        }
        let total = count.move_to(hay, 0, resume_point(events, span.end) as u64);
        SpanLines { before, total }
    }
}

/// The newlines from the first of `events` to each of them (0 for the
/// first), counted by the task that scanned them.
///
/// Two ways to the same counts, chosen by how far apart the events are.
/// Far apart (running text: kilobytes between URNs), a `memchr` count of
/// each gap. Close together (a dataset: one URN per line, a few dozen bytes
/// apart), a count per gap spends more on starting than on counting (a
/// fifth of `scan -n` on 10 M lines), so one pass over the chunk's
/// newlines takes the events as it goes. Measured (2026-11-29, 2-core KVM
/// guest, `benches/ab.sh`, 5 rounds, medians, `scan -n -j1`): the 10 M
/// line dataset 1,997 ms with counts per gap, 1,591 with the one pass,
/// 1,747 with a plain loop for gaps under 256 bytes; 1 GiB of text with
/// 200 URNs per MiB took 1.7x as long with the one pass as with counts.
pub(super) fn newlines_from_first(hay: &[u8], events: &[Event]) -> Vec<u64> {
    let (Some(first), Some(last)) = (events.first(), events.last()) else { return Vec::new() };
    let (start, end) = (first.offset(), last.offset());
    if end - start >= events.len() * CLOSE_EVENTS {
        let mut count = LineCount { at: start as u64, newlines: 0 };
        return events.iter().map(|e| count.move_to(hay, 0, e.offset() as u64)).collect();
    }
    let mut newlines = memchr::memchr_iter(b'\n', &hay[start..end]).map(|i| start + i).peekable();
    let mut count = 0;
    events
        .iter()
        .map(|e| {
            while newlines.next_if(|&at| at < e.offset()).is_some() {
                count += 1;
            }
            count
        })
        .collect()
}

/// Events closer than this, on average, are close together for
/// [`newlines_from_first`].
const CLOSE_EVENTS: usize = 256;

impl<'a> Emitting<'a> {
    /// An input whose events get their lines from `given` (a span's, whose
    /// events are the ones emitted, after `before_span` newlines), or
    /// counted here without it, when the run wants line numbers.
    pub(super) fn new(
        file: FileRef<'a>,
        opts: &JobOptions,
        given: Option<SpanLines>,
        before_span: u64,
    ) -> Emitting<'a> {
        let lines = match given {
            _ if !opts.line_numbers => Lines::Off,
            Some(SpanLines { before, .. }) => Lines::Given { before_span, before },
            None => Lines::Counted(LineCount::default()),
        };
        Emitting { file, lines }
    }

    /// Where byte `offset` of the input, the start of the span's `event`-th
    /// event, is, with its line if lines are counted. `hay` starts at byte
    /// `base` of the input and, when lines are counted here, holds both
    /// `offset` and the byte counted to: a stream's next block starts at
    /// or before the end of the one before, which
    /// [`Emitting::count_to_end`] counts to.
    pub(super) fn locate(&mut self, event: usize, hay: &[u8], base: u64, offset: u64) -> Location {
        let line = match &mut self.lines {
            Lines::Off => None,
            Lines::Counted(count) => Some(count.move_to(hay, base, offset) + 1),
            Lines::Given { before_span, before } => Some(*before_span + before[event] + 1),
        };
        Location { offset, line }
    }

    /// The newlines before byte `offset` of the input, counted from where
    /// the count stands, as [`Emitting::locate`] does (0 without counts).
    pub(super) fn newlines_before(&mut self, hay: &[u8], base: u64, offset: u64) -> u64 {
        match &mut self.lines {
            Lines::Counted(count) => count.move_to(hay, base, offset),
            _ => 0,
        }
    }

    /// Takes `newlines` as the count before byte `offset`, counted by the
    /// caller.
    pub(super) fn counted_to(&mut self, offset: u64, newlines: u64) {
        if let Lines::Counted(count) = &mut self.lines {
            *count = LineCount { at: offset, newlines };
        }
    }

    /// Counts the lines up to the end of `hay` (a stream's block, before
    /// the bytes before its end are dropped).
    pub(super) fn count_to_end(&mut self, hay: &[u8], base: u64) {
        if let Lines::Counted(count) = &mut self.lines {
            count.move_to(hay, base, base + hay.len() as u64);
        }
    }
}

impl LineCount {
    /// The newlines before byte `offset`, counted from the last position
    /// (backwards, when a stream's block starts again before its end).
    pub(super) fn move_to(&mut self, hay: &[u8], base: u64, offset: u64) -> u64 {
        let index = |at: u64| (at - base) as usize;
        let newlines = |bytes: &[u8]| memchr::memchr_iter(b'\n', bytes).count() as u64;
        if offset >= self.at {
            self.newlines += newlines(&hay[index(self.at)..index(offset)]);
        } else {
            self.newlines -= newlines(&hay[index(offset)..index(self.at)]);
        }
        self.at = offset;
        self.newlines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::extract::ExtractOptions;
    use crate::scan::Scanner;

    /// A stream's next block starts before the end of the one before: the
    /// count goes back as well as forward.
    #[test]
    fn line_count_moves_both_ways() {
        let hay = b"a\nb\n\nc\nd";
        let mut count = LineCount::default();
        assert_eq!(count.move_to(hay, 0, 5), 3);
        assert_eq!(count.move_to(hay, 0, 2), 1);
        assert_eq!(count.move_to(&hay[2..], 2, 8), 4);
        assert_eq!(count.move_to(&hay[2..], 2, 2), 1);
    }

    /// Both ways of [`newlines_from_first`] give the counts of the bytes
    /// themselves: URNs one per line (close together), and far apart with
    /// many lines between them.
    #[test]
    fn newlines_from_first_counts_close_and_far_events_alike() {
        for gap in ["\n", "\r\n\n", &"some text\n".repeat(100)] {
            let hay: Vec<u8> = (0..50).flat_map(|i| format!("urn:ab:{i}{gap}").into_bytes()).collect();
            let (events, _) =
                Scanner::new(ExtractOptions::default()).scan_span_noted(&hay, 0, hay.len(), None, |_, _: &[()]| ());
            assert_eq!(events.len(), 50);
            let first = events[0].offset();
            let want: Vec<u64> =
                events.iter().map(|e| hay[first..e.offset()].iter().filter(|&&b| b == b'\n').count() as u64).collect();
            assert_eq!(newlines_from_first(&hay, &events), want, "{gap:?}");
            assert_eq!(newlines_from_first(&hay, &events[7..9]), [0, want[8] - want[7]]);
        }
        assert_eq!(newlines_from_first(b"", &[]), Vec::<u64>::new());
    }
}
