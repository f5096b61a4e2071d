//! Deduplication by equivalence key.
//!
//! A [`KeyTable`] maps each distinct key to its count and its first-seen
//! occurrence (raw form and [`Position`]). Keys live in a byte arena and
//! the hash index holds only 4-byte entry numbers, so a key costs its own
//! bytes plus a fixed 32-byte record and one index slot — no heap
//! allocation per key. Arena and records are kept in 64 KiB blocks that
//! are never moved: a growing table copies nothing, and its slack is one
//! block rather than the quarter of a doubling vector. Lookups compare full keys: a hash collision can never
//! merge two different URNs.
//!
//! Counts add up and the earliest position wins whatever order occurrences
//! arrive in, so a table's contents never depend on thread scheduling;
//! [`KeyTable::sorted`] gives the deterministic output order (by key bytes).
//!
//! ## Filling a table from many threads: [`ShardedTable`]
//!
//! One table per thread merged at the end would insert every distinct key
//! twice, and the merge runs on one thread. Instead the keys are split into
//! [`SHARDS`] disjoint shards by their hash, and insertion is two parallel
//! phases:
//!
//! 1. threads turn slices of URNs into [`KeyBatch`]es: the key is written
//!    (only when it differs from the URN's own bytes), hashed once, and a
//!    24-byte note is filed under its shard;
//! 2. [`ShardedTable::absorb`] runs one task per shard, each inserting the
//!    notes of its shard from every batch, in batch order, with the hash
//!    from phase 1.
//!
//! No key is inserted twice, nothing is merged, and no two threads touch the
//! same table. The shard is taken from hash bits that hashbrown uses for
//! neither the bucket (low bits) nor the tag byte (top seven), so a shard's
//! keys still spread over its whole index.

use std::borrow::Cow;
use std::hash::BuildHasher;

use rayon::prelude::*;

use crate::grammar::Grammar;

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
    arena: Blocks<u8>,
    records: Blocks<Record>,
    index: HashTable<u32>,
    hasher: FixedState,
}

/// A vector kept in blocks of [`BLOCK_BYTES`]: growing never moves what is
/// stored, so a growing table copies nothing and never holds an old and a
/// new buffer at once, and the slack is at most one block — where one
/// doubling `Vec` wastes a quarter of its size on average.
#[derive(Clone)]
struct Blocks<T> {
    blocks: Vec<Vec<T>>,
}

const BLOCK_BYTES: usize = 1 << 16;

impl<T: Copy> Default for Blocks<T> {
    fn default() -> Self {
        Blocks { blocks: Vec::new() }
    }
}

impl<T: Copy> Blocks<T> {
    /// Items per block (a power of two, so an index splits with shifts).
    const PER_BLOCK: usize = (BLOCK_BYTES / std::mem::size_of::<T>()).next_power_of_two();

    /// Appends `parts` one after the other, contiguously in one block
    /// (together at most a block), and returns the index of the first item.
    fn push_all(&mut self, parts: &[&[T]]) -> usize {
        let need: usize = parts.iter().map(|p| p.len()).sum();
        if self.blocks.last().is_none_or(|b| b.len() + need > Self::PER_BLOCK) {
            // The first block starts small and doubles, so that small tables
            // stay small; later ones are allocated whole.
            let cap = if self.blocks.is_empty() { need.max(Self::PER_BLOCK / 64) } else { Self::PER_BLOCK };
            self.blocks.push(Vec::with_capacity(cap));
        }
        let n = self.blocks.len() - 1;
        let block = &mut self.blocks[n];
        if block.capacity() < block.len() + need {
            let want = (block.capacity() * 2).max(block.len() + need).min(Self::PER_BLOCK);
            block.reserve_exact(want - block.len());
        }
        let start = n * Self::PER_BLOCK + block.len();
        for part in parts {
            block.extend_from_slice(part);
        }
        start
    }

    fn slice(&self, start: usize, len: usize) -> &[T] {
        let off = start % Self::PER_BLOCK;
        &self.blocks[start / Self::PER_BLOCK][off..off + len]
    }

    fn get(&self, i: usize) -> &T {
        &self.blocks[i / Self::PER_BLOCK][i % Self::PER_BLOCK]
    }

    fn get_mut(&mut self, i: usize) -> &mut T {
        &mut self.blocks[i / Self::PER_BLOCK][i % Self::PER_BLOCK]
    }

    /// Items in order (for records, where every block but the last is full).
    fn iter(&self) -> impl Iterator<Item = &T> {
        self.blocks.iter().flatten()
    }

    /// Items stored, for records (every block but the last is full).
    fn len(&self) -> usize {
        self.blocks.last().map_or(0, |b| (self.blocks.len() - 1) * Self::PER_BLOCK + b.len())
    }

    fn capacity_bytes(&self) -> usize {
        self.blocks.iter().map(|b| b.capacity() * std::mem::size_of::<T>()).sum::<usize>()
            + self.blocks.capacity() * std::mem::size_of::<Vec<T>>()
    }
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
        self.records.len() == 0
    }

    /// Bytes held by the arena, the records and the index.
    pub fn heap_bytes(&self) -> usize {
        self.arena.capacity_bytes()
            + self.records.capacity_bytes()
            + self.index.capacity() * (std::mem::size_of::<u32>() + 1)
    }

    /// Counts `count` occurrences of `key`, first seen as `raw` at `at`.
    /// Keys and raw forms are URNs, at most [`crate::MAX_URN_LEN`] bytes.
    pub fn insert(&mut self, key: &[u8], raw: &[u8], at: Position, count: u64) {
        self.insert_hashed(key_hash(key), key, raw, at, count);
    }

    /// [`KeyTable::insert`] with `hash` = [`key_hash`]`(key)` already
    /// computed.
    pub fn insert_hashed(&mut self, hash: u64, key: &[u8], raw: &[u8], at: Position, count: u64) {
        self.insert_if(hash, key, raw, at, count, || true);
    }

    /// [`KeyTable::insert_hashed`], except that a new key, or a new
    /// first-seen form, is stored only if `accept()` agrees. Bytes that
    /// come from a shared file mapping can change under us (a concurrent
    /// writer); `accept` checks them again before anything is kept, once
    /// per distinct key rather than once per occurrence.
    pub fn insert_if(
        &mut self,
        hash: u64,
        key: &[u8],
        raw: &[u8],
        at: Position,
        count: u64,
        accept: impl FnOnce() -> bool,
    ) {
        let KeyTable { arena, records, index, hasher } = self;
        let found = index.find(hash, |&i| key_of(arena, records.get(i as usize)) == key);
        match found {
            Some(&i) => {
                let record = records.get_mut(i as usize);
                record.count += count;
                if (at.file, at.offset) < (record.file, record.offset) && accept() {
                    replace_raw(arena, record, raw, at);
                }
            }
            None if accept() => {
                let record = new_record(arena, key, raw, at, count);
                let i = records.push_all(&[&[record]]) as u32;
                index.insert_unique(hash, i, |&j| hasher.hash_one(key_of(arena, records.get(j as usize))));
            }
            None => {}
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

/// The hash every [`KeyTable`] uses for `key` (fixed seed: the same in
/// every table and thread).
pub fn key_hash(key: &[u8]) -> u64 {
    FixedState::default().hash_one(key)
}

/// Number of shards of a [`ShardedTable`]: enough that two threads rarely
/// wait for the same shard, few enough that per-shard overhead is small.
pub const SHARDS: usize = 64;

fn shard_of(hash: u64) -> usize {
    // Bits 51..57: below hashbrown's 7-bit tag, far above any bucket index.
    (hash >> 51) as usize % SHARDS
}

/// Distinct keys split into [`SHARDS`] tables by hash, filled in parallel
/// from [`KeyBatch`]es (see the module documentation).
#[derive(Clone)]
pub struct ShardedTable {
    shards: Vec<KeyTable>,
}

impl Default for ShardedTable {
    fn default() -> Self {
        ShardedTable { shards: (0..SHARDS).map(|_| KeyTable::new()).collect() }
    }
}

impl ShardedTable {
    /// An empty table.
    pub fn new() -> ShardedTable {
        ShardedTable::default()
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.shards.iter().map(KeyTable::len).sum()
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.shards.iter().all(KeyTable::is_empty)
    }

    /// Bytes held by the shards' arenas, records and indexes.
    pub fn heap_bytes(&self) -> usize {
        self.shards.iter().map(KeyTable::heap_bytes).sum()
    }

    /// Inserts every URN of `batches`, each with the buffer its offsets
    /// refer to. One task per shard; each shard takes its notes batch by
    /// batch in the order given.
    pub fn absorb(&mut self, batches: &[(&KeyBatch, &[u8])]) {
        if batches.iter().all(|(b, _)| b.is_empty()) {
            return;
        }
        self.shards.par_iter_mut().enumerate().for_each(|(s, shard)| {
            for (batch, hay) in batches {
                batch.insert_shard(s, hay, shard);
            }
        });
    }

    /// Counts `count` occurrences of `key`, first seen as `raw` at `at`,
    /// one at a time (for bulk insertion use [`KeyBatch`]es).
    pub fn insert(&mut self, key: &[u8], raw: &[u8], at: Position, count: u64) {
        let hash = key_hash(key);
        self.shards[shard_of(hash)].insert_hashed(hash, key, raw, at, count);
    }

    /// Entries, shard by shard, each shard in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'_>> {
        self.shards.iter().flat_map(KeyTable::iter)
    }

    /// Entries sorted by key bytes (sorted in parallel).
    pub fn sorted(&self) -> Vec<Entry<'_>> {
        // Every key starts with "urn:": the 16 bytes after it, as one
        // integer, decide most comparisons without a call to memcmp.
        let mut all: Vec<(u128, Entry)> = Vec::with_capacity(self.len());
        all.extend(self.iter().map(|e| (sort_prefix(e.key), e)));
        all.par_sort_unstable_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.key.cmp(b.1.key)));
        all.into_iter().map(|(_, e)| e).collect()
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

/// URNs of one buffer on their way into a [`ShardedTable`]: for each URN,
/// its key's hash and where its raw form and key are, filed by shard.
#[derive(Clone)]
pub struct KeyBatch {
    file: u32,
    base: u64,
    recheck: Option<Grammar>,
    notes: Vec<Vec<Note>>,
    /// Keys that differ from the start of their URN's raw form.
    keys: Vec<u8>,
}

#[derive(Clone, Copy)]
struct Note {
    hash: u64,
    /// Offset of the raw form in the buffer.
    offset: u64,
    /// Where the key is in `keys`, or [`BORROWED`]: the key is the first
    /// `key_len` bytes of the raw form.
    key_at: u32,
    raw_len: u16,
    key_len: u16,
}

const BORROWED: u32 = u32::MAX;

impl KeyBatch {
    /// An empty batch of URNs from input `file`, whose buffer starts at
    /// byte `base` of that input. With `recheck`, the buffer may change
    /// while it is read (a shared file mapping): a URN becomes a new key or
    /// first-seen form only if its bytes still give the same key and hash
    /// under that grammar ([`KeyTable::insert_if`]).
    pub fn new(file: u32, base: u64, recheck: Option<Grammar>) -> KeyBatch {
        KeyBatch { file, base, recheck, notes: vec![Vec::new(); SHARDS], keys: Vec::new() }
    }

    /// Empties the batch for `urns` URNs of another buffer (as
    /// [`KeyBatch::new`]), keeping its memory.
    pub fn reset(&mut self, file: u32, base: u64, recheck: Option<Grammar>, urns: usize) {
        self.file = file;
        self.base = base;
        self.recheck = recheck;
        self.keys.clear();
        // Hashes spread evenly; a quarter more than the mean absorbs the
        // spread, and a rare overflow just grows that one vector.
        let per_shard = urns / SHARDS + urns / SHARDS / 4 + 4;
        for notes in &mut self.notes {
            notes.clear();
            notes.reserve(per_shard);
        }
    }

    /// Whether no URN was added.
    pub fn is_empty(&self) -> bool {
        self.notes.iter().all(Vec::is_empty)
    }

    /// Adds the URN `raw`, found at `offset` of the buffer, whose key is
    /// `key`. Both are URNs, at most [`crate::MAX_URN_LEN`] bytes. A
    /// borrowed key is the start of `raw` (as [`crate::Urn::key`] borrows
    /// it) and is not copied; an owned one is.
    pub fn push(&mut self, offset: usize, raw: &[u8], key: Cow<'_, [u8]>) {
        let hash = key_hash(&key);
        let key_at = match &key {
            Cow::Borrowed(k) => {
                debug_assert!(raw.starts_with(k));
                BORROWED
            }
            Cow::Owned(k) => {
                let at = self.keys.len() as u32;
                self.keys.extend_from_slice(k);
                at
            }
        };
        let note = Note { hash, offset: offset as u64, key_at, raw_len: raw.len() as u16, key_len: key.len() as u16 };
        self.notes[shard_of(hash)].push(note);
    }

    fn insert_shard(&self, s: usize, hay: &[u8], shard: &mut KeyTable) {
        for n in &self.notes[s] {
            let start = n.offset as usize;
            let Some(raw) = hay.get(start..start + n.raw_len as usize) else { continue };
            let key = match n.key_at {
                BORROWED => &raw[..n.key_len as usize],
                at => &self.keys[at as usize..at as usize + n.key_len as usize],
            };
            let at = Position { file: self.file, offset: self.base + n.offset };
            match self.recheck {
                None => shard.insert_hashed(n.hash, key, raw, at, 1),
                Some(g) => shard.insert_if(n.hash, key, raw, at, 1, || still_consistent(raw, key, n.hash, g)),
            }
        }
    }
}

/// Whether `raw` still reads as it did when its key and hash were made:
/// printable ASCII (a truncated mapping reads as zeros), the same key, the
/// same hash. A full parse would also catch a change in the microseconds
/// between validation and phase 1 (in the same task), but costs as much as
/// the validation itself; such a file is reported as changed anyway.
fn still_consistent(raw: &[u8], key: &[u8], hash: u64, grammar: Grammar) -> bool {
    raw.iter().all(u8::is_ascii_graphic)
        && crate::key::key_of_valid(raw, grammar).is_some_and(|k| *k == *key)
        && key_hash(key) == hash
}

fn key_of<'a>(arena: &'a Blocks<u8>, r: &Record) -> &'a [u8] {
    arena.slice(r.start as usize, r.key_len as usize)
}

fn entry<'a>(arena: &'a Blocks<u8>, r: &Record) -> Entry<'a> {
    let key = key_of(arena, r);
    let raw = match r.raw_len {
        0 => key,
        n => arena.slice(r.start as usize + r.key_len as usize, n as usize),
    };
    Entry { key, raw, count: r.count, first: Position { file: r.file, offset: r.offset } }
}

fn new_record(arena: &mut Blocks<u8>, key: &[u8], raw: &[u8], at: Position, count: u64) -> Record {
    let (start, raw_len) =
        if raw == key { (arena.push_all(&[key]), 0) } else { (arena.push_all(&[key, raw]), raw.len() as u16) };
    Record { start: start as u64, key_len: key.len() as u16, raw_len, file: at.file, offset: at.offset, count }
}

/// An earlier occurrence was found (merging threads' tables): its raw form
/// becomes the first-seen one. The old bytes stay in the arena; this
/// happens at most once per key per merge.
fn replace_raw(arena: &mut Blocks<u8>, record: &mut Record, raw: &[u8], at: Position) {
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

    /// key, (count, first offset, first raw form)
    type Class = (Vec<u8>, (u64, u64, Vec<u8>));

    /// The reference: every occurrence in input order into a BTreeMap of
    /// key -> (count, first position, first raw form).
    fn reference(urns: &[(u64, String)]) -> std::collections::BTreeMap<Vec<u8>, (u64, u64, Vec<u8>)> {
        let mut map = std::collections::BTreeMap::new();
        for (offset, raw) in urns {
            let key = crate::parse(raw.as_bytes(), Grammar::Rfc8141).unwrap().key().as_bytes().to_vec();
            let slot = map.entry(key).or_insert((0, *offset, raw.as_bytes().to_vec()));
            slot.0 += 1;
        }
        map
    }

    proptest::proptest! {
        /// Batches of any size, absorbed one group at a time, give the
        /// reference's classes: counts, first positions, first forms.
        #[test]
        fn sharded_table_equals_the_reference(
            picks in proptest::collection::vec((0usize..40, 0usize..4), 0..300),
            slice in 1usize..50,
            group in 1usize..4,
        ) {
            // Forty keys in four spellings each: case of scheme and NID, hex case, components.
            let spell = |k: usize, v: usize| match v {
                0 => format!("urn:n{}:a%2f{k}", k % 3),
                1 => format!("URN:N{}:a%2F{k}", k % 3),
                2 => format!("urn:n{}:a%2F{k}?+r", k % 3),
                _ => format!("Urn:n{}:a%2f{k}#f", k % 3),
            };
            let mut hay = Vec::new();
            let mut urns = Vec::new();
            for &(k, v) in &picks {
                let raw = spell(k, v);
                urns.push((hay.len() as u64, raw.clone()));
                hay.extend_from_slice(raw.as_bytes());
                hay.push(b' ');
            }
            let mut table = ShardedTable::new();
            let batches: Vec<KeyBatch> = urns
                .chunks(slice)
                .map(|chunk| {
                    let mut b = KeyBatch::new(0, 0, Some(Grammar::Rfc8141));
                    for (offset, raw) in chunk {
                        let urn = crate::parse(raw.as_bytes(), Grammar::Rfc8141).unwrap();
                        let key: Cow<[u8]> = match urn.key() {
                            Cow::Borrowed(k) => Cow::Borrowed(k.as_bytes()),
                            Cow::Owned(k) => Cow::Owned(k.into_bytes()),
                        };
                        b.push(*offset as usize, raw.as_bytes(), key);
                    }
                    b
                })
                .collect();
            for g in batches.chunks(group) {
                let refs: Vec<(&KeyBatch, &[u8])> = g.iter().map(|b| (b, &hay[..])).collect();
                table.absorb(&refs);
            }
            let got: Vec<Class> =
                table.sorted().iter().map(|e| (e.key.to_vec(), (e.count, e.first.offset, e.raw.to_vec()))).collect();
            let want: Vec<Class> = reference(&urns).into_iter().collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    proptest::proptest! {
        /// The prefix shortcut orders keys exactly as their bytes do.
        #[test]
        fn sorted_is_byte_order(keys in proptest::collection::btree_set("urn:[a-c]{1,3}:[a-c%0-9]{0,24}", 0..60)) {
            let mut table = ShardedTable::new();
            for (i, k) in keys.iter().enumerate() {
                table.insert(k.as_bytes(), k.as_bytes(), at(0, i as u64), 1);
            }
            let got: Vec<&[u8]> = table.sorted().iter().map(|e| e.key).collect();
            let want: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn changed_bytes_never_become_keys() {
        // The batch saw "urn:ab:c"; by the time it is inserted the bytes read
        // "urn:ab:\0" (a concurrent writer). Nothing is kept.
        let mut b = KeyBatch::new(0, 0, Some(Grammar::Rfc8141));
        b.push(0, b"urn:ab:c", Cow::Borrowed(b"urn:ab:c"));
        let mut table = ShardedTable::new();
        table.absorb(&[(&b, &b"urn:ab:\0"[..])]);
        assert!(table.is_empty());
        // Without the recheck (bytes that cannot change), the batch is trusted.
        let mut b = KeyBatch::new(0, 0, None);
        b.push(0, b"urn:ab:c", Cow::Borrowed(b"urn:ab:c"));
        table.absorb(&[(&b, &b"urn:ab:c"[..])]);
        assert_eq!(table.len(), 1);
    }
}
