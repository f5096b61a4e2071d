//! Phase 1 of filling the run's [`ShardedTable`] (see [`crate::dedup`]):
//! each chunk's URNs made into a [`KeyBatch`] (key written, hashed, filed by
//! shard) by the task that scanned the chunk, from the key shapes its
//! validation found ([`walked_key_batch`]); phase 2, [`absorb`], a task per
//! shard. Also the public helpers for callers with a buffer and its events
//! ([`key_batch`], [`fill_batches`], [`add_keys`]).
//!
//! For files, whole or a window at a time, each chunk's [`KeyBatch`] is
//! made by the task that scanned the chunk, right after it (`scan_keyed`),
//! and from what the validation already found: the scanner keeps the key
//! shape of every URN beside its event (where the NID and the assigned
//! name end, which fix-ups the key needs; see [`crate::scan`]), so the
//! bytes are not searched again (`walked_key_batch`); a stream's blocks
//! likewise. Callers of [`key_batch`] with events alone find the shape in
//! the bytes (`key::key_shape`: the same answer, from one pass over a URN
//! of up to 64 bytes, `memchr` searches over longer ones).
//! Either way a mapped file's new keys are checked against its bytes again
//! before they are kept, since the bytes may have changed since the scan.

use rayon::prelude::*;

use crate::dedup::{KeyBatch, ShardedTable};
use crate::grammar::Grammar;
use crate::key::{key_shape, Fixes, KeyShape};
use crate::nid::NidFilter;
use crate::scan::{Event, Scanner};

/// Events per [`KeyBatch`]: enough to amortise a batch, small enough that a
/// window's events spread over every thread.
const KEY_SLICE: usize = 1 << 14;

/// Where a buffer's URNs come from, as their key table records them.
#[derive(Clone, Copy, Debug)]
pub struct Origin {
    /// Index of the input.
    pub file: u32,
    /// Offset of the buffer's first byte in the input.
    pub base: u64,
    /// The grammar the URNs were validated under.
    pub grammar: Grammar,
    /// The buffer is a shared file mapping, whose bytes can change while
    /// they are read: new keys are checked again before they are kept
    /// (those of a batch that copies its URNs, when it copies them).
    pub mapped: bool,
    /// Keys pass through the namespace rules ([`super::JobOptions::ns_rules`]).
    pub ns_rules: bool,
}

/// Phase 1 of filling a [`ShardedTable`] (see [`crate::dedup`]) for the
/// URN events of `hay`: their keys written and hashed into one
/// [`KeyBatch`]. The URNs were validated by the scan, so the key is read
/// off their bytes without parsing them again (whole files and windows get
/// even that from the scan: see `walked_key_batch`).
pub fn key_batch(hay: &[u8], events: &[Event], origin: Origin) -> KeyBatch {
    let urns = urn_bytes(hay, events).map(|(offset, raw)| (offset, raw, key_shape(raw, origin.grammar)));
    batch_of(origin, events, events.len(), urns)
}

/// [`key_batch`] with the shape of each URN's key (one per URN event) as
/// the scan's validating walk found it ([`Scanner::scan_span_noted`]):
/// no pass over the bytes to find it again. A shape that no longer fits
/// the bytes (a mapping changed since the scan) drops the URN, and one that
/// fits is checked again before its key is kept, as for [`key_batch`].
/// URNs whose flag in `kept` is false are left out (see [`kept_flags`]).
pub(super) fn walked_key_batch(
    hay: &[u8],
    events: &[Event],
    shapes: &[KeyShape],
    origin: Origin,
    kept: &[bool],
) -> KeyBatch {
    debug_assert_eq!(urn_bytes(hay, events).count(), shapes.len());
    let urns = urn_bytes(hay, events)
        .zip(shapes)
        .enumerate()
        .filter(|&(i, _)| *kept.get(i).unwrap_or(&true))
        .map(|(_, ((offset, raw), shape))| (offset, raw, shape.apply(raw)));
    batch_of(origin, events, shapes.len(), urns)
}

/// Whether each URN event of `events` (offsets in `hay`) is of a namespace
/// `nids` keeps, in order; empty without a filter (every URN is kept). The
/// task that scanned the chunk finds them while its bytes are in cache:
/// read again on the calling thread, a window's URNs were a cache miss
/// each (dense text, `scan --nid isbn -j2`: the filter took 18 % of the
/// run and made it slower than printing every URN).
pub(super) fn kept_flags(hay: &[u8], events: &[Event], nids: Option<&NidFilter>) -> Vec<bool> {
    match nids {
        None => Vec::new(),
        Some(filter) => urn_bytes(hay, events).map(|(_, raw)| filter.accepts(raw)).collect(),
    }
}

/// Phase 1 over a whole buffer: `hay` scanned a window of `window` bytes at
/// a time ([`Scanner::scan_windows_with`]), each chunk's [`KeyBatch`] made
/// by the task that scanned the chunk from the key shapes the scan kept, as
/// a run makes them for a file; `on_window` gets each window's events and
/// batches (for [`absorb`]) until it returns `false`.
pub fn scan_windows_keyed(
    scanner: &Scanner,
    hay: &[u8],
    window: usize,
    origin: Origin,
    on_window: impl FnMut(&[Event], Vec<KeyBatch>) -> bool,
) {
    let per_chunk = |events: &[Event], shapes: &[KeyShape]| walked_key_batch(hay, events, shapes, origin, &[]);
    scanner.scan_windows_shaped(hay, window, None, per_chunk, on_window);
}

/// The offset and bytes of each URN event, one item per event (so that
/// they stay in step with the scan's shapes): the events come from
/// scanning `hay` itself, so they lie inside it.
fn urn_bytes<'h>(hay: &'h [u8], events: &'h [Event]) -> impl Iterator<Item = (usize, &'h [u8])> {
    events.iter().filter_map(|event| match *event {
        Event::Urn { offset, len } => Some((offset, &hay[offset..offset + len])),
        Event::Rejected { .. } => None,
    })
}

/// How much of its URNs' bytes the batch of `events` should copy
/// ([`KeyBatch::copying`]): when they are less than an eighth of the bytes
/// from the first to the end of the last, as in running text (200 URNs per
/// MiB: 1 %). Each URN there is a cache line or two of its own, which phase
/// 2 of a window waits for again while the next window is scanned; copied
/// while in cache, the URNs of a batch lie side by side, and phase 2 reads
/// nothing of the mapping again (1 GiB of text, `scan --unique --stats
/// -j1`: 3.6 % faster; callgrind on its first 128 MiB: phase 2 24.3 M ->
/// 17.0 M instructions, its reads missing a 2 MiB cache 57,549 -> 43,332
/// times). Dense text and datasets are read in order anyway, and there a
/// copy of every URN cost time and memory (10 M lines, `scan --unique
/// -j2`: 10 MB more at the peak). Returns the bytes to copy, `None` for no
/// copy.
fn copied_bytes(events: &[Event]) -> Option<usize> {
    let urns = || {
        events.iter().filter_map(|e| match *e {
            Event::Urn { offset, len } => Some((offset, len)),
            Event::Rejected { .. } => None,
        })
    };
    let (first, _) = urns().next()?;
    let (last, last_len) = urns().next_back()?;
    let bytes: usize = urns().map(|(_, len)| len).sum();
    (bytes.saturating_mul(8) < last + last_len - first).then_some(bytes)
}

/// A batch of about `expected` URNs of `events`, each with its assigned name and key
/// fix-ups (`None`: no key, the URN is left out).
fn batch_of<'h>(
    origin: Origin,
    events: &[Event],
    expected: usize,
    urns: impl Iterator<Item = (usize, &'h [u8], Option<(&'h [u8], Fixes)>)>,
) -> KeyBatch {
    let Origin { file, base, grammar, mapped, ns_rules } = origin;
    let copied = copied_bytes(events);
    let mut batch = KeyBatch::new(file, base, mapped.then_some(grammar), expected)
        .with_ns_rules(ns_rules)
        .copying(copied.is_some())
        .with_room(copied.unwrap_or(0));
    for (offset, raw, shape) in urns {
        if let Some((name, fixes)) = shape {
            batch.push(offset, raw, name, fixes);
        }
    }
    batch.group();
    batch
}

/// Phase 1 over parallel slices of `events` (for buffers scanned without
/// [`Scanner::scan_span_with`]), one [`KeyBatch`] per slice.
pub fn fill_batches(hay: &[u8], events: &[Event], origin: Origin) -> Vec<KeyBatch> {
    events.par_chunks(KEY_SLICE).map(|slice| key_batch(hay, slice, origin)).collect()
}

/// Both phases: the keys of the URN events of `hay` into `table`.
pub fn add_keys(table: &mut ShardedTable, hay: &[u8], events: &[Event], origin: Origin) {
    absorb(table, &fill_batches(hay, events, origin), hay);
}

/// Phase 2: `batches`, whose offsets refer to `hay`, into `table`.
pub fn absorb(table: &mut ShardedTable, batches: &[KeyBatch], hay: &[u8]) {
    let refs: Vec<(&KeyBatch, &[u8])> = batches.iter().map(|b| (b, hay)).collect();
    table.absorb(&refs);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ErrorKind, UrnError};

    /// Batches copy their URNs where the URNs are under an eighth of the
    /// bytes they span: running text, not a dataset or dense text.
    #[test]
    fn batches_copy_the_urns_of_sparse_text_only() {
        let urn = |offset, len| Event::Urn { offset, len };
        let rejected = Event::Rejected { offset: 0, error: UrnError::new(ErrorKind::NidBadChar, 5, Grammar::Rfc8141) };
        // 40-byte URNs 5,000 bytes apart (200 per MiB), a rejected one among them.
        let sparse: Vec<Event> = (0..10).map(|i| urn(i * 5_000, 40)).chain([rejected]).collect();
        assert_eq!(copied_bytes(&sparse), Some(400));
        // One per line of a dataset; dense text, a third of the bytes.
        let dataset: Vec<Event> = (0..10).map(|i| urn(i * 41, 40)).collect();
        let dense: Vec<Event> = (0..10).map(|i| urn(i * 120, 40)).collect();
        assert_eq!((copied_bytes(&dataset), copied_bytes(&dense)), (None, None));
        // Just under and at an eighth: 2 × 40 bytes over 641 and 640.
        assert_eq!(copied_bytes(&[urn(0, 40), urn(601, 40)]), Some(80));
        assert_eq!(copied_bytes(&[urn(0, 40), urn(600, 40)]), None);
        // Nothing to copy.
        assert_eq!((copied_bytes(&[]), copied_bytes(&[rejected])), (None, None));
    }
}
