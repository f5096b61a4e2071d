//! Platform code: the only place in urnscan with `unsafe`.
//!
//! Seven things need it: SIMD kernels for the candidate search ([`simd`]),
//! memory-mapped files ([`mmap`]), the page-size policy of the heap and mappings
//! ([`pages`]), cache prefetch hints for the key tables ([`prefetch`]),
//! the buffer size of the pipes on standard input and output ([`pipe`]),
//! waiting a limited time for a pipe to have bytes ([`ready`]), and
//! whether a signal is ignored ([`signal`]).
//! Each is wrapped in a safe API here so the rest of the crate
//! (which denies `unsafe_code`) never touches raw pointers.
#![allow(unsafe_code)]

pub mod mmap;
pub mod pages;
pub mod pipe;
pub mod prefetch;
#[cfg(unix)]
pub mod ready;
#[cfg(unix)]
pub mod signal;
pub mod simd;

/// A new pipe's reading and writing ends, for tests (`std::io::pipe` needs
/// Rust 1.87; the crate builds with 1.85).
#[cfg(all(test, unix))]
pub(crate) fn test_pipe() -> (std::fs::File, std::fs::File) {
    use std::os::fd::FromRawFd;
    let mut fds = [0; 2];
    // SAFETY: pipe() writes two descriptors into the array it is given;
    // each is then owned by exactly one File.
    unsafe {
        assert_eq!(libc::pipe(fds.as_mut_ptr()), 0);
        (std::fs::File::from_raw_fd(fds[0]), std::fs::File::from_raw_fd(fds[1]))
    }
}
