//! # urnscan
//!
//! Find, validate, deduplicate and count URNs in large text corpora.
//!
//! The crate is built in layers, each a module with one job; a byte of input
//! travels through them in this order:
//!
//! | module | job |
//! |---|---|
//! | [`grammar`] (+ [`grammar::class`]) | validate a byte string against RFC 8141 or RFC 2141 with 256-entry class tables; [`parse`] and [`parse_prefix`] |
//! | [`urn`] | [`Urn`], the zero-copy parsed view: NID, NSS, r/q/f components |
//! | [`key`] | the RFC 8141 §3 equivalence key |
//! | [`nid`] | NID classes (RFC 8141 §5) from the embedded IANA registry |
//! | [`error`] | [`UrnError`]: kind + offset + caret rendering |
//!
//! ## Validating one URN
//!
//! ```
//! use urnscan::{parse, Grammar, NidClass};
//!
//! let urn = parse(b"urn:IETF:rfc:8141?+res#frag", Grammar::Rfc8141)?;
//! assert_eq!(urn.nid(), "IETF");
//! assert_eq!(urn.nss(), "rfc:8141");
//! assert_eq!(urn.r_component(), Some("res"));
//! assert_eq!(urn.f_component(), Some("frag"));
//! assert_eq!(urn.key(), "urn:ietf:rfc:8141");
//! assert_eq!(urn.nid_class(), NidClass::Formal);
//! assert_eq!(urn.to_string(), "urn:IETF:rfc:8141?+res#frag");
//!
//! let err = parse(b"urn:ab:c?x", Grammar::Rfc8141).unwrap_err();
//! assert_eq!(err.kind().as_str(), "lone-question-mark");
//! println!("{}", err.render(b"urn:ab:c?x")); // message + caret under the offending byte
//! # Ok::<(), urnscan::UrnError>(())
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

pub mod error;
pub mod grammar;
pub mod key;
pub mod nid;
pub mod urn;

pub use error::{ErrorKind, UrnError};
pub use grammar::{parse, parse_prefix, Grammar, MAX_URN_LEN};
pub use nid::{classify as classify_nid, NidClass};
pub use urn::Urn;
pub mod dedup;
pub mod extract;
pub mod find;
pub mod gen;
pub mod platform;
pub mod scan;
