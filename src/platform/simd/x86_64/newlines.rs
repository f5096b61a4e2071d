//! AVX2 kernel of [`crate::platform::simd::newlines`]: per 64 bytes, two
//! loads, two compares with `\n` and two `vpmovmskb`.

use core::arch::x86_64::{_mm256_cmpeq_epi8, _mm256_loadu_si256, _mm256_movemask_epi8, _mm256_set1_epi8};

/// Writes the `\n` bits of each whole 64-byte block of `hay` to `out`, one
/// word per block, and returns the number of blocks. The bytes after the
/// last whole block are left to the caller.
///
/// # Safety
/// AVX2, and `out.len() >= hay.len() / 64`.
#[target_feature(enable = "avx2")]
pub(in crate::platform::simd) unsafe fn newline_bits(hay: &[u8], out: &mut [u64]) -> usize {
    let blocks = hay.len() / 64;
    let newline = _mm256_set1_epi8(b'\n' as i8);
    let p = hay.as_ptr();
    for (k, word) in out[..blocks].iter_mut().enumerate() {
        // SAFETY: block `k < blocks` lies inside `hay`: 64 readable bytes.
        let (lo, hi) =
            unsafe { (_mm256_loadu_si256(p.add(k * 64).cast()), _mm256_loadu_si256(p.add(k * 64 + 32).cast())) };
        let lo = _mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, newline)) as u32;
        let hi = _mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, newline)) as u32;
        *word = u64::from(lo) | u64::from(hi) << 32;
    }
    blocks
}
