//! Phase 1 of a block (see the module docs of [`crate::lines`]): lines
//! found and judged a chunk at a time ([`ChunkOut::scan`]), each valid
//! line's key hashed and filed as a record in one of the partitions, each
//! rejected line kept for the caller's reject callback. Also how a block is
//! cut into chunks of whole lines ([`line_ranges`]).

use std::ops::Range;

use super::{trimmed_range, KEY_IS_TEXT, KINDS, PARTS, PART_BITS};
use crate::dedup::key_hash;
use crate::error::{ErrorKind, UrnError};
use crate::grammar::bits::parse_in_span;
use crate::grammar::{parse, Grammar};
use crate::nid::rules::apply_ns_rules;
use crate::nid::NidFilter;
use crate::platform::simd::line_bits::{for_each_line, LineBits};

/// One valid line, in a partition of a chunk.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rec {
    /// [`key_hash`] of the key: partition, spill level and table slot.
    pub(super) hash: u64,
    /// Where the line's text starts in the chunk (blocks are at most
    /// [`MAX_BLOCK_SIZE`](super::MAX_BLOCK_SIZE)).
    pub(super) start: u32,
    /// Line index in the chunk.
    pub(super) line: u32,
    /// Where the key starts in [`ChunkOut::keys`], or [`KEY_IS_TEXT`] when
    /// the key is the start of the line's text.
    pub(super) key_at: u32,
    pub(super) text_len: u16,
    pub(super) key_len: u16,
}

/// One rejected line of a chunk.
#[derive(Clone, Copy, Debug)]
pub(super) struct RejectRec {
    pub(super) line: u32,
    /// The chunk's empty lines before it.
    pub(super) empty_before: u32,
    /// Where the line's text is in [`ChunkOut::reject_text`].
    pub(super) start: u64,
    pub(super) len: u64,
    pub(super) error: UrnError,
}

/// What the parse phase found in one chunk. Kept between blocks, so the
/// vectors keep their capacity instead of being allocated (and their pages
/// faulted in) again for every block.
#[derive(Default)]
pub(super) struct ChunkOut {
    /// Where the chunk starts in its block.
    pub(super) offset: usize,
    pub(super) lines: u64,
    pub(super) valid: u64,
    pub(super) excluded: u64,
    pub(super) empty: u64,
    pub(super) invalid: [u64; KINDS],
    pub(super) parts: Vec<Vec<Rec>>,
    /// Keys that are not a prefix of their line's text.
    pub(super) keys: Vec<u8>,
    pub(super) rejects: Vec<RejectRec>,
    /// The rejected lines' text, copied when they were judged: it is shown
    /// after phase 2, and a mapped file truncated in between would read as
    /// zeros by then.
    pub(super) reject_text: Vec<u8>,
}

#[derive(Clone, Copy)]
pub(super) struct Judge<'n> {
    pub(super) grammar: Grammar,
    pub(super) ns_rules: bool,
    pub(super) nids: Option<&'n NidFilter>,
}

impl ChunkOut {
    /// Phase 1 over `block[range]`.
    pub(super) fn scan(&mut self, block: &[u8], range: Range<usize>, judge: Judge<'_>) {
        self.reset(range.start);
        let chunk = &block[range];
        // The line ends and the grammar's answers as bits, a span at a time
        // (see `platform::simd::line_bits`).
        for_each_line(chunk, |line, span| self.line(chunk, line, span, judge));
    }

    fn reset(&mut self, offset: usize) {
        self.offset = offset;
        (self.lines, self.valid, self.excluded, self.empty) = (0, 0, 0, 0);
        self.invalid = [0; KINDS];
        self.parts.resize_with(PARTS, Vec::new);
        self.parts.iter_mut().for_each(Vec::clear);
        self.keys.clear();
        self.rejects.clear();
        self.reject_text.clear();
    }

    /// The text of a rejected line, as it was judged.
    pub(super) fn reject_text(&self, r: &RejectRec) -> &[u8] {
        &self.reject_text[r.start as usize..][..r.len as usize]
    }

    /// Judges one line (without its `\n`), with the maps of the span of
    /// `chunk` that holds it when there is one: the hot loop.
    pub(super) fn line(
        &mut self,
        chunk: &[u8],
        line: Range<usize>,
        span: Option<(&LineBits, usize)>,
        judge: Judge<'_>,
    ) {
        let index = self.lines as u32;
        self.lines += 1;
        let (lead, len) = trimmed_range(&chunk[line.clone()]);
        if len == 0 {
            self.empty += 1;
            return;
        }
        let start = line.start + lead;
        let text = &chunk[start..start + len];
        let parsed = match span {
            // Judged from the bits where they tell; walked otherwise.
            Some((bits, base)) => {
                parse_in_span(bits, &chunk[base..base + bits.len()], start - base, start + len - base, judge.grammar)
            }
            None => parse(text, judge.grammar),
        };
        match parsed {
            Ok(urn) if judge.nids.is_some_and(|f| !f.accepts_nid(urn.nid().as_bytes())) => self.excluded += 1,
            Ok(urn) => {
                self.valid += 1;
                // Most lines are written in key form, components aside: their
                // key is the start of the text and is not copied.
                let (key_at, key) = match urn.key_if_borrowed() {
                    Some(name) if !judge.ns_rules => (KEY_IS_TEXT, name),
                    _ => {
                        let at = self.keys.len();
                        urn.write_key(&mut self.keys);
                        if judge.ns_rules {
                            apply_ns_rules(&mut self.keys[at..]);
                        }
                        (at as u32, &self.keys[at..])
                    }
                };
                let hash = key_hash(key);
                let rec = Rec {
                    hash,
                    start: start as u32,
                    line: index,
                    key_at,
                    text_len: len as u16,
                    key_len: key.len() as u16,
                };
                self.parts[partition(hash, 0)].push(rec);
            }
            Err(error) => {
                let kind = ErrorKind::ALL.iter().position(|&k| k == error.kind()).unwrap_or(0);
                self.invalid[kind] += 1;
                let at = self.reject_text.len();
                self.reject_text.extend_from_slice(&chunk[start..start + len]);
                let empty_before = self.empty as u32;
                self.rejects.push(RejectRec { line: index, empty_before, start: at as u64, len: len as u64, error });
            }
        }
    }
}

/// The partition of a key at a spill level: level 0 is the top
/// [`PART_BITS`] bits of its hash, level 1 the next ones, and so on.
pub(super) fn partition(hash: u64, level: u32) -> usize {
    let shifted = hash.checked_shl(PART_BITS * level).unwrap_or(0);
    (shifted >> (64 - PART_BITS)) as usize
}

/// The end of the range that starts at `start` and holds about `target`
/// bytes of whole lines: just after the last `\n` within the target, or
/// after the first `\n` past it when a line is longer, or the end.
pub(super) fn line_boundary(bytes: &[u8], start: usize, target: usize) -> usize {
    let want = start.saturating_add(target.max(1));
    if want >= bytes.len() {
        return bytes.len();
    }
    match memchr::memrchr(b'\n', &bytes[start..want]) {
        Some(i) => start + i + 1,
        None => memchr::memchr(b'\n', &bytes[want..]).map_or(bytes.len(), |i| want + i + 1),
    }
}

/// `bytes` cut into ranges of whole lines of about `target` bytes each (a
/// line longer than that is one range), in order: how `urnscan dedup` cuts
/// a block into its parse phase's chunks.
pub fn line_ranges(bytes: &[u8], target: usize) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    while start < bytes.len() {
        let end = line_boundary(bytes, start, target);
        out.push(start..end);
        start = end;
    }
    out
}
