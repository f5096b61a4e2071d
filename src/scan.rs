//! Scanning a buffer: candidates → URNs, in order, sequentially or in
//! parallel chunks with identical results.
//!
//! The unit of output is an [`Event`]: a URN found (offset and length), or a
//! candidate rejected (offset and the error for its longest attempt).
//!
//! ## Sequential reference
//!
//! [`Scanner::scan_sequential`] is the plain definition: walk the
//! candidates; for each, [`extract`]; on a URN, report it and resume at its
//! end (matches never overlap); on a rejection, report it and try the next
//! candidate after its start. A candidate too long to be a URN is the one
//! rejection that covers bytes, as a URN does: the `MAX_URN_LEN + 1` bytes
//! it was judged on, every one a URN character ([`Event::covered_end`]).
//! Tried from every `urn:` inside them instead, a run of URN characters
//! made of `urn:ab:` pieces (or a long comma-separated list of URNs) had
//! each byte walked once per candidate of the `MAX_URN_LEN` bytes before
//! it: 20 MB of them took 5.3 s (4 MB/s, when the limit was 8,192 bytes)
//! where text runs at GB/s.
//!
//! ## Parallel chunks
//!
//! [`Scanner::scan`] splits the buffer into chunks. A chunk owns the
//! candidates whose `urn:` starts inside it and reads past its end to finish
//! a URN, so every chunk can be scanned on its own thread. The only thing a
//! chunk cannot know is whether the previous chunk's last URN (or too-long
//! candidate) runs into it: if it does, the candidates it covers must be
//! skipped. That is settled in
//! order after the parallel pass: when chunk *k-1*'s last URN ends at *e*
//! past the start of chunk *k*, chunk *k* is rescanned from *e* until the
//! rescan reports a URN at an offset the first pass also reported — from
//! there on both passes agree, because everything after a reported URN
//! depends only on where it ends. URNs are at most [`MAX_URN_LEN`] bytes
//! (a too-long candidate covers one more), so the rescan is short. The result is equal, event for event, to the
//! sequential reference (a property test checks it for chunk sizes down to
//! one byte). Straddles are rare in running text but the rule in a URN
//! dataset, where a chunk edge nearly always falls inside a line; so what a
//! chunk's task makes of its events (a key batch, printed text) is made in
//! two parts, the events a straddling URN may cover (those before the
//! chunk's first byte that no URN holds) and the rest, and a rescan redoes
//! only the first (see `Noted`).
//!
//! ## Notes beside the events: key shapes and parts
//!
//! The walk that validates a URN already knows what its equivalence key
//! needs: where the NID and the assigned name end, and whether the scheme
//! or NID has an upper-case letter or an escape a lower-case hex digit.
//! [`Event`] is public and stays as it is, so the crate-internal
//! `scan_span_noted` keeps these facts beside the events instead: each
//! chunk holds one `KeyShape` (six bytes) per URN event, in order, and
//! hands them to `per_chunk` with the events, where the key table's first
//! phase reads the keys off them (see [`crate::job`]) rather than search
//! every URN's bytes again (then three `memchr` passes). Callgrind, `scan
//! --unique -j1` on 8 MB of URN-dense text: that phase went from about 440
//! to 210 instructions per URN, for about 36 more in the scan to keep the
//! shapes; 7 % fewer instructions in all. A chunk's rescan redoes its
//! shapes with its events: fresh ones up to the rejoin point, the first
//! pass's from there. The public scans keep no shapes (notes of type `()`,
//! not even stored), so they do the work they did before.
//!
//! A run that prints every URN keeps each URN's `Parts` the same way
//! (24 bytes), so that the output builds the `Urn` from them instead of
//! parsing it a second time: 15 % fewer instructions for a plain `scan` of
//! dense text.

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::error::{ErrorKind, UrnError};
use crate::extract::{extract, ExtractOptions};
use crate::find::Candidates;
use crate::grammar::class::in_any_urn;
use crate::grammar::{parse, MAX_URN_LEN};
use crate::key::KeyShape;
use crate::platform::simd::UrnFinder;
use crate::urn::{Parts, Urn};

/// Default chunk size of the parallel scan: large enough that per-chunk
/// overhead vanishes, small enough to spread one file over every core.
pub const DEFAULT_CHUNK_SIZE: usize = 1 << 20;

/// Default block size of [`Scanner::scan_reader`].
pub const DEFAULT_STREAM_BLOCK: usize = 16 << 20;

/// Bytes a block must hold past a candidate's start for its extraction to
/// be final: the longest URN, one byte to see it is too long, and slack.
const LOOKAHEAD: usize = MAX_URN_LEN + 8;

/// One outcome of a candidate, in buffer order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// A URN at `hay[offset..offset + len]`.
    Urn {
        /// Byte offset of the `u` of `urn:`.
        offset: usize,
        /// Length of the URN in bytes.
        len: usize,
    },
    /// A candidate at `offset` that yields no URN (its text:
    /// [`candidate_text`](crate::extract::candidate_text)).
    Rejected {
        /// Byte offset of the candidate's `u`.
        offset: usize,
        /// Why; its offset is relative to the candidate.
        error: UrnError,
    },
}

impl Event {
    /// Where the candidate starts.
    pub fn offset(&self) -> usize {
        match *self {
            Event::Urn { offset, .. } | Event::Rejected { offset, .. } => offset,
        }
    }

    /// Where a URN ends (`None` for a rejected candidate).
    pub fn end(&self) -> Option<usize> {
        match *self {
            Event::Urn { offset, len } => Some(offset + len),
            Event::Rejected { .. } => None,
        }
    }

    /// A URN's bytes in the buffer it was found in (`None` for a rejected
    /// candidate).
    ///
    /// ```
    /// use urnscan::{ExtractOptions, Scanner};
    ///
    /// let hay = b"See urn:isbn:0451450523.";
    /// let events = Scanner::new(ExtractOptions::default()).scan(hay);
    /// assert_eq!(events[0].range().map(|r| &hay[r]), Some(&b"urn:isbn:0451450523"[..]));
    /// ```
    pub fn range(&self) -> Option<std::ops::Range<usize>> {
        match *self {
            Event::Urn { offset, len } => Some(offset..offset + len),
            Event::Rejected { .. } => None,
        }
    }

    /// Where the bytes this event covers end: no later candidate starts
    /// before it. A URN covers its bytes; a candidate rejected as
    /// [`ErrorKind::TooLong`] covers the `MAX_URN_LEN + 1` bytes it was
    /// judged on (URN characters, every one), so that a long run of them
    /// is judged once, not again from each `urn:` inside it; any other
    /// rejection covers nothing (`None`).
    ///
    /// ```
    /// use urnscan::{Event, ExtractOptions, Scanner, MAX_URN_LEN};
    ///
    /// let hay = b"urn:ab:".repeat(10_000); // 70,000 bytes, one run
    /// let events = Scanner::new(ExtractOptions::default()).scan(&hay);
    /// assert_eq!(events[0].covered_end(), Some(MAX_URN_LEN + 1));
    /// // The next candidate is the first `urn:` after the bytes covered.
    /// assert_eq!(events[1].offset(), (MAX_URN_LEN + 1).next_multiple_of(7));
    /// ```
    pub fn covered_end(&self) -> Option<usize> {
        match *self {
            Event::Urn { offset, len } => Some(offset + len),
            Event::Rejected { offset, error } if error.kind() == ErrorKind::TooLong => Some(offset + MAX_URN_LEN + 1),
            Event::Rejected { .. } => None,
        }
    }
}

/// Where scanning resumes after the events of a span that ends at `end`:
/// after the bytes the last URN (or too-long candidate) that began in it
/// covers ([`Event::covered_end`]), in which no later candidate may start,
/// or at `end`, whichever is later.
pub(crate) fn resume_point(events: &[Event], end: usize) -> usize {
    events.iter().rev().find_map(Event::covered_end).unwrap_or(0).max(end)
}

/// Finds URNs in buffers. Cheap to copy; holds no state between scans.
#[derive(Clone, Copy, Debug)]
pub struct Scanner {
    finder: UrnFinder,
    opts: ExtractOptions,
    chunk_size: usize,
}

/// [`Scanner::new`] with [`ExtractOptions::default`]: RFC 8141, trailing
/// punctuation trimmed, as `urnscan scan` runs without options.
///
/// ```
/// use urnscan::Scanner;
///
/// let urns = Scanner::default().urns(b"See urn:ietf:rfc:8141.");
/// assert_eq!(urns[0].1.as_str(), "urn:ietf:rfc:8141");
/// ```
impl Default for Scanner {
    fn default() -> Self {
        Scanner::new(ExtractOptions::default())
    }
}

impl Scanner {
    /// A scanner with the fastest search kernel of this CPU.
    pub fn new(opts: ExtractOptions) -> Scanner {
        Scanner { finder: UrnFinder::new(), opts, chunk_size: DEFAULT_CHUNK_SIZE }
    }

    /// Uses `finder` for the candidate search (to compare kernels).
    pub fn with_finder(mut self, finder: UrnFinder) -> Scanner {
        self.finder = finder;
        self
    }

    /// Sets the parallel chunk size (at least one byte).
    pub fn with_chunk_size(mut self, chunk_size: usize) -> Scanner {
        self.chunk_size = chunk_size.max(1);
        self
    }

    /// The chunk size in use (see [`Scanner::with_chunk_size`]).
    pub fn chunk_size(&self) -> usize {
        self.chunk_size
    }

    /// The extraction options in use.
    pub fn options(&self) -> ExtractOptions {
        self.opts
    }

    /// The sequential reference scan of the whole buffer.
    pub fn scan_sequential(&self, hay: &[u8]) -> Vec<Event> {
        self.scan_chunk(hay, 0, hay.len())
    }

    /// Scans candidates starting in `from..end`, feeding `emit` in order
    /// until it returns `false`. Returns where a following range must
    /// resume: past the bytes the last URN (or too-long candidate) covers
    /// ([`Event::covered_end`]) or `end`, whichever is later; when `emit`
    /// stopped the scan, past the last event it was handed (its covered
    /// end, or a rejected candidate's offset + 1), so that scanning on
    /// from there hands over the events that were not.
    ///
    /// ```
    /// use urnscan::{ExtractOptions, Scanner};
    ///
    /// let hay = b"urn:ab:c urn:cd:e urn:ef:g";
    /// let scanner = Scanner::new(ExtractOptions::default());
    /// let mut first = Vec::new();
    /// let resume = scanner.scan_range(hay, 0, hay.len(), |e| {
    ///     first.push(e);
    ///     first.len() < 2
    /// });
    /// assert_eq!(resume, 17); // past `urn:cd:e`
    /// let mut rest = Vec::new();
    /// scanner.scan_range(hay, resume, hay.len(), |e| {
    ///     rest.push(e);
    ///     true
    /// });
    /// assert_eq!(first.len() + rest.len(), scanner.scan(hay).len());
    /// ```
    pub fn scan_range(&self, hay: &[u8], from: usize, end: usize, mut emit: impl FnMut(Event) -> bool) -> usize {
        self.scan_range_noted::<()>(hay, from, end, |event, _| emit(event))
    }

    /// [`Scanner::scan_range`], with each URN's note beside its event.
    fn scan_range_noted<N: UrnNote>(
        &self,
        hay: &[u8],
        from: usize,
        end: usize,
        mut emit: impl FnMut(Event, Option<N>) -> bool,
    ) -> usize {
        let mut resume = from;
        let mut candidates = Candidates::new(self.finder, hay, from, end);
        while let Some(at) = candidates.next() {
            let (event, note) = match extract(hay, at, self.opts) {
                Ok(urn) => {
                    resume = at + urn.len();
                    candidates.skip_to(resume);
                    (Event::Urn { offset: at, len: urn.len() }, Some(N::of(&urn)))
                }
                Err(error) => {
                    let event = Event::Rejected { offset: at, error };
                    // A too-long candidate covers bytes, as a URN does.
                    if let Some(end) = event.covered_end() {
                        resume = end;
                        candidates.skip_to(end);
                    }
                    (event, None)
                }
            };
            if !emit(event, note) {
                return event.covered_end().unwrap_or(at + 1);
            }
        }
        resume.max(end)
    }

    /// Scans the whole buffer in parallel chunks; the events equal
    /// [`Scanner::scan_sequential`]'s. The chunks run on the current rayon
    /// pool (the global one unless called inside
    /// `rayon::ThreadPool::install`).
    pub fn scan(&self, hay: &[u8]) -> Vec<Event> {
        self.scan_span(hay, 0, hay.len())
    }

    /// The URNs of the whole buffer, each with its offset and parsed (NID,
    /// NSS, components, key, class), in order: [`Scanner::scan`]'s URN
    /// events, without the rejected candidates, each parsed once more by
    /// the scanner's grammar, which accepted it.
    ///
    /// ```
    /// use urnscan::{ExtractOptions, NidClass, Scanner};
    ///
    /// let text = b"<a href='urn:ISBN:0451450523'/> (urn:ietf:rfc:8141#sec-2), urn:a:b";
    /// let urns = Scanner::new(ExtractOptions::default()).urns(text);
    /// let found: Vec<(usize, &str, String, NidClass)> =
    ///     urns.iter().map(|(offset, urn)| (*offset, urn.nid(), urn.key().into_owned(), urn.nid_class())).collect();
    /// assert_eq!(
    ///     found,
    ///     [
    ///         (9, "ISBN", "urn:isbn:0451450523".to_owned(), NidClass::Formal),
    ///         (33, "ietf", "urn:ietf:rfc:8141".to_owned(), NidClass::Formal),
    ///     ]
    /// );
    /// assert_eq!(urns[1].1.f_component(), Some("sec-2"));
    /// ```
    pub fn urns<'h>(&self, hay: &'h [u8]) -> Vec<(usize, Urn<'h>)> {
        let grammar = self.opts.grammar;
        let events = self.scan(hay);
        events
            .par_iter()
            .filter_map(|event| match *event {
                // Accepted by the same grammar: a parse that failed would be
                // a scanner bug, and the URN is then left out, not a panic.
                Event::Urn { offset, len } => parse(&hay[offset..offset + len], grammar).ok().map(|urn| (offset, urn)),
                Event::Rejected { .. } => None,
            })
            .collect()
    }

    /// Scans, in parallel chunks, the candidates that start in `from..end`
    /// (URNs may run past `end`).
    pub fn scan_span(&self, hay: &[u8], from: usize, end: usize) -> Vec<Event> {
        self.scan_span_with(hay, from, end, None, |_| ()).0
    }

    /// [`Scanner::scan_span`], and `per_chunk` run on each chunk's events
    /// in the task that scanned the chunk, right after it, while the
    /// chunk's bytes are still in cache (the key table's first phase runs
    /// here). Returns the events and the results, in order: one or two per
    /// chunk, each of a run of consecutive events, so that the results'
    /// events, concatenated, are the events. A chunk's events are handed
    /// over in two runs when a URN of the chunk before may cover its first
    /// ones: those, which the in-order fix-up may change (and then hands to
    /// `per_chunk` again), and the rest, which no fix-up changes. With
    /// `progress`, each chunk's task
    /// adds the chunk's length once the chunk is scanned (once per chunk,
    /// never per URN, and not again for a rescan), for a progress display.
    pub fn scan_span_with<T: Send>(
        &self,
        hay: &[u8],
        from: usize,
        end: usize,
        progress: Option<&AtomicU64>,
        per_chunk: impl Fn(&[Event]) -> T + Sync,
    ) -> (Vec<Event>, Vec<T>) {
        self.scan_span_noted::<(), T>(hay, from, end, progress, |events, _| per_chunk(events))
    }

    /// [`Scanner::scan_span_with`], and `per_chunk` also gets a note of
    /// type `N` for each of the chunk's URN events (one per [`Event::Urn`],
    /// in order), as the walk that validated the URN found it; the notes
    /// follow the in-order fix-up like the events do (see [`UrnNote`]).
    /// `()` keeps nothing; a [`KeyShape`] lets the key table's first phase
    /// read the key off the bytes without looking for its shape again; the
    /// [`Parts`] let the output build the [`Urn`] without parsing it again.
    pub(crate) fn scan_span_noted<N: UrnNote, T: Send>(
        &self,
        hay: &[u8],
        from: usize,
        end: usize,
        progress: Option<&AtomicU64>,
        per_chunk: impl Fn(&[Event], &[N]) -> T + Sync,
    ) -> (Vec<Event>, Vec<T>) {
        let scanned = |start: usize, end: usize| {
            if let Some(counter) = progress {
                counter.fetch_add((end - start) as u64, Ordering::Relaxed);
            }
        };
        let chunks: Vec<(usize, usize)> =
            (from..end).step_by(self.chunk_size).map(|s| (s, (s + self.chunk_size).min(end))).collect();
        if chunks.len() <= 1 {
            let chunk = self.scan_chunk_noted::<N>(hay, from, end);
            scanned(from, end);
            let result = per_chunk(&chunk.events, &chunk.notes);
            return (chunk.events, vec![result]);
        }
        let mut parts: Vec<Noted<N, T>> = chunks
            .par_iter()
            .map(|&(s, e)| {
                let chunk = self.scan_chunk_noted(hay, s, e);
                scanned(s, e);
                // The first chunk has no chunk before it to cover its events.
                let settled = if s == from { 0 } else { chunk.settled(hay, s, e) };
                let (head, tail) = chunk.results(settled, &per_chunk);
                Noted { chunk, settled, head, tail }
            })
            .collect();
        let mut resume = from;
        for (noted, &(start, end)) in parts.iter_mut().zip(&chunks) {
            if resume > start {
                let rejoin = self.rescan_from(hay, resume, end, &mut noted.chunk);
                noted.fix_head(rejoin, &per_chunk);
            }
            resume = resume_point(&noted.chunk.events, resume);
        }
        let mut events = Vec::with_capacity(parts.iter().map(|n| n.chunk.events.len()).sum());
        let mut results = Vec::with_capacity(parts.len());
        for noted in parts {
            events.extend_from_slice(&noted.chunk.events);
            results.extend(noted.head);
            results.extend(noted.tail);
        }
        (events, results)
    }

    /// Scans `hay` a window of `window` bytes at a time, handing each
    /// window's events to `on_window` (offsets relative to `hay`) until it
    /// returns `false`. The events, concatenated, equal [`Scanner::scan`]'s,
    /// but only one window's are held at once.
    pub fn scan_windows(&self, hay: &[u8], window: usize, mut on_window: impl FnMut(&[Event]) -> bool) {
        self.scan_windows_with(hay, window, None, |_| (), |events, _| on_window(events));
    }

    /// [`Scanner::scan_windows`] with [`Scanner::scan_span_with`]'s
    /// progress counter and per-chunk results (handed to `on_window` beside
    /// the events).
    pub fn scan_windows_with<T: Send>(
        &self,
        hay: &[u8],
        window: usize,
        progress: Option<&AtomicU64>,
        per_chunk: impl Fn(&[Event]) -> T + Sync,
        on_window: impl FnMut(&[Event], Vec<T>) -> bool,
    ) {
        let span = |from, end| self.scan_span_with(hay, from, end, progress, &per_chunk);
        windows(hay.len(), window, span, on_window);
    }

    /// [`Scanner::scan_windows_with`] with [`Scanner::scan_span_noted`]'s
    /// key shapes for `per_chunk`.
    pub(crate) fn scan_windows_shaped<T: Send>(
        &self,
        hay: &[u8],
        window: usize,
        progress: Option<&AtomicU64>,
        per_chunk: impl Fn(&[Event], &[KeyShape]) -> T + Sync,
        on_window: impl FnMut(&[Event], Vec<T>) -> bool,
    ) {
        let span = |from, end| self.scan_span_noted(hay, from, end, progress, &per_chunk);
        windows(hay.len(), window, span, on_window);
    }

    /// Scans a stream in blocks of about `block` bytes (plus a look-ahead
    /// of [`MAX_URN_LEN`] bytes). `on_block` receives the buffer, the stream
    /// offset of its first byte, and the events of candidates that start in
    /// it (offsets relative to the buffer); returning `false` stops the
    /// scan. The events, shifted by the base, equal [`Scanner::scan`] of the
    /// whole stream as one slice: a candidate is only judged once its whole
    /// extraction window is in the buffer, and the three bytes before the
    /// resume point stay for the left-boundary rule. Returns the bytes read.
    ///
    /// A reader that fails with [`io::ErrorKind::WouldBlock`] (a
    /// [`Live`](crate::source::Live) stream whose writer paused) is not at
    /// its end: the candidates of what it gave that can be judged without
    /// the bytes still to come (those before its last byte that no URN
    /// holds) go to `on_block` then, and the reader is read again at once
    /// (a `Live` stream fails so once per pause, then waits for bytes).
    /// Any other error ends the stream where it happens, and is returned
    /// once the candidates that can be judged without the bytes lost have
    /// gone to `on_block`: the URNs before the damage (a corrupt archive)
    /// are found, and none cut short by it.
    pub fn scan_reader(
        &self,
        reader: &mut dyn Read,
        block: usize,
        mut on_block: impl FnMut(&[u8], u64, &[Event]) -> bool,
    ) -> io::Result<u64> {
        self.scan_reader_noted::<(), ()>(
            reader,
            block,
            |_, _, _, _| (),
            |buf, base, events, _| on_block(buf, base, events),
        )
    }

    /// [`Scanner::scan_reader`], and [`Scanner::scan_span_noted`]'s
    /// per-chunk results: `per_chunk` gets the block's buffer (the events'
    /// offsets refer to it) and the stream offset of its first byte, a
    /// chunk's events and the notes of its URN events, on the task that
    /// scanned the chunk; `on_block` gets the
    /// results of the block's chunks, in order.
    pub(crate) fn scan_reader_noted<N: UrnNote, T: Send>(
        &self,
        reader: &mut dyn Read,
        block: usize,
        per_chunk: impl Fn(&[u8], u64, &[Event], &[N]) -> T + Sync,
        mut on_block: impl FnMut(&[u8], u64, &[Event], Vec<T>) -> bool,
    ) -> io::Result<u64> {
        // Three bytes of left context stay in the buffer, so a block of
        // fewer than four new bytes could never move forward.
        let capacity = block.max(1) + LOOKAHEAD + 3;
        let mut buf: Vec<u8> = Vec::with_capacity(capacity);
        let mut base = 0u64; // stream offset of buf[0]
        let mut from = 0usize; // where scanning resumes in buf
        let mut clean = 0usize; // buf[from..clean] holds only URN characters (see `paused_end`)
        loop {
            let (filled, error) = match fill(reader, &mut buf, capacity) {
                Ok(filled) => (filled, None),
                Err(e) => (Filled::Cut, Some(e)),
            };
            let end = match filled {
                Filled::Ended => buf.len(),
                Filled::Full => buf.len() - LOOKAHEAD,
                Filled::Paused => {
                    let end = paused_end(&buf, from, clean);
                    clean = buf.len();
                    end
                }
                Filled::Cut => judged_end(&buf, from),
            };
            if end > from {
                let per_chunk = |events: &[Event], notes: &[N]| per_chunk(&buf, base, events, notes);
                let (events, results) = self.scan_span_noted(&buf, from, end, None, per_chunk);
                if !on_block(&buf, base, &events, results) {
                    return Ok(base + buf.len() as u64);
                }
                from = resume_point(&events, end);
            }
            if let Some(e) = error {
                return Err(e);
            }
            if filled == Filled::Ended {
                return Ok(base + buf.len() as u64);
            }
            let keep = from.saturating_sub(3).min(buf.len());
            buf.drain(..keep);
            base += keep as u64;
            from -= keep;
            clean = clean.saturating_sub(keep);
        }
    }

    fn scan_chunk(&self, hay: &[u8], start: usize, end: usize) -> Vec<Event> {
        self.scan_chunk_noted::<()>(hay, start, end).events
    }

    fn scan_chunk_noted<N: UrnNote>(&self, hay: &[u8], start: usize, end: usize) -> Chunk<N> {
        let mut chunk = Chunk { events: Vec::new(), notes: Vec::new() };
        self.scan_range_noted(hay, start, end, |e, note| {
            chunk.push(e, note);
            true
        });
        chunk
    }

    /// Replaces the events (and notes) of a chunk whose start is covered by
    /// the previous chunk's last URN (which ends at `resume`). Returns where
    /// the rescan rejoined the first pass, if it did: the new events are its
    /// first `fresh` and the old ones from `old` on.
    fn rescan_from<N: UrnNote>(&self, hay: &[u8], resume: usize, end: usize, chunk: &mut Chunk<N>) -> Option<Rejoin> {
        let mut fresh = Chunk { events: Vec::new(), notes: Vec::new() };
        let mut rejoin = None;
        let events = &chunk.events;
        self.scan_range_noted(hay, resume, end, |e, note| {
            if let Event::Urn { offset, .. } = e {
                if let Ok(i) = events.binary_search_by_key(&offset, Event::offset) {
                    if matches!(events[i], Event::Urn { .. }) {
                        rejoin = Some(i);
                        return false;
                    }
                }
            }
            fresh.push(e, note);
            true
        });
        let Some(i) = rejoin else {
            *chunk = fresh;
            return None;
        };
        // The first pass's events from the rejoin on stay where they are:
        // in a URN dataset the rescan finds nothing before the next line's
        // URN, the first event of the first pass, so nothing moves. (Copied
        // after the fresh ones, they were 3.6 % of a plain `scan -j1`'s
        // instructions on 12 files of the 10 M-line dataset, and plain
        // `scan -j2` of the dataset took 493 ms against 471 now.)
        let notes = chunk.notes_before(i);
        chunk.events.splice(..i, fresh.events.iter().copied());
        chunk.notes.splice(..notes, fresh.notes.iter().copied());
        Some(Rejoin { fresh: fresh.events.len(), old: i })
    }
}

/// Where a rescan met the first pass again (see [`Scanner::rescan_from`]).
#[derive(Clone, Copy)]
struct Rejoin {
    /// Events found by the rescan before it.
    fresh: usize,
    /// The index, in the first pass's events, of the one it met.
    old: usize,
}

/// A chunk and `per_chunk`'s results for its events, split in two: those
/// before `settled`, which a URN of the chunk before may cover, and the
/// rest, which it cannot. A URN never runs across a byte that no URN holds
/// ([`in_any_urn`]: a space, a line break, a quote, ...), nor do the bytes
/// a too-long candidate covers, so the events
/// from the first such byte of the chunk on are final, whatever the chunk
/// before holds (the search for that byte stops after [`MAX_URN_LEN`]
/// bytes, see `Chunk::settled`), and when the in-order fix-up rescans the
/// chunk's start only the head's result is made again (`Noted::fix_head`
/// checks that the rescan agrees, and makes the whole chunk again when
/// not). One result for the whole chunk was made twice for most chunks of
/// a URN dataset, whose chunk edges nearly always fall inside a line (a
/// URN); the rescan itself stops at the first URN both passes found, so it
/// was the second `per_chunk` (the printed text or the key batch of a
/// whole chunk) that cost.
struct Noted<N, T> {
    chunk: Chunk<N>,
    settled: usize,
    head: Option<T>,
    tail: Option<T>,
}

impl<N: UrnNote, T> Noted<N, T> {
    /// The results again after a rescan of the chunk's start. The tail's
    /// result is kept only when the rescan met the first pass at or before
    /// the tail's first event: from there on the two passes agree (see the
    /// module doc), so its result is of final events whatever chose the
    /// split; otherwise the whole chunk is made again.
    fn fix_head(&mut self, rejoin: Option<Rejoin>, per_chunk: &impl Fn(&[Event], &[N]) -> T) {
        match rejoin {
            Some(Rejoin { fresh, old }) if old <= self.settled => {
                self.settled = fresh + (self.settled - old);
                self.head = self.chunk.head(self.settled, per_chunk);
            }
            // The rescan went past the first settled event: a rejected
            // candidate came first there, or the split was bounded by
            // `MAX_URN_LEN` inside a URN. The whole chunk again, as one.
            _ => {
                let (head, tail) = self.chunk.results(self.chunk.events.len(), per_chunk);
                (self.settled, self.head, self.tail) = (self.chunk.events.len(), head, tail);
            }
        }
    }
}

/// What a chunk scan keeps of each URN beside its [`Event`], which cannot
/// grow (it is public): nothing for the public scans, the [`KeyShape`] for
/// the key table's, the [`Parts`] for the output's
/// ([`Scanner::scan_span_noted`]). The walk has just
/// found it, so keeping it costs a few stores; finding it again later costs
/// passes over the URN's bytes.
pub(crate) trait UrnNote: Copy + Send + Sync {
    /// Whether notes are kept at all: a chunk of `()` keeps none, so that
    /// the public scans do exactly the work they did before notes existed.
    const KEPT: bool;
    fn of(urn: &Urn<'_>) -> Self;
}

impl UrnNote for () {
    const KEPT: bool = false;
    #[inline(always)]
    fn of(_: &Urn<'_>) {}
}

impl UrnNote for Parts {
    const KEPT: bool = true;
    #[inline(always)]
    fn of(urn: &Urn<'_>) -> Self {
        urn.parts()
    }
}

impl UrnNote for KeyShape {
    const KEPT: bool = true;
    #[inline(always)]
    fn of(urn: &Urn<'_>) -> Self {
        urn.key_shape()
    }
}

/// One chunk's events, and one note per URN event, in order (none at all
/// unless [`UrnNote::KEPT`]).
struct Chunk<N> {
    events: Vec<Event>,
    notes: Vec<N>,
}

impl<N: UrnNote> Chunk<N> {
    #[inline(always)]
    fn push(&mut self, event: Event, note: Option<N>) {
        self.events.push(event);
        if let Some(note) = note.filter(|_| N::KEPT) {
            self.notes.push(note);
        }
    }

    /// The notes of the first `events` events (none unless [`UrnNote::KEPT`]).
    fn notes_before(&self, events: usize) -> usize {
        if N::KEPT {
            self.events[..events].iter().filter(|e| matches!(e, Event::Urn { .. })).count()
        } else {
            0
        }
    }

    /// How many of the events of this chunk of `start..end` a URN of the
    /// chunk before may cover: those before the first byte from `start` on
    /// that no URN holds, and at most those of its first [`MAX_URN_LEN`]
    /// bytes, the furthest such a URN reaches (see [`Noted`]). The bound
    /// keeps the search short in a run of URN characters (a long base64
    /// string): there the events past it may still change when the first
    /// URN of the chunk is covered, which `Noted::fix_head` sees. Unbounded,
    /// the search over every chunk of 64 MB of base64 strings, a byte at a
    /// time, made plain `scan -j2` of them take 20 ms instead of 9 (with
    /// the limit at 8,192 bytes).
    fn settled(&self, hay: &[u8], start: usize, end: usize) -> usize {
        let limit = end.min(start + MAX_URN_LEN);
        let fence = hay[start..limit].iter().position(|&b| !in_any_urn(b)).map_or(limit, |i| start + i);
        self.events.partition_point(|e| e.offset() < fence)
    }

    /// `per_chunk` of the events before `settled` (none if there are none)
    /// and of the rest (none if `settled` is the end, unless there are no
    /// events at all: a chunk has at least one result).
    fn results<T>(&self, settled: usize, per_chunk: &impl Fn(&[Event], &[N]) -> T) -> (Option<T>, Option<T>) {
        let (events, notes) = (&self.events, &self.notes);
        let n = self.notes_before(settled);
        let tail = (settled < events.len() || events.is_empty()).then(|| per_chunk(&events[settled..], &notes[n..]));
        (self.head(settled, per_chunk), tail)
    }

    /// `per_chunk` of the events before `settled`, if there are any.
    fn head<T>(&self, settled: usize, per_chunk: &impl Fn(&[Event], &[N]) -> T) -> Option<T> {
        let n = self.notes_before(settled);
        (settled > 0).then(|| per_chunk(&self.events[..settled], &self.notes[..n]))
    }
}

/// Runs `scan_span` over a buffer of `len` bytes a window at a time, each
/// window resuming where the last URN of the one before ended, and hands
/// each window's events and results to `on_window` until it returns `false`.
fn windows<T>(
    len: usize,
    window: usize,
    scan_span: impl Fn(usize, usize) -> (Vec<Event>, Vec<T>),
    mut on_window: impl FnMut(&[Event], Vec<T>) -> bool,
) {
    let mut from = 0;
    while from < len {
        let end = len.min(from.saturating_add(window.max(1)));
        let (events, results) = scan_span(from, end);
        if !on_window(&events, results) {
            return;
        }
        from = resume_point(&events, end);
    }
}

/// How a [`fill`] of a stream's buffer ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Filled {
    /// The buffer holds the bytes asked for.
    Full,
    /// The stream ended.
    Ended,
    /// The reader failed with [`io::ErrorKind::WouldBlock`]: its writer
    /// paused ([`crate::source::Live`]), and what came is to be scanned.
    Paused,
    /// The reader failed (a corrupt archive, a device error): the stream
    /// ends here, and its last bytes may be a URN cut short.
    Cut,
}

/// Reads until `buf` holds `want` bytes, the stream ends or pauses.
/// Reads into the vector's spare capacity: nothing is zero-filled first, so
/// a small file streamed through a large block costs only its own bytes.
fn fill(reader: &mut dyn Read, buf: &mut Vec<u8>, want: usize) -> io::Result<Filled> {
    let missing = want.saturating_sub(buf.len());
    if missing == 0 {
        return Ok(Filled::Full);
    }
    // On an error, `read_to_end` leaves in `buf` the bytes it read first.
    match reader.take(missing as u64).read_to_end(buf) {
        Ok(got) if got < missing => Ok(Filled::Ended),
        Ok(_) => Ok(Filled::Full),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(Filled::Paused),
        Err(e) => Err(e),
    }
}

/// Where the candidates of `buf[from..]` that can be judged end when the
/// reader pauses: [`judged_end`], and at least all but the last
/// [`LOOKAHEAD`] bytes, which are judged in any case. `buf[from..clean]`
/// is known to hold only bytes a URN may hold: the previous pause searched
/// up to `clean`, and a scan since then moved `from` past the last byte it
/// found. So the search starts at `clean`: searched from `from` at every
/// pause, a run of URN characters (base64 without line breaks) was read
/// again and again as a block filled, on a stream that pauses often.
fn paused_end(buf: &[u8], from: usize, clean: usize) -> usize {
    let floor = buf.len().saturating_sub(LOOKAHEAD);
    let start = from.max(clean).max(floor);
    // `judged_end` gives `start` back when it finds no such byte.
    match judged_end(buf, start) {
        found if found > start => found,
        _ => from.max(floor),
    }
}

/// Where the candidates of `buf[from..]` that can be judged end, when the
/// bytes after `buf` are not known yet: one past its last byte that no URN
/// holds (`from` if there is none). No URN, and no candidate's extraction,
/// reaches past such a byte, so whatever follows it cannot change what the
/// candidates before it yield; the ones after it wait for more bytes.
pub(crate) fn judged_end(buf: &[u8], from: usize) -> usize {
    buf[from..].iter().rposition(|&b| !in_any_urn(b)).map_or(from, |i| from + i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn urns(hay: &str, events: &[Event]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match *e {
                Event::Urn { offset, len } => Some(hay[offset..offset + len].to_owned()),
                Event::Rejected { .. } => None,
            })
            .collect()
    }

    #[test]
    fn matches_never_overlap() {
        let s = Scanner::new(ExtractOptions::default());
        let text = "urn:urn:ietf:x and urn:ab:x/urn:cd:y then urn:a:b urn:ok:z";
        let events = s.scan_sequential(text.as_bytes());
        assert_eq!(urns(text, &events), ["urn:urn:ietf:x", "urn:ab:x/urn:cd:y", "urn:ok:z"]);
        // The rejected one-character NID hides nothing.
        assert!(matches!(events[2], Event::Rejected { offset: 42, .. }));
    }

    #[test]
    fn rejected_candidate_hides_nothing() {
        let s = Scanner::new(ExtractOptions::default());
        let text = "urn:a:urn:bc:d";
        assert_eq!(urns(text, &s.scan_sequential(text.as_bytes())), ["urn:bc:d"]);
    }

    #[test]
    fn per_chunk_results_match_the_final_events() {
        // URNs that run across chunk edges make the in-order fix-up change
        // chunks' events; each chunk's result must be of its final events.
        // "urn:" inside a URN: a chunk that starts in the middle of it
        // finds a candidate there, which the fix-up then removes. A rejected
        // candidate right after a URN: the rescan of a chunk that starts in
        // the URN passes it before it meets the first pass again.
        let text =
            b"x urn:ab:0123456789 urn:cd:x/urn:ef:abcd.urn:gh:y urn:ij:a=urn:kl:b urn:mn:urn:op:q urn:x:y urn:qr:s";
        for size in 1..40 {
            let scanner = Scanner::new(ExtractOptions::default()).with_chunk_size(size);
            let progress = AtomicU64::new(0);
            let (events, per_chunk) = scanner.scan_span_with(text, 0, text.len(), Some(&progress), |e| e.to_vec());
            assert_eq!(per_chunk.concat(), events, "chunk size {size}");
            // Every byte counted once, rescans or not.
            assert_eq!(progress.load(Ordering::Relaxed), text.len() as u64, "chunk size {size}");
            assert_eq!(events, scanner.scan_sequential(text), "chunk size {size}");
        }
    }

    #[test]
    fn chunks_cut_inside_urns_are_handed_to_per_chunk_once() {
        // A URN dataset: nearly every chunk edge falls inside a line, so
        // nearly every chunk's start is rescanned. Only the events a URN of
        // the chunk before may cover (here none: each chunk's first URN
        // starts after a line break) are handed to `per_chunk` again, not
        // the whole chunk.
        use std::sync::atomic::AtomicUsize;
        let text: String = (0..2000).map(|i| format!("urn:ab:{i}/x%2c\n")).collect();
        for size in [7, 100, 1000, 4096] {
            let scanner = Scanner::new(ExtractOptions::default()).with_chunk_size(size);
            let handed = AtomicUsize::new(0);
            let (events, results) = scanner.scan_span_with(text.as_bytes(), 0, text.len(), None, |e| {
                handed.fetch_add(e.len(), Ordering::Relaxed);
                e.to_vec()
            });
            assert_eq!(events.len(), 2000, "chunk size {size}");
            assert_eq!(results.concat(), events, "chunk size {size}");
            assert_eq!(handed.load(Ordering::Relaxed), events.len(), "chunk size {size}");
        }
    }

    /// `paused_end` gives what searching all of `buf[from..]` gives,
    /// whenever `buf[from..clean]` holds only URN characters, as the
    /// stream loop keeps it: buffers of URN characters with a few spaces,
    /// shorter and longer than the look-ahead, every such `from` and
    /// `clean` drawn at random.
    #[test]
    fn a_pause_searches_only_what_it_has_not_seen() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |below: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % below as u64) as usize
        };
        for round in 0..2000 {
            let len = if round % 2 == 0 { next(300) } else { LOOKAHEAD + next(300) };
            let spaces = next(4);
            let mut buf = vec![b'a'; len];
            // Half the spaces and starts near the front, where the last
            // LOOKAHEAD bytes of a long buffer begin.
            let mut near = |len: usize| if next(2) == 0 { next(len) } else { next(len.min(600)) };
            for _ in 0..spaces {
                if len > 0 {
                    buf[near(len)] = b' ';
                }
            }
            let from = near(len + 1);
            let run = buf[from..].iter().position(|&b| !in_any_urn(b)).map_or(len, |i| from + i);
            let clean = from + next(run - from + 1);
            let whole = judged_end(&buf, from).max(len.saturating_sub(LOOKAHEAD));
            assert_eq!(paused_end(&buf, from, clean), whole, "len {len}, from {from}, clean {clean}");
        }
    }

    #[test]
    fn per_chunk_results_are_final_in_runs_longer_than_a_urn() {
        // No byte that ends every URN for more than MAX_URN_LEN bytes: the
        // split of a chunk is bounded there, and events past the bound may
        // still be covered by a URN that starts in the chunk before.
        let run = |c: &str, n: usize| c.repeat(n);
        let (over, most) = (MAX_URN_LEN + MAX_URN_LEN / 10, MAX_URN_LEN * 3 / 4);
        let text = format!(
            "urn:ab:{}%%{}%%urn:cd:{}%%urn:ef:g urn:gh:{}\nurn:ij:k",
            run("x", most),
            run("y", over),
            run("z", MAX_URN_LEN * 3 / 8),
            run("w", over)
        );
        let text = text.as_bytes();
        for size in [700, 3000, 4096, MAX_URN_LEN * 5 / 8, most + 3, over] {
            let scanner = Scanner::new(ExtractOptions::default()).with_chunk_size(size);
            let (events, results) = scanner.scan_span_with(text, 0, text.len(), None, |e| e.to_vec());
            assert_eq!(events, scanner.scan_sequential(text), "chunk size {size}");
            assert_eq!(results.concat(), events, "chunk size {size}");
        }
        // urn:gh: runs past MAX_URN_LEN (rejected as too long); the others
        // end at the `%` that starts no escape, the space, the end.
        let found = urns(std::str::from_utf8(text).unwrap(), &Scanner::new(ExtractOptions::default()).scan(text));
        let nids: Vec<&str> = found.iter().map(|u| &u[4..6]).collect();
        assert_eq!(nids, ["ab", "cd", "ef", "ij"]);
    }

    #[test]
    fn key_shapes_follow_the_final_events() {
        // As above, with URNs whose keys need fixing; every chunk's shapes
        // must be those of its final URN events, one each, in order.
        use crate::grammar::Grammar;
        use crate::key::key_shape;
        let text = b"x URN:Ab:0123%2c456789 urn:cd:x/Urn:EF:a%aFcd.urn:gh:y?+r?=q#f urn:ij:a=URN:kl:b#urn:mn:o";
        for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
            for size in 1..50 {
                let scanner = Scanner::new(ExtractOptions { grammar, trim: true }).with_chunk_size(size);
                let (events, chunks) =
                    scanner.scan_span_noted(text, 0, text.len(), None, |e, s: &[KeyShape]| (e.to_vec(), s.to_vec()));
                assert_eq!(events, scanner.scan_sequential(text), "chunk size {size}");
                for (chunk_events, shapes) in chunks {
                    let raws: Vec<&[u8]> =
                        chunk_events.iter().filter_map(|e| e.end().map(|end| &text[e.offset()..end])).collect();
                    assert_eq!(raws.len(), shapes.len(), "chunk size {size}");
                    for (raw, shape) in raws.into_iter().zip(shapes) {
                        let (name, fixes) = shape.apply(raw).unwrap();
                        let (want_name, want) = key_shape(raw, grammar).unwrap();
                        assert_eq!(name, want_name, "chunk size {size}");
                        assert_eq!((fixes.nid_end, fixes.name, fixes.hex), (want.nid_end, want.name, want.hex));
                    }
                }
            }
        }
    }

    #[test]
    fn chunked_equals_sequential_at_every_chunk_size() {
        let text = "x urn:ab:urn:cd:e urn:ef:ghijkl(urn:zz:1) 'urn:ab:c'd' urn:a:b urn:xy:zzzzzzzzzzzz. %22urn:qq:r";
        let s = Scanner::new(ExtractOptions::default());
        let reference = s.scan_sequential(text.as_bytes());
        let expected = ["urn:ab:urn:cd:e", "urn:ef:ghijkl(urn:zz:1)", "urn:ab:c", "urn:xy:zzzzzzzzzzzz", "urn:qq:r"];
        assert_eq!(urns(text, &reference), expected);
        assert_eq!(reference.len(), 6); // plus the rejected urn:a:b
        for chunk in 1..=text.len() + 1 {
            assert_eq!(s.with_chunk_size(chunk).scan(text.as_bytes()), reference, "chunk size {chunk}");
        }
    }
}
