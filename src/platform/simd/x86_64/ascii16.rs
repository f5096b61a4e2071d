//! SSE2 kernel of [`crate::platform::simd::ascii16`]: per block of 16
//! UTF-16 code units, two loads, one test and one `packuswb`.
//!
//! Seen as eight 16-bit lanes in little-endian order, a unit is ASCII when
//! its lane has none of the bits `0xff80` (little-endian units) or `0x80ff`
//! (big-endian ones, whose low byte sits in the lane's high half). The OR
//! of the two vectors, masked, compared bytewise with zero and gathered
//! with `pmovmskb`, is `0xffff` exactly when all 16 units are ASCII. Each
//! lane is then its ASCII byte (big-endian ones after a shift right by 8),
//! which `packuswb` narrows without saturating.

use core::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128, _mm_packus_epi16,
    _mm_set1_epi16, _mm_setzero_si128, _mm_srli_epi16, _mm_storeu_si128,
};

use crate::platform::simd::ascii16::BLOCK_UNITS;

/// See [`crate::platform::simd::ascii16::narrow_ascii`].
///
/// # Safety
/// SSE2 (every x86_64 CPU has it).
#[target_feature(enable = "sse2")]
pub(in crate::platform::simd) unsafe fn narrow_ascii(units: &[u8], big_endian: bool, out: &mut Vec<u8>) -> usize {
    let not_ascii = _mm_set1_epi16((if big_endian { 0x80ff_u16 } else { 0xff80 }) as i16);
    let mut n = 0;
    let mut narrowed = [0u8; BLOCK_UNITS];
    for block in units.chunks_exact(2 * BLOCK_UNITS) {
        let p = block.as_ptr();
        // SAFETY: `block` holds 32 bytes: both loads read inside it.
        let (a, b) = unsafe { (_mm_loadu_si128(p.cast::<__m128i>()), _mm_loadu_si128(p.add(16).cast::<__m128i>())) };
        let stray = _mm_and_si128(_mm_or_si128(a, b), not_ascii);
        if _mm_movemask_epi8(_mm_cmpeq_epi8(stray, _mm_setzero_si128())) != 0xffff {
            break;
        }
        let (a, b) = if big_endian { (_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8)) } else { (a, b) };
        // SAFETY: `narrowed` has 16 writable bytes.
        unsafe { _mm_storeu_si128(narrowed.as_mut_ptr().cast::<__m128i>(), _mm_packus_epi16(a, b)) };
        out.extend_from_slice(&narrowed);
        n += 2 * BLOCK_UNITS;
    }
    n
}
