//! Entries of many tables in key order, for output.
//!
//! The sorted list is all the output adds to the tables, and on a large
//! dataset it is what decides the peak memory: sorting [`Entry`] values
//! directly costs about 80 bytes per distinct key (two slices, a count, a
//! position), 240 MB for 3 M keys, more than the tables themselves. Here
//! it is one `u64` per entry, the entry's *place* (its table and arena
//! offset), and [`SortedEntries::reusing_indexes`] keeps the places in the
//! tables' own indexes, which the output does not need (an index has at
//! least 4/3 slots per entry): the output then needs no memory beyond the
//! tables but a bucket's worth and one table's list per thread while the
//! tables are grouped (3 M keys in 64 tables: 375 KB each). (Sorted as one
//! list of 24-byte handles with 16 bytes of key in them, 3 M keys took 72
//! MB more; as a fresh list of places, 24 MB, which the allocator did not
//! always take from the indexes just freed.)
//!
//! The sort is a sample sort, so that the wider handles it needs exist for
//! one bucket at a time:
//!
//! 1. Every 64th entry of each table is a sample; the samples are sorted
//!    and every 256th of them is a *splitter*, so that the splitters cut
//!    the keys into buckets of about 16,000.
//! 2. Each table lists its entries' bucket numbers and offsets in its
//!    buffer and groups them by bucket (the splitters below each key
//!    counted by 16 of its bytes, whole keys compared only on ties: see
//!    `Splitters`; then one scatter through a temporary list the size of
//!    the table's), all tables in parallel. The scatter keeps each
//!    bucket's entries in arena order, so the bucket sorts read each
//!    table's keys front to back; swapping in place needs no list but
//!    leaves them shuffled, and the bucket sorts then wait on memory more
//!    (measured in `BENCHMARKS.md`).
//! 3. Each bucket, whose entries lie in one part of every table's buffer,
//!    is sorted on its own, in parallel, through a temporary 24-byte handle
//!    per entry (16 bytes of the key as two integers beside the place), and
//!    written back over its parts in order. Key order is then bucket by
//!    bucket, and within a bucket, part by part.
//!
//! The sort of handles never reads a key while comparing: a comparison
//! that had to would wait for a cache miss, and keys often share long
//! prefixes (`urn:nbn:de:…`). Handles are sorted by the 16 bytes that
//! follow what every key of the bucket shares: the common prefix of the
//! two splitters around it (at least `urn:`, which every key starts
//! with). Each run of handles that tie is then given the key's next 16
//! bytes, read once per handle, and sorted again, and so on (a
//! most-significant-digit radix sort with 128-bit digits). Keys hold no
//! zero bytes, so zero padding puts a shorter key first, as byte order
//! does. (With 8 bytes per round, the rounds for ties cost a third of the
//! sort on 256 MiB of dense text: each reads every tied key again, a
//! cache miss; 16 bytes made the sort 5–9 % faster there and on the 10 M
//! line dataset, in `urnscan bench`'s `+ sort` row. Skipping the shared
//! prefix made `dedup --sort key` 4–5 % faster on 3 M lines of one
//! library's `urn:nbn:de:bsz:16-heidok-…`, where every bucket's keys
//! tied in their first round before, and changed nothing measurable on the
//! generated workloads, whose buckets mix namespaces.)

use std::cmp::Ordering;
use std::io::{self, Write};
use std::ops::Range;

use rayon::prelude::*;

use super::first_seen::SAMPLE_STEP;
use super::{Entry, KeyTable};
use crate::ordered::write_in_order;

/// Entries of several tables sorted by key bytes; see the module docs.
pub struct SortedEntries<'t> {
    tables: &'t [KeyTable],
    /// Per table, places (see [`place`]): the table's share of each bucket,
    /// bucket by bucket, rewritten in key order by the bucket sorts.
    buffers: Vec<Vec<u64>>,
    /// The non-empty parts of the buffers in key order.
    parts: Vec<Part>,
    len: usize,
}

impl std::fmt::Debug for SortedEntries<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SortedEntries").field("len", &self.len).finish_non_exhaustive()
    }
}

/// Places `range` of buffer `buffer`, the entries of ranks `rank..`.
#[derive(Clone, Debug)]
struct Part {
    buffer: usize,
    range: Range<usize>,
    rank: usize,
}

/// Entries per range of output in key order ([`SortedEntries::iter_range`]),
/// for callers that format ranges on several threads. Finding a range's
/// start is one binary search over the parts, so short ranges cost nothing
/// measurable, and the ranges in flight (two rounds of two per thread, see
/// [`crate::ordered`]) come on top of the whole table at the run's peak of
/// memory: with ranges of 16,384 entries, as in first-seen order, `scan
/// --unique -j2` of a 10 M-line dataset (3 M keys) peaked at 201,996–208,144
/// KB (16 runs), with 4,096 at 199,720–202,700, in the same time (1,397
/// against 1,391 ms, 7 interleaved rounds; 320 against 321 on 256 MiB of
/// dense text).
pub const RANGE_ENTRIES: usize = 1 << 12;

/// Bits of a place that hold the arena offset (the index addresses 40; the
/// table number goes above).
const OFFSET_BITS: u32 = 48;
const OFFSET_MASK: u64 = (1 << OFFSET_BITS) - 1;

/// An entry's place: its table's number and its arena offset in one word.
fn place(table: usize, offset: u64) -> u64 {
    (table as u64) << OFFSET_BITS | offset
}

/// The table and arena offset of a place.
fn at(tables: &[KeyTable], place: u64) -> (&KeyTable, u64) {
    (&tables[(place >> OFFSET_BITS) as usize], place & OFFSET_MASK)
}

/// How the entries are cut into buckets: every `sample_step`-th entry of
/// a table is a sample, every `samples_per_bucket`-th sample a splitter.
#[derive(Clone, Copy, Debug)]
struct Buckets {
    sample_step: usize,
    samples_per_bucket: usize,
}

/// Buckets of about 16,000 entries: their handles (384 KiB) stay in cache
/// while sorted, and 3 M keys make some 180 buckets for the threads to
/// share.
const BUCKETS: Buckets = Buckets { sample_step: 64, samples_per_bucket: 256 };

impl<'t> SortedEntries<'t> {
    /// Sorts the entries of `tables` (in parallel) into a new list of
    /// 8 bytes per entry. Keys must be distinct across the tables, as the
    /// shards of one [`super::ShardedTable`] are.
    pub fn new(tables: &'t [KeyTable]) -> SortedEntries<'t> {
        let buffers = tables.iter().map(|_| Vec::new()).collect();
        SortedEntries::sort(tables, buffers, BUCKETS)
    }

    /// [`SortedEntries::new`], with the list kept in the tables' indexes,
    /// which they give up ([`KeyTable::take_index`]; the next insert
    /// rebuilds one): the sort then needs no memory beyond the tables but a
    /// bucket's worth and, while grouping, one table's list per thread.
    pub fn reusing_indexes(tables: &'t mut [KeyTable]) -> SortedEntries<'t> {
        let buffers = tables.iter_mut().map(KeyTable::take_index).collect();
        SortedEntries::sort(tables, buffers, BUCKETS)
    }

    fn sort(tables: &'t [KeyTable], mut buffers: Vec<Vec<u64>>, sizes: Buckets) -> SortedEntries<'t> {
        let splitters = splitters(tables, sizes);
        let buckets = splitters.len() + 1;
        let counts: Vec<Vec<usize>> = buffers
            .par_iter_mut()
            .zip(tables.par_iter().enumerate())
            .map(|(buffer, (t, table))| group_by_bucket(buffer, t, table, &splitters))
            .collect();
        // Each bucket's part of every buffer, for the bucket sorts.
        let mut by_bucket: Vec<Vec<&mut [u64]>> = (0..buckets).map(|_| Vec::with_capacity(tables.len())).collect();
        for (buffer, counts) in buffers.iter_mut().zip(&counts) {
            for (b, part) in split_by(buffer, counts.iter().copied()).into_iter().enumerate() {
                by_bucket[b].push(part);
            }
        }
        by_bucket.into_par_iter().enumerate().for_each(|(b, mut parts)| {
            sort_bucket(&mut parts, tables, splitters.shared_prefix(b));
        });
        let mut parts = Vec::new();
        let mut rank = 0;
        // Where each buffer's share of the current bucket starts.
        let mut starts = vec![0; tables.len()];
        for b in 0..buckets {
            for (t, (counts, start)) in counts.iter().zip(&mut starts).enumerate() {
                let n = counts[b];
                if n > 0 {
                    parts.push(Part { buffer: t, range: *start..*start + n, rank });
                    rank += n;
                }
                *start += n;
            }
        }
        SortedEntries { tables, buffers, parts, len: rank }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries in key order. Each is decoded from its table as it is
    /// handed out, with the entries a few places ahead prefetched: in key
    /// order they are all over memory.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'t>> + '_ {
        self.iter_range(0..self.len())
    }

    /// Formats every entry with `format`, [`RANGE_ENTRIES`] at a time on
    /// several threads, and writes the ranges to `out` in order
    /// ([`crate::ordered::write_in_order`]): the bytes of one `format` call
    /// per entry in key order (as [`super::FirstSeenEntries::write_in_order`]
    /// does in first-seen order).
    pub fn write_in_order(
        &self,
        out: &mut dyn Write,
        format: &(dyn Fn(&Entry<'_>, &mut Vec<u8>) -> io::Result<()> + Sync),
    ) -> io::Result<()> {
        write_ranges(self.len(), out, format, |range| self.iter_range(range))
    }

    /// Entries `range` of [`SortedEntries::iter`] (clamped to the length):
    /// for handing them out from several threads, a range each.
    pub fn iter_range(&self, range: Range<usize>) -> impl Iterator<Item = Entry<'t>> + '_ {
        let tables = self.tables;
        let end = range.end.min(self.len);
        let start = range.start.min(end);
        let first = self.parts.partition_point(|p| p.rank + p.range.len() <= start);
        self.parts[first..].iter().take_while(move |p| p.rank < end).flat_map(move |p| {
            // The part's places within `start..end`, by rank.
            let from = p.range.start + start.saturating_sub(p.rank);
            let to = p.range.end.min(p.range.start + (end - p.rank));
            entries_at(tables, &self.buffers[p.buffer][from..to])
        })
    }

    /// The places of the entries, in key order: for
    /// [`super::CountedEntries`], which reorders them.
    pub(super) fn places(&self) -> impl Iterator<Item = u64> + '_ {
        self.parts.iter().flat_map(|p| self.buffers[p.buffer][p.range.clone()].iter().copied())
    }

    /// The tables the entries are in.
    pub(super) fn tables(&self) -> &'t [KeyTable] {
        self.tables
    }
}

/// Formats entries `0..len`, handed out by `range` [`RANGE_ENTRIES`] at a
/// time on several threads, and writes the ranges to `out` in order
/// ([`crate::ordered::write_in_order`]): the bytes of one `format` call per
/// entry in order.
pub(super) fn write_ranges<'t, I: Iterator<Item = Entry<'t>>>(
    len: usize,
    out: &mut dyn Write,
    format: &(dyn Fn(&Entry<'_>, &mut Vec<u8>) -> io::Result<()> + Sync),
    range: impl Fn(Range<usize>) -> I + Sync,
) -> io::Result<()> {
    let starts: Vec<usize> = (0..len).step_by(RANGE_ENTRIES).collect();
    write_in_order(&starts, out, |&start, text| range(start..start + RANGE_ENTRIES).try_for_each(|e| format(&e, text)))
}

/// The entries at `places`, in order, each decoded from its table as it is
/// handed out, with the entries a few places ahead prefetched (an order
/// other than the tables' own is all over memory).
pub(super) fn entries_at<'t, 'p>(tables: &'t [KeyTable], places: &'p [u64]) -> impl Iterator<Item = Entry<'t>> + 'p
where
    't: 'p,
{
    places.iter().enumerate().map(move |(i, &here)| {
        if let Some(&ahead) = places.get(i + AHEAD) {
            let (table, offset) = at(tables, ahead);
            table.prefetch_entry_at(offset);
        }
        let (table, offset) = at(tables, here);
        table.entry_at(offset)
    })
}

/// The keys that cut the entries into buckets, in key order, and what
/// the search for a key's bucket compares first.
///
/// A key's bucket is found from 16 of its bytes as one integer, counted
/// against the splitters' same 16 bytes ([`count_below`]); whole keys are
/// compared only where those tie. The 16 bytes start after the prefix
/// every splitter shares, since bytes there tell no two keys apart, and a
/// key without that prefix is before or after every splitter. (A binary
/// search over the splitters, comparing 8 bytes from after `urn:` and
/// whole keys on ties, took 25 of the 33 ms the grouping spent at one
/// thread on 256 MiB of dense text, 28 ns a key. With 8 bytes here, 43 %
/// of those keys tied with a splitter (`urn:example:`, `urn:isbn:978`,
/// `urn:ietf:par…`) and were compared whole; with 16, 12 %.)
struct Splitters<'t> {
    /// The splitter keys, ascending.
    keys: Vec<&'t [u8]>,
    /// Per splitter, its bytes `shared..shared + 16` (see [`digits_at`]):
    /// ascending too.
    digits: Vec<u128>,
    /// How many leading bytes all splitters share.
    shared: usize,
}

impl<'t> Splitters<'t> {
    fn new(keys: Vec<&'t [u8]>) -> Splitters<'t> {
        let shared = match (keys.first(), keys.last()) {
            (Some(first), Some(last)) => common_prefix(first, last),
            _ => 0,
        };
        let digits = keys.iter().map(|k| digits_at(k, shared)).collect();
        Splitters { keys, digits, shared }
    }

    /// Number of splitters (one less than the buckets).
    fn len(&self) -> usize {
        self.keys.len()
    }

    /// The bucket of `key`: the number of splitters not above it.
    fn bucket_of(&self, key: &[u8]) -> usize {
        let Some(first) = self.keys.first() else { return 0 };
        // The splitters all start with `first[..shared]`; a key that does
        // not is below or above all of them (a shorter one that is a
        // prefix of it, below).
        match key[..key.len().min(self.shared)].cmp(&first[..self.shared]) {
            Ordering::Less => 0,
            Ordering::Greater => self.len(),
            Ordering::Equal => {
                let digit = digits_at(key, self.shared);
                // The digits agree with byte order wherever they differ.
                let below = count_below(&self.digits, digit);
                let ties = self.digits[below..].iter().take_while(|&&d| d == digit).count();
                below + self.keys[below..below + ties].partition_point(|&s| s <= key)
            }
        }
    }

    /// How many bytes every key of bucket `b` shares: the common prefix of
    /// the splitters on either side (keys `k` with `lower <= k < upper`
    /// all start with it), or `urn:` for the first and last buckets.
    fn shared_prefix(&self, b: usize) -> usize {
        match (b.checked_sub(1).and_then(|b| self.keys.get(b)), self.keys.get(b)) {
            (Some(lower), Some(upper)) => common_prefix(lower, upper).max(4),
            _ => 4,
        }
    }
}

/// The splitters that cut the entries of `tables` into buckets of about
/// `sample_step * samples_per_bucket`; at most `u16::MAX` of them, so a
/// bucket number fits 16 bits.
fn splitters(tables: &[KeyTable], sizes: Buckets) -> Splitters<'_> {
    let mut samples: Vec<Handle> = tables
        .par_iter()
        .enumerate()
        .flat_map_iter(|(t, table)| {
            sample_offsets(table, sizes.sample_step).map(move |o| handle(table.key_at(o), 4, place(t, o)))
        })
        .collect();
    sort_from(&mut samples, 4, tables);
    let step = sizes.samples_per_bucket.max(samples.len().div_ceil(usize::from(u16::MAX))).max(1);
    let keys = samples
        .iter()
        .skip(step)
        .step_by(step)
        .map(|h| {
            let (table, offset) = at(tables, h[PLACE]);
            table.key_at(offset)
        })
        .collect();
    Splitters::new(keys)
}

/// How many of `digits` (ascending) are below `digit`: halving steps down
/// to a window of at most [`COUNTED`], then a count of the window. A count
/// is a row of independent compares, where each halving step's load waits
/// for the compare before it: with 55 splitters, on 256 MiB of dense text
/// at one thread, the grouping took 31 ms with a binary search over the
/// 16-byte digits (branching or not: the same), 22 with a count of all of
/// them. Halving stays for the first steps, so that the count does not
/// grow with the splitters (up to 65,535 of them).
fn count_below(digits: &[u128], digit: u128) -> usize {
    // Invariant: every digit before `base` is below `digit`, none from
    // `base + size` on is.
    let (mut base, mut size) = (0, digits.len());
    while size > COUNTED {
        let half = size / 2;
        base += half * usize::from(digits[base + half - 1] < digit);
        size -= half;
    }
    base + digits[base..base + size].iter().filter(|&&d| d < digit).count()
}

/// The window [`count_below`] counts rather than halves.
const COUNTED: usize = 32;

/// The arena offsets of every `step`-th entry of `table`: from the offsets
/// the table noted as it wrote its entries, where `step` is a multiple of
/// their step and they are all of live entries (see
/// [`KeyTable::first_samples`]), which spares a walk over every entry (the
/// splitters took 7.0 ms at one thread on 256 MiB of dense text with it,
/// 1.6 without; 24 and 6 on the 10 M-line dataset); by that walk
/// otherwise.
fn sample_offsets(table: &KeyTable, step: usize) -> Box<dyn Iterator<Item = u64> + '_> {
    match table.first_samples() {
        Some(noted) if step % SAMPLE_STEP == 0 => Box::new(noted.iter().step_by(step / SAMPLE_STEP).copied()),
        _ => Box::new(table.iter_offsets().step_by(step).map(|(offset, _)| offset)),
    }
}

/// How many leading bytes `a` and `b` share.
fn common_prefix(a: &[u8], b: &[u8]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Fills `buffer` with the places of `table` (number `t`) grouped by
/// bucket, in bucket order, and returns how many each bucket holds.
fn group_by_bucket(buffer: &mut Vec<u64>, t: usize, table: &KeyTable, splitters: &Splitters<'_>) -> Vec<usize> {
    let mut counts = vec![0; splitters.len() + 1];
    // The bucket number goes where the table number will: a place's top
    // 16 bits, while the places are grouped.
    buffer.clear();
    buffer.reserve_exact(table.len());
    buffer.extend(table.keys_with_offsets().map(|(offset, key)| {
        let b = splitters.bucket_of(key);
        counts[b] += 1;
        (b as u64) << OFFSET_BITS | offset
    }));
    // Scattered in order, so that each bucket lists its entries in arena
    // order and the bucket sorts read each table's keys front to back.
    let mut next: Vec<usize> = counts.iter().scan(0, |sum, &n| Some(std::mem::replace(sum, *sum + n))).collect();
    let mut grouped = vec![0u64; buffer.len()];
    for &p in buffer.iter() {
        let b = (p >> OFFSET_BITS) as usize;
        grouped[next[b]] = place(t, p & OFFSET_MASK);
        next[b] += 1;
    }
    buffer.copy_from_slice(&grouped);
    counts
}

/// `slice` cut into consecutive parts of the given sizes (which add up to
/// at most its length).
fn split_by<T>(mut slice: &mut [T], sizes: impl Iterator<Item = usize>) -> Vec<&mut [T]> {
    let mut parts = Vec::new();
    for n in sizes {
        let (part, rest) = slice.split_at_mut(n);
        parts.push(part);
        slice = rest;
    }
    parts
}

/// Sorts one bucket, whose places are `parts` and whose keys all share
/// their first `from` bytes, by key through a temporary [`Handle`] per
/// entry (see the module docs), and writes the places back over the parts
/// in order. Starting the handles past the shared bytes spares the ties
/// a bucket of long common prefixes (`urn:nbn:de:...`) would have in
/// its first rounds, each a read of every tied key.
fn sort_bucket(parts: &mut [&mut [u64]], tables: &[KeyTable], from: usize) {
    let mut handles = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
    for part in parts.iter() {
        for (i, &p) in part.iter().enumerate() {
            if let Some(&ahead) = part.get(i + AHEAD) {
                let (table, offset) = at(tables, ahead);
                table.prefetch_entry_at(offset);
            }
            let (table, offset) = at(tables, p);
            handles.push(handle(table.key_at(offset), from, p));
        }
    }
    sort_from(&mut handles, from, tables);
    let sorted = handles.iter().map(|h| h[PLACE]);
    for (slot, p) in parts.iter_mut().flat_map(|part| part.iter_mut()).zip(sorted) {
        *slot = p;
    }
}

/// How far ahead [`SortedEntries::iter`] prefetches.
const AHEAD: usize = 8;

/// A sort handle: two digits of the key (bytes `from..from + 16`, see
/// [`sort_from`]) and the entry's place.
type Handle = [u64; 3];

/// Where a [`Handle`] keeps the place.
const PLACE: usize = 2;

/// The handle of `key` at `place`, with the key's bytes `from..from + 16`.
fn handle(key: &[u8], from: usize, place: u64) -> Handle {
    [digit_at(key, from), digit_at(key, from + 8), place]
}

/// Sorts `handles`, whose digits are bytes `from..from + 16` of their keys,
/// by key bytes (see the module docs). Runs of ties are resolved in
/// parallel, each reading its keys' next 16 bytes with the entries a few
/// places ahead prefetched.
fn sort_from(handles: &mut [Handle], from: usize, tables: &[KeyTable]) {
    let key = |h: &Handle| {
        let (table, offset) = at(tables, h[PLACE]);
        table.key_at(offset)
    };
    // Compared as one u128 rather than as a tuple of the two digits: 7 %
    // fewer instructions in the sort, as many branches (callgrind).
    handles.par_sort_unstable_by_key(|h| u128::from(h[0]) << 64 | u128::from(h[1]));
    let next = from + 16;
    let mut ties: Vec<&mut [Handle]> =
        handles.chunk_by_mut(|a, b| a[..PLACE] == b[..PLACE]).filter(|run| run.len() > 1).collect();
    ties.par_iter_mut().for_each(|run| {
        let mut longer = false;
        for i in 0..run.len() {
            if let Some(ahead) = run.get(i + AHEAD) {
                let (table, offset) = at(tables, ahead[PLACE]);
                table.prefetch_entry_at(offset);
            }
            let key = key(&run[i]);
            longer |= key.len() > next;
            run[i][0] = digit_at(key, next);
            run[i][1] = digit_at(key, next + 8);
        }
        // Distinct keys differ further on, unless all of them ended
        // already (equal keys, which one table never holds).
        if longer {
            sort_from(run, next, tables);
        }
    });
}

/// Bytes `from..from + 8` of `key` as a big-endian integer, zero-padded:
/// ordering by it agrees with ordering by the bytes wherever the two differ
/// there.
fn digit_at(key: &[u8], from: usize) -> u64 {
    let tail = key.get(from..).unwrap_or_default();
    if let Some(eight) = tail.first_chunk::<8>() {
        return u64::from_be_bytes(*eight);
    }
    let mut bytes = [0u8; 8];
    let n = tail.len();
    bytes[..n].copy_from_slice(&tail[..n]);
    u64::from_be_bytes(bytes)
}

/// Bytes `from..from + 16` of `key` as a big-endian integer, zero-padded:
/// two [`digit_at`]s.
fn digits_at(key: &[u8], from: usize) -> u128 {
    u128::from(digit_at(key, from)) << 64 | u128::from(digit_at(key, from + 8))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::Position;
    use std::collections::BTreeSet;

    /// `keys` dealt round-robin into `n` tables.
    fn tables(keys: &BTreeSet<String>, n: usize) -> Vec<KeyTable> {
        let mut tables: Vec<KeyTable> = (0..n).map(|_| KeyTable::new()).collect();
        for (i, k) in keys.iter().enumerate() {
            let at = Position { file: 0, offset: i as u64 };
            tables[i % n].insert(k.as_bytes(), k.as_bytes(), at, 1);
        }
        tables
    }

    proptest::proptest! {
        /// Whatever the buckets (down to one entry per sample and a
        /// splitter per sample), the order is byte order, and ranges cut it
        /// anywhere.
        #[test]
        fn buckets_give_byte_order(
            keys in proptest::collection::btree_set("urn:[ab]{1,3}:[ab%0-9]{0,30}", 0..200),
            n in 1usize..6,
            sample_step in proptest::prop_oneof![1usize..5, proptest::strategy::Just(SAMPLE_STEP), proptest::strategy::Just(2 * SAMPLE_STEP)],
            samples_per_bucket in 1usize..5,
            cut in 0usize..220,
        ) {
            let mut tables = tables(&keys, n);
            let sizes = Buckets { sample_step, samples_per_bucket };
            let fresh: Vec<Vec<u8>> = SortedEntries::sort(&tables, tables.iter().map(|_| Vec::new()).collect(), sizes)
                .iter()
                .map(|e| e.key.to_vec())
                .collect();
            let buffers = tables.iter_mut().map(KeyTable::take_index).collect();
            let sorted = SortedEntries::sort(&tables, buffers, sizes);
            let want: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
            let got: Vec<&[u8]> = sorted.iter().map(|e| e.key).collect();
            proptest::prop_assert_eq!(&got, &want);
            proptest::prop_assert!(fresh.iter().map(Vec::as_slice).eq(want.iter().copied()));
            let halves: Vec<&[u8]> =
                sorted.iter_range(0..cut).chain(sorted.iter_range(cut..usize::MAX)).map(|e| e.key).collect();
            proptest::prop_assert_eq!(&halves, &want);
        }
    }

    proptest::proptest! {
        /// A key's bucket is the number of splitters not above it, however
        /// long a prefix the splitters share, whether the key has it or
        /// part of it, and when it ties with splitters in the 16 bytes
        /// compared first.
        #[test]
        fn a_key_goes_after_every_splitter_not_above_it(
            common in "(nbn:de:|nbn:d|x)",
            suffixes in proptest::collection::btree_set("(a{16})?[ab]{0,6}", 1..80),
            others in proptest::collection::btree_set("urn:(nbn:de:|x)[ab]{0,5}", 0..3),
            keys in proptest::collection::vec("urn:(nbn:de:|nbn:d|nbn:e|nbn|x|)[ab]{0,22}", 1..40),
        ) {
            // Splitters that often share more than `urn:`, and keys that
            // share less, all of it, or a prefix of it.
            let splitters: BTreeSet<String> =
                suffixes.iter().map(|s| format!("urn:{common}{s}")).chain(others).collect();
            let splitters = Splitters::new(splitters.iter().map(|s| s.as_bytes()).collect());
            // Each splitter, one byte longer and one shorter, tie with it.
            let near = splitters.keys.iter().flat_map(|s| [s.to_vec(), [s, &b"a"[..]].concat(), s[..s.len() - 1].to_vec()]);
            for key in keys.iter().map(|k| k.as_bytes().to_vec()).chain(near) {
                let key = &key[..];
                let want = splitters.keys.iter().filter(|&&s| s <= key).count();
                proptest::prop_assert_eq!(splitters.bucket_of(key), want, "{}", String::from_utf8_lossy(key));
            }
        }
    }

    /// Keys that share long prefixes and differ at one byte anywhere, or
    /// only in length, tie for several radix rounds: every byte of every
    /// round must count (random keys seldom tie past the first round).
    #[test]
    fn keys_that_differ_at_any_one_byte_sort_in_byte_order() {
        let base = format!("urn:nbn:de:{}", "m".repeat(60));
        let mut keys: BTreeSet<String> = (5..=base.len()).map(|n| base[..n].to_owned()).collect();
        for at in 4..base.len() {
            for c in ["a", "z"] {
                keys.insert(format!("{}{c}{}", &base[..at], &base[at + 1..]));
            }
        }
        let want: Vec<&[u8]> = keys.iter().map(|k| k.as_bytes()).collect();
        for sizes in [BUCKETS, Buckets { sample_step: 3, samples_per_bucket: 2 }] {
            let tables = tables(&keys, 3);
            let buffers = tables.iter().map(|_| Vec::new()).collect();
            let got: Vec<Vec<u8>> =
                SortedEntries::sort(&tables, buffers, sizes).iter().map(|e| e.key.to_vec()).collect();
            assert!(got.iter().map(Vec::as_slice).eq(want.iter().copied()), "{sizes:?}");
        }
    }

    #[test]
    fn a_bucket_shares_the_prefix_of_its_splitters() {
        let splitters = Splitters::new(vec![&b"urn:nbn:de:a1"[..], b"urn:nbn:de:a15", b"urn:nbn:fi:x", b"urn:oid:1"]);
        let prefixes: Vec<usize> = (0..=splitters.len()).map(|b| splitters.shared_prefix(b)).collect();
        // Before the first and after the last splitter: only "urn:".
        assert_eq!(prefixes, [4, "urn:nbn:de:a1".len(), "urn:nbn:".len(), "urn:".len(), 4]);
        // Every key of a bucket does start with that prefix.
        for key in [&b"urn:nbn:de:a1"[..], b"urn:nbn:de:a10", b"urn:nbn:de:a14zz", b"urn:nbn:de:b", b"urn:nbn:fi:w"] {
            let b = splitters.bucket_of(key);
            assert_eq!(key[..prefixes[b]], splitters.keys[b - 1][..prefixes[b]], "{}", String::from_utf8_lossy(key));
        }
    }

    #[test]
    fn splitters_cut_evenly_sized_buckets() {
        let keys: BTreeSet<String> = (0..100_000).map(|i| format!("urn:nbn:de:{:08}", i * 7919 % 100_000)).collect();
        let tables = tables(&keys, 8);
        let splitters = splitters(&tables, BUCKETS);
        // 100,000 keys in buckets of about 64 * 256 = 16,384.
        assert!((4..=8).contains(&splitters.len()), "{} splitters", splitters.len());
        let mut sizes = vec![0usize; splitters.len() + 1];
        for k in &keys {
            sizes[splitters.bucket_of(k.as_bytes())] += 1;
        }
        // Every bucket but the last (the remainder) is near 16,384.
        let (last, full) = sizes.split_last().unwrap();
        assert!(full.iter().all(|&n| (12_000..=20_000).contains(&n)) && *last <= 20_000, "{sizes:?}");
        // Splitters are in key order, and a splitter opens its own bucket.
        assert!(splitters.keys.windows(2).all(|w| w[0] < w[1]));
        for (i, s) in splitters.keys.iter().enumerate() {
            assert_eq!(splitters.bucket_of(s), i + 1);
        }
    }
}
