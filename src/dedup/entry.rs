//! How a distinct key is stored: one entry of bytes in a table's arena.
//!
//! ```text
//! count: u8 | key_len·2 + dead | key | file | offset | delta_len | delta
//!            '-- varint -----'        '--- LEB128 varints ---'
//! ```
//!
//! The count is a fixed one-byte field because it changes on every
//! repeated occurrence; what does not fit it is kept by the table (see
//! [`super::table`]). One byte, not two: most keys are seen a few times,
//! and a key seen more than 255 times costs a map update per 255
//! occurrences, which is nothing beside the lookups; the byte saved is
//! 3 MB of the peak memory of a run with 3 M distinct keys. Everything
//! else is written once, so it is packed: a typical header is 7 bytes
//! instead of 20 as fixed fields.
//!
//! The key comes right after its length, before the first position, because
//! most reads of an entry want the key alone: a lookup compares it (and,
//! when the occurrence comes in input order, does not need the position,
//! see [`super::table`]), and the sort by key reads keys. `KeyHead` is
//! that short read: the count and one varint, usually one byte. Decoding
//! all four varints was 8 % of the instructions of `urnscan dedup` and of
//! `scan --unique --stats`, most of it for lookups and sort rounds that
//! only needed the key. With the key first (callgrind): `dedup -q -j1` on
//! a 1 M-line dataset 1,330 M -> 1,296 M instructions, `scan --unique
//! --stats -j1` on 16 MiB of dense text 292 M -> 282 M.
//!
//! The first-seen raw form is stored as a *delta* against the key, because
//! the two are nearly the same. A key is the raw form's assigned name with
//! some letters' case changed (scheme, NID, percent-encoding digits), so
//! the raw form is the key with a few bytes XOR 0x20, followed by whatever
//! components it had. The delta is empty when the raw form is the key;
//! otherwise a varint `flips·2`, the gaps between the flipped positions as
//! varints, and the suffix. Anything else (a caller's raw form that is not
//! of that shape) is stored whole behind the varint `1`. On a generated
//! dataset where half of the first-seen forms differ from their keys, this
//! stores 5.6 bytes per key where a copy of the raw form took 20.7.

use std::io::{self, Write};

/// Where an occurrence is, in input order: inputs in the order given
/// (directory entries sorted by name), then byte offset.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Position {
    /// Index of the input file in input order.
    pub file: u32,
    /// Where in that file. **Its unit is the caller's**: the byte offset of
    /// the URN where occurrences come from a scan ([`crate::job`],
    /// `urnscan scan`), the 1-based line number where they come from lines
    /// ([`crate::lines`], `urnscan dedup`). Only the order matters to a
    /// table: the earliest position is the first occurrence.
    pub offset: u64,
}

/// One distinct key, as [`KeyTable::iter`](super::KeyTable::iter) and
/// [`KeyTable::sorted`](super::KeyTable::sorted) show it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry<'t> {
    /// The equivalence key.
    pub key: &'t [u8],
    /// The first-seen raw form.
    pub raw: Raw<'t>,
    /// How many occurrences (at most `u64::MAX`: counts saturate there).
    pub count: u64,
    /// Where the first-seen form is.
    pub first: Position,
}

impl<'t> Entry<'t> {
    /// The NID as the key holds it (lower-cased): what per-NID counts
    /// group by.
    ///
    /// ```
    /// use urnscan::{KeyTable, Position};
    ///
    /// let mut table = KeyTable::new();
    /// table.insert(b"urn:isbn:0451450523", b"URN:ISBN:0451450523", Position::default(), 1);
    /// let entry = table.iter().next().unwrap();
    /// assert_eq!(entry.nid(), b"isbn");
    /// ```
    pub fn nid(&self) -> &'t [u8] {
        let rest = self.key.get(4..).unwrap_or_default();
        rest.split(|&b| b == b':').next().unwrap_or_default()
    }
}

/// A first-seen raw form: the bytes themselves, or a key and the delta
/// that turns it into the raw form (see the module documentation). Cheap
/// to copy; [`Raw::to_vec`] and [`Raw::write_to`] give the bytes.
///
/// ```
/// use urnscan::dedup::Raw;
///
/// let raw = Raw::from(&b"URN:ISBN:0451450523"[..]);
/// assert_eq!(raw.to_vec(), b"URN:ISBN:0451450523");
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Raw<'t>(Repr<'t>);

#[derive(Clone, Copy, Debug)]
enum Repr<'t> {
    Bytes(&'t [u8]),
    Delta { key: &'t [u8], delta: &'t [u8] },
}

impl<'t> From<&'t [u8]> for Raw<'t> {
    fn from(bytes: &'t [u8]) -> Raw<'t> {
        Raw(Repr::Bytes(bytes))
    }
}

impl<'t> Raw<'t> {
    pub(super) fn delta(key: &'t [u8], delta: &'t [u8]) -> Raw<'t> {
        match delta {
            [] => Raw(Repr::Bytes(key)),
            _ => Raw(Repr::Delta { key, delta }),
        }
    }

    /// The bytes, when they are stored as they are (no allocation): a form
    /// made from bytes, or a first-seen form that is its key. `None` for a
    /// form a table keeps as a delta from its key (letters in another case,
    /// components): then [`Raw::to_vec`] or [`Raw::write_to`] give them.
    pub fn as_bytes(&self) -> Option<&'t [u8]> {
        match self.0 {
            Repr::Bytes(b) => Some(b),
            Repr::Delta { .. } => None,
        }
    }

    /// Appends the raw form to `out`: the key in one copy, its flipped
    /// letters patched in place, then the suffix (the output's hot path:
    /// [`Raw::write_to`] writes piece by piece, a copy per run between
    /// flips).
    pub fn write_into(&self, out: &mut Vec<u8>) {
        match self.0 {
            Repr::Bytes(b) => out.extend_from_slice(b),
            Repr::Delta { key, delta } => {
                let start = out.len();
                out.extend_from_slice(key);
                match read_delta(delta, |i| out[start + i] ^= 0x20) {
                    Ok(suffix) => out.extend_from_slice(suffix),
                    // Rare (a raw form not of the key's shape): the key goes.
                    Err(whole) => {
                        out.truncate(start);
                        out.extend_from_slice(whole);
                    }
                }
            }
        }
    }

    /// Hands the raw form to `f` in pieces, in order, without allocating.
    fn pieces(&self, mut f: impl FnMut(&[u8])) {
        match self.0 {
            Repr::Bytes(b) => f(b),
            Repr::Delta { key, delta } => delta_pieces(key, delta, f),
        }
    }

    /// The raw form.
    pub fn to_vec(&self) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_into(&mut out);
        out
    }

    /// Writes the raw form to `w`, without allocating.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        let mut result = Ok(());
        self.pieces(|piece| {
            if result.is_ok() {
                result = w.write_all(piece);
            }
        });
        result
    }
}

impl PartialEq for Raw<'_> {
    fn eq(&self, other: &Raw<'_>) -> bool {
        match (self.as_bytes(), other.as_bytes()) {
            (Some(a), Some(b)) => a == b,
            _ => self.to_vec() == other.to_vec(),
        }
    }
}

impl Eq for Raw<'_> {}

/// The count field of an entry, which changes in place (see the module
/// documentation for why one byte).
pub(super) type Count = u8;
/// The fixed-position part of an entry: the count.
pub(super) const COUNT_BYTES: usize = std::mem::size_of::<Count>();
/// Largest count the entry itself holds.
pub(super) const COUNT_MAX: u64 = Count::MAX as u64;
/// Longest encoded header: the count and four varints.
pub(super) const MAX_HEADER: usize = COUNT_BYTES + 5 + 10 + 3 + 3;
/// Longest part of a header in front of a key of at most
/// [`crate::MAX_URN_LEN`] bytes: the count and the key length's varint,
/// (length << 1) in at most three bytes.
pub(super) const MAX_KEY_HEAD: usize = COUNT_BYTES + 3;

const _: () = assert!((crate::MAX_URN_LEN << 1) < 1 << 21);

/// The part of an entry's header in front of its key: the count, the key's
/// length and the dead flag. What a lookup and a sort by key read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct KeyHead {
    pub count: Count,
    pub key_len: usize,
    pub dead: bool,
    /// Where the key starts in the entry.
    pub key_start: usize,
}

impl KeyHead {
    /// Decodes the start of the entry at the start of `b`, which holds the
    /// whole entry (the arena only ever hands out entries it wrote).
    #[inline]
    pub fn decode(b: &[u8]) -> KeyHead {
        let count = b[0];
        let mut at = COUNT_BYTES;
        let key = read_varint(b, &mut at);
        KeyHead { count, key_len: (key >> 1) as usize, dead: key & 1 != 0, key_start: at }
    }

    /// The key of `entry`, the whole entry this was decoded from.
    #[inline]
    pub fn key<'e>(&self, entry: &'e [u8]) -> &'e [u8] {
        &entry[self.key_start..self.key_start + self.key_len]
    }

    /// The whole header, decoding the fields after the key of `entry`.
    /// Always inlined into the arena walks, whose items then stay in
    /// registers (callgrind, `urnscan dedup -q -j1` on 1 M lines: 1,323 M
    /// instructions with a call here, 1,309 M without).
    #[inline(always)]
    pub fn rest(self, entry: &[u8]) -> Header {
        let mut at = self.key_start + self.key_len;
        let file = read_varint(entry, &mut at) as u32;
        let offset = read_varint(entry, &mut at);
        let delta_len = read_varint(entry, &mut at) as usize;
        Header { head: self, first: Position { file, offset }, delta_len, delta_start: at }
    }
}

/// An entry's header, decoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Header {
    pub head: KeyHead,
    pub first: Position,
    pub delta_len: usize,
    /// Where the delta starts in the entry.
    pub delta_start: usize,
}

/// Offset, within an entry, of the byte holding the dead flag: the first
/// byte of the key length's varint, whose lowest bit the flag is.
pub(super) const DEAD_BYTE: usize = COUNT_BYTES;

impl Header {
    /// Bytes of the whole entry.
    pub fn size(&self) -> usize {
        self.delta_start + self.delta_len
    }

    /// The key of `entry`, the whole entry this header was decoded from.
    #[inline]
    pub fn key<'e>(&self, entry: &'e [u8]) -> &'e [u8] {
        self.head.key(entry)
    }

    /// The delta of `entry`, the whole entry this header was decoded from.
    pub fn delta<'e>(&self, entry: &'e [u8]) -> &'e [u8] {
        &entry[self.delta_start..self.size()]
    }

    /// Decodes the header at the start of `b`, which holds the whole entry.
    #[inline]
    pub fn decode(b: &[u8]) -> Header {
        KeyHead::decode(b).rest(b)
    }
}

/// Appends a new entry to `out`: header, key, delta of `raw` (built in
/// `scratch` first, since its length comes before it).
#[cfg(test)]
fn encode(out: &mut Vec<u8>, scratch: &mut Vec<u8>, key: &[u8], raw: &[u8], at: Position, count: Count) {
    delta_into(scratch, key, raw);
    encode_with_delta(out, key, scratch, at, count);
}

/// Writes the delta of `raw` against `key` to `delta`, emptied first: the
/// first half of writing an entry, whose size is then at most
/// [`MAX_HEADER`] + the key's length + the delta's.
pub(super) fn delta_into(delta: &mut Vec<u8>, key: &[u8], raw: &[u8]) {
    delta.clear();
    write_delta(key, raw, delta);
}

/// Appends the entry of `key` with the delta [`delta_into`] made to `out`.
pub(super) fn encode_with_delta(out: &mut Vec<u8>, key: &[u8], delta: &[u8], at: Position, count: Count) {
    out.push(count);
    write_varint(out, (key.len() as u64) << 1);
    out.extend_from_slice(key);
    write_varint(out, u64::from(at.file));
    write_varint(out, at.offset);
    write_varint(out, delta.len() as u64);
    out.extend_from_slice(delta);
}

/// The delta that turns `key` into `raw` (see the module documentation).
fn write_delta(key: &[u8], raw: &[u8], out: &mut Vec<u8>) {
    if raw == key {
        return;
    }
    let Some(flips) = count_flips(key, raw) else {
        write_varint(out, 1);
        out.extend_from_slice(raw);
        return;
    };
    write_varint(out, (flips as u64) << 1);
    let mut next = 0;
    for_each_flip(key, raw, |i| {
        write_varint(out, (i - next) as u64);
        next = i + 1;
    });
    out.extend_from_slice(&raw[key.len()..]);
}

/// The bits a flip may change: only 0x20 of each byte.
const FLIP_BITS: u64 = 0x2020_2020_2020_2020;

/// `bytes` as little-endian words, and the bytes after the last whole one.
fn words(bytes: &[u8]) -> (impl Iterator<Item = u64> + '_, &[u8]) {
    let chunks = bytes.chunks_exact(8);
    let tail = chunks.remainder();
    (chunks.map(|c| u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])), tail)
}

/// How many bytes of the start of `raw` differ from `key` in bit 0x20,
/// or `None` when `raw` is shorter or any other bit differs. Eight bytes at
/// a time: every new key's entry runs this, and a byte loop of a few passes
/// was most of the cost of writing one.
fn count_flips(key: &[u8], raw: &[u8]) -> Option<usize> {
    let raw = raw.get(..key.len())?;
    let ((key_words, key_tail), (raw_words, raw_tail)) = (words(key), words(raw));
    let mut n = 0;
    for (k, r) in key_words.zip(raw_words) {
        let x = k ^ r;
        if x & !FLIP_BITS != 0 {
            return None;
        }
        // A flipped byte has the one bit set: moved to bit 0 of each byte,
        // the multiply adds the bytes up into the top one (at most 8).
        // `count_ones` is a dozen instructions without the POPCNT of
        // newer CPUs, which a portable build does not assume.
        n += (((x >> 5) & 0x0101_0101_0101_0101).wrapping_mul(0x0101_0101_0101_0101) >> 56) as usize;
    }
    for (k, r) in key_tail.iter().zip(raw_tail) {
        match k ^ r {
            0 => {}
            0x20 => n += 1,
            _ => return None,
        }
    }
    Some(n)
}

/// Calls `f` with the index of each flipped byte, in order (`raw` starts
/// with `key` up to flips: [`count_flips`] said so).
fn for_each_flip(key: &[u8], raw: &[u8], mut f: impl FnMut(usize)) {
    let ((key_words, key_tail), (raw_words, raw_tail)) = (words(key), words(&raw[..key.len()]));
    let base = key.len() - key_tail.len();
    for (w, (k, r)) in key_words.zip(raw_words).enumerate() {
        let mut x = k ^ r;
        while x != 0 {
            // Little-endian: the lowest set bit is in the first flipped byte.
            f(w * 8 + x.trailing_zeros() as usize / 8);
            x &= x - 1;
        }
    }
    for (i, (k, r)) in key_tail.iter().zip(raw_tail).enumerate() {
        if k != r {
            f(base + i);
        }
    }
}

/// The raw form that `delta` makes of `key`, in pieces: runs of the key,
/// single flipped bytes, the suffix.
fn delta_pieces(key: &[u8], delta: &[u8], mut f: impl FnMut(&[u8])) {
    let mut next = 0;
    let rest = read_delta(delta, |i| {
        f(&key[next..i]);
        f(&[key[i] ^ 0x20]);
        next = i + 1;
    });
    match rest {
        Ok(suffix) => {
            f(&key[next..]);
            f(suffix);
        }
        Err(whole) => f(whole),
    }
}

/// Reads `delta` (see the module documentation): `Err(raw)` when it holds
/// the raw form whole; otherwise calls `flip` with the index of each
/// flipped byte of the key, in order, and returns the suffix.
fn read_delta(delta: &[u8], mut flip: impl FnMut(usize)) -> Result<&[u8], &[u8]> {
    let mut at = 0;
    let head = read_varint(delta, &mut at);
    if head & 1 == 1 {
        return Err(&delta[at..]);
    }
    let mut next = 0;
    for _ in 0..head >> 1 {
        let i = next + read_varint(delta, &mut at) as usize;
        flip(i);
        next = i + 1;
    }
    Ok(&delta[at..])
}

fn write_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads the varint at `*at` and moves past it. Entries are written by
/// [`encode_with_delta`], so the bytes are always there. Most header fields
/// fit one byte, which is the inlined case.
#[inline(always)]
fn read_varint(b: &[u8], at: &mut usize) -> u64 {
    let first = b[*at];
    *at += 1;
    if first < 0x80 {
        return u64::from(first);
    }
    let mut v = u64::from(first & 0x7f);
    let mut shift = 7;
    loop {
        let byte = b[*at];
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return v;
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nid_is_what_lies_between_the_first_two_colons() {
        let nid = |key: &'static [u8]| Entry { key, raw: Raw::from(key), count: 1, first: Position::default() }.nid();
        assert_eq!(nid(b"urn:isbn:123:4"), b"isbn");
        assert_eq!(nid(b"urn:nbn:de:1"), b"nbn");
        // Not keys a table holds, but no panic either.
        assert_eq!(nid(b"urn:x-y"), b"x-y");
        assert_eq!(nid(b"urn"), b"");
    }

    fn roundtrip(key: &[u8], raw: &[u8], at: Position, count: Count) -> (Header, Vec<u8>) {
        let mut out = vec![0xAA]; // entries need not start at 0
        encode(&mut out, &mut Vec::new(), key, raw, at, count);
        let entry = &out[1..];
        let h = Header::decode(entry);
        assert_eq!(h.size(), entry.len());
        assert_eq!(h.key(entry), key);
        assert_eq!(KeyHead::decode(entry), h.head, "the short read agrees with the whole header");
        let raw = Raw::delta(h.key(entry), h.delta(entry));
        let mut written = Vec::new();
        raw.write_to(&mut written).unwrap();
        // Patched in place after whatever the buffer holds already.
        let mut appended = b"before".to_vec();
        raw.write_into(&mut appended);
        assert_eq!(appended[..6], *b"before");
        assert_eq!(appended[6..], written);
        (h, written)
    }

    #[test]
    fn header_fields_round_trip() {
        let at = Position { file: 70_000, offset: u64::MAX };
        let (h, raw) = roundtrip(b"urn:ab:c", b"URN:ab:c?+x", at, Count::MAX);
        assert_eq!((h.head.count, h.first, h.head.key_len, h.head.dead), (Count::MAX, at, 8, false));
        assert_eq!(raw, b"URN:ab:c?+x");
    }

    #[test]
    fn deltas_are_small() {
        let mut out = Vec::new();
        write_delta(b"urn:isbn:0451450523", b"urn:isbn:0451450523", &mut out);
        assert!(out.is_empty());
        write_delta(b"urn:isbn:0451450523", b"URN:ISBN:0451450523?+r", &mut out);
        // flips·2 = 14, seven gaps of one byte, then "?+r".
        assert_eq!(out, [14, 0, 0, 0, 1, 0, 0, 0, b'?', b'+', b'r']);
    }

    #[test]
    fn dead_byte_is_the_key_length_varint() {
        // A key length of one varint byte and one of two (64 bytes and more).
        let long = [b"urn:ab:".as_slice(), &[b'c'; 100]].concat();
        for key in [b"urn:ab:c".as_slice(), &long] {
            let mut out = Vec::new();
            encode(&mut out, &mut Vec::new(), key, key, Position { file: 300, offset: 1 << 40 }, 1);
            let h = Header::decode(&out);
            out[DEAD_BYTE] |= 1;
            let dead = Header::decode(&out);
            assert!(dead.head.dead);
            assert_eq!(Header { head: KeyHead { dead: false, ..dead.head }, ..dead }, h);
            assert_eq!(dead.key(&out), key);
        }
    }

    /// `key` with byte `i` changed for each edit `(i, kind)` (kind 0: case
    /// flipped, 1: one added, 2: unchanged, 3: bit 0x40 flipped), then
    /// `suffix`.
    fn edited(key: &[u8], edits: &[(usize, u8)], suffix: &[u8]) -> Vec<u8> {
        let mut raw = key.to_vec();
        for &(i, kind) in edits {
            if let Some(b) = raw.get_mut(i) {
                *b = match kind {
                    0 => *b ^ 0x20,
                    1 => b.wrapping_add(1),
                    3 => *b ^ 0x40,
                    _ => *b,
                };
            }
        }
        raw.extend_from_slice(suffix);
        raw
    }

    /// The delta as the module documentation defines it, a byte at a time.
    fn reference_delta(key: &[u8], raw: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        if raw == key {
            return out;
        }
        let flips_only = raw.len() >= key.len() && raw.iter().zip(key).all(|(r, k)| r == k || r ^ k == 0x20);
        if !flips_only {
            write_varint(&mut out, 1);
            out.extend_from_slice(raw);
            return out;
        }
        let flipped: Vec<usize> = (0..key.len()).filter(|&i| raw[i] != key[i]).collect();
        write_varint(&mut out, (flipped.len() as u64) << 1);
        let mut next = 0;
        for i in flipped {
            write_varint(&mut out, (i - next) as u64);
            next = i + 1;
        }
        out.extend_from_slice(&raw[key.len()..]);
        out
    }

    proptest::proptest! {
        /// The word-at-a-time delta equals the byte-at-a-time reference,
        /// for keys of any length (whole words and tails) and any flips,
        /// other edits and suffixes.
        #[test]
        fn delta_equals_the_reference(
            key in proptest::collection::vec(proptest::num::u8::ANY, 0..40),
            edits in proptest::collection::vec((0usize..40, proptest::sample::select(vec![0u8, 0, 0, 1, 3])), 0..12),
            suffix in proptest::collection::vec(proptest::num::u8::ANY, 0..6),
            cut in 0usize..41,
        ) {
            let mut raw = edited(&key, &edits, &suffix);
            // Sometimes shorter than the key.
            if cut < key.len() && suffix.is_empty() {
                raw.truncate(cut);
            }
            let mut got = Vec::new();
            write_delta(&key, &raw, &mut got);
            proptest::prop_assert_eq!(got, reference_delta(&key, &raw));
        }
    }

    proptest::proptest! {
        /// Any key and raw form, of any shape, come back as they went in.
        #[test]
        fn any_raw_form_round_trips(
            key in proptest::collection::vec(proptest::num::u8::ANY, 0..80),
            edits in proptest::collection::vec((0usize..80, 0u8..3), 0..6),
            suffix in proptest::collection::vec(proptest::num::u8::ANY, 0..20),
            file: u32,
            offset: u64,
            count: Count,
        ) {
            let raw = edited(&key, &edits, &suffix);
            let at = Position { file, offset };
            let (h, got) = roundtrip(&key, &raw, at, count);
            proptest::prop_assert_eq!((h.head.count, h.first, h.head.key_len), (count, at, key.len()));
            proptest::prop_assert_eq!(got, raw);
        }
    }
}
