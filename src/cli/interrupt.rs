//! `dedup` ended by a signal: its spill files are removed first, as GNU
//! sort removes its temporary files.
//!
//! A `LineDedup` removes its spill directory when it is dropped, which a
//! normal exit and a closed output pipe both do; a signal's default action
//! ends the process without any drop, and left gigabytes in the temporary
//! directory. The library installs no handler (it keeps no global state),
//! so the binary does, and only for a run that may spill (`--memory-limit`):
//! every other run keeps the default actions. signal-hook turns the
//! signals into a thread's loop, in which the cleanup is ordinary code;
//! the thread then ends the process by the same signal with its default
//! action, so the status is the one a shell expects (130 for SIGINT, 143
//! for SIGTERM) and nothing is printed.
//!
//! A signal that was ignored when the program started (a background job
//! of a shell without job control ignores SIGINT; `nohup` ignores SIGHUP)
//! stays ignored, as the caller asked.

#[cfg(unix)]
pub use imp::remove_spills_on_signal;

#[cfg(unix)]
mod imp {
    use std::io;
    use std::path::{Path, PathBuf};

    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::iterator::Signals;
    use urnscan::platform::signal::is_ignored;

    /// Watches SIGINT, SIGTERM and SIGHUP (those not ignored) on a thread
    /// that, on the first of them, removes this process's spill
    /// directories under `temp_dir` (default: the system's) and ends the
    /// process by that signal.
    pub fn remove_spills_on_signal(temp_dir: Option<PathBuf>) -> io::Result<()> {
        let watched: Vec<i32> = [SIGINT, SIGTERM, SIGHUP].into_iter().filter(|&s| !is_ignored(s)).collect();
        if watched.is_empty() {
            return Ok(());
        }
        let mut signals = Signals::new(&watched)?;
        std::thread::spawn(move || {
            if let Some(signal) = signals.forever().next() {
                // Held to the end: the run goes on meanwhile, and once its
                // directory is gone it fails to create a spill file; that
                // error must not be printed (nothing is: the user asked
                // for the end, not for a report).
                let _stderr = io::stderr().lock();
                remove_spills(temp_dir.as_deref());
                let _ = signal_hook::low_level::emulate_default_handler(signal);
            }
        });
        Ok(())
    }

    /// Removes this process's spill directories, again while one is left:
    /// a file the run creates during a removal keeps its directory, but no
    /// file can be created in a directory that is gone, so a few rounds
    /// end it (a bound, in case one cannot be removed at all).
    fn remove_spills(temp_dir: Option<&Path>) {
        for _ in 0..100 {
            if urnscan::lines::remove_spill_dirs(temp_dir).is_ok() {
                return;
            }
        }
    }
}
