//! A whole line judged as a URN (RFC 8141) from the bit maps of its span
//! ([`LineBits`]), a word at a time, instead of walked a byte at a time.
//!
//! [`line_parts`] answers "a URN, with these parts" or "ask the walk"; it
//! never rejects. So every error, kind and offset, still comes from
//! [`super::parse`], and the answer from the bits only has to agree with
//! `parse` on what it accepts: the same parts (a property test holds it to
//! that, and to accepting every URN line it is given).
//!
//! Each part is a run of one map, its length a `trailing_zeros`:
//! - the scheme is `urn:` in any case: one 4-byte compare, as in the walk;
//! - the NID is the run of letters, digits and `-` from byte 4: 2 to 32 of
//!   them, neither first nor last a `-`, followed by `:`; an upper-case
//!   letter in it (or in the scheme) is what the key lower-cases;
//! - the NSS is the run of `covered` bytes (NSS characters and the `%` of
//!   escapes; hex digits are NSS characters themselves) after that `:`, its
//!   first byte not `/`; an escape with a digit in `a`–`f` is what the key
//!   upper-cases;
//! - after it, `?+` starts an r-component (a run of `r_part`: `?` belongs
//!   to it unless `=` follows), `?=` a q-component and `#` an
//!   f-component (runs of `frag`), as the walk takes them: each but the
//!   f-component non-empty and starting with a `pchar`, the first `?=`
//!   ending an r-component.
//!
//! Anything else goes to the walk: a byte that no part may hold, a `%` in
//! the last two bytes (its digits would be past the line, where the maps'
//! escapes may look), RFC 2141.

use super::{Grammar, MAX_URN_LEN};
use crate::error::UrnError;
use crate::platform::simd::line_bits::{window, LineBits, WORDS};
use crate::urn::{Parts, Urn};

/// [`super::parse`]`(&span[start..end], grammar)`, accepted from `bits`
/// (the maps of `span`) when [`line_parts`] can tell.
#[inline]
pub(crate) fn parse_in_span<'a>(
    bits: &LineBits,
    span: &'a [u8],
    start: usize,
    end: usize,
    grammar: Grammar,
) -> Result<Urn<'a>, UrnError> {
    let text = &span[start..end];
    match grammar {
        Grammar::Rfc8141 => match line_parts(bits, span, start, end) {
            Some(parts) => Ok(Urn::from_parts(text, grammar, parts)),
            None => super::parse(text, grammar),
        },
        Grammar::Rfc2141 => super::parse(text, grammar),
    }
}

/// The parts of `span[start..end]` when it is a URN under RFC 8141; `None`
/// when it is not or the bits cannot tell (then [`super::parse`] must).
/// `bits` holds the maps of `span`.
#[inline]
pub(crate) fn line_parts(bits: &LineBits, span: &[u8], start: usize, end: usize) -> Option<Parts> {
    let text = span.get(start..end)?;
    let len = text.len();
    // "urn:ab:c" is the shortest URN.
    if !(8..=MAX_URN_LEN).contains(&len) || end > bits.len() || text[len - 1] == b'%' || text[len - 2] == b'%' {
        return None;
    }
    let scheme = u32::from_le_bytes([text[0], text[1], text[2], text[3]]);
    if scheme | 0x0020_2020 != u32::from_le_bytes(*b"urn:") {
        return None;
    }
    let nid = (window(&bits.ldh, start + 4) & low_bits(len - 4)).trailing_ones() as usize;
    if !(2..=32).contains(&nid) || text[4] == b'-' || text[3 + nid] == b'-' || text.get(4 + nid) != Some(&b':') {
        return None;
    }
    let upper_name = scheme != u32::from_le_bytes(*b"urn:") || window(&bits.upper, start + 4) & low_bits(nid) != 0;
    let line = Line { bits, text, start };
    let nss = 4 + nid + 1;
    if !line.starts_pchar(nss) {
        return None;
    }
    let nss_end = line.run(&bits.covered, nss);
    let mut parts = Parts {
        nid_end: (4 + nid) as u16,
        nss_end: nss_end as u16,
        end: len as u16,
        lower_hex: any_bit(&bits.lower_escape, start + nss, start + nss_end),
        upper_name,
        ..Parts::default()
    };
    let mut at = nss_end;
    if let Some((from, to)) = line.component(at, b'+', &bits.r_part)? {
        parts.r = Some((from as u16, to as u16));
        at = to;
    }
    if let Some((from, to)) = line.component(at, b'=', &bits.frag)? {
        parts.q = Some((from as u16, to as u16));
        at = to;
    }
    if text.get(at) == Some(&b'#') {
        parts.f = Some((at + 1) as u16);
        at = line.run(&bits.frag, at + 1);
    }
    (at == len).then_some(parts)
}

/// A line's text and the maps of its span; offsets are in the text.
struct Line<'a> {
    bits: &'a LineBits,
    text: &'a [u8],
    /// Where the text starts in the span.
    start: usize,
}

impl Line<'_> {
    /// Where the run of `map` from `from` stops: the first byte outside it,
    /// or the end of the text.
    #[inline(always)]
    fn run(&self, map: &[u64; WORDS], from: usize) -> usize {
        run_end(map, self.start + from, self.start + self.text.len()) - self.start
    }

    /// Whether `text[at]` may start an NSS or an r- or q-component: a
    /// `pchar` (an NSS character but `/`) or the `%` of an escape.
    #[inline(always)]
    fn starts_pchar(&self, at: usize) -> bool {
        at < self.text.len() && self.text[at] != b'/' && window(&self.bits.covered, self.start + at) & 1 != 0
    }

    /// The component that `?` and `mark` open at `at`: a `pchar`, then a
    /// run of `map`; its range. `Some(None)` when there is none here,
    /// `None` when the walk must judge.
    #[inline(always)]
    fn component(&self, at: usize, mark: u8, map: &[u64; WORDS]) -> Option<Option<(usize, usize)>> {
        if self.text.get(at) != Some(&b'?') || self.text.get(at + 1) != Some(&mark) {
            return Some(None);
        }
        self.starts_pchar(at + 2).then(|| Some((at + 2, self.run(map, at + 2))))
    }
}

/// The first byte at or after `from` whose bit in `map` is clear, or `end`.
#[inline(always)]
fn run_end(map: &[u64; WORDS], from: usize, end: usize) -> usize {
    let mut at = from;
    while at < end {
        let stops = !window(map, at);
        if stops != 0 {
            return (at + stops.trailing_zeros() as usize).min(end);
        }
        at += 64;
    }
    end
}

/// Whether any bit of `map` in `from..to` is set.
#[inline(always)]
fn any_bit(map: &[u64; WORDS], from: usize, to: usize) -> bool {
    let mut at = from;
    while at < to {
        if window(map, at) & low_bits(to - at) != 0 {
            return true;
        }
        at += 64;
    }
    false
}

/// The lowest `n` bits set (all 64 from `n` = 64 on).
#[inline(always)]
fn low_bits(n: usize) -> u64 {
    1u64.checked_shl(n as u32).unwrap_or(0).wrapping_sub(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::parse;
    use crate::platform::simd::class::ClassKernel;
    use crate::platform::simd::line_bits::SPAN;
    use proptest::prelude::*;

    /// `line` at `at` in a span of `filler` bytes, followed by `after`;
    /// the answer from the bits as a `Urn`, beside `parse`'s.
    fn both<'a>(
        span: &'a mut [u8],
        line: &[u8],
        at: usize,
        after: u8,
        kernel: ClassKernel,
    ) -> (Option<Urn<'a>>, Result<Urn<'a>, UrnError>) {
        let end = at + line.len();
        span[at..end].copy_from_slice(line);
        if end < span.len() {
            span[end] = after;
        }
        let span: &'a [u8] = span;
        let mut bits = LineBits::default();
        bits.fill_with(span, kernel);
        let text = &span[at..end];
        let fast = line_parts(&bits, span, at, end).map(|parts| Urn::from_parts(text, Grammar::Rfc8141, parts));
        // What `urnscan dedup` calls: `parse`'s answer, errors included.
        for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
            assert_eq!(parse_in_span(&bits, span, at, end, grammar), parse(text, grammar));
        }
        (fast, parse(text, Grammar::Rfc8141))
    }

    fn check(line: &[u8], at: usize, len: usize, after: u8) -> Result<(), TestCaseError> {
        for kernel in ClassKernel::available() {
            let mut span: Vec<u8> = (0..len).map(|i| b"%a1F\n /:"[i % 8]).collect();
            let (fast, walked) = both(&mut span, line, at, after, kernel);
            let shown = String::from_utf8_lossy(line);
            match (&fast, &walked) {
                (Some(f), Ok(w)) => prop_assert_eq!(f, w, "{:?}", shown),
                (Some(f), Err(e)) => prop_assert!(false, "{:?}: accepted as {} but {}", shown, f, e),
                // Every URN line is accepted from the bits, when what follows
                // it is what follows a line's text in `urnscan dedup`.
                (None, Ok(w)) if after.is_ascii_whitespace() => {
                    prop_assert!(false, "{:?}: {} left to the walk", shown, w)
                }
                (None, Ok(_)) => {}
                (None, Err(_)) => {}
            }
        }
        Ok(())
    }

    /// Lines near the grammar's edges: `urn:` in any case (or not quite),
    /// NIDs of 0 to 40 characters with hyphens, NSSs of NSS characters,
    /// escapes (some broken, some at the very end), components, `/` first,
    /// bytes that are no URN characters.
    fn line() -> impl Strategy<Value = Vec<u8>> {
        let scheme = prop_oneof![
            8 => prop::sample::select(vec![&b"urn:"[..], b"URN:", b"uRn:"]),
            1 => prop::sample::select(vec![&b"urn;"[..], b"urm:", b"ur:"]),
        ];
        let nid = prop_oneof![
            8 => prop::collection::vec(prop::sample::select(b"aZ09x".to_vec()), 2..6),
            1 => prop::collection::vec(prop::sample::select(b"aZ09-x".to_vec()), 0..40),
        ];
        // Pieces that keep a URN valid where they stand (most of them), and
        // pieces that break it or start a component.
        let pieces =
            |list: &str| prop::sample::select(list.split('|').map(|p| p.as_bytes().to_vec()).collect::<Vec<_>>());
        let valid = pieces("a|Z|0|/|:|@|-|.|~|!|$&'()*+,;=|%2f|%2F|%aB");
        let other = pieces("%|%4|%g0|?|?+|?=|#|=| |\u{e9}|\u{0}|<|\"");
        let nss = prop::collection::vec(prop_oneof![6 => valid, 1 => other], 0..30);
        (scheme, nid, prop::sample::select(vec![&b":"[..], b":", b":", b""]), nss).prop_map(|(s, n, colon, nss)| {
            let mut line = s.to_vec();
            line.extend(n);
            line.extend_from_slice(colon);
            nss.iter().for_each(|piece| line.extend_from_slice(piece));
            line
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        /// Wherever the line sits in its span, and whatever follows it, an
        /// answer from the bits is `parse`'s answer, and every URN gets one.
        #[test]
        fn the_answer_from_the_bits_is_the_walks(
            line in line(),
            at in 0usize..200,
            tail in 0usize..80,
            after in prop::sample::select(b"\n \r\t%aF0:=?#".to_vec()),
        ) {
            let len = (at + line.len() + tail).min(SPAN);
            prop_assume!(at + line.len() <= len);
            check(&line, at, len, after)?;
        }
    }

    #[test]
    fn lines_from_the_bits_and_what_they_leave_to_the_walk() {
        let cases: &[(&[u8], bool)] = &[
            (b"urn:isbn:0451450523", true),
            (b"URN:ISBN:0451450523", true),
            (b"urn:ab:c", true),
            (b"urn:a:b", false),
            (b"urn:isbn:a%2fb%2F", true),
            (b"urn:isbn:a%2", false),
            (b"urn:isbn:/a", false),
            (b"urn:isbn:a?+r", true),
            (b"urn:isbn:a#f", true),
            (b"urn:isbn:a#", true),
            (b"urn:isbn:a?+r?x?=q?+#f?", true),
            (b"urn:isbn:a?=q?+x#f", true),
            (b"urn:isbn:a?+?x", false),
            (b"urn:isbn:a?+/r", false),
            (b"urn:isbn:a?=/q", false),
            (b"urn:isbn:a?=#f", false),
            (b"urn:isbn:a?", false),
            (b"urn:isbn:a?+", false),
            (b"urn:isbn:a?=", false),
            (b"urn:isbn:a?x", false),
            (b"urn:-ab:c", false),
            (b"urn:ab-:c", false),
            (b"urn:abcdefghijklmnopqrstuvwxyz0123456:c", false),
            (b"urn:abcdefghijklmnopqrstuvwxyz012345:c", true),
            (b"urn:isbn", false),
            (b"urn:isbn:", false),
        ];
        for &(line, valid) in cases {
            for kernel in ClassKernel::available() {
                let mut span = vec![b'\n'; line.len() + 70];
                let (got, walked) = both(&mut span, line, 3, b'\n', kernel);
                assert_eq!(got.is_some(), valid, "{}", String::from_utf8_lossy(line));
                assert_eq!(walked.is_ok(), valid, "{}", String::from_utf8_lossy(line));
                if let Some(urn) = got {
                    assert_eq!(Ok(urn), walked);
                }
            }
        }
        // An NSS longer than a window, with escapes across its words.
        let mut long = b"urn:x-long:".to_vec();
        long.extend(std::iter::repeat_n(&b"ab%3c/"[..], 40).flatten());
        check(&long, 61, 400, b'\n').unwrap();
    }
}
