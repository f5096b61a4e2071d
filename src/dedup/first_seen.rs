//! Entries of many tables in first-seen order, for output.
//!
//! A table keeps its entries in the order they were stored, and callers
//! that feed occurrences in input order (`urnscan dedup` line by line,
//! `urnscan scan` input by input and window by window) store every key at
//! its first occurrence: each table is then already in first-seen order,
//! and the order of all of them is a k-way merge, with no sort and no
//! memory beyond a sample of positions.
//!
//! The merge is cut into ranges of about [`RANGE_ENTRIES`] entries by
//! position, so that several threads can format the output at once and
//! write it in order ([`crate::ordered::write_in_order`]): every 32nd
//! entry of each table is noted (24 bytes per 32 entries), the notes give
//! the boundaries, and a range finds its start in each table from the last
//! note before it.
//!
//! A table whose entries are not in position order (an earlier occurrence
//! inserted after a later one, as [`KeyTable::merge`] may do: the entry
//! moves to the arena's end) cannot be merged that way; then every entry's
//! place is listed and sorted by position instead, 32 bytes per entry.
//! The output is the same either way. A table notes the samples itself as
//! it writes its entries, while each is written at or after the position
//! of all before it, and so knows that it is in order; only a table that
//! is not is walked, to see whether its live entries still are. (Walking
//! every table for the samples was 3.5 % of the instructions of
//! `urnscan dedup` on a URN dataset.)

use std::cmp::Reverse;
use std::collections::binary_heap::{BinaryHeap, PeekMut};
use std::io::{self, Write};

use rayon::prelude::*;

use super::{Entry, KeyTable, Position};
use crate::ordered::write_in_order;

/// Entries per range of [`FirstSeenEntries`]: enough that finding each
/// table's start in a range is a small part of its work, few enough that
/// the ranges in flight (two per thread) hold a few MB of text.
pub const RANGE_ENTRIES: usize = 1 << 14;

/// Every `SAMPLE_STEP`-th entry of each table is noted: a range's start in
/// a table is found from the last note before it by skipping fewer than
/// this many entries, and the notes cost 24 bytes per `SAMPLE_STEP`
/// entries (2.3 MB for 3 M).
pub(super) const SAMPLE_STEP: usize = 32;

/// The entries of several tables in first-seen order (by
/// [`Entry::first`]), in ranges that can be handed out on their own; see
/// the module docs.
pub struct FirstSeenEntries<'t> {
    tables: &'t [KeyTable],
    plan: Plan,
    len: usize,
}

enum Plan {
    /// Every table is in position order. Per table, every
    /// [`SAMPLE_STEP`]-th entry's position and arena offset; range `i`
    /// holds the positions from `starts[i]` up to `starts[i + 1]` (the
    /// last one, to the end).
    Merged { samples: Vec<Vec<(Position, u64)>>, starts: Vec<Position> },
    /// Some table is not: every entry's position, table and offset, sorted.
    Sorted(Vec<(Position, usize, u64)>),
}

impl<'t> FirstSeenEntries<'t> {
    /// Orders the entries of `tables`, which must hold disjoint keys (as
    /// the shards of one [`super::ShardedTable`] do).
    pub fn new(tables: &'t [KeyTable]) -> FirstSeenEntries<'t> {
        let len = tables.iter().map(KeyTable::len).sum();
        let plan = match tables.par_iter().map(sample_table).collect::<Option<Vec<_>>>() {
            Some(samples) => {
                let mut noted: Vec<Position> = samples.iter().flatten().map(|&(at, _)| at).collect();
                noted.par_sort_unstable();
                let mut starts: Vec<Position> = noted.iter().step_by(RANGE_ENTRIES / SAMPLE_STEP).copied().collect();
                if let Some(first) = starts.first_mut() {
                    *first = Position::default();
                }
                Plan::Merged { samples, starts }
            }
            None => {
                let mut places: Vec<(Position, usize, u64)> = tables
                    .par_iter()
                    .enumerate()
                    .flat_map_iter(|(t, table)| table.iter_offsets().map(move |(offset, e)| (e.first, t, offset)))
                    .collect();
                places.par_sort_unstable();
                Plan::Sorted(places)
            }
        };
        FirstSeenEntries { tables, plan, len }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Number of ranges: together, in order, they hold every entry once.
    pub fn ranges(&self) -> usize {
        match &self.plan {
            Plan::Merged { starts, .. } => starts.len(),
            Plan::Sorted(places) => places.len().div_ceil(RANGE_ENTRIES),
        }
    }

    /// Hands the entries of range `i` (of [`FirstSeenEntries::ranges`]) to
    /// `emit` in order, stopping at its first error.
    pub fn for_each_in_range(&self, i: usize, emit: &mut dyn FnMut(&Entry<'t>) -> io::Result<()>) -> io::Result<()> {
        self.entries_in(i..i + 1).try_for_each(|e| emit(&e))
    }

    /// Every entry in first-seen order, on this thread: what
    /// [`FirstSeenEntries::for_each`] hands out, as an iterator.
    ///
    /// ```
    /// use urnscan::dedup::FirstSeenEntries;
    /// use urnscan::{KeyTable, Position};
    ///
    /// // Two tables of disjoint keys, each filled in input order.
    /// let mut tables = [KeyTable::new(), KeyTable::new()];
    /// for (offset, urn) in [b"urn:ab:2", b"urn:ab:1", b"urn:ab:2", b"urn:ab:3"].into_iter().enumerate() {
    ///     let at = Position { file: 0, offset: offset as u64 };
    ///     tables[usize::from(urn[7] % 2)].insert(urn, urn, at, 1);
    /// }
    /// let order = FirstSeenEntries::new(&tables);
    /// let listed: Vec<(&[u8], u64)> = order.iter().map(|e| (e.key, e.count)).collect();
    /// assert_eq!(listed, [(&b"urn:ab:2"[..], 2), (b"urn:ab:1", 1), (b"urn:ab:3", 1)]);
    /// ```
    pub fn iter(&self) -> impl Iterator<Item = Entry<'t>> + '_ {
        self.entries_in(0..self.ranges())
    }

    /// The entries of `ranges` (of [`FirstSeenEntries::ranges`]; none past
    /// the last), in order.
    fn entries_in(&self, ranges: std::ops::Range<usize>) -> impl Iterator<Item = Entry<'t>> + '_ {
        match &self.plan {
            Plan::Merged { samples, starts } => {
                // No range there: no table to merge.
                let lo = starts.get(ranges.start).copied();
                let hi = starts.get(ranges.end).copied();
                let tables = if lo.is_some() { self.tables } else { &[] };
                let lo = lo.unwrap_or_default();
                let cursors = tables
                    .iter()
                    .zip(samples)
                    .map(|(table, samples)| {
                        let before = samples.partition_point(|&(at, _)| at < lo);
                        let from = before.checked_sub(1).map_or(0, |j| samples[j].1);
                        table
                            .iter_offsets_from(from)
                            .map(|(_, e)| e)
                            .skip_while(move |e| e.first < lo)
                            .take_while(move |e| hi.is_none_or(|hi| e.first < hi))
                    })
                    .collect();
                Either::Merged(Merge::new(cursors))
            }
            Plan::Sorted(places) => {
                let start = places.len().min(ranges.start * RANGE_ENTRIES);
                let end = places.len().min(ranges.end * RANGE_ENTRIES);
                Either::Sorted(places[start..end].iter().map(|&(_, t, offset)| self.tables[t].entry_at(offset)))
            }
        }
    }

    /// Formats every entry with `format`, range by range on several threads,
    /// and writes the ranges to `out` in order
    /// ([`crate::ordered::write_in_order`]): the bytes of one `format` call
    /// per entry in [`FirstSeenEntries::for_each`]'s order.
    pub fn write_in_order(
        &self,
        out: &mut dyn Write,
        format: &(dyn Fn(&Entry<'_>, &mut Vec<u8>) -> io::Result<()> + Sync),
    ) -> io::Result<()> {
        let ranges: Vec<usize> = (0..self.ranges()).collect();
        write_in_order(&ranges, out, |&i, text| self.for_each_in_range(i, &mut |e| format(e, text)))
    }

    /// Hands every entry to `emit` in first-seen order, stopping at the
    /// first error.
    pub fn for_each(&self, emit: &mut dyn FnMut(&Entry<'t>) -> io::Result<()>) -> io::Result<()> {
        (0..self.ranges()).try_for_each(|i| self.for_each_in_range(i, emit))
    }
}

/// Every [`SAMPLE_STEP`]-th entry of `table` with its offset, or `None` if
/// its entries are not in position order. The table notes them as it
/// writes its entries in order (every caller that feeds occurrences in
/// input order); otherwise its entries are walked to see whether those
/// that are live still are in order.
fn sample_table(table: &KeyTable) -> Option<Vec<(Position, u64)>> {
    match table.first_samples() {
        Some(offsets) => Some(offsets.iter().map(|&offset| (table.entry_at(offset).first, offset)).collect()),
        None => walked_samples(table),
    }
}

/// [`sample_table`] by a walk over every entry.
fn walked_samples(table: &KeyTable) -> Option<Vec<(Position, u64)>> {
    let mut samples = Vec::with_capacity(table.len() / SAMPLE_STEP + 1);
    let mut last = Position::default();
    for (i, (offset, first)) in table.firsts_with_offsets().enumerate() {
        if first < last {
            return None;
        }
        last = first;
        if i % SAMPLE_STEP == 0 {
            samples.push((first, offset));
        }
    }
    Some(samples)
}

/// The entries of [`FirstSeenEntries::entries_in`] by plan.
enum Either<M, S> {
    Merged(M),
    Sorted(S),
}

impl<'t, M: Iterator<Item = Entry<'t>>, S: Iterator<Item = Entry<'t>>> Iterator for Either<M, S> {
    type Item = Entry<'t>;

    #[inline]
    fn next(&mut self) -> Option<Entry<'t>> {
        match self {
            Either::Merged(m) => m.next(),
            Either::Sorted(s) => s.next(),
        }
    }
}

/// K-way merge of sources each already in first-seen order. The heap holds
/// the heads' positions beside their sources, so a comparison reads two
/// positions from the heap itself rather than copying two entries out of
/// their sources. With 64 tables that took the output of 3 million classes
/// at two threads from 400–475 ms to 234–252 ms (sampled with `perf`).
/// Each position and its source are one integer ([`heap_key`]), so that a
/// comparison is one of two integers rather than a chain over fields.
struct Merge<'t, I> {
    sources: Vec<I>,
    heads: Vec<Option<Entry<'t>>>,
    heap: BinaryHeap<Reverse<u128>>,
}

impl<'t, I: Iterator<Item = Entry<'t>>> Merge<'t, I> {
    fn new(mut sources: Vec<I>) -> Merge<'t, I> {
        assert!(sources.len() <= SOURCE_MASK as usize + 1, "too many sources to merge");
        let heads: Vec<Option<Entry<'t>>> = sources.iter_mut().map(Iterator::next).collect();
        // Positions are unique per class, so the source never decides the order.
        let heap =
            heads.iter().enumerate().filter_map(|(i, head)| head.map(|e| Reverse(heap_key(e.first, i)))).collect();
        Merge { sources, heads, heap }
    }
}

impl<'t, I: Iterator<Item = Entry<'t>>> Iterator for Merge<'t, I> {
    type Item = Entry<'t>;

    #[inline]
    fn next(&mut self) -> Option<Entry<'t>> {
        let mut top = self.heap.peek_mut()?;
        let i = (top.0 & SOURCE_MASK) as usize;
        let next = self.sources[i].next();
        match next {
            Some(e) => top.0 = heap_key(e.first, i),
            None => drop(PeekMut::pop(top)),
        }
        // A source in the heap has its head.
        std::mem::replace(&mut self.heads[i], next)
    }
}

/// Bits of a heap key that hold the source.
const SOURCE_MASK: u128 = u32::MAX as u128;

/// The heap key of a head at `at` from source `source` (below 2^32): file,
/// offset and source from the top bits down, so that keys order as
/// `(at, source)` does.
fn heap_key(at: Position, source: usize) -> u128 {
    u128::from(at.file) << 96 | u128::from(at.offset) << 32 | source as u128 & SOURCE_MASK
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(file: u32, offset: u64) -> Position {
        Position { file, offset }
    }

    /// The reference: every entry of every table, sorted by position.
    fn by_position(tables: &[KeyTable]) -> Vec<(Position, Vec<u8>, u64)> {
        let mut all: Vec<_> =
            tables.iter().flat_map(KeyTable::iter).map(|e| (e.first, e.key.to_vec(), e.count)).collect();
        all.sort();
        all
    }

    /// What [`FirstSeenEntries`] hands out, range by range.
    fn listed(tables: &[KeyTable]) -> Vec<(Position, Vec<u8>, u64)> {
        let order = FirstSeenEntries::new(tables);
        let mut got = Vec::new();
        for i in 0..order.ranges() {
            order
                .for_each_in_range(i, &mut |e| {
                    got.push((e.first, e.key.to_vec(), e.count));
                    Ok(())
                })
                .unwrap();
        }
        assert_eq!(got.len(), order.len());
        got
    }

    /// What [`FirstSeenEntries::iter`] gives.
    fn iterated(tables: &[KeyTable]) -> Vec<(Position, Vec<u8>, u64)> {
        FirstSeenEntries::new(tables).iter().map(|e| (e.first, e.key.to_vec(), e.count)).collect()
    }

    proptest::proptest! {
        /// The iterator gives what the callbacks give, and what a plain
        /// reference gives: each key at its first occurrence, in the order
        /// of the occurrences, with how many there were. The occurrences
        /// are inserted in input order, and with `earlier`, one more comes
        /// last with a position before all others (the sorted plan).
        #[test]
        fn iter_gives_each_key_at_its_first_occurrence(
            keys in proptest::collection::vec(0u8..60, 0..3000),
            tables_n in 1usize..6,
            earlier in proptest::option::of(0u8..60),
        ) {
            let key = |k: u8| format!("urn:k:{k}").into_bytes();
            let mut tables: Vec<KeyTable> = (0..tables_n).map(|_| KeyTable::new()).collect();
            let mut occurrences: Vec<(Position, u8)> = Vec::new();
            for (i, &k) in keys.iter().enumerate() {
                occurrences.push((at(1, i as u64), k));
            }
            occurrences.extend(earlier.map(|k| (at(0, 7), k)));
            for &(first, k) in &occurrences {
                tables[usize::from(k) % tables_n].insert(&key(k), &key(k), first, 1);
            }
            // The reference: the occurrences in position order, each key
            // listed when first met and counted after.
            occurrences.sort();
            let mut reference: Vec<(Position, Vec<u8>, u64)> = Vec::new();
            for (first, k) in occurrences {
                match reference.iter_mut().find(|(_, listed, _)| *listed == key(k)) {
                    Some(listed) => listed.2 += 1,
                    None => reference.push((first, key(k), 1)),
                }
            }
            let got = iterated(&tables);
            proptest::prop_assert_eq!(&got, &listed(&tables));
            proptest::prop_assert_eq!(&got, &reference);
        }
    }

    proptest::proptest! {
        /// Keys dealt to tables by a hash of the key and inserted in
        /// position order (as every caller in this crate does), or in any
        /// order: either way the entries come out by first position, each
        /// once, however many ranges the output is cut into.
        #[test]
        fn entries_come_out_by_first_position(
            occurrences in proptest::collection::vec((0u8..40, 0u32..3, 0u64..1_000_000), 0..3000),
            tables_n in 1usize..6,
            in_order in proptest::bool::ANY,
        ) {
            let mut occurrences = occurrences;
            if in_order {
                occurrences.sort_by_key(|&(_, file, offset)| (file, offset));
            }
            let mut tables: Vec<KeyTable> = (0..tables_n).map(|_| KeyTable::new()).collect();
            let mut seen = std::collections::BTreeSet::new();
            for &(k, file, offset) in &occurrences {
                // Positions are distinct, as they are for URNs and lines.
                if !seen.insert((file, offset)) {
                    continue;
                }
                let key = format!("urn:k:{k}");
                tables[usize::from(k) % tables_n].insert(key.as_bytes(), key.as_bytes(), at(file, offset), 1);
            }
            proptest::prop_assert_eq!(listed(&tables), by_position(&tables));
        }

        /// Heap keys order as `(position, source)` does, over the whole
        /// range of each field.
        #[test]
        fn heap_keys_order_as_positions_then_sources(
            a in (proptest::num::u32::ANY, proptest::num::u64::ANY, 0usize..=u32::MAX as usize),
            b in (proptest::num::u32::ANY, proptest::num::u64::ANY, 0usize..=u32::MAX as usize),
            same_file in proptest::bool::ANY,
        ) {
            let b = if same_file { (a.0, b.1, b.2) } else { b };
            let (pa, pb) = (at(a.0, a.1), at(b.0, b.1));
            proptest::prop_assert_eq!(heap_key(pa, a.2).cmp(&heap_key(pb, b.2)), (pa, a.2).cmp(&(pb, b.2)));
            proptest::prop_assert_eq!((heap_key(pa, a.2) & SOURCE_MASK) as usize, a.2);
        }
    }

    #[test]
    fn many_ranges_and_both_plans() {
        // 100,000 keys, so several ranges of 16,384; inserted in order, then
        // one table given an earlier occurrence of one of its keys, which
        // moves that entry to its arena's end (the sorted plan).
        let mut tables: Vec<KeyTable> = (0..4).map(|_| KeyTable::new()).collect();
        for i in 0..100_000u64 {
            let key = format!("urn:n:{i}");
            tables[(i % 4) as usize].insert(key.as_bytes(), key.as_bytes(), at(1, 10 * i + 10), 1);
        }
        let order = FirstSeenEntries::new(&tables);
        assert!(matches!(order.plan, Plan::Merged { .. }) && order.ranges() > 4, "{} ranges", order.ranges());
        assert_eq!(listed(&tables), by_position(&tables));
        assert_eq!(iterated(&tables), by_position(&tables));
        order.for_each_in_range(order.ranges(), &mut |_| panic!("no range past the last")).unwrap();

        tables[2].insert(b"urn:n:50002", b"URN:n:50002", at(0, 5), 1);
        let order = FirstSeenEntries::new(&tables);
        assert!(matches!(order.plan, Plan::Sorted(_)) && order.ranges() > 4);
        let got = listed(&tables);
        assert_eq!(got, by_position(&tables));
        assert_eq!(got[0], (at(0, 5), b"urn:n:50002".to_vec(), 2));
        assert_eq!(iterated(&tables), got);
        order.for_each_in_range(order.ranges(), &mut |_| panic!("no range past the last")).unwrap();
    }

    proptest::proptest! {
        /// The samples a table notes as it writes entries in position order
        /// are those a walk over its entries takes; once an entry is written
        /// out of order it notes none, and the walk decides.
        #[test]
        fn noted_samples_are_the_walked_ones(
            keys in proptest::prop_oneof![proptest::collection::vec(0u32..500, 0..2000), proptest::collection::vec(0u32..2, 0..4)],
            earlier in proptest::option::of(0u32..500),
        ) {
            let mut table = KeyTable::new();
            for (i, k) in keys.iter().enumerate() {
                let key = format!("urn:k:{k}");
                table.insert(key.as_bytes(), key.as_bytes(), at(1, i as u64), 1);
            }
            let noted = table.first_samples().map(|offsets| offsets.len());
            proptest::prop_assert_eq!(sample_table(&table), walked_samples(&table));
            proptest::prop_assert_eq!(noted, walked_samples(&table).map(|s| s.len()));
            if let Some(k) = earlier {
                // An occurrence before all others: a new entry, or one that
                // replaces a stored key's.
                let key = format!("urn:k:{k}");
                table.insert(key.as_bytes(), key.as_bytes(), at(0, 0), 1);
                proptest::prop_assert_eq!(table.first_samples().is_some(), keys.is_empty());
                let firsts: Vec<Position> = table.iter().map(|e| e.first).collect();
                proptest::prop_assert_eq!(sample_table(&table).is_some(), firsts.is_sorted());
            }
        }
    }

    #[test]
    fn no_tables_or_empty_tables_give_nothing() {
        assert_eq!(FirstSeenEntries::new(&[]).ranges(), 0);
        assert_eq!(FirstSeenEntries::new(&[]).iter().count(), 0);
        let empty = [KeyTable::new(), KeyTable::new()];
        let order = FirstSeenEntries::new(&empty);
        assert!(order.is_empty());
        let mut n = 0;
        order
            .for_each(&mut |_| {
                n += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(n, 0);
        assert_eq!(order.iter().count(), 0);
    }

    #[test]
    fn the_first_error_stops_the_output() {
        let mut tables = vec![KeyTable::new()];
        for i in 0..10u64 {
            let key = format!("urn:n:{i}");
            tables[0].insert(key.as_bytes(), key.as_bytes(), at(0, i), 1);
        }
        let mut n = 0;
        let result = FirstSeenEntries::new(&tables).for_each(&mut |_| {
            n += 1;
            if n == 3 {
                return Err(io::Error::other("full"));
            }
            Ok(())
        });
        assert!(result.is_err());
        assert_eq!(n, 3);
    }
}
