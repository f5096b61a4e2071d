//! Where the lines of a buffer end: its `\n` bytes as bits, 64 per word.
//!
//! A URN dataset's lines are a few dozen bytes long. Found with one
//! `memchr` per line, each search paid its set-up for those few bytes:
//! about 60 instructions a line, 5 % of `urnscan dedup` on a dataset. Here
//! one pass turns 64 bytes into one `u64` (two compares and two
//! `vpmovmskb` on AVX2), and the caller steps from line end to line end
//! with `trailing_zeros` and clearing the lowest bit, a few instructions a
//! line. Callers take a few KiB at a time, so that the bytes are still in
//! the first-level cache when the lines are read.
//!
//! Kernels ([`ClassKernel`]): a byte loop, and AVX2 for the whole 64-byte
//! blocks (the last partial block goes to the byte loop). The tests compare
//! both at every length up to 256 bytes and every alignment within 64.

use super::class::ClassKernel;

/// Writes the `\n` bytes of `hay` as bits to the first
/// `hay.len().div_ceil(64)` words of `out` (bit `i % 64` of word `i / 64`
/// stands for `hay[i]`) and returns that number of words. When `out` is
/// shorter, only the bytes it has room for are looked at.
#[inline]
pub fn newline_bits(hay: &[u8], out: &mut [u64]) -> usize {
    newline_bits_with(hay, out, ClassKernel::Avx2)
}

/// [`newline_bits`] with `kernel`; a kernel this CPU lacks gives the byte
/// loop's answer (the same answer).
pub fn newline_bits_with(hay: &[u8], out: &mut [u64], kernel: ClassKernel) -> usize {
    let hay = &hay[..hay.len().min(out.len() * 64)];
    let words = hay.len().div_ceil(64);
    let done = match kernel {
        // SAFETY: AVX2 is checked right here; the kernel writes one word per
        // whole 64-byte block of `hay`, and `out` has room for all of them.
        #[cfg(target_arch = "x86_64")]
        ClassKernel::Avx2 if kernel.is_available() => unsafe { super::x86_64::newlines::newline_bits(hay, out) },
        _ => 0,
    };
    for (word, block) in out[done..words].iter_mut().zip(hay[done * 64..].chunks(64)) {
        *word = newline_bits_scalar(block);
    }
    words
}

/// Calls `f` with the index of every `\n` in `hay`, in order: the bits of
/// [`newline_bits`] for 4 KiB at a time, stepped through with
/// `trailing_zeros` and clearing the lowest bit. Generic, so that `f` is
/// inlined into the loop (the line loop of `urnscan dedup`).
#[inline]
pub fn for_each_newline(hay: &[u8], mut f: impl FnMut(usize)) {
    let mut words = [0u64; SPAN / 64];
    for (k, span) in hay.chunks(SPAN).enumerate() {
        let filled = newline_bits(span, &mut words);
        for (w, &word) in words[..filled].iter().enumerate() {
            let base = k * SPAN + w * 64;
            let mut bits = word;
            while bits != 0 {
                f(base + bits.trailing_zeros() as usize);
                bits &= bits - 1;
            }
        }
    }
}

/// Bytes [`for_each_newline`] turns into bits at once: small enough that
/// they are still in the first-level cache when the caller reads the lines.
const SPAN: usize = 4096;

/// The byte loop for up to 64 bytes, and the reference the vector kernel is
/// tested against.
fn newline_bits_scalar(block: &[u8]) -> u64 {
    block.iter().enumerate().fold(0, |bits, (i, &b)| bits | u64::from(b == b'\n') << i)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::simd::tests::Rng;

    /// The definition: one bit per byte that is `\n`.
    fn reference(hay: &[u8]) -> Vec<u64> {
        let mut words = vec![0u64; hay.len().div_ceil(64)];
        for (i, &b) in hay.iter().enumerate() {
            if b == b'\n' {
                words[i / 64] |= 1 << (i % 64);
            }
        }
        words
    }

    #[test]
    fn bits_stand_for_newlines() {
        let mut out = [0u64; 2];
        assert_eq!(newline_bits(b"a\nb\n\n", &mut out), 1);
        assert_eq!(out[0], 0b11010);
        let mut hay = vec![b'x'; 70];
        hay[63] = b'\n';
        hay[64] = b'\n';
        hay[69] = b'\n';
        assert_eq!(newline_bits(&hay, &mut out), 2);
        assert_eq!(out, [1 << 63, 1 | 1 << 5]);
        assert_eq!(newline_bits(b"", &mut out), 0);
    }

    #[test]
    fn a_short_output_takes_what_it_has_room_for() {
        let hay = [b'\n'; 200];
        let mut out = [0u64; 2];
        assert_eq!(newline_bits(&hay, &mut out), 2);
        assert_eq!(out, [u64::MAX, u64::MAX]);
        assert_eq!(newline_bits(&hay, &mut []), 0);
    }

    /// Every kernel equals the definition at every length up to 256 bytes
    /// and every alignment within 64, on bytes near `\n` in value.
    #[test]
    fn kernels_agree_at_every_length_and_alignment() {
        const ALPHABET: &[u8] = b"\n\n\x0b\x09\r \x00\x8a\xffa";
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let buf: Vec<u8> = (0..256 + 64).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect();
        for kernel in ClassKernel::available() {
            for align in 0..64 {
                for len in 0..=256 {
                    let hay = &buf[align..align + len];
                    let mut out = [!0u64; 5];
                    let words = newline_bits_with(hay, &mut out, kernel);
                    assert_eq!(out[..words], reference(hay)[..], "{kernel:?} align {align} len {len}");
                    assert!(out[words..].iter().all(|&w| w == !0), "{kernel:?}: wrote past the words of {len} bytes");
                }
            }
        }
    }

    proptest::proptest! {
        /// Every `\n` once, in order, across the 4 KiB spans.
        #[test]
        fn every_newline_is_visited_in_order(
            hay in proptest::collection::vec(proptest::sample::select(b"\nab".to_vec()), 0..10_000),
        ) {
            let mut got = Vec::new();
            for_each_newline(&hay, |i| got.push(i));
            let want: Vec<usize> = hay.iter().enumerate().filter(|&(_, &b)| b == b'\n').map(|(i, _)| i).collect();
            proptest::prop_assert_eq!(got, want);
        }

        #[test]
        fn kernels_agree_on_random_bytes(hay in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..=600)) {
            for kernel in ClassKernel::available() {
                let mut out = vec![0u64; 10];
                let words = newline_bits_with(&hay, &mut out, kernel);
                proptest::prop_assert_eq!(&out[..words], &reference(&hay)[..]);
            }
        }
    }
}
