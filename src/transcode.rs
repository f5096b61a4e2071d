//! Text encodings: UTF-16 inputs, recognised by their byte-order mark (or
//! named by the caller), transcoded to UTF-8 as they are read.
//!
//! ## Why
//!
//! URNs are ASCII, and every ASCII-compatible encoding (UTF-8, Latin-1,
//! Windows-1252, ...) stores them as the same bytes, so those inputs are
//! scanned as they are. UTF-16 is the exception that users meet: XML and
//! CSV exports of Windows tools (PowerShell's `Out-File`, Excel's "Unicode
//! text", SQL Server's `bcp -w`) write `u\0r\0n\0:\0`, in which no `urn:`
//! is found, and the NUL bytes make the file look binary. ripgrep
//! transcodes such files by default; so does urnscan.
//!
//! ## Recognising
//!
//! Under [`Encoding::Auto`] (the default) an input is UTF-16 when its first
//! two bytes are a byte-order mark: `ff fe` (little-endian) or `fe ff`
//! (big-endian). The mark is dropped. Nothing else is guessed: text
//! without a mark is read as it is unless the caller names the byte order
//! ([`Encoding::Utf16Le`], [`Encoding::Utf16Be`]; a mark, when there is
//! one, still decides). A UTF-8 mark (`ef bb bf`, which Notepad and
//! Excel's "CSV UTF-8" write) is no URN character, so a search for `urn:`
//! reads it as it is and its offsets stay the file's; the readers of one
//! URN per line (`dedup`, `check`) judge their first line without it
//! ([`without_utf8_bom`]), where it would make that line a URN after three
//! non-ASCII bytes. UTF-32 is not decoded.
//!
//! ## Decoding
//!
//! [`Utf16Reader`] turns UTF-16 code units into UTF-8, runs of ASCII 16
//! units at a time ([`narrow_ascii`], SSE2 on x86_64): a surrogate without
//! its partner and an odd last byte each become U+FFFD, as
//! [`String::from_utf16_lossy`] does (the tests and the `transcode` fuzz
//! target compare the two), so no input is refused. A surrogate pair or a
//! code unit split across two reads of the inner reader is held back until
//! its rest comes.
//! Each read of the inner reader is transcoded and handed on at once, so a
//! pipe that a writer fills slowly (`tail -f`) is still read as it comes.
//!
//! Offsets and line numbers of what is found in a transcoded input are
//! those of its UTF-8 text (without the mark), as offsets of a
//! decompressed input are those of its decoded bytes.

use std::io::{self, Read};

use crate::platform::simd::ascii16::narrow_ascii;

/// How the bytes of an input are taken as text.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-16 when the input starts with a UTF-16 byte-order mark;
    /// otherwise the bytes as they are.
    #[default]
    Auto,
    /// The bytes as they are, whatever they start with.
    None,
    /// UTF-16, little-endian unless a byte-order mark says otherwise.
    Utf16Le,
    /// UTF-16, big-endian unless a byte-order mark says otherwise.
    Utf16Be,
}

/// The UTF-8 byte-order mark: U+FEFF encoded as UTF-8.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The start of an input without a UTF-8 byte-order mark, if it has one:
/// for readers that judge each line whole, where the mark would be part of
/// the first line (a URN after three non-ASCII bytes). Only the start of
/// an input holds a mark; U+FEFF anywhere else is a character of the text.
///
/// ```
/// use urnscan::transcode::without_utf8_bom;
///
/// assert_eq!(without_utf8_bom(b"\xEF\xBB\xBFurn:isbn:0451450523\n"), b"urn:isbn:0451450523\n");
/// assert_eq!(without_utf8_bom(b"urn:isbn:0451450523\n"), b"urn:isbn:0451450523\n");
/// assert_eq!(without_utf8_bom(b"\xEF\xBB"), b"\xEF\xBB");
/// ```
pub fn without_utf8_bom(start: &[u8]) -> &[u8] {
    start.strip_prefix(UTF8_BOM).unwrap_or(start)
}

/// The byte order of UTF-16 code units.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Utf16 {
    /// Least significant byte first (`ff fe` as a mark).
    Le,
    /// Most significant byte first (`fe ff` as a mark).
    Be,
}

/// Bytes of a UTF-16 byte-order mark, and what [`Encoding::decide`] needs
/// to see of an input.
pub const BOM_LEN: usize = 2;

impl Utf16 {
    /// The byte order whose mark `head` (an input's first bytes) starts with.
    pub fn sniff(head: &[u8]) -> Option<Utf16> {
        match head {
            [0xff, 0xfe, ..] => Some(Utf16::Le),
            [0xfe, 0xff, ..] => Some(Utf16::Be),
            _ => None,
        }
    }

    /// The byte order of UTF-16 text without a mark, guessed from the
    /// first [`BINARY_PROBE`](crate::source::BINARY_PROBE) bytes of `head`
    /// (an input's first bytes, which [`Encoding::Auto`] reads as they are)
    /// for a hint: text that holds URNs is mostly ASCII, so in nearly
    /// every code unit one byte is zero, always the same one, and the
    /// other a printable ASCII character, a tab or a line break. `None`
    /// unless 7 in 8 of at least 16 units are so, all in one order: bytes
    /// of a binary format seldom are.
    pub fn guess(head: &[u8]) -> Option<Utf16> {
        let head = &head[..head.len().min(crate::source::BINARY_PROBE)];
        let units = head.len() / 2;
        if units < 16 {
            return None;
        }
        let text = |b: u8| (0x20..0x7f).contains(&b) || matches!(b, b'\t' | b'\n' | b'\r');
        let (mut le, mut be) = (0, 0);
        for pair in head.chunks_exact(2) {
            le += usize::from(pair[1] == 0 && text(pair[0]));
            be += usize::from(pair[0] == 0 && text(pair[1]));
        }
        if le * 8 >= units * 7 {
            Some(Utf16::Le)
        } else if be * 8 >= units * 7 {
            Some(Utf16::Be)
        } else {
            None
        }
    }

    /// The code unit of two bytes in this order.
    fn unit(self, pair: [u8; 2]) -> u16 {
        match self {
            Utf16::Le => u16::from_le_bytes(pair),
            Utf16::Be => u16::from_be_bytes(pair),
        }
    }

    /// The usual name: `UTF-16LE` or `UTF-16BE`.
    pub fn name(self) -> &'static str {
        match self {
            Utf16::Le => "UTF-16LE",
            Utf16::Be => "UTF-16BE",
        }
    }
}

impl Encoding {
    /// For a hint: the byte order of the UTF-16 text without a mark that a
    /// binary input whose first bytes are `head` looks like
    /// ([`Utf16::guess`]). Only under [`Encoding::Auto`]: `None` wants the
    /// bytes, and a named byte order is transcoded already.
    pub fn unmarked(self, head: &[u8]) -> Option<Utf16> {
        if self == Encoding::Auto {
            Utf16::guess(head)
        } else {
            None
        }
    }

    /// How an input whose first bytes are `head` (at least [`BOM_LEN`] of
    /// them, when it has that many) is read: `None` for its bytes as they
    /// are, or the UTF-16 byte order to decode and how many bytes of mark
    /// to drop first.
    pub fn decide(self, head: &[u8]) -> Option<(Utf16, usize)> {
        let marked = Utf16::sniff(head).map(|order| (order, BOM_LEN));
        match self {
            Encoding::None => None,
            Encoding::Auto => marked,
            Encoding::Utf16Le => marked.or(Some((Utf16::Le, 0))),
            Encoding::Utf16Be => marked.or(Some((Utf16::Be, 0))),
        }
    }
}

/// Bytes read from the inner reader at a time.
const BLOCK: usize = 64 << 10;

/// UTF-8 text of a reader of UTF-16 code units (see the module docs).
pub struct Utf16Reader<R> {
    inner: R,
    order: Utf16,
    /// Bytes read, of which `raw[..held]` are not transcoded yet: between
    /// reads, at most a high surrogate and an odd byte waiting for what
    /// follows them (3 bytes).
    raw: Box<[u8]>,
    held: usize,
    /// Transcoded bytes; `out[at..]` are not handed on yet.
    out: Vec<u8>,
    at: usize,
    /// The inner reader has ended (and `raw` was transcoded whole).
    done: bool,
}

impl<R: Read> Utf16Reader<R> {
    /// A reader of the UTF-8 text of `inner`'s code units in `order` (any
    /// byte-order mark already read off).
    pub fn new(inner: R, order: Utf16) -> Utf16Reader<R> {
        Utf16Reader {
            inner,
            order,
            raw: vec![0; BLOCK].into_boxed_slice(),
            held: 0,
            out: Vec::new(),
            at: 0,
            done: false,
        }
    }

    /// Reads the inner reader (once, or again while that gives nothing to
    /// hand on) and transcodes what came into `out`.
    fn refill(&mut self) -> io::Result<()> {
        self.out.clear();
        self.at = 0;
        while self.out.is_empty() && !self.done {
            let n = match self.inner.read(&mut self.raw[self.held..]) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            self.held += n;
            self.done = n == 0;
            let used = transcode(&self.raw[..self.held], self.order, self.done, &mut self.out);
            self.raw.copy_within(used..self.held, 0);
            self.held -= used;
        }
        Ok(())
    }
}

impl<R: Read> Read for Utf16Reader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.at == self.out.len() {
            self.refill()?;
        }
        let n = (&self.out[self.at..]).read(buf)?;
        self.at += n;
        Ok(n)
    }
}

/// Appends the UTF-8 of the code units of `raw` to `out` and returns how
/// many bytes of `raw` that used. Unless `last` (the input ends with
/// `raw`), an odd byte and a high surrogate at the end are left for the
/// next call, which may complete them; at the end each becomes U+FFFD.
///
/// Runs of ASCII (most of a text that holds URNs) are copied a block of 16
/// units at a time ([`copy_ascii`]); the rest is decoded a character at a
/// time: a unit, a surrogate pair, or U+FFFD for a surrogate alone, as
/// [`char::decode_utf16`] does. (Decoding every character that way ran
/// at 0.4 GB/s of text, as `iconv` does; copying runs of ASCII a unit at
/// a time, 0.35; 8 units per step in 64-bit words, 1: BENCHMARKS.md, item
/// 122; with SSE2, `scan -c` of a mostly ASCII file took two thirds of
/// the time of the words: item 133.)
fn transcode(raw: &[u8], order: Utf16, last: bool, out: &mut Vec<u8>) -> usize {
    let unit = |at: usize| order.unit([raw[at], raw[at + 1]]);
    let mut used = raw.len() & !1;
    if !last && used > 0 && is_high_surrogate(unit(used - 2)) {
        used -= 2;
    }
    out.reserve(used + 3);
    let mut at = 0;
    while at < used {
        at += copy_ascii(&raw[at..used], order, out);
        if at == used {
            break;
        }
        let first = unit(at);
        let (c, len) = if is_high_surrogate(first) && at + 2 < used && is_low_surrogate(unit(at + 2)) {
            let code = 0x10000 + ((u32::from(first) - 0xd800) << 10) + (u32::from(unit(at + 2)) - 0xdc00);
            (char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER), 4)
        } else {
            (char::from_u32(u32::from(first)).unwrap_or(char::REPLACEMENT_CHARACTER), 2)
        };
        push_char(out, c);
        at += len;
    }
    if last && raw.len() > used {
        push_char(out, char::REPLACEMENT_CHARACTER);
        return raw.len();
    }
    used
}

/// Copies the ASCII at the start of `units` (whole code units) to `out`,
/// a byte per unit; returns how many bytes of `units` that was. Whole
/// blocks of 16 units go through [`narrow_ascii`] (SSE2 on x86_64), the
/// rest a unit at a time.
fn copy_ascii(units: &[u8], order: Utf16, out: &mut Vec<u8>) -> usize {
    let mut n = narrow_ascii(units, order == Utf16::Be, out);
    while n + 2 <= units.len() {
        let unit = order.unit([units[n], units[n + 1]]);
        if unit >= 0x80 {
            break;
        }
        out.push(unit as u8);
        n += 2;
    }
    n
}

fn push_char(out: &mut Vec<u8>, c: char) {
    out.extend_from_slice(c.encode_utf8(&mut [0; 4]).as_bytes());
}

fn is_high_surrogate(unit: u16) -> bool {
    (0xd800..0xdc00).contains(&unit)
}

fn is_low_surrogate(unit: u16) -> bool {
    (0xdc00..0xe000).contains(&unit)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The reference: the whole input decoded at once by the standard
    /// library, an odd last byte as one U+FFFD.
    fn reference(bytes: &[u8], order: Utf16) -> Vec<u8> {
        let units: Vec<u16> = bytes.chunks_exact(2).map(|p| order.unit([p[0], p[1]])).collect();
        let mut text = String::from_utf16_lossy(&units);
        if bytes.len() % 2 == 1 {
            text.push(char::REPLACEMENT_CHARACTER);
        }
        text.into_bytes()
    }

    /// A reader that hands out `bytes` in reads of the given sizes (cycled).
    struct Pieces<'a> {
        bytes: &'a [u8],
        sizes: Vec<usize>,
        turn: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let size = self.sizes[self.turn % self.sizes.len()].max(1);
            self.turn += 1;
            let n = size.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    fn read_all(bytes: &[u8], order: Utf16, sizes: Vec<usize>, buf_len: usize) -> Vec<u8> {
        let mut reader = Utf16Reader::new(Pieces { bytes, sizes, turn: 0 }, order);
        let mut text = Vec::new();
        let mut buf = vec![0; buf_len.max(1)];
        loop {
            let n = reader.read(&mut buf).unwrap();
            if n == 0 {
                return text;
            }
            text.extend_from_slice(&buf[..n]);
        }
    }

    /// UTF-16LE of `s`.
    fn le(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn text_of_both_byte_orders() {
        let be: Vec<u8> = "urn:isbn:1\n".encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(read_all(&le("urn:isbn:1\n"), Utf16::Le, vec![3], 5), b"urn:isbn:1\n");
        assert_eq!(read_all(&be, Utf16::Be, vec![1], 1), b"urn:isbn:1\n");
        // The same bytes in the other order are other characters (U+7500 ...).
        assert_ne!(read_all(&be, Utf16::Le, vec![64], 64), b"urn:isbn:1\n");
    }

    #[test]
    fn pairs_split_across_reads_are_joined() {
        // U+1F600 is d83d de00: one read ends inside the pair, or inside a unit.
        let bytes = le("a\u{1f600}b");
        for split in 1..bytes.len() {
            let text = read_all(&bytes, Utf16::Le, vec![split, 64], 64);
            assert_eq!(text, "a\u{1f600}b".as_bytes(), "split after {split} bytes");
        }
    }

    #[test]
    fn broken_input_becomes_replacement_characters() {
        // A lone high surrogate at the end, a lone low one, an odd last byte.
        let mut bytes = le("x");
        bytes.extend_from_slice(&0xdc00u16.to_le_bytes());
        bytes.extend_from_slice(&le("y"));
        bytes.extend_from_slice(&0xd800u16.to_le_bytes());
        bytes.push(b'z');
        assert_eq!(read_all(&bytes, Utf16::Le, vec![1], 1), "x\u{fffd}y\u{fffd}\u{fffd}".as_bytes());
        assert_eq!(read_all(&[], Utf16::Le, vec![1], 1), b"");
        assert_eq!(read_all(&[0x41], Utf16::Le, vec![1], 1), "\u{fffd}".as_bytes());
    }

    #[test]
    fn the_mark_or_the_caller_decides() {
        let le_text = [0xff, 0xfe, b'u', 0];
        let be_text = [0xfe, 0xff, 0, b'u'];
        assert_eq!(Encoding::Auto.decide(&le_text), Some((Utf16::Le, 2)));
        assert_eq!(Encoding::Auto.decide(&be_text), Some((Utf16::Be, 2)));
        assert_eq!(Encoding::Auto.decide(b"urn:"), None);
        assert_eq!(Encoding::Auto.decide(&[0xff]), None);
        assert_eq!(Encoding::Auto.decide(&[0xef, 0xbb, 0xbf, b'u']), None);
        assert_eq!(Encoding::None.decide(&le_text), None);
        assert_eq!(Encoding::Utf16Le.decide(b"u\0"), Some((Utf16::Le, 0)));
        assert_eq!(Encoding::Utf16Le.decide(&be_text), Some((Utf16::Be, 2)));
        assert_eq!(Encoding::Utf16Be.decide(b"\0u"), Some((Utf16::Be, 0)));
        assert_eq!(Encoding::Utf16Be.decide(&le_text), Some((Utf16::Le, 2)));
    }

    /// ASCII text without a mark is guessed in either order; text with a
    /// few non-ASCII characters still is; binary bytes, short heads,
    /// UTF-8 text and mostly non-ASCII UTF-16 are not.
    #[test]
    fn unmarked_utf16_is_guessed_from_mostly_ascii_text() {
        let text = "id,urn\r\n1,urn:isbn:0451450523\r\n";
        let be: Vec<u8> = text.encode_utf16().flat_map(u16::to_be_bytes).collect();
        assert_eq!(Utf16::guess(&le(text)), Some(Utf16::Le));
        assert_eq!(Utf16::guess(&be), Some(Utf16::Be));
        assert_eq!(Utf16::guess(&le("café, crème, urn:ab:1\n")), Some(Utf16::Le), "2 of 22 units not ASCII");
        assert_eq!(Utf16::guess(&le("urn:ab:1")), None, "8 units");
        assert_eq!(Utf16::guess(text.as_bytes()), None);
        assert_eq!(Utf16::guess(&le("日本語のテキスト urn:ab:1")), None);
        assert_eq!(Utf16::guess(&[0u8; 64]), None);
        let ints: Vec<u8> = (0u16..64).flat_map(u16::to_le_bytes).collect();
        assert_eq!(Utf16::guess(&ints), None, "small integers: most low bytes are not text");
    }

    #[test]
    fn errors_of_the_inner_reader_are_passed_on() {
        let failing = crate::source::FailsOnce(Some(io::Error::other("disk")));
        let mut reader = Utf16Reader::new(failing, Utf16::Le);
        assert_eq!(reader.read(&mut [0; 8]).unwrap_err().to_string(), "disk");
        assert_eq!(reader.read(&mut [0; 8]).unwrap(), 0);
    }

    proptest! {
        /// Any bytes, read in any pieces into any buffer, give the text the
        /// standard library decodes from the whole input at once.
        #[test]
        fn pieces_give_the_text_of_the_whole(
            bytes in prop::collection::vec(
                prop_oneof![any::<u8>(), Just(0u8), Just(0xd8), Just(0xdc), Just(0xdf)], 0..300),
            sizes in prop::collection::vec(1usize..9, 1..5),
            buf_len in 1usize..40,
            big_endian in any::<bool>(),
        ) {
            let order = if big_endian { Utf16::Be } else { Utf16::Le };
            prop_assert_eq!(read_all(&bytes, order, sizes, buf_len), reference(&bytes, order));
        }

        /// Text (of any characters) survives the round trip, with its URNs.
        #[test]
        fn text_survives(s in "(\\PC|urn:[a-z]{2}:[a-z%0-9]{1,5}|\n){0,40}", sizes in prop::collection::vec(1usize..7, 1..4)) {
            prop_assert_eq!(read_all(&le(&s), Utf16::Le, sizes, 7), s.as_bytes());
        }
    }
}
