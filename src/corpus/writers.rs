//! Small writers: digits, hex, dates and cased words pushed onto a buffer
//! without `format!`.

use super::rng::Rng;
use super::spellings::{apply_case, Case};
use super::vocabulary::push_word;

/// `00` to `99`.
pub(super) const TWO_DIGITS: [[u8; 2]; 100] = two_digits();

const fn two_digits() -> [[u8; 2]; 100] {
    let mut out = [[0u8; 2]; 100];
    let mut i = 0;
    while i < 100 {
        out[i] = [b'0' + (i / 10) as u8, b'0' + (i % 10) as u8];
        i += 1;
    }
    out
}

const HEX_UPPER: &[u8; 16] = b"0123456789ABCDEF";
const HEX_LOWER: &[u8; 16] = b"0123456789abcdef";

/// The low `digits` hex digits of `v`.
pub(super) fn push_hex(out: &mut Vec<u8>, v: u64, digits: u32, upper: bool) {
    let table = if upper { HEX_UPPER } else { HEX_LOWER };
    for k in (0..digits).rev() {
        out.push(table[((v >> (4 * k)) & 15) as usize]);
    }
}

pub(super) fn push_dec(out: &mut Vec<u8>, n: u64) {
    out.extend_from_slice(itoa::Buffer::new().format(n).as_bytes());
}

/// The low `width` decimal digits of `n`, zero-padded.
pub(super) fn push_dec_padded(out: &mut Vec<u8>, n: u64, width: u32) {
    for k in (0..width).rev() {
        out.push(b'0' + (n / 10u64.pow(k) % 10) as u8);
    }
}

/// A word in lower case (70%), capitalised or upper case.
pub(super) fn push_cased_word(rng: &mut Rng, out: &mut Vec<u8>) {
    let start = out.len();
    push_word(rng, out);
    match rng.below(10) {
        0..=6 => {}
        7..=8 => out[start].make_ascii_uppercase(),
        _ => out[start..].make_ascii_uppercase(),
    }
}

/// `urn` in any ASCII case, mostly lower.
pub(super) fn push_scheme(rng: &mut Rng, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(b"urn");
    if rng.percent(30) {
        apply_case(rng, &mut out[start..], Case::Mixed);
    }
}

/// A 33-character LDH string: one too many for a NID. It has no `u`, so it
/// cannot spell another `urn`.
pub(super) fn push_long_nid(rng: &mut Rng, out: &mut Vec<u8>) {
    const NO_U: &[u8] = b"abcdefghijklmnopqrstvwxyz0123456789-";
    out.push(rng.pick(b"abcdefghijklmnopqrstvwxyz"));
    for _ in 1..33 {
        out.push(rng.pick(NO_U));
    }
}

/// `YYYY-MM-DD` of a day counted from 1970-01-01 (the civil-from-days
/// algorithm of H. Hinnant).
pub(super) fn format_date(day: u64) -> [u8; 10] {
    let z = day as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let mut v = Vec::with_capacity(10);
    push_dec_padded(&mut v, y as u64, 4);
    v.push(b'-');
    push_dec_padded(&mut v, m as u64, 2);
    v.push(b'-');
    push_dec_padded(&mut v, d as u64, 2);
    let mut date = [0u8; 10];
    date.copy_from_slice(&v);
    date
}

/// Bytes this module wrote, known to be UTF-8 (URNs and keys are ASCII).
pub(super) fn ascii(bytes: &[u8]) -> &str {
    std::str::from_utf8(bytes).unwrap_or_default()
}
