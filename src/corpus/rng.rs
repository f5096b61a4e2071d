//! Randomness: splitmix64, a generator per purpose seeded by the run's seed
//! mixed with a salt of its own (text, dataset, class, serial, UUID). A
//! class's generator is seeded by its index too, so a class's URN depends on
//! the seed and its index only, whatever else was drawn before it.

pub(super) const TEXT_SALT: u64 = 0x7465_7874_6765_6e31;
pub(super) const DATASET_SALT: u64 = 0x6461_7461_7365_7431;
pub(super) const CLASS_SALT: u64 = 0x636c_6173_7365_7331;
pub(super) const SERIAL_SALT: u64 = 0x7365_7269_616c_3031;
pub(super) const UUID_SALT: u64 = 0x7575_6964_7575_6964;

/// splitmix64 (Steele, Lea, Flood 2014).
#[derive(Clone)]
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    #[inline]
    pub(super) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        mix64(self.0)
    }

    /// Uniform in `0..n` (multiply-shift; the bias is below 2^-40 for the
    /// small `n` used here). `n` must not be 0.
    #[inline]
    pub(super) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    #[inline]
    pub(super) fn percent(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    #[inline]
    pub(super) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The splitmix64 finaliser: a bijection on `u64`, so distinct inputs give
/// distinct outputs.
#[inline]
pub(super) fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
