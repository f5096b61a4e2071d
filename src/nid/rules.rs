//! Namespace rules: what a namespace's own RFC declares equivalent, on top
//! of RFC 8141 (`--ns-rules` of `urnscan scan` and `urnscan dedup`).
//!
//! Each rule is a function `key -> key` over an RFC 8141 key (`urn:`, the
//! lower-case NID, `:`, the NSS), in place, that recognises its own NID and
//! leaves other keys alone. Because a rule sees only the RFC 8141 key, it
//! can merge classes RFC 8141 keeps apart but never split one it merges
//! (RFC 8141 §3); and none changes a key's length, so a key can be rewritten
//! where it lies. A new rule is a function here, called from
//! [`apply_ns_rules`].

/// Applies every namespace rule to an RFC 8141 key (`urn:`, the lower-case
/// NID, `:`, the NSS), in place. Each rule recognises its own NID and
/// leaves other keys alone; none changes a key's length.
///
/// ```
/// let mut key = b"urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6".to_vec();
/// urnscan::nid::rules::apply_ns_rules(&mut key);
/// assert_eq!(key, b"urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6");
/// ```
pub fn apply_ns_rules(key: &mut [u8]) {
    uuid_rule(key);
    ietf_rule(key);
}

/// `uuid` (RFC 4122 §3): "The hexadecimal values "a" through "f" are output
/// as lower case characters and are case insensitive on input." When the
/// NSS of a `urn:uuid:` key is a well-formed UUID string (8-4-4-4-12
/// hexadecimal digits), its letters are lower-cased; any other NSS is left
/// as it is, since the RFC says nothing about it.
pub fn uuid_rule(key: &mut [u8]) {
    const PREFIX: &[u8] = b"urn:uuid:";
    if key.starts_with(PREFIX) && is_uuid_string(&key[PREFIX.len()..]) {
        key[PREFIX.len()..].make_ascii_lowercase();
    }
}

/// The RFC 4122 §3 string form: 36 characters, hyphens at 8, 13, 18, 23,
/// hexadecimal digits elsewhere.
fn is_uuid_string(nss: &[u8]) -> bool {
    nss.len() == 36
        && nss.iter().enumerate().all(|(i, b)| match i {
            8 | 13 | 18 | 23 => *b == b'-',
            _ => b.is_ascii_hexdigit(),
        })
}

/// `ietf` (RFC 2648 §2): the NSS grammar is ABNF whose sub-namespaces are
/// the quoted literals `"rfc:"`, `"fyi:"`, `"std:"`, `"bcp:"` (each followed
/// by `1*DIGIT`), `"id:"` and `"mtg:"` (each followed by
/// `1*(DIGIT / ALPHA / "-")`), and ABNF literals are case-insensitive
/// (RFC 2234 §2.3). So when a `urn:ietf:` NSS matches one of these
/// productions, its sub-namespace token is lower-cased: `urn:ietf:RFC:2648`
/// is `urn:ietf:rfc:2648`. Nothing else changes: the draft and meeting
/// names keep their case, numbers keep their leading zeros, and other
/// sub-namespaces (`params`, RFC 3553) are left alone.
pub fn ietf_rule(key: &mut [u8]) {
    const PREFIX: &[u8] = b"urn:ietf:";
    if !key.starts_with(PREFIX) {
        return;
    }
    let nss = &mut key[PREFIX.len()..];
    let Some(colon) = nss.iter().position(|&b| b == b':') else {
        return;
    };
    let (token, rest) = nss.split_at_mut(colon);
    let rest = &rest[1..];
    let numeric = |s: &[u8]| !s.is_empty() && s.iter().all(u8::is_ascii_digit);
    let string = |s: &[u8]| !s.is_empty() && s.iter().all(|b| b.is_ascii_alphanumeric() || *b == b'-');
    let lower: [u8; 3] = match token.len() {
        2 | 3 => {
            let mut t = [0u8; 3];
            t[..token.len()].copy_from_slice(token);
            t.make_ascii_lowercase();
            t
        }
        _ => return,
    };
    let matches = match &lower[..token.len()] {
        b"rfc" | b"fyi" | b"std" | b"bcp" => numeric(rest),
        b"id" | b"mtg" => string(rest),
        _ => false,
    };
    if matches {
        token.make_ascii_lowercase();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::{parse, Grammar};

    fn rule(f: fn(&mut [u8]), key: &str) -> String {
        let mut k = key.as_bytes().to_vec();
        f(&mut k);
        String::from_utf8(k).unwrap()
    }

    /// RFC 8141 key of a line, as `dedup` computes it before any rule.
    fn key8141(s: &str) -> String {
        parse(s.as_bytes(), Grammar::Rfc8141).unwrap().key().into_owned()
    }

    #[test]
    fn uuid_rule_follows_rfc_4122() {
        // RFC 4122 §3 example, and the same UUID in upper case (hex is
        // "case insensitive on input").
        let lower = "urn:uuid:f81d4fae-7dec-11d0-a765-00a0c91e6bf6";
        assert_eq!(rule(uuid_rule, lower), lower);
        assert_eq!(rule(uuid_rule, &key8141("URN:UUID:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6")), lower);
        assert_eq!(rule(uuid_rule, &key8141("urn:uuid:F81d4FaE-7DEC-11d0-A765-00a0C91E6BF6")), lower);
        // Not the 8-4-4-4-12 string form: the RFC says nothing, so nothing changes.
        for other in [
            "urn:uuid:F81D4FAE7DEC11D0A76500A0C91E6BF6",
            "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF",
            "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6X",
            "urn:uuid:G81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
            "urn:uuid:F81D4FAE:7DEC-11D0-A765-00A0C91E6BF6",
            "urn:uuidx:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
            "urn:example:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
        ] {
            assert_eq!(rule(uuid_rule, other), other);
        }
    }

    #[test]
    fn ietf_rule_follows_rfc_2648() {
        // RFC 2648 §3 example; the sub-namespace literal in any case.
        assert_eq!(rule(ietf_rule, "urn:ietf:rfc:2648"), "urn:ietf:rfc:2648");
        assert_eq!(rule(ietf_rule, &key8141("URN:IETF:RFC:2648")), "urn:ietf:rfc:2648");
        assert_eq!(rule(ietf_rule, "urn:ietf:Std:66"), "urn:ietf:std:66");
        assert_eq!(rule(ietf_rule, "urn:ietf:BCP:14"), "urn:ietf:bcp:14");
        assert_eq!(rule(ietf_rule, "urn:ietf:fYi:4"), "urn:ietf:fyi:4");
        // draft-nss and mtg-nss: the token folds, the string keeps its case.
        assert_eq!(rule(ietf_rule, "urn:ietf:ID:ietf-urn-ietf-06"), "urn:ietf:id:ietf-urn-ietf-06");
        assert_eq!(rule(ietf_rule, "urn:ietf:MTG:41-URN"), "urn:ietf:mtg:41-URN");
        // Leading zeros are not dropped (the RFC does not say so).
        assert_eq!(rule(ietf_rule, "urn:ietf:RFC:02648"), "urn:ietf:rfc:02648");
        // Not one of the productions: left alone.
        for other in [
            "urn:ietf:RFC:26x48",
            "urn:ietf:RFC:",
            "urn:ietf:RFC",
            "urn:ietf:ID:draft_x",
            "urn:ietf:ID:a:b",
            "urn:ietf:Params:xml:ns:xmpp-tls",
            "urn:ietf:RFCS:1",
            "urn:example:RFC:2648",
            "urn:ietf:R:1",
        ] {
            assert_eq!(rule(ietf_rule, other), other);
        }
    }

    #[test]
    fn rules_only_merge_and_are_idempotent() {
        let spellings = [
            "urn:uuid:F81D4FAE-7DEC-11D0-A765-00A0C91E6BF6",
            "URN:UUID:f81d4fae-7dec-11d0-a765-00a0c91e6bf6?=x",
            "urn:IETF:RFC:2648#sec",
            "urn:ietf:rfc:2648",
            "urn:example:A%2cb",
        ];
        for s in spellings {
            let k = key8141(s);
            let once = rule(apply_ns_rules, &k);
            assert_eq!(rule(apply_ns_rules, &once), once, "{s}");
            // Only the NSS's letter case may change.
            assert!(once.eq_ignore_ascii_case(&k), "{s}");
            let nss_start = 5 + k[4..].find(':').unwrap();
            assert_eq!(once[..nss_start], k[..nss_start], "{s}");
        }
    }
}
