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
//! | [`urn`] | [`Urn`], the zero-copy parsed view: NID, NSS, r/q/f components; [`UrnBuf`], the same owning its text |
//! | `key` (internal) | the RFC 8141 §3 equivalence key, which [`Urn::key`] and [`Urn::write_key`] give |
//! | [`nid`] | NID classes (RFC 8141 §5) from the embedded IANA registry, `--nid` filters, namespace rules ([`nid::rules`]) |
//! | [`error`] | [`UrnError`]: kind + offset + caret rendering |
//! | [`platform`] | the only `unsafe`: SIMD kernels (the `urn:` search, class runs, key delimiters; runtime dispatch, scalar fallback) and memory maps |
//! | [`find`] | candidates: each `urn:` the SIMD search finds, confirmed by the left-boundary rule |
//! | [`extract`] | where a URN ends in running text (longest valid prefix, apostrophes, trimming) |
//! | [`scan`] | [`Scanner`]: candidates → [`Event`]s over a buffer, sequential or in parallel chunks |
//! | [`dedup`] | [`KeyTable`]: distinct keys in an arena, counts, first occurrences; [`ShardedTable`]: the same, filled by all threads at once |
//! | [`lines`] | datasets of one URN per line (`urnscan dedup`): each line judged whole, rejected lines reported, classes counted in 64 partitions, spilled to disk past a memory limit |
//! | [`source`] | inputs: walking directories, mapping, reading or streaming files; binary files |
//! | [`decompress`] | gzip and zstd inputs (`-z`), recognised by magic, decoded ahead on their own threads |
//! | [`transcode`] | UTF-16 inputs, recognised by their byte-order mark, transcoded to UTF-8 as they are read |
//! | [`job`] | a whole run over many inputs, results handed to a [`job::Sink`] in input order |
//! | [`stats`] | per-NID statistics of a finished key table: occurrences, distinct keys, class |
//! | [`hashed`] | byte strings that carry their hash, for std's `HashMap` (the per-NID counts) |
//! | [`ordered`] | output formatted a block at a time on several threads, written in order |
//! | [`corpus`] | deterministic corpora with planted URNs and their ground truth |
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
//!
//! A [`Urn`] borrows the bytes it was parsed from. To keep URNs beyond
//! their input, or to parse one from a string, use [`UrnBuf`], which owns
//! its text and gives the same parts through [`UrnBuf::as_urn`]:
//!
//! ```
//! use urnscan::{ExtractOptions, Scanner, UrnBuf};
//!
//! let mut kept: Vec<UrnBuf> = Vec::new();
//! let scanner = Scanner::new(ExtractOptions::default());
//! let mut line = String::new();
//! for text in ["See urn:isbn:0451450523.", "and URN:ISBN:0451450523#p3"] {
//!     line.clear();
//!     line.push_str(text); // one buffer, reused
//!     kept.extend(scanner.urns(line.as_bytes()).into_iter().map(|(_, urn)| urn.to_urn_buf()));
//! }
//! assert_eq!(kept[1].to_string(), "URN:ISBN:0451450523#p3");
//! assert_eq!(kept[0].as_urn().key(), kept[1].as_urn().key());
//!
//! let urn: UrnBuf = "urn:ietf:rfc:8141".parse()?; // RFC 8141; UrnBuf::parse takes the grammar
//! assert_eq!(urn.as_urn().nss(), "rfc:8141");
//! # Ok::<(), urnscan::UrnError>(())
//! ```
//!
//! ## Finding URNs in a buffer
//!
//! ```
//! use urnscan::{Event, ExtractOptions, Scanner};
//!
//! let text = b"See urn:isbn:0451450523. Also xmlns='urn:ietf:params:xml:ns:xmpp-tls'/> and return:x";
//! let scanner = Scanner::new(ExtractOptions::default());
//! let found: Vec<&[u8]> = scanner
//!     .scan(text)
//!     .into_iter()
//!     .filter_map(|e| match e {
//!         Event::Urn { offset, len } => Some(&text[offset..offset + len]),
//!         Event::Rejected { .. } => None,
//!     })
//!     .collect();
//! assert_eq!(found, [&b"urn:isbn:0451450523"[..], b"urn:ietf:params:xml:ns:xmpp-tls"]);
//! ```
//!
//! ## Choosing the threads
//!
//! Parallel work (a scan split into chunks, a [`job`], a deduplication)
//! runs on the current [rayon] thread pool: the global one, with a thread
//! per core, unless called from [`ThreadPool::install`](rayon::ThreadPool::install).
//! The crate re-exports its rayon as [`urnscan::rayon`](crate::rayon), so
//! that a caller builds that pool without depending on the same rayon
//! version:
//!
//! ```
//! use urnscan::rayon::ThreadPoolBuilder;
//! use urnscan::{Event, ExtractOptions, Scanner};
//!
//! let pool = ThreadPoolBuilder::new().num_threads(2).build()?;
//! let text = "urn:isbn:0451450523 ".repeat(100_000);
//! let scanner = Scanner::new(ExtractOptions::default());
//! let events = pool.install(|| {
//!     assert_eq!(urnscan::rayon::current_num_threads(), 2);
//!     scanner.scan(text.as_bytes())
//! });
//! assert_eq!(events.len(), 100_000);
//! assert!(events.iter().all(|e| matches!(e, Event::Urn { len: 19, .. })));
//! # Ok::<(), urnscan::rayon::ThreadPoolBuildError>(())
//! ```
//!
//! ## Errors
//!
//! Each error type is concrete and public, with its parts in public
//! fields, and says each cause once: either in its own message, and then
//! [`source`](std::error::Error::source) is `None` ([`source::InputError`]
//! says the I/O error, [`nid::InvalidNid`] the grammar's reason,
//! [`decompress::DecodeError`] the decoder's error), or as its `source`,
//! and then not in its message ([`lines::FeedError`], whose message says
//! which side failed). So printing the message alone (`{}`) never leaves a
//! cause out, and printing the whole chain (anyhow's `{:#}`) never says
//! one twice.
#![deny(unsafe_code)]
#![warn(missing_docs)]

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

pub mod corpus;
pub mod decompress;
pub mod dedup;
pub mod error;
pub mod extract;
pub mod find;
pub mod grammar;
pub mod hashed;
pub mod job;
mod key;
pub mod lines;
pub mod nid;
pub mod ordered;
pub mod platform;
pub mod scan;
pub mod source;
pub mod stats;
pub mod transcode;
pub mod urn;

pub use dedup::{KeyTable, Position, ShardedTable};
pub use error::{ErrorKind, UrnError};
pub use extract::ExtractOptions;
pub use grammar::{parse, parse_prefix, Grammar, MAX_URN_LEN};
pub use nid::{classify as classify_nid, NidClass, NidClassifier, NidFilter};
pub use scan::{Event, Scanner};
pub use urn::{Urn, UrnBuf};

/// The rayon this crate runs its parallel work on, so that a caller sets
/// the thread count (`urnscan::rayon::ThreadPoolBuilder`, then
/// `ThreadPool::install`) without depending on the same rayon version; see
/// [Choosing the threads](crate#choosing-the-threads).
pub use rayon;
