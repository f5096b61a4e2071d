//! Page-size policy for the process's own (anonymous) memory.
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
//! So the binary turns huge pages off for its heap at start-up (the
//! allocator's own `MIMALLOC_ALLOW_THP=0` does the same, but only when set
//! in the environment before the process starts). A user who sets
//! `MIMALLOC_ALLOW_THP` keeps their choice.
//!
//! The flag reaches file mappings too: where the page cache holds a file
//! in 2 MiB folios, the kernel maps them with 2 MiB entries only in a
//! process without it. Measured 2026-11-27 (Zen 5 KVM guest, THP `madvise`,
//! Linux 6.18, the 1 GiB text of `benches/compare.sh`, 9 interleaved
//! rounds, medians): with the flag's newer form, `PR_THP_DISABLE_EXCEPT_ADVISED`
//! (Linux 6.18), `MADV_HUGEPAGE` on each file mapping and mimalloc built
//! without its own huge-page advice, 888 of 1,024 MiB were mapped in 2 MiB
//! pages and `scan --count -j1` took 66 ms instead of 72, `scan -u --stats`
//! 137 instead of 141 (`-j2` 84 instead of 87). But more of the file then
//! stayed mapped although `dedup` gives each block's pages back as it goes:
//! `dedup -q -j2` on the 10 M-line dataset peaked at 271 MiB instead of
//! 191, 91 MiB of it file pages (13 before). So the flag stays as it is;
//! giving pages back in 2 MiB-aligned steps is the first thing to try
//! to have both. (Letting mimalloc advise huge pages for
//! the heap as well: dense text `scan -u --stats -j2` 278 → 250 ms, the
//! dataset's `dedup -q -j2` 916 → 963 ms at 284 MiB.)

/// Asks the kernel not to back this process's anonymous memory with
/// transparent huge pages from now on (`PR_SET_THP_DISABLE`). Returns
/// whether it did; on other systems, or when refused, nothing changes.
pub fn disable_transparent_huge_pages() -> bool {
    imp::disable()
}

#[cfg(target_os = "linux")]
mod imp {
    pub(super) fn disable() -> bool {
        // SAFETY: PR_SET_THP_DISABLE takes an integer flag and three zero
        // arguments; it reads and writes no memory of ours.
        unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0 }
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    pub(super) fn disable() -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_flag_is_set_for_the_process() {
        if !super::disable_transparent_huge_pages() {
            return; // not Linux, or refused: nothing to check
        }
        // SAFETY: PR_GET_THP_DISABLE reads nothing of ours and returns the flag.
        #[cfg(target_os = "linux")]
        assert_eq!(unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) }, 1);
    }
}
