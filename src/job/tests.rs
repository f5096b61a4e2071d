//! The run's tests: inputs in order, windows, early stops, key batches,
//! formatted text, line numbers.

use super::keys::walked_key_batch;
use super::*;
use crate::grammar::{Grammar, MAX_URN_LEN};
use crate::key::key_of_valid;
use crate::key::KeyShape;
use proptest::prelude::*;
use std::io::Write;

/// Overwrites bytes of `hay` (the structure bytes of a URN, zeros as a
/// truncated mapping reads, non-ASCII) and zero-fills from `cut` on.
fn damaged(hay: &[u8], writes: &[(prop::sample::Index, u8)], cut: prop::sample::Index) -> Vec<u8> {
    let mut bytes = hay.to_vec();
    for (at, b) in writes {
        let i = at.index(bytes.len());
        bytes[i] = *b;
    }
    let cut = cut.index(bytes.len() + 1);
    bytes[cut..].fill(0);
    bytes
}

/// What a recording test sink keeps of each event, and the line of text it
/// travels as when the sink gives a [`Formatter`] (which writes the line
/// on the scanning threads; the sink reads it back).
trait Record: Sized + 'static {
    fn of_urn(at: Location, urn: &Urn<'_>) -> Self;
    /// `None`: rejected candidates are not kept.
    fn of_rejected(at: Location) -> Option<Self>;
    fn write(&self, out: &mut Vec<u8>) -> io::Result<()>;
    fn read(line: &str) -> Self;
}

/// The URNs a sink is handed, as (offset, text), in `OFFSET URN` lines.
impl Record for (u64, String) {
    fn of_urn(at: Location, urn: &Urn<'_>) -> Self {
        (at.offset, urn.as_str().to_owned())
    }
    fn of_rejected(_: Location) -> Option<Self> {
        None
    }
    fn write(&self, out: &mut Vec<u8>) -> io::Result<()> {
        writeln!(out, "{} {}", self.0, self.1)
    }
    fn read(line: &str) -> Self {
        let (offset, urn) = line.split_once(' ').unwrap();
        (offset.parse().unwrap(), urn.to_owned())
    }
}

/// Where each event is, URNs and rejected candidates alike, as (offset,
/// line), in `OFFSET LINE` lines (`-` for no line).
impl Record for (u64, Option<u64>) {
    fn of_urn(at: Location, _: &Urn<'_>) -> Self {
        (at.offset, at.line)
    }
    fn of_rejected(at: Location) -> Option<Self> {
        Some((at.offset, at.line))
    }
    fn write(&self, out: &mut Vec<u8>) -> io::Result<()> {
        match self.1 {
            Some(line) => writeln!(out, "{} {line}", self.0),
            None => writeln!(out, "{} -", self.0),
        }
    }
    fn read(line: &str) -> Self {
        let (offset, line) = line.split_once(' ').unwrap();
        (offset.parse().unwrap(), line.parse().ok())
    }
}

/// A sink that keeps a [`Record`] of each event it is handed; made by
/// `formatting()`, it gives a formatter instead and reads its text back.
struct Recorded<R>(Vec<R>, bool);

/// The URNs a run hands over, as (offset, text).
type Printed = Recorded<(u64, String)>;
/// Where each URN and rejected candidate is, as (offset, line).
type Located = Recorded<(u64, Option<u64>)>;

impl<R> Default for Recorded<R> {
    fn default() -> Self {
        Recorded(Vec::new(), false)
    }
}

impl<R> Recorded<R> {
    fn formatting() -> Self {
        Recorded(Vec::new(), true)
    }
}

/// The formatter of a [`Recorded`] sink: one [`Record::write`] line per
/// event kept.
struct RecordLines<R>(std::marker::PhantomData<fn() -> R>);

impl<R: Record> Formatter for RecordLines<R> {
    fn urn(&self, out: &mut Vec<u8>, _: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
        R::of_urn(at, urn).write(out)
    }
    fn rejected(&self, out: &mut Vec<u8>, _: FileRef<'_>, at: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
        R::of_rejected(at).map_or(Ok(()), |r| r.write(out))
    }
}

impl<R: Record> Sink for Recorded<R> {
    fn urn(&mut self, _: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
        self.0.push(R::of_urn(at, urn));
        Ok(())
    }
    fn rejected(&mut self, _: FileRef<'_>, at: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
        self.0.extend(R::of_rejected(at));
        Ok(())
    }
    fn input_error(&mut self, _: &InputError) -> io::Result<()> {
        Ok(())
    }
    fn formatter(&self) -> Option<Arc<dyn Formatter>> {
        self.1.then(|| Arc::new(RecordLines::<R>(std::marker::PhantomData)) as Arc<dyn Formatter>)
    }
    fn write_formatted(&mut self, text: &[u8]) -> io::Result<()> {
        self.0.extend(std::str::from_utf8(text).unwrap().lines().map(R::read));
        Ok(())
    }
}

/// What a sink sees of a run, in order: `urn NAME OFFSET`, `done NAME
/// VALID INVALID`, `error PATH`.
#[derive(Default)]
struct Seen(Vec<String>);

impl Sink for Seen {
    fn urn(&mut self, file: FileRef<'_>, at: Location, _: &Urn<'_>) -> io::Result<()> {
        self.0.push(format!("urn {} {}", file.name.rsplit('/').next().unwrap_or_default(), at.offset));
        Ok(())
    }
    fn rejected(&mut self, _: FileRef<'_>, _: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
        Ok(())
    }
    fn input_error(&mut self, error: &InputError) -> io::Result<()> {
        self.0.push(format!("error {}", error.path.rsplit('/').next().unwrap_or_default()));
        Ok(())
    }
    fn input_done(&mut self, file: FileRef<'_>, t: &Totals) -> io::Result<()> {
        let name = file.name.rsplit('/').next().unwrap_or_default();
        self.0.push(format!("done {name} {} {} {}", t.files, t.valid, t.invalid()));
        Ok(())
    }
}

/// Each input's own counts reach the sink once, in input order, after
/// its URNs; a missing input gets an error instead.
#[test]
fn each_input_is_done_in_order_with_its_own_counts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "urn:ab:c and urn:a:b, URN:AB:C\n").unwrap();
    std::fs::write(dir.path().join("b.txt"), "nothing\n").unwrap();
    let paths: Vec<PathBuf> = ["a.txt", "gone.txt", "b.txt"].iter().map(|n| dir.path().join(n)).collect();
    let runs = [(false, false), (true, true), (false, true)]
        .into_iter()
        .flat_map(|ke| [MmapPolicy::Always, MmapPolicy::Never, MmapPolicy::Auto].map(|m| (ke, m)));
    for ((keys, events), mmap) in runs {
        let opts = JobOptions { keys, events, mmap, ..JobOptions::default() };
        let mut seen = Seen::default();
        let outcome = run(&paths, &opts, &mut seen).unwrap();
        let mut want = vec!["urn a.txt 0", "urn a.txt 22", "done a.txt 1 2 1", "error gone.txt", "done b.txt 1 0 0"];
        if !events {
            want.retain(|line| !line.starts_with("urn"));
        }
        assert_eq!(seen.0, want, "keys {keys}, events {events}, {mmap:?}");
        assert_eq!((outcome.totals.valid, outcome.totals.errors), (2, 1));
    }
}

/// A file that shrank while mapped is reported with what happened, in
/// words any program can show (no command-line flag: the command line
/// adds its advice where it prints the error).
#[test]
fn a_file_that_shrank_is_reported_as_incomplete() {
    let error = changed_error("big.txt");
    assert_eq!(error.to_string(), "big.txt: the file shrank while it was mapped, so results for it are incomplete");
    assert!(error.shrank() && error.decode_error().is_none());
    let other = InputError { path: "a.txt".into(), error: io::Error::other("the file shrank") };
    assert!(!other.shrank(), "the type tells, not the words");
}

/// The sink and the outcome get each input's path itself beside its
/// UTF-8 name: a name that is not UTF-8 is lossy text, its path's bytes
/// are the file's (on Unix what text output prints); stdin has no path.
#[cfg(unix)]
#[test]
fn inputs_keep_their_paths_whatever_their_bytes() {
    use std::os::unix::ffi::OsStrExt;
    struct Names(Vec<(String, Option<PathBuf>, Vec<u8>)>);
    impl Sink for Names {
        fn input_done(&mut self, file: FileRef<'_>, _: &Totals) -> io::Result<()> {
            self.0.push((file.name.to_owned(), file.path.map(Path::to_path_buf), file.name_bytes().to_vec()));
            Ok(())
        }
        fn input_error(&mut self, error: &InputError) -> io::Result<()> {
            Err(io::Error::other(error.to_string()))
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let odd = dir.path().join(std::ffi::OsStr::from_bytes(b"caf\xff.txt"));
    if std::fs::write(&odd, "urn:ab:c\n").is_err() {
        return;
    }
    let mut names = Names(Vec::new());
    let outcome = run(std::slice::from_ref(&odd), &JobOptions::default(), &mut names).unwrap();
    let lossy = odd.to_string_lossy().into_owned();
    assert!(lossy.ends_with("caf\u{fffd}.txt"));
    assert_eq!(names.0, [(lossy.clone(), Some(odd.clone()), odd.as_os_str().as_bytes().to_vec())]);
    assert_eq!((outcome.inputs, outcome.paths), (vec![lossy], vec![Some(odd)]));
    let stdin = FileRef { index: 0, name: "-", path: None };
    assert_eq!(stdin.name_bytes(), b"-");
}

/// A file larger than a window, scanned at two threads (windows cut
/// into finer chunks, see `window_scanner`), mapped and read: the text
/// the sink's formatter made on the scanning threads holds the URNs
/// the sink is handed one by one, in order.
#[test]
fn formatted_windows_hold_the_urns_the_sink_is_handed() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    let mut text = Vec::new();
    let lines = LARGE / 24;
    for i in 0..lines {
        // Lines cut by chunk edges anywhere, a rejected candidate, a
        // URN inside a URN, and text without any.
        match i % 4 {
            0 => writeln!(text, "urn:ab:{i}%2c/urn:cd:{i}"),
            1 => writeln!(text, "see urn:a:b and <urn:Ef:{i}?=q>."),
            2 => writeln!(text, "nothing here at all, line {i}"),
            _ => writeln!(text, "URN:ISBN:{i}"),
        }
        .unwrap();
    }
    assert!(text.len() > LARGE + (1 << 20));
    std::fs::write(&path, &text).unwrap();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
    let paths = [path];
    for mmap in [MmapPolicy::Always, MmapPolicy::Never] {
        let opts = JobOptions { mmap, keys: false, ..JobOptions::default() };
        let (mut own, mut formatted) = (Printed::default(), Printed::formatting());
        pool.install(|| run(&paths, &opts, &mut own)).unwrap();
        pool.install(|| run(&paths, &opts, &mut formatted)).unwrap();
        // One URN per line but the third of every four (`urn:a:b` has a
        // one-letter NID, RFC 8141 wants two or more).
        assert_eq!(own.0.len(), (0..lines).filter(|i| i % 4 != 2).count(), "{mmap:?}");
        assert_eq!(formatted.0, own.0, "{mmap:?}");
    }
}

/// `Sink::input_progress` comes after each window of a large file and
/// each block of a stream with the counts so far, and an error from it
/// ends the run there: the file is not scanned to its end.
#[test]
fn a_sink_ends_the_run_from_input_progress() {
    /// The valid counts it was shown; it stops at the first above 0.
    #[derive(Default)]
    struct Enough(Vec<u64>, bool);
    impl Sink for Enough {
        fn input_error(&mut self, _: &InputError) -> io::Result<()> {
            Ok(())
        }
        fn input_done(&mut self, _: FileRef<'_>, _: &Totals) -> io::Result<()> {
            self.1 = true;
            Ok(())
        }
        fn input_progress(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<ControlFlow<()>> {
            self.0.push(totals.valid);
            match totals.valid {
                0 => Ok(ControlFlow::Continue(())),
                _ => Err(io::Error::other("enough")),
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.txt");
    // Three windows' worth of text without a URN, then one, then more.
    let mut text = vec![b'x'; 3 * LARGE];
    text.extend_from_slice(b" urn:ab:c ");
    text.resize(text.len() + 3 * LARGE, b'y');
    std::fs::write(&path, &text).unwrap();
    let paths = [path];
    for (mmap, block) in [(MmapPolicy::Always, DEFAULT_STREAM_BLOCK), (MmapPolicy::Never, 1 << 20)] {
        let opts = JobOptions { mmap, stream_block: block, keys: false, events: false, ..JobOptions::default() };
        let mut sink = Enough::default();
        let error = run(&paths, &opts, &mut sink).err();
        assert_eq!(error.map(|e| e.to_string()), Some("enough".to_owned()), "{mmap:?}");
        // Windows or blocks without the URN, then the one that holds it.
        assert_eq!(sink.0.last(), Some(&1), "{mmap:?}: {:?}", sink.0);
        assert!(sink.0[..sink.0.len() - 1].iter().all(|&n| n == 0), "{mmap:?}: {:?}", sink.0);
        assert!(sink.0.len() >= 2, "{mmap:?}: {:?}", sink.0);
        assert!(!sink.1, "{mmap:?}: input_done after the stop");
        // A sink that never stops sees the whole file.
        let mut all = Located::default();
        assert_eq!(run(&paths, &opts, &mut all).unwrap().totals.valid, 1);
    }
}

/// With `early_stop`, a file of a few MiB is scanned in windows from
/// 256 KiB on, so a sink that has seen enough stops it after the first
/// (and without, is not asked before its end: it is scanned whole);
/// the events are those of a run without it.
#[test]
fn early_stop_asks_after_a_short_first_window() {
    #[derive(Default)]
    struct FirstOnly(Vec<u64>, usize, Vec<(u64, Option<u64>)>);
    impl Sink for FirstOnly {
        fn urn(&mut self, _: FileRef<'_>, at: Location, _: &Urn<'_>) -> io::Result<()> {
            self.2.push((at.offset, at.line));
            Ok(())
        }
        fn input_error(&mut self, _: &InputError) -> io::Result<()> {
            Ok(())
        }
        fn input_done(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<()> {
            self.0.push(totals.bytes);
            Ok(())
        }
        fn input_progress(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<ControlFlow<()>> {
            self.1 += 1;
            Ok(if totals.valid >= 3 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("some.txt");
    // A URN every 64 KiB of 3 MiB, on lines of 1 KiB.
    let mut text = Vec::new();
    for i in 0..3 * 1024 {
        let line = if i % 64 == 0 { format!("urn:ex:{i} ") } else { String::new() };
        text.extend_from_slice(line.as_bytes());
        text.resize((i + 1) * 1024 - 1, b'.');
        text.push(b'\n');
    }
    std::fs::write(&path, &text).unwrap();
    let paths = [path];
    let all = {
        let opts = JobOptions { keys: false, line_numbers: true, ..JobOptions::default() };
        let mut sink = FirstOnly::default();
        run(&paths, &opts, &mut sink).unwrap();
        assert_eq!((sink.0, sink.1), (vec![text.len() as u64], 0), "scanned whole, not asked");
        sink.2
    };
    assert_eq!(all.len(), 48);
    for events in [true, false] {
        let progress = Some(Arc::new(AtomicU64::new(0)));
        let opts = JobOptions {
            keys: false,
            events,
            line_numbers: true,
            early_stop: true,
            progress: progress.clone(),
            ..JobOptions::default()
        };
        let mut sink = FirstOnly::default();
        run(&paths, &opts, &mut sink).unwrap();
        // The progress counter ends at the file's size, stopped or not.
        let counted = progress.map(|p| p.load(Ordering::Relaxed));
        assert_eq!(counted, Some(text.len() as u64), "events {events}");
        // 256 KiB hold four URNs: asked once, stopped there (with
        // events, the 1 MiB window scanned meanwhile is dropped unseen).
        assert_eq!((sink.0, sink.1), (vec![EARLY_WINDOW as u64], 1), "events {events}");
        let seen = if events { 4 } else { 0 };
        assert_eq!(sink.2, all[..seen], "events {events}");
    }
}

/// `ControlFlow::Break` from `Sink::input_progress` ends the input,
/// not the run: `input_done` follows with the counts so far (the bytes
/// scanned, the keys of the windows or blocks handed over), and the
/// next input is scanned whole.
#[test]
fn a_sink_skips_the_rest_of_an_input_from_input_progress() {
    /// Each input's (valid, bytes) at its end; it breaks at a URN.
    #[derive(Default)]
    struct FirstOnly(Vec<(u64, u64)>);
    impl Sink for FirstOnly {
        fn input_error(&mut self, _: &InputError) -> io::Result<()> {
            Ok(())
        }
        fn input_done(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<()> {
            self.0.push((totals.valid, totals.bytes));
            Ok(())
        }
        fn input_progress(&mut self, _: FileRef<'_>, totals: &Totals) -> io::Result<ControlFlow<()>> {
            Ok(if totals.valid > 0 { ControlFlow::Break(()) } else { ControlFlow::Continue(()) })
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let (big, small) = (dir.path().join("big.txt"), dir.path().join("small.txt"));
    // A URN after two windows' worth of text, another three windows on.
    let mut text = vec![b'x'; 2 * LARGE];
    text.extend_from_slice(b" urn:ab:c ");
    text.resize(text.len() + 3 * LARGE, b'y');
    text.extend_from_slice(b" urn:ab:d\n");
    std::fs::write(&big, &text).unwrap();
    std::fs::write(&small, "urn:ab:e urn:ab:f\n").unwrap();
    let paths = [big, small];
    for (mmap, block) in [(MmapPolicy::Always, DEFAULT_STREAM_BLOCK), (MmapPolicy::Never, 1 << 20)] {
        let opts = JobOptions { mmap, stream_block: block, ..JobOptions::default() };
        let mut sink = FirstOnly::default();
        let outcome = run(&paths, &opts, &mut sink).unwrap();
        let [(big_valid, big_bytes), small_done] = sink.0[..] else { panic!("{mmap:?}: {:?}", sink.0) };
        assert_eq!(big_valid, 1, "{mmap:?}");
        // Stopped after the part that holds the first URN, well before the second.
        assert!(big_bytes > 2 * LARGE as u64 && big_bytes < 4 * LARGE as u64, "{mmap:?}: {big_bytes}");
        assert_eq!(small_done, (2, 18), "{mmap:?}");
        assert_eq!(outcome.totals.valid, 3, "{mmap:?}");
        let keys: std::collections::BTreeSet<Vec<u8>> = outcome.table.iter().map(|e| e.key.to_vec()).collect();
        let expected: Vec<&[u8]> = vec![b"urn:ab:c", b"urn:ab:e", b"urn:ab:f"];
        assert!(keys.iter().eq(expected), "{mmap:?}: {keys:?}");
    }
}

/// A sink that gives a formatter but cannot take its text fails the
/// run with the default `write_formatted`'s error, instead of losing
/// the text.
#[test]
fn formatted_text_is_never_dropped_silently() {
    struct Half;
    impl Sink for Half {
        fn urn(&mut self, _: FileRef<'_>, _: Location, _: &Urn<'_>) -> io::Result<()> {
            Ok(())
        }
        fn rejected(&mut self, _: FileRef<'_>, _: Location, _: &[u8], _: &UrnError) -> io::Result<()> {
            Ok(())
        }
        fn input_error(&mut self, _: &InputError) -> io::Result<()> {
            Ok(())
        }
        fn formatter(&self) -> Option<Arc<dyn Formatter>> {
            Printed::formatting().formatter()
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.txt");
    std::fs::write(&path, "urn:ab:c\n").unwrap();
    let opts = JobOptions { keys: false, ..JobOptions::default() };
    let error = run(&[path], &opts, &mut Half).err().unwrap();
    assert_eq!(error.kind(), io::ErrorKind::Unsupported);
}

fn printed(scanner: &Scanner, hay: &[u8], events: &[Event], parts: &[Vec<Parts>]) -> Vec<(u64, String)> {
    let mut sink = Printed::default();
    let opts = JobOptions { extract: scanner.options(), ..JobOptions::default() };
    let mut input = Emitting::new(FileRef { index: 0, name: "f", path: None }, &opts, None, 0);
    emit(&opts, &mut input, hay, 0, events, Notes { parts, kept: &[] }, &mut sink).unwrap();
    sink.0
}

fn byte() -> impl Strategy<Value = u8> {
    prop::sample::select(b":%?#+=/aF2 \0\xe9".to_vec())
}

proptest! {
    /// The output from the parts the scan kept is the output of parsing
    /// every URN again, also when the file was cut short after the scan
    /// (a truncated mapping reads zeros from its new end on): exactly
    /// the URNs that end before the cut.
    #[test]
    fn printing_from_parts_equals_parsing_again(
        urns in prop::collection::vec("(urn|URN):[a-bA-B]{2,3}:[a-b%2cF]{1,10}(\\?\\+r|\\?=q|#f)?", 1..16),
        seps in prop::collection::vec(prop::sample::select(vec![" ", "\n", "<x>", "\"", "%", "urn:"]), 16),
        chunk in 1usize..40,
        cut in any::<prop::sample::Index>(),
    ) {
        let hay: Vec<u8> = urns.iter().zip(&seps).flat_map(|(u, s)| [u.as_bytes(), s.as_bytes()].concat()).collect();
        let scanner = Scanner::new(ExtractOptions::default()).with_chunk_size(chunk);
        let (events, parts) = scanner.scan_span_noted(&hay, 0, hay.len(), None, |_, p: &[Parts]| p.to_vec());
        let whole = printed(&scanner, &hay, &events, &parts);
        prop_assert_eq!(&whole, &printed(&scanner, &hay, &events, &[]));
        let cut_short = damaged(&hay, &[], cut);
        let end = cut_short.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
        let survivors: Vec<(u64, String)> =
            whole.iter().filter(|(at, urn)| *at as usize + urn.len() <= end).cloned().collect();
        prop_assert_eq!(&printed(&scanner, &cut_short, &events, &parts), &survivors);
        prop_assert_eq!(&printed(&scanner, &cut_short, &events, &[]), &survivors);
    }

    /// A shared mapping rewritten under the run: the key shapes the scan
    /// took from the original bytes are applied to other bytes, and the
    /// batches go into the table against yet others. Nothing panics, and
    /// every entry kept still is its raw form's key in the final bytes.
    #[test]
    fn shapes_applied_to_changed_bytes_keep_only_consistent_keys(
        urns in prop::collection::vec("(urn|URN|Urn):[a-bA-B]{2,3}:[a-b%2cF]{1,10}(\\?\\+r|\\?=q|#f)?", 1..16),
        chunk in 1usize..40,
        during in prop::collection::vec((any::<prop::sample::Index>(), byte()), 0..8),
        after in prop::collection::vec((any::<prop::sample::Index>(), byte()), 0..8),
        cut in any::<prop::sample::Index>(),
    ) {
        let hay = urns.join(" ").into_bytes();
        let grammar = Grammar::Rfc8141;
        let scanner = Scanner::new(ExtractOptions::default()).with_chunk_size(chunk);
        let (_, chunks) = scanner.scan_span_noted(&hay, 0, hay.len(), None, |e, s: &[KeyShape]| (e.to_vec(), s.to_vec()));
        let origin = Origin { file: 0, base: 0, grammar, mapped: true, ns_rules: false };
        let during = damaged(&hay, &during, cut);
        let batches: Vec<KeyBatch> =
            chunks.iter().map(|(events, shapes)| walked_key_batch(&during, events, shapes, origin, &[])).collect();
        let after = damaged(&during, &after, cut);
        let mut table = ShardedTable::new();
        absorb(&mut table, &batches, &after);
        for entry in table.iter() {
            let raw = entry.raw.to_vec();
            let at = entry.first.offset as usize;
            prop_assert_eq!(&after[at..at + raw.len()], &raw[..]);
            prop_assert!(raw.iter().all(u8::is_ascii_graphic));
            let key = key_of_valid(&raw, grammar);
            prop_assert_eq!(key.as_deref(), Some(entry.key));
        }
    }

    /// With line numbers, every event's line is one more than the
    /// newlines before its offset, for a file mapped or read whole and
    /// a stream in blocks as short as 1 byte (whose next block starts
    /// before the last one's end), whether the run keeps keys or not,
    /// and whether the sink formats the events (whole files, chunk by
    /// chunk, once every chunk's lines are counted) or is handed them;
    /// the events are those of the run without line numbers.
    #[test]
    fn line_numbers_count_the_newlines_before_each_event(
        urns in prop::collection::vec("(urn|URN):(ab|a|cd):[a-b%2cF]{1,6}", 1..24),
        seps in prop::collection::vec(prop::sample::select(vec![" ", "\n", "\r\n", "\n\n", "urn:\n", "\nurn:x", "", "long", "long"]), 24),
        chunk in 1usize..48,
        block in 1usize..64,
        keys: bool,
    ) {
        // A stream's blocks hold MAX_URN_LEN + 8 bytes beyond the bytes
        // they scan (the longest URN): several blocks need separators of
        // about two fifths of that.
        let long = "a line\n\nof text\r\n".repeat(MAX_URN_LEN * 2 / 5 / 17);
        let sep = |s: &str| if s == "long" { long.clone() } else { s.to_owned() };
        let hay: String = urns.iter().zip(&seps).map(|(u, s)| format!("{u}{}", sep(s))).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        std::fs::write(&path, &hay).unwrap();
        let paths = [path];
        for mmap in [MmapPolicy::Always, MmapPolicy::Never] {
            let plain = JobOptions { mmap, chunk_size: chunk, stream_block: block, keys, ..JobOptions::default() };
            // (Keys on: a run that keeps none would use the formatter.)
            let mut without = Located::default();
            run(&paths, &JobOptions { keys: true, ..plain.clone() }, &mut without).unwrap();
            let opts = JobOptions { line_numbers: true, ..plain };
            let (mut whole, mut streamed) = (Located::default(), Located::default());
            run(&paths, &opts, &mut whole).unwrap();
            let mut formatted = Located::formatting();
            run(&paths, &opts, &mut formatted).unwrap();
            let scanner = Scanner::new(opts.extract).with_chunk_size(chunk);
            let reader = Box::new(io::Cursor::new(hay.clone().into_bytes()));
            let target = Target { file: FileRef { index: 0, name: "-", path: None }, formatter: None, texts: &Texts::default(), progress: None };
            scan_stream(&scanner, &opts, target, reader, &mut streamed, &mut Outcome::default()).unwrap();
            // And streamed with the formatter: on the scanning threads.
            let mut streamed_formatted = Located::formatting();
            let reader = Box::new(io::Cursor::new(hay.clone().into_bytes()));
            let formatter = Located::formatting().formatter().unwrap();
            let target = Target { formatter: Some(&*formatter), ..target };
            scan_stream(&scanner, &opts, target, reader, &mut streamed_formatted, &mut Outcome::default()).unwrap();
            let want: Vec<(u64, Option<u64>)> = without.0.iter().map(|&(offset, line)| {
                assert_eq!(line, None);
                (offset, Some(1 + hay.as_bytes()[..offset as usize].iter().filter(|&&b| b == b'\n').count() as u64))
            }).collect();
            prop_assert_eq!(&whole.0, &want, "{:?}", mmap);
            prop_assert_eq!(&formatted.0, &want, "formatted, {:?}", mmap);
            prop_assert_eq!(&streamed.0, &want, "streamed, {:?}", mmap);
            prop_assert_eq!(&streamed_formatted.0, &want, "streamed and formatted, {:?}", mmap);
        }
    }

    /// `--nid`: a run with a filter hands the sink, counts and keys
    /// exactly the URNs of the unfiltered run whose NID is one of the
    /// filter's (compared in any case), for whole files, mapped or read,
    /// and for streamed blocks. URNs of other NIDs still end where they
    /// end: `urn:cd:x/urn:ab:y` is one URN of NID `cd`, and nothing of
    /// it is kept.
    #[test]
    fn a_nid_filter_keeps_exactly_the_urns_of_its_nids(
        urns in prop::collection::vec("(urn|URN):(ab|AB|aB|cd|abc|a-b|b):[a-b%2cF]{1,6}", 1..24),
        seps in prop::collection::vec(prop::sample::select(vec![" ", "/", "\n", "<x>", "urn:", "."]), 24),
        chunk in 1usize..48,
        block in 8usize..96,
    ) {
        let hay: String = urns.iter().zip(&seps).map(|(u, s)| format!("{u}{s}")).collect();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.txt");
        std::fs::write(&path, &hay).unwrap();
        let paths = [path];
        let filter = NidFilter::new(["AB", "a-b"], Grammar::Rfc8141).unwrap();
        // A file mapped, read whole, and streamed in blocks of `block` bytes.
        let job = |opts: &JobOptions, streamed: bool, sink: &mut Printed| {
            if !streamed {
                return run(&paths, opts, sink).unwrap();
            }
            let scanner = Scanner::new(opts.extract).with_chunk_size(opts.chunk_size).with_finder(opts.finder);
            let mut outcome = Outcome::default();
            let reader = Box::new(io::Cursor::new(hay.clone().into_bytes()));
            let formatter = sink.formatter().filter(|_| opts.events && !opts.keys);
            let texts = Texts::default();
            let file = FileRef { index: 0, name: "-", path: None };
            let target = Target { file, formatter: formatter.as_deref(), texts: &texts, progress: None };
            scan_stream(&scanner, opts, target, reader, sink, &mut outcome).unwrap();
            outcome
        };
        for (mmap, streamed) in [(MmapPolicy::Always, false), (MmapPolicy::Never, false), (MmapPolicy::Never, true)] {
            let opts = JobOptions { mmap, chunk_size: chunk, stream_block: block, ..JobOptions::default() };
            let mut all = Printed::default();
            let unfiltered = job(&opts, streamed, &mut all);
            // A run that only prints formats the URNs it keeps, as the
            // sink would print them, on the threads that scanned them.
            let printing = JobOptions { nids: Some(filter.clone()), keys: false, ..opts.clone() };
            let (mut own, mut formatted) = (Printed::default(), Printed::formatting());
            job(&printing, streamed, &mut own);
            job(&printing, streamed, &mut formatted);
            prop_assert_eq!(&formatted.0, &own.0, "{:?}, streamed {}", mmap, streamed);
            let nid = |urn: &str| urn[4..].split(':').next().unwrap().to_ascii_lowercase();
            let want: Vec<(u64, String)> =
                all.0.iter().filter(|(_, urn)| ["ab", "a-b"].contains(&nid(urn).as_str())).cloned().collect();
            let want_keys: std::collections::BTreeSet<Vec<u8>> =
                want.iter().map(|(_, urn)| crate::parse(urn.as_bytes(), Grammar::Rfc8141).unwrap().key().as_bytes().to_vec()).collect();

            let opts = JobOptions { nids: Some(filter.clone()), ..opts };
            let mut kept = Printed::default();
            let filtered = job(&opts, streamed, &mut kept);
            prop_assert_eq!(&kept.0, &want, "{:?}, streamed {}", mmap, streamed);
            let t = &filtered.totals;
            prop_assert_eq!(t.valid, want.len() as u64);
            prop_assert_eq!(t.valid + t.excluded, unfiltered.totals.valid);
            prop_assert_eq!(t.candidates, unfiltered.totals.candidates);
            prop_assert_eq!(t.invalid(), unfiltered.totals.invalid());
            let keys: std::collections::BTreeSet<Vec<u8>> = filtered.table.iter().map(|e| e.key.to_vec()).collect();
            prop_assert_eq!(keys, want_keys);
            let counted: u64 = filtered.table.iter().map(|e| e.count).sum();
            prop_assert_eq!(counted, want.len() as u64);
        }
    }
}

/// What a sink or its formatter is given of each rejected candidate, as
/// `offset<TAB>candidate<TAB>error offset` lines.
struct Candidates(Vec<String>, bool);

struct CandidateLines;

fn candidate_line(at: Location, candidate: &[u8], error: &UrnError) -> String {
    format!("{}\t{}\t{}", at.offset, String::from_utf8_lossy(candidate), error.offset())
}

impl Formatter for CandidateLines {
    fn urn(&self, _: &mut Vec<u8>, _: FileRef<'_>, _: Location, _: &Urn<'_>) -> io::Result<()> {
        Ok(())
    }
    fn rejected(&self, out: &mut Vec<u8>, _: FileRef<'_>, at: Location, c: &[u8], e: &UrnError) -> io::Result<()> {
        writeln!(out, "{}", candidate_line(at, c, e))
    }
}

impl Sink for Candidates {
    fn rejected(&mut self, _: FileRef<'_>, at: Location, candidate: &[u8], error: &UrnError) -> io::Result<()> {
        self.0.push(candidate_line(at, candidate, error));
        Ok(())
    }
    fn input_error(&mut self, _: &InputError) -> io::Result<()> {
        Ok(())
    }
    fn formatter(&self) -> Option<Arc<dyn Formatter>> {
        self.1.then(|| Arc::new(CandidateLines) as Arc<dyn Formatter>)
    }
    fn write_formatted(&mut self, text: &[u8]) -> io::Result<()> {
        self.0.extend(std::str::from_utf8(text).unwrap().lines().map(str::to_owned));
        Ok(())
    }
}

/// A rejected candidate reaches the sink (and its formatter) as its text
/// up to where it ends (`extract::candidate_text`), at most 64 bytes, not
/// as the 64 bytes from its start, which ran into the URNs after it. The
/// error offset lies within that text or at its end, but for a candidate
/// cut at 64 bytes. Offsets counted by hand.
#[test]
fn a_rejected_candidate_reaches_the_sink_up_to_where_it_ends() {
    let long = format!("urn:ab:{}", "a".repeat(MAX_URN_LEN));
    let hay = format!(
        "x urn:ab:/a urn:a:b urn:abcdefghijklmnopqrstuvwxyz0123456:x urn:ab\n'urn:ab:/b'c' <urn:ab:\u{e9}x> {long}\n"
    );
    // (offset, text, error offset): an NSS starting with `/`, a one-letter
    // NID, a 33-letter NID (wrong at its 33rd letter, byte 36), no colon
    // after the NID (at the newline, 6), after an apostrophe up to the next
    // one (rule 2), é ending nothing (wrong at 7), and a URN too long, wrong
    // at byte MAX_URN_LEN, past its first 64.
    let want_texts = [
        (2, "urn:ab:/a", 7),
        (12, "urn:a:b", 5),
        (20, "urn:abcdefghijklmnopqrstuvwxyz0123456:x", 36),
        (60, "urn:ab", 6),
        (68, "urn:ab:/b", 7),
        (82, "urn:ab:\u{e9}x", 7),
        (94, &long[..64], MAX_URN_LEN),
    ];
    let want: Vec<String> =
        want_texts.iter().map(|(offset, text, error)| format!("{offset}\t{text}\t{error}")).collect();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.txt");
    std::fs::write(&path, &hay).unwrap();
    for mmap in [MmapPolicy::Always, MmapPolicy::Never] {
        for formatting in [false, true] {
            let opts = JobOptions { mmap, ..JobOptions::default() };
            let mut seen = Candidates(Vec::new(), formatting);
            run(std::slice::from_ref(&path), &opts, &mut seen).unwrap();
            assert_eq!(seen.0, want, "{mmap:?}, formatting {formatting}");
        }
    }
}
