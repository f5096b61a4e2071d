//! Output helpers shared by the subcommands: JSON strings, CSV and TSV fields, the
//! records of distinct URNs (`scan --unique`, `dedup`), the per-NID table
//! (`scan --stats`, `dedup --stats`), numbers and error classification. A
//! new output format starts here.
//!
//! Records are printed by the million, so fields are written straight into
//! the output buffer and checked there, eight bytes at a time, for what
//! would need escaping or quoting ([`json_appended`], [`csv_appended`]);
//! almost nothing does (no URN holds `"`, `\` or a control character, and
//! only a comma needs CSV quotes), and that little goes through a copy.
//! Measured (2026-11-28, 2-core KVM guest, `benches/ab.sh`, 7 rounds,
//! medians): plain `scan --format jsonl` of a 10 M-line dataset 1,245 →
//! 727 ms at two threads, `--format csv` 1,247 → 734 (text: 474), against
//! a `String` per key and `serde_json`'s byte-at-a-time escaping.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};

use urnscan::dedup::Entry;
use urnscan::error::is_drawn;
use urnscan::stats::{NidRow, NidStats};
use urnscan::{ErrorKind, NidClass};

use super::color::{self, Palette, HEADER};

/// Writes `s` as a JSON string literal (quotes and escapes included).
/// Nearly every string printed needs no escape (no URN or key can hold
/// `"`, `\` or a control character, and few paths do): those are found
/// by [`any_byte`] and written as they are; the rest go through
/// `serde_json`, which checks and writes a byte at a time.
pub fn json_str(out: &mut impl Write, s: &str) -> io::Result<()> {
    if needs_json_escape(s.as_bytes(), false) {
        return serde_json::to_writer(&mut *out, s).map_err(io::Error::from);
    }
    out.write_all(b"\"")?;
    out.write_all(s.as_bytes())?;
    out.write_all(b"\"")
}

/// Appends a JSON string whose text `write` appends to `out`: written in
/// place, then checked (unless `check` is false: text made from text that
/// passed, as a key from its URN), and escaped through a copy only when it
/// has to be. For the URN, the key and the raw form of a record, which are
/// made straight into the output instead of into a `String` of their own.
/// Bytes that are not UTF-8 are written as U+FFFD. Returns whether the text
/// was written as it is.
pub fn json_appended(out: &mut Vec<u8>, check: bool, write: impl FnOnce(&mut Vec<u8>)) -> io::Result<bool> {
    out.push(b'"');
    let start = out.len();
    write(out);
    if check && needs_json_escape(&out[start..], true) {
        let text = out.split_off(start);
        out.pop();
        json_str(out, &String::from_utf8_lossy(&text))?;
        return Ok(false);
    }
    out.push(b'"');
    Ok(true)
}

fn needs_json_escape(s: &[u8], or_not_ascii: bool) -> bool {
    any_byte(s, 0x20, b"\"\\", or_not_ascii)
}

/// A writer for diagnostics: once a write fails (stderr a closed pipe, as
/// in `2>&1 >out.txt | head`, or a full disk), it and every later write
/// are dropped and reported done. Rejected lines and messages on stderr
/// are no reason to stop a run whose output and status go elsewhere.
pub struct BestEffort<W> {
    inner: W,
    failed: bool,
}

impl<W: Write> BestEffort<W> {
    pub fn new(inner: W) -> Self {
        BestEffort { inner, failed: false }
    }
}

impl<W: Write> Write for BestEffort<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if !self.failed {
            self.failed = self.inner.write_all(buf).is_err();
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if !self.failed {
            self.failed = self.inner.flush().is_err();
        }
        Ok(())
    }
}

/// Whether `err` comes from writing to a closed pipe, which ends the program
/// quietly: the reader (`head`, `less`) has all it wanted.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe))
}

/// Writes one CSV record (RFC 4180): the fields separated by commas, each
/// quoted when it holds a comma, quote or line break (a quote doubled),
/// then a line break. Straight into `out`: records are printed by the
/// million, and a `String` per field, joined, made `scan --unique --format
/// csv` 1.5 times as slow as its text output on dense text.
pub fn write_csv_record(out: &mut impl Write, fields: &[&[u8]]) -> io::Result<()> {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        write_csv_field(out, field)?;
    }
    out.write_all(b"\n")
}

/// Writes one CSV field, quoted when it has to be (see [`write_csv_record`]).
pub fn write_csv_field(out: &mut impl Write, field: &[u8]) -> io::Result<()> {
    if !needs_csv_quotes(field) {
        return out.write_all(field);
    }
    out.write_all(b"\"")?;
    for (i, part) in field.split(|&b| b == b'"').enumerate() {
        if i > 0 {
            out.write_all(b"\"\"")?;
        }
        out.write_all(part)?;
    }
    out.write_all(b"\"")
}

/// Appends a CSV field whose text `write` appends to `out`: written in
/// place, and quoted (through a copy) only when it has to be. The
/// counterpart of [`json_appended`].
pub fn csv_appended(out: &mut Vec<u8>, check: bool, write: impl FnOnce(&mut Vec<u8>)) -> io::Result<bool> {
    let start = out.len();
    write(out);
    if check && needs_csv_quotes(&out[start..]) {
        let text = out.split_off(start);
        write_csv_field(out, &text)?;
        return Ok(false);
    }
    Ok(true)
}

fn needs_csv_quotes(field: &[u8]) -> bool {
    any_byte(field, 0, b",\"\n\r", false)
}

/// Writes one field of a tab-separated file (`dedup --rejects`) with a
/// tab, a line feed, a carriage return and a backslash as `\t`, `\n`, `\r`
/// and `\\` (the "linear TSV" convention): a row then always splits into
/// the same fields at its tabs, whatever a path or a line holds, and the
/// field's own bytes come back by undoing the four escapes. Other bytes,
/// UTF-8 or not, are written as they are. Almost no field holds one of the
/// four, so most are written without a look at each byte.
pub fn write_tsv_field(out: &mut impl Write, field: &[u8]) -> io::Result<()> {
    if !any_byte(field, 0, b"\t\n\r\\", false) {
        return out.write_all(field);
    }
    let mut rest = field;
    while let Some(at) = rest.iter().position(|b| b"\t\n\r\\".contains(b)) {
        out.write_all(&rest[..at])?;
        out.write_all(match rest[at] {
            b'\t' => b"\\t",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            _ => b"\\\\",
        })?;
        rest = &rest[at + 1..];
    }
    out.write_all(rest)
}

/// Whether any byte of `s` is below `below` (at most 128), in `set` or,
/// with `or_high`, at least 128; looked at eight bytes at a time: every
/// field of every output record is checked, and a loop over bytes (as
/// `serde_json`'s) cost about 300 instructions per JSON string of a `scan`
/// record (callgrind, 2026-11-28).
fn any_byte<const N: usize>(s: &[u8], below: u8, set: &[u8; N], or_high: bool) -> bool {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    // The high bit of a byte of `(w - n) & !w` is set for some byte of `w`
    // below `n` (<= 128) if and only if there is one: a borrow only runs on
    // from a byte that already is below `n`.
    let below_in = |w: u64, n: u8| w.wrapping_sub(ONES * u64::from(n)) & !w;
    let hit = |w: u64| {
        let mut hit = below_in(w, below) | if or_high { w } else { 0 };
        for &b in set {
            hit |= below_in(w ^ (ONES * u64::from(b)), 1);
        }
        hit & HIGH != 0
    };
    let mut words = s.chunks_exact(8);
    if words.any(|word| hit(u64::from_ne_bytes(word.try_into().unwrap_or_default()))) {
        return true;
    }
    let tail = words.remainder();
    if tail.is_empty() {
        return false;
    }
    // The last eight bytes again when there are that many, else the tail
    // filled up with its own first byte.
    let mut last = [tail[0]; 8];
    if s.len() >= 8 {
        last.copy_from_slice(&s[s.len() - 8..]);
    } else {
        last[..tail.len()].copy_from_slice(tail);
    }
    hit(u64::from_ne_bytes(last))
}

/// The JSON object of a distinct URN (`scan --unique`, `dedup`); its first
/// position is named `position` (a byte offset or a line number).
pub fn entry_json(out: &mut Vec<u8>, e: &Entry<'_>, path: &str, position: &str) -> io::Result<()> {
    out.extend_from_slice(b"{\"key\":");
    // The NID is part of the key: what the key needs, it needs.
    let check_nid = !json_appended(out, true, |out| out.extend_from_slice(e.key))?;
    out.extend_from_slice(b",\"urn\":");
    json_appended(out, true, |out| e.raw.write_into(out))?;
    out.extend_from_slice(b",\"count\":");
    write_u64(out, e.count)?;
    out.extend_from_slice(b",\"nid\":");
    json_appended(out, check_nid, |out| out.extend_from_slice(e.nid()))?;
    out.extend_from_slice(b",\"path\":");
    json_str(out, path)?;
    out.extend_from_slice(b",\"");
    out.extend_from_slice(position.as_bytes());
    out.extend_from_slice(b"\":");
    write_u64(out, e.first.offset)?;
    out.extend_from_slice(b"}\n");
    Ok(())
}

/// The CSV record of a distinct URN: key, URN, count, NID, path, first
/// position.
pub fn entry_csv(out: &mut Vec<u8>, e: &Entry<'_>, path: &str) -> io::Result<()> {
    let check_nid = !csv_appended(out, true, |out| out.extend_from_slice(e.key))?;
    out.push(b',');
    csv_appended(out, true, |out| e.raw.write_into(out))?;
    out.push(b',');
    write_u64(out, e.count)?;
    out.push(b',');
    csv_appended(out, check_nid, |out| out.extend_from_slice(e.nid()))?;
    out.push(b',');
    write_csv_field(out, path.as_bytes())?;
    out.push(b',');
    write_u64(out, e.first.offset)?;
    out.push(b'\n');
    Ok(())
}

/// The per-NID table of `scan --stats` and `dedup --stats`: a header and
/// one aligned row per NID (nid, class, occurrences, unique), in the order
/// of `nids`.
pub fn nid_table_text(out: &mut impl Write, nids: &NidStats, palette: Palette) -> io::Result<()> {
    // Every cell is padded before it is styled, so codes never shift a column.
    let nid_w = nids.rows().map(|s| s.nid.len()).max().unwrap_or(3).max(3);
    let class_w = 12; // "unregistered"
    let occ_w = nids.rows().map(|s| thousands_len(s.occurrences)).max().unwrap_or(0).max(14);
    let uniq_w = nids.rows().map(|s| thousands_len(s.unique)).max().unwrap_or(0).max(12);
    let header = format!("{:<nid_w$}  {:<class_w$}  {:>occ_w$}  {:>uniq_w$}", "nid", "class", "occurrences", "unique");
    writeln!(out, "{}", palette.paint(HEADER, &header))?;
    // A dataset can hold hundreds of thousands of NIDs: the rows are written
    // piece by piece, each class cell formatted once.
    let mut class_cells: HashMap<NidClass, String> = HashMap::new();
    for s in nids.rows() {
        let class = class_cells.entry(s.class).or_insert_with(|| {
            let name = s.class.as_str();
            palette.paint(color::nid_class(name), &format!("{name:<class_w$}")).to_string()
        });
        out.write_all(s.nid)?;
        pad(out, nid_w - s.nid.len() + 2)?;
        out.write_all(class.as_bytes())?;
        pad(out, 2 + occ_w - thousands_len(s.occurrences))?;
        write_thousands(out, s.occurrences)?;
        pad(out, 2 + uniq_w - thousands_len(s.unique))?;
        write_thousands(out, s.unique)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}

/// The per-NID table as CSV, for a spreadsheet: a header and one record per
/// NID, in the order of the text table. `scan --stats` leaves its totals
/// out (they have no place in these columns; text and JSON give them).
pub fn nid_table_csv(out: &mut impl Write, nids: &NidStats) -> io::Result<()> {
    writeln!(out, "nid,class,occurrences,unique")?;
    let (mut occurrences, mut unique) = (itoa::Buffer::new(), itoa::Buffer::new());
    for s in nids.rows() {
        let fields = [
            s.nid,
            s.class.as_str().as_bytes(),
            occurrences.format(s.occurrences).as_bytes(),
            unique.format(s.unique).as_bytes(),
        ];
        write_csv_record(out, &fields)?;
    }
    Ok(())
}

/// One NID's row as a JSON object (no line end): `{"nid":..,"class":..,
/// "occurrences":..,"unique":..}`, an element of `scan --stats`'s `nids`
/// and a line of `dedup --stats --format jsonl`.
pub fn nid_row_json(out: &mut impl Write, row: &NidRow<'_>) -> io::Result<()> {
    out.write_all(b"{\"nid\":")?;
    // NIDs are ASCII by both grammars; lossy only so that a broken table
    // cannot panic here.
    json_str(out, &String::from_utf8_lossy(row.nid))?;
    write!(out, ",\"class\":\"{}\",\"occurrences\":{},\"unique\":{}}}", row.class, row.occurrences, row.unique)
}

/// The part of the one JSON object of `scan --stats` and `dedup --stats`
/// after the counts each command has: `"invalid_kinds":{kind: n},
/// "nids":[row, ...]`, without the object's end (`scan` adds its time).
pub fn kinds_and_nids_json(out: &mut impl Write, kinds: &BTreeMap<ErrorKind, u64>, nids: &NidStats) -> io::Result<()> {
    out.write_all(b"\"invalid_kinds\":{")?;
    for (i, (kind, n)) in kinds.iter().enumerate() {
        let sep = if i > 0 { "," } else { "" };
        write!(out, "{sep}\"{}\":{n}", kind.as_str())?;
    }
    out.write_all(b"},\"nids\":[")?;
    for (i, row) in nids.rows().enumerate() {
        if i > 0 {
            out.write_all(b",")?;
        }
        nid_row_json(out, &row)?;
    }
    out.write_all(b"]")
}

/// Writes `n` in decimal. Output lines are printed by the million, and
/// `write!` with `{}` goes through the formatting machinery for every one
/// of them: on URN-dense text it was a third of a plain `scan`'s
/// instructions.
pub fn write_u64(out: &mut impl Write, n: u64) -> io::Result<()> {
    out.write_all(itoa::Buffer::new().format(n).as_bytes())
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Length of [`thousands`]`(n)`.
pub fn thousands_len(n: u64) -> usize {
    let digits = n.checked_ilog10().unwrap_or(0) as usize + 1;
    digits + (digits - 1) / 3
}

/// Writes [`thousands`]`(n)` without allocating.
pub fn write_thousands(out: &mut impl Write, n: u64) -> io::Result<()> {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(n).as_bytes();
    let mut text = [0u8; 26]; // 20 digits and 6 commas
    let mut at = 0;
    for (i, &d) in digits.iter().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            text[at] = b',';
            at += 1;
        }
        text[at] = d;
        at += 1;
    }
    out.write_all(&text[..at])
}

/// Writes `n` spaces.
pub fn pad(out: &mut impl Write, mut n: usize) -> io::Result<()> {
    const SPACES: &[u8; 64] = &[b' '; 64];
    while n > 0 {
        let k = n.min(SPACES.len());
        out.write_all(&SPACES[..k])?;
        n -= k;
    }
    Ok(())
}

/// A rejected candidate or invalid input as text output prints it (JSON
/// and CSV carry its bytes): invalid UTF-8 as U+FFFD and control and
/// invisible characters (those `urnscan::error::is_drawn` refuses: C0, DEL, C1,
/// bidi overrides, zero-width and combining characters) as spaces, so
/// that a record stays on one line and nothing reorders it. Most are
/// printable text and shown as they are, without a copy. Measured
/// (2026-11-28, 2-core KVM guest, `benches/ab.sh`, 7 rounds, medians):
/// `scan --invalid` of 60 MB where every other candidate is rejected 829
/// → 405 ms at two threads (with a `String` per record and `writeln!` for
/// the text line, as before), 256 MiB of dense text 112 → 85.
pub fn shown(candidate: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(candidate) {
        Ok(text) if text.chars().all(is_drawn) => Cow::Borrowed(text),
        _ => {
            let text = String::from_utf8_lossy(candidate);
            Cow::Owned(text.chars().map(|c| if is_drawn(c) { c } else { ' ' }).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn rejected_candidates_are_shown_on_one_line() {
        // Printable text as it is, borrowed.
        assert!(matches!(shown(b"urn:a:b and urn:"), Cow::Borrowed("urn:a:b and urn:")));
        assert!(matches!(shown("urn:x:\u{e9}t".as_bytes()), Cow::Borrowed("urn:x:\u{e9}t")));
        // Controls, C0, DEL and C1 (U+0085, NEL), become spaces; a byte that
        // is no UTF-8 becomes U+FFFD.
        assert_eq!(shown(b"urn:a:\x01b\xc2\x85c\xff\x7f\n"), "urn:a: b c\u{fffd}  ");
        // Bidi overrides, zero-width and combining characters too; CJK is text.
        assert_eq!(shown("urn:a:\u{202E}b\u{200B}\u{301}日".as_bytes()), "urn:a: b  日");
    }

    #[test]
    fn decimal_digits() {
        let mut out = Vec::new();
        for n in [0, 7, 9, 10, 99, 100, 1234567890, u64::from(u32::MAX), u64::MAX - 1, u64::MAX] {
            out.clear();
            write_u64(&mut out, n).unwrap();
            assert_eq!(out, n.to_string().as_bytes());
        }
        // Every power of ten and its neighbours.
        for p in 0..20 {
            let ten = 10u64.pow(p);
            for n in [ten - 1, ten, ten + 1] {
                out.clear();
                write_u64(&mut out, n).unwrap();
                assert_eq!(out, n.to_string().as_bytes());
            }
        }
    }

    #[test]
    fn grouped_digits_without_allocating_match_thousands() {
        for p in 0..20 {
            let ten = 10u64.pow(p);
            for n in [ten - 1, ten, ten + 1, u64::MAX] {
                let mut out = Vec::new();
                write_thousands(&mut out, n).unwrap();
                let want = thousands(n);
                assert_eq!(String::from_utf8(out).unwrap(), want);
                assert_eq!(thousands_len(n), want.len(), "{n}");
            }
        }
        assert_eq!(thousands(1234567), "1,234,567");
        let mut out = Vec::new();
        pad(&mut out, 130).unwrap();
        assert_eq!(out, vec![b' '; 130]);
    }

    /// The plain reference for [`any_byte`].
    fn any_byte_loop(s: &[u8], below: u8, set: &[u8], or_high: bool) -> bool {
        s.iter().any(|&b| b < below || set.contains(&b) || (or_high && b >= 0x80))
    }

    /// Every byte value at every position of every length up to 24 (tails
    /// of every length, the overlapping last word), on grounds of bytes
    /// that are hits of no rule and of bytes next to the limits, whose
    /// borrows would show a word-at-a-time check counting a byte wrongly.
    #[test]
    fn any_byte_finds_every_byte_a_loop_finds() {
        for ground in [b'a', 0x20, 0x21, 0x7f, 0x80, 0x23, 0x5d] {
            for len in 0..=24 {
                for at in 0..len {
                    for b in 0..=255u8 {
                        let mut s = vec![ground; len];
                        s[at] = b;
                        for (below, or_high) in [(0x20, true), (0x20, false), (0, false), (128, false)] {
                            let (json, csv) = (b"\"\\", b",\"\n\r");
                            assert_eq!(any_byte(&s, below, json, or_high), any_byte_loop(&s, below, json, or_high));
                            assert_eq!(any_byte(&s, below, csv, or_high), any_byte_loop(&s, below, csv, or_high));
                        }
                    }
                }
            }
        }
    }

    fn csv_field(field: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        write_csv_field(&mut out, field).unwrap();
        out
    }

    proptest! {
        #[test]
        fn any_byte_agrees_with_a_loop(s in prop::collection::vec(any::<u8>(), 0..80), below in 0u8..=128, or_high: bool) {
            let set = b",\"\\";
            prop_assert_eq!(any_byte(&s, below, set, or_high), any_byte_loop(&s, below, set, or_high));
        }

        /// `serde_json` is the reference: the same bytes, whether written
        /// as they are or escaped.
        #[test]
        fn json_strings_are_what_serde_json_writes(s in "(?s).{0,40}|[ -~]{0,40}", bytes in prop::collection::vec(any::<u8>(), 0..40)) {
            let mut out = Vec::new();
            json_str(&mut out, &s).unwrap();
            prop_assert_eq!(&out, &serde_json::to_vec(&s).unwrap());
            out = b"{".to_vec();
            prop_assert_eq!(json_appended(&mut out, true, |o| o.extend_from_slice(s.as_bytes())).unwrap(), !needs_json_escape(s.as_bytes(), true));
            prop_assert_eq!(&out[1..], &serde_json::to_vec(&s).unwrap()[..]);
            out.clear();
            json_appended(&mut out, true, |o| o.extend_from_slice(&bytes)).unwrap();
            prop_assert_eq!(out, serde_json::to_vec(&String::from_utf8_lossy(&bytes)).unwrap());
        }

        /// RFC 4180 §2: a field is quoted when it holds a comma, a quote or
        /// a line break, and its quotes are doubled.
        #[test]
        fn csv_fields_are_quoted_as_rfc_4180_says(field in prop::collection::vec(prop::sample::select(b"ab,\"\r\n\\ \x00\xff".to_vec()), 0..30)) {
            let special = field.iter().any(|b| b",\"\r\n".contains(b));
            let want = if special {
                let doubled: Vec<u8> = field.iter().flat_map(|&b| if b == b'"' { vec![b'"', b'"'] } else { vec![b] }).collect();
                [&b"\""[..], &doubled, b"\""].concat()
            } else {
                field.clone()
            };
            prop_assert_eq!(csv_field(&field), want.clone());
            let mut out = b"x,".to_vec();
            prop_assert_eq!(csv_appended(&mut out, true, |o| o.extend_from_slice(&field)).unwrap(), !special);
            prop_assert_eq!(&out[2..], &want[..]);
        }
    }

    /// Each of the four bytes becomes its two-character escape; every
    /// other byte (a non-UTF-8 one too) stays as it is.
    #[test]
    fn tsv_fields_escape_tab_newline_return_and_backslash() {
        let field = |bytes: &[u8]| {
            let mut out = Vec::new();
            write_tsv_field(&mut out, bytes).unwrap();
            out
        };
        assert_eq!(field(b"urn:ab:c"), b"urn:ab:c");
        assert_eq!(field(b"a\tb\nc\rd\\e"), br"a\tb\nc\rd\\e");
        assert_eq!(field(b"\t\t"), br"\t\t");
        assert_eq!(field(b"dir/bad\xff\xfe name,\"q\""), b"dir/bad\xff\xfe name,\"q\"");
        assert_eq!(field(b""), b"");
    }

    #[test]
    fn csv_quoting() {
        let record = |fields: &[&str]| {
            let mut out = Vec::new();
            let fields: Vec<&[u8]> = fields.iter().map(|f| f.as_bytes()).collect();
            write_csv_record(&mut out, &fields).unwrap();
            String::from_utf8(out).unwrap()
        };
        assert_eq!(record(&["urn:ab:c"]), "urn:ab:c\n");
        assert_eq!(record(&["urn:ab:c,d", "7"]), "\"urn:ab:c,d\",7\n");
        assert_eq!(record(&["a\"b", "", "x\ny"]), "\"a\"\"b\",,\"x\ny\"\n");
        // A lone quote: opened, doubled, closed (RFC 4180 §2, rule 7).
        assert_eq!(record(&["\"", "a\r"]), "\"\"\"\",\"a\r\"\n");
        assert_eq!(record(&[]), "\n");
    }

    #[test]
    fn separators() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
