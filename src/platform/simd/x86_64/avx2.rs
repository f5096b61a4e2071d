//! AVX2 kernel: 32 candidate starts per vector, 64 or 128 bytes per
//! main-loop turn.
//!
//! See `sse2.rs` for the scheme; this is the same code on 32-byte vectors.
//! In short: a cheap test (`u` at +0 AND `:` at +3, two loads, one of them
//! aligned) over the turn's blocks, one `vptest` per turn; only a turn that
//! passes it runs the exact four-load test. The exact test, the head block
//! before the first aligned address and the overlapping tail block are
//! shared with the confirmation path. Haystacks shorter than one block plus
//! the 3-byte lookahead go to the SSE2 kernel (SSE2 is implied by AVX2).
//!
//! # Turn size: one cache line when prefetching
//!
//! Without the software prefetch a turn is four blocks (128 bytes): fewer
//! branches per byte. With it, a turn is two blocks, one cache line and one
//! prefetch, as in the SSE2 kernel. On an Intel Xeon KVM guest (2 vCPUs,
//! family 6 model 167; page-cached 1 GiB of text, best of 5, two or three
//! interleaved rounds per variant) the 128-byte turn with the prefetch 4 KiB
//! ahead took 90–103 ms against a 61–74 ms read of every byte in the same
//! rounds, whether it prefetched both lines of a turn at its start, one
//! before each half, or only the first line; 2 KiB ahead 75–77 ms; the
//! 64-byte turn 68–71 ms, the read's own speed (SSE2 with the prefetch, also
//! a 64-byte turn: 64–74). Without the prefetch the 64-byte turn was 3 %
//! slower there (83–87 ms against 79–84), so that case keeps the longer
//! turn. BENCHMARKS.md (item 77) has the table.

use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_cmpeq_epi8, _mm256_load_si256, _mm256_loadu_si256, _mm256_movemask_epi8,
    _mm256_or_si256, _mm256_set1_epi8, _mm256_testz_si256,
};

/// Candidate starts tested per vector.
const VLEN: usize = 32;
/// Bytes a candidate test reads past its start.
const LOOKAHEAD: usize = 3;
/// Bytes per main-loop turn: one cache line when the loop prefetches (one
/// prefetch per turn), two otherwise (see the module doc).
const fn turn(prefetch: bool) -> usize {
    if prefetch {
        2 * VLEN
    } else {
        4 * VLEN
    }
}

/// Start of the first case-insensitive `urn:` in `hay`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
pub(in crate::platform::simd) unsafe fn find<const PREFETCH: bool>(hay: &[u8]) -> Option<usize> {
    let len = hay.len();
    if len < VLEN + LOOKAHEAD {
        // SAFETY: SSE2 is part of the x86_64 baseline.
        return unsafe { super::sse2::find::<PREFETCH>(hay) };
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
    let turn = const { turn(PREFETCH) };
    while i + turn + LOOKAHEAD <= len {
        if PREFETCH {
            super::prefetch_ahead(hay, i, turn);
        }
        // SAFETY: as above, and `start + i` is VLEN-aligned for the aligned loads.
        let any = unsafe {
            let p = start.add(i);
            let first = _mm256_or_si256(likely(p), likely(p.add(VLEN)));
            if turn == 2 * VLEN {
                first
            } else {
                let second = _mm256_or_si256(likely(p.add(2 * VLEN)), likely(p.add(3 * VLEN)));
                _mm256_or_si256(first, second)
            }
        };
        if _mm256_testz_si256(any, any) == 0 {
            // The cheap test is a superset of the exact one: confirm this turn only.
            // SAFETY: AVX2 is available (this function's contract).
            if let Some(at) = unsafe { exact_from(&hay[..i + turn + LOOKAHEAD], i) } {
                return Some(at);
            }
        }
        i += turn;
    }
    // SAFETY: AVX2 is available (this function's contract).
    unsafe { exact_from(hay, i) }
}

/// First match at or after `i` by exact blocks; positions before `i` must be
/// known not to match and `hay.len() >= VLEN + LOOKAHEAD`.
///
/// # Safety
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
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
/// AVX2, and `p..p + VLEN + LOOKAHEAD` must be readable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn exact(p: *const u8) -> u32 {
    let fold = _mm256_set1_epi8(0x20);
    // SAFETY: the caller guarantees the four loads stay in bounds; loadu
    // has no alignment requirement.
    let (a0, a1, a2, a3) = unsafe {
        (
            _mm256_loadu_si256(p.cast()),
            _mm256_loadu_si256(p.add(1).cast()),
            _mm256_loadu_si256(p.add(2).cast()),
            _mm256_loadu_si256(p.add(3).cast()),
        )
    };
    let u = _mm256_cmpeq_epi8(_mm256_or_si256(a0, fold), _mm256_set1_epi8(b'u' as i8));
    let r = _mm256_cmpeq_epi8(_mm256_or_si256(a1, fold), _mm256_set1_epi8(b'r' as i8));
    let n = _mm256_cmpeq_epi8(_mm256_or_si256(a2, fold), _mm256_set1_epi8(b'n' as i8));
    let c = _mm256_cmpeq_epi8(a3, _mm256_set1_epi8(b':' as i8));
    _mm256_movemask_epi8(_mm256_and_si256(_mm256_and_si256(u, r), _mm256_and_si256(n, c))) as u32
}

/// Lane `k` is 0xFF when `p + k` holds `u`/`U` and `p + k + 3` holds `:`:
/// a superset of the matches, from two loads instead of four.
///
/// # Safety
/// AVX2, `p` VLEN-aligned, and `p..p + VLEN + LOOKAHEAD` readable.
#[inline]
#[target_feature(enable = "avx2")]
unsafe fn likely(p: *const u8) -> __m256i {
    // SAFETY: the caller guarantees alignment of `p` and the bounds.
    let (a0, a3) = unsafe { (_mm256_load_si256(p.cast()), _mm256_loadu_si256(p.add(3).cast())) };
    let u = _mm256_cmpeq_epi8(_mm256_or_si256(a0, _mm256_set1_epi8(0x20)), _mm256_set1_epi8(b'u' as i8));
    let c = _mm256_cmpeq_epi8(a3, _mm256_set1_epi8(b':' as i8));
    _mm256_and_si256(u, c)
}
