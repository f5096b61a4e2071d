//! Events on their way to the sink: handed over one by one ([`emit`]) or
//! formatted by chunk ([`format_events`], [`write_formatted`]), either way
//! from the parts the scan's validation found of each URN, so nothing is
//! parsed twice, and without the URNs `--nid` leaves out ([`each_shown`]).
//!
//! A run that prints events and keeps no keys, with a sink that gives a
//! [`Formatter`] ([`Sink::formatter`]), has each chunk's events formatted
//! by the task that scanned the chunk, from the parts the validation found,
//! into buffers that are used again once written; the calling thread only
//! hands the text to the sink, in input order. Before, the calling thread
//! printed every event: after each batch of files, with nothing to overlap
//! it, and for a large file beside the scan of the next window, which the
//! scanning threads then waited for. Measured (2026-11-28, 2-core KVM
//! guest, `benches/ab.sh`, 7 rounds, medians, output to `/dev/null`, with
//! the change to `scan` that goes with it), plain `scan` at one / two
//! threads: 45 files of a 10 M-line URN dataset 1,011 / 635 → 898 / 488
//! ms, the dataset as one file 802 / 524 → 803 / 483, 1 GiB of text with
//! 200 URNs per MiB 122 / 72 → 101 / 60. Into a pipe at one thread the
//! dataset lost (1,360 → 1,454 ms): the formatting no longer runs on a
//! thread of its own beside the one scanning thread.

use std::io;

use rayon::prelude::*;

use super::keys::Origin;
use super::line_numbers::{Emitting, SpanLines};
use super::{Formatter, JobOptions, Location, Sink, Target, Texts};
use crate::error::UrnError;
use crate::extract::candidate_text;
use crate::grammar::{parse, Grammar};
use crate::scan::Event;
use crate::urn::{Parts, Urn};

/// The text of a chunk's events, or the formatter's error.
pub(super) type Formatted = io::Result<Vec<u8>>;

/// What the scan kept of each URN event of a span, chunk by chunk, for
/// [`emit`].
#[derive(Clone, Copy)]
pub(super) struct Notes<'a> {
    /// The parts of each URN (see [`emit`]); empty: parse again.
    pub(super) parts: &'a [Vec<Parts>],
    /// Whether each URN is kept ([`super::span::Spanned::kept`]); empty: all are.
    pub(super) kept: &'a [Vec<bool>],
}

/// Hands `events` (offsets relative to `hay`, which starts at byte `base`
/// of the input) to the sink, but the URN events `notes.kept` leaves out
/// (see [`each_shown`]).
pub(super) fn emit(
    opts: &JobOptions,
    input: &mut Emitting<'_>,
    hay: &[u8],
    base: u64,
    events: &[Event],
    notes: Notes<'_>,
    sink: &mut dyn Sink,
) -> io::Result<()> {
    let (parts, kept) = (notes.parts.iter().flatten(), notes.kept.iter().flatten());
    let file = input.file;
    each_shown(opts.extract.grammar, hay, events, parts, kept, |event, offset, shown| {
        let at = input.locate(event, hay, base, base + offset as u64);
        match shown {
            Shown::Urn(urn) => sink.urn(file, at, &urn),
            Shown::Rejected(candidate, error) => sink.rejected(file, at, candidate, error),
        }
    })
}

/// The text `formatter` makes of a chunk's `events` (offsets relative to
/// `hay`, which starts at byte `origin.base` of the input), but the URN
/// events `kept` leaves out; `parts` are those of its URN events.
pub(super) fn format_events(
    with: Formatting<'_>,
    hay: &[u8],
    events: &[Event],
    parts: &[Parts],
    kept: &[bool],
    lines: Option<LinesGiven<'_>>,
) -> Formatted {
    let Formatting { target, formatter, origin } = with;
    let (file, mut out) = (target.file, target.texts.take());
    each_shown(origin.grammar, hay, events, parts.iter(), kept.iter(), |i, offset, shown| {
        let line = lines.and_then(|l| Some(l.before_span + l.before.get(i)? + 1));
        let at = Location { offset: origin.base + offset as u64, line };
        match shown {
            Shown::Urn(urn) => formatter.urn(&mut out, file, at, &urn),
            Shown::Rejected(candidate, error) => formatter.rejected(&mut out, file, at, candidate, error),
        }
    })?;
    Ok(out)
}

/// Who formats the events of an input, and where its buffer starts.
#[derive(Clone, Copy)]
pub(super) struct Formatting<'a> {
    pub(super) target: Target<'a>,
    pub(super) formatter: &'a dyn Formatter,
    pub(super) origin: Origin,
}

/// A chunk's parts of its URN events and their kept flags.
pub(super) type ChunkNotes = (Vec<Parts>, Vec<bool>);

/// The lines of a run of events: the newlines before the first byte of
/// their span, and before each of them from there.
#[derive(Clone, Copy)]
pub(super) struct LinesGiven<'l> {
    pub(super) before_span: u64,
    pub(super) before: &'l [u64],
}

/// The text of each chunk of a span (`sizes[i]` events of `events` and its
/// `notes`, parts and kept flags), with line numbers: a second parallel
/// pass, a task per chunk, once the counts of every chunk are joined.
pub(super) fn format_chunks_with_lines(
    with: Formatting<'_>,
    hay: &[u8],
    events: &[Event],
    notes: &[ChunkNotes],
    sizes: &[usize],
    lines: LinesGiven<'_>,
) -> Vec<Formatted> {
    let starts: Vec<usize> = sizes.iter().scan(0, |at, n| Some(std::mem::replace(at, *at + n))).collect();
    notes
        .par_iter()
        .zip(starts.par_iter().zip(sizes))
        .map(|((parts, kept), (&start, &n))| {
            // (Chunks hold every event; the bounds only keep a mismatch
            // from indexing out of range.)
            let range = start.min(events.len())..(start + n).min(events.len());
            let before = lines.before.get(range.clone()).unwrap_or_default();
            let given = LinesGiven { before, ..lines };
            format_events(with, hay, &events[range], parts, kept, Some(given))
        })
        .collect()
}

/// The text of each chunk of a stream's block (`buf`, whose `events` its
/// chunks' `notes` and newline counts cover, in order), with line numbers:
/// the newlines before its first event are counted from where `input`'s
/// count stands, the gaps between chunks and after the last event here,
/// and the count is left at the block's end.
pub(super) fn format_block_with_lines(
    with: Formatting<'_>,
    input: &mut Emitting<'_>,
    buf: &[u8],
    events: &[Event],
    notes: &[ChunkNotes],
    chunks: Vec<Vec<u64>>,
) -> Vec<Formatted> {
    let base = with.origin.base;
    let first = events.first().map_or(buf.len(), Event::offset);
    let before_span = input.newlines_before(buf, base, base + first as u64);
    let sizes: Vec<usize> = chunks.iter().map(Vec::len).collect();
    let lines = SpanLines::join(buf, first..buf.len(), events, chunks.into_iter());
    input.counted_to(base + buf.len() as u64, before_span + lines.total);
    format_chunks_with_lines(with, buf, events, notes, &sizes, LinesGiven { before_span, before: &lines.before })
}

/// Hands chunks' formatted text to the sink, in order, and their buffers
/// back to `texts`.
pub(super) fn write_formatted(text: Vec<Formatted>, sink: &mut dyn Sink, texts: &Texts) -> io::Result<()> {
    text.into_iter().try_for_each(|chunk| {
        let chunk = chunk?;
        let written = sink.write_formatted(&chunk);
        texts.give(chunk);
        written
    })
}

/// The most bytes of a rejected candidate's text a sink is given.
pub(super) const SHOWN_CANDIDATE: usize = 64;

/// An event as the sink is given it.
enum Shown<'h, 'e> {
    Urn(Urn<'h>),
    /// The candidate's text, up to where it ends, at most 64 bytes
    /// ([`SHOWN_CANDIDATE`]), and why it is no URN.
    Rejected(&'h [u8], &'e UrnError),
}

/// Calls `show` with the index and the offset (in `hay`) of each of
/// `events` and what the sink is shown of it, but the URN events whose flag in `kept` is
/// false (no flags: all are kept). `parts`, if not empty, are the parts
/// the scan found of each URN event, in order; without them each URN is
/// parsed again.
///
/// The parts are trusted only while the bytes are there: a mapped file
/// cut short reads as zeros from its new end on, and no URN holds a zero
/// byte, so a URN whose last byte is not zero lies wholly before the cut.
/// (Against a truncation, parsing again checked no more than that: the
/// bytes can change between the check and the write either way.) Callers
/// pass no parts once the file is known to have changed. A file rewritten
/// in place without shrinking cannot be detected; the URNs printed for it
/// are the scan's positions over whatever bytes are there by then, as its
/// results are unspecified anyway (the advice for a changed file is to scan
/// a copy). Measured: printing from the parts took 15 % off a plain
/// `scan -j1` of 8 MB of dense text (59.9 M → 50.5 M instructions).
fn each_shown<'h, 'e>(
    grammar: Grammar,
    hay: &'h [u8],
    events: &'e [Event],
    mut parts: impl Iterator<Item = &'e Parts>,
    mut kept: impl Iterator<Item = &'e bool>,
    mut show: impl FnMut(usize, usize, Shown<'h, 'e>) -> io::Result<()>,
) -> io::Result<()> {
    for (i, event) in events.iter().enumerate() {
        match *event {
            Event::Urn { offset, len } => {
                // Both taken first: they follow every URN event.
                let (part, kept) = (parts.next(), kept.next());
                if kept == Some(&false) {
                    continue;
                }
                let bytes = &hay[offset..offset + len];
                let urn = match part {
                    Some(&p) if usize::from(p.end) == len && bytes.last() != Some(&0) => {
                        Some(Urn::from_parts(bytes, grammar, p))
                    }
                    _ => parse(bytes, grammar).ok(),
                };
                if let Some(urn) = urn {
                    show(i, offset, Shown::Urn(urn))?;
                }
            }
            Event::Rejected { offset, ref error } => {
                // Its first bytes alone: a too-long candidate's text runs
                // for MAX_URN_LEN + 1 bytes, of which the sink is given 64.
                let text = candidate_text(&hay[..hay.len().min(offset + SHOWN_CANDIDATE)], offset);
                show(i, offset, Shown::Rejected(text, error))?;
            }
        }
    }
    Ok(())
}
