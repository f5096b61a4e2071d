//! Entries of many tables in key order, for output.
//!
//! Sorting [`Entry`] values directly costs about 80 bytes per distinct key
//! on top of the tables (two slices, a count, a position) — 240 MB for
//! 3 M keys, more than the tables themselves. Here each entry is a
//! 24-byte handle instead: bytes 4..20 of the key (every key starts with
//! `urn:`) as two integers, which decide most comparisons without touching
//! the table, and the table and arena offset to look the key up for the
//! rest. Entries are decoded one at a time as they are handed out.

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

impl<'t> SortedEntries<'t> {
    /// Memory per entry while sorted.
    pub const BYTES_PER_ENTRY: usize = std::mem::size_of::<[u64; 3]>();

    /// Sorts the entries of `tables` (in parallel).
    pub fn new(tables: &'t [KeyTable]) -> SortedEntries<'t> {
        let mut handles = Vec::with_capacity(tables.iter().map(KeyTable::len).sum());
        for (t, table) in tables.iter().enumerate() {
            handles.extend(table.iter_offsets().map(|(offset, e)| {
                let prefix = sort_prefix(e.key);
                [(prefix >> 64) as u64, prefix as u64, (t as u64) << OFFSET_BITS | offset]
            }));
        }
        let key = |h: &[u64; 3]| tables[(h[2] >> OFFSET_BITS) as usize].key_at(h[2] & ((1 << OFFSET_BITS) - 1));
        handles.par_sort_unstable_by(|a, b| (a[0], a[1]).cmp(&(b[0], b[1])).then_with(|| key(a).cmp(key(b))));
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

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'t>> + '_ {
        let tables = self.tables;
        self.handles
            .iter()
            .map(move |h| tables[(h[2] >> OFFSET_BITS) as usize].entry_at(h[2] & ((1 << OFFSET_BITS) - 1)))
    }
}

/// Bytes 4..20 of `key` as a big-endian integer, zero-padded: ordering by
/// it agrees with ordering by the bytes wherever the two differ there (keys
/// hold no zero bytes, so padding sorts a shorter key first, as bytes do).
fn sort_prefix(key: &[u8]) -> u128 {
    let mut bytes = [0u8; 16];
    let tail = key.get(4..).unwrap_or_default();
    let n = tail.len().min(16);
    bytes[..n].copy_from_slice(&tail[..n]);
    u128::from_be_bytes(bytes)
}
