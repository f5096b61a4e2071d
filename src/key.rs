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

use crate::platform::simd::class::ClassRun;

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

/// The key of `name` (`urn:NID:NSS`, already validated, no components).
pub(crate) fn key_bytes(name: &[u8], fixes: Fixes) -> Cow<'_, [u8]> {
    if !fixes.name && !fixes.hex {
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

#[cfg(test)]
mod tests {
    use crate::{parse, Grammar};
    use std::borrow::Cow;

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
    fn write_key_appends() {
        let mut buf = b"x".to_vec();
        parse(b"Urn:Ab:c%2f", Grammar::Rfc8141).unwrap().write_key(&mut buf);
        assert_eq!(buf, b"xurn:ab:c%2F");
    }
}
