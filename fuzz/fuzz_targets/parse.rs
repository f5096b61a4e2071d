//! Fuzz target: both grammars on arbitrary bytes.
//!
//! The properties are the library's own promises, checked without a second
//! grammar (the property tests in `tests/grammar_reference.rs` compare with
//! the RFC reference; this target hunts for panics and broken invariants on
//! inputs no generator would think of):
//!
//! - no panic, whatever the bytes;
//! - an accepted input round-trips through `Display` to the exact bytes, and
//!   `write_key` agrees with `key`;
//! - `parse_prefix` returns a prefix of the input that `parse` accepts whole,
//!   with the same parts and key; without such a prefix its error is
//!   `parse`'s;
//! - error offsets never pass the end of the input;
//! - a `NidFilter` (`scan --nid`) built from the input as a NID accepts
//!   `urn:NID:x` when it builds, and one built from an accepted URN's own
//!   NID, upper-cased, accepts that URN.

#![no_main]

use libfuzzer_sys::fuzz_target;
use urnscan::{parse, parse_prefix, Grammar, NidFilter};

fuzz_target!(|data: &[u8]| {
    for grammar in [Grammar::Rfc8141, Grammar::Rfc2141] {
        check_parse(data, grammar);
        check_parse_prefix(data, grammar);
        check_nid_filter(data, grammar);
    }
});

fn check_nid_filter(data: &[u8], grammar: Grammar) {
    if let Ok(nid) = std::str::from_utf8(data) {
        if let Ok(filter) = NidFilter::new([nid], grammar) {
            assert!(filter.accepts(format!("urn:{nid}:x").as_bytes()), "filter of {nid:?} rejects its own NID");
        }
    }
    if let Ok(urn) = parse(data, grammar) {
        let filter = NidFilter::new([urn.nid().to_ascii_uppercase()], grammar).expect("a parsed NID is a NID");
        assert!(filter.accepts(data), "filter of a URN's own NID rejects it");
    }
}

fn check_parse(data: &[u8], grammar: Grammar) {
    match parse(data, grammar) {
        Ok(urn) => {
            assert_eq!(urn.to_string().as_bytes(), data, "Display must give back the input");
            let key = urn.key();
            let mut buf = Vec::new();
            urn.write_key(&mut buf);
            assert_eq!(buf, key.as_bytes(), "write_key and key disagree");
            // Every accessor must be callable on any accepted input.
            let _ = (urn.nid(), urn.nss(), urn.assigned_name(), urn.nid_class());
            let _ = (urn.r_component(), urn.q_component(), urn.f_component());
        }
        Err(e) => {
            assert!(e.offset() <= data.len(), "offset {} past end {}", e.offset(), data.len());
            let _ = e.render(data);
        }
    }
}

fn check_parse_prefix(data: &[u8], grammar: Grammar) {
    match parse_prefix(data, grammar) {
        Ok(prefix) => {
            assert!(data.starts_with(prefix.as_bytes()), "not a prefix of the input");
            let whole = parse(prefix.as_bytes(), grammar).expect("parse rejects parse_prefix's result");
            assert_eq!(whole, prefix, "parts differ");
            assert_eq!(whole.key(), prefix.key(), "keys differ");
        }
        Err(e) => {
            assert!(e.offset() <= data.len(), "offset {} past end {}", e.offset(), data.len());
            assert_eq!(Err(e), parse(data, grammar).map(|u| u.len()), "error differs from parse's");
        }
    }
}
