//! Larger than memory (see the module docs of [`crate::lines`]): tables
//! written out to one temporary file per partition, each file read back
//! into a table (split again by the next bits of the hash while it is too
//! large), sorted into a run, and the runs merged ([`merge_runs`]).

use std::borrow::Cow;
use std::fs::{self, File};
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use super::judge::partition;
use super::output::{merge, Cursor};
use super::{Finished, Order, Spill, FILE_BUFFER, MAX_SPILL_LEVELS, PARTS};
use crate::dedup::{key_hash, Entry, KeyTable, Position, Raw};

/// The output from the spill files: every partition aggregated into a
/// sorted run, then the runs merged.
pub(super) fn merge_runs(
    Spill { mut dir, set }: Spill,
    limit: Option<u64>,
    order: Order,
    emit: &mut dyn FnMut(&Entry<'_>) -> io::Result<()>,
) -> io::Result<Finished> {
    let limit = limit.unwrap_or(u64::MAX);
    let mut runs = Vec::new();
    for path in set.finish()? {
        runs.push(RunCursor::open(aggregate(&mut dir, path, 1, limit, order)?)?);
    }
    let distinct = merge(runs, order, emit)?;
    Ok(Finished { distinct, spilled: true })
}

/// A fresh directory for spill and run files, removed on drop.
pub(super) struct SpillDir {
    pub(super) path: PathBuf,
    next: u64,
}

/// The start of the names of this process's spill directories: the
/// process id, ended by a `-` so that process 12's never matches 123's.
fn own_prefix() -> String {
    format!("urnscan-dedup-{}-", std::process::id())
}

/// Removes the spill directories of this process under `base` (default:
/// the system's temporary directory), for a program about to be ended by
/// a signal, whose [`LineDedup`](super::LineDedup) will not be dropped:
/// its drop is what removes them otherwise. Directories are found by name
/// (`urnscan-dedup-<pid>-…`), so nothing needs to be registered while the
/// run goes on. A spill file created while this runs can keep its
/// directory; the error of the last directory not removed is returned.
pub fn remove_spill_dirs(base: Option<&Path>) -> io::Result<()> {
    let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
    let prefix = own_prefix();
    let mut result = Ok(());
    for entry in fs::read_dir(&base)?.flatten() {
        if entry.file_name().to_string_lossy().starts_with(&prefix) {
            if let Err(e) = fs::remove_dir_all(entry.path()) {
                result = Err(e);
            }
        }
    }
    result
}

impl SpillDir {
    pub(super) fn create(base: Option<&Path>) -> io::Result<SpillDir> {
        let base = base.map_or_else(std::env::temp_dir, Path::to_path_buf);
        let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
        let prefix = own_prefix();
        for attempt in 0..1000 {
            let path = base.join(format!("{prefix}{nanos}-{attempt}"));
            match fs::create_dir(&path) {
                Ok(()) => return Ok(SpillDir { path, next: 0 }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io::Error::new(e.kind(), format!("cannot create {}: {e}", path.display()))),
            }
        }
        Err(io::Error::other(format!("cannot create a spill directory in {}", base.display())))
    }

    fn new_file(&mut self) -> io::Result<(PathBuf, BufWriter<File>)> {
        self.next += 1;
        let path = self.path.join(format!("{}.bin", self.next));
        let file = File::options().write(true).create_new(true).open(&path)?;
        Ok((path, BufWriter::with_capacity(FILE_BUFFER, file)))
    }
}

impl Drop for SpillDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.path);
    }
}

/// Partition files of one spill level, created as entries arrive.
pub(super) struct SpillSet {
    pub(super) level: u32,
    files: Vec<Option<(PathBuf, BufWriter<File>)>>,
}

impl SpillSet {
    pub(super) fn new(level: u32) -> SpillSet {
        SpillSet { level, files: (0..PARTS).map(|_| None).collect() }
    }

    pub(super) fn write_table(&mut self, dir: &mut SpillDir, table: &KeyTable) -> io::Result<()> {
        for e in table.iter() {
            let slot = &mut self.files[partition(key_hash(e.key), self.level)];
            if slot.is_none() {
                *slot = Some(dir.new_file()?);
            }
            if let Some((_, w)) = slot {
                write_record(w, &e)?;
            }
        }
        Ok(())
    }

    /// Flushes and closes the files; their paths in partition order.
    pub(super) fn finish(self) -> io::Result<Vec<PathBuf>> {
        let mut paths = Vec::new();
        for (path, mut w) in self.files.into_iter().flatten() {
            w.flush()?;
            paths.push(path);
        }
        Ok(paths)
    }
}

/// Reads one partition file into a table (splitting it again when it
/// exceeds the limit) and writes its classes, sorted, to a run file.
fn aggregate(dir: &mut SpillDir, path: PathBuf, level: u32, limit: u64, order: Order) -> io::Result<PathBuf> {
    let mut table = KeyTable::new();
    let mut split: Option<SpillSet> = None;
    let mut rec = OwnedEntry::default();
    let mut reader = BufReader::with_capacity(FILE_BUFFER, File::open(&path)?);
    while rec.read_from(&mut reader)? {
        let e = rec.entry();
        table.insert(e.key, rec.raw_bytes(), e.first, e.count);
        if table.heap_bytes() as u64 > limit && level < MAX_SPILL_LEVELS {
            split.get_or_insert_with(|| SpillSet::new(level)).write_table(dir, &table)?;
            table = KeyTable::new();
        }
    }
    drop(reader);
    let _ = fs::remove_file(&path);
    let (run, mut w) = dir.new_file()?;
    match split {
        None => {
            let mut all: Vec<Entry<'_>> = table.iter().collect();
            all.sort_unstable_by(|a, b| order.compare(a, b));
            for e in &all {
                write_record(&mut w, e)?;
            }
        }
        Some(mut set) => {
            set.write_table(dir, &table)?;
            drop(table);
            let mut parts = Vec::new();
            for sub in set.finish()? {
                parts.push(RunCursor::open(aggregate(dir, sub, level + 1, limit, order)?)?);
            }
            merge(parts, order, &mut |e| write_record(&mut w, e))?;
        }
    }
    w.flush()?;
    Ok(run)
}

/// A sorted run file being merged; deleted when dropped.
struct RunCursor {
    pub(super) path: PathBuf,
    pub(super) reader: BufReader<File>,
    pub(super) rec: OwnedEntry,
    live: bool,
}

impl RunCursor {
    pub(super) fn open(path: PathBuf) -> io::Result<RunCursor> {
        let reader = BufReader::with_capacity(FILE_BUFFER, File::open(&path)?);
        let mut cursor = RunCursor { path, reader, rec: OwnedEntry::default(), live: true };
        cursor.advance()?;
        Ok(cursor)
    }
}

impl Cursor for RunCursor {
    fn head(&self) -> Option<Entry<'_>> {
        self.live.then(|| self.rec.entry())
    }

    fn advance(&mut self) -> io::Result<()> {
        self.live = self.rec.read_from(&mut self.reader)?;
        Ok(())
    }
}

impl Drop for RunCursor {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// A class read back from a spill or run file.
#[derive(Default)]
struct OwnedEntry {
    pub(super) key: Vec<u8>,
    pub(super) raw: Vec<u8>,
    raw_is_key: bool,
    pub(super) first: Position,
    pub(super) count: u64,
}

/// Record layout (little-endian): key length (u16), first-form length
/// (u16, 0 when it is the key), input (u32), line (u64), count (u64), the
/// key, the first form.
const HEADER: usize = 24;

fn write_record(w: &mut impl Write, e: &Entry<'_>) -> io::Result<()> {
    let too_long = || io::Error::new(io::ErrorKind::InvalidData, "URN longer than 65535 bytes");
    let raw = match e.raw.as_bytes() {
        Some(b) if b == e.key => Cow::Borrowed(&[][..]),
        Some(b) => Cow::Borrowed(b),
        None => Cow::Owned(e.raw.to_vec()),
    };
    let mut header = [0u8; HEADER];
    header[0..2].copy_from_slice(&u16::try_from(e.key.len()).map_err(|_| too_long())?.to_le_bytes());
    header[2..4].copy_from_slice(&u16::try_from(raw.len()).map_err(|_| too_long())?.to_le_bytes());
    header[4..8].copy_from_slice(&e.first.file.to_le_bytes());
    header[8..16].copy_from_slice(&e.first.offset.to_le_bytes());
    header[16..24].copy_from_slice(&e.count.to_le_bytes());
    w.write_all(&header)?;
    w.write_all(e.key)?;
    w.write_all(&raw)
}

impl OwnedEntry {
    /// Reads the next record; false at the end of the file.
    fn read_from(&mut self, r: &mut impl Read) -> io::Result<bool> {
        let mut header = [0u8; HEADER];
        if !read_exact_or_end(r, &mut header)? {
            return Ok(false);
        }
        let u16_at = |i: usize| usize::from(u16::from_le_bytes([header[i], header[i + 1]]));
        let u64_at = |i: usize| u64::from_le_bytes(header[i..i + 8].try_into().unwrap_or_default());
        let (key_len, raw_len) = (u16_at(0), u16_at(2));
        self.first =
            Position { file: u32::from_le_bytes([header[4], header[5], header[6], header[7]]), offset: u64_at(8) };
        self.count = u64_at(16);
        self.key.resize(key_len, 0);
        r.read_exact(&mut self.key)?;
        self.raw_is_key = raw_len == 0;
        self.raw.resize(raw_len, 0);
        r.read_exact(&mut self.raw)?;
        Ok(true)
    }

    fn raw_bytes(&self) -> &[u8] {
        if self.raw_is_key {
            &self.key
        } else {
            &self.raw
        }
    }

    pub(super) fn entry(&self) -> Entry<'_> {
        Entry { key: &self.key, raw: Raw::from(self.raw_bytes()), count: self.count, first: self.first }
    }
}

/// Fills `buf`; false if the input ends before its first byte.
fn read_exact_or_end(r: &mut impl Read, buf: &mut [u8]) -> io::Result<bool> {
    let mut got = 0;
    while got < buf.len() {
        match r.read(&mut buf[got..]) {
            Ok(0) if got == 0 => return Ok(false),
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "truncated spill record")),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This process's spill directories go, with their files; another
    /// process's (a pid that ours is a prefix of) and other names stay.
    #[test]
    fn remove_spill_dirs_takes_this_process_s_alone() {
        let base = tempfile::tempdir().unwrap();
        let ours = SpillDir::create(Some(base.path())).unwrap();
        fs::write(ours.path.join("1.bin"), b"spilled").unwrap();
        let others = [format!("urnscan-dedup-{}0-1-0", std::process::id()), "urnscan-notes".to_owned()];
        for name in &others {
            fs::create_dir(base.path().join(name)).unwrap();
        }
        remove_spill_dirs(Some(base.path())).unwrap();
        assert!(!ours.path.exists());
        let mut left: Vec<String> =
            fs::read_dir(base.path()).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
        left.sort();
        assert_eq!(left, others);
    }
}
