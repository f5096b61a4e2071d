//! Deduplication by equivalence key.
//!
//! A [`KeyTable`] maps each distinct key to its count and its first-seen
//! occurrence (raw form and [`Position`]). Keys live in one growing byte
//! arena and the hash index holds only 4-byte entry numbers, so a key costs
//! its own bytes plus a fixed 32-byte record and one index slot — no heap
//! allocation per key. Lookups compare full keys: a hash collision can never
//! merge two different URNs.
//!
//! Threads fill their own tables and [`KeyTable::merge`] combines them.
//! Counts add up and the earliest position wins, so the merged table is the
//! same whatever order threads finished in; [`KeyTable::sorted`] gives the
//! deterministic output order (by key bytes).

use std::hash::BuildHasher;

use foldhash::fast::FixedState;
use hashbrown::HashTable;

/// Where an occurrence is, in input order: inputs in the order given
/// (directory entries sorted by name), then byte offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Index of the input file in input order.
    pub file: u32,
    /// Where in that file: the byte offset of the URN for `scan`, the
    /// 1-based line number for `dedup` (see [`crate::lines`]).
    pub offset: u64,
}

#[derive(Clone, Copy, Debug)]
struct Record {
    /// Start of the key in the arena; the raw form follows it when it
    /// differs from the key.
    start: u64,
    key_len: u16,
    /// Length of the raw form; 0 when it equals the key.
    raw_len: u16,
    file: u32,
    offset: u64,
    count: u64,
}

/// Distinct keys with counts and first occurrences.
#[derive(Clone, Default)]
pub struct KeyTable {
    arena: Vec<u8>,
    records: Vec<Record>,
    index: HashTable<u32>,
    hasher: FixedState,
}

/// One distinct key, as [`KeyTable::iter`] and [`KeyTable::sorted`] show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'t> {
    /// The equivalence key.
    pub key: &'t [u8],
    /// The first-seen raw form.
    pub raw: &'t [u8],
    /// How many occurrences.
    pub count: u64,
    /// Where the first-seen form is.
    pub first: Position,
}

impl KeyTable {
    /// An empty table.
    pub fn new() -> KeyTable {
        KeyTable::default()
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.records.len()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// Bytes held by the arena, the records and the index.
    pub fn heap_bytes(&self) -> usize {
        self.arena.capacity()
            + self.records.capacity() * std::mem::size_of::<Record>()
            + self.index.capacity() * (std::mem::size_of::<u32>() + 1)
    }

    /// Counts `count` occurrences of `key`, first seen as `raw` at `at`.
    /// Keys and raw forms are URNs, at most [`crate::MAX_URN_LEN`] bytes.
    pub fn insert(&mut self, key: &[u8], raw: &[u8], at: Position, count: u64) {
        let hash = self.hasher.hash_one(key);
        let KeyTable { arena, records, index, hasher } = self;
        let found = index.find(hash, |&i| key_of(arena, &records[i as usize]) == key);
        match found {
            Some(&i) => {
                let record = &mut records[i as usize];
                record.count += count;
                if (at.file, at.offset) < (record.file, record.offset) {
                    replace_raw(arena, record, raw, at);
                }
            }
            None => {
                let i = records.len() as u32;
                records.push(new_record(arena, key, raw, at, count));
                index.insert_unique(hash, i, |&j| hasher.hash_one(key_of(arena, &records[j as usize])));
            }
        }
    }

    /// Adds every key of `other` to `self`.
    pub fn merge(&mut self, other: &KeyTable) {
        if self.is_empty() && !other.is_empty() {
            *self = other.clone();
            return;
        }
        for e in other.iter() {
            self.insert(e.key, e.raw, e.first, e.count);
        }
    }

    /// Entries in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'_>> {
        self.records.iter().map(|r| entry(&self.arena, r))
    }

    /// Entries sorted by key bytes.
    pub fn sorted(&self) -> Vec<Entry<'_>> {
        let mut all: Vec<Entry> = self.iter().collect();
        all.sort_unstable_by(|a, b| a.key.cmp(b.key));
        all
    }

    /// Entries in first-seen order.
    pub fn in_first_seen_order(&self) -> Vec<Entry<'_>> {
        let mut all: Vec<Entry> = self.iter().collect();
        all.sort_unstable_by_key(|e| e.first);
        all
    }
}

fn key_of<'a>(arena: &'a [u8], r: &Record) -> &'a [u8] {
    &arena[r.start as usize..r.start as usize + r.key_len as usize]
}

fn entry<'a>(arena: &'a [u8], r: &Record) -> Entry<'a> {
    let key = key_of(arena, r);
    let raw = match r.raw_len {
        0 => key,
        n => {
            let s = r.start as usize + r.key_len as usize;
            &arena[s..s + n as usize]
        }
    };
    Entry { key, raw, count: r.count, first: Position { file: r.file, offset: r.offset } }
}

fn new_record(arena: &mut Vec<u8>, key: &[u8], raw: &[u8], at: Position, count: u64) -> Record {
    let start = arena.len() as u64;
    arena.extend_from_slice(key);
    let raw_len = if raw == key {
        0
    } else {
        arena.extend_from_slice(raw);
        raw.len() as u16
    };
    Record { start, key_len: key.len() as u16, raw_len, file: at.file, offset: at.offset, count }
}

/// An earlier occurrence was found (merging threads' tables): its raw form
/// becomes the first-seen one. The old bytes stay in the arena; this
/// happens at most once per key per merge.
fn replace_raw(arena: &mut Vec<u8>, record: &mut Record, raw: &[u8], at: Position) {
    let key = key_of(arena, record).to_vec();
    let fresh = new_record(arena, &key, raw, at, record.count);
    *record = fresh;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: u32, offset: u64) -> Position {
        Position { file, offset }
    }

    #[test]
    fn counts_and_first_seen() {
        let mut t = KeyTable::new();
        t.insert(b"urn:ab:x", b"URN:AB:x", at(0, 5), 1);
        t.insert(b"urn:ab:x", b"urn:ab:x", at(0, 9), 1);
        t.insert(b"urn:cd:y", b"urn:cd:y", at(0, 1), 1);
        assert_eq!(t.len(), 2);
        let sorted = t.sorted();
        assert_eq!(sorted[0].key, b"urn:ab:x");
        assert_eq!(sorted[0].raw, b"URN:AB:x");
        assert_eq!(sorted[0].count, 2);
        assert_eq!(sorted[1].raw, b"urn:cd:y");
        assert_eq!(t.in_first_seen_order()[0].key, b"urn:cd:y");
    }

    #[test]
    fn merge_is_order_independent() {
        let mut a = KeyTable::new();
        a.insert(b"urn:ab:x", b"urn:AB:x", at(1, 0), 3);
        let mut b = KeyTable::new();
        b.insert(b"urn:ab:x", b"Urn:ab:x", at(0, 7), 2);
        b.insert(b"urn:zz:q", b"urn:zz:q", at(0, 1), 1);
        let mut ab = a.clone();
        ab.merge(&b);
        let mut ba = b.clone();
        ba.merge(&a);
        assert_eq!(ab.sorted(), ba.sorted());
        assert_eq!(ab.sorted()[0].raw, b"Urn:ab:x");
        assert_eq!(ab.sorted()[0].count, 5);
    }

    #[test]
    fn distinct_keys_are_all_kept() {
        // Many keys, all distinct: the table must keep every one.
        let mut t = KeyTable::new();
        for i in 0..10_000u32 {
            let k = format!("urn:ab:{i}");
            t.insert(k.as_bytes(), k.as_bytes(), at(0, i as u64), 1);
        }
        assert_eq!(t.len(), 10_000);
        assert!(t.iter().all(|e| e.count == 1));
    }
}
