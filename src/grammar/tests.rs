//! Table tests of the grammar, written from RFC 8141 §2–3, RFC 2141 §2–6
//! and the decisions in the crate docs. Offsets follow the rule in
//! `error.rs`: the first byte after the longest viable prefix.

use super::*;
use crate::ErrorKind::*;

fn err(input: &str, g: Grammar) -> (ErrorKind, usize) {
    match parse(input.as_bytes(), g) {
        Ok(u) => panic!("{input:?} parsed as {u:?}"),
        Err(e) => (e.kind(), e.offset()),
    }
}

fn ok(input: &str, g: Grammar) -> Urn<'_> {
    parse(input.as_bytes(), g).unwrap_or_else(|e| panic!("{input:?}: {}", e.render(input.as_bytes())))
}

const R8: Grammar = Grammar::Rfc8141;
const R2: Grammar = Grammar::Rfc2141;

#[test]
fn rfc8141_section_3_2_examples() {
    let same = [
        "urn:example:a123,z456",
        "URN:example:a123,z456",
        "urn:EXAMPLE:a123,z456",
        "urn:example:a123,z456?+abc",
        "urn:example:a123,z456?=xyz",
        "urn:example:a123,z456#789",
    ];
    for s in same {
        assert_eq!(ok(s, R8).key(), "urn:example:a123,z456", "{s}");
    }
    let slashes = ["urn:example:a123,z456/foo", "urn:example:a123,z456/bar", "urn:example:a123,z456/baz"];
    let keys: Vec<_> = slashes.iter().map(|s| ok(s, R8).key().into_owned()).collect();
    assert_eq!(keys, slashes);
    let pct = ["urn:example:a123%2Cz456", "URN:EXAMPLE:a123%2cz456"];
    assert_eq!(ok(pct[0], R8).key(), ok(pct[1], R8).key());
    assert_eq!(ok(pct[0], R8).key(), "urn:example:a123%2Cz456");
    for s in ["urn:example:A123,z456", "urn:example:a123,Z456", "urn:example:%D0%B0123,z456"] {
        assert_ne!(ok(s, R8).key(), "urn:example:a123,z456", "{s}");
    }
}

#[test]
fn rfc2141_section_6_examples() {
    let k: Vec<String> = [
        "URN:foo:a123,456",
        "urn:foo:a123,456",
        "urn:FOO:a123,456",
        "urn:foo:A123,456",
        "urn:foo:a123%2C456",
        "URN:FOO:a123%2c456",
    ]
    .iter()
    .map(|s| ok(s, R2).key().into_owned())
    .collect();
    assert!(k[0] == k[1] && k[1] == k[2]);
    assert!(k[3] != k[0] && k[3] != k[4]);
    assert_eq!(k[4], k[5]);
    assert_ne!(k[4], k[0]);
}

#[test]
fn parts_and_display() {
    let s = "Urn:Example:a/b?+r?x?=q?+y#f?/";
    let u = ok(s, R8);
    assert_eq!(u.scheme(), "Urn");
    assert_eq!(u.nid(), "Example");
    assert_eq!(u.nss(), "a/b");
    // The first "?=" ends the r-component; "?+" after it belongs to q.
    assert_eq!(u.r_component(), Some("r?x"));
    assert_eq!(u.q_component(), Some("q?+y"));
    assert_eq!(u.f_component(), Some("f?/"));
    assert_eq!(u.to_string(), s);
    assert_eq!(&s[u.nid_range()], "Example");
    assert_eq!(&s[u.nss_range()], "a/b");
    assert_eq!(&s[u.r_range().unwrap()], "r?x");
    assert_eq!(&s[u.q_range().unwrap()], "q?+y");
    assert_eq!(&s[u.f_range().unwrap()], "f?/");
    assert_eq!(u.assigned_name(), "Urn:Example:a/b");

    let u = ok("urn:ab:c#", R8);
    assert_eq!(u.f_component(), Some(""));
    assert_eq!((u.r_component(), u.q_component()), (None, None));
    let u = ok("urn:ab:c", R8);
    assert_eq!(u.f_component(), None);
}

#[test]
fn one_case_per_error_kind_rfc8141() {
    let cases: &[(&str, ErrorKind, usize)] = &[
        ("", NotUrn, 0),
        ("urx:ab:c", NotUrn, 2),
        ("ur", NotUrn, 2),
        ("urn", NotUrn, 3),
        ("urn::c", NidEmpty, 4),
        ("urn:", NidEmpty, 4),
        ("urn:a:c", NidTooShort, 5),
        ("urn:a_b:c", NidBadChar, 5),
        ("urn:-ab:c", NidLeadingHyphen, 4),
        ("urn:ab-:c", NidTrailingHyphen, 7),
        ("urn:isbn", MissingNssColon, 8),
        ("urn:ab:", NssEmpty, 7),
        ("urn:ab:?+r", NssEmpty, 7),
        ("urn:ab:#f", NssEmpty, 7),
        ("urn:ab:c^", NssBadChar, 8),
        ("urn:ab:c d", NssBadChar, 8),
        ("urn:ab:/c", NssLeadingSlash, 7),
        ("urn:ab:c%", BadPercentEncoding, 9),
        ("urn:ab:c%4", BadPercentEncoding, 10),
        ("urn:ab:c%4g", BadPercentEncoding, 10),
        ("urn:ab:c%g4", BadPercentEncoding, 9),
        ("urn:ab:c?", LoneQuestionMark, 9),
        ("urn:ab:c?x", LoneQuestionMark, 9),
        ("urn:ab:c?+", EmptyRComponent, 10),
        ("urn:ab:c?+?=q", EmptyRComponent, 10),
        ("urn:ab:c?+#f", EmptyRComponent, 10),
        ("urn:ab:c?=", EmptyQComponent, 10),
        ("urn:ab:c?=#f", EmptyQComponent, 10),
        ("urn:ab:c?+r^", ComponentBadChar, 11),
        ("urn:ab:c?=q q", ComponentBadChar, 11),
        ("urn:ab:c#f#", ComponentBadChar, 10),
        ("urn:ab:c\u{e9}", NonAscii, 8),
        ("urn:\u{e9}b:c", NonAscii, 4),
        ("urn:ab:c?\u{e9}", NonAscii, 9),
    ];
    for &(input, kind, offset) in cases {
        assert_eq!(err(input, R8), (kind, offset), "{input:?}");
    }
}

#[test]
fn one_case_per_error_kind_rfc2141() {
    let cases: &[(&str, ErrorKind, usize)] = &[
        ("urx:a:b", NotUrn, 2),
        ("urn::b", NidEmpty, 4),
        ("urn:-a:b", NidLeadingHyphen, 4),
        ("urn:urn:b", NidReservedUrn, 7),
        ("urn:URN:b", NidReservedUrn, 7),
        ("urn:a", MissingNssColon, 5),
        ("urn:a:", NssEmpty, 6),
        ("urn:a:b~", NssBadChar, 7),
        ("urn:a:b&", NssBadChar, 7),
        ("urn:a:%zz", BadPercentEncoding, 7),
        ("urn:a:b%", BadPercentEncoding, 8),
        ("urn:a:b\u{ff}", NonAscii, 7),
    ];
    for &(input, kind, offset) in cases {
        assert_eq!(err(input, R2), (kind, offset), "{input:?}");
    }
}

#[test]
fn nid_length_boundaries() {
    let nid = |n: usize| "a".repeat(n);
    for (n, v8, v2) in [(1, false, true), (2, true, true), (31, true, true), (32, true, true), (33, false, false)] {
        let s = format!("urn:{}:x", nid(n));
        assert_eq!(parse(s.as_bytes(), R8).is_ok(), v8, "8141 NID of {n}");
        assert_eq!(parse(s.as_bytes(), R2).is_ok(), v2, "2141 NID of {n}");
    }
    // The 33rd NID character is the one that breaks the grammar.
    assert_eq!(err(&format!("urn:{}:x", nid(33)), R8), (NidTooLong, 36));
    assert_eq!(err(&format!("urn:{}:x", nid(33)), R2), (NidTooLong, 36));
    assert_eq!(err("urn:a:x", R8), (NidTooShort, 5));
    // A "-" in 32nd place breaks RFC 8141 right there (the NID must end
    // alphanumeric within 32 characters); RFC 2141 accepts it.
    let hyphen32 = format!("urn:{}-:x", nid(31));
    assert_eq!(err(&hyphen32, R8), (NidTrailingHyphen, 35));
    assert_eq!(err(&format!("urn:{}-a:x", nid(31)), R8), (NidTrailingHyphen, 35));
    assert!(parse(hyphen32.as_bytes(), R2).is_ok());
}

#[test]
fn hyphens_in_nid() {
    assert_eq!(err("urn:-ab:x", R8), (NidLeadingHyphen, 4));
    assert_eq!(err("urn:-ab:x", R2), (NidLeadingHyphen, 4));
    assert_eq!(err("urn:ab-:x", R8), (NidTrailingHyphen, 7));
    assert_eq!(ok("urn:ab-:x", R2).nid(), "ab-"); // RFC 2141 allows a trailing "-"
    assert_eq!(ok("urn:a-b:x", R8).nid(), "a-b");
    assert_eq!(ok("urn:a--b:x", R8).nid(), "a--b");
}

#[test]
fn nid_urn_differs_between_grammars() {
    assert_eq!(ok("urn:urn:x", R8).nid_class(), crate::NidClass::Reserved);
    assert_eq!(err("urn:urn:x", R2).0, NidReservedUrn);
    assert_eq!(ok("urn:urn-5:x", R2).nid(), "urn-5");
}

#[test]
fn percent_at_the_edges() {
    assert_eq!(err("urn:ab:%", R8), (BadPercentEncoding, 8));
    assert_eq!(err("urn:ab:x%A", R8), (BadPercentEncoding, 10));
    assert_eq!(ok("urn:ab:%41", R8).nss(), "%41");
    assert_eq!(ok("urn:ab:x?+%41#%2f", R8).f_component(), Some("%2f"));
    assert_eq!(err("urn:ab:x?+%4", R8), (BadPercentEncoding, 12));
    assert_eq!(ok("urn:a:%41", R2).nss(), "%41");
}

#[test]
fn question_marks_and_components() {
    // "?+" then "?=": both components.
    let u = ok("urn:ab:x?+r?=q", R8);
    assert_eq!((u.r_component(), u.q_component()), (Some("r"), Some("q")));
    // "?=" then "?+": the "?+" is part of the q-component.
    let u = ok("urn:ab:x?=q?+r", R8);
    assert_eq!((u.r_component(), u.q_component()), (None, Some("q?+r")));
    // "#" with nothing after it: an empty f-component.
    assert_eq!(ok("urn:ab:x#", R8).f_component(), Some(""));
    assert_eq!(ok("urn:ab:x?+r#", R8).f_component(), Some(""));
    // r- and q-components may hold "/" and "?" after their first character.
    assert_eq!(ok("urn:ab:x?+a/?b", R8).r_component(), Some("a/?b"));
    assert_eq!(ok("urn:ab:x?=a/?b", R8).q_component(), Some("a/?b"));
    assert_eq!(err("urn:ab:x?+/a", R8), (ComponentBadChar, 10));
    assert_eq!(err("urn:ab:x?=?a", R8), (ComponentBadChar, 10));
    // RFC 2141 has no components: "?", "#", "/" are NSS characters.
    let u = ok("urn:ab:x?+r#f", R2);
    assert_eq!(u.nss(), "x?+r#f");
    assert_eq!(u.key(), "urn:ab:x?+r#f");
    assert_eq!(u.r_component(), None);
}

#[test]
fn percent_encoded_octet_zero_is_grammar_under_both() {
    // RFC 2141 §2.4 says octet 0 "should NEVER be used", even as "%00", but
    // its grammar admits every "%" <hex> <hex>, and so does RFC 3986's
    // pct-encoded: urnscan judges by the grammar (README, "What counts as a
    // URN").
    for g in [R8, R2] {
        assert_eq!(ok("urn:ab:a%00b", g).nss(), "a%00b");
        assert_eq!(ok("URN:AB:%00", g).key(), "urn:ab:%00");
    }
    // A NUL byte itself is no NSS character in either.
    assert_eq!(err("urn:ab:a\0b", R8), (NssBadChar, 8));
    assert_eq!(err("urn:ab:a\0b", R2), (NssBadChar, 8));
}

#[test]
fn slash_tilde_ampersand_in_both_grammars() {
    assert_eq!(err("urn:ab:/x", R8), (NssLeadingSlash, 7));
    assert_eq!(ok("urn:ab:/x", R2).nss(), "/x");
    assert_eq!(ok("urn:ab:x/y/", R8).nss(), "x/y/");
    assert_eq!(ok("urn:ab:x/y/", R2).nss(), "x/y/");
    assert_eq!(ok("urn:ab:a~b", R8).nss(), "a~b");
    assert_eq!(err("urn:ab:a~b", R2), (NssBadChar, 8));
    assert_eq!(ok("urn:ab:a&b", R8).nss(), "a&b");
    assert_eq!(err("urn:ab:a&b", R2), (NssBadChar, 8));
    assert_eq!(ok("urn:ab:~", R8).nss(), "~");
}

#[test]
fn longest_prefix() {
    let p = |s: &str| parse_prefix(s.as_bytes(), R8).map(|u| u.as_str().to_owned());
    assert_eq!(p("urn:ab:c d").unwrap(), "urn:ab:c");
    assert_eq!(p("urn:ab:c%zz").unwrap(), "urn:ab:c");
    assert_eq!(p("urn:ab:c?x").unwrap(), "urn:ab:c");
    assert_eq!(p("urn:ab:c?+").unwrap(), "urn:ab:c");
    assert_eq!(p("urn:ab:c?+r?=").unwrap(), "urn:ab:c?+r?");
    assert_eq!(p("urn:ab:c#f#").unwrap(), "urn:ab:c#f");
    assert_eq!(p("urn:ab:c\u{e9}").unwrap(), "urn:ab:c");
    assert_eq!(p("urn:ab: x").unwrap_err().kind(), NssBadChar);
    assert_eq!(p("urn:ab:").unwrap_err().kind(), NssEmpty);
    assert_eq!(p("turn:ab:c").unwrap_err().kind(), NotUrn);
}

#[test]
fn maximum_length() {
    let at_limit = format!("urn:ab:{}", "x".repeat(MAX_URN_LEN - 7));
    assert_eq!(at_limit.len(), MAX_URN_LEN);
    assert!(parse(at_limit.as_bytes(), R8).is_ok());
    assert_eq!(parse_prefix(format!("{at_limit} tail").as_bytes(), R8).unwrap().len(), MAX_URN_LEN);
    let over = format!("{at_limit}x");
    assert_eq!(err(&over, R8), (TooLong, MAX_URN_LEN));
    assert_eq!(parse_prefix(over.as_bytes(), R8).unwrap_err().kind(), TooLong);
    let huge = format!("urn:ab:{}", "y".repeat(1 << 20));
    assert_eq!(err(&huge, R2), (TooLong, MAX_URN_LEN));
    // An error before the limit is still that error.
    let early = format!("urn:ab:x^{}", "y".repeat(MAX_URN_LEN));
    assert_eq!(err(&early, R8), (NssBadChar, 8));
}

#[test]
fn scheme_and_nid_case_insensitive() {
    for s in ["urn:ab:c", "URN:ab:c", "uRn:AB:c"] {
        assert_eq!(ok(s, R8).key(), "urn:ab:c");
    }
    // Only ASCII letters fold: 0x1a is not ":".
    assert_eq!(err("urn\u{1a}ab:c", R8), (NotUrn, 3));
}
