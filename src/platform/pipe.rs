//! Pipe buffers sized for throughput.
//!
//! A Linux pipe holds 64 KiB unless asked for more. urnscan fills blocks of
//! 8 or 16 MiB from a stream and writes its output in buffers of about
//! 240 KiB, so through a default pipe a block takes hundreds of reads and a
//! buffer four writes, each of which may wait for the process on the other
//! side, and each wait is a pair of context switches. On a machine whose
//! cores are all busy (urnscan's threads and the other process of the
//! pipeline) those switches are what the run waits for. A pipe can be
//! given up to `/proc/sys/fs/pipe-max-size` (1 MiB by default) by any
//! process that holds either end of it; the kernel allocates its pages
//! only as data fills it.
//!
//! Measured (2026-11-28, 2-vCPU KVM guest, Linux 6.18, the pipe made by a
//! script with and without `F_SETPIPE_SZ` of 1 MiB, `cat` on the other end,
//! three runs each, medians): 1 GiB of text into `urnscan scan -c -` at two
//! threads 1.34 → 0.41 s, at one 1.42 → 0.45; a 10 M-line URN dataset into
//! `urnscan dedup -q -` 1.22 → 0.99 s; 467 MB of `urnscan scan -j1` output
//! out through `cat` 1.55 → 1.03 s (JSON Lines 3.99 → 1.92), at two threads
//! 0.59 → 0.56. So the binary asks for 1 MiB on its standard input and
//! output when they are pipes with less. A refusal (a lower system limit,
//! the user's pipe quota) is met with half the size, down to what the pipe
//! already holds: a system whose limit is 256 KiB gets pipes of 256 KiB,
//! not the default 64 (with that limit, `cat` of 1 GiB of text into
//! `urnscan scan -c -` 1.32 → 0.43 s, as with 1 MiB).

use std::os::fd::AsFd;

/// The capacity asked for: Linux's default `/proc/sys/fs/pipe-max-size`,
/// the most an unprivileged process may ask for there.
pub const PIPE_BYTES: usize = 1 << 20;

/// Grows the buffer of the pipe behind `fd` to [`PIPE_BYTES`] if it holds
/// less (or to the largest power of two below it that the system allows),
/// and returns the pipe's capacity after the attempt; `None` when `fd` is
/// not a pipe (a file, a terminal, a socket) or the platform has no such
/// setting (anything but Linux and Android).
pub fn widen(fd: impl AsFd) -> Option<usize> {
    imp::widen(fd.as_fd())
}

/// The capacity a pipe of `now` bytes ends with when `ask(size)` asks for
/// `size` bytes and gives the capacity granted, or `None` if refused:
/// [`PIPE_BYTES`] first, then half as much after each refusal, never less
/// than `now`.
#[cfg_attr(not(any(target_os = "linux", target_os = "android")), allow(dead_code))]
fn grow(now: usize, mut ask: impl FnMut(usize) -> Option<usize>) -> usize {
    let mut size = PIPE_BYTES;
    while size > now {
        if let Some(granted) = ask(size) {
            return granted;
        }
        size /= 2;
    }
    now
}

/// The capacity of the pipe `fd` refers to, in bytes; `None` as for
/// [`widen`]. Changes nothing.
pub fn capacity(fd: impl AsFd) -> Option<usize> {
    imp::capacity(fd.as_fd())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
mod imp {
    use std::os::fd::{AsRawFd, BorrowedFd};

    pub(super) fn capacity(fd: BorrowedFd<'_>) -> Option<usize> {
        // SAFETY: F_GETPIPE_SZ takes an open descriptor (borrowed, so open
        // for the call) and reads or writes no memory of ours. Anything but
        // a pipe gets EBADF or EINVAL.
        let now = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GETPIPE_SZ) };
        usize::try_from(now).ok()
    }

    pub(super) fn widen(fd: BorrowedFd<'_>) -> Option<usize> {
        let now = capacity(fd)?;
        Some(super::grow(now, |size| {
            // SAFETY: as for F_GETPIPE_SZ; the size is an integer argument
            // (at most PIPE_BYTES, so it fits).
            let set = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_SETPIPE_SZ, size as libc::c_int) };
            usize::try_from(set).ok()
        }))
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
mod imp {
    use std::os::fd::BorrowedFd;

    pub(super) fn capacity(_: BorrowedFd<'_>) -> Option<usize> {
        None
    }

    pub(super) fn widen(_: BorrowedFd<'_>) -> Option<usize> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    use crate::platform::test_pipe as pipe;
    use std::io::{Read, Write};

    #[test]
    fn a_refusal_is_met_with_half_the_size_down_to_what_the_pipe_holds() {
        let kib = 1024;
        // (capacity now, system limit) -> (capacity after, sizes asked)
        let cases: [(usize, usize, usize, &[usize]); 6] = [
            (64 * kib, PIPE_BYTES, PIPE_BYTES, &[PIPE_BYTES]),
            (64 * kib, 4 * PIPE_BYTES, PIPE_BYTES, &[PIPE_BYTES]),
            (64 * kib, 256 * kib, 256 * kib, &[PIPE_BYTES, 512 * kib, 256 * kib]),
            (64 * kib, 300 * kib, 256 * kib, &[PIPE_BYTES, 512 * kib, 256 * kib]),
            // Nothing above the pipe's own size is granted: it stays, and
            // its own size is not asked for again.
            (64 * kib, 4 * kib, 64 * kib, &[PIPE_BYTES, 512 * kib, 256 * kib, 128 * kib]),
            // A pipe already at the size is left alone.
            (PIPE_BYTES, 0, PIPE_BYTES, &[]),
        ];
        for (now, limit, after, want_asked) in cases {
            // A system that grants up to `limit` bytes (rounded up to whole
            // pages, as Linux does) and refuses more.
            let mut asked = Vec::new();
            let got = grow(now, |size| {
                asked.push(size);
                (size <= limit).then(|| size.next_multiple_of(4096))
            });
            assert_eq!(got, after, "now {now}, limit {limit}");
            assert_eq!(asked, want_asked, "now {now}, limit {limit}");
        }
    }

    #[test]
    fn a_file_is_not_a_pipe() {
        let file = tempfile::tempfile().unwrap();
        assert_eq!(widen(&file), None);
        assert_eq!(capacity(&file), None);
    }

    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn a_pipe_grows_and_still_carries_its_bytes() {
        let (mut reader, mut writer) = pipe();
        let default = capacity(&reader).expect("a pipe");
        let before = widen(&reader).expect("a pipe");
        assert!(before >= default);
        // Asking again changes nothing; either end names the same pipe.
        assert_eq!(widen(&writer), Some(before));
        assert_eq!(capacity(&writer), Some(before));
        let max: usize = std::fs::read_to_string("/proc/sys/fs/pipe-max-size").unwrap().trim().parse().unwrap();
        if max >= PIPE_BYTES {
            assert_eq!(before, PIPE_BYTES);
            // The whole capacity is written without a reader: a pipe of the
            // default 64 KiB would block here.
            let bytes: Vec<u8> = (0..PIPE_BYTES).map(|i| (i % 251) as u8).collect();
            writer.write_all(&bytes).unwrap();
            drop(writer);
            let mut back = Vec::new();
            reader.read_to_end(&mut back).unwrap();
            assert!(back == bytes);
        }
    }
}
