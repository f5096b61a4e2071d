//! The progress display on stderr for long `scan` and `dedup` runs.
//!
//! # When
//!
//! [`decide`] is a pure function of the flags, the environment and the total
//! input size:
//!
//! - `--no-progress`: never.
//! - `--progress`: always. On a terminal (not `TERM=dumb`) as a bar; anywhere
//!   else (a pipe, a log file, CI) as a plain line every
//!   [`LINE_INTERVAL`] and one at the end, because indicatif draws nothing on
//!   a non-terminal and cursor movements would garble a log.
//! - default: a bar only when stderr is a terminal, `CI` is not set, `TERM`
//!   is not `dumb`, and the inputs' total size, known up front, is at least
//!   [`LARGE_INPUT`]. Standard input and other streams have no known size,
//!   so they get no bar unless asked for (then a spinner with bytes and rate,
//!   no ETA).
//!
//! [`LARGE_INPUT`] is 256 MiB because below it no run lasts long enough for
//! a bar to help: from BENCHMARKS.md, sparse text scans at 2.4–3.4 GB/s
//! (256 MiB in about 0.1 s), URN-dense text at about 0.2 GB/s (1.3 s) and
//! `dedup` at 0.1–0.16 GB/s (under 3 s); a bar that appears for a moment
//! and vanishes is noise. Above it, the slow workloads and cold disks run for
//! seconds to minutes.
//!
//! # How
//!
//! The library never prints. It adds each file's, window's or block's byte
//! count to an `Arc<AtomicU64>` ([`urnscan::job::JobOptions::progress`],
//! [`urnscan::lines::DedupOptions::progress`]) — once per unit of work,
//! never per URN. A decoded input (`-z`, UTF-16) adds its own bytes as its
//! decoder reads them ([`urnscan::source::decoded_counting`]), not the
//! decoded ones, so the count ends at the inputs' size on disk, the bar's
//! total, whatever the compression ratio. A ticker thread here reads the counter and updates the
//! display; the workers never wait for it. Everything else written to stderr
//! during the run goes through [`Progress::suspend`] (the bar is taken down
//! and redrawn around it, or the plain lines are held back), in whole lines
//! ([`WholeLines`]). [`Progress::finish`] stops the ticker and clears the
//! bar before any summary is printed. Nothing ever goes to stdout.

use std::io::{self, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use indicatif::{DecimalBytes, ProgressBar, ProgressDrawTarget, ProgressStyle};
use urnscan::source::{Input, InputError};

/// Inputs of at least this many bytes get a bar by default (see the module doc).
pub const LARGE_INPUT: u64 = 256 << 20;

/// How often a plain progress line is written when stderr is not a terminal.
pub const LINE_INTERVAL: Duration = Duration::from_secs(2);

/// How often the bar takes the counter's value (indicatif limits redraws itself).
const BAR_INTERVAL: Duration = Duration::from_millis(100);

/// `--progress` / `--no-progress` (the last one given wins).
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct ProgressArgs {
    /// Show progress on stderr (bytes, rate, ETA), even when stderr is not a terminal. By default it is
    /// shown only on a terminal, for inputs of 256 MiB or more, and not when CI is set or TERM=dumb.
    #[arg(long, overrides_with = "no_progress")]
    progress: bool,
    /// Never show progress.
    #[arg(long, overrides_with = "progress")]
    no_progress: bool,
}

impl ProgressArgs {
    /// `Some(true)` for `--progress`, `Some(false)` for `--no-progress`.
    pub fn flag(self) -> Option<bool> {
        match (self.progress, self.no_progress) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        }
    }
}

/// What the environment says about stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Env {
    /// stderr is a terminal.
    pub terminal: bool,
    /// The `CI` variable is set (to anything).
    pub ci: bool,
    /// `TERM=dumb`: a terminal without cursor movement.
    pub dumb: bool,
}

impl Env {
    /// Reads the environment.
    pub fn detect() -> Env {
        Env {
            terminal: io::IsTerminal::is_terminal(&io::stderr()),
            ci: std::env::var_os("CI").is_some(),
            dumb: std::env::var_os("TERM").is_some_and(|t| t == "dumb"),
        }
    }
}

/// How progress is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Show {
    /// Not at all.
    Off,
    /// An indicatif bar (or spinner, without a total), redrawn in place.
    Bar,
    /// A plain line now and then, for a stderr that is not a terminal.
    Lines,
}

/// Whether and how to show progress; `flag` is [`ProgressArgs::flag`] and
/// `total` the inputs' total size when known.
pub fn decide(flag: Option<bool>, env: Env, total: Option<u64>) -> Show {
    let drawable = env.terminal && !env.dumb;
    match flag {
        Some(false) => Show::Off,
        Some(true) if drawable => Show::Bar,
        Some(true) => Show::Lines,
        None if drawable && !env.ci && total.is_some_and(|t| t >= LARGE_INPUT) => Show::Bar,
        None => Show::Off,
    }
}

/// The total size of `inputs` when every one is a regular file (unreadable
/// ones count as empty: they are skipped); `None` with stdin or a pipe.
pub fn total_size(inputs: &[Result<Input, InputError>]) -> Option<u64> {
    let mut total = 0u64;
    for input in inputs {
        match input {
            Ok(Input::Stdin) => return None,
            Ok(Input::File(path)) => match std::fs::metadata(path) {
                Ok(meta) if meta.is_file() => total += meta.len(),
                Ok(_) => return None,
                Err(_) => {}
            },
            Err(_) => {}
        }
    }
    Some(total)
}

/// A running progress display, or none.
pub struct Progress {
    counter: Option<Arc<AtomicU64>>,
    bar: Option<ProgressBar>,
    /// Held while plain lines or other stderr output are written.
    lines: Arc<Mutex<()>>,
    ticker: Mutex<Option<(Sender<()>, JoinHandle<()>)>>,
}

impl Progress {
    /// No display, no counter: the library skips its counting.
    pub fn off() -> Progress {
        Progress { counter: None, bar: None, lines: Arc::default(), ticker: Mutex::new(None) }
    }

    /// Decides from the flag and the environment and starts the display.
    /// `total` is only called when the decision depends on it, since it may
    /// walk directories.
    pub fn for_run(flag: Option<bool>, total: impl FnOnce() -> Option<u64>) -> Progress {
        let env = Env::detect();
        if decide(flag, env, Some(u64::MAX)) == Show::Off {
            return Progress::off();
        }
        let total = total();
        Progress::start(decide(flag, env, total), total)
    }

    /// Starts showing progress against `total` bytes (a spinner without one).
    pub fn start(show: Show, total: Option<u64>) -> Progress {
        let mut progress = Progress::off();
        if show == Show::Off {
            return progress;
        }
        let counter = Arc::new(AtomicU64::new(0));
        let (stop, stopped) = mpsc::channel();
        let ticker = std::thread::Builder::new().name("progress".to_owned());
        let spawned = if show == Show::Bar {
            let bar = new_bar(total);
            progress.bar = Some(bar.clone());
            let counter = Arc::clone(&counter);
            ticker.spawn(move || {
                tick(&stopped, BAR_INTERVAL, || {
                    bar.set_position(counter.load(Ordering::Relaxed));
                    bar.tick(); // turns the spinner when there is no total
                })
            })
        } else {
            let lines = Arc::clone(&progress.lines);
            let counter = Arc::clone(&counter);
            let started = Instant::now();
            ticker.spawn(move || {
                let write = |done: bool| {
                    let _held = lines.lock().unwrap_or_else(|e| e.into_inner());
                    let mut line = plain_line(counter.load(Ordering::Relaxed), total, started.elapsed(), done);
                    line.push('\n');
                    // One write, so the line arrives whole.
                    let _ = io::stderr().write_all(line.as_bytes());
                };
                tick(&stopped, LINE_INTERVAL, || write(false));
                write(true);
            })
        };
        // No thread, no display: the run itself must not fail for it.
        let Ok(handle) = spawned else { return Progress::off() };
        progress.counter = Some(counter);
        progress.ticker = Mutex::new(Some((stop, handle)));
        progress
    }

    /// The counter for the library, or `None` when nothing is shown.
    pub fn counter(&self) -> Option<Arc<AtomicU64>> {
        self.counter.clone()
    }

    /// Runs `f` (which writes whole lines to stderr) with the display out of
    /// its way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.bar {
            Some(bar) if !bar.is_finished() => bar.suspend(f),
            _ => {
                let _held = self.lines.lock().unwrap_or_else(|e| e.into_inner());
                f()
            }
        }
    }

    /// Stops the display: clears the bar, or writes the last plain line.
    /// Call it before printing a summary; later calls do nothing.
    pub fn finish(&self) {
        let ticker = self.ticker.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((stop, handle)) = ticker {
            let _ = stop.send(());
            let _ = handle.join();
        }
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Calls `f` every `interval` until told to stop (or the sender is gone).
fn tick(stopped: &mpsc::Receiver<()>, interval: Duration, mut f: impl FnMut()) {
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(interval) {
        f();
    }
}

fn new_bar(total: Option<u64>) -> ProgressBar {
    let template = match total {
        Some(_) => "{spinner} {decimal_bytes}/{decimal_total_bytes} [{wide_bar}] {percent}%  {decimal_bytes_per_sec}  ETA {eta}",
        None => "{spinner} {decimal_bytes}  {decimal_bytes_per_sec}  {elapsed}",
    };
    let style =
        ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()).progress_chars("=> ");
    let bar = ProgressBar::with_draw_target(total, ProgressDrawTarget::stderr());
    bar.set_style(style);
    bar
}

/// `urnscan: progress: 1.20 GB of 4.00 GB (30%), 2.10 GB/s, ETA 1m 23s`, or
/// at the end `urnscan: progress: 4.00 GB in 1.9 s, 2.10 GB/s`.
fn plain_line(done: u64, total: Option<u64>, elapsed: Duration, finished: bool) -> String {
    if finished {
        return format!("urnscan: progress: {}", throughput(done, elapsed));
    }
    let rate = bytes_per_second(done, elapsed);
    let rate_text = format!("{}/s", DecimalBytes(rate as u64));
    match total {
        Some(total) if total > 0 => {
            let percent = (done.min(total) as f64 * 100.0 / total as f64) as u64;
            let eta = if rate > 0.0 { eta_text(total.saturating_sub(done) as f64 / rate) } else { "?".to_owned() };
            format!(
                "urnscan: progress: {} of {} ({percent}%), {rate_text}, ETA {eta}",
                DecimalBytes(done),
                DecimalBytes(total)
            )
        }
        _ => format!("urnscan: progress: {}, {rate_text}", DecimalBytes(done)),
    }
}

/// `4.00 GB in 1.9 s, 2.10 GB/s`: what a finished run read, in how long, how
/// fast (the end of a plain progress display, and `scan --stats` on a
/// terminal).
pub fn throughput(done: u64, elapsed: Duration) -> String {
    let rate = bytes_per_second(done, elapsed);
    format!("{} in {:.1} s, {}/s", DecimalBytes(done), elapsed.as_secs_f64(), DecimalBytes(rate as u64))
}

/// 0 for no measurable time, rather than a division by zero.
pub fn bytes_per_second(done: u64, elapsed: Duration) -> f64 {
    let secs = elapsed.as_secs_f64();
    if secs > 0.0 {
        done as f64 / secs
    } else {
        0.0
    }
}

fn eta_text(secs: f64) -> String {
    let secs = secs.ceil() as u64;
    match secs {
        0..=59 => format!("{secs}s"),
        60..=3599 => format!("{}m {}s", secs / 60, secs % 60),
        _ => format!("{}h {}m", secs / 3600, secs % 3600 / 60),
    }
}

/// A buffered stderr writer that hands `inner` whole lines only, with the
/// display suspended: a bar redrawn after half a line would erase it, and a
/// plain progress line would land in the middle of it. Like the
/// `BufWriter` it replaces, it writes once per buffer-full, not per line.
pub struct WholeLines<'p, W: Write> {
    inner: W,
    buf: Vec<u8>,
    progress: &'p Progress,
}

const WHOLE_LINES_CAPACITY: usize = 64 << 10;

impl<'p, W: Write> WholeLines<'p, W> {
    /// Buffers for `inner`, suspending `progress` around each write.
    pub fn new(inner: W, progress: &'p Progress) -> Self {
        WholeLines { inner, buf: Vec::with_capacity(WHOLE_LINES_CAPACITY), progress }
    }

    fn write_out(&mut self, upto: usize) -> io::Result<()> {
        let (inner, buf) = (&mut self.inner, &self.buf[..upto]);
        self.progress.suspend(|| inner.write_all(buf).and_then(|()| inner.flush()))?;
        self.buf.drain(..upto);
        Ok(())
    }
}

impl<W: Write> Write for WholeLines<'_, W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(data);
        if self.buf.len() >= WHOLE_LINES_CAPACITY {
            if let Some(nl) = memchr::memrchr(b'\n', &self.buf) {
                self.write_out(nl + 1)?;
            }
        }
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_out(self.buf.len())
    }
}

impl<W: Write> Drop for WholeLines<'_, W> {
    fn drop(&mut self) {
        let _ = self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTY: Env = Env { terminal: true, ci: false, dumb: false };
    const PIPE: Env = Env { terminal: false, ci: false, dumb: false };
    const BIG: Option<u64> = Some(LARGE_INPUT);
    const SMALL: Option<u64> = Some(LARGE_INPUT - 1);

    #[test]
    fn default_bar_only_for_large_known_inputs_on_a_terminal() {
        assert_eq!(decide(None, TTY, BIG), Show::Bar);
        assert_eq!(decide(None, TTY, Some(u64::MAX)), Show::Bar);
        assert_eq!(decide(None, TTY, SMALL), Show::Off);
        assert_eq!(decide(None, TTY, None), Show::Off, "stdin: size unknown");
        assert_eq!(decide(None, PIPE, BIG), Show::Off, "never in pipes");
        assert_eq!(decide(None, Env { ci: true, ..TTY }, BIG), Show::Off, "never in CI");
        assert_eq!(decide(None, Env { dumb: true, ..TTY }, BIG), Show::Off, "never on TERM=dumb");
    }

    #[test]
    fn flags_force_or_forbid() {
        assert_eq!(decide(Some(false), TTY, BIG), Show::Off);
        assert_eq!(decide(Some(true), TTY, SMALL), Show::Bar);
        assert_eq!(decide(Some(true), TTY, None), Show::Bar);
        assert_eq!(decide(Some(true), PIPE, BIG), Show::Lines, "forced into a pipe: plain lines");
        assert_eq!(decide(Some(true), Env { ci: true, ..PIPE }, None), Show::Lines);
        assert_eq!(decide(Some(true), Env { dumb: true, ..TTY }, BIG), Show::Lines);
    }

    #[test]
    fn plain_lines_say_bytes_rate_and_eta() {
        let line = plain_line(1_000_000_000, Some(4_000_000_000), Duration::from_secs(1), false);
        assert_eq!(line, "urnscan: progress: 1.00 GB of 4.00 GB (25%), 1.00 GB/s, ETA 3s");
        let line = plain_line(500_000_000, None, Duration::from_secs(2), false);
        assert_eq!(line, "urnscan: progress: 500.00 MB, 250.00 MB/s");
        let line = plain_line(4_000_000_000, Some(4_000_000_000), Duration::from_secs(2), true);
        assert_eq!(line, "urnscan: progress: 4.00 GB in 2.0 s, 2.00 GB/s");
        // An empty input read in no measurable time: no division by zero.
        assert_eq!(throughput(0, Duration::ZERO), "0 B in 0.0 s, 0 B/s");
        assert_eq!(eta_text(3599.0), "59m 59s");
        assert_eq!(eta_text(7260.0), "2h 1m");
    }

    /// Records each write separately.
    #[derive(Default)]
    struct Writes(Vec<Vec<u8>>);

    impl Write for &mut Writes {
        fn write(&mut self, data: &[u8]) -> io::Result<usize> {
            self.0.push(data.to_vec());
            Ok(data.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn whole_lines_are_written_whole() {
        let progress = Progress::off();
        let mut writes = Writes::default();
        {
            let mut w = WholeLines::new(&mut writes, &progress);
            let line = vec![b'x'; 1000];
            for _ in 0..200 {
                w.write_all(&line[..500]).unwrap();
                w.write_all(&line[500..]).unwrap();
                w.write_all(b"\n").unwrap();
            }
            w.write_all(b"tail").unwrap();
        }
        let writes = writes.0;
        // 200,004 bytes in 64 KiB buffers: a few writes, not one per line.
        assert!((3..=5).contains(&writes.len()), "{} writes", writes.len());
        let (last, whole) = writes.split_last().unwrap();
        assert!(whole.iter().all(|w| w.ends_with(b"\n")), "a write ended mid-line");
        assert!(last.ends_with(b"\ntail"));
        assert_eq!(writes.iter().map(Vec::len).sum::<usize>(), 200 * 1001 + 4);
    }
}
