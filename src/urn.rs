//! [`Urn`]: a parsed URN that borrows its input, and [`UrnBuf`], the same
//! owning its text.
//!
//! The parser records only offsets, so a `Urn` is a slice and a handful of
//! integers: parsing allocates nothing, and every accessor is a sub-slice.
//! Because a valid URN is ASCII, the parts are handed out as `&str`. A
//! `UrnBuf` keeps the text and the offsets, so that it outlives the input
//! (URNs collected from a buffer that is reused) and is parsed from a
//! string: `"urn:isbn:0451450523".parse::<UrnBuf>()`.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Range;
use std::str::FromStr;

use crate::error::UrnError;
use crate::grammar::{self, Grammar};
use crate::key;
use crate::nid::{self, NidClass};

/// Where the parts of a URN are, as byte offsets into its text. A URN is
/// at most [`crate::MAX_URN_LEN`] bytes, so `u16` offsets suffice and keep
/// the parser's snapshots small.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Parts {
    /// Index of the ":" that ends the NID (the NID is `4..nid_end`).
    pub nid_end: u16,
    /// End of the NSS (it starts at `nid_end + 1`).
    pub nss_end: u16,
    /// r-component, without its "?+".
    pub r: Option<(u16, u16)>,
    /// q-component, without its "?=".
    pub q: Option<(u16, u16)>,
    /// Start of the f-component, after its "#"; it runs to `end`.
    pub f: Option<u16>,
    /// End of the URN.
    pub end: u16,
    /// Whether an escape in the NSS has a lower-case hex digit (`%2c`):
    /// the walk sees it for free, and it is the one NSS fix-up of the key.
    pub lower_hex: bool,
    /// Whether the scheme or the NID has an upper-case letter: the other
    /// fix-up of the key, also seen for free by the walk.
    pub upper_name: bool,
}

/// A valid URN, borrowed from the input it was parsed from.
///
/// `Display` writes the input exactly as it was (no normalisation); use
/// [`Urn::key`] for the RFC 8141 equivalence key. Likewise `==` and `Hash`
/// compare the text and the grammar it was judged by, not equivalence:
/// `urn:ISBN:1` and `urn:isbn:1` differ, their keys are equal. To collect
/// URNs by equivalence, collect their keys. The order (`Ord`) is the
/// text's bytes, then the grammar, so a `BTreeSet` of URNs holds them as
/// written, in byte order; sort by [`Urn::key`] for the order of `urnscan
/// scan --unique`.
///
/// ```
/// use std::collections::{BTreeSet, HashSet};
/// use urnscan::{parse, Grammar};
///
/// let (a, b) = (parse(b"urn:ISBN:1", Grammar::Rfc8141).unwrap(), parse(b"urn:isbn:1", Grammar::Rfc8141).unwrap());
/// assert_ne!(a, b);
/// assert_eq!(a.key(), b.key());
/// assert_eq!(HashSet::from([a, b]).len(), 2);
/// assert_eq!(HashSet::from([a.key(), b.key()]).len(), 1);
/// // Byte order: upper-case letters before lower-case ones.
/// assert_eq!(BTreeSet::from([b, a]).into_iter().collect::<Vec<_>>(), [a, b]);
/// ```
#[derive(Clone, Copy)]
pub struct Urn<'a> {
    text: &'a [u8],
    grammar: Grammar,
    parts: Parts,
}

impl<'a> Urn<'a> {
    pub(crate) fn from_parts(input: &'a [u8], grammar: Grammar, parts: Parts) -> Urn<'a> {
        Urn { text: &input[..parts.end as usize], grammar, parts }
    }

    /// Parses the whole of `input` under `grammar`; see [`grammar::parse`].
    pub fn parse(input: &'a [u8], grammar: Grammar) -> Result<Urn<'a>, UrnError> {
        grammar::parse(input, grammar)
    }

    /// The same URN owning its text, for keeping beyond the input's
    /// lifetime; [`UrnBuf::as_urn`] borrows it back.
    ///
    /// ```
    /// use urnscan::{parse, Grammar, UrnBuf};
    ///
    /// let kept: UrnBuf = {
    ///     let line = String::from("urn:ISBN:0451450523#p3");
    ///     parse(line.as_bytes(), Grammar::Rfc8141)?.to_urn_buf()
    /// };
    /// assert_eq!(kept.as_urn().key(), "urn:isbn:0451450523");
    /// assert_eq!(kept.as_urn().f_component(), Some("p3"));
    /// # Ok::<(), urnscan::UrnError>(())
    /// ```
    pub fn to_urn_buf(&self) -> UrnBuf {
        UrnBuf { text: self.as_str().into(), grammar: self.grammar, parts: self.parts }
    }

    /// The URN's text, exactly as in the input.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.text
    }

    /// The URN's text, exactly as in the input.
    pub fn as_str(&self) -> &'a str {
        ascii(self.text)
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.text.len()
    }

    /// Always false: a URN has at least `urn:NID:X`.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// The grammar it was validated against.
    pub fn grammar(&self) -> Grammar {
        self.grammar
    }

    /// The scheme as written (`urn`, `URN`, `Urn`, ...).
    pub fn scheme(&self) -> &'a str {
        ascii(&self.text[..3])
    }

    /// The namespace identifier as written.
    pub fn nid(&self) -> &'a str {
        ascii(&self.text[self.nid_range()])
    }

    /// Byte range of the NID.
    pub fn nid_range(&self) -> Range<usize> {
        4..self.parts.nid_end as usize
    }

    /// The namespace-specific string as written. Under RFC 2141 it runs to
    /// the end; under RFC 8141 it stops before "?+", "?=" or "#".
    pub fn nss(&self) -> &'a str {
        ascii(&self.text[self.nss_range()])
    }

    /// Byte range of the NSS.
    pub fn nss_range(&self) -> Range<usize> {
        self.parts.nid_end as usize + 1..self.parts.nss_end as usize
    }

    /// `urn:NID:NSS` as written, without r-, q- and f-components.
    pub fn assigned_name(&self) -> &'a str {
        ascii(self.assigned_name_bytes())
    }

    fn key_fixes(&self) -> key::Fixes {
        key::Fixes { nid_end: self.parts.nid_end as usize, name: self.parts.upper_name, hex: self.parts.lower_hex }
    }

    /// Where its parts are (what the scanner keeps beside a URN event for
    /// the output, so that it need not parse the URN again).
    pub(crate) fn parts(&self) -> Parts {
        self.parts
    }

    /// Where the name and NID end and the key's fix-ups, in compact form
    /// (what the scanner keeps beside a URN event for the key table).
    pub(crate) fn key_shape(&self) -> key::KeyShape {
        let Parts { nid_end, nss_end, upper_name, lower_hex, .. } = self.parts;
        key::KeyShape { name_len: nss_end, nid_end, name: upper_name, hex: lower_hex }
    }

    /// The assigned name when it already is the key (no fix-up needed):
    /// the allocation-free, copy-free case of [`Urn::key`].
    pub(crate) fn key_if_borrowed(&self) -> Option<&'a [u8]> {
        let fixes = self.key_fixes();
        (!fixes.name && !fixes.hex).then(|| self.assigned_name_bytes())
    }

    fn assigned_name_bytes(&self) -> &'a [u8] {
        &self.text[..self.parts.nss_end as usize]
    }

    /// Byte range of the r-component, without its "?+".
    pub fn r_range(&self) -> Option<Range<usize>> {
        self.parts.r.map(|(s, e)| s as usize..e as usize)
    }

    /// The r-component, without its "?+" (RFC 8141 only).
    pub fn r_component(&self) -> Option<&'a str> {
        self.r_range().map(|r| ascii(&self.text[r]))
    }

    /// Byte range of the q-component, without its "?=".
    pub fn q_range(&self) -> Option<Range<usize>> {
        self.parts.q.map(|(s, e)| s as usize..e as usize)
    }

    /// The q-component, without its "?=" (RFC 8141 only).
    pub fn q_component(&self) -> Option<&'a str> {
        self.q_range().map(|r| ascii(&self.text[r]))
    }

    /// Byte range of the f-component, without its "#" (may be empty).
    pub fn f_range(&self) -> Option<Range<usize>> {
        self.parts.f.map(|s| s as usize..self.text.len())
    }

    /// The f-component, without its "#" (RFC 8141 only). `Some("")` for a
    /// URN ending in "#".
    pub fn f_component(&self) -> Option<&'a str> {
        self.f_range().map(|r| ascii(&self.text[r]))
    }

    /// The URN-equivalence key (RFC 8141 §3, RFC 2141 §5): `urn:`, the NID
    /// lower-cased, `:`, the NSS with the hex digits of its percent-encodings
    /// upper-cased; components dropped; nothing decoded. Borrowed from the
    /// input when its assigned name (`urn:NID:NSS`, before any component)
    /// is already in that form.
    pub fn key(&self) -> Cow<'a, str> {
        match key::key_bytes(self.assigned_name_bytes(), self.key_fixes()) {
            Cow::Borrowed(b) => Cow::Borrowed(ascii(b)),
            Cow::Owned(v) => Cow::Owned(String::from_utf8(v).unwrap_or_default()),
        }
    }

    /// Appends the equivalence key to `out`: the allocation-free form of
    /// [`Urn::key`] for callers that reuse a buffer.
    pub fn write_key(&self, out: &mut Vec<u8>) {
        key::write_key(self.assigned_name_bytes(), self.key_fixes(), out)
    }

    /// The NID's class under RFC 8141 §5. This walks the embedded registry's
    /// text on each call (no allocation); to classify many URNs, hold a
    /// [`NidClassifier`](crate::NidClassifier) and call its `classify`.
    pub fn nid_class(&self) -> NidClass {
        nid::classify(self.nid().as_bytes())
    }
}

/// Bytes the grammar has checked to be ASCII.
fn ascii(bytes: &[u8]) -> &str {
    // Cannot fail: every byte of a parsed URN is < 0x80.
    std::str::from_utf8(bytes).unwrap_or_default()
}

/// The same text judged by the same grammar: the parts are what the
/// grammar makes of the text, so they are left out of `==`, `Hash` and
/// the order alike.
impl PartialEq for Urn<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text && self.grammar == other.grammar
    }
}

impl Eq for Urn<'_> {}

impl Hash for Urn<'_> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.text.hash(state);
        self.grammar.hash(state);
    }
}

/// By text, then grammar (in [`Grammar`]'s order: RFC 8141 first).
impl Ord for Urn<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.text.cmp(other.text).then(self.grammar.cmp(&other.grammar))
    }
}

impl PartialOrd for Urn<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Urn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Urn<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.debug_as("Urn", f)
    }
}

impl Urn<'_> {
    /// `Debug` under the name of `Urn` or [`UrnBuf`]: the text and its parts.
    fn debug_as(&self, name: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct(name)
            .field("text", &self.as_str())
            .field("nid", &self.nid())
            .field("nss", &self.nss())
            .field("r", &self.r_component())
            .field("q", &self.q_component())
            .field("f", &self.f_component())
            .finish()
    }
}

/// A valid URN that owns its text: [`Urn`] for keeping (in a collection,
/// across a reused input buffer, in another thread) and for parsing from a
/// string. Its parts are read through [`UrnBuf::as_urn`], which borrows it
/// as a `Urn` without parsing again.
///
/// `parse()` (`FromStr`) judges by RFC 8141; [`UrnBuf::parse`] takes the
/// grammar. As with `Urn`, `Display` writes the text as it was, and `==`
/// and `Hash` go by the text and the grammar, not by equivalence (collect
/// [`Urn::key`]s for that); a `UrnBuf` equals, and hashes as, the `Urn`
/// it was made from.
///
/// ```
/// use std::collections::HashSet;
/// use urnscan::{Grammar, NidClass, UrnBuf};
///
/// let urn: UrnBuf = "urn:IETF:rfc:8141?+res#frag".parse()?;
/// let parts = urn.as_urn();
/// assert_eq!((parts.nid(), parts.nss()), ("IETF", "rfc:8141"));
/// assert_eq!((parts.r_component(), parts.f_component()), (Some("res"), Some("frag")));
/// assert_eq!(parts.key(), "urn:ietf:rfc:8141");
/// assert_eq!(parts.nid_class(), NidClass::Formal);
/// assert_eq!(urn.to_string(), "urn:IETF:rfc:8141?+res#frag");
///
/// // Not a URN under RFC 8141: the error says why and where.
/// let err = "urn:ab:c?x".parse::<UrnBuf>().unwrap_err();
/// assert_eq!(err.kind().as_str(), "lone-question-mark");
/// // RFC 2141 has no components: the "?" is part of the NSS.
/// assert_eq!(UrnBuf::parse("urn:abc:c?x", Grammar::Rfc2141)?.as_urn().nss(), "c?x");
///
/// // Equal, hashed and ordered by text, as Urn is: two spellings, one key.
/// let set: HashSet<UrnBuf> = ["urn:ISBN:1", "urn:isbn:1", "urn:ISBN:1"].iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
/// assert_eq!(set.len(), 2);
/// # Ok::<(), urnscan::UrnError>(())
/// ```
#[derive(Clone)]
pub struct UrnBuf {
    text: Box<str>,
    grammar: Grammar,
    parts: Parts,
}

impl UrnBuf {
    /// Parses the whole of `input` under `grammar` ([`grammar::parse`])
    /// and keeps its text.
    pub fn parse(input: impl AsRef<[u8]>, grammar: Grammar) -> Result<UrnBuf, UrnError> {
        grammar::parse(input.as_ref(), grammar).map(|urn| urn.to_urn_buf())
    }

    /// The URN borrowed as a [`Urn`], for its parts: `nid`, `nss`, the
    /// components, `key`, `nid_class` and the rest.
    pub fn as_urn(&self) -> Urn<'_> {
        Urn::from_parts(self.text.as_bytes(), self.grammar, self.parts)
    }

    /// The URN's text, exactly as it was parsed.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The grammar it was validated against.
    pub fn grammar(&self) -> Grammar {
        self.grammar
    }

    /// The text, without the offsets of its parts.
    pub fn into_string(self) -> String {
        self.text.into()
    }
}

impl FromStr for UrnBuf {
    type Err = UrnError;

    /// Parses a URN under RFC 8141 ([`Grammar::Rfc8141`]); see [`UrnBuf::parse`]
    /// for RFC 2141.
    fn from_str(s: &str) -> Result<UrnBuf, UrnError> {
        UrnBuf::parse(s, Grammar::Rfc8141)
    }
}

impl From<Urn<'_>> for UrnBuf {
    fn from(urn: Urn<'_>) -> UrnBuf {
        urn.to_urn_buf()
    }
}

impl From<UrnBuf> for String {
    fn from(urn: UrnBuf) -> String {
        urn.into_string()
    }
}

impl AsRef<str> for UrnBuf {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for UrnBuf {
    fn eq(&self, other: &UrnBuf) -> bool {
        self.as_urn() == other.as_urn()
    }
}

impl Eq for UrnBuf {}

impl PartialEq<Urn<'_>> for UrnBuf {
    fn eq(&self, other: &Urn<'_>) -> bool {
        self.as_urn() == *other
    }
}

impl PartialEq<UrnBuf> for Urn<'_> {
    fn eq(&self, other: &UrnBuf) -> bool {
        *self == other.as_urn()
    }
}

/// As [`Urn`]'s: by text, then grammar.
impl Ord for UrnBuf {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_urn().cmp(&other.as_urn())
    }
}

impl PartialOrd for UrnBuf {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// As [`Urn`]'s: a `UrnBuf` hashes as the `Urn` it borrows as.
impl Hash for UrnBuf {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_urn().hash(state)
    }
}

impl fmt::Display for UrnBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for UrnBuf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_urn().debug_as("UrnBuf", f)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::hash_map::DefaultHasher;

    use super::*;

    fn hash(value: &impl Hash) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    /// A `UrnBuf` outlives its input and gives what the `Urn` gave.
    #[test]
    fn an_owned_urn_keeps_the_parts_of_the_borrowed_one() {
        let texts = ["urn:IETF:rfc:8141?+res?=q#frag", "urn:ab:c%2c", "URN:isbn:1#", "urn:abc:c?x", "urn:example:a/b"];
        let mut checked = 0;
        for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
            for text in texts {
                let input = text.to_owned();
                let Ok(urn) = grammar::parse(input.as_bytes(), grammar) else { continue };
                let kept = urn.to_urn_buf();
                assert_eq!(kept, urn, "UrnBuf == Urn");
                assert_eq!(urn, kept, "Urn == UrnBuf");
                assert_eq!(kept.as_urn(), urn);
                assert_eq!(hash(&kept), hash(&urn), "{text}");
                let parts = |u: &Urn<'_>| {
                    let components = (u.r_component(), u.q_component(), u.f_component());
                    let all = (u.as_str(), u.scheme(), u.nid(), u.nss(), u.assigned_name(), components, u.key());
                    format!("{all:?} {:?} {:?}", u.grammar(), u.nid_class())
                };
                let (expected, debug) = (parts(&urn), format!("{urn:?}"));
                let owned = kept.clone();
                drop(input);
                assert_eq!(parts(&owned.as_urn()), expected);
                assert_eq!((owned.as_str(), owned.grammar()), (text, grammar));
                assert_eq!(owned.to_string(), text);
                assert_eq!(format!("{owned:?}"), debug.replacen("Urn", "UrnBuf", 1));
                assert_eq!(UrnBuf::parse(text, grammar).as_ref(), Ok(&owned));
                assert_eq!(UrnBuf::from(owned.as_urn()), kept);
                checked += 1;
            }
        }
        assert!(checked >= 5, "{checked}");
    }

    #[test]
    fn parsing_a_str_is_rfc_8141() {
        let urn: UrnBuf = "urn:ab:c?+r".parse().unwrap();
        assert_eq!((urn.grammar(), urn.as_urn().r_component()), (Grammar::Rfc8141, Some("r")));
        let err = "urn:ab:c?x".parse::<UrnBuf>().unwrap_err();
        assert_eq!(err, grammar::parse(b"urn:ab:c?x", Grammar::Rfc8141).unwrap_err());
        assert!("urn:ab:c\u{e9}".parse::<UrnBuf>().is_err());
        assert!("".parse::<UrnBuf>().is_err());
        // Same text, another grammar: not equal, as for Urn.
        let a = UrnBuf::parse("urn:abc:d", Grammar::Rfc8141).unwrap();
        let b = UrnBuf::parse("urn:abc:d", Grammar::Rfc2141).unwrap();
        assert_ne!(a, b);
        assert_eq!(String::from(a), "urn:abc:d");
    }

    /// The order is the text's bytes, then the grammar (RFC 8141 first),
    /// for `Urn` and `UrnBuf` alike, and it agrees with `==`.
    #[test]
    fn urns_are_ordered_by_text_then_grammar() {
        let texts =
            ["urn:isbn:1", "urn:ISBN:1", "URN:isbn:1", "urn:isbn:1#f", "urn:isbn:10", "urn:abc:d", "urn:ab:c%2c"];
        let mut urns: Vec<Urn<'_>> = Vec::new();
        for text in texts {
            for grammar in [Grammar::Rfc2141, Grammar::Rfc8141] {
                urns.extend(grammar::parse(text.as_bytes(), grammar));
            }
        }
        // Each text is valid under both grammars (`#` is an NSS character
        // of RFC 2141's, an f-component of RFC 8141's).
        assert_eq!(urns.len(), 14);
        let mut sorted = urns.clone();
        sorted.sort();
        let got: Vec<(&str, Grammar)> = sorted.iter().map(|u| (u.as_str(), u.grammar())).collect();
        let (r8, r2) = (Grammar::Rfc8141, Grammar::Rfc2141);
        let want = [
            ("URN:isbn:1", r8),
            ("URN:isbn:1", r2),
            ("urn:ISBN:1", r8),
            ("urn:ISBN:1", r2),
            ("urn:ab:c%2c", r8),
            ("urn:ab:c%2c", r2),
            ("urn:abc:d", r8),
            ("urn:abc:d", r2),
            ("urn:isbn:1", r8),
            ("urn:isbn:1", r2),
            ("urn:isbn:1#f", r8),
            ("urn:isbn:1#f", r2),
            ("urn:isbn:10", r8),
            ("urn:isbn:10", r2),
        ];
        assert_eq!(got, want);
        for a in &urns {
            for b in &urns {
                assert_eq!(a.cmp(b) == Ordering::Equal, a == b, "{a:?} {b:?}");
                assert_eq!(a.to_urn_buf().cmp(&b.to_urn_buf()), a.cmp(b), "{a:?} {b:?}");
            }
        }
    }
}
