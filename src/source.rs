//! Where bytes come from: paths expanded into files in input order, and
//! each file's contents as one slice (mapped or read) or as a stream.
//!
//! Input order is the order paths were given, with each directory's files
//! sorted by name (the `ignore` crate's walker, with its gitignore and
//! hidden-file filters off by default: dumps are not source trees).
//! [`Globs`] choose which files of a walked directory are read, as
//! ripgrep's `-g` does; a file named by the caller is always read.
//!
//! How a regular file's bytes are obtained is an I/O detail that never
//! changes results: small files are read into memory, large ones are
//! memory-mapped ([`crate::platform::mmap`]), and anything that cannot be
//! mapped (pipes, character devices, a failed mapping, or
//! `MmapPolicy::Never`) is streamed in blocks. A regular file of size 0
//! is read, never mapped, whatever the policy: files in /proc report that
//! size and have content, which a mapping of 0 bytes would lose. Stdin
//! counts as the file it is redirected from (`urnscan scan < FILE`), when
//! it is one: streamed, 1 GiB of text took `scan -c` 243 ms, mapped 62,
//! as the file by name (2026-11-28, 2-vCPU KVM guest, `benches/ab.sh`,
//! 5 rounds). Pipes, FIFOs, terminals and devices, given by path or as
//! stdin, come as [`Contents::Pipe`]: a stream that a caller printing as
//! it goes reads [live](Live) (`urnscan scan <(tail -f log)`), and others
//! as any stream.
//!
//! With [`OpenOptions::decompress`], an input that starts with a gzip or
//! zstd magic is opened as a stream of its decoded bytes
//! ([`crate::decompress`]), whatever its name. An input (decoded or not)
//! that starts with a UTF-16 byte-order mark is opened as a stream of its
//! text in UTF-8 ([`crate::transcode`]; [`OpenOptions::encoding`]).
//!
//! Whether an input is binary is decided by [`is_binary`] from its first
//! [`BINARY_PROBE`] bytes (decoded or transcoded bytes for a decoded or
//! transcoded input: UTF-16 text is not binary), which are the same bytes
//! whether the file is mapped, read or streamed ([`peek`] reads exactly
//! that many from a stream), so the decision never depends on how the
//! file was opened.

use std::borrow::Cow;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::decompress::{Codec, DecodeError, MAGIC_LEN};
use crate::platform::mmap::{Mapping, Resident};
use crate::transcode::{Encoding, Utf16, Utf16Reader, BOM_LEN};

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
#[derive(Clone, Debug, Default)]
pub struct WalkOptions {
    /// Honour .gitignore files (in a git repository or not), .ignore files
    /// and git's global excludes, and skip hidden entries.
    pub respect_ignore: bool,
    /// Follow symbolic links (loops are reported, not followed forever).
    pub follow_links: bool,
    /// Which files of a directory are read (all by default).
    pub globs: Globs,
}

/// Globs in gitignore syntax that choose the files of walked directories,
/// as ripgrep's `-g` and `--iglob` do: a file is read if the last glob
/// that matches its path is a plain one, and left out if it is a `!GLOB`;
/// when there is at least one plain glob, a file that none matches is left
/// out too. A directory that a `!GLOB` matches is not entered; plain globs
/// never keep the walk out of a directory. A glob without a `/` matches a
/// name at any depth (`*.xml`); one with a `/` is anchored at the root
/// given to [`Globs::new`] (`dump/2024/**`). Later globs win, and the
/// case-insensitive ones come after the others.
///
/// Files the caller names are read whatever the globs say, as ripgrep
/// does: the globs only filter what a directory walk finds.
///
/// ```
/// use urnscan::source::{expand, Globs, WalkOptions};
///
/// let dir = tempfile::tempdir()?;
/// for name in ["a.xml", "b.log", "c.XML"] {
///     std::fs::write(dir.path().join(name), "urn:isbn:0451450523")?;
/// }
/// let globs = Globs::new(dir.path(), &["*.xml"], &[])?;
/// let walk = WalkOptions { globs, ..WalkOptions::default() };
/// let found = expand(&[dir.path().to_path_buf()], &walk);
/// let names: Vec<String> = found.into_iter().map(|i| i.unwrap().display()).collect();
/// assert_eq!(names, [dir.path().join("a.xml").display().to_string()]);
///
/// // Case-insensitive, and a glob that leaves files out.
/// let globs = Globs::new(dir.path(), &["!b.*"], &["*.XML"])?;
/// let walk = WalkOptions { globs, ..WalkOptions::default() };
/// assert_eq!(expand(&[dir.path().to_path_buf()], &walk).len(), 2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Globs(Option<ignore::overrides::Override>);

impl Globs {
    /// Globs `plain` (case-sensitive) then `ignoring_case`, each a glob or
    /// `!` and a glob; anchored globs are relative to `root` (a command
    /// line tool passes its working directory). An invalid glob is an
    /// error that names it.
    pub fn new<S: AsRef<str>>(root: &Path, plain: &[S], ignoring_case: &[S]) -> Result<Globs, GlobError> {
        if plain.is_empty() && ignoring_case.is_empty() {
            return Ok(Globs(None));
        }
        let mut builder = ignore::overrides::OverrideBuilder::new(root);
        let invalid = |glob: &str, err: ignore::Error| GlobError { glob: glob.to_owned(), reason: glob_reason(err) };
        for glob in plain {
            builder.add(glob.as_ref()).map_err(|e| invalid(glob.as_ref(), e))?;
        }
        // The builder's case setting applies to the globs added after it.
        builder.case_insensitive(true).map_err(|e| invalid("", e))?;
        for glob in ignoring_case {
            builder.add(glob.as_ref()).map_err(|e| invalid(glob.as_ref(), e))?;
        }
        let built = builder.build().map_err(|e| invalid("", e))?;
        Ok(Globs(Some(built)))
    }

    /// Whether no glob was given (every file is read).
    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }
}

/// The matcher's own words for what is wrong with a glob, without the glob,
/// which [`GlobError`] names itself.
fn glob_reason(err: ignore::Error) -> String {
    match err {
        ignore::Error::Glob { err, .. } => err,
        other => other.to_string(),
    }
}

/// A glob given to [`Globs::new`] that is not valid gitignore syntax.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GlobError {
    /// The glob as given.
    pub glob: String,
    /// What is wrong with it.
    pub reason: String,
}

impl std::fmt::Display for GlobError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid glob `{}`: {}", self.glob, self.reason)
    }
}

impl std::error::Error for GlobError {}

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

    /// Its path, whatever its bytes (stdin has none).
    pub fn path(&self) -> Option<&Path> {
        match self {
            Input::Stdin => None,
            Input::File(p) => Some(p),
        }
    }

    /// Its name as bytes to print where any bytes may go (see
    /// [`raw_path_bytes`]): on Unix its path's own bytes, elsewhere
    /// [`Input::display`]; `-` for stdin.
    pub fn name_bytes(&self) -> Cow<'_, [u8]> {
        match self {
            Input::Stdin => Cow::Borrowed(b"-"),
            Input::File(p) => raw_path_bytes(p).map_or_else(|| Cow::Owned(self.display().into_bytes()), Cow::Borrowed),
        }
    }

    /// Its size on disk when it is a regular file (stdin, a pipe, a
    /// device or a path that cannot be read have none): what a progress
    /// display counts for it.
    pub fn regular_file_size(&self) -> Option<u64> {
        match self {
            Input::Stdin => None,
            Input::File(path) => std::fs::metadata(path).ok().filter(|meta| meta.is_file()).map(|meta| meta.len()),
        }
    }
}

/// A path's own bytes, where the platform has paths of bytes (Unix): what
/// grep and ripgrep print, so that a printed path that is not UTF-8 still
/// names its file (`scan -l -0 | xargs -0`). `None` elsewhere, where a
/// path is printed as UTF-8 text ([`Path::to_string_lossy`]).
#[cfg(unix)]
pub fn raw_path_bytes(path: &Path) -> Option<&[u8]> {
    Some(std::os::unix::ffi::OsStrExt::as_bytes(path.as_os_str()))
}

/// A path's own bytes: none where paths are not bytes (see the Unix version).
#[cfg(not(unix))]
pub fn raw_path_bytes(_: &Path) -> Option<&[u8]> {
    None
}

/// An input that could not be read, and why.
///
/// `Display` says what failed: the path and the I/O error, and for data
/// that could not be decoded ([`DecodeError`]: a corrupt or truncated
/// archive) how to check it. What a program does about the input (skip
/// it, read the others, tell its user what to check) is the program's to
/// say: `urnscan` adds that when it prints one.
///
/// ```
/// use std::io;
/// use urnscan::source::InputError;
///
/// let error = InputError { path: "dump/a.txt".into(), error: io::Error::new(io::ErrorKind::NotFound, "not there") };
/// assert_eq!(error.to_string(), "dump/a.txt: not there");
/// assert_eq!(error.error.kind(), io::ErrorKind::NotFound);
/// assert!(error.decode_error().is_none());
/// ```
#[derive(Debug)]
pub struct InputError {
    /// The path as the user would recognise it (`-` for stdin).
    pub path: String,
    /// What went wrong.
    pub error: io::Error,
}

impl InputError {
    /// The decoding error under [`InputError::error`], when the input's
    /// data could not be decoded (a corrupt or truncated gzip or zstd
    /// archive): its [`DecodeError::hint`] says how to check the archive.
    pub fn decode_error(&self) -> Option<&DecodeError> {
        self.error.get_ref().and_then(|e| e.downcast_ref::<DecodeError>())
    }

    /// Whether the error is [`Shrank`]: the file shrank while mapped.
    pub fn shrank(&self) -> bool {
        self.error.get_ref().is_some_and(|e| e.is::<Shrank>())
    }
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.error)?;
        match self.decode_error() {
            Some(decode) => write!(f, " ({})", decode.hint()),
            None => Ok(()),
        }
    }
}

impl std::error::Error for InputError {}

/// A mapped file shrank while it was read ([`Whole::changed_during_use`]):
/// the bytes past its new end read as zeros, so what was found in it is
/// incomplete. It is the error under an [`InputError`] (of kind `Other`;
/// [`InputError::shrank`] finds it). Reading the file instead of mapping
/// it ([`MmapPolicy::Never`]) or reading a copy that is not being written
/// avoids it; which of those a program's user can do is the program's to
/// say.
#[derive(Debug)]
pub struct Shrank;

impl std::fmt::Display for Shrank {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the file shrank while it was mapped, so results for it are incomplete")
    }
}

impl std::error::Error for Shrank {}

/// Expands `paths` (`-` is stdin; no paths means stdin) into inputs in
/// input order, with the errors of unreadable paths in their place.
pub fn expand(paths: &[PathBuf], walk: &WalkOptions) -> Vec<Result<Input, InputError>> {
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

fn walk_dir(dir: &Path, opts: &WalkOptions, out: &mut Vec<Result<Input, InputError>>) {
    let mut builder = ignore::WalkBuilder::new(dir);
    builder.standard_filters(opts.respect_ignore).follow_links(opts.follow_links).sort_by_file_name(|a, b| a.cmp(b));
    // A dump is rarely a git repository: its .gitignore is honoured all the
    // same (the walker's default reads one only inside a repository).
    builder.require_git(false);
    if let Some(globs) = &opts.globs.0 {
        builder.overrides(globs.clone());
    }
    let walker = builder.build();
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
        // The OS's own words: the walker's wrapping repeats the path, which
        // the message names already.
        Some(io) => match os_error(io) {
            Some(code) => io::Error::from_raw_os_error(code),
            None => io::Error::new(io.kind(), io.to_string()),
        },
        // A loop (with -L; ignore files' errors come with their entries):
        // the walker's own words say what and where.
        None => io::Error::other(format!("{err}; the loop was not followed")),
    };
    InputError { path, error }
}

/// The OS error code under `io`, however deep the walker wrapped it.
fn os_error(io: &io::Error) -> Option<i32> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(io);
    while let Some(err) = source {
        if let Some(code) = err.downcast_ref::<io::Error>().and_then(io::Error::raw_os_error) {
            return Some(code);
        }
        source = err.source().or_else(|| err.downcast_ref::<io::Error>()?.get_ref().map(|e| e as _));
    }
    None
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
    /// A stream whose bytes come as something writes them: a pipe, FIFO,
    /// terminal, socket or device, given by path or as stdin. Read it as
    /// any stream ([`Pipe::into_reader`]), or [live](Live) ([`Pipe::live`]).
    Pipe(Pipe),
}

/// The variant and what it holds, never the bytes (a file of gigabytes).
impl std::fmt::Debug for Contents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Contents::Whole(whole) => f.debug_tuple("Whole").field(whole).finish(),
            Contents::Stream(_) => f.write_str("Stream(..)"),
            Contents::Pipe(pipe) => f.debug_tuple("Pipe").field(pipe).finish(),
        }
    }
}

/// The reader of a pipe, FIFO, terminal, socket or device, and (on Unix)
/// the descriptor it reads from, which a [`Live`] stream polls for its
/// writer's pauses.
pub struct Pipe {
    reader: Box<dyn Read + Send>,
    #[cfg(unix)]
    fd: std::os::fd::OwnedFd,
}

impl std::fmt::Debug for Pipe {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut pipe = f.debug_struct("Pipe");
        #[cfg(unix)]
        pipe.field("fd", &self.fd);
        pipe.finish_non_exhaustive()
    }
}

impl Pipe {
    /// `file`, a descriptor that is not a regular file's. A pipe (a FIFO)
    /// is grown as the binary grows its stdin ([`crate::platform::pipe`]):
    /// blocks of megabytes are read from it.
    fn of_file(file: File) -> io::Result<Pipe> {
        crate::platform::pipe::widen(&file);
        #[cfg(unix)]
        let fd = file.try_clone()?.into();
        Ok(Pipe {
            reader: Box::new(file),
            #[cfg(unix)]
            fd,
        })
    }

    /// The reader as a plain stream: reads wait as long as the writer does.
    pub fn into_reader(self) -> Box<dyn Read + Send> {
        self.reader
    }

    /// The reader as a [`Live`] stream with the delay `delay` (on Unix;
    /// elsewhere as it is).
    pub fn live(self, delay: Duration) -> Box<dyn Read + Send> {
        #[cfg(unix)]
        return Box::new(Live::new(self.reader, self.fd, delay));
        #[cfg(not(unix))]
        {
            let _ = delay;
            self.reader
        }
    }
}

/// A whole file in memory or mapped.
pub enum Whole {
    /// Read into memory.
    Owned(Vec<u8>),
    /// Memory-mapped.
    Mapped(Mapping),
}

/// The variant and the length, never the bytes.
impl std::fmt::Debug for Whole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Whole::Owned(bytes) => f.debug_struct("Owned").field("len", &bytes.len()).finish(),
            Whole::Mapped(mapping) => f.debug_tuple("Mapped").field(mapping).finish(),
        }
    }
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

    /// Gives back the resident memory of the bytes before `end`, which the
    /// caller is done with (mapped files only; see
    /// [`Mapping::release_before`]).
    pub fn release_before(&self, end: usize) {
        if let Whole::Mapped(m) = self {
            m.release_before(end);
        }
    }

    /// How much of a mapped file is resident and how much of that in huge
    /// pages (see [`Mapping::resident`]); `None` for bytes read into memory.
    pub fn resident(&self) -> Option<Resident> {
        match self {
            Whole::Owned(_) => None,
            Whole::Mapped(m) => m.resident(),
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

impl Whole {
    /// A reader of the bytes, owning them.
    pub fn into_reader(self) -> Box<dyn Read + Send> {
        Box::new(WholeReader { whole: self, pos: 0 })
    }
}

struct WholeReader {
    whole: Whole,
    pos: usize,
}

impl Read for WholeReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = (&self.whole.as_bytes()[self.pos..]).read(buf)?;
        self.pos += n;
        Ok(n)
    }
}

/// How inputs are opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// When to map regular files.
    pub mmap: MmapPolicy,
    /// Decode gzip and zstd inputs (recognised by their magic bytes).
    pub decompress: bool,
    /// How the (decoded) bytes are taken as text: UTF-16 inputs are
    /// transcoded to UTF-8 ([`crate::transcode`]).
    pub encoding: Encoding,
}

/// An opened input.
#[derive(Debug)]
pub struct Opened {
    /// Its bytes: a decoded or transcoded input is always a stream, or a
    /// pipe (transcoded from a pipe).
    pub contents: Contents,
    /// The format it is decoded from, if it is.
    pub codec: Option<Codec>,
    /// The UTF-16 byte order it is transcoded from, if it is.
    pub utf16: Option<Utf16>,
}

impl Opened {
    /// Whether its bytes are made as they are read (decompressed or
    /// transcoded), which is worth a thread of its own on a large input.
    pub fn is_decoded(&self) -> bool {
        self.codec.is_some() || self.utf16.is_some()
    }
}

/// Opens `input` as [`open`] does, then [`decoded`].
pub fn open_with(input: &Input, opts: OpenOptions) -> io::Result<Opened> {
    decoded(open(input, opts.mmap)?, opts.decompress, opts.encoding)
}

/// `contents` as text: with `decompress`, those that start with a gzip or
/// zstd magic as a stream of their decoded bytes; then, as `encoding`
/// decides from the first bytes (decoded ones), UTF-16 transcoded to UTF-8
/// ([`crate::transcode`]); otherwise as they are. The first bytes of a
/// stream are read to look at them, and given back in it.
pub fn decoded(contents: Contents, decompress: bool, encoding: Encoding) -> io::Result<Opened> {
    decoded_counting(contents, decompress, encoding, None)
}

/// [`decoded`], and with `read`, the bytes the decoder reads counted as it
/// reads them: an input that is decoded ([`Opened::is_decoded`]) adds its
/// own bytes to `read` (an archive's compressed bytes, UTF-16 text's two
/// bytes per unit, a byte-order mark), not the decoded ones, so that a
/// progress display measures it against its size on disk. A whole input
/// (a mapped or read file) read only in part (a caller that stopped early,
/// a corrupt archive) adds the rest when its reader is dropped. An input
/// that is not decoded adds nothing: its bytes are the ones its caller
/// goes through, and counts.
///
/// # Example
///
/// ```
/// use std::io::Read;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use std::sync::Arc;
/// use urnscan::source::{decoded_counting, Contents, Whole};
/// use urnscan::transcode::Encoding;
///
/// // UTF-16LE with its byte-order mark: 2 + 2 * 19 bytes on disk, 19 as text.
/// let mut utf16 = vec![0xFF, 0xFE];
/// utf16.extend("urn:isbn:0451450523".encode_utf16().flat_map(u16::to_le_bytes));
/// let read = Arc::new(AtomicU64::new(0));
/// let opened = decoded_counting(Contents::Whole(Whole::Owned(utf16)), false, Encoding::Auto, Some(&read))?;
/// assert!(opened.is_decoded());
/// let Contents::Stream(mut text) = opened.contents else { unreachable!() };
/// let mut urn = String::new();
/// text.read_to_string(&mut urn)?;
/// assert_eq!((urn.as_str(), read.load(Ordering::Relaxed)), ("urn:isbn:0451450523", 40));
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn decoded_counting(
    contents: Contents,
    decompress: bool,
    encoding: Encoding,
    read: Option<&Arc<AtomicU64>>,
) -> io::Result<Opened> {
    let (contents, codec) = if decompress { decompressed(contents, read)? } else { (contents, None) };
    // Text decompressed is counted already, as the archive's bytes.
    let read = if codec.is_some() { None } else { read };
    let (contents, utf16) =
        if encoding == Encoding::None { (contents, None) } else { transcoded(contents, encoding, read) };
    Ok(Opened { contents, codec, utf16 })
}

/// `contents` decoded when they start with a gzip or zstd magic.
fn decompressed(contents: Contents, read: Option<&Arc<AtomicU64>>) -> io::Result<(Contents, Option<Codec>)> {
    let (codec, reader) = match contents {
        Contents::Whole(whole) => match Codec::sniff(whole.as_bytes()) {
            Some(codec) => (codec, counted_whole(whole, 0, read)),
            None => return Ok((Contents::Whole(whole), None)),
        },
        Contents::Stream(reader) => {
            let peeked = peek(reader, MAGIC_LEN);
            match Codec::sniff(&peeked.head) {
                Some(codec) => (codec, counted_peeked(peeked, 0, read)),
                None => return Ok((Contents::Stream(peeked.into_reader()), None)),
            }
        }
        // An archive written into a pipe is decoded as a plain stream; text
        // stays a pipe, which can still be read live.
        Contents::Pipe(mut pipe) => {
            let peeked = peek(std::mem::replace(&mut pipe.reader, Box::new(io::empty())), MAGIC_LEN);
            match Codec::sniff(&peeked.head) {
                Some(codec) => (codec, counted_peeked(peeked, 0, read)),
                None => {
                    pipe.reader = peeked.into_reader();
                    return Ok((Contents::Pipe(pipe), None));
                }
            }
        }
    };
    Ok((Contents::Stream(codec.decoder(reader)?), Some(codec)))
}

/// `contents` transcoded to UTF-8 when `encoding` takes them for UTF-16
/// ([`Encoding::decide`]). A pipe stays a pipe, so that it can still be
/// read live.
fn transcoded(contents: Contents, encoding: Encoding, read: Option<&Arc<AtomicU64>>) -> (Contents, Option<Utf16>) {
    let utf16 =
        |reader: Box<dyn Read + Send>, order| -> Box<dyn Read + Send> { Box::new(Utf16Reader::new(reader, order)) };
    match contents {
        Contents::Whole(whole) => match encoding.decide(whole.as_bytes()) {
            Some((order, mark)) => (Contents::Stream(utf16(counted_whole(whole, mark, read), order)), Some(order)),
            None => (Contents::Whole(whole), None),
        },
        Contents::Stream(reader) => match marked(reader, encoding, read) {
            (reader, Some(order)) => (Contents::Stream(utf16(reader, order)), Some(order)),
            (reader, None) => (Contents::Stream(reader), None),
        },
        Contents::Pipe(mut pipe) => {
            let (reader, order) = marked(std::mem::replace(&mut pipe.reader, Box::new(io::empty())), encoding, read);
            pipe.reader = match order {
                Some(order) => utf16(reader, order),
                None => reader,
            };
            (Contents::Pipe(pipe), order)
        }
    }
}

/// `reader` after a look at its first bytes: with the UTF-16 byte order
/// `encoding` decides on, any mark read off (and the rest counted in
/// `read`); otherwise whole again.
fn marked(
    reader: Box<dyn Read + Send>,
    encoding: Encoding,
    read: Option<&Arc<AtomicU64>>,
) -> (Box<dyn Read + Send>, Option<Utf16>) {
    let peeked = peek(reader, BOM_LEN);
    match encoding.decide(&peeked.head) {
        Some((order, mark)) => (counted_peeked(peeked, mark, read), Some(order)),
        None => (peeked.into_reader(), None),
    }
}

/// A reader of `whole` from byte `from` on, its bytes counted in `read`
/// (the `from` skipped ones at once, the rest as read or when dropped).
fn counted_whole(whole: Whole, from: usize, read: Option<&Arc<AtomicU64>>) -> Box<dyn Read + Send> {
    let left = (whole.as_bytes().len() - from) as u64;
    let reader = Box::new(WholeReader { whole, pos: from });
    match read {
        Some(counter) => {
            counter.fetch_add(from as u64, Ordering::Relaxed);
            Box::new(Counted { inner: reader, counter: Arc::clone(counter), left: Some(left) })
        }
        None => reader,
    }
}

/// The stream `peeked` from byte `from` of its head on, its bytes counted
/// in `read` (the head's at once, the rest as read).
fn counted_peeked(peeked: Peeked, from: usize, read: Option<&Arc<AtomicU64>>) -> Box<dyn Read + Send> {
    let (mut head, rest) = peeked.into_parts();
    let rest = match read {
        Some(counter) => {
            counter.fetch_add(head.len() as u64, Ordering::Relaxed);
            Box::new(Counted { inner: rest, counter: Arc::clone(counter), left: None })
        }
        None => rest,
    };
    head.drain(..from.min(head.len()));
    Box::new(io::Cursor::new(head).chain(rest))
}

/// A reader that adds the bytes it reads to a counter (once per read, of
/// 8 KiB or more from a decoder), and when dropped the bytes it is known
/// to have left unread.
struct Counted {
    inner: Box<dyn Read + Send>,
    counter: Arc<AtomicU64>,
    /// Bytes not read yet, when known (a whole input's).
    left: Option<u64>,
}

impl Read for Counted {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.counter.fetch_add(n as u64, Ordering::Relaxed);
        if let Some(left) = &mut self.left {
            *left = left.saturating_sub(n as u64);
        }
        Ok(n)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.counter.fetch_add(self.left.unwrap_or(0), Ordering::Relaxed);
    }
}

/// What to do with binary files.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BinaryPolicy {
    /// Scan them like text (URNs do appear in binary dumps).
    #[default]
    Scan,
    /// Skip them, without an error.
    Skip,
}

/// Bytes at the start of an input that decide whether it is binary.
pub const BINARY_PROBE: usize = 8 << 10;

/// Whether an input whose first bytes are `head` is binary: a NUL byte in
/// its first [`BINARY_PROBE`] (8 KiB) bytes, the rule grep and ripgrep use.
/// Text encodings other than UTF-16/32 never contain NUL, and almost every
/// binary format does early on. Bytes past the probe are not looked at.
pub fn is_binary(head: &[u8]) -> bool {
    memchr::memchr(0, &head[..head.len().min(BINARY_PROBE)]).is_some()
}

/// A stream whose first bytes were read to be looked at.
pub struct Peeked {
    /// Up to the bytes asked for: fewer only when the stream ended or failed.
    pub head: Vec<u8>,
    /// The error that stopped the peek, if any: the stream's reader gives it after the head.
    pub error: Option<io::Error>,
    rest: Box<dyn Read + Send>,
}

impl Peeked {
    /// Whether the head is all there is (the stream ended or failed within it).
    pub fn is_complete(&self, asked: usize) -> bool {
        self.head.len() < asked || self.error.is_some()
    }

    /// The whole stream again: the head, then (an error or) the rest.
    pub fn into_reader(self) -> Box<dyn Read + Send> {
        let (head, rest) = self.into_parts();
        Box::new(io::Cursor::new(head).chain(rest))
    }

    /// The head, and a reader of what follows it (which gives the error first, if any).
    pub fn into_parts(self) -> (Vec<u8>, Box<dyn Read + Send>) {
        match self.error {
            Some(e) => (self.head, Box::new(FailsOnce(Some(e)))),
            None => (self.head, self.rest),
        }
    }
}

/// Reads up to `n` bytes from the start of `reader` (fewer only at its end
/// or on an error, which is kept in [`Peeked::error`], not lost).
pub fn peek(mut reader: Box<dyn Read + Send>, n: usize) -> Peeked {
    let mut head = Vec::with_capacity(n.min(64 << 10));
    let error = (&mut reader).take(n as u64).read_to_end(&mut head).err();
    Peeked { head, error, rest: reader }
}

/// A reader that fails once with its error, then is at its end.
pub struct FailsOnce(pub Option<io::Error>);

impl Read for FailsOnce {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        match self.0.take() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }
}

/// How long bytes read from a [`Live`] stream may wait for more before
/// they are handed to the scan: what the writer of a pipe wrote is scanned
/// (and printed) within about this long (`tail -f app.log | urnscan scan`).
pub const LIVE_DELAY: Duration = Duration::from_millis(100);

/// A stream whose writer may pause (a pipe or a terminal, as stdin or
/// given by path: [`Contents::Pipe`]), read so that the scan never waits
/// on a pause with bytes in hand: once a read has returned bytes, a later
/// read that would have to wait past `delay` from them fails with
/// [`io::ErrorKind::WouldBlock`] instead, once; the read after that waits
/// as long as it takes.
/// [`Scanner::scan_reader`](crate::Scanner::scan_reader) takes such a
/// failure as the place to scan what it holds. A fast stream is not slowed
/// down: its reads find bytes waiting, and each asks the system first
/// ([`crate::platform::ready`]); its blocks are only cut short when one
/// takes longer than `delay` to fill.
///
/// ```no_run
/// use std::io;
/// use urnscan::source::{Live, LIVE_DELAY};
/// use urnscan::{ExtractOptions, Scanner};
///
/// let mut stdin = Live::new(io::stdin(), io::stdin(), LIVE_DELAY);
/// let scanner = Scanner::new(ExtractOptions::default());
/// scanner.scan_reader(&mut stdin, 1 << 20, |buf, base, events| {
///     println!("{} URNs in the block at {base} ({} bytes)", events.len(), buf.len());
///     true
/// })?;
/// # Ok::<(), io::Error>(())
/// ```
#[cfg(unix)]
pub struct Live<R, F> {
    inner: R,
    fd: F,
    delay: Duration,
    /// When the first bytes since the last pause came.
    since: Option<Instant>,
}

#[cfg(unix)]
impl<R: Read, F: std::os::fd::AsFd> Live<R, F> {
    /// `inner`, whose bytes come from the descriptor of `fd`.
    pub fn new(inner: R, fd: F, delay: Duration) -> Self {
        Live { inner, fd, delay, since: None }
    }
}

#[cfg(unix)]
impl<R: Read, F: std::os::fd::AsFd> Read for Live<R, F> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if let Some(since) = self.since {
            let left = self.delay.saturating_sub(since.elapsed());
            if left.is_zero() || !crate::platform::ready::readable_within(self.fd.as_fd(), left) {
                self.since = None;
                return Err(io::ErrorKind::WouldBlock.into());
            }
        }
        let n = self.inner.read(buf)?;
        if n > 0 {
            self.since.get_or_insert_with(Instant::now);
        }
        Ok(n)
    }
}

/// Opens `input` and decides how to read it.
pub fn open(input: &Input, policy: MmapPolicy) -> io::Result<Contents> {
    let path = match input {
        Input::Stdin => return Ok(open_stdin(policy)),
        Input::File(path) => path,
    };
    let file = File::open(path)?;
    let meta = file.metadata()?;
    if meta.is_dir() {
        return Err(io::Error::new(io::ErrorKind::IsADirectory, "is a directory"));
    }
    if !meta.is_file() {
        return Ok(Contents::Pipe(Pipe::of_file(file)?));
    }
    if maps(policy, meta.len()) {
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

/// Whether `policy` maps a regular file of `len` bytes. A size of 0 is
/// never mapped: files in /proc and /sys report 0 and still have content,
/// which only reading gives, and a truly empty file costs nothing to read.
fn maps(policy: MmapPolicy, len: u64) -> bool {
    len > 0
        && match policy {
            MmapPolicy::Always => true,
            MmapPolicy::Auto => len >= AUTO_MMAP_THRESHOLD,
            MmapPolicy::Never => false,
        }
}

/// Stdin, mapped when it is redirected from a regular file that `policy`
/// maps and its offset stands at the start (where a stream of it would
/// begin, so offsets are the same either way); a [`Contents::Pipe`] when
/// it is not a regular file (a pipe, a terminal); streamed otherwise.
fn open_stdin(policy: MmapPolicy) -> Contents {
    let Some(file) = stdin_file() else { return Contents::Stream(Box::new(io::stdin())) };
    if !file.metadata().is_ok_and(|meta| meta.is_file()) {
        return Contents::Pipe(stdin_pipe(file));
    }
    match map_redirected(file, policy) {
        Some(mapping) => Contents::Whole(Whole::Mapped(mapping)),
        None => Contents::Stream(Box::new(io::stdin())),
    }
}

/// Stdin's reader as a [`Pipe`] whose descriptor is `dup`, a duplicate of
/// stdin's.
#[cfg_attr(not(unix), allow(unused_variables))]
fn stdin_pipe(dup: File) -> Pipe {
    Pipe {
        reader: Box::new(io::stdin()),
        #[cfg(unix)]
        fd: dup.into(),
    }
}

/// A duplicate of the stdin descriptor (sharing its offset), as a file.
#[cfg(unix)]
fn stdin_file() -> Option<File> {
    use std::os::fd::AsFd;
    io::stdin().as_fd().try_clone_to_owned().ok().map(File::from)
}

#[cfg(not(unix))]
fn stdin_file() -> Option<File> {
    None
}

/// `file`, an open descriptor that may be anything, mapped when it is a
/// regular file `policy` maps whose offset is at the start; its offset is
/// then moved past the mapped bytes, as a stream read to its end would
/// leave it, so that a command after this one on the same descriptor
/// (`{ urnscan scan; cat; } < FILE`) goes on from there.
fn map_redirected(mut file: File, policy: MmapPolicy) -> Option<Mapping> {
    use std::io::{Seek, SeekFrom};

    let meta = file.metadata().ok()?;
    if !meta.is_file() || !maps(policy, meta.len()) || file.stream_position().ok()? != 0 {
        return None;
    }
    let mapping = Mapping::map(&file).ok()?;
    let _ = file.seek(SeekFrom::Start(mapping.as_bytes().len() as u64));
    Some(mapping)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A directory opened as a file is an error of its own kind, which a
    /// caller can match on, and shows its contents' shape, not its bytes.
    #[test]
    fn a_directory_is_an_error_of_its_kind_and_contents_debug_shortly() {
        let dir = tempfile::tempdir().unwrap();
        let err = open(&Input::File(dir.path().to_path_buf()), MmapPolicy::Auto).unwrap_err();
        assert_eq!((err.kind(), err.to_string()), (io::ErrorKind::IsADirectory, "is a directory".to_owned()));
        let whole = Contents::Whole(Whole::Owned(vec![b'x'; 1 << 20]));
        assert_eq!(format!("{whole:?}"), "Whole(Owned { len: 1048576 })");
    }

    /// Stdin redirected from a file is mapped by the policy that maps
    /// files, only from the start, and is left at the end as a stream would
    /// be; anything else is left to be streamed, untouched.
    #[test]
    fn a_redirected_file_is_mapped_from_its_start_and_left_at_its_end() {
        use std::io::{Seek, SeekFrom, Write};

        let text: Vec<u8> = (0..3000).flat_map(|i| format!("line {i} urn:example:{i}\n").into_bytes()).collect();
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(&text).unwrap();
        let len = text.len() as u64;
        assert!(len < AUTO_MMAP_THRESHOLD);
        let cases = [
            (MmapPolicy::Always, 0, true),
            (MmapPolicy::Auto, 0, false), // below the threshold: streamed
            (MmapPolicy::Never, 0, false),
            (MmapPolicy::Always, 5, false), // a stream begins where the offset stands
        ];
        for (policy, at, mapped) in cases {
            file.seek(SeekFrom::Start(at)).unwrap();
            let got = map_redirected(file.try_clone().unwrap(), policy);
            assert_eq!(got.is_some(), mapped, "{policy:?} from {at}");
            if let Some(mapping) = got {
                assert!(mapping.as_bytes() == text);
            }
            // The clone shares the offset: at the end when mapped, as it was otherwise.
            assert_eq!(file.stream_position().unwrap(), if mapped { len } else { at }, "{policy:?} from {at}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(map_redirected(File::open(dir.path()).unwrap(), MmapPolicy::Always).is_none(), "a directory");
    }

    /// An input error says what failed, and no more: what became of the
    /// input is the program's to say (the command line adds it). A decode
    /// error keeps its hint.
    #[test]
    fn input_errors_say_what_failed() {
        let error = |path: &str, error| InputError { path: path.to_owned(), error }.to_string();
        let os = |code| io::Error::from_raw_os_error(code);
        assert_eq!(error("d.txt/x", os(libc::ENOTDIR)), format!("d.txt/x: {}", os(libc::ENOTDIR)));
        for code in [libc::ENOENT, libc::EACCES, libc::EIO, libc::ENOTDIR] {
            let said = error("a.txt", os(code));
            assert_eq!(said, format!("a.txt: {}", os(code)));
            assert!(!said.contains("skipped") && !said.contains("other inputs"), "{said}");
        }
        assert_eq!(error("a", io::Error::new(io::ErrorKind::InvalidData, "bad")), "a: bad");

        let source = io::Error::new(io::ErrorKind::UnexpectedEof, "eof");
        let decode = InputError {
            path: "a.gz".to_owned(),
            error: io::Error::new(io::ErrorKind::InvalidData, DecodeError { codec: Codec::Gzip, source }),
        };
        let said = "a.gz: gzip data is corrupt or truncated: eof (check the archive with `gzip -t`)";
        assert_eq!(decode.to_string(), said);
        assert!(decode.decode_error().is_some());
        // Its causes are said once, in its message (the crate doc,
        // "Errors"), also by a reporter of the chain.
        assert_eq!(crate::error::chain_report(&decode), said);
    }

    /// A walk that follows links reports a loop with the walker's words and
    /// what the walk did about it, and no more: what the program did with
    /// the other files is the program's to say.
    #[cfg(unix)]
    #[test]
    fn a_loop_is_reported_as_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/f.txt"), "urn:ab:c\n").unwrap();
        let up = root.join("sub/up");
        std::os::unix::fs::symlink("..", &up).unwrap();
        let walk = WalkOptions { follow_links: true, ..WalkOptions::default() };
        let errors: Vec<String> = expand(std::slice::from_ref(&root), &walk)
            .into_iter()
            .filter_map(|r| r.err())
            .map(|e| e.to_string())
            .collect();
        let (up, root) = (up.display(), root.display());
        let said =
            format!("{up}: File system loop found: {up} points to an ancestor {root}; the loop was not followed");
        assert_eq!(errors, [said]);
    }

    #[test]
    fn binary_is_a_nul_in_the_first_8_kib() {
        let mut text = vec![b'a'; 3 * BINARY_PROBE];
        assert!(!is_binary(&text));
        text[BINARY_PROBE] = 0;
        assert!(!is_binary(&text), "a NUL just past the probe does not count");
        text[BINARY_PROBE - 1] = 0;
        assert!(is_binary(&text));
        assert!(is_binary(b"\0"));
        assert!(!is_binary(b""));
    }

    #[test]
    fn peek_gives_the_head_back_and_keeps_errors_in_place() {
        let data: Vec<u8> = (0..=255).collect();
        let peeked = peek(Box::new(io::Cursor::new(data.clone())), 10);
        assert_eq!(peeked.head, &data[..10]);
        assert!(!peeked.is_complete(10));
        let mut all = Vec::new();
        peeked.into_reader().read_to_end(&mut all).unwrap();
        assert_eq!(all, data);

        let failing = io::Cursor::new(b"abc".to_vec()).chain(FailsOnce(Some(io::Error::other("boom"))));
        let peeked = peek(Box::new(failing), 10);
        assert!(peeked.is_complete(10));
        let mut reader = peeked.into_reader();
        let mut buf = [0u8; 10];
        assert_eq!(reader.read(&mut buf).unwrap(), 3);
        assert_eq!(&buf[..3], b"abc");
        assert_eq!(reader.read(&mut buf).unwrap_err().to_string(), "boom");
        assert_eq!(reader.read(&mut buf).unwrap(), 0);
    }

    /// `bytes` compressed as gzip.
    fn gzip(bytes: &[u8]) -> Vec<u8> {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(bytes).unwrap();
        gz.finish().unwrap()
    }

    /// UTF-16LE of `text` after its byte-order mark.
    fn utf16le_marked(text: &str) -> Vec<u8> {
        [0xff, 0xfe].into_iter().chain(text.encode_utf16().flat_map(u16::to_le_bytes)).collect()
    }

    fn whole(bytes: &[u8]) -> Contents {
        Contents::Whole(Whole::Owned(bytes.to_vec()))
    }

    fn stream(bytes: &[u8]) -> Contents {
        Contents::Stream(Box::new(io::Cursor::new(bytes.to_vec())))
    }

    /// A pipe that holds `bytes` (fewer than its buffer takes).
    #[cfg(unix)]
    fn pipe(bytes: &[u8]) -> Contents {
        use std::io::Write;
        let (read, mut write) = crate::platform::test_pipe();
        write.write_all(bytes).unwrap();
        Contents::Pipe(Pipe::of_file(read).unwrap())
    }

    /// A pipe looked into for `-z` stays a pipe when it holds text (so it
    /// can still be read live) and becomes a decoded stream when it holds
    /// an archive; either way every byte comes back, the looked-at ones
    /// first. A regular file is never a pipe.
    #[cfg(unix)]
    #[test]
    fn a_pipe_stays_a_pipe_unless_it_holds_an_archive() {
        use std::io::Write;
        use std::time::Duration;

        let text = b"see urn:ab:c\n";
        for (written, archive) in [(text.to_vec(), false), (gzip(text), true)] {
            let (read, mut write) = crate::platform::test_pipe();
            write.write_all(&written).unwrap();
            drop(write);
            let opened = decoded(Contents::Pipe(Pipe::of_file(read).unwrap()), true, Encoding::Auto).unwrap();
            assert_eq!(opened.codec.is_some(), archive);
            let mut reader = match opened.contents {
                Contents::Pipe(pipe) if !archive => pipe.live(Duration::from_millis(50)),
                Contents::Stream(reader) if archive => reader,
                _ => panic!("archive {archive}: not what it should be"),
            };
            let mut all = Vec::new();
            reader.read_to_end(&mut all).unwrap();
            assert_eq!(all, text, "archive {archive}");
        }
        let file = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(file.path(), text).unwrap();
        assert!(matches!(open(&Input::File(file.path().into()), MmapPolicy::Auto), Ok(Contents::Whole(_))));
    }

    /// UTF-16 with a mark comes out as UTF-8 without it, whether it was
    /// whole, a stream, a pipe (which stays a pipe) or a decoded archive;
    /// `Encoding::None` leaves it as it is, and text without a mark is
    /// left alone unless a byte order is named.
    #[cfg(unix)]
    #[test]
    fn utf16_is_read_as_its_text_however_it_comes() {
        let text = "see urn:ab:c\u{e9}\n";
        let utf16le = utf16le_marked(text);
        let gz = gzip(&utf16le);
        let read_all = |opened: Opened| {
            let mut all = Vec::new();
            match opened.contents {
                Contents::Whole(whole) => all = whole.as_bytes().to_vec(),
                Contents::Stream(mut reader) => drop(reader.read_to_end(&mut all).unwrap()),
                Contents::Pipe(pipe) => drop(pipe.into_reader().read_to_end(&mut all).unwrap()),
            }
            all
        };
        for (name, contents) in [("whole", whole(&utf16le)), ("stream", stream(&utf16le)), ("pipe", pipe(&utf16le))] {
            let is_pipe = matches!(contents, Contents::Pipe(_));
            let opened = decoded(contents, false, Encoding::Auto).unwrap();
            assert_eq!(opened.utf16, Some(Utf16::Le), "{name}");
            assert!(opened.is_decoded(), "{name}");
            assert_eq!(matches!(opened.contents, Contents::Pipe(_)), is_pipe, "{name}");
            assert_eq!(read_all(opened), text.as_bytes(), "{name}");
        }
        let archive = decoded(stream(&gz), true, Encoding::Auto).unwrap();
        assert_eq!((archive.codec, archive.utf16), (Some(Codec::Gzip), Some(Utf16::Le)));
        assert_eq!(read_all(archive), text.as_bytes());
        let raw = decoded(whole(&utf16le), false, Encoding::None).unwrap();
        assert!(!raw.is_decoded());
        assert_eq!(read_all(raw), utf16le);
        let unmarked = &utf16le[2..];
        assert_eq!(read_all(decoded(stream(unmarked), false, Encoding::Auto).unwrap()), unmarked);
        assert_eq!(read_all(decoded(stream(unmarked), false, Encoding::Utf16Le).unwrap()), text.as_bytes());
        assert_eq!(read_all(decoded(stream(b"u"), false, Encoding::Auto).unwrap()), b"u");
    }

    /// A decoded input counts its own bytes, each once, however it comes
    /// (an archive, UTF-16 with its mark, UTF-16 in an archive; whole, a
    /// stream or a pipe); an input that is not decoded counts none (its
    /// reader counts them as it scans). A whole input left part-read adds
    /// the rest when dropped; a stream counts what was read of it.
    #[cfg(unix)]
    #[test]
    fn a_decoded_input_counts_its_own_bytes_as_they_are_read() {
        let text: String = (0..2000).map(|i| format!("urn:ex:{i} \u{e9}\n")).collect();
        let utf16le = utf16le_marked(&text);
        let zst = zstd::encode_all(text.as_bytes(), 1).unwrap();
        let reader = |contents: Contents| match contents {
            Contents::Whole(whole) => whole.into_reader(),
            Contents::Stream(reader) => reader,
            Contents::Pipe(pipe) => pipe.into_reader(),
        };
        let inputs: [(&str, &[u8], bool); 5] = [
            ("text", text.as_bytes(), false),
            ("gzip", &gzip(text.as_bytes()), true),
            ("zstd", &zst, true),
            ("utf16", &utf16le, true),
            ("gzip of utf16", &gzip(&utf16le), true),
        ];
        for (name, bytes, is_decoded) in inputs {
            // Small enough for a test pipe's buffer.
            assert!(bytes.len() < 60_000, "{name}: {}", bytes.len());
            for (how, contents) in [("whole", whole(bytes)), ("stream", stream(bytes)), ("pipe", pipe(bytes))] {
                let read = Arc::new(AtomicU64::new(0));
                let opened = decoded_counting(contents, true, Encoding::Auto, Some(&read)).unwrap();
                assert_eq!(opened.is_decoded(), is_decoded, "{name} {how}");
                let mut all = Vec::new();
                reader(opened.contents).read_to_end(&mut all).unwrap();
                assert_eq!(all, text.as_bytes(), "{name} {how}");
                let counted = if is_decoded { bytes.len() as u64 } else { 0 };
                assert_eq!(read.load(Ordering::Relaxed), counted, "{name} {how}");
            }
        }
        // 100 bytes of text read, the rest left: the whole input counts
        // all of it once dropped, the stream what its decoder read (at
        // least the mark and 100 units, not all of 20 times the text).
        let long: Vec<u8> = utf16le.iter().chain(utf16le[2..].repeat(19).iter()).copied().collect();
        for how in ["whole", "stream"] {
            let contents = if how == "whole" { whole(&long) } else { stream(&long) };
            let read = Arc::new(AtomicU64::new(0));
            let opened = decoded_counting(contents, false, Encoding::Auto, Some(&read)).unwrap();
            let mut first = [0; 100];
            let mut text = reader(opened.contents);
            text.read_exact(&mut first).unwrap();
            drop(text);
            let counted = read.load(Ordering::Relaxed);
            match how {
                "whole" => assert_eq!(counted, long.len() as u64),
                _ => assert!((202..long.len() as u64).contains(&counted), "{counted}"),
            }
        }
    }

    /// A live stream's reads: bytes as they come; with bytes in hand and
    /// the writer silent, one `WouldBlock` after the delay; then a read
    /// that waits as long as the writer does; the end as the end.
    #[cfg(unix)]
    #[test]
    fn a_live_stream_says_once_that_its_writer_paused() {
        use std::io::Write;
        use std::time::{Duration, Instant};

        let (read, mut write) = crate::platform::test_pipe();
        let delay = Duration::from_millis(50);
        let mut live = Live::new(read.try_clone().unwrap(), read, delay);
        let mut buf = [0u8; 64];
        write.write_all(b"urn:ab:c\n").unwrap();
        assert_eq!(live.read(&mut buf).unwrap(), 9);
        let started = Instant::now();
        assert_eq!(live.read(&mut buf).unwrap_err().kind(), io::ErrorKind::WouldBlock);
        assert!(started.elapsed() >= Duration::from_millis(40), "{:?}", started.elapsed());
        // Now the read waits (well past the delay) for the writer.
        let writer = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            write.write_all(b"urn:ab:d").unwrap();
            write
        });
        let started = Instant::now();
        assert_eq!(live.read(&mut buf).unwrap(), 8);
        assert!(started.elapsed() >= Duration::from_millis(250), "{:?}", started.elapsed());
        assert_eq!(&buf[..8], b"urn:ab:d");
        drop(writer.join().unwrap());
        // Bytes in hand, then the end: the end, not a pause.
        assert_eq!(live.read(&mut buf).unwrap(), 0);
    }
}
