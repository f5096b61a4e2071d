//! One span of a buffer (a whole file, a window of a large one) scanned in
//! parallel chunks, with each chunk's own work done by the task that
//! scanned it while its bytes are in cache: its key batch when the run
//! keeps keys ([`super::keys`]), its URNs' parts or formatted text when it
//! prints them ([`super::emit`](mod@super::emit)), its newline counts with line numbers
//! ([`super::line_numbers`]), and which of its URNs `--nid` keeps.

use std::ops::Range;

use super::emit::{format_chunks_with_lines, format_events, ChunkNotes, Formatted, Formatting, LinesGiven};
use super::keys::{kept_flags, walked_key_batch, Origin};
use super::line_numbers::{newlines_from_first, SpanLines};
use super::{JobOptions, Target};
use crate::dedup::KeyBatch;
use crate::key::KeyShape;
use crate::scan::{Event, Scanner};
use crate::urn::Parts;

/// What [`scan_keyed`] found in a span.
pub(super) struct Spanned {
    pub(super) events: Vec<Event>,
    /// One per chunk, when the run wants keys.
    pub(super) keys: Vec<KeyBatch>,
    /// Per chunk, the parts of its URN events, when the run prints them
    /// and wants no keys (see [`emit()`](super::emit::emit)).
    pub(super) parts: Vec<Vec<Parts>>,
    /// Per chunk, a flag per URN event: whether its namespace is one
    /// [`JobOptions::nids`] keeps ([`kept_flags`]; empty without a filter).
    pub(super) kept: Vec<Vec<bool>>,
    /// Per chunk, its events as the sink's formatter wrote them, when the
    /// run has one (see [`Target`]); then `parts` is empty.
    pub(super) text: Option<Vec<Formatted>>,
    /// With line numbers ([`JobOptions::line_numbers`]), the newlines
    /// before each event from the span's start, counted by the tasks that
    /// scanned its chunks ([`SpanLines`]).
    pub(super) lines: Option<SpanLines>,
}

/// The events of the candidates that start in `span` of `hay`, scanned in
/// parallel chunks, and what the scan's validating walk found of each URN
/// that the run will need again: when the run wants keys, each chunk's key
/// batch, made by the task that scanned the chunk, while its bytes are
/// still in cache, from the key shapes the scan kept; when it only prints
/// the URNs, their parts, so that printing need not parse them again.
/// `lines_before`: with line numbers, the newlines of the input before
/// `span` (its windows before it), for the lines of formatted events.
pub(super) fn scan_keyed(
    scanner: &Scanner,
    opts: &JobOptions,
    hay: &[u8],
    span: Range<usize>,
    origin: Origin,
    target: Target<'_>,
    lines_before: u64,
) -> Spanned {
    let progress = target.progress;
    let (from, end) = (span.start, span.end);
    let flags = |events: &[Event]| kept_flags(hay, events, opts.nids.as_ref());
    // With line numbers each chunk's task counts the newlines between its
    // events while their bytes are in cache; only the gaps between chunks
    // are counted after (`SpanLines::join`).
    let counts_lines = opts.line_numbers && opts.events;
    let chunk_lines = |events: &[Event]| counts_lines.then(|| newlines_from_first(hay, events));
    let lines = |events: &[Event], chunks: Vec<Option<Vec<u64>>>| {
        counts_lines.then(|| SpanLines::join(hay, span.clone(), events, chunks.into_iter().flatten()))
    };
    let none =
        Spanned { events: Vec::new(), keys: Vec::new(), parts: Vec::new(), kept: Vec::new(), text: None, lines: None };
    if opts.keys {
        let per_chunk = |events: &[Event], shapes: &[KeyShape]| {
            let kept = flags(events);
            ((walked_key_batch(hay, events, shapes, origin, &kept), kept), chunk_lines(events))
        };
        let (events, results) = scanner.scan_span_noted(hay, from, end, progress, per_chunk);
        let (results, chunks): (Vec<_>, Vec<_>) = results.into_iter().unzip();
        let (keys, kept) = results.into_iter().unzip();
        let lines = lines(&events, chunks);
        Spanned { events, keys, kept, lines, ..none }
    } else if let (true, true, Some(formatter)) = (opts.events, counts_lines, target.formatter) {
        // Each chunk's records need the lines of every chunk before it:
        // the chunks are formatted once their counts are joined.
        let per_chunk = |events: &[Event], parts: &[Parts]| ((parts.to_vec(), flags(events)), chunk_lines(events));
        let (events, results) = scanner.scan_span_noted(hay, from, end, progress, per_chunk);
        let (notes, chunks): (Vec<ChunkNotes>, Vec<_>) = results.into_iter().unzip();
        let sizes: Vec<usize> = chunks.iter().map(|c| c.as_ref().map_or(0, Vec::len)).collect();
        let lines = lines(&events, chunks);
        let text = lines.as_ref().map(|lines| {
            let given = LinesGiven { before_span: lines_before, before: &lines.before };
            format_chunks_with_lines(Formatting { target, formatter, origin }, hay, &events, &notes, &sizes, given)
        });
        let kept = notes.into_iter().map(|(_, kept)| kept).collect();
        Spanned { events, kept, text, lines, ..none }
    } else if let (true, Some(formatter)) = (opts.events, target.formatter) {
        let per_chunk = |events: &[Event], parts: &[Parts]| {
            let kept = flags(events);
            let text = format_events(Formatting { target, formatter, origin }, hay, events, parts, &kept, None);
            (text, kept)
        };
        let (events, results) = scanner.scan_span_noted(hay, from, end, progress, per_chunk);
        let (text, kept) = results.into_iter().unzip();
        Spanned { events, kept, text: Some(text), ..none }
    } else if opts.events {
        let per_chunk = |events: &[Event], parts: &[Parts]| ((parts.to_vec(), flags(events)), chunk_lines(events));
        let (events, results) = scanner.scan_span_noted(hay, from, end, progress, per_chunk);
        let (results, chunks): (Vec<_>, Vec<_>) = results.into_iter().unzip();
        let (parts, kept) = results.into_iter().unzip();
        let lines = lines(&events, chunks);
        Spanned { events, parts, kept, lines, ..none }
    } else {
        let (events, kept) = scanner.scan_span_with(hay, from, end, progress, flags);
        Spanned { events, kept, ..none }
    }
}
