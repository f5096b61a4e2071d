//! AVX2 kernel of [`crate::platform::simd::class`]: 64 bytes per step.
//!
//! Each 32-byte half gives four bit masks with one `vpmovmskb` each:
//! non-members of the class, `%`, hex digits and bytes with bits 0x60 set
//! (which, among hex digits, are exactly `a`–`f`). Membership is the nibble
//! lookup described in the parent module: `low[lo] & high_bit[hi] != 0`.
//! The escape arithmetic and the tail handling are described there too.

use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_broadcastsi128_si256, _mm256_cmpeq_epi8, _mm256_loadu_si256,
    _mm256_movemask_epi8, _mm256_or_si256, _mm256_set1_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8,
    _mm256_srli_epi16, _mm256_storeu_si256, _mm256_xor_si256, _mm_loadu_si128,
};

use crate::platform::simd::class::{escape_at, HEX_LOW_NIBBLE, HIGH_NIBBLE_BIT, LOW_NIBBLE};

/// Bytes per step: one bit per byte in a `u64`.
const WINDOW: usize = 64;

/// The nibble tables, each 16-byte table copied to both 128-bit lanes
/// (`vpshufb` looks up within a lane).
struct Tables {
    class: __m256i,
    hex: __m256i,
    high_bit: __m256i,
}

/// One bit per byte of a 64-byte window.
struct Masks {
    non_member: u64,
    percent: u64,
    hex: u64,
    lower: u64,
}

impl Masks {
    /// The stop at or after bit `first`, as (bit, whether an escape before
    /// it has a lower-case digit); bit 64 when the window holds no stop.
    #[inline(always)]
    fn stop(&self, first: u32) -> (u32, bool) {
        let live = !0u64 << first;
        // A "%" at bit 62 or 63 never validates: its digits are not here.
        let escape = self.percent & (self.hex >> 1) & (self.hex >> 2) & live;
        let covered = escape | (escape << 1) | (escape << 2);
        let stops = self.non_member & !covered & live;
        let before = stops.wrapping_sub(1) & !stops;
        (stops.trailing_zeros(), covered & self.lower & before != 0)
    }
}

/// Walks `hay` from `from` over class members and whole escapes; returns the
/// stop and whether a stepped-over escape had a lower-case digit.
///
/// # Safety
/// The CPU must support AVX2, and `class` must be below 8.
#[target_feature(enable = "avx2")]
pub(in crate::platform::simd) unsafe fn run(hay: &[u8], from: usize, class: usize) -> (usize, bool) {
    let len = hay.len();
    // SAFETY: AVX2 and `class < 8` are this function's contract.
    let tables = unsafe { tables(class) };
    let start = hay.as_ptr();
    let mut lower = false;
    let mut i = from;
    while i + WINDOW <= len {
        // SAFETY: `i + WINDOW <= len`, so the window is inside `hay`.
        let (stop, low) = unsafe { masks(start.add(i), &tables) }.stop(0);
        lower |= low;
        if stop < WINDOW as u32 {
            let at = i + stop as usize;
            // An escape cut by the window's end: check it here rather than
            // return and be called again.
            match escape_at(hay, at) {
                Some(low) if stop >= WINDOW as u32 - 2 => {
                    lower |= low;
                    i = at + 3;
                    continue;
                }
                _ => return (at, lower),
            }
        }
        i += WINDOW;
    }
    if i >= len {
        return (len, lower);
    }
    let (base, first, masks) = if len >= WINDOW {
        // The last window of `hay`, of which `i - base` bytes were walked.
        let base = len - WINDOW;
        // SAFETY: `base + WINDOW == len`.
        (base, (i - base) as u32, unsafe { masks(start.add(base), &tables) })
    } else {
        // Zero is no member and no hex digit: the copy stops the walk at its end.
        let mut buf = [0u8; WINDOW];
        buf[..len - i].copy_from_slice(&hay[i..]);
        // SAFETY: `buf` is WINDOW bytes.
        (i, 0, unsafe { masks(buf.as_ptr(), &tables) })
    };
    let (stop, low) = masks.stop(first);
    ((base + stop as usize).min(len), lower | low)
}

/// The escape fix-up of the key (see `ClassRun::upper_case_escapes`): for
/// each 32 bytes at `j`, the loads at `j - 1` and `j - 2` line every byte up
/// with the two bytes before it, so "follows a `%`" is two compares. The
/// last block is moved back to end at the end of the slices; redoing bytes
/// is harmless, as every block reads `src` only.
///
/// # Safety
/// AVX2, `from >= 2` and `src.len() == dst.len() >= from + 32`.
#[target_feature(enable = "avx2")]
pub(in crate::platform::simd) unsafe fn upper_case_escapes(src: &[u8], dst: &mut [u8], from: usize) {
    let len = src.len();
    let (p, out) = (src.as_ptr(), dst.as_mut_ptr());
    let percent = _mm256_set1_epi8(b'%' as i8);
    let bits_60 = _mm256_set1_epi8(0x60);
    let bit_20 = _mm256_set1_epi8(0x20);
    let mut j = from;
    loop {
        let at = j.min(len - 32);
        // SAFETY: `2 <= from <= at` and `at + 32 <= len`: all three loads
        // are inside `src` and the store inside `dst`.
        unsafe {
            let v = _mm256_loadu_si256(p.add(at).cast());
            let after_1 = _mm256_cmpeq_epi8(_mm256_loadu_si256(p.add(at - 1).cast()), percent);
            let after_2 = _mm256_cmpeq_epi8(_mm256_loadu_si256(p.add(at - 2).cast()), percent);
            let lower = _mm256_cmpeq_epi8(_mm256_and_si256(v, bits_60), bits_60);
            let fix = _mm256_and_si256(_mm256_and_si256(_mm256_or_si256(after_1, after_2), lower), bit_20);
            _mm256_storeu_si256(out.add(at).cast(), _mm256_xor_si256(v, fix));
        }
        if at + 32 >= len {
            return;
        }
        j = at + 32;
    }
}

/// # Safety
/// AVX2, and `class < 8`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn tables(class: usize) -> Tables {
    // SAFETY: each table is 16 readable bytes; `LOW_NIBBLE` has 8 entries.
    unsafe {
        let load = |t: &[u8; 16]| _mm256_broadcastsi128_si256(_mm_loadu_si128(t.as_ptr().cast()));
        Tables { class: load(&LOW_NIBBLE[class]), hex: load(&HEX_LOW_NIBBLE), high_bit: load(&HIGH_NIBBLE_BIT) }
    }
}

/// # Safety
/// AVX2, and 64 readable bytes at `p`.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn masks(p: *const u8, t: &Tables) -> Masks {
    // SAFETY: the caller guarantees 64 readable bytes.
    let (lo, hi) = unsafe { (half(_mm256_loadu_si256(p.cast()), t), half(_mm256_loadu_si256(p.add(32).cast()), t)) };
    let join = |a: u32, b: u32| u64::from(a) | u64::from(b) << 32;
    Masks { non_member: join(lo.0, hi.0), percent: join(lo.1, hi.1), hex: join(lo.2, hi.2), lower: join(lo.3, hi.3) }
}

/// (non-member, `%`, hex digit, bits 0x60 set) masks of 32 bytes.
///
/// # Safety
/// AVX2. (Safe to call in AVX2 code from Rust 1.86 on; `unsafe` for the
/// 1.85 that `rust-version` promises.)
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn half(v: __m256i, t: &Tables) -> (u32, u32, u32, u32) {
    let nibble = _mm256_set1_epi8(0x0f);
    let lo = _mm256_and_si256(v, nibble);
    let hi = _mm256_and_si256(_mm256_srli_epi16::<4>(v), nibble);
    let high_bit = _mm256_shuffle_epi8(t.high_bit, hi);
    let zero = _mm256_setzero_si256();
    let class = _mm256_and_si256(_mm256_shuffle_epi8(t.class, lo), high_bit);
    let hex = _mm256_and_si256(_mm256_shuffle_epi8(t.hex, lo), high_bit);
    let bits_60 = _mm256_set1_epi8(0x60);
    let mask = |m: __m256i| _mm256_movemask_epi8(m) as u32;
    (
        mask(_mm256_cmpeq_epi8(class, zero)),
        mask(_mm256_cmpeq_epi8(v, _mm256_set1_epi8(b'%' as i8))),
        !mask(_mm256_cmpeq_epi8(hex, zero)),
        mask(_mm256_cmpeq_epi8(_mm256_and_si256(v, bits_60), bits_60)),
    )
}
