//! AVX2 kernel of [`crate::platform::simd::marks`]: five compares and five
//! `vpmovmskb` per 32 bytes. The ranges `a`–`f` and `A`–`Z` are tested with
//! unsigned min/max (`x == max(x, lo) && x == min(x, hi)`), so bytes with
//! the high bit set fall outside them as in the scalar kernel.

use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_max_epu8, _mm256_min_epu8,
    _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8,
};

use crate::platform::simd::marks::Marks;

/// The marks of `bytes`: two loads for 32 to 64 bytes (the second ends at
/// the last byte and may overlap the first), a zero-padded copy below.
///
/// # Safety
/// AVX2, and `bytes.len() <= 64`.
#[target_feature(enable = "avx2")]
pub(in crate::platform::simd) unsafe fn marks(bytes: &[u8]) -> Marks {
    let len = bytes.len();
    if len < 32 {
        let mut padded = [0u8; 32];
        padded[..len].copy_from_slice(bytes);
        // SAFETY: `padded` has 32 readable bytes; AVX2, as this function requires.
        return widen(unsafe { half(_mm256_loadu_si256(padded.as_ptr().cast())) }, 0);
    }
    let p = bytes.as_ptr();
    // SAFETY: 32 <= len: both loads read bytes inside `bytes`.
    let (first, last) = unsafe { (_mm256_loadu_si256(p.cast()), _mm256_loadu_si256(p.add(len - 32).cast())) };
    // SAFETY: AVX2, as this function requires.
    let (a, b) = unsafe { (widen(half(first), 0), widen(half(last), len - 32)) };
    Marks {
        name_end: a.name_end | b.name_end,
        colon: a.colon | b.colon,
        percent: a.percent | b.percent,
        lower_hex: a.lower_hex | b.lower_hex,
        upper: a.upper | b.upper,
    }
}

/// The masks of 32 bytes that start at byte `at` (`at <= 32`).
fn widen(m: [u32; 5], at: usize) -> Marks {
    let w = |x: u32| u64::from(x) << at;
    Marks { name_end: w(m[0]), colon: w(m[1]), percent: w(m[2]), lower_hex: w(m[3]), upper: w(m[4]) }
}

/// (`?` or `#`, `:`, `%`, `a`–`f`, `A`–`Z`) masks of 32 bytes.
///
/// # Safety
/// AVX2. (Safe to call in AVX2 code from Rust 1.86 on; `unsafe` for the
/// 1.85 that `rust-version` promises.)
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn half(v: __m256i) -> [u32; 5] {
    let eq = |b: u8| _mm256_cmpeq_epi8(v, _mm256_set1_epi8(b as i8));
    let within = |lo: u8, hi: u8| {
        let above = _mm256_cmpeq_epi8(_mm256_max_epu8(v, _mm256_set1_epi8(lo as i8)), v);
        let below = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(hi as i8)), v);
        _mm256_and_si256(above, below)
    };
    let mask = |m: __m256i| _mm256_movemask_epi8(m) as u32;
    [
        mask(_mm256_or_si256(eq(b'?'), eq(b'#'))),
        mask(eq(b':')),
        mask(eq(b'%')),
        mask(within(b'a', b'f')),
        mask(within(b'A', b'Z')),
    ]
}
