//! x86_64 kernels. SSE2 is part of the x86_64 baseline, AVX2 is detected at
//! run time by `Kernel::is_available`; callers of these `unsafe fn`s must
//! have checked the feature first.
//!
//! # Software prefetch: on for Intel, AMD Zen 5 and Zen 3 EPYC, off elsewhere
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
//! - AMD EPYC KVM guest (2 vCPUs; family 26, model 2: Zen 5), four runs of
//!   best-of-5: floor 34.2–35.6 ms; AVX2 without prefetch 36.7–42.0 ms
//!   (0.85–0.93x the floor's throughput), 4 KiB ahead 31.0–33.6 ms. Zen 5
//!   behaves as the Intel guests do, not as Zen 4, so AMD turns it on
//!   from that family on. (8 KiB ahead gave 30.6–33.4 ms there, 2 KiB
//!   36.9–38.7; 4 KiB stays, the distance measured on both vendors.)
//! - Intel Xeon KVM guest (2 vCPUs; family 6, model 167), four runs of
//!   best-of-5: floor 67.3–72.2 ms; AVX2 with the prefetch 67.7–75.1 ms,
//!   without it 81.8–92.1. That is with the AVX2 loop's one-cache-line
//!   turn when prefetching; its former 128-byte turn took 96.8–98.7 ms with
//!   the prefetch there (see `avx2.rs`).
//! - AMD EPYC KVM guest (2 vCPUs; family 25, model 1: Zen 3, Milan), whole
//!   `urnscan scan --count` processes in 15 interleaved rounds
//!   (`benches/ab.sh`), medians: one thread 138 -> 124 ms with the
//!   prefetch (file cached in 4 KiB folios) and 131 -> 118 ms (mostly
//!   2 MiB folios), two threads 88 -> 85 and 89 -> 84 ms; `scan --unique
//!   --stats`, one thread, 257 -> 233 ms. Zen 3 behaves as Zen 5 does, not
//!   as Zen 4 of the same family 25: the rule tells them apart by model,
//!   on only for models 0x00-0x0F (the EPYC 7003 parts measured; the
//!   desktop and mobile Zen 3 models, 0x20-0x5F, were not).

use crate::platform::prefetch::prefetch;

/// Whether this CPU's search should prefetch ahead: on Intel CPUs (the
/// `GenuineIntel` vendor string of `cpuid` leaf 0), on AMD CPUs of family
/// 26 (Zen 5) or later and on Zen 3 EPYC (family 25, models 0x00-0x0F),
/// where it was measured to help, and not on Zen 4 (family 25 too), older
/// AMD CPUs or other vendors (see the module docs).
pub(super) fn software_prefetch_helps() -> bool {
    let id = cpuid(0);
    let vendor = [id.ebx.to_le_bytes(), id.edx.to_le_bytes(), id.ecx.to_le_bytes()].concat();
    match &vendor[..] {
        b"GenuineIntel" => true,
        b"AuthenticAMD" => amd_prefetch_helps(cpuid(1).eax),
        _ => false,
    }
}

/// The AMD part of [`software_prefetch_helps`], from `cpuid` leaf 1 `eax`.
fn amd_prefetch_helps(eax: u32) -> bool {
    match family(eax) {
        f if f >= ZEN5_FAMILY => true,
        ZEN3_ZEN4_FAMILY => model(eax) <= ZEN3_EPYC_LAST_MODEL,
        _ => false,
    }
}

/// `cpuid` leaf `leaf`: safe to call from Rust 1.87 on, `unsafe` before
/// (and `rust-version` is 1.85), hence a block the newer compilers find
/// needless.
#[allow(unused_unsafe)]
#[cfg(not(miri))]
fn cpuid(leaf: u32) -> std::arch::x86_64::CpuidResult {
    // SAFETY: every x86_64 CPU has `cpuid`, and leaves 0 and 1.
    unsafe { std::arch::x86_64::__cpuid(leaf) }
}

/// Under Miri, which cannot run the `cpuid` instruction (inline assembly):
/// a CPU of no known vendor, so the kernels run without the prefetch, as
/// on an unknown CPU.
#[cfg(miri)]
fn cpuid(_leaf: u32) -> std::arch::x86_64::CpuidResult {
    std::arch::x86_64::CpuidResult { eax: 0, ebx: 0, ecx: 0, edx: 0 }
}

/// The first AMD CPU family (0x1A) whose search runs faster with the
/// software prefetch.
const ZEN5_FAMILY: u32 = 0x1A;
/// The AMD family of Zen 3 and Zen 4 (0x19), told apart by model.
const ZEN3_ZEN4_FAMILY: u32 = 0x19;
/// The last model of that family that is Zen 3 EPYC (7003, "Milan"):
/// Zen 4 EPYC starts at 0x10.
const ZEN3_EPYC_LAST_MODEL: u32 = 0x0F;

/// The CPU family of a `cpuid` leaf 1 `eax`: the base family (bits 8-11),
/// plus the extended family (bits 20-27) when the base family is 0xF, as
/// the Intel and AMD manuals define it.
fn family(eax: u32) -> u32 {
    let base = (eax >> 8) & 0xF;
    if base == 0xF {
        base + ((eax >> 20) & 0xFF)
    } else {
        base
    }
}

/// The CPU model of a `cpuid` leaf 1 `eax`: the base model (bits 4-7),
/// with the extended model (bits 16-19) above it when the base family is
/// 0x6 or 0xF, as the Intel and AMD manuals define it.
fn model(eax: u32) -> u32 {
    let base = (eax >> 4) & 0xF;
    match (eax >> 8) & 0xF {
        0x6 | 0xF => base | (((eax >> 16) & 0xF) << 4),
        _ => base,
    }
}

pub(super) mod ascii16;
pub(super) mod avx2;
pub(super) mod class;
pub(super) mod line_bits;
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

#[cfg(test)]
mod tests {
    use super::{amd_prefetch_helps, family, model};
    use crate::platform::simd::cpuinfo_field;

    #[test]
    fn family_adds_the_extended_family_only_past_base_0xf() {
        // cpuid(1).eax of the machines in BENCHMARKS.md, put together from
        // the family, model and stepping `lscpu` printed for each.
        assert_eq!(family(0x000C_06F2), 6, "Intel Xeon: family 6, model 207, stepping 2");
        assert_eq!(family(0x00A1_0F11), 0x19, "AMD EPYC Zen 4: family 25, model 17, stepping 1");
        assert_eq!(family(0x00B0_0F21), 0x1A, "AMD EPYC Zen 5: family 26, model 2, stepping 1");
        // The manuals define the extended family as read only when the base
        // family is 0xF; set bits there otherwise do not count.
        assert_eq!(family(0x0FF0_0600), 6);
    }

    #[test]
    fn model_adds_the_extended_model_past_base_family_0x6_and_0xf() {
        assert_eq!(model(0x000C_06F2), 207, "Intel Xeon: family 6, model 207");
        assert_eq!(model(0x000A_0671), 167, "Intel Xeon: family 6, model 167");
        assert_eq!(model(0x00A0_0F11), 1, "AMD EPYC Zen 3: family 25, model 1");
        assert_eq!(model(0x00A1_0F11), 17, "AMD EPYC Zen 4: family 25, model 17");
        assert_eq!(model(0x00B0_0F21), 2, "AMD EPYC Zen 5: family 26, model 2");
        // Base family 5 (a Pentium): the extended model is not read.
        assert_eq!(model(0x000F_0543), 4);
    }

    #[test]
    fn amd_prefetch_follows_the_measured_machines() {
        // BENCHMARKS.md and the module docs: on for Zen 3 EPYC and Zen 5,
        // off for Zen 4 (same family as Zen 3) and for families before.
        assert!(amd_prefetch_helps(0x00A0_0F11), "Zen 3, family 25 model 1");
        assert!(!amd_prefetch_helps(0x00A1_0F11), "Zen 4, family 25 model 17");
        assert!(amd_prefetch_helps(0x00B0_0F21), "Zen 5, family 26 model 2");
        assert!(!amd_prefetch_helps(0x0083_0F10), "Zen 2, family 23 model 49");
        assert!(!amd_prefetch_helps(0x00A2_0F10), "Zen 3 desktop, family 25 model 33: not measured");
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri runs no cpuid: the stub names no vendor")]
    fn family_agrees_with_the_kernel() {
        let Some(kernel) = cpuinfo_field("cpu family") else { return };
        assert_eq!(family(super::cpuid(1).eax).to_string(), kernel);
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri runs no cpuid: the stub names no vendor")]
    fn model_agrees_with_the_kernel() {
        let Some(kernel) = cpuinfo_field("model") else { return };
        assert_eq!(model(super::cpuid(1).eax).to_string(), kernel);
    }
}
