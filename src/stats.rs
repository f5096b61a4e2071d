//! Statistics per namespace: for each distinct NID, how many URNs of it
//! were found, how many distinct keys (RFC 8141 §3 classes) they make, and
//! its class (RFC 8141 §5), most occurrences first. What `urnscan scan
//! --stats` prints, from a finished key table, and `urnscan dedup --stats`,
//! from the partitions of a line dedup
//! ([`LineDedup::finish_stats`](crate::lines::LineDedup::finish_stats)).
//!
//! ```
//! use std::io;
//! use urnscan::job::{self, JobOptions, Sink};
//! use urnscan::source::InputError;
//! use urnscan::stats::NidStats;
//! use urnscan::NidClass;
//!
//! /// Only the inputs that cannot be read are heard of: no event is asked for.
//! struct Unreadable(usize);
//! impl Sink for Unreadable {
//!     fn input_error(&mut self, error: &InputError) -> io::Result<()> {
//!         eprintln!("{error}");
//!         self.0 += 1;
//!         Ok(())
//!     }
//! }
//!
//! let dir = std::env::temp_dir().join(format!("urnscan-stats-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! std::fs::write(dir.join("a.txt"), "urn:ISBN:0451450523, urn:isbn:0451450523, urn:isbn:0140449116 and urn:urn-7:x")?;
//! let opts = JobOptions { events: false, ..JobOptions::default() };
//! let mut unreadable = Unreadable(0);
//! let outcome = job::run(&[dir.clone()], &opts, &mut unreadable)?;
//! assert_eq!(unreadable.0, 0);
//! let stats = NidStats::from_table(&outcome.table);
//! let rows: Vec<(&[u8], NidClass, u64, u64)> =
//!     stats.rows().map(|r| (r.nid, r.class, r.occurrences, r.unique)).collect();
//! assert_eq!(rows, [(&b"isbn"[..], NidClass::Formal, 3, 2), (b"urn-7", NidClass::Informal, 1, 1)]);
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), io::Error>(())
//! ```
//!
//! Two ways to count, both from the finished key table (one entry per
//! distinct key, with its count):
//!
//! - **In key order** ([`NidRuns`]), when the entries are read sorted
//!   anyway (as `--unique` prints them): keys of one NID share the prefix
//!   `urn:NID:`, so they come as one run, and a NID is counted by
//!   comparing it with the previous one. No NID is hashed or looked up
//!   among 100,000 others.
//! - **By hash** ([`NidStats::from_table`]), in any order: every shard's
//!   entries counted into maps keyed by the NID, in parallel.
//!
//! # Memory
//!
//! A dataset can hold hundreds of thousands of NIDs (the 10 M-line
//! benchmark dataset has 412,000), so a row is kept small: the NIDs' bytes
//! lie one after the other in one buffer, and a row holds where its NID is,
//! the two counts and the class, 32 bytes. (With a `String` per NID in
//! each counted run and again in each row, `scan --unique --stats` on that
//! dataset peaked at 246,056–263,916 KB against 196,648–198,192 for `scan
//! --unique`; with these rows, at 220,936–221,328.)

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::Range;

use rayon::prelude::*;

use crate::dedup::{KeyTable, ShardedTable};
use crate::hashed::{Hashed, StoredHash};
use crate::platform::prefetch::prefetch;
use crate::{NidClass, NidClassifier};

/// The rows of the statistics: distinct NIDs, most occurrences first, then
/// by NID bytes.
#[derive(Clone, Debug, Default)]
pub struct NidStats {
    text: Vec<u8>,
    rows: Vec<Row>,
}

/// One row: a NID and its counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NidRow<'s> {
    /// Lower-case, as in the keys: ASCII by both grammars.
    pub nid: &'s [u8],
    /// Its class: formal, informal, reserved, experimental or unregistered ([`NidClass`]).
    pub class: NidClass,
    /// URNs of this NID, every occurrence counted (at most `u64::MAX`:
    /// the sums saturate, as a key's count does).
    pub occurrences: u64,
    /// Distinct keys of this NID.
    pub unique: u64,
}

impl NidStats {
    /// Counts the entries of `table` by NID, in any order (see the module
    /// docs): hash maps filled on the current rayon pool.
    pub fn from_table(table: &ShardedTable) -> NidStats {
        from_tables(table.shards())
    }

    /// [`NidStats::from_table`] over tables that hold disjoint keys, as
    /// the partitions of [`LineDedup`](crate::lines::LineDedup) do (a key
    /// in two tables would be counted twice as unique).
    pub fn from_tables(tables: &[KeyTable]) -> NidStats {
        from_tables(tables)
    }

    /// How many distinct NIDs (rows) there are.
    pub fn len(&self) -> usize {
        self.rows.len()
    }

    /// No NID at all (no URN was counted).
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// The rows, most occurrences first, then by NID bytes.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = NidRow<'_>> + '_ {
        self.rows.iter().map(|r| NidRow {
            nid: &self.text[r.nid()],
            class: r.class,
            occurrences: r.occurrences,
            unique: r.unique,
        })
    }
}

#[derive(Clone, Copy, Debug)]
struct Row {
    occurrences: u64,
    unique: u64,
    /// The NID is `text[start..start + len]`.
    start: usize,
    len: u32,
    class: NidClass,
}

impl Row {
    fn nid(&self) -> Range<usize> {
        self.start..self.start + self.len as usize
    }
}

/// Counts by NID of entries that come in key order (see the module docs),
/// a block of entries at a time: the runs of consecutive blocks join where
/// a NID spans the boundary ([`NidRuns::joined`]).
///
/// A run's NID is copied when the run starts, while its key is in cache
/// from printing: kept as a reference into the table, each NID was read
/// again when the rows were made, a cache miss per NID (on 256 MiB of
/// dense text with 130,000 NIDs, most of the rows' cost).
///
/// Entries out of key order are not merged: a NID met again after another
/// one gets a second row. In key order the rows are those of
/// [`NidStats::from_table`]:
///
/// ```
/// use urnscan::stats::{NidRuns, NidStats};
/// use urnscan::{Grammar, Position, ShardedTable};
///
/// let mut table = ShardedTable::new();
/// for (i, urn) in ["urn:isbn:1", "URN:ISSN:2", "urn:ISBN:1", "urn:isbn:3"].iter().enumerate() {
///     let urn = urnscan::parse(urn.as_bytes(), Grammar::Rfc8141).unwrap();
///     table.insert(urn.key().as_bytes(), urn.as_bytes(), Position { file: 0, offset: i as u64 }, 1);
/// }
/// let mut runs = NidRuns::default();
/// for e in table.sorted().iter() {
///     runs.add(e.nid(), e.count);
/// }
/// let in_key_order: Vec<(Vec<u8>, u64, u64)> =
///     runs.into_stats().rows().map(|r| (r.nid.to_vec(), r.occurrences, r.unique)).collect();
/// let by_hash: Vec<(Vec<u8>, u64, u64)> =
///     NidStats::from_table(&table).rows().map(|r| (r.nid.to_vec(), r.occurrences, r.unique)).collect();
/// assert_eq!(in_key_order, [(b"isbn".to_vec(), 3, 2), (b"issn".to_vec(), 1, 1)]);
/// assert_eq!(in_key_order, by_hash);
/// ```
#[derive(Clone, Debug, Default)]
pub struct NidRuns {
    text: Vec<u8>,
    rows: Vec<Row>,
}

impl NidRuns {
    /// Counts one distinct key of `nid`, seen `count` times.
    pub fn add(&mut self, nid: &[u8], count: u64) {
        match self.rows.last_mut() {
            Some(last) if self.text[last.nid()] == *nid => {
                last.occurrences = last.occurrences.saturating_add(count);
                last.unique = last.unique.saturating_add(1);
            }
            _ => self.push(nid, count, 1),
        }
    }

    /// A new row, whatever the last one holds.
    fn push(&mut self, nid: &[u8], occurrences: u64, unique: u64) {
        let start = self.text.len();
        self.text.extend_from_slice(nid);
        // A NID is part of a key, which is at most `MAX_URN_LEN` bytes.
        let len = nid.len().min(crate::MAX_URN_LEN) as u32;
        self.rows.push(Row { occurrences, unique, start, len, class: NidClass::Unregistered });
    }

    /// The runs of consecutive blocks as one: only a block's first run can
    /// join the last one before it, the others are distinct NIDs already.
    /// The result is sized once, from the blocks' lengths.
    pub fn joined(blocks: Vec<NidRuns>) -> NidRuns {
        let mut all = NidRuns {
            text: Vec::with_capacity(blocks.iter().map(|b| b.text.len()).sum()),
            rows: Vec::with_capacity(blocks.iter().map(|b| b.rows.len()).sum()),
        };
        for block in blocks {
            let mut rows = block.rows.iter();
            if let Some(first) = block.rows.first() {
                let nid = &block.text[first.nid()];
                match all.rows.last_mut() {
                    Some(last) if all.text[last.nid()] == *nid => {
                        last.occurrences = last.occurrences.saturating_add(first.occurrences);
                        last.unique = last.unique.saturating_add(first.unique);
                        rows.next();
                    }
                    _ => {}
                }
            }
            let shift = all.text.len();
            all.text.extend_from_slice(&block.text);
            all.rows.extend(rows.map(|r| Row { start: r.start + shift, ..*r }));
        }
        all
    }

    /// The rows: each NID classified, most occurrences first, then by NID.
    pub fn into_stats(self) -> NidStats {
        let NidRuns { text, mut rows } = self;
        let classifier = NidClassifier::new();
        // Hundreds of thousands of NIDs: classified and sorted in parallel
        // (on one thread, 50 and 33 ms of a 180 ms tail for 130,000 NIDs).
        rows.par_iter_mut().for_each(|r| r.class = classifier.classify(&text[r.nid()]));
        // NIDs are distinct: the order is total, and an unstable sort is exact.
        rows.par_sort_unstable_by(|a, b| {
            b.occurrences.cmp(&a.occurrences).then_with(|| text[a.nid()].cmp(&text[b.nid()]))
        });
        NidStats { text, rows }
    }
}

/// Counts the entries of `tables` (a table's shards, or disjoint tables) by
/// NID in hash maps.
///
/// One entry per distinct key: its NID hashed once, with foldhash, and kept
/// as bytes; only the distinct NIDs are copied out. The tables are counted
/// in parallel into maps split by that hash, so that two threads' maps are
/// merged part by part in parallel too (sums, so the order of merging does
/// not matter): merged whole, 130,000 NIDs took 30 ms of one thread at the
/// end of a run.
fn from_tables(tables: &[KeyTable]) -> NidStats {
    const PARTS: usize = 16;
    let hasher = foldhash::fast::FixedState::with_seed(0x6e69_6473);
    let empty = || -> Vec<ByNid<'_>> { (0..PARTS).map(|_| ByNid::default()).collect() };
    let parts = tables
        .par_iter()
        // One set of maps per thread: every shard holds keys of nearly
        // every NID, so each set ends up with all of them, and the extra
        // sets rayon's fold would start (one per split) only added memory
        // and merges.
        .with_min_len(tables.len().div_ceil(rayon::current_num_threads()))
        .fold(empty, |mut parts, shard| {
            for e in shard.iter() {
                let nid = Hashed::new(e.nid(), &hasher);
                let slot = parts[nid.part(PARTS)].entry(nid).or_default();
                slot.0 = slot.0.saturating_add(e.count);
                slot.1 = slot.1.saturating_add(1);
            }
            parts
        })
        .reduce(empty, |a, b| a.into_par_iter().zip(b).map(|(a, b)| merge_counts(a, b)).collect());
    let runs: Vec<NidRuns> = parts.into_par_iter().map(copied_out).collect();
    NidRuns::joined(runs).into_stats()
}

/// Occurrences and distinct keys by NID.
///
/// A NID carries its hash, computed once ([`Hashed`]): hashed by the map,
/// a NID was hashed once to choose its part, again to find its slot, and
/// again at every growth of a map and every merge; with the probing, the
/// maps took a tenth of a `scan --stats` run on dense text with 130,000
/// NIDs (`perf`).
type ByNid<'t> = HashMap<Hashed<'t>, (u64, u64), BuildHasherDefault<StoredHash>>;

/// `a` and `b` in one map: counts of the same NID added.
fn merge_counts<'t>(a: ByNid<'t>, b: ByNid<'t>) -> ByNid<'t> {
    let (small, mut large) = if a.len() < b.len() { (a, b) } else { (b, a) };
    for (nid, (occurrences, unique)) in small {
        let slot = large.entry(nid).or_default();
        slot.0 = slot.0.saturating_add(occurrences);
        slot.1 = slot.1.saturating_add(unique);
    }
    large
}

/// The NIDs of `counts` copied out of the key table, with their counts, one
/// row each. A NID's bytes are those of the key where it was first seen,
/// all over the table, so the NIDs a few entries ahead are prefetched: read
/// one after the other, 130,000 NIDs cost 5 % of a `scan --stats` run on
/// dense text (`perf`).
fn copied_out(counts: ByNid<'_>) -> NidRuns {
    let counts: Vec<(Hashed<'_>, (u64, u64))> = counts.into_iter().collect();
    let mut runs = NidRuns {
        text: Vec::with_capacity(counts.iter().map(|(nid, _)| nid.bytes.len()).sum()),
        rows: Vec::with_capacity(counts.len()),
    };
    for (i, (nid, (occurrences, unique))) in counts.iter().enumerate() {
        if let Some((ahead, _)) = counts.get(i + AHEAD) {
            prefetch(ahead.bytes);
        }
        runs.push(nid.bytes, *occurrences, *unique);
    }
    runs
}

/// How many NIDs ahead [`copied_out`] prefetches.
const AHEAD: usize = 8;

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Distinct keys in key order, cut into blocks anywhere: the joined
        /// runs are the counts a map keyed by each key's NID gives, one row
        /// per NID. The NIDs are prefixes of each other (`a`, `a-b`, `ab`,
        /// `abc`): a run is continued by its own NID only.
        #[test]
        fn nid_runs_equal_counting_in_a_map(
            entries in prop::collection::btree_map((0usize..4, "[a-c:]{0,3}"), 1u64..5, 0..200),
            cuts in prop::collection::vec(0usize..200, 0..8),
        ) {
            let nids = ["a", "a-b", "ab", "abc"];
            // What `Entry::nid` gives for these keys: the text between the
            // first two colons.
            fn nid_of(key: &str) -> &[u8] {
                key.split(':').nth(1).unwrap().as_bytes()
            }
            let keys: BTreeMap<String, u64> =
                entries.iter().map(|((n, nss), &count)| (format!("urn:{}:{nss}", nids[*n]), count)).collect();
            let keys: Vec<(String, u64)> = keys.into_iter().collect();
            let mut want: BTreeMap<&[u8], (u64, u64)> = BTreeMap::new();
            for (key, count) in &keys {
                let slot = want.entry(nid_of(key)).or_default();
                slot.0 += count;
                slot.1 += 1;
            }
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(keys.len())).collect();
            cuts.push(0);
            cuts.push(keys.len());
            cuts.sort();
            let blocks: Vec<NidRuns> = cuts
                .windows(2)
                .map(|block| {
                    let mut runs = NidRuns::default();
                    for (key, count) in &keys[block[0]..block[1]] {
                        runs.add(nid_of(key), *count);
                    }
                    runs
                })
                .collect();
            let all = NidRuns::joined(blocks);
            let mut got: Vec<(&[u8], (u64, u64))> =
                all.rows.iter().map(|r| (&all.text[r.nid()], (r.occurrences, r.unique))).collect();
            // One row per NID, in key order (which is not NID order: `a-b:`
            // sorts before `a:`).
            got.sort();
            prop_assert_eq!(got, want.into_iter().collect::<Vec<_>>());
        }

        /// The rows come most occurrences first, then by NID bytes, each
        /// NID once with its own counts and the classifier's class.
        #[test]
        fn rows_are_sorted_and_classified(
            counts in prop::collection::btree_map("[a-z0-9]{1,3}(-[a-z0-9]{1,3})?", (1u64..4, 1u64..3), 0..60),
        ) {
            let mut runs = NidRuns::default();
            for (nid, &(occurrences, unique)) in &counts {
                runs.push(nid.as_bytes(), occurrences, unique);
            }
            let stats = runs.into_stats();
            let got: Vec<(Vec<u8>, NidClass, u64, u64)> =
                stats.rows().map(|r| (r.nid.to_vec(), r.class, r.occurrences, r.unique)).collect();
            let mut want: Vec<(Vec<u8>, NidClass, u64, u64)> = counts
                .iter()
                .map(|(nid, &(o, u))| (nid.clone().into_bytes(), crate::classify_nid(nid.as_bytes()), o, u))
                .collect();
            want.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
            prop_assert_eq!(got, want);
        }
    }

    #[test]
    fn nids_of_equal_hash_are_counted_apart() {
        let nid = |hash, bytes: &'static [u8]| Hashed { hash, bytes };
        let count = |map: &mut ByNid<'static>, n: Hashed<'static>| {
            let slot = map.entry(n).or_default();
            slot.0 += 1;
            slot.1 += 1;
        };
        let (mut a, mut b) = (ByNid::default(), ByNid::default());
        for n in [nid(7, b"isbn"), nid(7, b"issn"), nid(7, b"isbn"), nid(8, b"ab")] {
            count(&mut a, n);
        }
        for n in [nid(7, b"issn"), nid(9, b"urn-7")] {
            count(&mut b, n);
        }
        let mut got: Vec<(&[u8], (u64, u64))> = merge_counts(a, b).into_iter().map(|(n, c)| (n.bytes, c)).collect();
        got.sort();
        let want: Vec<(&[u8], (u64, u64))> =
            vec![(b"ab", (1, 1)), (b"isbn", (2, 2)), (b"issn", (2, 2)), (b"urn-7", (1, 1))];
        assert_eq!(got, want);
        // The part comes from bits the map leaves alone, and is in range.
        assert!((0..1000u64).map(|i| nid(i << 32, b"x").part(16)).all(|p| p < 16));
        assert_eq!(nid(5 << 32, b"x").part(16), 5);
    }

    /// A NID's occurrences add up the counts of its keys, which saturate at
    /// `u64::MAX` ([`KeyTable`]): the sums saturate too, in a run, when runs
    /// of blocks are joined, and when maps are merged (an overflow panicked
    /// in debug builds and wrapped in release ones).
    #[test]
    fn sums_saturate_at_u64_max() {
        let mut runs = NidRuns::default();
        runs.add(b"ab", u64::MAX);
        runs.add(b"ab", 5);
        let mut more = NidRuns::default();
        more.add(b"ab", u64::MAX - 1);
        let all = NidRuns::joined(vec![runs, more]);
        assert_eq!((all.rows[0].occurrences, all.rows[0].unique), (u64::MAX, 3));

        let (mut a, mut b) = (ByNid::default(), ByNid::default());
        a.insert(Hashed { hash: 1, bytes: b"ab" }, (u64::MAX, 1));
        b.insert(Hashed { hash: 1, bytes: b"ab" }, (2, 1));
        let merged: Vec<(u64, u64)> = merge_counts(a, b).into_values().collect();
        assert_eq!(merged, [(u64::MAX, 2)]);
    }
}
