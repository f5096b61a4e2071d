//! Fuzz target: every SIMD kernel of the `urn:` search and of the key's
//! delimiter marks agrees with the scalar one.
//!
//! [`UrnFinder::find`] promises exactly
//! `hay[from..].windows(4).position(|w| w.eq_ignore_ascii_case(b"urn:"))`
//! shifted by `from`. The vector kernels have aligned main loops, an
//! overlapping tail block and a superset pre-test, so their edge cases sit
//! at particular distances from the start, the end and 16/32/64-byte
//! alignment; searching from every `from` moves all three. Checked:
//!
//! - the scalar kernel equals that definition (computed once per input as a
//!   "next match at or after i" table);
//! - every kernel this CPU has, with and without software prefetch, gives
//!   the scalar kernel's answer for every `from` (inputs over 1 KiB: the
//!   first and last 512 positions and every 61st in between, so that a long
//!   input costs the fuzzer linear, not quadratic, time), and the same
//!   `find_iter` sequence;
//! - every marks kernel ([`Marks`]) gives the scalar kernel's masks for
//!   the input's first and last `len` bytes, for every `len` up to one past
//!   [`MARKS_LEN`] (`None` there), so that the tail loads and the padded
//!   copy of short inputs meet every length;
//! - every line-bits kernel ([`LineBits::fill_with`]) gives the scalar
//!   kernel's maps for the input (its first [`SPAN`] bytes) cut at each of
//!   its first 64 bytes, so that the partial last block meets every length,
//!   and the `newline` map is the definition (one bit per `\n` byte).

#![no_main]

use libfuzzer_sys::fuzz_target;
use urnscan::platform::simd::class::ClassKernel;
use urnscan::platform::simd::line_bits::{LineBits, SPAN};
use urnscan::platform::simd::marks::{Marks, MARKS_LEN};
use urnscan::platform::simd::{Kernel, UrnFinder};

fuzz_target!(|data: &[u8]| {
    let scalar = UrnFinder::with_kernel(Kernel::Scalar).expect("scalar is always available");
    let next = next_match(data);
    // Each vector kernel with and without its software prefetch (the
    // default depends on the CPU; results must not).
    let kernels: Vec<UrnFinder> = Kernel::available()
        .into_iter()
        .filter_map(UrnFinder::with_kernel)
        .filter(|f| f.kernel() != Kernel::Scalar)
        .flat_map(|f| [f.with_prefetch(false), f.with_prefetch(true)])
        .collect();
    for from in froms(data.len()) {
        let expected = next.get(from).copied().flatten();
        assert_eq!(scalar.find(data, from), expected, "scalar from {from}");
        for finder in &kernels {
            assert_eq!(finder.find(data, from), expected, "{} from {from}", finder.kernel().name());
        }
    }
    let all: Vec<usize> = scalar.find_iter(data).collect();
    for finder in &kernels {
        assert_eq!(finder.find_iter(data).collect::<Vec<_>>(), all, "{} find_iter", finder.kernel().name());
    }
    for len in 0..=data.len().min(MARKS_LEN + 1) {
        for bytes in [&data[..len], &data[data.len() - len..]] {
            let expected = Marks::with_kernel(bytes, ClassKernel::Scalar);
            for kernel in ClassKernel::available() {
                assert_eq!(Marks::with_kernel(bytes, kernel), expected, "marks {kernel:?} len {len}");
            }
        }
    }
    let (mut expected, mut got) = (LineBits::default(), LineBits::default());
    for from in 0..=data.len().min(64) {
        let hay = &data[from..data.len().min(from + SPAN)];
        expected.fill_with(hay, ClassKernel::Scalar);
        let words = hay.len().div_ceil(64) + 1;
        let mut want = vec![0u64; words];
        for (i, _) in hay.iter().enumerate().filter(|&(_, &b)| b == b'\n') {
            want[i / 64] |= 1 << (i % 64);
        }
        assert_eq!(&expected.newline[..words], &want[..], "newlines from {from}");
        for kernel in ClassKernel::available() {
            got.fill_with(hay, kernel);
            let maps = |b: &LineBits| {
                [b.newline, b.ldh, b.upper, b.covered, b.lower_escape, b.frag, b.r_part].map(|m| m[..words].to_vec())
            };
            assert_eq!(maps(&got), maps(&expected), "line bits {kernel:?} from {from}");
        }
    }
});

/// `next[i]`: the first match at or after `i`, for `i` in `0..=len` (a
/// `from` past the end has no entry, and `find` returns `None` there).
fn next_match(hay: &[u8]) -> Vec<Option<usize>> {
    let mut next = vec![None; hay.len() + 1];
    for i in (0..hay.len()).rev() {
        let here = hay[i..].get(..4).is_some_and(|w| w.eq_ignore_ascii_case(b"urn:"));
        next[i] = if here { Some(i) } else { next[i + 1] };
    }
    next
}

fn froms(len: usize) -> Vec<usize> {
    if len <= 1024 {
        return (0..=len + 1).collect();
    }
    let mut v: Vec<usize> = (0..512).chain((512..len - 512).step_by(61)).chain(len - 512..=len + 1).collect();
    v.dedup();
    v
}
