//! URN-equivalence keys (RFC 8141 §3; RFC 2141 §5).
//!
//! Two URNs are equivalent when their keys are equal. The key is `urn:`,
//! the NID in lower case, `:`, then the NSS with the two hex digits of every
//! percent-encoding in upper case. Nothing is decoded (`%2C` and `,` stay
//! different), and r-, q- and f-components play no part.
//!
//! Most URNs in the wild are already written in key form, so the check comes
//! first and the common case returns the input slice itself: no allocation.

use std::borrow::Cow;

use crate::grammar::Grammar;
use crate::platform::simd::class::ClassRun;
use crate::platform::simd::marks::Marks;

/// What the key of a validated `urn:NID:NSS` has to change, as the grammar
/// saw it while walking.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Fixes {
    /// Index of the ":" after the NID.
    pub nid_end: usize,
    /// The scheme or the NID has an upper-case letter.
    pub name: bool,
    /// An escape in the NSS has a lower-case hex digit.
    pub hex: bool,
}

impl Fixes {
    /// Whether the name already is the key.
    pub fn none(&self) -> bool {
        !self.name && !self.hex
    }
}

/// Where the assigned name and the NID of a URN end and what its key must
/// fix, as the validating walk found them ([`crate::Urn`]'s parts): the
/// scanner keeps one beside each URN event, six bytes, so that the key
/// table's first phase gets [`key_shape`]'s answer without reading the
/// bytes again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct KeyShape {
    /// Length of `urn:NID:NSS`, the start of the URN.
    pub name_len: u16,
    /// Index of the ":" after the NID.
    pub nid_end: u16,
    /// [`Fixes::name`].
    pub name: bool,
    /// [`Fixes::hex`].
    pub hex: bool,
}

impl KeyShape {
    /// The assigned name of `urn` and its fix-ups, as [`key_shape`] gives
    /// them for the bytes the shape was taken from. The bytes may have
    /// changed since (a file mapping being rewritten), so only the shape's
    /// bounds are trusted: `None` when they no longer fit `urn`, and other
    /// damage yields a key that the caller must check before keeping it.
    #[inline]
    pub fn apply(self, urn: &[u8]) -> Option<(&[u8], Fixes)> {
        let name = urn.get(..usize::from(self.name_len))?;
        let nid_end = usize::from(self.nid_end);
        // `write_key` reads `urn:`, the NID and at least the ":" after it.
        (4 <= nid_end && nid_end < name.len()).then_some((name, Fixes { nid_end, name: self.name, hex: self.hex }))
    }
}

/// The key of `name` (`urn:NID:NSS`, already validated, no components).
pub(crate) fn key_bytes(name: &[u8], fixes: Fixes) -> Cow<'_, [u8]> {
    if fixes.none() {
        Cow::Borrowed(name)
    } else {
        let mut out = Vec::with_capacity(name.len());
        write_key(name, fixes, &mut out);
        Cow::Owned(out)
    }
}

/// Appends the key of `name` to `out`: one bulk copy, then only the fix-ups
/// the grammar found necessary (most URNs need none).
pub(crate) fn write_key(name: &[u8], fixes: Fixes, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(name);
    let key = &mut out[start..];
    if fixes.name {
        key[..4].copy_from_slice(b"urn:");
        // NID bytes are letters, digits and "-": of those only upper-case
        // letters lack 0x20, so setting it is an exact lower-casing.
        for b in &mut key[4..fixes.nid_end] {
            *b |= 0x20;
        }
    }
    if fixes.hex {
        ClassRun::new().upper_case_escapes(name, key, fixes.nid_end + 1);
    }
}

/// The key of `urn`, a whole URN already validated under `grammar` (as the
/// scanner reports them), without validating it again; see [`key_shape`].
/// Allocates when the key is not the URN's own start: for one key at a
/// time; many go through [`key_shape`] and [`write_key`] into one buffer.
/// (The tests' reference for those two.)
#[cfg(test)]
pub(crate) fn key_of_valid(urn: &[u8], grammar: Grammar) -> Option<Cow<'_, [u8]>> {
    key_shape(urn, grammar).map(|(name, fixes)| key_bytes(name, fixes))
}

/// The assigned name of `urn`, a whole URN already validated under
/// `grammar`, and the fix-ups its key needs, found without validating it
/// again: the NID ends at the first `:` after `urn:`, and under RFC 8141
/// the assigned name ends at the first `?` or `#` (neither can occur in an
/// NSS); RFC 2141 has no components, so there the name is the whole URN.
/// The fix-ups are found by looking at the scheme, the NID and the digits
/// after each `%`.
///
/// The bytes may have changed since they were validated (a file mapping
/// being rewritten), so nothing here trusts them: `None` when they no longer
/// have the shape the key needs. Other damage yields a key that the caller
/// must check before keeping it.
///
/// URNs of up to 64 bytes ([`MARKS_LEN`](crate::platform::simd::marks::MARKS_LEN))
/// are read once, as bit masks ([`Marks`]); longer ones with `memchr`
/// ([`key_shape_searched`], which the tests also take as the reference).
pub(crate) fn key_shape(urn: &[u8], grammar: Grammar) -> Option<(&[u8], Fixes)> {
    match Marks::of(urn) {
        Some(marks) => key_shape_marked(urn, grammar, &marks),
        None => key_shape_searched(urn, grammar),
    }
}

/// [`key_shape`] from the marks of `urn` (at most 64 bytes), with the
/// searches of [`key_shape_searched`] as bit arithmetic.
fn key_shape_marked<'u>(urn: &'u [u8], grammar: Grammar, marks: &Marks) -> Option<(&'u [u8], Fixes)> {
    // Bit i of below(n) is set for every i < n.
    let below = |n: usize| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let name_end = match grammar {
        Grammar::Rfc8141 if marks.name_end != 0 => marks.name_end.trailing_zeros() as usize,
        _ => urn.len(),
    };
    let in_name = below(name_end);
    let colons = marks.colon & in_name & !below(4);
    if colons == 0 {
        return None;
    }
    let nid_end = colons.trailing_zeros() as usize;
    let percents = marks.percent & in_name & !below(nid_end + 1);
    // Every "%" needs its two digits inside the name: p + 2 < name_end.
    if percents & !(in_name >> 2) != 0 {
        return None;
    }
    let lower_hex = (percents << 1 | percents << 2) & marks.lower_hex != 0;
    let upper_nid = marks.upper & below(nid_end) & !below(4) != 0;
    let upper_name = &urn[..4] != b"urn:" || upper_nid;
    Some((&urn[..name_end], Fixes { nid_end, name: upper_name, hex: lower_hex }))
}

/// [`key_shape`] with three `memchr` searches, for URNs of any length.
fn key_shape_searched(urn: &[u8], grammar: Grammar) -> Option<(&[u8], Fixes)> {
    let name_end = match grammar {
        Grammar::Rfc8141 => memchr::memchr2(b'?', b'#', urn).unwrap_or(urn.len()),
        Grammar::Rfc2141 => urn.len(),
    };
    let name = &urn[..name_end];
    let nid_end = 4 + memchr::memchr(b':', name.get(4..)?)?;
    let nss = &name[nid_end + 1..];
    // One pass over the escapes: every "%" must have its two digits inside
    // the name, and any lower-case digit means the key must fix it.
    let mut lower_hex = false;
    for p in memchr::memchr_iter(b'%', nss) {
        let digits = nss.get(p + 1..p + 3)?;
        lower_hex |= digits.iter().any(|b| matches!(b, b'a'..=b'f'));
    }
    let upper_name = &name[..4] != b"urn:" || name[4..nid_end].iter().any(u8::is_ascii_uppercase);
    Some((name, Fixes { nid_end, name: upper_name, hex: lower_hex }))
}

#[cfg(test)]
mod tests {
    use crate::{parse, Grammar};
    use std::borrow::Cow;

    proptest::proptest! {
        /// The shape read from marks equals the shape searched for, on any
        /// bytes (validated or damaged) up to and past the marks' 64, under
        /// both grammars.
        #[test]
        fn marked_shapes_equal_searched_shapes(
            head in proptest::sample::select(vec!["urn:", "URN:", "uRn:", "urn", "urx:", ""]),
            tail in proptest::collection::vec(proptest::sample::select(b"abfgAFZ09-:%?#/.\x00\x80".to_vec()), 0..80),
        ) {
            let mut urn = head.as_bytes().to_vec();
            urn.extend_from_slice(&tail);
            for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
                let got = super::key_shape(&urn, grammar).map(|(n, f)| (n.len(), f.nid_end, f.name, f.hex));
                let want = super::key_shape_searched(&urn, grammar).map(|(n, f)| (n.len(), f.nid_end, f.name, f.hex));
                proptest::prop_assert_eq!(got, want, "{:?}", String::from_utf8_lossy(&urn));
            }
        }
    }

    fn key(s: &str) -> String {
        parse(s.as_bytes(), Grammar::Rfc8141).unwrap().key().into_owned()
    }

    #[test]
    fn key_form_is_borrowed() {
        let urn = parse(b"urn:isbn:0451450523?+r#f", Grammar::Rfc8141).unwrap();
        assert!(matches!(urn.key(), Cow::Borrowed("urn:isbn:0451450523")));
        let urn = parse(b"urn:ex:a%2Cb", Grammar::Rfc8141).unwrap();
        assert!(matches!(urn.key(), Cow::Borrowed(_)));
    }

    #[test]
    fn normalises_scheme_nid_and_hex_only() {
        assert_eq!(key("URN:EXAMPLE:A%2cB%3a"), "urn:example:A%2CB%3A");
        // "%" escapes are never decoded, and NSS letters keep their case.
        assert_eq!(key("urn:example:%41"), "urn:example:%41");
        assert_ne!(key("urn:example:%41"), key("urn:example:A"));
        assert_ne!(key("urn:example:a"), key("urn:example:A"));
    }

    #[test]
    fn key_of_valid_equals_the_parsed_key() {
        use super::key_of_valid;
        let cases: [(&str, Grammar); 6] = [
            ("URN:EX:a%2cb?+r?=q#f", Grammar::Rfc8141),
            ("urn:ex:a#", Grammar::Rfc8141),
            ("urn:Ex-1:a/b:c", Grammar::Rfc8141),
            ("urn:ex:a?b#c%2f", Grammar::Rfc2141),
            ("Urn:AB:x%aa", Grammar::Rfc2141),
            ("urn:isbn:0451450523", Grammar::Rfc8141),
        ];
        for (text, grammar) in cases {
            let urn = parse(text.as_bytes(), grammar).unwrap();
            assert_eq!(key_of_valid(text.as_bytes(), grammar).as_deref(), Some(urn.key().as_bytes()), "{text}");
        }
    }

    #[test]
    fn key_of_valid_never_panics_on_changed_bytes() {
        use super::key_of_valid;
        // No NID end, or a "%" without its two digits: no key.
        for text in ["", "urn", "urn:", "urn:ab", "urn:ab:c%", "urn:ab:c%4", "urn:ab:%"] {
            for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
                assert_eq!(key_of_valid(text.as_bytes(), grammar), None, "{text:?}");
            }
        }
        // Other damage gives some key (which callers check again), never a panic.
        for text in ["\0\0\0\0:ab:c", "urn::", "urn:?:", "urn:a#:%%%", "\u{e9}\u{e9}:x:y"] {
            for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
                let _ = key_of_valid(text.as_bytes(), grammar);
            }
        }
    }

    #[test]
    fn key_shape_applies_only_where_it_fits() {
        use super::KeyShape;
        let shape = KeyShape { name_len: 8, nid_end: 6, name: true, hex: false };
        let (name, fixes) = shape.apply(b"URN:ab:c?+r").unwrap();
        assert_eq!((name, fixes.nid_end, fixes.name, fixes.hex), (&b"URN:ab:c"[..], 6, true, false));
        // Bytes that shrank below the name, and shapes no name has: none.
        assert!(shape.apply(b"URN:ab:").is_none());
        assert!(KeyShape { nid_end: 3, ..shape }.apply(b"URN:ab:c").is_none());
        assert!(KeyShape { nid_end: 8, ..shape }.apply(b"URN:ab:c").is_none());
    }

    #[test]
    fn write_key_appends() {
        let mut buf = b"x".to_vec();
        parse(b"Urn:Ab:c%2f", Grammar::Rfc8141).unwrap().write_key(&mut buf);
        assert_eq!(buf, b"xurn:ab:c%2F");
    }
}
