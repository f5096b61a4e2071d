//! AVX2 kernel of [`crate::platform::simd::line_bits`]: per 32 bytes, the
//! nibble lookups of the class kernel for three sets (one shared high-nibble
//! lookup), compares with `\n`, `%`, `?` and `=`, and bits 0x20 and 0x40 shifted to
//! the top of each byte; each answer leaves through one `vpmovmskb`.

use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_broadcastsi128_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256,
    _mm256_movemask_epi8, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi16,
    _mm256_srli_epi16, _mm_loadu_si128,
};

use crate::grammar::class::{LDH, NSS_TAIL};
use crate::platform::simd::class::{HEX_LOW_NIBBLE, HIGH_NIBBLE_BIT, LOW_NIBBLE};
use crate::platform::simd::line_bits::Block;

/// Hands the answers of each whole 64-byte block of `span` to `put`, with
/// the block's number, in order; returns the number of blocks. The bytes
/// after the last whole block are left to the caller.
///
/// # Safety
/// AVX2.
#[target_feature(enable = "avx2")]
pub(in crate::platform::simd) unsafe fn blocks(span: &[u8], mut put: impl FnMut(usize, Block)) -> usize {
    let blocks = span.len() / 64;
    // SAFETY: each table is 16 readable bytes.
    let load = |t: &[u8; 16]| unsafe { _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr().cast())) };
    let tables = [
        load(&LOW_NIBBLE[LDH.trailing_zeros() as usize]),
        load(&LOW_NIBBLE[NSS_TAIL.trailing_zeros() as usize]),
        load(&HEX_LOW_NIBBLE),
        load(&HIGH_NIBBLE_BIT),
    ];
    let p = span.as_ptr();
    for k in 0..blocks {
        // SAFETY: block `k < blocks` lies inside `span`: 64 readable bytes.
        let (lo, hi) =
            unsafe { (_mm256_loadu_si256(p.add(k * 64).cast()), _mm256_loadu_si256(p.add(k * 64 + 32).cast())) };
        // SAFETY: AVX2, as this function requires.
        put(k, unsafe { answers(lo, hi, &tables) });
    }
    blocks
}

/// The nine answers for the 64 bytes `lo` and `hi`, in the order of
/// [`Block`]: each a compare per half and two `vpmovmskb` joined.
///
/// # Safety
/// AVX2. (Safe to call in AVX2 code from Rust 1.86 on; `unsafe` for the
/// 1.85 that `rust-version` promises.)
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn answers(lo: __m256i, hi: __m256i, t: &[__m256i; 4]) -> Block {
    let nibble = _mm256_set1_epi8(0x0f);
    let zero = _mm256_setzero_si256();
    let join = |a: __m256i, b: __m256i| {
        u64::from(_mm256_movemask_epi8(a) as u32) | u64::from(_mm256_movemask_epi8(b) as u32) << 32
    };
    let (lo_low, hi_low) = (_mm256_and_si256(lo, nibble), _mm256_and_si256(hi, nibble));
    let high_bit = |v: __m256i| _mm256_shuffle_epi8(t[3], _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble));
    let (lo_high, hi_high) = (high_bit(lo), high_bit(hi));
    let outside = |table: __m256i, low: __m256i, high: __m256i| {
        _mm256_cmpeq_epi8(_mm256_and_si256(_mm256_shuffle_epi8(table, low), high), zero)
    };
    let member = |table: __m256i| !join(outside(table, lo_low, lo_high), outside(table, hi_low, hi_high));
    let equal = |b: u8| {
        let b = _mm256_set1_epi8(b as i8);
        join(_mm256_cmpeq_epi8(lo, b), _mm256_cmpeq_epi8(hi, b))
    };
    [
        equal(b'\n'),
        equal(b'%'),
        member(t[0]),
        member(t[1]),
        member(t[2]),
        // Shifts within 16-bit lanes: a byte's bit 5 (or 6) reaches its own
        // top bit; what crosses in from the lane's other byte lands lower.
        join(_mm256_slli_epi16::<2>(lo), _mm256_slli_epi16::<2>(hi)),
        join(_mm256_slli_epi16::<1>(lo), _mm256_slli_epi16::<1>(hi)),
        equal(b'?'),
        equal(b'='),
    ]
}
