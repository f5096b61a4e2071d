//! [`KeyTable`]: distinct keys, their counts and first occurrences, in one
//! byte arena with an open-addressing index.
//!
//! # Two memory reads per lookup, both prefetchable
//!
//! A table with millions of keys is far larger than the caches, so what an
//! insert costs is the number of cache lines it waits for. Here it is two,
//! and both can be asked for ahead of time:
//!
//! - the **index**, a `Vec<u64>` with linear probing: a slot holds 24 bits
//!   of the key's hash (the *tag*) and the 40-bit arena offset of its entry,
//!   so a probe rejects other keys without leaving the index;
//! - the **entry** in the arena ([`super::entry`]): count, the key's
//!   length, the key, the first position and the first-seen form as a
//!   delta. Count and key share a cache line for most URNs, so the key
//!   compare and the count update touch the same memory, and a lookup
//!   decodes one varint before the key (the position after it is read
//!   only for an occurrence that may be earlier, see `KeyTable::newest`).
//!
//! [`KeyTable::insert_batch`] takes occurrences whose hashes are known and
//! prefetches the index slot 16 occurrences ahead and the entry 8 ahead (the
//! entry of the first slot with the key's tag on the home slot's cache
//! line, as far as a lookup of that key reads it), so the waits overlap
//! instead of adding up.
//!
//! # Memory
//!
//! A key costs its bytes, a header of about 7 bytes, its first-seen form's
//! delta (empty when that form is the key), and 8 bytes per index slot at a
//! load of 3/8 to 3/4 (7/16 to 7/8 from 2^16 slots on, where the index is
//! most of what a key costs beyond its bytes). Nothing is allocated per
//! key: the arena grows in 64 KiB blocks that never move, so growing copies
//! nothing and the slack is one block.
//!
//! # Growing without reading the keys
//!
//! An index of up to 2^18 slots (`TAG_HOME_SLOTS`) takes a key's home slot
//! from the low bits of its tag, so a slot alone says where it goes in an
//! index twice the size: doubling reads the old index in order and touches
//! neither the arena nor the hash function. (Rebuilding from the arena
//! decoded and hashed every key at every doubling; on 256 MiB of dense
//! text, whose 64 shards each double about ten times, indexes sized never
//! to grow made `scan --unique --stats` at one thread 10 % faster.) The tag
//! still tells keys apart in a probe: keys with different homes differ in
//! those bits, and keys with the same home in the other 24 − log2(slots) of
//! them. A larger index takes the home from the hash's low bits, below the
//! tag, so that the whole tag filters, and is rebuilt from the arena as
//! before (as is an index given up by [`KeyTable::take_index`]).

use std::collections::HashMap;

use foldhash::fast::FixedState;

use super::entry::{
    self, Count, Entry, Header, KeyHead, Position, Raw, COUNT_MAX, DEAD_BYTE, MAX_HEADER, MAX_KEY_HEAD,
};
use super::first_seen::SAMPLE_STEP;
use super::key_hash;
use crate::platform::prefetch::prefetch;

/// Distinct keys with counts and first occurrences.
///
/// `Debug` shows the size, not the keys (there may be millions).
#[derive(Clone, Default)]
pub struct KeyTable {
    arena: Arena,
    /// Power-of-two length (or empty); see [`Slot`].
    index: Vec<u64>,
    len: usize,
    /// The part of a count that does not fit the entry's one-byte field,
    /// by entry offset: the field is emptied into it each time it would
    /// overflow, so a key seen millions of times costs a map update per
    /// 255 occurrences.
    overflow: HashMap<u64, u64, FixedState>,
    /// The delta of the entry being written.
    delta: Vec<u8>,
    /// The key and raw form about to be stored, copied once (see
    /// [`KeyTable::insert_if`]).
    copy: Vec<u8>,
    /// The latest first position stored: no entry's is later. An
    /// occurrence at or after it cannot be an earlier one of a stored key,
    /// so a lookup for it reads the key and the count, not the position
    /// stored after the key. Callers feed occurrences in input order, so
    /// that is nearly every lookup.
    newest: Position,
    /// The arena offset of every [`SAMPLE_STEP`]-th entry written: what a
    /// first-seen merge needs of a table ([`KeyTable::first_samples`]),
    /// noted as the entries are written so that output need not walk the
    /// arena for it (8 bytes per 32 keys; with the positions too it was 24,
    /// and the peak memory of `urnscan dedup` on 3 M keys grew by 3 MiB).
    samples: Vec<u64>,
    /// Entries written, dead ones included.
    written: usize,
    /// Some entry was written with a first position before an earlier
    /// entry's: the samples no longer tell where positions are.
    out_of_order: bool,
}

/// Index slots: 0 is empty, otherwise the tag in the top 24 bits and the
/// entry's arena offset plus one in the low 40.
struct Slot;

impl Slot {
    const OFFSET_BITS: u32 = 40;
    const OFFSET_MASK: u64 = (1 << Self::OFFSET_BITS) - 1;

    fn pack(hash: u64, offset: u64) -> u64 {
        assert!(offset < Self::OFFSET_MASK, "key table arena over 1 TiB");
        Self::tag(hash) | (offset + 1)
    }

    /// Bits 24..48 of the hash, in the slot's top bits.
    fn tag(hash: u64) -> u64 {
        (hash >> 24) << Self::OFFSET_BITS
    }

    fn offset(slot: u64) -> u64 {
        (slot & Self::OFFSET_MASK) - 1
    }

    fn matches(slot: u64, hash: u64) -> bool {
        slot & !Self::OFFSET_MASK == Self::tag(hash)
    }

    /// The home of `hash` in an index of `slots` slots (a power of two).
    fn home(hash: u64, slots: usize) -> usize {
        let bits = if slots <= TAG_HOME_SLOTS { hash >> (64 - Self::OFFSET_BITS) } else { hash };
        bits as usize & (slots - 1)
    }

    /// The home of the key in `slot` in an index of `slots` slots, up to
    /// [`TAG_HOME_SLOTS`]: the same as [`Slot::home`] of its hash.
    fn home_of_slot(slot: u64, slots: usize) -> usize {
        debug_assert!(slots <= TAG_HOME_SLOTS);
        (slot >> Self::OFFSET_BITS) as usize & (slots - 1)
    }
}

/// The largest index whose homes come from the tag (see the module docs):
/// 2^18 slots, about 200,000 keys, leaving 6 bits of the tag to tell apart
/// keys with the same home.
const TAG_HOME_SLOTS: usize = 1 << 18;
const _: () = assert!(TAG_HOME_SLOTS.trailing_zeros() < 64 - Slot::OFFSET_BITS);

/// Smallest index; it doubles when fuller than [`too_full`] allows.
const MIN_SLOTS: usize = 16;

/// From this many slots (512 KiB of index) on, an index may be 7/8 full
/// before it doubles; smaller ones 3/4. Tables split into 64 shards all
/// double at about the same count, so at 3/4 a run's index went from 32 to
/// 64 MiB at 3.15 M keys: `urnscan dedup -q -j2` of 10 M lines with 3.3 M
/// keys (103 MiB of them) peaked at up to 241 MiB, over the 1.5 times the
/// keys' bytes plus 64 MiB (218 MiB) that the performance goals set, and at
/// 206 MiB with 7/8 (`scan --unique`: 244 and 211), in the same time (1,012
/// and 1,008 ms, 7 interleaved rounds; at one thread 1,941 and 1,935). A
/// lookup there waits for memory anyway; a longer probe mostly reads on
/// along a line already fetched. Smaller tables keep 3/4: at 7/8 the 256
/// MiB of dense text's 14,000 keys per shard would stay at 2^14 slots.
const DENSE_SLOTS: usize = 1 << 16;

/// Whether an index of `slots` slots is too full for `len` entries.
fn too_full(len: usize, slots: usize) -> bool {
    let (num, den) = if slots >= DENSE_SLOTS { (7, 8) } else { (3, 4) };
    len * den > slots * num
}

/// Bytes kept in blocks of [`BLOCK_BYTES`] that never move: a growing
/// table copies nothing and never holds an old and a new buffer at once,
/// and the slack is at most one block (one doubling `Vec` wastes a quarter
/// of its size on average). Offsets are `block * BLOCK_BYTES + position`;
/// an entry never straddles two blocks.
#[derive(Clone, Default)]
struct Arena {
    blocks: Vec<Vec<u8>>,
}

const BLOCK_BYTES: usize = 1 << 16;

// The longest entry (a key and a raw form stored whole, each MAX_URN_LEN
// bytes) fits a block.
const _: () = assert!(MAX_HEADER + 2 * crate::MAX_URN_LEN + 8 <= BLOCK_BYTES);

impl Arena {
    /// The block to append an entry of at most `need` bytes to, with room
    /// for it, and the offset the entry will have. Entries are written in
    /// place, not built elsewhere and copied: that copy was 6 % of the
    /// instructions of writing a new key (callgrind).
    fn room(&mut self, need: usize) -> (u64, &mut Vec<u8>) {
        if self.blocks.last().is_none_or(|b| b.len() + need > BLOCK_BYTES) {
            // The first block starts small and doubles, so that small tables
            // stay small; later ones are allocated whole.
            let cap = if self.blocks.is_empty() { need.max(BLOCK_BYTES / 64) } else { BLOCK_BYTES };
            self.blocks.push(Vec::with_capacity(cap));
        }
        let n = self.blocks.len() - 1;
        let block = &mut self.blocks[n];
        if block.capacity() < block.len() + need {
            let want = (block.capacity() * 2).max(block.len() + need).min(BLOCK_BYTES);
            block.reserve_exact(want - block.len());
        }
        let start = (n * BLOCK_BYTES + block.len()) as u64;
        (start, block)
    }

    /// The bytes from `start` to the end of its block: the entry there and
    /// the ones after it.
    fn tail(&self, start: u64) -> &[u8] {
        let (block, at) = Self::split(start);
        &self.blocks[block][at..]
    }

    fn tail_mut(&mut self, start: u64) -> &mut [u8] {
        let (block, at) = Self::split(start);
        &mut self.blocks[block][at..]
    }

    fn split(start: u64) -> (usize, usize) {
        let start = start as usize;
        (start / BLOCK_BYTES, start % BLOCK_BYTES)
    }

    /// Every entry, dead ones included, in the order written: its offset,
    /// header and bytes.
    fn entries(&self) -> impl Iterator<Item = (u64, Header, &[u8])> + '_ {
        self.entries_from(0)
    }

    /// [`Arena::entries`] from the entry at `start` on.
    fn entries_from(&self, start: u64) -> ArenaWalk<'_> {
        let (block, at) = Self::split(start);
        ArenaWalk { blocks: &self.blocks, block, at }
    }

    fn capacity_bytes(&self) -> usize {
        self.blocks.iter().map(Vec::capacity).sum::<usize>() + self.blocks.capacity() * std::mem::size_of::<Vec<u8>>()
    }
}

/// An in-order walk of an arena's entries ([`Arena::entries_from`]). A
/// loop of its own rather than a `flat_map` over the blocks: every output
/// of `urnscan dedup` and `scan --unique` walks each table once or twice,
/// and the flattening adapter cost more than decoding the headers.
struct ArenaWalk<'a> {
    blocks: &'a [Vec<u8>],
    block: usize,
    at: usize,
}

impl<'a> Iterator for ArenaWalk<'a> {
    type Item = (u64, Header, &'a [u8]);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let bytes = self.blocks.get(self.block)?.get(self.at..).unwrap_or_default();
            if bytes.is_empty() {
                (self.block, self.at) = (self.block + 1, 0);
                continue;
            }
            if let Some(ahead) = bytes.get(WALK_AHEAD) {
                prefetch(ahead);
            }
            let header = Header::decode(bytes);
            let offset = (self.block * BLOCK_BYTES + self.at) as u64;
            self.at += header.size();
            return Some((offset, header, &bytes[..header.size()]));
        }
    }
}

/// How far ahead of the entry it reads an in-order walk of the arena
/// ([`Arena::entries_from`]) prefetches, in bytes: four cache lines, a few
/// entries. One walk alone is a stream the hardware prefetcher follows, but
/// the first-seen output of `urnscan dedup` merges the walks of 64 tables,
/// each a step at a time, more streams than it tracks: there every entry
/// was a cache miss (the header's first read, 5.5 % of `dedup -q -j1` on
/// the 10 M line dataset).
const WALK_AHEAD: usize = 256;

/// One occurrence for [`KeyTable::insert_batch`], with its key's
/// [`key_hash`].
#[derive(Clone, Copy, Debug)]
pub struct Occurrence<'a> {
    /// [`key_hash`]`(key)`.
    pub hash: u64,
    /// The equivalence key.
    pub key: &'a [u8],
    /// The raw form.
    pub raw: &'a [u8],
    /// Where it is.
    pub at: Position,
}

/// How far ahead [`KeyTable::insert_batch`] prefetches index slots and
/// entries: far enough to cover a memory access at tens of nanoseconds
/// per insert, near enough that the lines are still cached when used.
const SLOT_AHEAD: usize = 16;
const ENTRY_AHEAD: usize = 8;

impl std::fmt::Debug for KeyTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyTable")
            .field("len", &self.len)
            .field("heap_bytes", &self.heap_bytes())
            .finish_non_exhaustive()
    }
}

impl KeyTable {
    /// An empty table.
    pub fn new() -> KeyTable {
        KeyTable::default()
    }

    /// Number of distinct keys.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held by the arena and the index.
    pub fn heap_bytes(&self) -> usize {
        self.arena.capacity_bytes()
            + self.index.capacity() * std::mem::size_of::<u64>()
            + self.overflow.capacity() * 2 * std::mem::size_of::<u64>()
            + self.samples.capacity() * std::mem::size_of::<u64>()
    }

    /// Takes the index out (8 bytes per slot, at least 4/3 slots per
    /// entry, about a fifth of the table) when no more keys are going in:
    /// iterating and sorting read only the arena, so its buffer can hold
    /// the output's list of entries ([`super::SortedEntries::reusing_indexes`]).
    /// The next insert rebuilds the index from the arena.
    pub fn take_index(&mut self) -> Vec<u64> {
        std::mem::take(&mut self.index)
    }

    /// Counts `count` occurrences of `key`, first seen as `raw` at `at`.
    /// Keys and raw forms are URNs, at most [`crate::MAX_URN_LEN`] bytes:
    /// the key as [`Urn::write_key`](crate::Urn::write_key) writes it, the
    /// raw form the URN's text. Neither is checked (this is the hot path
    /// of every deduplication): other bytes are stored and counted all the
    /// same, and what is read back from them ([`Entry::nid`](super::Entry::nid)
    /// takes the bytes between the first two colons) means nothing.
    /// A key's count saturates at `u64::MAX`: counts added to it (given
    /// here, or by [`KeyTable::merge`]) stop there rather than overflow.
    pub fn insert(&mut self, key: &[u8], raw: &[u8], at: Position, count: u64) {
        self.insert_hashed(key_hash(key), key, raw, at, count);
    }

    /// [`KeyTable::insert`] with `hash` = [`key_hash`]`(key)` already
    /// computed.
    pub fn insert_hashed(&mut self, hash: u64, key: &[u8], raw: &[u8], at: Position, count: u64) {
        self.insert_if(hash, key, raw, at, count, |_, _| true);
    }

    /// [`KeyTable::insert_hashed`], except that a new key, or a new
    /// first-seen form, is stored only if `accept(key, raw)` agrees. Bytes
    /// that come from a shared file mapping can change under us (a
    /// concurrent writer); `accept` checks them again before anything is
    /// kept, once per distinct key rather than once per occurrence.
    ///
    /// What is stored is read from `key` and `raw` once: `accept` is handed
    /// a copy, and that copy is what the entry is written from. Encoding
    /// reads the raw form several times (comparing it with the key, then
    /// listing the letters whose case differs), and two reads of a changing
    /// mapping need not agree: an entry written from them could hold a
    /// delta that does not fit its key, and printing it would then index
    /// past the key (a panic), not only print a wrong form.
    pub fn insert_if(
        &mut self,
        hash: u64,
        key: &[u8],
        raw: &[u8],
        at: Position,
        count: u64,
        accept: impl FnOnce(&[u8], &[u8]) -> bool,
    ) {
        if too_full(self.len + 1, self.index.len()) {
            self.grow();
        }
        match self.find(hash, key) {
            Ok((slot, head)) => {
                let offset = Slot::offset(self.index[slot]);
                self.add_count(offset, head.count, count);
                if at < self.newest && at < head.rest(self.arena.tail(offset)).first {
                    self.with_copy(key, raw, |table, key, raw| {
                        if accept(key, raw) {
                            table.replace(slot, raw, at);
                        }
                    });
                }
            }
            Err(slot) => self.with_copy(key, raw, |table, key, raw| {
                if accept(key, raw) {
                    let offset = table.push_entry(key, raw, at, count);
                    table.index[slot] = Slot::pack(hash, offset);
                    table.len += 1;
                }
            }),
        }
    }

    /// Calls `f` with the table and a copy of `key` and `raw`, made in the
    /// table's copy buffer (kept for the next call). A key that is the
    /// start of the raw form's own bytes (the usual case) is copied with
    /// them, once.
    fn with_copy(&mut self, key: &[u8], raw: &[u8], f: impl FnOnce(&mut KeyTable, &[u8], &[u8])) {
        let mut copy = std::mem::take(&mut self.copy);
        copy.clear();
        let raw_at = if raw.as_ptr() == key.as_ptr() && key.len() <= raw.len() {
            0
        } else {
            copy.extend_from_slice(key);
            key.len()
        };
        copy.extend_from_slice(raw);
        f(self, &copy[..key.len()], &copy[raw_at..]);
        self.copy = copy;
    }

    /// Inserts one occurrence per item (`view` turns an item into its
    /// [`Occurrence`], or `None` to skip it), in order, as
    /// [`KeyTable::insert_if`] with a count of 1 and `accept(item, key,
    /// raw)`.
    /// Same result as one call per item, but the memory the next items will
    /// need is prefetched while the current one is inserted.
    pub fn insert_batch<'a, T>(
        &mut self,
        items: &[T],
        view: impl Fn(&T) -> Option<Occurrence<'a>>,
        accept: impl Fn(&T, &[u8], &[u8]) -> bool,
    ) {
        self.insert_batch_hashed(items, |item| view(item).map(|o| (o.hash, o.key.len())), &view, accept);
    }

    /// [`KeyTable::insert_batch`] for items that know their hash and key
    /// length without being viewed (`ahead_of`; `view` must give the same
    /// ones). The entry prefetch, 8 items ahead, needs only those two, and
    /// making the whole view there, for nothing else, was a third of the
    /// views: `urnscan dedup`'s records view as two checked slices of their
    /// chunk, and on 1 M lines (`dedup -q -j1`, callgrind) taking the hash
    /// from the record cut 1,131.9 M instructions to 1,115.1 M. A wrong
    /// `ahead_of` could only prefetch the wrong memory: what is inserted
    /// comes from `view`.
    pub(crate) fn insert_batch_hashed<'a, T>(
        &mut self,
        items: &[T],
        ahead_of: impl Fn(&T) -> Option<(u64, usize)>,
        view: impl Fn(&T) -> Option<Occurrence<'a>>,
        accept: impl Fn(&T, &[u8], &[u8]) -> bool,
    ) {
        for (i, item) in items.iter().enumerate() {
            if let Some(ahead) = items.get(i + SLOT_AHEAD).and_then(&view) {
                self.prefetch_slot(ahead.hash);
                prefetch_ends(ahead.raw);
                // Most keys are the start of their raw form: asking for
                // the same lines again only took room among the misses in
                // flight (`urnscan dedup -q` on 10 M lines, 9 and 11
                // interleaved rounds: 1.3-2.8 % faster at one thread,
                // 2.2-3.6 % at two, for 3 M more instructions on 1 M
                // lines). Skipping the last line when it is the first's
                // cost more in mispredicted branches than it saved.
                if !ahead.raw.as_ptr_range().contains(&ahead.key.as_ptr()) {
                    prefetch_ends(ahead.key);
                }
            }
            if let Some((hash, key_len)) = items.get(i + ENTRY_AHEAD).and_then(&ahead_of) {
                self.prefetch_entry(hash, key_len);
            }
            if let Some(o) = view(item) {
                self.insert_if(o.hash, o.key, o.raw, o.at, 1, |key, raw| accept(item, key, raw));
            }
        }
    }

    fn home(&self, hash: u64) -> Option<&u64> {
        if self.index.is_empty() {
            return None;
        }
        self.index.get(Slot::home(hash, self.index.len()))
    }

    fn prefetch_slot(&self, hash: u64) {
        if let Some(slot) = self.home(hash) {
            prefetch(slot);
        }
    }

    /// Prefetches the entry of the first slot whose tag matches, probing
    /// from the key's home to the end of its cache line (the line was
    /// prefetched earlier; the next one was not, and reading it here would
    /// wait for memory). At a load of up to 3/4 (or 7/8) a key often sits a
    /// few slots past its home; looking at the home slot alone left each of
    /// those lookups waiting for its entry in `find`.
    ///
    /// Of the entry, only what a lookup of a `key_len`-byte key reads: the
    /// count, the key's length and the key, if it is this key. A fixed
    /// 64 bytes asked for a second cache line for nearly every entry (an
    /// entry starts anywhere in a line), where a 37-byte key needs one in
    /// about 60 % of them: fewer lines in flight, `urnscan dedup -q` on
    /// 10 M lines 1.5-1.7 % faster at one thread (two runs of 11
    /// interleaved rounds; at two threads -2.2 and +0.3 %).
    fn prefetch_entry(&self, hash: u64, key_len: usize) {
        if self.index.is_empty() {
            return;
        }
        let mask = self.index.len() - 1;
        let mut i = Slot::home(hash, self.index.len());
        loop {
            let slot = self.index[i];
            if slot == 0 {
                return;
            }
            if Slot::matches(slot, hash) {
                return self.prefetch_entry_start(Slot::offset(slot), MAX_KEY_HEAD + key_len);
            }
            i = (i + 1) & mask;
            if i == 0 || starts_line(&self.index[i]) {
                return;
            }
        }
    }

    /// Prefetches the entry at `offset`: its header and a typical key,
    /// 64 bytes over at most two cache lines.
    pub(super) fn prefetch_entry_at(&self, offset: u64) {
        self.prefetch_entry_start(offset, 64);
    }

    /// Prefetches the first and the last cache line of the first `len`
    /// bytes of the entry at `offset` (fewer if the arena block ends first).
    fn prefetch_entry_start(&self, offset: u64, len: usize) {
        let bytes = self.arena.tail(offset);
        prefetch_ends(&bytes[..bytes.len().min(len)]);
    }

    /// The slot holding `key` and its entry's header (`Ok`), or the empty
    /// slot where it belongs (`Err`). The index is never full, so the probe
    /// ends.
    ///
    /// Always inlined: with the short header decode inlined into it, the
    /// compiler stopped inlining `find` into the insert loops, and the call
    /// cost more than the decode saved (callgrind, `urnscan dedup -q -j1`
    /// on 1 M lines: 1,375 M instructions as a call, 1,342 M inlined).
    #[inline(always)]
    fn find(&self, hash: u64, key: &[u8]) -> Result<(usize, KeyHead), usize> {
        let mask = self.index.len() - 1;
        let mut i = Slot::home(hash, self.index.len());
        loop {
            let slot = self.index[i];
            if slot == 0 {
                return Err(i);
            }
            if Slot::matches(slot, hash) {
                let bytes = self.arena.tail(Slot::offset(slot));
                let head = KeyHead::decode(bytes);
                if head.key(bytes) == key {
                    return Ok((i, head));
                }
            }
            i = (i + 1) & mask;
        }
    }

    /// Doubles the index (or, after [`KeyTable::take_index`], sizes it
    /// for every entry) and puts every live entry back: from the old index
    /// while homes come from tags, otherwise from the arena, read in order.
    fn grow(&mut self) {
        let mut slots = (self.index.len() * 2).max(MIN_SLOTS);
        while too_full(self.len + 1, slots) {
            slots *= 2;
        }
        let mut index = written_zeros(slots);
        if !self.index.is_empty() && slots <= TAG_HOME_SLOTS {
            for &slot in self.index.iter().filter(|&&s| s != 0) {
                put(&mut index, Slot::home_of_slot(slot, slots), slot);
            }
        } else {
            // The loop of `keys_with_offsets`, written out: calling it here
            // changed how the crate compiled and cost 1 % more instructions
            // (callgrind, `scan --unique --stats -j1` on dense text).
            for (offset, header, bytes) in self.arena.entries().filter(|(_, h, _)| !h.head.dead) {
                let hash = key_hash(header.key(bytes));
                put(&mut index, Slot::home(hash, slots), Slot::pack(hash, offset));
            }
        }
        self.index = index;
    }

    /// The key of the entry at `offset` (an offset [`KeyTable::iter_offsets`]
    /// gave).
    pub(super) fn key_at(&self, offset: u64) -> &[u8] {
        let bytes = self.arena.tail(offset);
        KeyHead::decode(bytes).key(bytes)
    }

    /// Adds `n` to the count of the entry at `offset`, whose count field
    /// holds `field`. Always inlined: the compiler kept it a call, 32
    /// instructions per repeated key in `urnscan dedup` (callgrind).
    /// Sums saturate: see [`KeyTable::insert`].
    #[inline(always)]
    fn add_count(&mut self, offset: u64, field: Count, n: u64) {
        let total = u64::from(field).saturating_add(n);
        let field = if total <= COUNT_MAX {
            total
        } else {
            let more = self.overflow.entry(offset).or_default();
            *more = more.saturating_add(total);
            0
        };
        self.arena.tail_mut(offset)[0] = field as Count;
    }

    fn count_at(&self, offset: u64, field: Count) -> u64 {
        // Nearly always empty: then not even hashed.
        let more = if self.overflow.is_empty() { 0 } else { self.overflow.get(&offset).copied().unwrap_or(0) };
        u64::from(field).saturating_add(more)
    }

    /// Writes a new entry and returns its offset.
    fn push_entry(&mut self, key: &[u8], raw: &[u8], at: Position, count: u64) -> u64 {
        let field = if count <= COUNT_MAX { count } else { 0 };
        entry::delta_into(&mut self.delta, key, raw);
        let (offset, block) = self.arena.room(MAX_HEADER + key.len() + self.delta.len());
        entry::encode_with_delta(block, key, &self.delta, at, field as Count);
        self.out_of_order |= at < self.newest;
        if self.written % SAMPLE_STEP == 0 {
            self.samples.push(offset);
        }
        self.written += 1;
        self.newest = self.newest.max(at);
        if count > field {
            self.overflow.insert(offset, count);
        }
        offset
    }

    /// An earlier occurrence was found (merging tables, reading spill
    /// files back): its raw form becomes the first-seen one. The entry is
    /// written anew at the end of the arena and the old one marked dead;
    /// this happens at most once per key per merge.
    fn replace(&mut self, slot: usize, raw: &[u8], at: Position) {
        let old = Slot::offset(self.index[slot]);
        let count = self.count_at(old, KeyHead::decode(self.arena.tail(old)).count);
        self.overflow.remove(&old);
        let key = self.key_at(old).to_vec();
        self.arena.tail_mut(old)[DEAD_BYTE] |= 1;
        let fresh = self.push_entry(&key, raw, at, count);
        self.index[slot] = (self.index[slot] & !Slot::OFFSET_MASK) | (fresh + 1);
    }

    /// Adds every key of `other` to `self`.
    pub fn merge(&mut self, other: &KeyTable) {
        if self.is_empty() && !other.is_empty() {
            *self = other.clone();
            return;
        }
        let mut raw = Vec::new();
        for e in other.iter() {
            raw.clear();
            e.raw.write_into(&mut raw);
            self.insert(e.key, &raw, e.first, e.count);
        }
    }

    /// Entries in the order their first-seen forms were stored: insertion
    /// order, except that an entry whose first-seen form was replaced by an
    /// earlier one ([`KeyTable::merge`]) moves to the end.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'_>> {
        self.iter_offsets().map(|(_, e)| e)
    }

    /// [`KeyTable::iter`] with each entry's arena offset.
    pub(crate) fn iter_offsets(&self) -> impl Iterator<Item = (u64, Entry<'_>)> {
        self.iter_offsets_from(0)
    }

    /// [`KeyTable::iter_offsets`] from the entry at `offset` (one it gave,
    /// or 0) on: for handing out a table's entries from several threads.
    pub(crate) fn iter_offsets_from(&self, offset: u64) -> impl Iterator<Item = (u64, Entry<'_>)> {
        self.arena
            .entries_from(offset)
            .filter(|(_, h, _)| !h.head.dead)
            .map(|(offset, header, bytes)| (offset, self.entry(offset, header, bytes)))
    }

    /// The arena offset and key of every live entry, in the order of
    /// [`KeyTable::iter_offsets`], without the rest of each entry.
    pub(super) fn keys_with_offsets(&self) -> impl Iterator<Item = (u64, &[u8])> {
        self.arena.entries().filter(|(_, h, _)| !h.head.dead).map(|(offset, header, bytes)| (offset, header.key(bytes)))
    }

    /// The arena offset of every [`SAMPLE_STEP`]-th entry in the order of
    /// [`KeyTable::iter_offsets`], when the entries are in position order
    /// in it (every one was written with a first position at or after all
    /// earlier ones'): noted as they were written. `None` otherwise (see
    /// [`KeyTable::firsts_with_offsets`]).
    pub(super) fn first_samples(&self) -> Option<&[u64]> {
        // Without dead entries, since an entry dies only when an earlier
        // position replaces its own, which is written out of order.
        (!self.out_of_order).then_some(&self.samples[..])
    }

    /// The arena offset and first position of every live entry, in the
    /// order of [`KeyTable::iter_offsets`], without the rest of each entry.
    pub(super) fn firsts_with_offsets(&self) -> impl Iterator<Item = (u64, Position)> + '_ {
        self.arena.entries().filter(|(_, h, _)| !h.head.dead).map(|(offset, header, _)| (offset, header.first))
    }

    /// The entry at `offset` (an offset [`KeyTable::iter_offsets`] gave).
    pub(super) fn entry_at(&self, offset: u64) -> Entry<'_> {
        let bytes = self.arena.tail(offset);
        let header = Header::decode(bytes);
        self.entry(offset, header, &bytes[..header.size()])
    }

    #[inline]
    fn entry<'s>(&'s self, offset: u64, header: Header, bytes: &'s [u8]) -> Entry<'s> {
        let key = header.key(bytes);
        let raw = Raw::delta(key, header.delta(bytes));
        Entry { key, raw, count: self.count_at(offset, header.head.count), first: header.first }
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

/// `len` empty slots, written rather than allocated zeroed. `put` reads
/// a slot before it writes one, and a read is the first touch of a fresh
/// page of an allocation the OS zeroed: it maps the shared zero page, and
/// the write then faults again to copy it, with a TLB flush sent to every
/// other thread of the process. Zeroing here costs one pass over the
/// memory; those faults were 2 % of `urnscan dedup -j2` on a URN dataset.
fn written_zeros(len: usize) -> Vec<u64> {
    let mut index = Vec::with_capacity(len);
    // `black_box` keeps the compiler from turning the allocation and the
    // zeroing back into one zeroed allocation.
    std::hint::black_box(&mut index).resize(len, 0);
    index
}

/// Puts `slot` in the first empty slot of `index` from `home` on.
fn put(index: &mut [u64], home: usize, slot: u64) {
    let mask = index.len() - 1;
    let mut i = home;
    while index[i] != 0 {
        i = (i + 1) & mask;
    }
    index[i] = slot;
}

/// Whether `slot` is the first of a 64-byte cache line.
fn starts_line(slot: &u64) -> bool {
    (slot as *const u64 as usize) % 64 == 0
}

/// Prefetches the first and the last cache line of `bytes`.
fn prefetch_ends(bytes: &[u8]) {
    if let (Some(first), Some(last)) = (bytes.first(), bytes.last()) {
        prefetch(first);
        prefetch(last);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: u32, offset: u64) -> Position {
        Position { file, offset }
    }

    fn raw(e: &Entry<'_>) -> Vec<u8> {
        e.raw.to_vec()
    }

    /// What `accept` checks is what is stored, and both come from one read
    /// of the caller's bytes: `accept` is handed a copy, not the caller's
    /// memory (which, mapped, may change between two reads), and the entry
    /// is written from that copy. A refused new key is not stored.
    #[test]
    fn accept_is_handed_the_copy_that_is_stored() {
        let key = b"urn:ab:x".to_vec();
        let outside = |bytes: &[u8]| {
            let (k, r) = (key.as_ptr_range(), RAW.as_ptr_range());
            !k.contains(&bytes.as_ptr()) && !r.contains(&bytes.as_ptr())
        };
        const RAW: &[u8] = b"URN:Ab:x?=q";
        let mut t = KeyTable::new();
        let mut seen = Vec::new();
        t.insert_if(key_hash(&key), &key, RAW, at(0, 9), 1, |k, r| {
            assert!(outside(k) && outside(r));
            seen.push((k.to_vec(), r.to_vec()));
            true
        });
        // An earlier occurrence: its raw form becomes the first-seen one.
        t.insert_if(key_hash(&key), &key, &RAW[..8], at(0, 2), 1, |k, r| {
            assert!(outside(k) && outside(r));
            seen.push((k.to_vec(), r.to_vec()));
            true
        });
        t.insert_if(key_hash(b"urn:ab:y"), b"urn:ab:y", b"urn:ab:y", at(0, 20), 1, |_, _| false);
        // A key that is the start of the raw form's own bytes.
        let line = b"urn:ab:z#f".to_vec();
        t.insert_if(key_hash(&line[..8]), &line[..8], &line, at(0, 30), 1, |k, r| {
            assert!(!line.as_ptr_range().contains(&k.as_ptr()) && !line.as_ptr_range().contains(&r.as_ptr()));
            seen.push((k.to_vec(), r.to_vec()));
            true
        });
        let want_seen =
            [(key.clone(), RAW.to_vec()), (key.clone(), b"URN:Ab:x".to_vec()), (line[..8].to_vec(), line.clone())];
        assert_eq!(seen, want_seen);
        let entries: Vec<(Vec<u8>, Vec<u8>, u64, u64)> =
            t.iter().map(|e| (e.key.to_vec(), raw(&e), e.count, e.first.offset)).collect();
        assert_eq!(entries, [(key.clone(), b"URN:Ab:x".to_vec(), 2, 2), (line[..8].to_vec(), line.clone(), 1, 30)]);
    }

    /// A table of (key, raw form, offset in file 0, count), inserted in order.
    fn table_of(occurrences: &[(&str, &str, u64, u64)]) -> KeyTable {
        let mut t = KeyTable::new();
        for &(key, raw, offset, count) in occurrences {
            t.insert(key.as_bytes(), raw.as_bytes(), at(0, offset), count);
        }
        t
    }

    #[test]
    fn counts_and_first_seen() {
        let t =
            table_of(&[("urn:ab:x", "URN:AB:x", 5, 1), ("urn:ab:x", "urn:ab:x", 9, 1), ("urn:cd:y", "urn:cd:y", 1, 1)]);
        assert_eq!(t.len(), 2);
        let sorted = t.sorted();
        assert_eq!(sorted[0].key, b"urn:ab:x");
        assert_eq!(raw(&sorted[0]), b"URN:AB:x");
        assert_eq!(sorted[0].count, 2);
        assert_eq!(raw(&sorted[1]), b"urn:cd:y");
        assert_eq!(t.in_first_seen_order()[0].key, b"urn:cd:y");
    }

    #[test]
    fn an_earlier_occurrence_replaces_the_first_seen_form() {
        let mut t = table_of(&[
            ("urn:ab:x", "urn:ab:x#late", 9, 2),
            ("urn:cd:y", "urn:cd:y", 10, 1),
            ("urn:ab:x", "URN:ab:x?+early", 3, 1),
            // A later one changes nothing but the count.
            ("urn:ab:x", "urn:ab:x", 4, 1),
        ]);
        assert_eq!(t.len(), 2);
        let all: Vec<Entry> = t.iter().collect();
        assert_eq!(all.len(), 2, "the replaced entry is not listed twice");
        let e = t.sorted()[0];
        assert_eq!((e.count, e.first, raw(&e)), (4, at(0, 3), b"URN:ab:x?+early".to_vec()));
        // The table still finds the key after the move.
        t.insert(b"urn:ab:x", b"urn:ab:x", at(1, 0), 1);
        assert_eq!((t.len(), t.sorted()[0].count), (2, 5));
    }

    /// The largest entry: a key of `MAX_URN_LEN` bytes and a raw form as
    /// long that is not the key with some letters' case changed, so it is
    /// stored whole beside the key (nearly a block). Entries of that size
    /// never straddle two blocks, and `iter`, `sorted` and `merge` give
    /// back every byte.
    #[test]
    fn the_largest_entries_fill_blocks_and_read_back_whole() {
        let n = crate::MAX_URN_LEN;
        let pair = |i: usize| {
            let key = format!("urn:ab:{i:05}{}", "k".repeat(n - 12)).into_bytes();
            let raw = format!("urn:ab:{i:05}{}", "r".repeat(n - 12)).into_bytes();
            (key, raw)
        };
        let pairs: Vec<_> = (0..5).map(pair).collect();
        let mut t = KeyTable::new();
        for (i, (key, raw)) in pairs.iter().enumerate().rev() {
            assert_eq!((key.len(), raw.len()), (n, n));
            t.insert(key, raw, at(0, i as u64), 1);
        }
        assert!(t.arena.blocks.len() >= pairs.len(), "one block per entry");
        let check = |t: &KeyTable, count: u64| {
            let sorted = t.sorted();
            assert_eq!(sorted.len(), pairs.len());
            for (e, (key, raw)) in sorted.iter().zip(&pairs) {
                assert_eq!((e.key, self::raw(e), e.count), (&key[..], raw.clone(), count));
            }
            assert_eq!(t.iter().count(), pairs.len());
        };
        check(&t, 1);
        let mut merged = KeyTable::new();
        merged.merge(&t);
        merged.merge(&t);
        check(&merged, 2);
    }

    #[test]
    fn counts_past_the_entry_field_are_kept() {
        let mut t = KeyTable::new();
        let big = u64::from(u32::MAX) + 10;
        t.insert(b"urn:ab:x", b"urn:ab:x", at(0, 5), big);
        t.insert(b"urn:ab:x", b"urn:ab:x", at(0, 6), COUNT_MAX);
        // Replacing the first-seen form keeps the whole count.
        t.insert(b"urn:ab:x", b"Urn:ab:x", at(0, 1), 1);
        assert_eq!(t.sorted()[0].count, big + COUNT_MAX + 1);
        let mut merged = KeyTable::new();
        merged.insert(b"urn:ab:x", b"urn:ab:x", at(1, 0), 1);
        merged.merge(&t);
        assert_eq!(merged.sorted()[0].count, big + COUNT_MAX + 2);
        // One at a time across the field's limit, twice.
        let mut t = KeyTable::new();
        for i in 0..2 * COUNT_MAX + 7 {
            t.insert(b"urn:cd:y", b"urn:cd:y", at(0, i), 1);
        }
        assert_eq!(t.sorted()[0].count, 2 * COUNT_MAX + 7);
    }

    /// Counts stop at `u64::MAX` rather than overflow (a panic in a debug
    /// build, a wrong count in a release one), however they are added: a
    /// count in the entry's field and one past it, two past it, a merge.
    #[test]
    fn counts_saturate_at_u64_max() {
        let count = |t: &KeyTable| t.sorted()[0].count;
        let mut t = KeyTable::new();
        t.insert(b"urn:ab:x", b"urn:ab:x", at(0, 0), u64::MAX - 1);
        t.insert(b"urn:ab:x", b"urn:ab:x", at(0, 1), 5);
        assert_eq!(count(&t), u64::MAX);
        t.insert(b"urn:ab:x", b"urn:ab:x", at(0, 2), u64::MAX);
        assert_eq!(count(&t), u64::MAX);
        let mut small = KeyTable::new();
        small.insert(b"urn:ab:x", b"urn:ab:x", at(1, 0), 3);
        small.insert(b"urn:ab:x", b"urn:ab:x", at(1, 1), u64::MAX - 1);
        assert_eq!(count(&small), u64::MAX);
        let mut merged = KeyTable::new();
        merged.insert(b"urn:ab:x", b"urn:ab:x", at(2, 0), 1000);
        merged.merge(&t);
        assert_eq!(count(&merged), u64::MAX);
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
        assert_eq!(raw(&ab.sorted()[0]), b"Urn:ab:x");
        assert_eq!(ab.sorted()[0].count, 5);
    }

    #[test]
    fn inserts_after_the_index_is_taken_find_the_old_keys() {
        let mut t = KeyTable::new();
        let keys: Vec<String> = (0..1000).map(|i| format!("urn:ab:{i}")).collect();
        for (i, k) in keys.iter().enumerate() {
            t.insert(k.as_bytes(), k.as_bytes(), at(0, i as u64), 1);
        }
        let before = t.sorted();
        let mut released = t.clone();
        let heap = released.heap_bytes();
        let index = released.take_index();
        assert!(index.capacity() * 3 >= 1000 * 4, "room for the sorted list");
        assert_eq!(released.heap_bytes(), heap - index.capacity() * 8);
        assert_eq!(released.sorted(), before, "the entries are read from the arena alone");
        for (i, k) in keys.iter().enumerate().step_by(7) {
            released.insert(k.as_bytes(), k.as_bytes(), at(1, i as u64), 2);
        }
        released.insert(b"urn:ab:new", b"urn:ab:new", at(1, 0), 1);
        assert_eq!(released.len(), 1001, "old keys were found again, not added twice");
        let counts: u64 = released.iter().map(|e| e.count).sum();
        assert_eq!(counts, 1000 + 2 * 143 + 1);
    }

    #[test]
    fn a_walk_from_any_entry_is_the_rest_of_the_whole_walk() {
        // Keys of many lengths, enough for several arena blocks.
        let key = |i: usize| format!("urn:ab:{}{i}", "x".repeat(i % 60));
        let mut t = KeyTable::new();
        for i in 0..8_000 {
            t.insert(key(i).as_bytes(), key(i).as_bytes(), at(0, i as u64), 1);
        }
        assert!(t.arena.blocks.len() >= 4, "{} blocks", t.arena.blocks.len());
        let all: Vec<(u64, Vec<u8>)> = t.iter_offsets().map(|(o, e)| (o, e.key.to_vec())).collect();
        let keys: Vec<Vec<u8>> = (0..8_000).map(|i| key(i).into_bytes()).collect();
        assert!(all.iter().map(|(_, k)| k).eq(keys.iter()), "every key, in the order stored");
        // From every block's first and last entry, and from others.
        let block_ends =
            all.windows(2).enumerate().filter(|(_, w)| w[0].0 as usize / BLOCK_BYTES != w[1].0 as usize / BLOCK_BYTES);
        let starts: Vec<usize> = block_ends.flat_map(|(i, _)| [i, i + 1]).chain((0..all.len()).step_by(331)).collect();
        assert!(starts.len() > 6);
        for i in starts {
            let rest: Vec<(u64, Vec<u8>)> = t.iter_offsets_from(all[i].0).map(|(o, e)| (o, e.key.to_vec())).collect();
            assert_eq!(rest, all[i..], "from entry {i}");
        }
    }

    #[test]
    fn distinct_keys_are_all_kept() {
        // Many keys, all distinct, through many doublings of the index.
        let mut t = KeyTable::new();
        for i in 0..10_000u32 {
            let k = format!("urn:ab:{i}");
            t.insert(k.as_bytes(), k.as_bytes(), at(0, i as u64), 1);
        }
        assert_eq!(t.len(), 10_000);
        assert!(t.iter().all(|e| e.count == 1));
        assert_eq!(t.iter().map(|e| e.first.offset).collect::<Vec<_>>(), (0..10_000).collect::<Vec<_>>());
    }

    #[test]
    fn a_slot_knows_its_home_in_every_index_that_takes_homes_from_tags() {
        for k in 0..5000u32 {
            let hash = key_hash(format!("urn:ab:{k}").as_bytes());
            let slot = Slot::pack(hash, u64::from(k));
            let mut slots = MIN_SLOTS;
            while slots <= TAG_HOME_SLOTS {
                assert_eq!(Slot::home_of_slot(slot, slots), Slot::home(hash, slots), "{slots} slots");
                slots *= 2;
            }
        }
    }

    #[test]
    fn an_index_doubles_at_three_quarters_and_from_dense_slots_on_at_seven_eighths() {
        // The sizes an index takes as keys go in one by one, and the count
        // at which each doubling happened: the first key over the load.
        let mut t = KeyTable::new();
        let mut doublings = Vec::new();
        // Up to a full index of 2 * DENSE_SLOTS, which does not double.
        for i in 0..DENSE_SLOTS * 2 * 7 / 8 {
            let before = t.index.len();
            let key = format!("urn:ab:{i}");
            t.insert(key.as_bytes(), key.as_bytes(), at(0, i as u64), 1);
            if t.index.len() != before {
                doublings.push((t.len(), t.index.len()));
            }
        }
        let mut want = vec![(1, MIN_SLOTS)];
        let mut slots = MIN_SLOTS;
        while slots <= DENSE_SLOTS {
            let max_load = if slots >= DENSE_SLOTS { slots * 7 / 8 } else { slots * 3 / 4 };
            slots *= 2;
            want.push((max_load + 1, slots));
        }
        assert_eq!(doublings, want);
        // Half of a dense index's 8 bytes per slot is saved for tables
        // between 3/4 and 7/8 of it: 3.3 M keys in 64 shards stay at 2^16
        // slots each.
        assert!(!too_full(3_300_000 / 64 + 1, DENSE_SLOTS));
        assert!(too_full(DENSE_SLOTS / 2 * 3 / 4 + 1, DENSE_SLOTS / 2));
    }

    #[test]
    fn keys_are_found_again_after_the_index_outgrows_tag_homes() {
        // Enough keys that the index doubles from the old index up to
        // TAG_HOME_SLOTS, then is rebuilt from the arena with homes from
        // the hash's low bits, and doubles once more.
        let n = (1..).find(|&n| too_full(n, 2 * TAG_HOME_SLOTS)).unwrap() + 1000;
        let key = |i: usize| format!("urn:ab:{i}");
        let mut t = KeyTable::new();
        for i in 0..n {
            t.insert(key(i).as_bytes(), key(i).as_bytes(), at(0, i as u64), 1);
            if i == TAG_HOME_SLOTS / 2 {
                assert!(t.index.len() <= TAG_HOME_SLOTS);
                // Every key inserted so far is found where the index says.
                for j in (0..=i).step_by(97) {
                    assert!(t.find(key_hash(key(j).as_bytes()), key(j).as_bytes()).is_ok(), "key {j}");
                }
            }
        }
        assert!(t.index.len() > 2 * TAG_HOME_SLOTS, "the test reaches the arena-rebuilt index");
        for i in 0..n {
            t.insert(key(i).as_bytes(), key(i).as_bytes(), at(1, i as u64), 1);
        }
        assert_eq!(t.len(), n, "every key found again, none added twice");
        assert!(t.iter().all(|e| e.count == 2 && e.first == at(0, e.first.offset)));
    }

    proptest::proptest! {
        /// A batch gives the same table as one insert per occurrence, and
        /// both agree with a BTreeMap of key -> (count, first, raw form),
        /// whether the occurrences come in position order or not (then
        /// earlier ones of stored keys come later, and replace them).
        #[test]
        fn insert_batch_equals_single_inserts(
            picks in proptest::collection::vec((0usize..300, 0usize..3), 0..2000),
            scattered in proptest::bool::ANY,
        ) {
            let spell = |k: usize, v: usize| match v {
                0 => format!("urn:n:{k}"),
                1 => format!("URN:n:{k}?+q"),
                _ => format!("urn:N:{k}#f"),
            };
            let occ: Vec<(Vec<u8>, Vec<u8>, u64)> = picks
                .iter()
                .enumerate()
                .map(|(i, &(k, v))| {
                    // Distinct positions either way: 2003 is prime.
                    let position = if scattered { (i as u64 * 1_000_003) % 2003 } else { i as u64 };
                    (format!("urn:n:{k}").into_bytes(), spell(k, v).into_bytes(), position)
                })
                .collect();
            let mut single = KeyTable::new();
            let mut reference = std::collections::BTreeMap::new();
            for (key, raw, i) in &occ {
                single.insert(key, raw, at(0, *i), 1);
                let class = reference.entry(key.clone()).or_insert((0u64, *i, raw.clone()));
                class.0 += 1;
                if *i < class.1 {
                    (class.1, class.2) = (*i, raw.clone());
                }
            }
            let mut batch = KeyTable::new();
            let index: Vec<usize> = (0..occ.len()).collect();
            let view = |&n: &usize| {
                let (key, raw, i) = &occ[n];
                Some(Occurrence { hash: key_hash(key), key, raw, at: at(0, *i) })
            };
            batch.insert_batch(&index, view, |_, _, _| true);
            let got: Vec<_> = batch.sorted().iter().map(|e| (e.key.to_vec(), (e.count, e.first.offset, raw(e)))).collect();
            let single: Vec<_> = single.sorted().iter().map(|e| (e.key.to_vec(), (e.count, e.first.offset, raw(e)))).collect();
            let want: Vec<_> = reference.into_iter().collect();
            proptest::prop_assert_eq!(&got, &want);
            proptest::prop_assert_eq!(&single, &want);
        }
    }
}
