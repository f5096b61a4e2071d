//! Waiting, up to a time limit, for a stream to have bytes to read.
//!
//! A pipe or a terminal, as standard input or given by path, may pause for
//! any length of time (`tail -f app.log | urnscan scan`, `urnscan scan
//! <(tail -f app.log)`): a blocking read then waits
//! with the bytes already read still unscanned. [`crate::source::Live`]
//! asks here first whether anything comes within the time it has left,
//! and when nothing does, gives the scan what it holds instead of waiting.
//!
//! `poll(2)` on the one descriptor, on Unix. A descriptor that is at its
//! end, hung up or in error counts as ready: the read that follows returns
//! the end or the error, as it would have without the wait.

use std::os::fd::BorrowedFd;
use std::time::Duration;

/// Whether `fd` has bytes to read (or an end or error to report) within
/// `timeout`; false when the time ran out first or a signal came. A failed
/// `poll` counts as ready: the read that follows reports the error.
pub fn readable_within(fd: BorrowedFd<'_>, timeout: Duration) -> bool {
    use std::os::fd::AsRawFd;

    // Rounded up, so that a wait of less than a millisecond still waits.
    let millis = timeout.as_nanos().div_ceil(1_000_000).min(libc::c_int::MAX as u128) as libc::c_int;
    let mut pollfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    // SAFETY: poll() reads and writes exactly the one pollfd it is given
    // (a valid, exclusive reference for the call); the descriptor is
    // borrowed, so it stays open until poll returns.
    let ready = unsafe { libc::poll(&mut pollfd, 1, millis) };
    match ready {
        0 => false,
        n if n > 0 => true,
        // A signal: the caller scans what it has and reads again.
        _ => std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::test_pipe as pipe;
    use std::io::Write;
    use std::os::fd::AsFd;
    use std::time::Instant;

    #[test]
    fn an_empty_pipe_waits_the_time_then_data_and_the_end_are_ready() {
        let (read, mut write) = pipe();
        let started = Instant::now();
        assert!(!readable_within(read.as_fd(), Duration::from_millis(30)));
        assert!(started.elapsed() >= Duration::from_millis(25), "{:?}", started.elapsed());
        write.write_all(b"urn:ab:c\n").unwrap();
        assert!(readable_within(read.as_fd(), Duration::from_secs(10)));
        // Read nothing: still ready. Closed by the writer: ready (the end).
        drop(write);
        assert!(readable_within(read.as_fd(), Duration::ZERO));
    }

    #[test]
    fn a_regular_file_is_always_ready() {
        let file = tempfile::tempfile().unwrap();
        assert!(readable_within(file.as_fd(), Duration::ZERO));
    }
}
