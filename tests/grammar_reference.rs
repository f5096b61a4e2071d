//! Property tests: the table-driven validator against a slow reference grammar.
//!
//! The reference is one anchored `regex::bytes` pattern per grammar, written
//! production by production from the ABNF of RFC 8141 §2 (with `pchar`,
//! `pct-encoded` and `fragment` from RFC 3986) and from RFC 2141 §2, with one
//! capture group per part. It shares nothing with the library's class tables
//! or state machine, so agreement on many generated inputs is evidence, not
//! an echo. The prose rules that the ABNF alone does not carry are written
//! into the patterns, each next to its source:
//!
//! - RFC 8141 §2.3.1: the first "?=" ends an r-component, so an r-component
//!   never contains the sequence "?=" (every run of "?" inside it is followed
//!   by a character other than "=", or ends it); a q-component may hold "?+".
//! - RFC 2141 §2.1: NID = `<let-num> [ 1,31<let-num-hyp> ]` is 1–32 characters
//!   and may end in "-"; the NID "urn" (any case) is reserved (a post-check,
//!   since a regex has no "except").
//! - RFC 2141 §2.3.1: "%" is reserved for `%HH` escapes, so although `<reserved>`
//!   lists "%", it is only admitted as the start of an escape.
//!
//! The equivalence key is recomputed independently from the captures
//! (RFC 8141 §3.1, RFC 2141 §5): scheme and NID lower-cased, the hex digits of
//! every percent-encoding in the NSS upper-cased, components dropped, nothing
//! decoded.
//!
//! For each generated input and each grammar the tests compare the verdict,
//! the parts (None vs Some("") matters for the f-component), the key, the
//! error offset (the end of the longest *viable* prefix, decided by the
//! reference through a fixed set of completions) and `parse_prefix` (the
//! longest prefix the reference accepts, found by trying every length).
//!
//! Trade-offs: the reference is slow (a regex in a debug build, run once per
//! prefix length), so case counts are set explicitly (`CASES_REFERENCE` =
//! 10 000, `CASES_KEY` = 1 000 per key property) to keep the whole file to a
//! few seconds in a debug build. The generators are biased
//! towards near misses so that both verdicts are frequent; a test checks that
//! they are, because a generator that only produced invalid input would let
//! every property pass. Failure persistence is off so a failing run writes no
//! files beside the tests; proptest prints the minimal input instead.

use std::sync::OnceLock;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner};
use regex::bytes::{Captures, Regex};
use urnscan::{parse, parse_prefix, ErrorKind, Grammar, Urn, MAX_URN_LEN};

const GRAMMARS: [Grammar; 2] = [Grammar::Rfc8141, Grammar::Rfc2141];

/// Cases for the main comparison (each case checks both grammars).
const CASES_REFERENCE: u32 = 10000;
/// Cases for each of the key-property tests.
const CASES_KEY: u32 = 1000;

// ---------------------------------------------------------------------------
// The reference grammars
// ---------------------------------------------------------------------------

/// RFC 3986 `pct-encoded = "%" HEXDIG HEXDIG`; ABNF literals are
/// case-insensitive (RFC 5234 §2.3), so `a`–`f` count as HEXDIG.
const PCT_ENCODED: &str = "%[0-9A-Fa-f]{2}";
/// RFC 3986 `pchar` without `pct-encoded`: unreserved (ALPHA DIGIT - . _ ~),
/// sub-delims (! $ & ' ( ) * + , ; =), ":" and "@".
const PCHAR_LITERAL: &str = r"A-Za-z0-9\-._~!$&'()*+,;=:@";
/// The same set without "=": what may follow a "?" inside an r-component.
const PCHAR_LITERAL_BUT_EQ: &str = r"A-Za-z0-9\-._~!$&'()*+,;:@";

fn compile(pattern: &str) -> Regex {
    Regex::new(pattern).unwrap_or_else(|e| panic!("reference pattern does not compile: {e}"))
}

/// RFC 8141 §2 `namestring`, groups: 1 scheme, 2 NID, 3 NSS, 4 r, 5 q, 6 f.
fn rfc8141_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        let pchar = format!("(?:[{PCHAR_LITERAL}]|{PCT_ENCODED})");
        let pchar_but_eq = format!("(?:[{PCHAR_LITERAL_BUT_EQ}]|{PCT_ENCODED})");
        // NID = (alphanum) 0*30(ldh) (alphanum)
        let nid = "[A-Za-z0-9][A-Za-z0-9-]{0,30}[A-Za-z0-9]";
        // NSS = pchar *(pchar / "/")
        let nss = format!("{pchar}(?:{pchar}|/)*");
        // r-component = pchar *( pchar / "/" / "?" ), cut at the first "?=" (§2.3.1)
        let r = format!(r"{pchar}(?:{pchar}|/|\?+(?:{pchar_but_eq}|/))*\?*");
        // q-component = pchar *( pchar / "/" / "?" )
        let q = format!(r"{pchar}(?:{pchar}|/|\?)*");
        // f-component = fragment = *( pchar / "/" / "?" )
        let f = format!(r"(?:{pchar}|/|\?)*");
        // namestring = assigned-name [ rq-components ] [ "#" f-component ]
        // rq-components = [ "?+" r-component ] [ "?=" q-component ]
        compile(&format!(r"(?-u)\A([uU][rR][nN]):({nid}):({nss})(?:\?\+({r}))?(?:\?=({q}))?(?:#({f}))?\z"))
    })
}

/// RFC 2141 §2 `<URN>`, groups: 1 scheme, 2 NID, 3 NSS.
fn rfc2141_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        // <NID> ::= <let-num> [ 1,31<let-num-hyp> ]
        let nid = "[A-Za-z0-9][A-Za-z0-9-]{0,31}";
        // <URN chars> ::= <trans> | "%" <hex> <hex>
        // <trans> ::= <upper> | <lower> | <number> | <other> | <reserved>, with
        // <other> = ( ) + , - . : = @ ; $ _ ! * '  and <reserved> = % / ? #,
        // "%" only as an escape (§2.3.1).
        let urn_char = format!(r"(?:[A-Za-z0-9()+,\-.:=@;$_!*'/?#]|{PCT_ENCODED})");
        // <URN> ::= "urn:" <NID> ":" <NSS>;  <NSS> ::= 1*<URN chars>
        compile(&format!(r"(?-u)\A([uU][rR][nN]):({nid}):({urn_char}+)\z"))
    })
}

fn pct_encoded_regex() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| compile(&format!("(?-u){PCT_ENCODED}")))
}

/// A URN taken apart, by the reference or by the library.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Parsed {
    nid: String,
    nss: String,
    r: Option<String>,
    q: Option<String>,
    f: Option<String>,
    key: String,
}

fn ascii_string(bytes: &[u8]) -> String {
    String::from_utf8(bytes.to_vec()).expect("the reference grammars admit only ASCII")
}

/// The reference verdict on the whole of `input`.
fn reference(input: &[u8], grammar: Grammar) -> Option<Parsed> {
    let caps: Captures = match grammar {
        Grammar::Rfc8141 => rfc8141_regex().captures(input)?,
        Grammar::Rfc2141 => rfc2141_regex().captures(input)?,
    };
    let group = |i: usize| caps.get(i).map(|m| ascii_string(m.as_bytes()));
    let nid = group(2)?;
    let nss = group(3)?;
    // RFC 2141 §2.1: 'the NID "urn" is reserved and MUST NOT be used'.
    if grammar == Grammar::Rfc2141 && nid.eq_ignore_ascii_case("urn") {
        return None;
    }
    let key = reference_key(&nid, &nss);
    Some(Parsed { nid, nss, r: group(4), q: group(5), f: group(6), key })
}

/// RFC 8141 §3.1 / RFC 2141 §5: lower-case scheme and NID, upper-case the hex
/// digits of each percent-encoding in the NSS, never decode.
fn reference_key(nid: &str, nss: &str) -> String {
    let nss = pct_encoded_regex().replace_all(nss.as_bytes(), |c: &Captures| c[0].to_ascii_uppercase());
    format!("urn:{}:{}", nid.to_ascii_lowercase(), ascii_string(&nss))
}

/// Appended to a prefix, at least one of these completes every viable prefix:
/// inside "urn:" a tail of "urn:ab:c"; inside a NID ":c", or "a:c" after a
/// one-letter (RFC 8141), "-"-ending or "urn" NID; after the NID's ":" or a
/// "?+"/"?=" one pchar "c"; after "%" or "%H" one or two hex digits; after a
/// lone "?" in the NSS "+c" or "=c"; anywhere else nothing. Each completion
/// is a valid continuation, so the test is exact both ways.
const COMPLETIONS: [&[u8]; 13] =
    [b"", b"0", b"00", b"c", b":c", b"a:c", b"+c", b"=c", b"ab:c", b":ab:c", b"n:ab:c", b"rn:ab:c", b"urn:ab:c"];

fn is_viable(prefix: &[u8], grammar: Grammar) -> bool {
    COMPLETIONS.iter().any(|c| reference(&[prefix, c].concat(), grammar).is_some())
}

/// Length of the longest prefix of `input` that some suffix makes a URN.
/// Viability is prefix-closed, so a binary search finds the boundary.
fn longest_viable_prefix(input: &[u8], grammar: Grammar) -> usize {
    let (mut lo, mut hi) = (0, input.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if is_viable(&input[..mid], grammar) {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// Length of the longest prefix (at most [`MAX_URN_LEN`]) that the reference
/// accepts, trying every length.
fn longest_valid_prefix(input: &[u8], grammar: Grammar) -> Option<usize> {
    (1..=input.len().min(MAX_URN_LEN)).rev().find(|&k| reference(&input[..k], grammar).is_some())
}

fn library_view(urn: &Urn<'_>) -> Parsed {
    Parsed {
        nid: urn.nid().to_owned(),
        nss: urn.nss().to_owned(),
        r: urn.r_component().map(str::to_owned),
        q: urn.q_component().map(str::to_owned),
        f: urn.f_component().map(str::to_owned),
        key: urn.key().into_owned(),
    }
}

fn show(bytes: &[u8]) -> String {
    bytes.escape_ascii().to_string()
}

// ---------------------------------------------------------------------------
// Generators
// ---------------------------------------------------------------------------

fn bytes_of(s: String) -> Vec<u8> {
    s.into_bytes()
}

fn pick(options: &'static [&'static [u8]]) -> impl Strategy<Value = Vec<u8>> {
    prop::sample::select(options).prop_map(<[u8]>::to_vec)
}

const JUNK_SCHEMES: &[&[u8]] =
    &[b"", b"u", b"urn", b"ur:", b"urn;", b"urn::", b"xurn:", b"url:", b"urn :", b" urn:", b"\xC3urn:", b"urn\xC3:"];

fn scheme() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => Just(b"urn:".to_vec()),
        2 => Just(b"URN:".to_vec()),
        2 => "[uU][rR][nN]:".prop_map(bytes_of),
        1 => pick(JUNK_SCHEMES),
    ]
}

const SPECIAL_NIDS: &[&[u8]] = &[b"urn", b"URN", b"uRn", b"a", b"Z", b"a-", b"-a", b"ab-", b"x-y", b"0", b"urn-"];

fn nid() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => "[a-zA-Z0-9][a-zA-Z0-9-]{0,6}[a-zA-Z0-9]".prop_map(bytes_of),
        3 => "[a-zA-Z0-9-]{0,40}".prop_map(bytes_of),
        1 => "[a-z0-9][a-z0-9-]{28,33}".prop_map(bytes_of),
        2 => pick(SPECIAL_NIDS),
    ]
}

fn nid_colon() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![12 => Just(b":".to_vec()), 1 => pick(&[b"", b"::", b"_", b"\xC3", b" ", b"."])]
}

/// NSS punctuation valid in both grammars (pchar ∩ RFC 2141 `<other>`).
const PUNCT_BOTH: &[&[u8]] =
    &[b"-", b".", b"_", b"!", b"$", b"'", b"(", b")", b"*", b"+", b",", b";", b"=", b":", b"@"];
/// Delimiters, repeated to weight them.
const STRUCTURE: &[&[u8]] =
    &[b"/", b"/", b"/", b"?+", b"?+", b"?+", b"?+", b"?=", b"?=", b"?=", b"?=", b"?", b"?", b"#", b"#", b"#"];
/// Bytes neither grammar admits (or admits only in an escape), alone and
/// right after a delimiter, where the parser is in a different state.
const BAD: &[&[u8]] = &[
    b"%",
    b"%g",
    b"%4",
    b"%4x",
    b"%\xC3",
    b"%a\xC3",
    b"?\xC3",
    b"?+\xC3",
    b"?=\xC3",
    b"#\xC3",
    b"/\xC3",
    b" ",
    b"\"",
    b"\xC3",
    b"\xC3\xA9",
    b"<",
    b"\\",
    b"^",
    b"[",
    b"|",
    b"\0",
    b"\x7f",
    b"`",
];

fn token() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        24 => "[a-zA-Z0-9]".prop_map(bytes_of),
        6 => "%[0-9a-fA-F]{2}".prop_map(bytes_of),
        8 => pick(PUNCT_BOTH),
        10 => pick(STRUCTURE),
        1 => pick(&[b"~", b"&"]),
        2 => pick(BAD),
    ]
}

fn body() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(token(), 0..16).prop_map(|t| t.concat())
}

const SOUP: &[u8] = b"urnURN:ab-0Ff%?+=#/~&.; \"\xC3";

/// URN-like inputs: mostly structured near misses, some byte soup.
fn input() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        9 => (scheme(), nid(), nid_colon(), body()).prop_map(|(s, n, c, b)| [s, n, c, b].concat()),
        1 => (pick(&[b"", b"urn:"]), prop::collection::vec(prop::sample::select(SOUP), 0..40))
            .prop_map(|(s, b)| [s, b].concat()),
    ]
}

/// A NID valid under both grammars.
fn valid_nid() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9][a-zA-Z0-9-]{0,8}[a-zA-Z0-9]"
        .prop_filter("NID urn is reserved in RFC 2141", |n| !n.eq_ignore_ascii_case("urn"))
}

fn nss_char() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        6 => "[a-zA-Z0-9]".prop_map(bytes_of),
        2 => "%[0-9a-fA-F]{2}".prop_map(bytes_of),
        2 => pick(PUNCT_BOTH),
    ]
}

/// An NSS valid under both grammars.
fn valid_nss() -> impl Strategy<Value = String> {
    let tail = prop_oneof![5 => nss_char(), 1 => Just(b"/".to_vec())];
    (nss_char(), prop::collection::vec(tail, 0..16))
        .prop_map(|(first, rest)| ascii_string(&[first, rest.concat()].concat()))
}

/// pchar (RFC 8141 only: includes "~" and "&").
fn pchar() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![8 => nss_char(), 1 => pick(&[b"~", b"&"])]
}

/// An r-component without "?" (so it cannot swallow a following "?=").
fn r_component() -> impl Strategy<Value = String> {
    let tail = prop_oneof![5 => pchar(), 1 => Just(b"/".to_vec())];
    (pchar(), prop::collection::vec(tail, 0..8))
        .prop_map(|(first, rest)| ascii_string(&[first, rest.concat()].concat()))
}

fn q_component() -> impl Strategy<Value = String> {
    let tail = prop_oneof![5 => pchar(), 1 => pick(&[b"/", b"?", b"?+", b"?="])];
    (pchar(), prop::collection::vec(tail, 0..8))
        .prop_map(|(first, rest)| ascii_string(&[first, rest.concat()].concat()))
}

fn f_component() -> impl Strategy<Value = String> {
    let tail = prop_oneof![5 => pchar(), 1 => pick(&[b"/", b"?", b"?+", b"?="])];
    prop::collection::vec(tail, 0..8).prop_map(|t| ascii_string(&t.concat()))
}

fn config(cases: u32) -> Config {
    Config { cases, failure_persistence: None, ..Config::default() }
}

// ---------------------------------------------------------------------------
// The comparison
// ---------------------------------------------------------------------------

fn check_parse(input: &[u8], grammar: Grammar) -> Result<(), TestCaseError> {
    let g = grammar.as_str();
    match (reference(input, grammar), parse(input, grammar)) {
        (Some(want), Ok(urn)) => {
            prop_assert_eq!(library_view(&urn), want, "{} {}", g, show(input));
            prop_assert_eq!(urn.as_bytes(), input);
            let displayed = urn.to_string();
            prop_assert_eq!(displayed.as_bytes(), input);
            let mut buf = b"junk".to_vec();
            urn.write_key(&mut buf);
            let key = urn.key();
            prop_assert_eq!(&buf[4..], key.as_bytes(), "write_key {}", show(input));
            check_key_is_idempotent(&urn, grammar)?;
        }
        (None, Err(e)) => {
            let viable = longest_viable_prefix(input, grammar);
            prop_assert_eq!(e.offset(), viable, "{} {} {}", g, e.kind(), show(input));
            let breaking_byte = input.get(e.offset()).copied();
            let non_ascii = breaking_byte.is_some_and(|b| b >= 0x80);
            prop_assert_eq!(e.kind() == ErrorKind::NonAscii, non_ascii, "{} {} {}", g, e.kind(), show(input));
        }
        (Some(want), Err(e)) => {
            prop_assert!(false, "{}: reference accepts {} as {:?}; library: {}", g, show(input), want, e.message())
        }
        (None, Ok(urn)) => prop_assert!(false, "{}: reference rejects {}; library: {:?}", g, show(input), urn),
    }
    Ok(())
}

fn check_key_is_idempotent(urn: &Urn<'_>, grammar: Grammar) -> Result<(), TestCaseError> {
    let key = urn.key();
    let again = parse(key.as_bytes(), grammar);
    prop_assert!(again.is_ok(), "key {} does not parse", key);
    let again = again.unwrap();
    prop_assert_eq!(again.key(), key.clone());
    prop_assert_eq!((again.r_component(), again.q_component(), again.f_component()), (None, None, None));
    Ok(())
}

fn check_parse_prefix(input: &[u8], grammar: Grammar) -> Result<(), TestCaseError> {
    let g = grammar.as_str();
    match (longest_valid_prefix(input, grammar), parse_prefix(input, grammar)) {
        (Some(len), Ok(urn)) => {
            prop_assert_eq!(urn.len(), len, "{} {}", g, show(input));
            let want = reference(&input[..len], grammar).expect("accepted above");
            prop_assert_eq!(library_view(&urn), want, "{} {}", g, show(input));
        }
        (None, Err(e)) => {
            // Documented: without a valid prefix the error is parse's.
            prop_assert_eq!(Err(e), parse(input, grammar).map(|u| u.len()), "{} {}", g, show(input));
        }
        (Some(len), Err(e)) => {
            prop_assert!(false, "{}: {} has a valid prefix of {} bytes; library: {}", g, show(input), len, e.message())
        }
        (None, Ok(urn)) => prop_assert!(false, "{}: {} has no valid prefix; library: {:?}", g, show(input), urn),
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(CASES_REFERENCE))]

    #[test]
    fn library_matches_reference(input in input()) {
        for grammar in GRAMMARS {
            check_parse(&input, grammar)?;
            check_parse_prefix(&input, grammar)?;
        }
    }
}

// ---------------------------------------------------------------------------
// Key properties
// ---------------------------------------------------------------------------

fn flip_case(b: u8, flip: bool) -> u8 {
    match (flip, b.is_ascii_lowercase()) {
        (false, _) => b,
        (true, true) => b.to_ascii_uppercase(),
        (true, false) => b.to_ascii_lowercase(),
    }
}

/// `urn:NID:NSS` with the case of the scheme, the NID and the hex digits of
/// the NSS's percent-encodings flipped where `flips` says (cycled).
fn respell(nid: &str, nss: &str, flips: &[bool]) -> Vec<u8> {
    let mut flip = flips.iter().copied().cycle();
    let mut out: Vec<u8> = b"urn".iter().chain(b":").map(|&b| flip_case(b, flip.next().unwrap_or(false))).collect();
    out.extend(nid.bytes().map(|b| flip_case(b, flip.next().unwrap_or(false))));
    out.push(b':');
    let mut hex_left = 0;
    for b in nss.bytes() {
        if hex_left > 0 {
            out.push(flip_case(b, flip.next().unwrap_or(false)));
            hex_left -= 1;
        } else {
            out.push(b);
            hex_left = if b == b'%' { 2 } else { 0 };
        }
    }
    out
}

/// Index of an NSS letter that is not a hex digit of a percent-encoding.
fn plain_letter(nss: &str) -> Option<usize> {
    let bytes = nss.as_bytes();
    let escaped = |i: usize| (i >= 1 && bytes[i - 1] == b'%') || (i >= 2 && bytes[i - 2] == b'%');
    (0..bytes.len()).find(|&i| bytes[i].is_ascii_alphabetic() && !escaped(i))
}

fn key_of(input: &[u8], grammar: Grammar) -> Result<String, TestCaseError> {
    match parse(input, grammar) {
        Ok(urn) => Ok(urn.key().into_owned()),
        Err(e) => Err(TestCaseError::fail(format!("{} {}: {}", grammar.as_str(), show(input), e.message()))),
    }
}

proptest! {
    #![proptest_config(config(CASES_KEY))]

    /// RFC 8141 §3.1 items 1–3, RFC 2141 §5 steps 1–3: case of scheme, NID
    /// and percent-hex does not matter; the case of other NSS letters does.
    #[test]
    fn case_variants_share_a_key(nid in valid_nid(), nss in valid_nss(), flips in prop::collection::vec(any::<bool>(), 1..64)) {
        let plain = respell(&nid, &nss, &[false]);
        let variant = respell(&nid, &nss, &flips);
        for grammar in GRAMMARS {
            let key = key_of(&plain, grammar)?;
            prop_assert_eq!(&key, &reference_key(&nid, &nss));
            prop_assert_eq!(key_of(&variant, grammar)?, key.clone(), "{}", show(&variant));
            if let Some(i) = plain_letter(&nss) {
                let mut other = plain.clone();
                let at = plain.len() - nss.len() + i;
                other[at] = flip_case(other[at], true);
                prop_assert_ne!(key_of(&other, grammar)?, key.clone(), "NSS case must count: {}", show(&other));
            }
        }
    }

    /// RFC 8141 §3.1: r-, q- and f-components MUST be ignored.
    #[test]
    fn components_never_change_the_key(
        nid in valid_nid(),
        nss in valid_nss(),
        r in proptest::option::of(r_component()),
        q in proptest::option::of(q_component()),
        f in proptest::option::of(f_component()),
    ) {
        let name = format!("urn:{nid}:{nss}");
        let mut full = name.clone();
        if let Some(r) = &r { full += &format!("?+{r}"); }
        if let Some(q) = &q { full += &format!("?={q}"); }
        if let Some(f) = &f { full += &format!("#{f}"); }
        let urn = parse(full.as_bytes(), Grammar::Rfc8141);
        prop_assert!(urn.is_ok(), "{}", full);
        let urn = urn.unwrap();
        prop_assert_eq!(urn.key(), key_of(name.as_bytes(), Grammar::Rfc8141)?);
        prop_assert_eq!(
            (urn.r_component(), urn.q_component(), urn.f_component()),
            (r.as_deref(), q.as_deref(), f.as_deref())
        );
    }

    /// RFC 8141 §3.1, RFC 2141 §5: percent-encodings are never decoded.
    #[test]
    fn percent_encodings_are_not_decoded(
        nid in valid_nid(),
        before in valid_nss(),
        after in proptest::option::of(valid_nss()),
        c in prop::sample::select(b"ABCXYZabcxyz0189-._!$'()*+,;=:@".to_vec()),
        upper in any::<bool>(),
    ) {
        let after = after.unwrap_or_default();
        let hex = if upper { format!("{c:02X}") } else { format!("{c:02x}") };
        let literal = format!("urn:{nid}:{before}{}{after}", c as char);
        let encoded = format!("urn:{nid}:{before}%{hex}{after}");
        for grammar in GRAMMARS {
            prop_assert_ne!(key_of(literal.as_bytes(), grammar)?, key_of(encoded.as_bytes(), grammar)?);
        }
    }
}

// ---------------------------------------------------------------------------
// Fixed cases
// ---------------------------------------------------------------------------

#[test]
fn percent_41_and_a_differ() {
    for grammar in GRAMMARS {
        let encoded = parse(b"urn:example:%41", grammar).unwrap();
        let literal = parse(b"urn:example:A", grammar).unwrap();
        assert_ne!(encoded.key(), literal.key());
        assert_eq!(encoded.key(), "urn:example:%41");
    }
}

/// The reference itself, on examples taken from the RFCs and the brief, so a
/// wrong pattern cannot pass silently by agreeing with a wrong library.
#[test]
fn reference_follows_the_rfc_examples() {
    let r8 = |s: &str| reference(s.as_bytes(), Grammar::Rfc8141);
    let r2 = |s: &str| reference(s.as_bytes(), Grammar::Rfc2141);
    for s in ["urn:example:a123,z456", "URN:EXAMPLE:a123%2cz456", "urn:example:1/406/47452/2", "urn:ab:~&"] {
        assert!(r8(s).is_some(), "{s}");
    }
    let cc = r8("urn:example:foo-bar-baz-qux?+CCResolve:cc=uk").unwrap();
    assert_eq!(cc.r.as_deref(), Some("CCResolve:cc=uk"));
    let w = r8("urn:example:weather?=op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z").unwrap();
    assert_eq!(w.q.as_deref(), Some("op=map&lat=39.56&lon=-104.85&datetime=1969-07-21T02:56:15Z"));
    let split = r8("urn:ab:c?+r?x??=q?+s#").unwrap();
    assert_eq!((split.r.as_deref(), split.q.as_deref(), split.f.as_deref()), (Some("r?x?"), Some("q?+s"), Some("")));
    assert_eq!(r8("URN:Ex:A%2cb").unwrap().key, "urn:ex:A%2Cb");
    for s in ["urn:a:b", "urn:ab-:c", "urn:-ab:c", "urn:ab:/c", "urn:ab:c?x", "urn:ab:c?+", "urn:ab:c?=#", "urn:ab:%4g"]
    {
        assert!(r8(s).is_none(), "{s}");
    }
    assert!(r8(&format!("urn:{}:c", "a".repeat(32))).is_some());
    assert!(r8(&format!("urn:{}:c", "a".repeat(33))).is_none());
    assert_eq!(r8("urn:urn:x").unwrap().nid, "urn");
    for s in ["URN:foo:a123,456", "urn:a:b", "urn:a-:b?#/", "urn:a:%2C"] {
        assert!(r2(s).is_some(), "{s}");
    }
    for s in ["urn:urn:x", "urn:URN:x", "urn:ab:~", "urn:ab:&", "urn:ab:%", "urn:ab:", "urn:-a:b"] {
        assert!(r2(s).is_none(), "{s}");
    }
    assert!(r2(&format!("urn:{}:c", "a".repeat(33))).is_none());
}

/// [`MAX_URN_LEN`]: a URN of exactly that length is valid; one byte longer
/// is `too-long` for both `parse` and `parse_prefix`, unless the URN ends
/// within the limit, when `parse_prefix` returns it.
#[test]
fn length_limit() {
    for grammar in GRAMMARS {
        let mut input = b"urn:ab:".to_vec();
        input.resize(MAX_URN_LEN, b'x');
        assert!(reference(&input, grammar).is_some());
        assert_eq!(parse(&input, grammar).unwrap().len(), MAX_URN_LEN);
        assert_eq!(parse_prefix(&input, grammar).unwrap().len(), MAX_URN_LEN);
        input.push(b'x');
        assert_eq!(parse(&input, grammar).unwrap_err().kind(), ErrorKind::TooLong);
        assert_eq!(parse_prefix(&input, grammar).unwrap_err().kind(), ErrorKind::TooLong);
        let last = input.len() - 1;
        input[last] = b' ';
        input.extend_from_slice(b"tail");
        assert_eq!(longest_valid_prefix(&input, grammar), Some(MAX_URN_LEN));
        assert_eq!(parse_prefix(&input, grammar).unwrap().len(), MAX_URN_LEN);
    }
}

/// The generators must produce both verdicts, and every component, often;
/// otherwise the properties above would pass without testing much.
#[test]
fn generators_hit_both_verdicts() {
    const SAMPLES: usize = 3000;
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let strategy = input();
    let (mut ok8, mut ok2, mut r, mut q, mut f, mut empty_f) = (0, 0, 0, 0, 0, 0);
    for _ in 0..SAMPLES {
        let input = strategy.new_tree(&mut runner).unwrap().current();
        ok2 += usize::from(parse(&input, Grammar::Rfc2141).is_ok());
        if let Ok(urn) = parse(&input, Grammar::Rfc8141) {
            ok8 += 1;
            r += usize::from(urn.r_component().is_some());
            q += usize::from(urn.q_component().is_some());
            f += usize::from(urn.f_component().is_some());
            empty_f += usize::from(urn.f_component() == Some(""));
        }
    }
    eprintln!("valid: rfc8141 {ok8}/{SAMPLES}, rfc2141 {ok2}/{SAMPLES}; r {r}, q {q}, f {f} (empty {empty_f})");
    for valid in [ok8, ok2] {
        assert!((SAMPLES / 5..SAMPLES * 4 / 5).contains(&valid), "valid {valid} of {SAMPLES}");
    }
    for count in [r, q, f, empty_f] {
        assert!(count >= SAMPLES / 200, "component count {count}");
    }
}

/// RFC 8141: the NID is at most 32 characters and ends with a letter or
/// digit, so a "-" as 32nd character can never be completed: the longest
/// viable prefix ends before it (offset 35), whatever follows.
#[test]
fn nid_hyphen_in_32nd_place_breaks_there() {
    let nid31 = "a".repeat(31);
    for tail in ["-:c", "-", "-a:c"] {
        let input = format!("urn:{nid31}{tail}");
        assert_eq!(longest_viable_prefix(input.as_bytes(), Grammar::Rfc8141), 35, "{input}");
        let err = parse(input.as_bytes(), Grammar::Rfc8141).unwrap_err();
        assert_eq!(err.offset(), 35, "{input}: {}", err.message());
    }
}

/// The hand-made lists in `datasets/urns/` (when present): every line goes
/// through the same comparison as the generated inputs, and the offsets
/// annotated by hand in `invalid.tsv` (RFC 8141) must match the reference,
/// which checks the reference against a second, independent reading.
#[test]
fn dataset_lines_match_reference() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("datasets/urns");
    let read = |name: &str| std::fs::read(dir.join(name)).ok();
    let (Some(valid), Some(mixed), Some(invalid)) = (read("valid.txt"), read("mixed.txt"), read("invalid.tsv")) else {
        eprintln!("datasets/urns/ not found: skipped");
        return;
    };
    let mut lines: Vec<&[u8]> = valid.split(|&b| b == b'\n').chain(mixed.split(|&b| b == b'\n')).collect();
    for row in invalid.split(|&b| b == b'\n').skip(1).filter(|r| !r.is_empty()) {
        let fields: Vec<&[u8]> = row.split(|&b| b == b'\t').collect();
        let [input, kind, offset] = fields[..] else { panic!("bad row {}", show(row)) };
        let offset: usize = ascii_string(offset).parse().expect("offset column");
        assert!(reference(input, Grammar::Rfc8141).is_none(), "listed as invalid: {}", show(input));
        assert_eq!(longest_viable_prefix(input, Grammar::Rfc8141), offset, "{} ({})", show(input), show(kind));
        lines.push(input);
    }
    for line in lines.into_iter().filter(|l| !l.is_empty()) {
        for grammar in GRAMMARS {
            let outcome = check_parse(line, grammar).and_then(|()| check_parse_prefix(line, grammar));
            if let Err(e) = outcome {
                panic!("{e}");
            }
        }
    }
}
