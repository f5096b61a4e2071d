//! NID classes (RFC 8141 §5).
//!
//! The IANA registry of URN namespaces is compiled into the binary
//! (`iana-urn-namespaces.tsv`, a copy of the registry dated in its header),
//! so classification needs no file at run time. A [`NidClassifier`] parses
//! it once into a hash set (one lookup per NID); hold one when
//! classifying many NIDs. The free function [`classify`] walks the
//! registry's text on each call, building nothing (no allocation), which
//! is fine for a handful of NIDs and keeps the crate free of global state.
//!
//! [`NidFilter`] (in `filter.rs`) is the other question asked of a NID:
//! is it one of the namespaces a run keeps (`urnscan scan --nid`)? And
//! [`rules`] holds what some namespaces' own RFCs add to RFC 8141's
//! equivalence (`--ns-rules`).

mod filter;
pub mod rules;

pub use filter::{InvalidNid, NidFilter};

use std::collections::HashSet;
use std::fmt;

use foldhash::fast::FixedState;

/// The embedded IANA registry: `nid<TAB>reference<TAB>kind<TAB>registered`.
pub const IANA_REGISTRY_TSV: &str = include_str!("iana-urn-namespaces.tsv");

/// What kind of namespace a NID names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NidClass {
    /// Registered with IANA as a formal namespace (RFC 8141 §5.1).
    Formal,
    /// `urn-` followed by a number without leading zero (RFC 8141 §5.2),
    /// registered or not.
    Informal,
    /// Set aside by RFC 8141 §5.1: NIDs of one or two characters, anything
    /// starting with two letters and "-" (country codes, "xn--"), "urn-"
    /// that is not an informal NID, and "urn" itself.
    Reserved,
    /// "x-" prefix: the experimental namespaces of RFC 3406, removed by
    /// RFC 8141 Appendix C, which adds that such strings "are not valid
    /// URNs" since nobody manages those namespaces: their syntax is valid,
    /// and this class is what tells them apart.
    Experimental,
    /// Valid syntax, but none of the above.
    Unregistered,
}

impl NidClass {
    /// `formal`, `informal`, `reserved`, `experimental` or `unregistered`.
    pub fn as_str(self) -> &'static str {
        match self {
            NidClass::Formal => "formal",
            NidClass::Informal => "informal",
            NidClass::Reserved => "reserved",
            NidClass::Experimental => "experimental",
            NidClass::Unregistered => "unregistered",
        }
    }
}

impl fmt::Display for NidClass {
    /// [`NidClass::as_str`], padded as asked (`{:<12}`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// Classifies a NID (any case). The NID is assumed to be valid syntax.
///
/// ```
/// use urnscan::{classify_nid, NidClass};
/// assert_eq!(classify_nid(b"ISBN"), NidClass::Formal);
/// assert_eq!(classify_nid(b"urn-7"), NidClass::Informal);
/// assert_eq!(classify_nid(b"xn--abc"), NidClass::Reserved);
/// assert_eq!(classify_nid(b"x-foo"), NidClass::Experimental);
/// assert_eq!(classify_nid(b"acme"), NidClass::Unregistered);
/// ```
pub fn classify(nid: &[u8]) -> NidClass {
    // One walk of the registry's text, with nothing built: a classifier
    // built per call made 1,000 calls of `Urn::nid_class` take 23 ms.
    if registry_kind(nid) == Some("formal") {
        NidClass::Formal
    } else {
        classify_shape(nid)
    }
}

/// The embedded registry, parsed once: classify many NIDs cheaply.
#[derive(Clone, Debug)]
pub struct NidClassifier {
    /// Registered formal NIDs, lower-cased. A hash lookup rather than a
    /// binary search among the 100-odd names: the per-NID statistics of a
    /// dump can classify hundreds of thousands of NIDs, and each step of
    /// the search was a mispredicted branch and a string comparison (on
    /// 256 MiB of dense text with 130,000 NIDs, 1.8 % of `scan --stats`).
    formal: HashSet<Box<[u8]>, FixedState>,
}

impl Default for NidClassifier {
    fn default() -> Self {
        NidClassifier::new()
    }
}

impl NidClassifier {
    /// Parses the embedded IANA registry.
    pub fn new() -> NidClassifier {
        let formal = registry()
            .filter(|(_, kind)| *kind == "formal")
            .map(|(nid, _)| nid.to_ascii_lowercase().into_bytes().into_boxed_slice())
            .collect();
        NidClassifier { formal }
    }

    /// The class of `nid` (any case; assumed to be valid syntax).
    pub fn classify(&self, nid: &[u8]) -> NidClass {
        let mut lower = [0u8; 32];
        let formal = nid.len() <= lower.len() && {
            let lower = &mut lower[..nid.len()];
            lower.copy_from_slice(nid);
            lower.make_ascii_lowercase();
            self.formal.contains(&lower[..])
        };
        if formal {
            NidClass::Formal
        } else {
            classify_shape(nid)
        }
    }
}

/// The class of a NID that is not registered as formal, from its shape.
fn classify_shape(nid: &[u8]) -> NidClass {
    if is_informal(nid) {
        NidClass::Informal
    } else if is_reserved(nid) {
        NidClass::Reserved
    } else if starts_with_ignore_case(nid, b"x-") {
        NidClass::Experimental
    } else {
        NidClass::Unregistered
    }
}

/// The registry's `kind` column for `nid`, if IANA lists it.
pub fn registry_kind(nid: &[u8]) -> Option<&'static str> {
    registry().find(|(name, _)| name.as_bytes().eq_ignore_ascii_case(nid)).map(|(_, kind)| kind)
}

/// Every `(nid, kind)` of the embedded registry.
pub fn registry() -> impl Iterator<Item = (&'static str, &'static str)> {
    IANA_REGISTRY_TSV.lines().filter(|l| !l.starts_with('#')).skip(1).filter_map(|line| {
        let mut cols = line.split('\t');
        let nid = cols.next()?;
        let kind = cols.nth(1)?;
        Some((nid, kind))
    })
}

/// `"urn-" Number`, `Number = DigitNonZero *Digit` (RFC 8141 §5.2).
fn is_informal(nid: &[u8]) -> bool {
    match strip_prefix_ignore_case(nid, b"urn-") {
        Some([first, rest @ ..]) => matches!(first, b'1'..=b'9') && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

fn is_reserved(nid: &[u8]) -> bool {
    let country_code_shape = nid.len() >= 3 && nid[..2].iter().all(u8::is_ascii_alphabetic) && nid[2] == b'-';
    nid.len() <= 2 || country_code_shape || nid.eq_ignore_ascii_case(b"urn") || starts_with_ignore_case(nid, b"urn-")
}

fn strip_prefix_ignore_case<'a>(s: &'a [u8], prefix: &[u8]) -> Option<&'a [u8]> {
    starts_with_ignore_case(s, prefix).then(|| &s[prefix.len()..])
}

fn starts_with_ignore_case(s: &[u8], prefix: &[u8]) -> bool {
    s.len() >= prefix.len() && s[..prefix.len()].eq_ignore_ascii_case(prefix)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_the_name_padded_as_asked() {
        assert_eq!(format!("{}", NidClass::Formal), "formal");
        assert_eq!(format!("[{:<12}]", NidClass::Formal), "[formal      ]");
        assert_eq!(format!("[{:^8}]", NidClass::Reserved), "[reserved]");
    }

    #[test]
    fn registry_is_embedded_and_parsed() {
        let all: Vec<_> = registry().collect();
        assert!(all.len() > 100, "{}", all.len());
        assert!(all.iter().all(|(_, kind)| *kind == "formal" || *kind == "informal"));
        assert_eq!(registry_kind(b"IETF"), Some("formal"));
        assert_eq!(registry_kind(b"urn-7"), Some("informal"));
        assert_eq!(registry_kind(b"nid"), None);
    }

    #[test]
    fn classes_follow_rfc8141_section5() {
        let cases: &[(&[u8], NidClass)] = &[
            (b"ietf", NidClass::Formal),
            (b"UUID", NidClass::Formal),
            (b"3gpp", NidClass::Formal),
            (b"urn-1", NidClass::Informal),
            (b"urn-8", NidClass::Informal),
            (b"urn-1234", NidClass::Informal), // not registered, still the informal shape
            (b"URN-10", NidClass::Informal),
            (b"urn-0", NidClass::Reserved),
            (b"urn-01", NidClass::Reserved),
            (b"urn-x", NidClass::Reserved),
            (b"urn", NidClass::Reserved),
            (b"ab", NidClass::Reserved),
            (b"a", NidClass::Reserved),
            (b"de-", NidClass::Reserved),
            (b"de-bund", NidClass::Reserved),
            (b"xn--abc", NidClass::Reserved),
            (b"XN--abc", NidClass::Reserved),
            (b"x-foo", NidClass::Experimental),
            (b"X-Foo", NidClass::Experimental),
            (b"1a-b", NidClass::Unregistered),
            (b"example-x", NidClass::Unregistered),
            (b"acme", NidClass::Unregistered),
        ];
        let classifier = NidClassifier::new();
        for (nid, class) in cases {
            assert_eq!(classify(nid), *class, "{}", String::from_utf8_lossy(nid));
            assert_eq!(classifier.classify(nid), *class, "{}", String::from_utf8_lossy(nid));
        }
        // Every formal registry entry is formal, whatever its case.
        for (nid, kind) in registry().filter(|(_, k)| *k == "formal") {
            assert_eq!(classifier.classify(nid.to_ascii_uppercase().as_bytes()), NidClass::Formal, "{nid} {kind}");
        }
    }

    proptest::proptest! {
        /// The classifier (and `classify`) agrees with a plain scan of the registry: formal
        /// when IANA lists the NID (any case) as formal, else by its shape.
        /// NIDs are registry names in random case, cut short or extended,
        /// and random ones.
        #[test]
        fn classifier_equals_a_scan_of_the_registry(
            pick in 0usize..200,
            cut in 0usize..40,
            extra in "[a-z0-9-]{0,3}",
            random in "[a-zA-Z0-9][a-zA-Z0-9-]{0,34}",
            flips in proptest::collection::vec(proptest::bool::ANY, 40),
        ) {
            let names: Vec<&str> = registry().map(|(nid, _)| nid).collect();
            let name = names[pick % names.len()];
            let cased: String = name
                .chars()
                .zip(&flips)
                .map(|(c, &up)| if up { c.to_ascii_uppercase() } else { c })
                .collect();
            let classifier = NidClassifier::new();
            for nid in [cased.clone(), format!("{}{extra}", &cased[..cut.min(cased.len())]), random] {
                let want = match registry_kind(nid.as_bytes()) {
                    Some("formal") => NidClass::Formal,
                    _ => classify_shape(nid.as_bytes()),
                };
                proptest::prop_assert_eq!(classifier.classify(nid.as_bytes()), want, "{}", nid);
                proptest::prop_assert_eq!(classify(nid.as_bytes()), want, "{}", nid);
            }
        }
    }
}
