//! Page-size policy: small pages for the process's own (anonymous) memory,
//! huge pages for its file mappings where the kernel can tell them apart.
//!
//! With transparent huge pages set to `always` (a common kernel default),
//! every first touch of a fresh 2 MiB-aligned region of heap makes the
//! kernel allocate and zero a whole 2 MiB page. The key tables grow in many
//! small steps and the allocator gives freed memory back and takes it again,
//! so much of that zeroing is wasted: in `perf` profiles of `urnscan dedup`
//! the kernel's `clear_page_erms` took up to a fifth of the samples.
//!
//! Measured (2026-11-21, 2-core KVM guest, THP `always`, `/usr/bin/time`,
//! two runs each, load 4–5, so only CPU times are compared):
//!
//! | run | THP on: user / sys / peak RSS | THP off |
//! |---|---|---|
//! | `dedup -q -j1`, 10 M lines, 3 M keys | 4.18–4.24 s / 0.92–1.16 s / 442 MB | 4.12–4.25 s / 0.24–0.27 s / 390 MB |
//! | `scan --unique --stats -j1`, 1 GiB text | 0.35–0.42 s / 0.10–0.22 s / 51 MB | 0.34–0.37 s / 0.12–0.13 s / 37 MB |
//! | `scan --unique --stats -j1`, 256 MiB dense | 1.29–1.32 s / 0.08–0.16 s / 176 MB | 1.38–1.40 s / 0.09 s / 145 MB |
//!
//! So the binary keeps huge pages away from its heap at start-up. A user
//! who sets `MIMALLOC_ALLOW_THP` keeps their choice (the allocator is
//! built with its `no_thp` feature, so it never asks for huge pages itself;
//! under THP `always` the kernel still gives them to a process that does
//! not opt out).
//!
//! The file mappings are the other way round. Where the page cache holds a
//! file in 2 MiB folios, the kernel maps them with 2 MiB entries if the
//! mapping asks (`MADV_HUGEPAGE`, which [`super::mmap`] gives every mapping
//! of a huge page or more, huge pages of up to 2 MiB) and the process has
//! not turned huge pages off altogether: one page fault and one TLB entry
//! where there were 512. So on Linux 6.18 and later the flag's newer form
//! is used, `PR_THP_DISABLE_EXCEPT_ADVISED`: off for all memory that did
//! not ask. Older kernels refuse it and get the plain flag, as before.
//!
//! Measured 2026-11-27 (Zen 5 KVM guest, THP `madvise`, Linux 6.18, the
//! workloads of `benches/compare.sh` with their page cache in 2 MiB folios,
//! `benches/ab.sh`, 9 interleaved rounds, medians): 1 GiB of text,
//! `scan --unique --stats` 123 → 112 ms at one thread, 75 → 69 at two,
//! `scan --count` 55 → 47 and 44 → 35; the floor (`bench --floor --once
//! -j1`) 50 → 42 ms; dense text and the 10 M-line dataset unchanged (265
//! → 263, 710 → 705 ms). Peak RSS of `dedup -q -j2` on the dataset
//! 195,736 → 195,748 KB: the mapping gives pages back in whole huge pages
//! ([`super::mmap::Mapping::release_before`]);
//! giving them back by the 4 KiB page, as before, zapped the huge page a
//! release ended in while the next block was being read from it, and
//! the peak was 208,492 KB.
//!
//! The heap in huge pages was measured again too, as the key tables' arena
//! blocks carved from 32 MiB regions advised `MADV_HUGEPAGE`: `dedup -q
//! -j2` 779 → 852 ms (median; 729–940 against 739–854), `-j1` 1,434 →
//! 1,541. On this guest a fresh huge page can cost about 4 ms (7.7–8.1 µs
//! per 4 KiB of it, "What fresh memory costs" in `BENCHMARKS.md`: the host
//! backs it page by page, and the guest compacts memory for it), more than
//! the page faults and TLB misses it saves.

/// What [`limit_transparent_huge_pages`] got the kernel to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HugePages {
    /// Only memory advised `MADV_HUGEPAGE` (the file mappings) may use
    /// huge pages (`PR_THP_DISABLE_EXCEPT_ADVISED`, Linux 6.18 and later).
    AdvisedOnly,
    /// No memory of the process uses them (`PR_SET_THP_DISABLE`, older
    /// kernels).
    Off,
    /// Nothing changed: not Linux, or both requests were refused.
    Unchanged,
}

/// Keeps transparent huge pages away from this process's heap from now on
/// while letting the file mappings, which ask for them, have them where
/// the kernel can tell the two apart (Linux 6.18 and later); on older
/// kernels, off for all of its memory. See the module docs for the
/// measurements behind both halves.
pub fn limit_transparent_huge_pages() -> HugePages {
    imp::limit()
}

#[cfg(target_os = "linux")]
mod imp {
    use super::HugePages;

    /// `PR_SET_THP_DISABLE`'s second flag (Linux 6.18,
    /// `include/uapi/linux/prctl.h`); not in the libc crate yet.
    const PR_THP_DISABLE_EXCEPT_ADVISED: libc::c_ulong = 1 << 1;

    pub(super) fn limit() -> HugePages {
        // SAFETY: PR_SET_THP_DISABLE takes integer flags and zero
        // arguments; it reads and writes no memory of ours. A kernel that
        // does not know the second flag refuses it (EINVAL).
        let advised_only = unsafe {
            libc::prctl(
                libc::PR_SET_THP_DISABLE,
                1 as libc::c_ulong,
                PR_THP_DISABLE_EXCEPT_ADVISED,
                0 as libc::c_ulong,
                0 as libc::c_ulong,
            )
        } == 0;
        if advised_only {
            return HugePages::AdvisedOnly;
        }
        // SAFETY: as above, with the flag alone.
        if unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) } == 0 {
            HugePages::Off
        } else {
            HugePages::Unchanged
        }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn limit() -> super::HugePages {
        super::HugePages::Unchanged
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_is_set_for_the_process() {
        let policy = limit_transparent_huge_pages();
        if policy == HugePages::Unchanged {
            return; // not Linux, or refused: nothing to check
        }
        // SAFETY: PR_GET_THP_DISABLE reads nothing of ours and returns the
        // flags (1 for the whole process, 1 | 2 for all but advised memory).
        #[cfg(target_os = "linux")]
        {
            let flags = unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) };
            let want = if policy == HugePages::AdvisedOnly { 3 } else { 1 };
            assert_eq!(flags, want, "{policy:?}");
        }
    }
}
