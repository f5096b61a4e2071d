//! Byte strings that carry their hash, for std's `HashMap` and `HashSet`.
//!
//! A [`Hashed`] is hashed once, by its maker; a map built with
//! [`StoredHash`] takes that number as it is, instead of hashing the bytes
//! again to find a slot, at every growth and at every merge of two maps.
//! The same number also picks the map among several ([`Hashed::part`]), so
//! that parts can be filled in parallel. Equality still compares the
//! bytes: two strings of equal hash stay apart.
//!
//! Used by [`crate::stats`] (the counts per NID) and by `urnscan bench
//! --lines` (its reference row, the distinct lines in a hash set).

use std::hash::{BuildHasher, Hash, Hasher};

/// Bytes and their hash, computed once.
#[derive(Clone, Copy, Debug)]
pub struct Hashed<'t> {
    /// The hash of `bytes`, by the hasher of [`Hashed::new`].
    pub hash: u64,
    /// The bytes themselves, compared when two hashes are equal.
    pub bytes: &'t [u8],
}

impl<'t> Hashed<'t> {
    /// `bytes` hashed by `hasher`.
    pub fn new(bytes: &'t [u8], hasher: &impl BuildHasher) -> Hashed<'t> {
        Hashed { hash: hasher.hash_one(bytes), bytes }
    }

    /// Which of `parts` (a power of two) maps hold these bytes: hash bits
    /// a map does not use (std's map takes its slot from the low bits and
    /// its tags from the top seven; parts taken from the top bits would
    /// leave the tags of one map nearly equal).
    pub fn part(&self, parts: usize) -> usize {
        (self.hash >> 32) as usize & (parts - 1)
    }
}

impl PartialEq for Hashed<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.bytes == other.bytes
    }
}

impl Eq for Hashed<'_> {}

impl Hash for Hashed<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        state.write_u64(self.hash);
    }
}

/// The hasher of maps keyed by [`Hashed`]: the hash it carries, unchanged.
#[derive(Default)]
pub struct StoredHash(u64);

impl Hasher for StoredHash {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `Hashed` is hashed with this, through `write_u64`. Anything
        // else would still get a hash, if a poor one (FNV-1a).
        self.0 =
            bytes.iter().fold(self.0 ^ 0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}
