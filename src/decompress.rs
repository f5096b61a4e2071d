//! Compressed inputs (`-z`): gzip and zstd decoded in-process, recognised
//! by their first bytes, and decoded on their own threads.
//!
//! ## Recognising
//!
//! An input is compressed when it starts with the gzip magic (`1f 8b`) or
//! the zstd frame magic (`28 b5 2f fd`), whatever its name: a log rotated
//! to `.gz` without being compressed is text, and gzip data named `.txt` is
//! gzip. Names are never looked at.
//!
//! ## Decoding
//!
//! gzip is read as `zcat` reads it: concatenated members are one stream
//! ([`flate2::read::MultiGzDecoder`]); zstd likewise decodes every frame up
//! to the end. A decoder error (corrupt or truncated data, a bad checksum,
//! trailing garbage) comes out as an [`io::Error`] wrapping a
//! [`DecodeError`], which says what was being decoded and what to do; the
//! bytes decoded before it are delivered first, so the URNs in them are
//! still found.
//!
//! ## Parallelism
//!
//! A compressed stream cannot be split: decoding is sequential, and it is
//! much slower than the scan (a few hundred MB/s against GB/s). So the
//! decoding of different inputs must overlap. [`crate::job`] decodes small
//! archives whole inside its parallel file batches; the rest of a larger
//! one goes through a [`ReadAhead`]: a thread of its own that decodes ahead
//! of the scan into a bounded queue of blocks, so memory stays bounded
//! however large the archive, while the calling thread consumes inputs in
//! order (output order never depends on timing). With one worker thread
//! (`-j1`) nothing runs ahead: the stream is decoded where it is read.

use std::fmt;
use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

use crate::source::{FailsOnce, Peeked};

/// Bytes needed to recognise a compressed input.
pub const MAGIC_LEN: usize = 4;

/// Bytes per block handed from a [`ReadAhead`] thread to its reader.
pub const READ_AHEAD_BLOCK: usize = 1 << 20;

/// Blocks a [`ReadAhead`] thread may decode before its reader takes them:
/// with [`READ_AHEAD_BLOCK`], about 4 MiB of decoded data per stream.
pub const READ_AHEAD_DEPTH: usize = 4;

/// A compression format urnscan decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    /// gzip (RFC 1952), one or more members.
    Gzip,
    /// Zstandard (RFC 8878), one or more frames.
    Zstd,
}

impl Codec {
    /// The format whose magic `head` (an input's first bytes) starts with.
    pub fn sniff(head: &[u8]) -> Option<Codec> {
        if head.starts_with(&[0x1f, 0x8b]) {
            Some(Codec::Gzip)
        } else if head.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
            Some(Codec::Zstd)
        } else {
            None
        }
    }

    /// The format's usual name.
    pub fn name(self) -> &'static str {
        match self {
            Codec::Gzip => "gzip",
            Codec::Zstd => "zstd",
        }
    }

    /// A decoder of `reader`'s compressed bytes; its errors are [`DecodeError`]s.
    pub fn decoder(self, reader: Box<dyn Read + Send>) -> io::Result<Box<dyn Read + Send>> {
        Ok(match self {
            Codec::Gzip => Box::new(Labelled { codec: self, inner: flate2::read::MultiGzDecoder::new(reader) }),
            Codec::Zstd => Box::new(Labelled { codec: self, inner: zstd::stream::read::Decoder::new(reader)? }),
        })
    }
}

/// Why decoding an input stopped.
#[derive(Debug)]
pub struct DecodeError {
    /// What was being decoded.
    pub codec: Codec,
    /// The decoder's (or the underlying read's) error.
    pub source: io::Error,
}

impl DecodeError {
    /// What a user can do about it: check the archive with its format's
    /// own tool (``check the archive with `gzip -t` ``). What became of the
    /// input, and of the others, is the program's to say.
    pub fn hint(&self) -> String {
        format!("check the archive with `{} -t`", self.codec.name())
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} data is corrupt or truncated: {}", self.codec.name(), self.source)
    }
}

/// The decoder's error is part of the message, so it is not also the
/// [`source`](std::error::Error::source): a reporter of the chain would say
/// it twice. The [`DecodeError::source`] field holds it.
impl std::error::Error for DecodeError {}

/// A decoder whose errors say which format was being decoded.
struct Labelled<R> {
    codec: Codec,
    inner: R,
}

impl<R: Read> Read for Labelled<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.inner.read(buf).map_err(|source| match source.kind() {
            io::ErrorKind::Interrupted => source,
            _ => io::Error::new(io::ErrorKind::InvalidData, DecodeError { codec: self.codec, source }),
        })
    }
}

/// A stream whose rest is decoded ahead on another thread (when the rayon
/// pool it runs in has more than one thread), its first bytes `peeked`
/// already in memory. With one thread, the stream is read where it is used.
pub fn read_ahead(peeked: Peeked) -> Box<dyn Read + Send> {
    if rayon::current_num_threads() < 2 {
        return peeked.into_reader();
    }
    let (head, rest) = peeked.into_parts();
    match ReadAhead::spawn(head, rest, READ_AHEAD_BLOCK, READ_AHEAD_DEPTH) {
        Ok(reader) => Box::new(reader),
        Err(e) => Box::new(FailsOnce(Some(io::Error::new(e.kind(), format!("cannot start a decoding thread: {e}"))))),
    }
}

/// One message from a read-ahead thread: data, its error, or the end
/// (an empty block), so a thread that died is told apart from the end.
type Message = io::Result<Vec<u8>>;

/// A reader fed by a thread that reads its source ahead, at most `depth`
/// blocks ahead of the consumer. Dropping it stops the thread at its next
/// block.
pub struct ReadAhead {
    rx: Receiver<Message>,
    block: Vec<u8>,
    pos: usize,
    done: bool,
}

impl ReadAhead {
    /// Starts a thread reading `source` in blocks of `block` bytes, after
    /// handing over `head`.
    pub fn spawn(head: Vec<u8>, source: Box<dyn Read + Send>, block: usize, depth: usize) -> io::Result<ReadAhead> {
        let (tx, rx) = sync_channel(depth.max(1));
        std::thread::Builder::new()
            .name("urnscan-decode".to_owned())
            .spawn(move || pump(head, source, block.max(1), &tx))?;
        Ok(ReadAhead { rx, block: Vec::new(), pos: 0, done: false })
    }

    /// Takes the next message; false at the end.
    fn next_block(&mut self) -> io::Result<bool> {
        let message = self.rx.recv().unwrap_or_else(|_| Err(io::Error::other("the decoding thread stopped")));
        self.block.clear();
        self.pos = 0;
        match message {
            Ok(block) if block.is_empty() => {
                self.done = true;
                Ok(false)
            }
            Ok(block) => {
                self.block = block;
                Ok(true)
            }
            Err(e) => {
                self.done = true;
                Err(e)
            }
        }
    }
}

/// The thread's loop: blocks until the end or an error, then the end
/// marker. Stops early when the reader is gone.
fn pump(head: Vec<u8>, mut source: Box<dyn Read + Send>, block: usize, tx: &SyncSender<Message>) {
    if !head.is_empty() && tx.send(Ok(head)).is_err() {
        return;
    }
    loop {
        let mut buf = Vec::with_capacity(block);
        let read = (&mut source).take(block as u64).read_to_end(&mut buf);
        let full = buf.len() == block;
        // Bytes read before an error go first: they are valid data.
        if !buf.is_empty() && tx.send(Ok(buf)).is_err() {
            return;
        }
        match read {
            Ok(_) if full => continue,
            Ok(_) => break,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        }
    }
    let _ = tx.send(Ok(Vec::new()));
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.block.len() {
            if self.done || !self.next_block()? {
                return Ok(0);
            }
        }
        let n = buf.len().min(self.block.len() - self.pos);
        buf[..n].copy_from_slice(&self.block[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    /// A reader that gives `data`, then fails.
    struct FailsAfter(io::Cursor<Vec<u8>>);

    impl Read for FailsAfter {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(io::Error::other("device gone")),
                n => Ok(n),
            }
        }
    }

    #[test]
    fn sniffs_magic_not_names() {
        assert_eq!(Codec::sniff(&gzip(b"x")), Some(Codec::Gzip));
        assert_eq!(Codec::sniff(&zstd::encode_all(&b"x"[..], 1).unwrap()), Some(Codec::Zstd));
        assert_eq!(Codec::sniff(b"\x1f"), None);
        assert_eq!(Codec::sniff(b"urn:x:y"), None);
        assert_eq!(Codec::sniff(&[0x28, 0xb5, 0x2f]), None);
    }

    #[test]
    fn corrupt_data_is_a_labelled_error() {
        let mut data = gzip(&b"urn:ab:c ".repeat(1000));
        let n = data.len();
        data.truncate(n / 2);
        let mut out = Vec::new();
        let err = Codec::Gzip.decoder(Box::new(io::Cursor::new(data))).unwrap().read_to_end(&mut out).unwrap_err();
        let decode = err.get_ref().and_then(|e| e.downcast_ref::<DecodeError>()).expect("a DecodeError");
        assert_eq!(decode.codec, Codec::Gzip);
        assert!(err.to_string().starts_with("gzip data is corrupt or truncated"), "{err}");
        assert_eq!(decode.hint(), "check the archive with `gzip -t`", "what to do, in words true for any program");
    }

    /// The decoder's error is in the message and not the source: as both,
    /// a reporter of the chain printed "gzip data is corrupt or truncated:
    /// bad header: bad header".
    #[test]
    fn a_decode_error_says_its_cause_once() {
        let e = DecodeError { codec: Codec::Zstd, source: io::Error::other("bad header") };
        assert_eq!(crate::error::chain_report(&e), "zstd data is corrupt or truncated: bad header");
        // As it reaches a program: inside the io::Error a decoder returns.
        let wrapped = io::Error::new(io::ErrorKind::InvalidData, e);
        assert_eq!(crate::error::chain_report(&wrapped), "zstd data is corrupt or truncated: bad header");
    }

    #[test]
    fn read_ahead_gives_every_byte_in_order_then_the_error() {
        let data: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        for block in [1, 7, 4096, 1 << 20] {
            let source = Box::new(FailsAfter(io::Cursor::new(data[10..].to_vec())));
            let mut reader = ReadAhead::spawn(data[..10].to_vec(), source, block, 2).unwrap();
            let mut got = Vec::new();
            let err = reader.read_to_end(&mut got).unwrap_err();
            assert_eq!(err.to_string(), "device gone");
            assert_eq!(got, data, "block {block}");
        }
    }

    #[test]
    fn read_ahead_ends_cleanly() {
        let source = Box::new(io::Cursor::new(b"world".to_vec()));
        let mut reader = ReadAhead::spawn(b"hello ".to_vec(), source, 2, 1).unwrap();
        let mut got = String::new();
        reader.read_to_string(&mut got).unwrap();
        assert_eq!(got, "hello world");
        assert_eq!(reader.read(&mut [0; 4]).unwrap(), 0);
    }
}
