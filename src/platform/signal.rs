//! Whether a signal is ignored, for a program that catches signals only
//! where its caller has not asked for them to be ignored: a background job
//! of a shell without job control inherits SIGINT ignored, `nohup` SIGHUP,
//! and a program that installs a handler for them anyway answers a signal
//! its caller meant it to ignore. Reading the disposition needs
//! `sigaction`, hence this module; installing handlers is left to the
//! program (the library keeps no global state).

/// Whether `signal` is ignored in this process (`SIG_IGN`, usually
/// inherited from the parent). False when the disposition cannot be read.
pub fn is_ignored(signal: libc::c_int) -> bool {
    // SAFETY: `sigaction` with no new action only reads the current one
    // into `old`, a plain C struct for which all zeros is a valid value.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A signal set to be ignored reads as ignored, and its default as not.
    #[test]
    fn an_ignored_signal_reads_as_ignored() {
        // SIGURG: default "ignore" by the kernel yet SIG_DFL, and nothing in
        // the test harness uses it.
        // SAFETY: setting SIGURG's disposition, restored before returning.
        let before = unsafe { libc::signal(libc::SIGURG, libc::SIG_IGN) };
        let ignored = is_ignored(libc::SIGURG);
        // SAFETY: as above.
        unsafe { libc::signal(libc::SIGURG, libc::SIG_DFL) };
        let default = is_ignored(libc::SIGURG);
        // SAFETY: as above.
        unsafe { libc::signal(libc::SIGURG, before) };
        assert!(ignored && !default);
    }
}
