//! Fuzz target: the scanner on arbitrary bytes.
//!
//! `tests/scan_properties.rs` compares the scanner with a reference on text
//! built from URN-like fragments; this target feeds it bytes no generator
//! would write (NULs, lone `%`, `urn:` glued to anything, broken UTF-8) and
//! checks, under one of the four option sets (RFC 8141 or 2141, trimming on
//! or off, chosen by the input's length):
//!
//! - every candidate the written rules define (`urn:` in any case, not after
//!   a URI-scheme character unless that ends a `%HH` triplet, not inside the
//!   previous URN or the `MAX_URN_LEN + 1` bytes a too-long candidate was
//!   judged on) gets exactly one event, in order, and nothing else does;
//! - a URN event is what [`extract`] gives at that offset, starts with
//!   `urn:`, is at most `MAX_URN_LEN` bytes, and passes [`parse`] whole with
//!   the same parts and key; a rejection carries [`extract`]'s error, at
//!   an offset within its [`candidate_text`] or at its end;
//! - [`Scanner::scan_span_with`] over the whole input with chunks of 1, 7,
//!   64 and 4096 bytes (those that cut the input into at most 2,500
//!   chunks), whose per-chunk results, concatenated, are its events, and
//!   [`Scanner::scan_sequential`] with every other available SIMD kernel, give
//!   exactly the sequential events, and [`Scanner::urns`] parses every URN
//!   event of them;
//! - [`Scanner::scan_reader`], fed by a reader that returns short reads, with
//!   blocks of 1, 5 and 64 bytes, gives the same events at the same stream
//!   offsets and counts every byte (blocks of 64 and 1000 bytes for inputs
//!   over `MAX_URN_LEN`, which are the only ones the reader cuts: a block
//!   is judged only with `MAX_URN_LEN` bytes of look-ahead behind it);
//!   and so does a reader that also pauses (fails with `WouldBlock`, as a
//!   live pipe does) every few calls, with blocks of 64 bytes.
//!
//! Run with `-max_len=70000` so that inputs long enough to be cut into
//! several stream blocks (longer than `MAX_URN_LEN`) are explored.

#![no_main]

#[path = "shared/dribble.rs"]
mod dribble;
use dribble::Dribble;

use libfuzzer_sys::fuzz_target;
use urnscan::extract::{candidate_text, extract};
use urnscan::platform::simd::{Kernel, UrnFinder};
use urnscan::{parse, ErrorKind, Event, ExtractOptions, Grammar, Scanner, MAX_URN_LEN};

const OPTIONS: [ExtractOptions; 4] = [
    ExtractOptions { grammar: Grammar::Rfc8141, trim: true },
    ExtractOptions { grammar: Grammar::Rfc8141, trim: false },
    ExtractOptions { grammar: Grammar::Rfc2141, trim: true },
    ExtractOptions { grammar: Grammar::Rfc2141, trim: false },
];

fuzz_target!(|data: &[u8]| {
    // One option set per input (by length, so every set sees every kind of
    // input as the fuzzer grows and shrinks them): four scans per input
    // would cut the execution rate by four.
    let opts = OPTIONS[data.len() % OPTIONS.len()];
    let scanner = Scanner::new(opts);
    let events = scanner.scan_sequential(data);
    check_events(data, opts, &events);
    check_chunked(data, &scanner, &events);
    check_kernels(data, opts, &events);
    check_reader(data, &scanner, &events);
});

/// The candidate rule, written from its definition rather than from `find`.
fn is_candidate(hay: &[u8], at: usize) -> bool {
    if !hay[at..].get(..4).is_some_and(|w| w.eq_ignore_ascii_case(b"urn:")) {
        return false;
    }
    let Some(&before) = at.checked_sub(1).map(|i| &hay[i]) else { return true };
    let scheme_char = before.is_ascii_alphanumeric() || b"+-.".contains(&before);
    let triplet = at >= 3 && hay[at - 3] == b'%' && hay[at - 2].is_ascii_hexdigit() && before.is_ascii_hexdigit();
    !scheme_char || triplet
}

fn check_events(data: &[u8], opts: ExtractOptions, events: &[Event]) {
    let mut next = events.iter();
    let mut resume = 0;
    for at in 0..data.len() {
        if at < resume || !is_candidate(data, at) {
            continue;
        }
        let event = next.next().unwrap_or_else(|| panic!("candidate {at} has no event"));
        assert_eq!(event.offset(), at, "events out of step with candidates");
        let extracted = extract(data, at, opts);
        match *event {
            Event::Urn { offset, len } => {
                let urn = extracted.expect("a URN event where extract fails");
                assert_eq!(urn.len(), len);
                assert!(len <= MAX_URN_LEN, "URN of {len} bytes");
                let text = &data[offset..offset + len];
                assert!(text[..4].eq_ignore_ascii_case(b"urn:"));
                let whole = parse(text, opts.grammar).expect("a reported URN fails parse");
                assert_eq!(whole, urn, "parts differ");
                assert_eq!(whole.key(), urn.key(), "keys differ");
                resume = offset + len;
            }
            Event::Rejected { offset, error } => {
                assert_eq!(extracted.map(|u| u.len()), Err(error));
                // Its text (what --invalid shows) starts with `urn:`, and
                // the error lies within it or at its end.
                let text = candidate_text(data, offset);
                assert!(text.len() >= 4 && error.offset() <= text.len(), "error {error:?} past {text:?}");
                if error.kind() == ErrorKind::TooLong {
                    resume = offset + MAX_URN_LEN + 1;
                }
            }
        }
    }
    assert!(next.next().is_none(), "an event that is not a candidate");
}

fn check_chunked(data: &[u8], scanner: &Scanner, events: &[Event]) {
    // At most ~2,500 chunks, so that long inputs keep the fuzzer fast;
    // inputs up to 2.5 KiB get every size.
    for chunk in [1, 7, 64, 4096].into_iter().filter(|c| data.len() / c <= 2500) {
        // The per-chunk results are of runs of the final events, in order.
        let (chunked, runs) = scanner.with_chunk_size(chunk).scan_span_with(data, 0, data.len(), None, |e| e.to_vec());
        assert_eq!(chunked, events, "chunk size {chunk}");
        assert_eq!(runs.concat(), events, "chunk size {chunk}: per-chunk results");
    }
    // The parsed URNs are the URN events, none left out.
    let urns: Vec<(usize, usize)> = scanner.urns(data).iter().map(|(at, urn)| (*at, urn.as_bytes().len())).collect();
    let urn_events: Vec<(usize, usize)> = events
        .iter()
        .filter_map(|e| match *e {
            Event::Urn { offset, len } => Some((offset, len)),
            Event::Rejected { .. } => None,
        })
        .collect();
    assert_eq!(urns, urn_events, "Scanner::urns");
}

fn check_kernels(data: &[u8], opts: ExtractOptions, events: &[Event]) {
    // `Scanner::new` already uses the best kernel.
    for kernel in Kernel::available().into_iter().filter(|&k| k != Kernel::best()) {
        let finder = UrnFinder::with_kernel(kernel).expect("an available kernel");
        let scanner = Scanner::new(opts).with_finder(finder);
        assert_eq!(scanner.scan_sequential(data), events, "kernel {}", kernel.name());
    }
}

fn check_reader(data: &[u8], scanner: &Scanner, events: &[Event]) {
    // Each block moves the look-ahead (`MAX_URN_LEN` + 8 bytes) to the front of the buffer,
    // so the tiniest blocks are kept for inputs that fit in one fill.
    let blocks: &[usize] = if data.len() <= MAX_URN_LEN { &[1, 5, 64] } else { &[64, 1000] };
    let readers = blocks.iter().map(|&block| (block, Dribble::new(data)));
    for (block, mut reader) in readers.chain([(64, Dribble::pausing(data, 3 + data.len() % 5))]) {
        let mut got = Vec::new();
        let read = scanner
            .scan_reader(&mut reader, block, |_, base, block_events| {
                got.extend(block_events.iter().map(|e| shift(e, base as usize)));
                true
            })
            .expect("an in-memory reader cannot fail");
        assert_eq!(read, data.len() as u64, "block {block}: bytes read");
        assert_eq!(got, events, "block {block}");
    }
}

fn shift(event: &Event, base: usize) -> Event {
    match *event {
        Event::Urn { offset, len } => Event::Urn { offset: base + offset, len },
        Event::Rejected { offset, error } => Event::Rejected { offset: base + offset, error },
    }
}
