//! Runs of ASCII in UTF-16 text, narrowed to a byte per code unit.
//!
//! Transcoding UTF-16 to UTF-8 ([`crate::transcode`]) spends most of its
//! time on ASCII: the markup, numbers and URNs of an export are ASCII, and
//! each such code unit becomes its low byte. [`narrow_ascii`] does that for
//! whole blocks of [`BLOCK_UNITS`] code units, and stops at the first block
//! that holds a unit of 0x80 or more, which the caller decodes a character
//! at a time.
//!
//! Kernels ([`NarrowKernel`]): the scalar one tests and narrows four units
//! per 64-bit word with shifts and masks; the SSE2 one (part of the x86_64
//! baseline, so there is nothing to detect) tests 16 units with an OR, an
//! AND and one `pmovmskb`, and narrows them with one `packuswb`. The SSE2
//! kernel transcoded ASCII at 3.6-4.4 GB/s of UTF-8 text where the scalar
//! one did 2.5-2.6 (one thread, 64 KiB blocks of 512 MiB of UTF-16 in
//! memory; BENCHMARKS.md, item 133). The tests compare both with a unit at
//! a time at every length and alignment up to 256 bytes, and on random
//! bytes.

/// Code units per block: 32 bytes of UTF-16, 16 of ASCII.
pub const BLOCK_UNITS: usize = 16;

/// Bytes of UTF-16 per block.
const BLOCK_BYTES: usize = 2 * BLOCK_UNITS;

/// A narrowing implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NarrowKernel {
    /// Four units per 64-bit word; every target.
    Scalar,
    /// 16 units per step with SSE2 (every x86_64 CPU).
    Sse2,
}

impl NarrowKernel {
    /// The fastest kernel of this target.
    pub fn best() -> NarrowKernel {
        if NarrowKernel::Sse2.is_available() {
            NarrowKernel::Sse2
        } else {
            NarrowKernel::Scalar
        }
    }

    /// Whether this CPU (and this build's target) supports the kernel.
    pub fn is_available(self) -> bool {
        match self {
            NarrowKernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            NarrowKernel::Sse2 => std::arch::is_x86_feature_detected!("sse2"),
            #[cfg(not(target_arch = "x86_64"))]
            NarrowKernel::Sse2 => false,
        }
    }
}

/// Appends to `out` the low byte of each code unit of the leading blocks
/// of `units` (UTF-16, big-endian when `big_endian`) whose units are all
/// ASCII (below 0x80), and returns how many bytes of `units` that was: a
/// multiple of `2 * BLOCK_UNITS`. Units after it (a block with a unit of
/// 0x80 or more, a part block at the end) are the caller's to decode.
///
/// ```
/// use urnscan::platform::simd::ascii16::narrow_ascii;
///
/// let utf16: Vec<u8> = "urn:isbn:0451450523 and é".encode_utf16().flat_map(u16::to_le_bytes).collect();
/// let mut out = Vec::new();
/// assert_eq!(narrow_ascii(&utf16, false, &mut out), 32);
/// assert_eq!(out, b"urn:isbn:0451450");
/// ```
#[inline]
pub fn narrow_ascii(units: &[u8], big_endian: bool, out: &mut Vec<u8>) -> usize {
    narrow_ascii_with(NarrowKernel::best(), units, big_endian, out)
}

/// [`narrow_ascii`] with `kernel`; a kernel this CPU lacks gives the scalar
/// kernel's answer (the same answer).
#[inline]
pub fn narrow_ascii_with(kernel: NarrowKernel, units: &[u8], big_endian: bool, out: &mut Vec<u8>) -> usize {
    match kernel {
        // SAFETY: SSE2 is checked right here; the kernel has no other condition.
        #[cfg(target_arch = "x86_64")]
        NarrowKernel::Sse2 if kernel.is_available() => unsafe {
            super::x86_64::ascii16::narrow_ascii(units, big_endian, out)
        },
        _ => narrow_scalar(units, big_endian, out),
    }
}

/// The scalar kernel: per block, four 64-bit words of four units each.
fn narrow_scalar(units: &[u8], big_endian: bool, out: &mut Vec<u8>) -> usize {
    // Over four units read as one little-endian word: the bits that must
    // be zero for each to be below 0x80, and the shift that brings each
    // unit's low byte to the bottom of its half-word.
    let (not_ascii, shift) = if big_endian { (0x80ff_80ff_80ff_80ff_u64, 8) } else { (0xff80_ff80_ff80_ff80_u64, 0) };
    let word = |bytes: &[u8]| u64::from_le_bytes(bytes.try_into().expect("8 bytes"));
    let mut n = 0;
    for block in units.chunks_exact(BLOCK_BYTES) {
        let words = [word(&block[..8]), word(&block[8..16]), word(&block[16..24]), word(&block[24..])];
        if words.iter().fold(0, |all, w| all | w) & not_ascii != 0 {
            break;
        }
        for pair in words.chunks_exact(2) {
            out.extend_from_slice(&(low_bytes(pair[0] >> shift) | low_bytes(pair[1] >> shift) << 32).to_le_bytes());
        }
        n += BLOCK_BYTES;
    }
    n
}

/// The even bytes of `w` (`a 0 b 0 c 0 d 0`, lowest first) side by side in
/// its low half (`a b c d`).
fn low_bytes(w: u64) -> u64 {
    let w = (w | (w >> 8)) & 0x0000_ffff_0000_ffff;
    (w | (w >> 16)) & 0xffff_ffff
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::simd::tests::{lengths, offsets, tested};

    /// The reference: whole blocks while every unit is below 0x80, a unit
    /// at a time.
    fn reference(units: &[u8], big_endian: bool) -> (usize, Vec<u8>) {
        let unit =
            |p: &[u8]| if big_endian { u16::from_be_bytes([p[0], p[1]]) } else { u16::from_le_bytes([p[0], p[1]]) };
        let mut out = Vec::new();
        let mut n = 0;
        for block in units.chunks_exact(BLOCK_BYTES) {
            let block: Vec<u16> = block.chunks_exact(2).map(unit).collect();
            if block.iter().any(|&u| u >= 0x80) {
                break;
            }
            out.extend(block.iter().map(|&u| u as u8));
            n += BLOCK_BYTES;
        }
        (n, out)
    }

    fn kernels() -> Vec<NarrowKernel> {
        let available = [NarrowKernel::Scalar, NarrowKernel::Sse2].into_iter().filter(|k| k.is_available()).collect();
        tested(available, NarrowKernel::Scalar)
    }

    fn check(units: &[u8], big_endian: bool) {
        let want = reference(units, big_endian);
        for kernel in kernels() {
            // Appended after what `out` held.
            let mut out = b"before".to_vec();
            let n = narrow_ascii_with(kernel, units, big_endian, &mut out);
            assert_eq!((n, &out[6..]), (want.0, &want.1[..]), "{kernel:?}, big-endian {big_endian}, {units:02x?}");
        }
    }

    #[test]
    fn ascii_blocks_are_narrowed_and_the_first_other_block_stops() {
        let le: Vec<u8> = "urn:example:a123,z456 and then é".encode_utf16().flat_map(u16::to_le_bytes).collect();
        let be: Vec<u8> = "urn:example:a123,z456 and then é".encode_utf16().flat_map(u16::to_be_bytes).collect();
        for kernel in kernels() {
            let mut out = Vec::new();
            assert_eq!(narrow_ascii_with(kernel, &le, false, &mut out), 32, "{kernel:?}");
            assert_eq!(out, b"urn:example:a123");
            out.clear();
            assert_eq!(narrow_ascii_with(kernel, &be, true, &mut out), 32, "{kernel:?}");
            assert_eq!(out, b"urn:example:a123");
            // Read in the other byte order, "u" is U+7500: not ASCII.
            assert_eq!(narrow_ascii_with(kernel, &le, true, &mut out), 0, "{kernel:?}");
        }
    }

    /// Every length up to 256 bytes at every offset from a 32-byte
    /// boundary of memory (the units themselves whole), ASCII throughout or
    /// with a byte changed first, in the middle and last; and at one
    /// offset, a byte changed at every position. A change sets 0x80 or
    /// 0xff, which stops the block in either byte of a unit, or bit 0,
    /// which stops it in the high byte only.
    #[test]
    fn kernels_agree_at_every_length_and_alignment() {
        let ascii: Vec<u8> = (0..256).map(|i| if i % 2 == 0 { b' ' + (i / 2 % 90) as u8 } else { 0 }).collect();
        for big_endian in [false, true] {
            let base: Vec<u8> =
                if big_endian { ascii.chunks(2).flat_map(|p| [p[1], p[0]]).collect() } else { ascii.clone() };
            // Aligned to 32 bytes, so that `start` is the offset from a boundary.
            #[repr(align(32))]
            struct Aligned([u8; 320]);
            let mut aligned = Box::new(Aligned([0; 320]));
            let room = &mut aligned.0;
            // Under Miri, lengths cut the 32-byte blocks at 0 to 2, 30 and
            // 31 bytes into one.
            let cut = |len: usize| !cfg!(miri) || matches!(len % BLOCK_BYTES, 0..=2 | 30 | 31);
            for start in offsets(BLOCK_BYTES) {
                for len in lengths(256).filter(|&len| cut(len)) {
                    room[start..start + len].copy_from_slice(&base[..len]);
                    check(&room[start..start + len], big_endian);
                    let positions: Vec<usize> = if start == 0 && !cfg!(miri) {
                        (0..len).collect()
                    } else {
                        [0, len / 2, len.saturating_sub(1)].to_vec()
                    };
                    for at in positions.into_iter().filter(|&at| at < len) {
                        let bads: &[u8] = if cfg!(miri) { &[0xff] } else { &[0x80, 0xff, 0x01] };
                        for &bad in bads {
                            let saved = room[start + at];
                            room[start + at] |= bad;
                            check(&room[start..start + len], big_endian);
                            room[start + at] = saved;
                        }
                    }
                }
            }
        }
    }

    proptest::proptest! {
        /// Mostly ASCII units, some of any value, and sometimes an odd
        /// last byte.
        #[test]
        #[cfg_attr(miri, ignore = "the sweeps reach every load; too slow interpreted")]
        fn kernels_agree_on_random_units(
            units in proptest::collection::vec(proptest::prop_oneof![9 => 0u16..0x80, 1 => proptest::prelude::any::<u16>()], 0..150),
            odd in proptest::option::of(proptest::prelude::any::<u8>()),
            big_endian: bool,
        ) {
            let mut bytes: Vec<u8> =
                units.iter().flat_map(|u| if big_endian { u.to_be_bytes() } else { u.to_le_bytes() }).collect();
            bytes.extend(odd);
            check(&bytes, big_endian);
        }
    }
}
