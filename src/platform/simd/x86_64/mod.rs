//! x86_64 kernels. SSE2 is part of the x86_64 baseline, AVX2 is detected at
//! run time by `Kernel::is_available`; callers of these `unsafe fn`s must
//! have checked the feature first.
//!
//! Both main loops ask for the haystack [`PREFETCH_AHEAD`] bytes ahead of
//! the turn they test. The search is bound by memory, not by the tests:
//! on the 2-vCPU KVM guest of `BENCHMARKS.md` the hardware prefetcher
//! alone kept the AVX2 search of 1 GiB of page-cached text at 129–156 ms
//! against 113–142 ms for a plain XOR read of the same bytes; with the
//! software prefetch it took 99–116 ms (4 KiB ahead; 1 and 2 KiB ahead gave
//! 110–118 ms), faster than that plain read (`urnscan bench`, one thread,
//! interleaved runs).

use crate::platform::prefetch::prefetch;

pub(super) mod avx2;
pub(super) mod class;
pub(super) mod marks;
pub(super) mod sse2;

/// How far ahead of the tested bytes the main loops prefetch.
const PREFETCH_AHEAD: usize = 4096;

/// Hints that the `len` bytes from `hay[at + PREFETCH_AHEAD]` on (one
/// main-loop turn) will be read soon: one prefetch per 64-byte cache line,
/// none past the haystack's end.
#[inline(always)]
fn prefetch_ahead(hay: &[u8], at: usize, len: usize) {
    for line in (0..len).step_by(64) {
        if let Some(byte) = hay.get(at + PREFETCH_AHEAD + line) {
            prefetch(byte);
        }
    }
}
