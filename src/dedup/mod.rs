//! Deduplication by equivalence key.
//!
//! - [`entry`]: how one distinct key is stored (count, first position, key,
//!   first-seen form as a delta) and how callers see it ([`Entry`]).
//! - [`table`]: [`KeyTable`], the distinct keys of one thread, in an arena
//!   with a prefetching open-addressing index.
//! - [`sorted`]: [`SortedEntries`], the entries of many tables in key order
//!   kept in the tables' own indexes.
//! - [`first_seen`]: [`FirstSeenEntries`], the same in first-seen order,
//!   merged from the tables as they are.
//! - [`by_count`]: [`CountedEntries`], the same by count (most first, then
//!   by key), a counting sort of the key order.
//! - here: [`ShardedTable`], the same filled by all threads at once, and
//!   [`KeyBatch`], the URNs of one buffer on their way into it.
//!
//! Counts add up and the earliest position wins whatever order occurrences
//! arrive in, so a table's contents never depend on thread scheduling;
//! [`KeyTable::sorted`] gives the deterministic output order (by key bytes).
//! Lookups compare full keys: a hash collision can never merge two
//! different URNs.
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
//!    24-byte note is listed (where URNs are far apart in their buffer,
//!    the batch copies their bytes too, so that phase 2 finds them side by
//!    side: [`KeyBatch::copying`]); a complete batch's notes are grouped by
//!    shard, a piece of up to 1,024 at a time, in a counting sort. Where
//!    the key ends and what it must fix come from the scan's validating
//!    walk (the key shapes the scanner keeps beside its events for whole
//!    files and windows; see [`crate::scan`]), or are found again in the
//!    bytes for streamed blocks and other callers of
//!    [`crate::job::key_batch`];
//! 2. [`ShardedTable::absorb`] runs one task per shard, each inserting the
//!    notes of its shard from every batch, in batch order, with the hash
//!    from phase 1, as one stream ([`KeyTable::insert_batch`], which
//!    prefetches ahead in it: across batches, since in sparse text a batch
//!    has fewer notes per shard than the prefetch distance).
//!
//! No key is inserted twice, nothing is merged, and no two threads touch the
//! same table. The shard is the top six bits of the hash; a table's tag is
//! bits 24..48 and its bucket comes from the tag's low bits (the hash's low
//! bits in an index of over 2^18 slots; see [`table`]), so a shard's keys
//! still spread over its whole index.

pub mod by_count;
pub mod entry;
pub mod first_seen;
pub mod sorted;
pub mod table;

use std::cell::RefCell;

use rayon::prelude::*;

use crate::grammar::Grammar;
use crate::key::{key_shape, write_key, Fixes};
use crate::nid::rules::apply_ns_rules;

pub use by_count::CountedEntries;
pub use entry::{Entry, Position, Raw};
pub use first_seen::FirstSeenEntries;
pub use sorted::SortedEntries;
pub use table::{KeyTable, Occurrence};

/// The hash every [`KeyTable`] and every partition uses for `key`: XXH3
/// with a fixed seed, the same in every table, thread, run and machine.
pub fn key_hash(key: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64_with_seed(key, KEY_SEED)
}

const KEY_SEED: u64 = 0x7572_6e73_6361_6e31;

/// Number of shards of a [`ShardedTable`]: enough that two threads rarely
/// wait for the same shard, few enough that per-shard overhead is small.
pub const SHARDS: usize = 64;

fn shard_of(hash: u64) -> usize {
    // The top bits: far above any bucket index, and apart from the tag.
    (hash >> (64 - SHARDS.trailing_zeros())) as usize
}

/// Distinct keys split into [`SHARDS`] tables by hash, filled in parallel
/// from [`KeyBatch`]es (see the module documentation).
#[derive(Clone)]
pub struct ShardedTable {
    shards: Vec<KeyTable>,
}

/// The size, not the keys (there may be millions).
impl std::fmt::Debug for ShardedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShardedTable")
            .field("len", &self.len())
            .field("heap_bytes", &self.heap_bytes())
            .finish_non_exhaustive()
    }
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

    /// Bytes held by the shards' arenas and indexes.
    pub fn heap_bytes(&self) -> usize {
        self.shards.iter().map(KeyTable::heap_bytes).sum()
    }

    /// Inserts every URN of `batches`, each with the buffer its offsets
    /// refer to. One task per shard; each shard takes its notes from all
    /// the batches, batch by batch in the order given, as one stream.
    pub fn absorb(&mut self, batches: &[(&KeyBatch, &[u8])]) {
        if batches.iter().all(|(b, _)| b.is_empty()) {
            return;
        }
        self.shards.par_iter_mut().enumerate().for_each(|(s, shard)| {
            // One stream, so that the prefetching looks ahead across
            // batches: batch by batch, a sparse window's inserts each
            // waited for memory (`urnscan bench` on 1 GiB of text: the
            // `+ dedup` row's own cost 91-121 -> 69-87 ms at one thread).
            let mut stream = Vec::with_capacity(batches.iter().map(|(b, _)| b.shard_len(s)).sum());
            for (batch, hay) in batches {
                batch.occurrences(s, hay, &mut stream);
            }
            let scratch = RefCell::new(Vec::new());
            let accept = |(o, recheck): &(Occurrence<'_>, Option<Recheck>), key: &[u8], raw: &[u8]| {
                recheck.is_none_or(|r| still_consistent(raw, key, o.hash, r, &mut scratch.borrow_mut()))
            };
            shard.insert_batch(&stream, |(o, _)| Some(*o), accept);
        });
    }

    /// Counts `count` occurrences of `key`, first seen as `raw` at `at`,
    /// one at a time (for bulk insertion use [`KeyBatch`]es). A key's count
    /// saturates at `u64::MAX` ([`KeyTable::insert`]).
    pub fn insert(&mut self, key: &[u8], raw: &[u8], at: Position, count: u64) {
        let hash = key_hash(key);
        self.shards[shard_of(hash)].insert_hashed(hash, key, raw, at, count);
    }

    /// The shards, whose entries are disjoint: for passes over the
    /// entries in parallel.
    pub fn shards(&self) -> &[KeyTable] {
        &self.shards
    }

    /// Entries, shard by shard, each shard in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'_>> {
        self.shards.iter().flat_map(KeyTable::iter)
    }

    /// Entries sorted by key bytes, sorted in parallel in the shards'
    /// indexes, which the shards give up for it: no memory beyond the
    /// table is needed (see [`SortedEntries::reusing_indexes`]). Keys can
    /// still be inserted afterwards; the first insert rebuilds the index.
    pub fn sorted(&mut self) -> SortedEntries<'_> {
        SortedEntries::reusing_indexes(&mut self.shards)
    }

    /// Entries by count, most first, equal counts by key: the key order of
    /// [`ShardedTable::sorted`] counting-sorted by count (see
    /// [`CountedEntries`]; beyond the table, 16 bytes per entry while the
    /// order is built and 8 once it is).
    pub fn by_count(&mut self) -> CountedEntries<'_> {
        CountedEntries::new(&SortedEntries::reusing_indexes(&mut self.shards))
    }

    /// Entries in first-seen order (by [`Entry::first`]): merged from the
    /// shards, each of which lists its keys in the order they were first
    /// inserted, when that is position order (see [`FirstSeenEntries`]).
    pub fn first_seen(&self) -> FirstSeenEntries<'_> {
        FirstSeenEntries::new(&self.shards)
    }
}

/// URNs of one buffer on their way into a [`ShardedTable`]: for each URN,
/// its key's hash and where its raw form and key are, filed by shard.
///
/// The notes are kept in pieces of up to 1,024, each in the order the
/// URNs came and grouped by shard once the batch is complete
/// (`KeyBatch::group`; the batches a run makes are grouped by the task
/// that made them). A list per shard cost 64 allocations per batch, and
/// sparse text makes a batch per MiB with a few hundred URNs in it. One
/// list for a whole batch of dense text was an allocation of some 700 kB
/// per MiB of input, which the allocator gives back to the system later
/// than small ones: on a 10 M line dataset the peak RSS rose by 4 MiB
/// (pieces of 4,096 notes: 2 MiB; of 1,024: none).
#[derive(Clone)]
pub struct KeyBatch {
    file: u32,
    base: u64,
    recheck: Option<Grammar>,
    /// Keys pass through [`apply_ns_rules`] ([`KeyBatch::with_ns_rules`]).
    ns_rules: bool,
    /// Raw forms are copied into `keys` ([`KeyBatch::copying`]).
    copies: bool,
    /// With [`KeyBatch::copying`], the name of a URN whose key is written
    /// from its copy (kept for the next push: nothing is allocated per URN).
    name_copy: Vec<u8>,
    pieces: Vec<Piece>,
    /// URNs added.
    len: usize,
    /// URNs expected, to size the pieces.
    expected: usize,
    /// Keys that differ from the start of their URN's raw form, and with
    /// [`KeyBatch::copying`] the raw forms.
    keys: Vec<u8>,
}

/// Notes per piece of a [`KeyBatch`]: 24 KiB of them, small enough for
/// the allocator to reuse at once, and one piece holds all the URNs of a
/// MiB of sparse text. Tests use short pieces, so that their batches span
/// several.
const PIECE: usize = if cfg!(test) { 7 } else { 1024 };

/// Up to [`PIECE`] notes of a batch.
#[derive(Clone)]
struct Piece {
    notes: Vec<Note>,
    /// Once grouped, shard `s`'s notes are `notes[starts[s]..starts[s + 1]]`.
    starts: Option<[u16; SHARDS + 1]>,
}

const _: () = assert!(PIECE <= u16::MAX as usize, "piece bounds are u16");

#[derive(Clone, Copy)]
struct Note {
    hash: u64,
    /// Offset of the raw form in the buffer.
    offset: u64,
    /// Where the bytes of the note are in `keys`: a copy of the raw form
    /// (with [`KeyBatch::copying`]) followed by the key if it differs from
    /// the raw form's start, or the key alone; [`BORROWED`] when the batch
    /// holds neither (the key is the start of the raw form in the buffer).
    at: u32,
    raw_len: u16,
    /// With [`KEY_AFTER`] when the key is written in `keys` (after the raw
    /// form's copy, if any).
    key_len: u16,
}

const BORROWED: u32 = u32::MAX;

/// The flag of `Note::key_len` for a key written in the batch (a URN is
/// at most [`crate::MAX_URN_LEN`] bytes, fewer than 2^15).
const KEY_AFTER: u16 = 1 << 15;
const _: () = assert!(crate::MAX_URN_LEN < KEY_AFTER as usize);

impl KeyBatch {
    /// An empty batch for about `urns` URNs from input `file`, whose
    /// buffer starts at byte `base` of that input. With `recheck`, the
    /// buffer may change while it is read (a shared file mapping): a URN
    /// becomes a new key or first-seen form only if its bytes still give
    /// the same key and hash under that grammar ([`KeyTable::insert_if`]).
    pub fn new(file: u32, base: u64, recheck: Option<Grammar>, urns: usize) -> KeyBatch {
        let (pieces, keys) = (Vec::new(), Vec::new());
        let name_copy = Vec::new();
        KeyBatch {
            file,
            base,
            recheck,
            ns_rules: false,
            copies: false,
            name_copy,
            pieces,
            len: 0,
            expected: urns,
            keys,
        }
    }

    /// The batch with every key passed through the namespace rules
    /// ([`apply_ns_rules`], as `urnscan dedup --ns-rules` does), when `on`.
    pub fn with_ns_rules(mut self, on: bool) -> KeyBatch {
        self.ns_rules = on;
        self
    }

    /// The batch with a copy of each URN's bytes, when `on`: phase 2 then
    /// reads the batch, not the buffer, and checks nothing again (the
    /// copy cannot change). For URNs far apart in their buffer: each is
    /// otherwise read again there in phase 2, a cache miss or two, since
    /// phase 1 and 2 are a window apart (the scan decides by how far
    /// apart they are: see `crate::job`).
    pub fn copying(mut self, on: bool) -> KeyBatch {
        self.copies = on;
        self
    }

    /// The batch with room for `bytes` of copied URNs ([`KeyBatch::copying`])
    /// made at once.
    pub(crate) fn with_room(mut self, bytes: usize) -> KeyBatch {
        self.keys.reserve(bytes);
        self
    }

    /// Whether no URN was added.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Adds the URN `raw`, found at `offset` of the buffer, whose assigned
    /// name `name` (the start of `raw`) becomes its key with `fixes` (as
    /// [`crate::key::key_shape`] gives them, or the scan's key shape). URNs
    /// are at most [`crate::MAX_URN_LEN`] bytes. A name that already is the
    /// key is not copied; other keys are written straight into the batch's
    /// buffer, so nothing is allocated per URN.
    pub(crate) fn push(&mut self, offset: usize, raw: &[u8], name: &[u8], fixes: Fixes) {
        debug_assert!(raw.starts_with(name));
        // With the rules on, every key is written out for them: which
        // namespaces they touch is theirs to know (`apply_ns_rules`).
        let start = self.keys.len();
        if self.copies {
            // The one read of bytes that may change (a shared mapping):
            // key and hash are made from the copy, and a copy that is no
            // longer printable ASCII (a truncated mapping reads as zeros)
            // is dropped, as phase 2 would drop it on reading it again.
            self.keys.extend_from_slice(raw);
            if !all_graphic(&self.keys[start..]) {
                self.keys.truncate(start);
                return;
            }
        }
        let at = self.keys.len();
        let (key_len, hash) = match (fixes.none() && !self.ns_rules, self.copies) {
            (true, false) => (name.len() as u16, key_hash(name)),
            (true, true) => (name.len() as u16, key_hash(&self.keys[start..start + name.len()])),
            (false, false) => {
                write_ruled_key(name, fixes, self.ns_rules, &mut self.keys);
                (name.len() as u16 | KEY_AFTER, key_hash(&self.keys[at..]))
            }
            (false, true) => {
                // Written from the copy, which `keys` holds: the name is
                // copied out first, as `keys` grows while it is written.
                let mut name_copy = std::mem::take(&mut self.name_copy);
                name_copy.clear();
                name_copy.extend_from_slice(&self.keys[start..start + name.len()]);
                write_ruled_key(&name_copy, fixes, self.ns_rules, &mut self.keys);
                self.name_copy = name_copy;
                (name.len() as u16 | KEY_AFTER, key_hash(&self.keys[at..]))
            }
        };
        let at = if self.keys.len() > start { start as u32 } else { BORROWED };
        let note = Note { hash, offset: offset as u64, at, raw_len: raw.len() as u16, key_len };
        if self.pieces.last().is_none_or(|p| p.notes.len() == PIECE) {
            let size = self.expected.saturating_sub(self.len).clamp(1, PIECE);
            self.pieces.push(Piece { notes: Vec::with_capacity(size), starts: None });
        }
        if let Some(piece) = self.pieces.last_mut() {
            piece.notes.push(note);
            piece.starts = None;
        }
        self.len += 1;
    }

    /// Groups each piece's notes by shard, for [`ShardedTable::absorb`] to
    /// take a shard's notes as slices. A batch that is not grouped is
    /// absorbed all the same, each shard's task reading every note.
    pub(crate) fn group(&mut self) {
        self.pieces.iter_mut().for_each(Piece::group);
    }

    /// How many notes of shard `s` the grouped pieces hold.
    fn shard_len(&self, s: usize) -> usize {
        self.pieces.iter().filter_map(|p| p.shard(s)).map(<[Note]>::len).sum()
    }

    /// Appends the occurrences of shard `s`, whose raw forms are in `hay`,
    /// each with the grammar to check it again with (see [`KeyBatch::new`]).
    fn occurrences<'a>(&'a self, s: usize, hay: &'a [u8], out: &mut Vec<(Occurrence<'a>, Option<Recheck>)>) {
        let recheck = match self.copies {
            false => self.recheck.map(|grammar| Recheck { grammar, ns_rules: self.ns_rules }),
            true => None,
        };
        let occurrence = |n: &Note| {
            let (raw_len, key_len) = (usize::from(n.raw_len), usize::from(n.key_len & !KEY_AFTER));
            let (raw, key_at) = match self.copies {
                true => (self.keys.get(n.at as usize..)?.get(..raw_len)?, n.at as usize + raw_len),
                false => (hay.get(n.offset as usize..)?.get(..raw_len)?, n.at as usize),
            };
            let key = match n.key_len & KEY_AFTER {
                0 => raw.get(..key_len)?,
                _ => self.keys.get(key_at..)?.get(..key_len)?,
            };
            let at = Position { file: self.file, offset: self.base + n.offset };
            Some((Occurrence { hash: n.hash, key, raw, at }, recheck))
        };
        for piece in &self.pieces {
            match piece.shard(s) {
                Some(notes) => out.extend(notes.iter().filter_map(occurrence)),
                None => out.extend(piece.notes.iter().filter(|n| shard_of(n.hash) == s).filter_map(occurrence)),
            }
        }
    }
}

impl Piece {
    /// Groups the notes by shard: a counting sort, so that each shard's
    /// notes stay in the order they came (the first occurrence of a key in
    /// a batch is then the first inserted, and its entry is never
    /// rewritten for an earlier one).
    fn group(&mut self) {
        let mut starts = [0u16; SHARDS + 1];
        for n in &self.notes {
            starts[shard_of(n.hash) + 1] += 1;
        }
        for s in 0..SHARDS {
            starts[s + 1] += starts[s];
        }
        let mut next = starts;
        let mut grouped = self.notes.clone();
        for n in &self.notes {
            let s = shard_of(n.hash);
            grouped[usize::from(next[s])] = *n;
            next[s] += 1;
        }
        self.notes = grouped;
        self.starts = Some(starts);
    }

    /// The notes of shard `s`, if the piece is grouped.
    fn shard(&self, s: usize) -> Option<&[Note]> {
        self.starts.map(|starts| &self.notes[usize::from(starts[s])..usize::from(starts[s + 1])])
    }
}

/// Appends the key of the URN whose name (`urn:`, NID and NSS) is `name`
/// to `out`, fixed as `fixes` says and, with `rules`, passed through the
/// namespace rules: the one way a batch's keys are made, when they are
/// pushed and when they are checked again.
fn write_ruled_key(name: &[u8], fixes: Fixes, rules: bool, out: &mut Vec<u8>) {
    let at = out.len();
    write_key(name, fixes, out);
    if rules {
        apply_ns_rules(&mut out[at..]);
    }
}

/// How an occurrence from bytes that may change is checked before its key
/// is kept (see [`KeyBatch::new`]).
#[derive(Clone, Copy, Debug)]
struct Recheck {
    grammar: Grammar,
    ns_rules: bool,
}

/// Whether `raw` still reads as it did when its key and hash were made:
/// printable ASCII (a truncated mapping reads as zeros), the same key, the
/// same hash. A full parse would also catch a change in the microseconds
/// between validation and phase 1 (in the same task), but costs as much as
/// the validation itself; such a file is reported as changed anyway.
/// The key is made again in `scratch` when it needs fixing: this runs once
/// per new key, and an allocation each time cost more than the check.
fn still_consistent(raw: &[u8], key: &[u8], hash: u64, recheck: Recheck, scratch: &mut Vec<u8>) -> bool {
    if !all_graphic(raw) {
        return false;
    }
    let Some((name, fixes)) = key_shape(raw, recheck.grammar) else { return false };
    let now = if fixes.none() && !recheck.ns_rules {
        name
    } else {
        scratch.clear();
        write_ruled_key(name, fixes, recheck.ns_rules, scratch);
        &scratch[..]
    };
    now == key && key_hash(key) == hash
}

/// Whether every byte is printable ASCII, as a URN's are.
fn all_graphic(bytes: &[u8]) -> bool {
    // Not short-circuited, so that it runs a vector at a time.
    bytes.iter().fold(true, |ok, b| ok & b.is_ascii_graphic())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::key_shape;

    fn at(file: u32, offset: u64) -> Position {
        Position { file, offset }
    }

    #[test]
    fn debug_shows_the_size_not_the_keys() {
        let mut table = ShardedTable::new();
        table.insert(b"urn:isbn:1", b"urn:ISBN:1", at(0, 0), 1);
        table.insert(b"urn:isbn:1", b"urn:isbn:1", at(0, 20), 1);
        let shown = format!("{table:?}");
        assert!(shown.starts_with("ShardedTable { len: 1, heap_bytes: "), "{shown}");
        assert!(!shown.contains("isbn"), "{shown}");
    }

    /// key, (count, first offset, first raw form)
    type Class = (Vec<u8>, (u64, u64, Vec<u8>));

    /// The reference: every occurrence in input order into a BTreeMap of
    /// key -> (count, first position, first raw form).
    /// With `rules`, each key then goes through [`apply_ns_rules`].
    fn reference(urns: &[(u64, String)], rules: bool) -> std::collections::BTreeMap<Vec<u8>, (u64, u64, Vec<u8>)> {
        let mut map = std::collections::BTreeMap::new();
        for (offset, raw) in urns {
            let mut key = crate::parse(raw.as_bytes(), Grammar::Rfc8141).unwrap().key().as_bytes().to_vec();
            if rules {
                apply_ns_rules(&mut key);
            }
            let slot = map.entry(key).or_insert((0, *offset, raw.as_bytes().to_vec()));
            slot.0 += 1;
        }
        map
    }

    proptest::proptest! {
        /// Batches of any size, absorbed one group at a time, give the
        /// reference's classes: counts, first positions, first forms; with
        /// the namespace rules too, for the keys they change and those
        /// they leave alone (checked again, as from a mapping).
        #[test]
        fn sharded_table_equals_the_reference(
            picks in proptest::collection::vec((0usize..52, 0usize..4), 0..300),
            slice in 1usize..50,
            group in 1usize..4,
            grouped in proptest::bool::ANY,
            rules in proptest::bool::ANY,
            copying in proptest::bool::ANY,
        ) {
            // Forty keys in four spellings each: case of scheme and NID, hex
            // case, components; then four UUIDs in hex of either case, four
            // IETF RFC numbers with the literal in any case, and four `params`
            // names, which no rule folds.
            let spell = |k: usize, v: usize| match (k, v) {
                (0..40, 0) => format!("urn:n{}:a%2f{k}", k % 3),
                (0..40, 1) => format!("URN:N{}:a%2F{k}", k % 3),
                (0..40, 2) => format!("urn:n{}:a%2F{k}?+r", k % 3),
                (0..40, _) => format!("Urn:n{}:a%2f{k}#f", k % 3),
                (40..44, 0) => format!("urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf{k}"),
                (40..44, 1) => format!("urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF{k}"),
                (40..44, 2) => format!("URN:UUID:f81d4fae-7DEC-11d0-a765-00a0c91e6bf{k}"),
                (40..44, _) => format!("urn:uuid:F81d4fae-7dec-11d0-a765-00a0c91e6bf{k}#f"),
                (44..48, 0) => format!("urn:ietf:rfc:{k}"),
                (44..48, 1) => format!("urn:ietf:RFC:{k}"),
                (44..48, 2) => format!("URN:IETF:Rfc:{k}"),
                (44..48, _) => format!("urn:ietf:rfc:{k}?=q"),
                (_, 0) => format!("urn:ietf:params:x{k}"),
                (_, 1) => format!("urn:ietf:PARAMS:x{k}"),
                (_, 2) => format!("URN:ietf:params:x{k}"),
                (_, _) => format!("urn:ietf:params:X{k}"),
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
                    // The batch path (keys from key_shape); the reference
                    // takes its keys from a full parse.
                    let mut b = KeyBatch::new(0, 0, Some(Grammar::Rfc8141), chunk.len())
                        .with_ns_rules(rules)
                        .copying(copying);
                    for (offset, raw) in chunk {
                        let (name, fixes) = key_shape(raw.as_bytes(), Grammar::Rfc8141).unwrap();
                        b.push(*offset as usize, raw.as_bytes(), name, fixes);
                    }
                    if grouped {
                        b.group();
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
            let want: Vec<Class> = reference(&urns, rules).into_iter().collect();
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

    proptest::proptest! {
        /// Grouped by shard, each shard's notes are the batch's notes of
        /// that shard in the order they were added, as reading the
        /// ungrouped batch gives them.
        #[test]
        fn grouping_keeps_each_shards_notes_in_order(
            ids in proptest::collection::vec(0u32..5000, 0..400),
            regroup in proptest::bool::ANY,
            copying in proptest::bool::ANY,
        ) {
            let mut hay = Vec::new();
            let mut batch = KeyBatch::new(0, 0, None, ids.len()).copying(copying);
            for id in &ids {
                let urn = format!("urn:n:{id}");
                let (name, fixes) = key_shape(urn.as_bytes(), Grammar::Rfc8141).unwrap();
                batch.push(hay.len(), urn.as_bytes(), name, fixes);
                hay.extend_from_slice(urn.as_bytes());
                hay.push(b' ');
            }
            let mut grouped = batch.clone();
            grouped.group();
            if regroup {
                grouped.group();
            }
            for s in 0..SHARDS {
                let (mut want, mut got) = (Vec::new(), Vec::new());
                batch.occurrences(s, &hay, &mut want);
                grouped.occurrences(s, &hay, &mut got);
                let at = |v: &[(Occurrence, Option<Recheck>)]| v.iter().map(|(o, _)| (o.at, o.key.to_vec())).collect::<Vec<_>>();
                proptest::prop_assert_eq!(at(&got), at(&want));
            }
        }
    }

    #[test]
    fn changed_bytes_never_become_keys() {
        // The batch saw "urn:ab:c"; by the time it is inserted the bytes read
        // "urn:ab:\0" (a concurrent writer). Nothing is kept.
        let (name, fixes) = key_shape(b"urn:ab:c", Grammar::Rfc8141).unwrap();
        let mut b = KeyBatch::new(0, 0, Some(Grammar::Rfc8141), 1);
        b.push(0, b"urn:ab:c", name, fixes);
        let mut table = ShardedTable::new();
        table.absorb(&[(&b, &b"urn:ab:\0"[..])]);
        assert!(table.is_empty());
        // A copying batch checks its copy at once: bytes that read as zeros
        // by phase 1 (validated as "urn:ab:c" before) are not pushed.
        let mut b = KeyBatch::new(0, 0, Some(Grammar::Rfc8141), 1).copying(true);
        let now = b"urn:ab:\0";
        b.push(0, now, &now[..], fixes);
        assert!(b.is_empty());
        // Without the recheck (bytes that cannot change), the batch is trusted.
        let mut b = KeyBatch::new(0, 0, None, 1);
        b.push(0, b"urn:ab:c", name, fixes);
        table.absorb(&[(&b, &b"urn:ab:c"[..])]);
        assert_eq!(table.len(), 1);
    }

    /// A copying batch holds the URN's bytes as phase 1 read them: what
    /// the buffer reads by phase 2 does not matter, and the raw form and
    /// key are those of the copy (a key fixed from it, or its start).
    #[test]
    fn a_copying_batch_keeps_what_phase_1_read() {
        let mut b = KeyBatch::new(3, 100, Some(Grammar::Rfc8141), 2).copying(true);
        for (offset, urn) in [(0, &b"URN:AB:c%2f#f"[..]), (20, b"urn:cd:e")] {
            let (name, fixes) = key_shape(urn, Grammar::Rfc8141).unwrap();
            b.push(offset, urn, name, fixes);
        }
        let mut table = ShardedTable::new();
        table.absorb(&[(&b, &[0u8; 28][..])]);
        let mut got: Vec<_> = table.iter().map(|e| (e.key.to_vec(), e.raw.to_vec(), e.first, e.count)).collect();
        got.sort();
        assert_eq!(
            got,
            [
                (b"urn:ab:c%2F".to_vec(), b"URN:AB:c%2f#f".to_vec(), at(3, 100), 1),
                (b"urn:cd:e".to_vec(), b"urn:cd:e".to_vec(), at(3, 120), 1),
            ]
        );
    }

    /// Phase 1 read `seen`; phase 2 reads `now` at the same place. Whether
    /// the URN's key is kept.
    fn kept(seen: &[u8], now: &[u8], grammar: Grammar) -> bool {
        let (name, fixes) = key_shape(seen, grammar).unwrap();
        let mut b = KeyBatch::new(0, 0, Some(grammar), 1);
        b.push(0, seen, name, fixes);
        let mut table = ShardedTable::new();
        table.absorb(&[(&b, now)]);
        table.len() == 1
    }

    #[test]
    fn a_key_kept_is_the_key_of_the_bytes_stored() {
        let g = Grammar::Rfc8141;
        // Unchanged: kept, whether the key is the URN's own start or fixed.
        assert!(kept(b"urn:ab:c?+x", b"urn:ab:c?+x", g));
        assert!(kept(b"URN:AB:c%2f", b"URN:AB:c%2f", g));
        assert!(kept(b"urn:ab:c?b", b"urn:ab:c?b", Grammar::Rfc2141));
        // A changed key byte: not the key phase 1 hashed.
        assert!(!kept(b"urn:ab:c?+x", b"urn:ab:d?+x", g));
        assert!(!kept(b"URN:AB:c%2f", b"URN:AB:d%2f", g));
        assert!(!kept(b"urn:ab:c?b", b"urn:ab:d?b", Grammar::Rfc2141));
        // The name no longer ends where the key does.
        assert!(!kept(b"urn:ab:c?+x", b"urn:ab:cd+x", g));
        // Bytes that changed between the scan and phase 1: the scan's shape
        // (no fix-ups) applied to "urn:aB:c" gives a key that is not the
        // key of those bytes, though it hashes as phase 1 hashed it.
        let (_, scanned) = key_shape(b"urn:ab:c?+x", g).unwrap();
        let read = b"urn:aB:c?+x";
        let mut b = KeyBatch::new(0, 0, Some(g), 1);
        b.push(0, read, &read[..8], scanned);
        let mut table = ShardedTable::new();
        table.absorb(&[(&b, &read[..])]);
        assert!(table.is_empty());
        // A component changed, still printable and still after the name: the
        // key is the same, so it is kept (with the bytes as they are now).
        assert!(kept(b"urn:ab:c?+x", b"urn:ab:c#+y", g));
    }
}
