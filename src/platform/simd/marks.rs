//! The delimiters of a short URN as bit masks: what its key's shape is
//! made of, for up to 64 bytes in one pass.
//!
//! The key table checks every new key of a mapped file against the bytes
//! once more before keeping it (`key::key_shape`): where the assigned name
//! ends (the first `?` or `#`), where the NID ends (the first
//! `:` after `urn:`), every `%` and whether its digits are lower case, and
//! upper-case letters in the NID. As three `memchr` searches (and a loop
//! per `%`) that took about 210 instructions for a URN of a few dozen
//! bytes, 7 % of the instructions of `scan --unique` on dense text: each
//! search pays its set-up for a handful of bytes. [`Marks`] gives all five
//! answers as one bit per byte, and the shape is then bit arithmetic; URNs
//! longer than [`MARKS_LEN`] keep the searches. Measured in `BENCHMARKS.md`
//! (item 33): 2 % fewer instructions in all on dense text.
//!
//! Kernels ([`ClassKernel`]): a byte loop, and AVX2 with five compares per
//! 32 bytes. Inputs of 32 bytes or more are read with two loads that may
//! overlap (the second ends at the last byte, and its masks are shifted into
//! place; the overlapping bits agree); shorter ones are copied into a
//! zeroed 32-byte buffer first (zero is none of the marked bytes). The
//! tests compare both kernels at every length and alignment.

use super::class::ClassKernel;

/// The longest input [`Marks::of`] takes: one bit per byte in a `u64`.
pub const MARKS_LEN: usize = 64;

/// For each kind of byte, bit `i` is set when byte `i` is of that kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Marks {
    /// `?` or `#`: where an RFC 8141 assigned name can end.
    pub name_end: u64,
    /// `:`.
    pub colon: u64,
    /// `%`.
    pub percent: u64,
    /// `a`–`f`: a lower-case hex digit, where one is expected.
    pub lower_hex: u64,
    /// `A`–`Z`.
    pub upper: u64,
}

impl Marks {
    /// The marks of `bytes` with the fastest kernel of this CPU, or `None`
    /// when it is longer than [`MARKS_LEN`]. (Asking for AVX2 is asking for
    /// the fastest: without it the scalar kernel answers, and the CPU is
    /// asked once per call, not twice.)
    #[inline]
    pub fn of(bytes: &[u8]) -> Option<Marks> {
        Marks::with_kernel(bytes, ClassKernel::Avx2)
    }

    /// [`Marks::of`] with `kernel`; a kernel this CPU lacks gives the
    /// scalar kernel's answer (the same answer).
    #[inline]
    pub fn with_kernel(bytes: &[u8], kernel: ClassKernel) -> Option<Marks> {
        if bytes.len() > MARKS_LEN {
            return None;
        }
        Some(match kernel {
            // SAFETY: AVX2 is checked right here, and the kernel's only
            // other condition, at most 64 bytes, above.
            #[cfg(target_arch = "x86_64")]
            ClassKernel::Avx2 if kernel.is_available() => unsafe { super::x86_64::marks::marks(bytes) },
            _ => marks_scalar(bytes),
        })
    }
}

/// The scalar kernel, and the reference the vector kernel is tested against.
fn marks_scalar(bytes: &[u8]) -> Marks {
    let mut m = Marks::default();
    for (i, &b) in bytes.iter().enumerate() {
        let bit = 1u64 << i;
        match b {
            b'?' | b'#' => m.name_end |= bit,
            b':' => m.colon |= bit,
            b'%' => m.percent |= bit,
            b'a'..=b'f' => m.lower_hex |= bit,
            b'A'..=b'Z' => m.upper |= bit,
            _ => {}
        }
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::simd::tests::{lengths, offsets, tested};

    /// Every kind of marked byte, their neighbours in ASCII, bytes with the
    /// high bit set and zero.
    const ALPHABET: &[u8] = b"?#:%afAZ@[`g>9;$\x00\x80\xff\xc1\xe1";

    #[test]
    fn the_scalar_kernel_marks_each_kind_of_byte() {
        let m = marks_scalar(b"urn:Ab:c%2f?q#f");
        assert_eq!(m.name_end, 1 << 11 | 1 << 13);
        assert_eq!(m.colon, 1 << 3 | 1 << 6);
        assert_eq!(m.percent, 1 << 8);
        assert_eq!(m.lower_hex, 1 << 5 | 1 << 7 | 1 << 10 | 1 << 14);
        assert_eq!(m.upper, 1 << 4);
        assert_eq!(marks_scalar(b"\x00\x80\xff{`@[/;"), Marks::default());
    }

    #[test]
    fn inputs_longer_than_the_masks_get_none() {
        let long = [b'a'; MARKS_LEN + 1];
        assert!(Marks::of(&long).is_none());
        assert!(Marks::of(&long[..MARKS_LEN]).is_some());
    }

    /// Every kernel equals the scalar one at every length up to 256 bytes
    /// (`None` past 64) and every alignment within 32 bytes.
    #[test]
    fn kernels_agree_at_every_length_and_alignment() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let buf: Vec<u8> = (0..256 + 32).map(|_| ALPHABET[next() as usize % ALPHABET.len()]).collect();
        for kernel in tested(ClassKernel::available(), ClassKernel::Scalar) {
            for align in offsets(32) {
                for len in lengths(256) {
                    let bytes = &buf[align..align + len];
                    let want = (len <= MARKS_LEN).then(|| marks_scalar(bytes));
                    assert_eq!(Marks::with_kernel(bytes, kernel), want, "{kernel:?} align {align} len {len}");
                }
            }
        }
    }

    proptest::proptest! {
        #[test]
        #[cfg_attr(miri, ignore = "the sweeps reach every load; too slow interpreted")]
        fn kernels_agree_on_random_bytes(bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..=64)) {
            for kernel in tested(ClassKernel::available(), ClassKernel::Scalar) {
                proptest::prop_assert_eq!(Marks::with_kernel(&bytes, kernel), Some(marks_scalar(&bytes)));
            }
        }
    }
}
