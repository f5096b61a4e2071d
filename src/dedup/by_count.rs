//! Entries of many tables by count: most occurrences first, equal counts
//! in key order. This is `--sort count`, the answer to "which URNs occur
//! most?" that `sort | uniq -c | sort -rn` gives for lines.
//!
//! Count order is built on key order ([`SortedEntries`], sorted in
//! parallel already), as a *stable counting sort* of it by count rather
//! than a second comparison sort:
//!
//! 1. the counts are read in key order, a range of entries per task (each
//!    read is of an entry somewhere in the tables, so the tasks overlap
//!    their cache misses, and the entries a few places ahead are
//!    prefetched);
//! 2. a tally of the count values gives each value its first position,
//!    the largest value first;
//! 3. one pass over the places in key order puts each where its count's
//!    next position is, so equal counts keep key order.
//!
//! A comparison sort of (count, key) would compare keys on every tie, and
//! nearly every entry ties: in most dumps the usual count is 1. The tally
//! is an array for counts below [`DENSE_COUNTS`] and an ordered map for
//! the rare larger ones, so that a count of any size (a URN seen 10¹⁰
//! times in a large log) is ordered exactly.
//!
//! Memory: 16 bytes per entry beyond the tables while it is built (the
//! counts, and the places in count order), 8 afterwards: 48 and 24 MB for
//! 3 M distinct keys. Key order itself needs none (it lives in the
//! tables' indexes, see [`super::sorted`]).

use std::collections::BTreeMap;
use std::io::{self, Write};
use std::ops::Range;

use rayon::prelude::*;

use super::sorted::{entries_at, write_ranges, RANGE_ENTRIES};
use super::{Entry, KeyTable, SortedEntries};

/// Entries of several tables by count, most first, then by key bytes; see
/// the module docs.
pub struct CountedEntries<'t> {
    tables: &'t [KeyTable],
    /// Places (as [`SortedEntries`] keeps them) in count order.
    places: Vec<u64>,
}

/// Counts below this are tallied in an array; larger ones in a map.
pub const DENSE_COUNTS: usize = 1 << 12;

impl<'t> CountedEntries<'t> {
    /// The entries of `sorted`, reordered by count (a new list of 8 bytes
    /// per entry; `sorted` may be dropped afterwards).
    pub fn new(sorted: &SortedEntries<'t>) -> CountedEntries<'t> {
        let starts: Vec<usize> = (0..sorted.len()).step_by(RANGE_ENTRIES).collect();
        let counts: Vec<u64> = starts
            .par_iter()
            .flat_map_iter(|&start| sorted.iter_range(start..start + RANGE_ENTRIES).map(|e| e.count))
            .collect();
        let mut next = Positions::new(&counts);
        let mut places = vec![0; counts.len()];
        for (place, &count) in sorted.places().zip(&counts) {
            places[next.take(count)] = place;
        }
        CountedEntries { tables: sorted.tables(), places }
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.places.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.places.is_empty()
    }

    /// The entries by count, most first, equal counts by key.
    pub fn iter(&self) -> impl Iterator<Item = Entry<'t>> + '_ {
        self.iter_range(0..self.len())
    }

    /// Entries `range` of [`CountedEntries::iter`] (clamped to the
    /// length): for handing them out from several threads, a range each.
    pub fn iter_range(&self, range: Range<usize>) -> impl Iterator<Item = Entry<'t>> + '_ {
        let end = range.end.min(self.len());
        let start = range.start.min(end);
        entries_at(self.tables, &self.places[start..end])
    }

    /// Formats every entry with `format`, [`RANGE_ENTRIES`] at a time on
    /// several threads, and writes the ranges to `out` in order: the bytes
    /// of one `format` call per entry in count order (as
    /// [`SortedEntries::write_in_order`] does in key order).
    pub fn write_in_order(
        &self,
        out: &mut dyn Write,
        format: &(dyn Fn(&Entry<'_>, &mut Vec<u8>) -> io::Result<()> + Sync),
    ) -> io::Result<()> {
        write_ranges(self.len(), out, format, |range| self.iter_range(range))
    }
}

/// Per count value, the next position of an entry of that count in count
/// order (steps 2 and 3 of the module docs).
struct Positions {
    /// Counts below [`DENSE_COUNTS`], by value.
    dense: Vec<usize>,
    /// Larger counts.
    sparse: BTreeMap<u64, usize>,
}

impl Positions {
    /// Tallies `counts` and turns the tallies into first positions, from
    /// the largest count down.
    fn new(counts: &[u64]) -> Positions {
        let mut dense = vec![0; DENSE_COUNTS];
        let mut sparse = BTreeMap::new();
        for &count in counts {
            *Positions::slot(&mut dense, &mut sparse, count) += 1;
        }
        let mut at = 0;
        for n in sparse.values_mut().rev().chain(dense.iter_mut().rev()) {
            let tally = *n;
            *n = at;
            at += tally;
        }
        Positions { dense, sparse }
    }

    /// The position of the next entry of `count`, moving on past it.
    fn take(&mut self, count: u64) -> usize {
        let slot = Positions::slot(&mut self.dense, &mut self.sparse, count);
        *slot += 1;
        *slot - 1
    }

    fn slot<'a>(dense: &'a mut [usize], sparse: &'a mut BTreeMap<u64, usize>, count: u64) -> &'a mut usize {
        match usize::try_from(count).ok().and_then(|c| dense.get_mut(c)) {
            Some(slot) => slot,
            None => sparse.entry(count).or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dedup::Position;
    use std::collections::BTreeMap;

    /// The reference: every entry, sorted by count (descending) and then
    /// key, as `sort_by` with the two comparisons spelled out.
    fn reference(tables: &[KeyTable]) -> Vec<(Vec<u8>, u64)> {
        let mut all: Vec<(Vec<u8>, u64)> =
            tables.iter().flat_map(KeyTable::iter).map(|e| (e.key.to_vec(), e.count)).collect();
        all.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        all
    }

    /// `keys` with their counts, dealt round-robin into `n` tables.
    fn tables(keys: &BTreeMap<String, u64>, n: usize) -> Vec<KeyTable> {
        let mut tables: Vec<KeyTable> = (0..n).map(|_| KeyTable::new()).collect();
        for (i, (k, &count)) in keys.iter().enumerate() {
            let at = Position { file: 0, offset: i as u64 };
            tables[i % n].insert(k.as_bytes(), k.as_bytes(), at, count);
        }
        tables
    }

    fn counted(tables: &mut [KeyTable]) -> Vec<(Vec<u8>, u64)> {
        let sorted = SortedEntries::reusing_indexes(tables);
        let counted = CountedEntries::new(&sorted);
        drop(sorted);
        counted.iter().map(|e| (e.key.to_vec(), e.count)).collect()
    }

    proptest::proptest! {
        /// Counts small and large (past the dense tally, and near
        /// `u64::MAX`), many ties: the order is the reference's, and
        /// ranges cut it anywhere.
        #[test]
        fn count_order_is_the_reference_order(
            keys in proptest::collection::btree_map(
                "urn:[ab]{1,3}:[ab%0-9]{0,12}",
                proptest::prop_oneof![
                    1u64..4,
                    (DENSE_COUNTS as u64 - 2)..(DENSE_COUNTS as u64 + 2),
                    proptest::strategy::Just(u64::MAX),
                    1u64..=u64::MAX,
                ],
                0..300,
            ),
            n in 1usize..6,
            cut in 0usize..320,
        ) {
            let mut tables = tables(&keys, n);
            let want = reference(&tables);
            let got = counted(&mut tables);
            proptest::prop_assert_eq!(&got, &want);
            let sorted = SortedEntries::reusing_indexes(&mut tables);
            let counted = CountedEntries::new(&sorted);
            let halves: Vec<Vec<u8>> = counted
                .iter_range(0..cut)
                .chain(counted.iter_range(cut..usize::MAX))
                .map(|e| e.key.to_vec())
                .collect();
            let keys: Vec<Vec<u8>> = want.into_iter().map(|(k, _)| k).collect();
            proptest::prop_assert_eq!(halves, keys);
        }
    }

    /// Worked by hand: 3, 1, 3, 2, 1 occurrences of keys b, a, d, c, e give
    /// b and d (3, by key), c (2), a and e (1, by key).
    #[test]
    fn most_first_and_ties_by_key() {
        let keys: BTreeMap<String, u64> =
            [("urn:x:b", 3), ("urn:x:a", 1), ("urn:x:d", 3), ("urn:x:c", 2), ("urn:x:e", 1)]
                .into_iter()
                .map(|(k, c)| (k.to_owned(), c))
                .collect();
        let got = counted(&mut tables(&keys, 2));
        let got: Vec<(&str, u64)> = got.iter().map(|(k, c)| (std::str::from_utf8(k).unwrap_or("?"), *c)).collect();
        assert_eq!(got, [("urn:x:b", 3), ("urn:x:d", 3), ("urn:x:c", 2), ("urn:x:a", 1), ("urn:x:e", 1)]);
    }

    #[test]
    fn empty_tables_give_nothing() {
        let mut none: Vec<KeyTable> = (0..3).map(|_| KeyTable::new()).collect();
        assert!(counted(&mut none).is_empty());
        let sorted = SortedEntries::reusing_indexes(&mut none);
        let counted = CountedEntries::new(&sorted);
        assert!(counted.is_empty());
        assert_eq!(counted.iter_range(5..usize::MAX).count(), 0);
    }

    /// The formatted bytes are those of one `format` call per entry in
    /// [`CountedEntries::iter`]'s order, over several ranges.
    #[test]
    fn written_in_order_across_ranges() {
        let keys: BTreeMap<String, u64> =
            (0..3 * RANGE_ENTRIES as u64 + 5).map(|i| (format!("urn:n:{i:06}"), i % 7 + 1)).collect();
        let mut tables = tables(&keys, 4);
        let sorted = SortedEntries::reusing_indexes(&mut tables);
        let counted = CountedEntries::new(&sorted);
        let line = |e: &Entry<'_>, text: &mut Vec<u8>| {
            text.extend_from_slice(e.key);
            writeln!(text, " {}", e.count)
        };
        let mut written = Vec::new();
        counted.write_in_order(&mut written, &line).unwrap_or_default();
        let mut one_by_one = Vec::new();
        counted.iter().try_for_each(|e| line(&e, &mut one_by_one)).unwrap_or_default();
        assert_eq!(written, one_by_one);
        assert!(written.starts_with(b"urn:n:000006 7\nurn:n:000013 7\n"));
    }
}
