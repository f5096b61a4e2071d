//! The library's progress hook: the counter in `JobOptions` and
//! `DedupOptions` ends at exactly the number of input bytes, whichever way
//! the bytes were read (read whole, mapped and scanned in windows, streamed
//! in blocks, decoded), and the results do not depend on whether it is
//! there.

use std::fs;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use urnscan::job::{self, FileRef, JobOptions, Location, Sink};
use urnscan::lines::{DedupOptions, LineDedup, Order};
use urnscan::source::{BinaryPolicy, InputError, MmapPolicy};
use urnscan::{Urn, UrnError};

mod common;
use common::{gzip, utf16le};

/// Collects what a run reports, and the counter's value when each file's
/// first URN arrives.
#[derive(Default)]
struct Collect {
    events: Vec<(u32, u64, String)>,
    counter: Option<Arc<AtomicU64>>,
    first_seen: Vec<(u32, u64)>,
}

impl Sink for Collect {
    fn urn(&mut self, file: FileRef<'_>, at: Location, urn: &Urn<'_>) -> io::Result<()> {
        if let Some(counter) = &self.counter {
            if self.first_seen.last().is_none_or(|&(f, _)| f != file.index) {
                self.first_seen.push((file.index, counter.load(Ordering::Relaxed)));
            }
        }
        self.events.push((file.index, at.offset, urn.as_str().to_owned()));
        Ok(())
    }
    fn rejected(&mut self, file: FileRef<'_>, at: Location, _: &[u8], error: &UrnError) -> io::Result<()> {
        self.events.push((file.index, at.offset, error.kind().as_str().to_owned()));
        Ok(())
    }
    fn input_error(&mut self, _: &InputError) -> io::Result<()> {
        Ok(())
    }
}

/// `n` bytes of text with a URN every 100 bytes.
fn text(n: usize) -> Vec<u8> {
    let line = b"some text around urn:ietf:rfc:8141 and urn:isbn:0451450523 then urn:a:b, more text to pad it out...\n";
    assert_eq!(line.len(), 100);
    line.iter().copied().cycle().take(n).collect()
}

#[test]
fn job_counter_ends_at_the_input_size_for_every_way_of_reading() {
    let dir = tempfile::tempdir().unwrap();
    let sizes = [0usize, 1_000, 3 << 20, (32 << 20) + 12_345]; // empty, read whole, mapped, three 16 MiB windows
    let paths: Vec<PathBuf> = sizes
        .iter()
        .enumerate()
        .map(|(i, &n)| {
            let path = dir.path().join(format!("f{i}.txt"));
            fs::write(&path, text(n)).unwrap();
            path
        })
        .collect();
    let total: u64 = sizes.iter().map(|&n| n as u64).sum();
    for mmap in [MmapPolicy::Auto, MmapPolicy::Always, MmapPolicy::Never] {
        let counter = Arc::new(AtomicU64::new(0));
        let with = JobOptions { mmap, progress: Some(Arc::clone(&counter)), ..JobOptions::default() };
        let without = JobOptions { mmap, ..JobOptions::default() };
        let mut a = Collect { counter: Some(Arc::clone(&counter)), ..Collect::default() };
        let mut b = Collect::default();
        let counted = job::run(&paths, &with, &mut a).unwrap();
        let plain = job::run(&paths, &without, &mut b).unwrap();
        assert_eq!(counter.load(Ordering::Relaxed), total, "{mmap:?}");
        assert_eq!(counted.totals, plain.totals, "{mmap:?}");
        assert_eq!(counted.totals.bytes, total);
        assert_eq!(a.events, b.events, "{mmap:?}: events differ with a counter");
        // The large file is counted as it goes (window by window or block by
        // block), not all at once: its first URNs arrive with part of it
        // counted. A mapped file is scanned at most one window ahead of the
        // sink, so with three windows the last is never counted by then,
        // however the threads are scheduled.
        let before: u64 = sizes[..3].iter().map(|&n| n as u64).sum();
        let &(_, seen) = a.first_seen.iter().find(|(f, _)| *f == 3).unwrap();
        assert!(before < seen && seen < total, "{mmap:?}: {before} < {seen} < {total}");
    }
}

/// Decoded inputs count their size on disk, as the display's total is: an
/// archive's or UTF-16 file's own bytes as decoded (not the decoded
/// ones), a binary file skipped its size at once (a large one too, which
/// is streamed when not mapped), whether files are mapped or streamed, at
/// one thread or two (an archive of over [`job::INLINE_LIMIT`] decoded
/// bytes is then decoded ahead on a thread, a UTF-16 file of over it
/// transcoded where it is scanned).
#[test]
fn job_counter_counts_decoded_and_skipped_inputs_by_their_size_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let text = String::from_utf8(text(5 << 20)).unwrap();
    assert!(text.len() > job::INLINE_LIMIT);
    let files: [(&str, Vec<u8>); 8] = [
        ("small.txt", text.as_bytes()[..10_000].to_vec()),
        ("mapped.txt", text.as_bytes()[..2_000_000].to_vec()),
        ("small.gz", gzip(&text.as_bytes()[..100_000])),
        ("large.gz", gzip(text.as_bytes())),
        ("utf16.txt", utf16le(&text[..200_000], true)),
        ("large-utf16.txt", utf16le(&text, true)),
        ("nul.bin", [&b"urn:ex:1 \0"[..], &text.as_bytes()[..50_000]].concat()),
        ("large-nul.bin", [&b"urn:ex:2 \0"[..], &text.as_bytes()[..3 << 20]].concat()),
    ];
    let mut paths = Vec::new();
    for (name, bytes) in &files {
        paths.push(dir.path().join(name));
        fs::write(paths.last().unwrap(), bytes).unwrap();
    }
    let size: u64 = files.iter().map(|(_, bytes)| bytes.len() as u64).sum();
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        for mmap in [MmapPolicy::Auto, MmapPolicy::Never] {
            for binary in [BinaryPolicy::Scan, BinaryPolicy::Skip] {
                let counter = Arc::new(AtomicU64::new(0));
                let progress = Some(Arc::clone(&counter));
                let opts = JobOptions { mmap, binary, decompress: true, progress, ..JobOptions::default() };
                let outcome = pool.install(|| job::run(&paths, &opts, &mut Collect::default())).unwrap();
                let skipped = 2 * u64::from(binary == BinaryPolicy::Skip);
                assert_eq!((outcome.totals.files, outcome.totals.skipped), (8 - skipped, skipped));
                let how = format!("{threads} threads, {mmap:?}, {binary:?}");
                assert_eq!(counter.load(Ordering::Relaxed), size, "{how}");
            }
        }
    }
}

#[test]
fn dedup_counter_ends_at_the_input_size_for_bytes_and_streams() {
    let mut data = Vec::new();
    for i in 0..50_000 {
        data.extend_from_slice(format!("urn:isbn:{}\n  URN:IETF:rfc:{}\r\nurn:a:b\n\n", i % 777, i % 13).as_bytes());
    }
    let classes = |stream: bool, counter: Option<Arc<AtomicU64>>| {
        // Small blocks, so the input takes many blocks and chunks.
        let opts = DedupOptions { block_size: 1 << 20, progress: counter, ..DedupOptions::default() };
        let mut dedup = LineDedup::new(opts);
        let mut rejects = 0;
        let mut sink = |_: &urnscan::lines::Reject<'_>| {
            rejects += 1;
            Ok(())
        };
        if stream {
            dedup.add_reader(&mut &data[..], 0, &mut sink).unwrap();
        } else {
            dedup.add_bytes(&data, 0, &mut sink).unwrap();
        }
        let mut out = Vec::new();
        dedup
            .finish(Order::FirstSeen, &mut |e| {
                out.push((e.raw.to_vec(), e.count));
                Ok(())
            })
            .unwrap();
        (out, rejects)
    };
    for stream in [false, true] {
        let counter = Arc::new(AtomicU64::new(0));
        let counted = classes(stream, Some(Arc::clone(&counter)));
        assert_eq!(counter.load(Ordering::Relaxed), data.len() as u64, "stream: {stream}");
        assert_eq!(counted, classes(stream, None));
        assert_eq!(counted.0.len(), 777 + 13);
        assert_eq!(counted.1, 50_000);
    }
}
