//! [`NidFilter`]: the namespaces a run keeps (`urnscan scan --nid`).
//!
//! A filter applies to URNs that are already valid, so finding a URN's NID
//! needs no parsing: it is the bytes between `urn:` and the next colon (a
//! NID never holds one), so a kept NID matches when a colon follows it.
//! NIDs compare ASCII case-insensitively (RFC 8141 §3.1), and a filter
//! holds the handful of NIDs a user types, so a pass over them is all a
//! lookup needs: no hashing, no search per URN.
//!
//! The filter does not change what the scanner finds. A URN of another
//! namespace still ends where it ends: `urn:example:a/urn:isbn:1` is one
//! URN of NID `example`, and `--nid isbn` takes nothing from it (the run
//! drops it after the scan, it is not rescanned).

use std::fmt;

use crate::error::UrnError;
use crate::grammar::{parse, Grammar};

/// A set of NIDs to keep, compared ASCII case-insensitively.
///
/// ```
/// use urnscan::{Grammar, NidFilter};
///
/// let filter = NidFilter::new(["ISBN", "issn"], Grammar::Rfc8141).unwrap();
/// assert!(filter.accepts(b"urn:isbn:0451450523"));
/// assert!(filter.accepts(b"URN:ISSN:0167-6423"));
/// assert!(!filter.accepts(b"urn:example:isbn"));
/// assert!(NidFilter::new(["a b"], Grammar::Rfc8141).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NidFilter {
    /// Lower-cased, sorted, without repeats.
    nids: Vec<Box<[u8]>>,
}

/// A NID given to [`NidFilter::new`] that the grammar does not allow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InvalidNid {
    /// The NID as given.
    pub nid: String,
    /// Why the grammar rejects it: the error of parsing `urn:NID:x`, or
    /// `None` when that parse succeeds with a shorter NID (the text holds a
    /// colon).
    pub error: Option<UrnError>,
}

impl fmt::Display for InvalidNid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a namespace identifier (NID): ", self.nid)?;
        match &self.error {
            Some(e) => f.write_str(e.description()),
            None => f.write_str("a NID holds no colon"),
        }
    }
}

impl std::error::Error for InvalidNid {}

impl NidFilter {
    /// A filter keeping the URNs of `nids` (any case), each checked
    /// against `grammar`'s NID rule; an empty list keeps nothing.
    pub fn new<I, S>(nids: I, grammar: Grammar) -> Result<NidFilter, InvalidNid>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut kept = Vec::new();
        for nid in nids {
            let nid = nid.as_ref();
            check(nid, grammar)?;
            kept.push(nid.to_ascii_lowercase().into_bytes().into_boxed_slice());
        }
        kept.sort();
        kept.dedup();
        Ok(NidFilter { nids: kept })
    }

    /// The NIDs kept, lower-cased, in byte order.
    pub fn nids(&self) -> impl Iterator<Item = &str> {
        // Built from `&str` and lower-cased in ASCII only: still UTF-8.
        self.nids.iter().map(|n| std::str::from_utf8(n).expect("NIDs are ASCII"))
    }

    /// Whether `nid` (any case) is one of the filter's.
    pub fn accepts_nid(&self, nid: &[u8]) -> bool {
        self.nids.iter().any(|kept| kept.len() == nid.len() && kept.eq_ignore_ascii_case(nid))
    }

    /// Whether the URN `urn`, a valid one (as the scanner reports them),
    /// has one of the filter's NIDs. Only its start is looked at: `urn:` in
    /// any case, a kept NID, a colon; other bytes are not accepted.
    pub fn accepts(&self, urn: &[u8]) -> bool {
        let Some((scheme, rest)) = urn.split_at_checked(4) else { return false };
        // A kept NID followed by a colon is the NID: it holds none itself.
        // No search for the colon: on dense text a `memchr` per URN cost
        // more than the comparisons.
        scheme.eq_ignore_ascii_case(b"urn:")
            && self
                .nids
                .iter()
                .any(|nid| rest.get(nid.len()) == Some(&b':') && rest[..nid.len()].eq_ignore_ascii_case(nid))
    }
}

/// Whether `nid` is a NID under `grammar`: `urn:NID:x` parses, with that
/// NID (the NSS `x` is valid under both grammars).
fn check(nid: &str, grammar: Grammar) -> Result<(), InvalidNid> {
    let text = format!("urn:{nid}:x");
    let invalid = |error| InvalidNid { nid: nid.to_owned(), error };
    match parse(text.as_bytes(), grammar) {
        Ok(urn) if urn.nid() == nid => Ok(()),
        Ok(_) => Err(invalid(None)),
        Err(e) => Err(invalid(Some(e))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    fn filter(nids: &[&str]) -> NidFilter {
        NidFilter::new(nids, Grammar::Rfc8141).unwrap()
    }

    #[test]
    fn nids_compare_in_any_case() {
        let f = filter(&["ISBN", "x-Foo"]);
        assert_eq!(f.nids().collect::<Vec<_>>(), ["isbn", "x-foo"]);
        for urn in ["urn:isbn:1", "URN:ISBN:1", "uRn:iSbN:1", "urn:X-FOO:a"] {
            assert!(f.accepts(urn.as_bytes()), "{urn}");
        }
        for urn in ["urn:isbn2:1", "urn:isb:1", "urn:issn:1", "urn:x-foo-bar:a", "urn:example:isbn:1"] {
            assert!(!f.accepts(urn.as_bytes()), "{urn}");
        }
    }

    /// The grammar's reason is in the message, so it is not the source too
    /// (the crate doc, "Errors"): said once however the error is printed.
    #[test]
    fn an_invalid_nid_says_its_reason_once() {
        let e = NidFilter::new(["a_b"], Grammar::Rfc8141).unwrap_err();
        let reason = e.error.as_ref().expect("the grammar's error").description();
        assert_eq!(crate::error::chain_report(&e), format!("\"a_b\" is not a namespace identifier (NID): {reason}"));
        assert_eq!(crate::error::chain_report(&e).matches(reason).count(), 1);
    }

    #[test]
    fn repeats_are_one_nid() {
        assert_eq!(filter(&["isbn", "ISBN", "Isbn"]), filter(&["isbn"]));
    }

    #[test]
    fn an_empty_filter_keeps_nothing() {
        assert!(!filter(&[]).accepts(b"urn:isbn:1"));
    }

    #[test]
    fn bytes_that_are_not_a_urn_are_not_accepted() {
        let f = filter(&["isbn"]);
        for bytes in [&b""[..], b"urn:", b"urn:isbn", b"uri:isbn:1", b"isbn:1", b"urnxisbn:1"] {
            assert!(!f.accepts(bytes), "{:?}", String::from_utf8_lossy(bytes));
        }
    }

    /// RFC 8141 §2: NID = (alphanum) 0*30(ldh) (alphanum), so 2 to 32
    /// characters, letters, digits and inner hyphens.
    #[test]
    fn nids_follow_rfc_8141() {
        for ok in ["ab", "a1", "isbn", "urn-7", "x-foo", &"a".repeat(32)] {
            assert!(NidFilter::new([ok], Grammar::Rfc8141).is_ok(), "{ok}");
        }
        let kinds = |nid: &str| NidFilter::new([nid], Grammar::Rfc8141).unwrap_err();
        for bad in ["", "a", "-ab", "ab-", "a b", "is.bn", "ísbn", &"a".repeat(33)] {
            assert!(kinds(bad).error.is_some(), "{bad}");
        }
        // A colon ends the NID early: `urn:isbn:x:x` parses, with NID isbn.
        let colon = kinds("isbn:x");
        assert_eq!(colon.error, None);
        assert_eq!(colon.to_string(), "\"isbn:x\" is not a namespace identifier (NID): a NID holds no colon");
    }

    /// RFC 2141 §2: <NID> ::= <let-num> [ 1,31<let-num-hyp> ], so one
    /// character is enough, and a trailing hyphen is allowed.
    #[test]
    fn nids_follow_rfc_2141_in_legacy_mode() {
        for ok in ["a", "ab-", "isbn"] {
            assert!(NidFilter::new([ok], Grammar::Rfc2141).is_ok(), "{ok}");
        }
        let kind = |nid: &str, grammar| NidFilter::new([nid], grammar).unwrap_err().error.map(|e| e.kind());
        assert_eq!(kind("-a", Grammar::Rfc2141), Some(ErrorKind::NidLeadingHyphen));
        assert_eq!(kind("a", Grammar::Rfc8141), Some(ErrorKind::NidTooShort));
        // §2: "the NID "urn" is reserved and MUST NOT be used"; RFC 8141
        // makes it a reserved NID of valid syntax (§5.1).
        assert_eq!(kind("URN", Grammar::Rfc2141), Some(ErrorKind::NidReservedUrn));
        assert!(NidFilter::new(["urn"], Grammar::Rfc8141).is_ok());
    }
}
