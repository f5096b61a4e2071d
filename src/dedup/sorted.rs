//! Entries of many tables in key order, for output.
//!
//! Sorting [`Entry`] values directly costs about 80 bytes per distinct key
//! on top of the tables (two slices, a count, a position) — 240 MB for
//! 3 M keys, more than the tables themselves. Here each entry is a
//! 24-byte handle instead: 16 bytes of the key as two integers, and the
//! table and arena offset of the entry. Entries are decoded one at a time
//! as they are handed out.
//!
//! The sort never reads a key while comparing: a comparison that had to
//! would wait for a cache miss, and keys often share long prefixes
//! (`urn:nbn:de:…`). Handles are sorted by bytes 4..20 (every key starts
//! with `urn:`); each run of handles that tie is then given the key's next
//! 16 bytes, read once per handle, and sorted again, and so on (a
//! most-significant-digit radix sort with 128-bit digits). Keys hold no
//! zero bytes, so zero padding puts a shorter key first, as byte order
//! does.

use rayon::prelude::*;

use super::{Entry, KeyTable};

/// Entries of several tables sorted by key bytes; see the module docs.
pub struct SortedEntries<'t> {
    tables: &'t [KeyTable],
    handles: Vec<[u64; 3]>,
}

/// Bits of a handle's third word that hold the arena offset (the index
/// addresses 40; the table number goes above).
const OFFSET_BITS: u32 = 48;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

impl<'t> SortedEntries<'t> {
    /// Memory per entry while sorted.
    pub const BYTES_PER_ENTRY: usize = std::mem::size_of::<[u64; 3]>();

    /// Sorts the entries of `tables` (in parallel).
    pub fn new(tables: &'t [KeyTable]) -> SortedEntries<'t> {
        let mut handles = vec![[0; 3]; tables.iter().map(KeyTable::len).sum()];
        // Each table fills its own part of the handles, in parallel: a
        // table holds exactly `len` live entries.
        let mut parts = Vec::with_capacity(tables.len());
        let mut rest = &mut handles[..];
        for table in tables {
            let (part, after) = rest.split_at_mut(table.len());
            parts.push(part);
            rest = after;
        }
        parts.into_par_iter().zip(tables.par_iter().enumerate()).for_each(|(part, (t, table))| {
            let mut filled = 0;
            for (h, (offset, e)) in part.iter_mut().zip(table.iter_offsets()) {
                let digit = digit_at(e.key, 4);
                *h = [(digit >> 64) as u64, digit as u64, (t as u64) << OFFSET_BITS | offset];
                filled += 1;
            }
            debug_assert_eq!(filled, part.len(), "a table's live entries are its len");
        });
        sort_from(&mut handles, 4, tables);
        SortedEntries { tables, handles }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.handles.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.handles.is_empty()
    }

    /// The entries in key order. Each is decoded from its table as it is
    /// handed out, with the entries a few places ahead prefetched: in key
    /// order they are all over memory.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'t>> + '_ {
        self.iter_range(0..self.len())
    }

    /// Entries `range` of [`SortedEntries::iter`] (clamped to the length):
    /// for handing them out from several threads, a range each.
    pub fn iter_range(&self, range: std::ops::Range<usize>) -> impl Iterator<Item = Entry<'t>> + '_ {
        let tables = self.tables;
        let at = move |h: &[u64; 3]| (&tables[(h[2] >> OFFSET_BITS) as usize], h[2] & OFFSET_MASK);
        let end = range.end.min(self.len());
        let start = range.start.min(end);
        let (handles, first) = (&self.handles[..end], start);
        handles[start..].iter().enumerate().map(move |(i, h)| {
            if let Some(ahead) = handles.get(first + i + AHEAD) {
                let (table, offset) = at(ahead);
                table.prefetch_entry_at(offset);
            }
            let (table, offset) = at(h);
            table.entry_at(offset)
        })
    }
}

/// How far ahead [`SortedEntries::iter`] prefetches.
const AHEAD: usize = 8;

/// Sorts `handles`, whose first two words hold bytes `from..from + 16` of
/// their keys, by key bytes (see the module docs). Runs of ties are
/// resolved in parallel, each reading its keys' next 16 bytes with the
/// entries a few places ahead prefetched.
fn sort_from(handles: &mut [[u64; 3]], from: usize, tables: &[KeyTable]) {
    let at = |h: &[u64; 3]| (&tables[(h[2] >> OFFSET_BITS) as usize], h[2] & OFFSET_MASK);
    let key = |h: &[u64; 3]| {
        let (table, offset) = at(h);
        table.key_at(offset)
    };
    handles.par_sort_unstable_by_key(|h| (h[0], h[1]));
    let next = from + 16;
    let mut ties: Vec<&mut [[u64; 3]]> =
        handles.chunk_by_mut(|a, b| (a[0], a[1]) == (b[0], b[1])).filter(|run| run.len() > 1).collect();
    ties.par_iter_mut().for_each(|run| {
        // Distinct keys differ further on, unless all of them ended
        // already (equal keys, which one table never holds).
        if run.iter().all(|h| key(h).len() <= next) {
            return;
        }
        for i in 0..run.len() {
            if let Some(ahead) = run.get(i + AHEAD) {
                let (table, offset) = at(ahead);
                table.prefetch_entry_at(offset);
            }
            let digit = digit_at(key(&run[i]), next);
            (run[i][0], run[i][1]) = ((digit >> 64) as u64, digit as u64);
        }
        sort_from(run, next, tables);
    });
}

/// Bytes `from..from + 16` of `key` as a big-endian integer, zero-padded:
/// ordering by it agrees with ordering by the bytes wherever the two differ
/// there.
fn digit_at(key: &[u8], from: usize) -> u128 {
    let mut bytes = [0u8; 16];
    let tail = key.get(from..).unwrap_or_default();
    let n = tail.len().min(16);
    bytes[..n].copy_from_slice(&tail[..n]);
    u128::from_be_bytes(bytes)
}
