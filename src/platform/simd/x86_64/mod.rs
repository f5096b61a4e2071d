//! x86_64 kernels. SSE2 is part of the x86_64 baseline, AVX2 is detected at
//! run time by `Kernel::is_available`; callers of these `unsafe fn`s must
//! have checked the feature first.
//!
//! # Software prefetch: on for Intel, off elsewhere
//!
//! Both main loops can ask for the haystack [`PREFETCH_AHEAD`] bytes ahead
//! of the turn they test (the `PREFETCH` parameter). Whether that helps
//! depends on the CPU's own prefetcher, so the finder decides once, at
//! construction ([`software_prefetch_helps`]), and `urnscan bench` shows
//! both. Measured on 1 GiB of page-cached text, one thread, `urnscan bench`:
//!
//! - Intel Xeon KVM guest (2 vCPUs): the hardware prefetcher alone kept the
//!   AVX2 search at 129–156 ms against 113–142 ms for a plain XOR read of
//!   the same bytes; with the software prefetch it took 99–116 ms (4 KiB
//!   ahead; 1 and 2 KiB ahead gave 110–118 ms), faster than that read.
//! - AMD EPYC KVM guest (2 vCPUs; family 25, model 17: Zen 4), three
//!   interleaved rounds of best-of-7: floor 38.1–44.5 ms; AVX2 without
//!   prefetch 40.6–43.7 ms, 4 KiB ahead 45.9–47.1 ms, 1 KiB ahead
//!   49.0–52.2 ms, 4 KiB ahead with `prefetchnta` 45.7–47.7 ms. Zen's
//!   prefetcher already runs ahead of a linear read; the extra requests
//!   only cost.

use crate::platform::prefetch::prefetch;

/// Whether this CPU's search should prefetch ahead: on Intel CPUs (the
/// `GenuineIntel` vendor string of `cpuid` leaf 0), where it was measured
/// to help, and not elsewhere (see the module docs).
pub(super) fn software_prefetch_helps() -> bool {
    let id = std::arch::x86_64::__cpuid(0);
    let vendor = [id.ebx.to_le_bytes(), id.edx.to_le_bytes(), id.ecx.to_le_bytes()];
    vendor.concat() == b"GenuineIntel"
}

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
