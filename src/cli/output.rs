//! Output helpers shared by the subcommands: JSON string writing and error
//! classification. A new output format starts here.

use std::io::{self, Write};

/// Writes `s` as a JSON string literal (quotes and escapes included).
pub fn json_str(out: &mut impl Write, s: &str) -> io::Result<()> {
    serde_json::to_writer(&mut *out, s).map_err(io::Error::from)
}

/// Writes `Some(s)` as a JSON string and `None` as `null`.
pub fn json_opt(out: &mut impl Write, s: Option<&str>) -> io::Result<()> {
    match s {
        Some(s) => json_str(out, s),
        None => out.write_all(b"null"),
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

fn write_csv_field(out: &mut impl Write, field: &[u8]) -> io::Result<()> {
    if !field.iter().any(|b| matches!(b, b',' | b'"' | b'\n' | b'\r')) {
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

/// The NID of an equivalence key (`urn:NID:NSS`), already lower-cased.
pub fn nid_of_key(key: &str) -> &str {
    // Cut at an ASCII ':' (or the end), so still UTF-8.
    std::str::from_utf8(nid_bytes_of_key(key.as_bytes())).unwrap_or("")
}

/// [`nid_of_key`] on the key's bytes, as the key table holds them.
pub fn nid_bytes_of_key(key: &[u8]) -> &[u8] {
    let rest = key.get(4..).unwrap_or_default();
    rest.split(|&b| b == b':').next().unwrap_or_default()
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

#[cfg(test)]
mod tests {
    use super::*;

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
    fn separators_and_nids() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1000), "1,000");
        assert_eq!(thousands(1234567), "1,234,567");
        assert_eq!(nid_of_key("urn:isbn:123:4"), "isbn");
        assert_eq!(nid_of_key("urn:x-y"), "x-y");
        assert_eq!(nid_of_key("urn"), "");
        assert_eq!(nid_bytes_of_key(b"urn:nbn:de:1"), b"nbn");
    }
}
