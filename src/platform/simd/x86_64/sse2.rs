//! SSE2 kernel: 16 candidate starts per vector, 64 bytes per main-loop turn.
//!
//! Exact test of a block at `p`: four unaligned loads at `p`, `p+1`, `p+2`,
//! `p+3` line up lane `k` of load `j` with byte `p+k+j`. Loads 0–2 are OR-ed
//! with 0x20 (exact case fold for u/r/n) and compared with `u`, `r`, `n`;
//! load 3 is compared with `:` as is. AND of the four masks and `movemask`
//! give the match starts as bits; the lowest is the answer.
//!
//! Main loop: the exact test is load-bound (four loads per block, most of
//! them split across cache lines), so the loop first runs a cheap superset
//! test, `u` at +0 AND `:` at +3 (two loads, the first one aligned), on four
//! blocks and tests their OR with one branch; `u..:` is rare in text, so the
//! exact test runs only on the few turns that pass. Measured on log/XML-like
//! text this about doubled throughput (see the parent module doc).
//!
//! Edges: one exact head block covers the bytes before the first aligned
//! address; the part that no longer fits a block is covered by one exact
//! block that ENDS at the haystack end. It overlaps positions already proven
//! empty, so its lowest set bit is still the first match. Haystacks shorter
//! than one block plus the 3-byte lookahead go to the scalar kernel.

use core::arch::x86_64::{
    __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_load_si128, _mm_loadu_si128, _mm_movemask_epi8, _mm_or_si128,
    _mm_set1_epi8,
};

use crate::platform::simd::scalar;

/// Candidate starts tested per vector.
const VLEN: usize = 16;
/// Bytes a candidate test reads past its start.
const LOOKAHEAD: usize = 3;
/// Bytes per main-loop turn.
const UNROLL: usize = 4 * VLEN;

/// Start of the first case-insensitive `urn:` in `hay`.
///
/// # Safety
/// The CPU must support SSE2 (always true on x86_64).
#[target_feature(enable = "sse2")]
pub(in crate::platform::simd) unsafe fn find<const PREFETCH: bool>(hay: &[u8]) -> Option<usize> {
    let len = hay.len();
    if len < VLEN + LOOKAHEAD {
        return scalar::find(hay);
    }
    let start = hay.as_ptr();
    // SAFETY (pointer arithmetic below): a block at offset `o` reads
    // `o..o + VLEN + LOOKAHEAD`; the length check above and the loop
    // condition keep that inside `hay`.
    let head = unsafe { exact(start) };
    if head != 0 {
        return Some(head.trailing_zeros() as usize);
    }
    // First aligned offset in 1..=VLEN; the head block covered 0..VLEN.
    let mut i = VLEN - start as usize % VLEN;
    while i + UNROLL + LOOKAHEAD <= len {
        if PREFETCH {
            super::prefetch_ahead(hay, i, UNROLL);
        }
        // SAFETY: as above, and `start + i` is VLEN-aligned for the aligned loads.
        let any = unsafe {
            let p = start.add(i);
            let (c0, c1) = (likely(p), likely(p.add(VLEN)));
            let (c2, c3) = (likely(p.add(2 * VLEN)), likely(p.add(3 * VLEN)));
            _mm_or_si128(_mm_or_si128(c0, c1), _mm_or_si128(c2, c3))
        };
        if _mm_movemask_epi8(any) != 0 {
            // The cheap test is a superset of the exact one: confirm this turn only.
            // SAFETY: SSE2 is available (this function's contract).
            if let Some(at) = unsafe { exact_from(&hay[..i + UNROLL + LOOKAHEAD], i) } {
                return Some(at);
            }
        }
        i += UNROLL;
    }
    // SAFETY: SSE2 is available (this function's contract).
    unsafe { exact_from(hay, i) }
}

/// First match at or after `i` by exact blocks; positions before `i` must be
/// known not to match and `hay.len() >= VLEN + LOOKAHEAD`.
///
/// # Safety
/// The CPU must support SSE2.
#[target_feature(enable = "sse2")]
unsafe fn exact_from(hay: &[u8], mut i: usize) -> Option<usize> {
    let len = hay.len();
    let start = hay.as_ptr();
    // SAFETY (pointer arithmetic below): see `find`.
    while i + VLEN + LOOKAHEAD <= len {
        let bits = unsafe { exact(start.add(i)) };
        if bits != 0 {
            return Some(i + bits.trailing_zeros() as usize);
        }
        i += VLEN;
    }
    if i + LOOKAHEAD < len {
        // Positions i..len-3 remain. This block ends at the haystack end and
        // starts before `i`, on positions known not to match, so its lowest
        // set bit is still the first match.
        let last = len - VLEN - LOOKAHEAD;
        let bits = unsafe { exact(start.add(last)) };
        if bits != 0 {
            return Some(last + bits.trailing_zeros() as usize);
        }
    }
    None
}

/// Bit `k` is set when `urn:` (any case) starts at `p + k`.
///
/// # Safety
/// SSE2, and `p..p + VLEN + LOOKAHEAD` must be readable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn exact(p: *const u8) -> u32 {
    let fold = _mm_set1_epi8(0x20);
    // SAFETY: the caller guarantees the four loads stay in bounds; loadu
    // has no alignment requirement.
    let (a0, a1, a2, a3) = unsafe {
        (
            _mm_loadu_si128(p.cast()),
            _mm_loadu_si128(p.add(1).cast()),
            _mm_loadu_si128(p.add(2).cast()),
            _mm_loadu_si128(p.add(3).cast()),
        )
    };
    let u = _mm_cmpeq_epi8(_mm_or_si128(a0, fold), _mm_set1_epi8(b'u' as i8));
    let r = _mm_cmpeq_epi8(_mm_or_si128(a1, fold), _mm_set1_epi8(b'r' as i8));
    let n = _mm_cmpeq_epi8(_mm_or_si128(a2, fold), _mm_set1_epi8(b'n' as i8));
    let c = _mm_cmpeq_epi8(a3, _mm_set1_epi8(b':' as i8));
    _mm_movemask_epi8(_mm_and_si128(_mm_and_si128(u, r), _mm_and_si128(n, c))) as u32
}

/// Lane `k` is 0xFF when `p + k` holds `u`/`U` and `p + k + 3` holds `:`:
/// a superset of the matches, from two loads instead of four.
///
/// # Safety
/// SSE2, `p` VLEN-aligned, and `p..p + VLEN + LOOKAHEAD` readable.
#[inline]
#[target_feature(enable = "sse2")]
unsafe fn likely(p: *const u8) -> __m128i {
    // SAFETY: the caller guarantees alignment of `p` and the bounds.
    let (a0, a3) = unsafe { (_mm_load_si128(p.cast()), _mm_loadu_si128(p.add(3).cast())) };
    let u = _mm_cmpeq_epi8(_mm_or_si128(a0, _mm_set1_epi8(0x20)), _mm_set1_epi8(b'u' as i8));
    let c = _mm_cmpeq_epi8(a3, _mm_set1_epi8(b':' as i8));
    _mm_and_si128(u, c)
}
