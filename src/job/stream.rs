//! Streams (stdin, pipes, decoded archives) scanned a block at a time on
//! the calling thread ([`scan_stream`]), each block in parallel chunks,
//! and tested for binary bytes as they are read ([`Probe`]).

use std::io::{self, Read};

use super::emit::{
    emit, format_block_with_lines, format_events, write_formatted, ChunkNotes, Formatted, Formatting, Notes,
};
use super::keys::{absorb, kept_flags, walked_key_batch, Origin};
use super::line_numbers::{newlines_from_first, Emitting};
use super::{advance, JobOptions, Outcome, Sink, Target, Totals};
use crate::dedup::KeyBatch;
use crate::key::KeyShape;
use crate::scan::{Event, Scanner};
use crate::source::{self, InputError};
use crate::urn::Parts;

/// Scans a stream in blocks on the calling thread (each block in parallel
/// chunks), feeding the sink as it goes so memory stays bounded. A read
/// error ends the stream where it happens: what came before is scanned
/// (the URNs before a corrupt part of an archive, but not one cut short
/// by it: see [`Scanner::scan_reader`]), then it is reported.
/// Returns the binary test of the bytes it read (see [`Probe`]).
pub(super) fn scan_stream(
    scanner: &Scanner,
    opts: &JobOptions,
    target: Target<'_>,
    mut reader: Box<dyn Read + Send>,
    sink: &mut dyn Sink,
    outcome: &mut Outcome,
) -> io::Result<Probe> {
    let file = target.file;
    let mut totals = Totals { files: 1, ..Totals::default() };
    let mut input = Emitting::new(file, opts, None, 0);
    let mut sink_error = None;
    let mut reported = 0u64;
    let mut probe = Probe::default();
    let mut on_block = |buf: &[u8],
                        base: u64,
                        events: &[Event],
                        notes: Notes<'_>,
                        text: Option<Vec<Formatted>>,
                        input: &mut Emitting<'_>| {
        probe.test(buf, base);
        totals.count(events, notes.kept);
        let read = base + buf.len() as u64;
        advance(target, read - reported);
        reported = read;
        let emitted = match text {
            Some(text) => write_formatted(text, sink, target.texts),
            None if opts.events => emit(opts, input, buf, base, events, notes, sink),
            None => Ok(()),
        };
        // The next block keeps only bytes from before this one's end.
        input.count_to_end(buf, base);
        match emitted.and_then(|()| sink.input_progress(file, &totals)) {
            Ok(flow) => flow.is_continue(),
            Err(e) => {
                sink_error = Some(e);
                false
            }
        }
    };
    // Each chunk's task flags the URNs kept (`kept_flags`) and, when the
    // run only prints, formats them or keeps their parts, as for files (the
    // buffer is our own: its bytes cannot change).
    let nids = opts.nids.as_ref();
    let block = opts.stream_block;
    let grammar = scanner.options().grammar;
    let origin = |base| Origin { file: file.index, base, grammar, mapped: false, ns_rules: opts.ns_rules };
    let result = match target.formatter {
        Some(formatter) if opts.events && !opts.keys && !opts.line_numbers => {
            let per_chunk = |buf: &[u8], base: u64, events: &[Event], parts: &[Parts]| {
                let kept = kept_flags(buf, events, nids);
                let with = Formatting { target, formatter, origin: origin(base) };
                (format_events(with, buf, events, parts, &kept, None), kept)
            };
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, results| {
                let (text, kept): (Vec<_>, Vec<_>) = results.into_iter().unzip();
                on_block(buf, base, events, Notes { parts: &[], kept: &kept }, Some(text), &mut input)
            })
        }
        // With line numbers, each chunk's task also counts the newlines
        // between its events, and the chunks are formatted in a second
        // parallel pass once this thread has joined the counts (as for
        // files: `scan_keyed`).
        Some(formatter) if opts.events && !opts.keys => {
            let per_chunk = |buf: &[u8], _: u64, events: &[Event], parts: &[Parts]| {
                ((parts.to_vec(), kept_flags(buf, events, nids)), newlines_from_first(buf, events))
            };
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, results| {
                let (notes, chunks): (Vec<ChunkNotes>, Vec<_>) = results.into_iter().unzip();
                let with = Formatting { target, formatter, origin: origin(base) };
                let text = format_block_with_lines(with, &mut input, buf, events, &notes, chunks);
                let kept: Vec<_> = notes.into_iter().map(|(_, kept)| kept).collect();
                on_block(buf, base, events, Notes { parts: &[], kept: &kept }, Some(text), &mut input)
            })
        }
        _ if opts.events && !opts.keys => {
            let per_chunk =
                |buf: &[u8], _: u64, events: &[Event], parts: &[Parts]| (parts.to_vec(), kept_flags(buf, events, nids));
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, results| {
                let (parts, kept): (Vec<_>, Vec<_>) = results.into_iter().unzip();
                on_block(buf, base, events, Notes { parts: &parts, kept: &kept }, None, &mut input)
            })
        }
        // Each chunk's task makes its key batch from the shapes its walk
        // found, while the bytes are in cache, as for files (`scan_keyed`);
        // the batches enter the table before the sink hears of the block
        // (so a sink that stops the input keeps the keys of what it saw).
        _ if opts.keys => {
            let per_chunk = |buf: &[u8], base: u64, events: &[Event], shapes: &[KeyShape]| {
                let kept = kept_flags(buf, events, nids);
                (walked_key_batch(buf, events, shapes, origin(base), &kept), kept)
            };
            let table = &mut outcome.table;
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, results| {
                let (batches, kept): (Vec<KeyBatch>, Vec<_>) = results.into_iter().unzip();
                absorb(table, &batches, buf);
                on_block(buf, base, events, Notes { parts: &[], kept: &kept }, None, &mut input)
            })
        }
        _ => {
            let per_chunk = |buf: &[u8], _: u64, events: &[Event], _: &[()]| kept_flags(buf, events, nids);
            scanner.scan_reader_noted(&mut reader, block, per_chunk, |buf, base, events, kept| {
                on_block(buf, base, events, Notes { parts: &[], kept: &kept }, None, &mut input)
            })
        }
    };
    if let Some(e) = sink_error {
        return Err(e);
    }
    // A read error ends the stream: what came before it was scanned.
    let (bytes, ended) = match result {
        Ok(bytes) => (bytes, Ok(())),
        Err(error) => (reported, Err(error)),
    };
    advance(target, bytes.saturating_sub(reported));
    totals.bytes = bytes;
    outcome.totals.add(&totals);
    sink.input_done(file, &totals)?;
    if let Err(error) = ended {
        outcome.totals.errors += 1;
        sink.input_error(&InputError { path: file.name.to_owned(), error })?;
    }
    Ok(probe)
}

/// [`source::is_binary`] of a stream, made on its blocks as they are read
/// rather than on a [`source::peek`] of its first [`source::BINARY_PROBE`]
/// bytes before the scan: the same bytes decide, so the answer is the
/// same, unless the scan stops before they are all read (`-l`, `-q`,
/// `--max-count`), when it is made on those read.
#[derive(Default)]
pub(super) struct Probe {
    /// Stream bytes tested so far (at most the probe's).
    tested: u64,
    pub(super) binary: bool,
    /// The stream starts with a gzip or zstd magic
    /// ([`crate::decompress::Codec::sniff`] of its first block).
    pub(super) compressed: bool,
    /// Its first block looks like UTF-16 text without a mark
    /// ([`crate::transcode::Utf16::guess`]; counted only if it is binary).
    pub(super) utf16: Option<crate::transcode::Utf16>,
}

impl Probe {
    /// Tests the bytes of `buf` (stream bytes from `base` on) that fall in
    /// the probe and were not tested yet. Every byte of a stream passes
    /// through a block handed over before it leaves the buffer, so none
    /// is missed.
    fn test(&mut self, buf: &[u8], base: u64) {
        if base == 0 {
            self.compressed = crate::decompress::Codec::sniff(buf).is_some();
            self.utf16 = crate::transcode::Utf16::guess(buf);
        }
        let end = (base + buf.len() as u64).min(source::BINARY_PROBE as u64);
        if self.binary || end <= self.tested {
            return;
        }
        let from = (self.tested.max(base) - base) as usize;
        self.binary = source::is_binary(&buf[from..(end - base) as usize]);
        self.tested = end;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A stream's binary test made block by block, as its blocks come
        /// (any sizes, each keeping a few bytes of the one before, as a
        /// stream's do), is the test of its first 8 KiB.
        #[test]
        fn a_stream_tested_block_by_block_is_binary_as_its_head_is(
            len in 0usize..12_000,
            nul in prop::option::of(0usize..12_000),
            ends in prop::collection::vec((0usize..12_000, 0usize..4), 0..12),
        ) {
            let mut text: Vec<u8> = b"urn:ab:c ".iter().copied().cycle().take(len).collect();
            if let Some(at) = nul.filter(|&at| at < len) {
                text[at] = 0;
            }
            let mut ends: Vec<(usize, usize)> = ends.into_iter().filter(|&(end, _)| end < len).collect();
            ends.sort_unstable();
            ends.push((len, 0));
            let (mut probe, mut last_end) = (Probe::default(), 0usize);
            for (end, kept) in ends {
                let base = last_end.saturating_sub(kept);
                probe.test(&text[base..end], base as u64);
                last_end = end;
            }
            prop_assert_eq!(probe.binary, source::is_binary(&text));
        }
    }
}
