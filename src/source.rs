//! Where bytes come from: paths expanded into files in input order, and
//! each file's contents as one slice (mapped or read) or as a stream.
//!
//! Input order is the order paths were given, with each directory's files
//! sorted by name (the `ignore` crate's walker, with its gitignore and
//! hidden-file filters off by default: dumps are not source trees).
//!
//! How a regular file's bytes are obtained is an I/O detail that never
//! changes results: small files are read into memory, large ones are
//! memory-mapped ([`crate::platform::mmap`]), and anything that cannot be
//! mapped (pipes, character devices, stdin, a failed mapping, or
//! `MmapPolicy::Never`) is streamed in blocks.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use crate::platform::mmap::Mapping;

/// Files at least this large are mapped under [`MmapPolicy::Auto`]; smaller
/// ones are read, which costs less than setting up a mapping.
///
/// Measured (2026-11-21, 2-core Xeon VM, page-cached, `scan --stats -j1`
/// over 64 MiB split into equal files, `--mmap always` vs `never`):
/// 16 KiB files 54 ms mapped vs 26 ms read; 64 KiB 25 vs 17 ms; 256 KiB
/// 13 vs 12 ms; from 1 MiB up the two are within noise of each other. So
/// small files are read, and large ones mapped, which lets one file be split
/// into parallel chunks without copying it and keeps streaming for inputs
/// that cannot be mapped.
pub const AUTO_MMAP_THRESHOLD: u64 = 1 << 20;

/// When to memory-map regular files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MmapPolicy {
    /// Map regular files of at least [`AUTO_MMAP_THRESHOLD`] bytes.
    #[default]
    Auto,
    /// Map every regular file (falling back to reading if mapping fails).
    Always,
    /// Never map: read small files whole and stream the rest.
    Never,
}

/// How directories are walked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkOptions {
    /// Honour .gitignore/.ignore files and skip hidden entries.
    pub respect_ignore: bool,
    /// Follow symbolic links (loops are reported, not followed forever).
    pub follow_links: bool,
}

/// One input in input order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Standard input.
    Stdin,
    /// A file (given directly or found in a directory).
    File(PathBuf),
}

impl Input {
    /// How the input is named in output: its path, or `-` for stdin.
    pub fn display(&self) -> String {
        match self {
            Input::Stdin => "-".to_owned(),
            Input::File(p) => p.to_string_lossy().into_owned(),
        }
    }
}

/// An input that could not be read, and why.
#[derive(Debug)]
pub struct InputError {
    /// The path as the user would recognise it (`-` for stdin).
    pub path: String,
    /// What went wrong.
    pub error: io::Error,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.error)?;
        match hint(&self.error) {
            Some(hint) => write!(f, " ({hint})"),
            None => Ok(()),
        }
    }
}

/// What a user can do about an input error (every input error says it).
fn hint(error: &io::Error) -> Option<&'static str> {
    match error.kind() {
        io::ErrorKind::NotFound => Some("check the path; it was skipped and the other inputs were scanned"),
        io::ErrorKind::PermissionDenied => {
            Some("check its permissions; it was skipped and the other inputs were scanned")
        }
        io::ErrorKind::InvalidData => Some("the data could not be decoded; it was skipped"),
        // Messages built here already say what happened and what to do.
        io::ErrorKind::Other => None,
        _ => Some("it was skipped (or cut short) and the other inputs were scanned; check the device or file"),
    }
}

impl std::error::Error for InputError {}

/// Expands `paths` (`-` is stdin; no paths means stdin) into inputs in
/// input order, with the errors of unreadable paths in their place.
pub fn expand(paths: &[PathBuf], walk: WalkOptions) -> Vec<Result<Input, InputError>> {
    if paths.is_empty() {
        return vec![Ok(Input::Stdin)];
    }
    let mut out = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            out.push(Ok(Input::Stdin));
            continue;
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => walk_dir(path, walk, &mut out),
            Ok(_) => out.push(Ok(Input::File(path.clone()))),
            Err(error) => out.push(Err(InputError { path: path.to_string_lossy().into_owned(), error })),
        }
    }
    out
}

fn walk_dir(dir: &Path, opts: WalkOptions, out: &mut Vec<Result<Input, InputError>>) {
    let walker = ignore::WalkBuilder::new(dir)
        .standard_filters(opts.respect_ignore)
        .follow_links(opts.follow_links)
        .sort_by_file_name(|a, b| a.cmp(b))
        .build();
    for entry in walker {
        match entry {
            Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                out.push(Ok(Input::File(entry.into_path())));
            }
            Ok(_) => {} // directories, and links or special files the walk does not follow
            Err(err) => out.push(Err(walk_error(dir, err))),
        }
    }
}

fn walk_error(dir: &Path, err: ignore::Error) -> InputError {
    let path = error_path(&err).unwrap_or(dir).to_string_lossy().into_owned();
    let error = match err.io_error() {
        Some(io) => io::Error::new(io.kind(), io.to_string()),
        // Loops (with -L) and the like: the walker's own words say what and where.
        None => io::Error::other(format!("{err}; the loop was not followed and the rest was scanned")),
    };
    InputError { path, error }
}

fn error_path(err: &ignore::Error) -> Option<&Path> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } => error_path(err),
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// A file's bytes, however they were obtained.
pub enum Contents {
    /// The whole file as one slice.
    Whole(Whole),
    /// A reader to stream in blocks.
    Stream(Box<dyn Read + Send>),
}

/// A whole file in memory or mapped.
pub enum Whole {
    /// Read into memory.
    Owned(Vec<u8>),
    /// Memory-mapped.
    Mapped(Mapping),
}

impl Whole {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        match self {
            Whole::Owned(v) => v,
            Whole::Mapped(m) => m.as_bytes(),
        }
    }

    /// Whether the bytes are a shared file mapping (which a concurrent
    /// writer can change while they are read).
    pub fn is_mapped(&self) -> bool {
        matches!(self, Whole::Mapped(_))
    }

    /// Gives back the resident memory of the bytes in `range`, which the
    /// caller is done with (mapped files only; see [`Mapping::release`]).
    pub fn release(&self, range: std::ops::Range<usize>) {
        if let Whole::Mapped(m) = self {
            m.release(range);
        }
    }

    /// Whether the file shrank while mapped: its results are incomplete.
    pub fn changed_during_use(&self) -> bool {
        match self {
            Whole::Owned(_) => false,
            Whole::Mapped(m) => m.changed_during_use(),
        }
    }
}

/// Opens `input` and decides how to read it.
pub fn open(input: &Input, policy: MmapPolicy) -> io::Result<Contents> {
    let path = match input {
        Input::Stdin => return Ok(Contents::Stream(Box::new(io::stdin()))),
        Input::File(path) => path,
    };
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::other("is a directory"));
    }
    if !meta.is_file() {
        return Ok(Contents::Stream(Box::new(file)));
    }
    let map = match policy {
        MmapPolicy::Always => true,
        MmapPolicy::Auto => meta.len() >= AUTO_MMAP_THRESHOLD,
        MmapPolicy::Never => false,
    };
    if map {
        if let Ok(mapping) = Mapping::map(&file) {
            return Ok(Contents::Whole(Whole::Mapped(mapping)));
        }
    }
    if meta.len() < AUTO_MMAP_THRESHOLD {
        let mut bytes = Vec::with_capacity(meta.len() as usize + 1);
        (&file).read_to_end(&mut bytes)?;
        return Ok(Contents::Whole(Whole::Owned(bytes)));
    }
    Ok(Contents::Stream(Box::new(file)))
}
