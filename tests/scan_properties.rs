//! Property tests of the scanner against a plain reference.
//!
//! The reference below is the definition written as simply as possible: try
//! every position, skip those inside the last URN (or the bytes a too-long
//! candidate was judged on), check the left boundary from its written rule,
//! and apply the extraction rules. The fast paths
//! (SIMD candidate search, parallel chunks with boundary fix-ups, streaming
//! blocks) must give exactly the same events for any text, chunk size,
//! block size and thread count.

use std::sync::OnceLock;

use proptest::prelude::*;
use urnscan::extract::extract;
use urnscan::grammar::class::in_any_urn;
use urnscan::job::{absorb, scan_windows_keyed, Origin};
use urnscan::source::FailsOnce;
use urnscan::{parse, ErrorKind, Event, ExtractOptions, Grammar, Scanner, ShardedTable, MAX_URN_LEN};

fn reference(hay: &[u8], opts: ExtractOptions) -> Vec<Event> {
    let mut events = Vec::new();
    let mut resume = 0;
    for at in 0..hay.len() {
        if at < resume || !hay[at..].get(..4).is_some_and(|w| w.eq_ignore_ascii_case(b"urn:")) {
            continue;
        }
        if at > 0 {
            let before = hay[at - 1];
            let scheme_char = before.is_ascii_alphanumeric() || b"+-.".contains(&before);
            let pct_triplet =
                at >= 3 && hay[at - 3] == b'%' && hay[at - 2].is_ascii_hexdigit() && hay[at - 1].is_ascii_hexdigit();
            if scheme_char && !pct_triplet {
                continue;
            }
        }
        match extract(hay, at, opts) {
            Ok(urn) => {
                events.push(Event::Urn { offset: at, len: urn.len() });
                resume = at + urn.len();
            }
            Err(error) => {
                if error.kind() == ErrorKind::TooLong {
                    resume = at + MAX_URN_LEN + 1;
                }
                events.push(Event::Rejected { offset: at, error });
            }
        }
    }
    events
}

const FRAGMENTS: &[&str] = &[
    "urn:",
    "URN:",
    "Urn:",
    "urn:",
    "ab",
    "isbn",
    "x-",
    "-",
    "urn-7",
    "0451450523",
    ":",
    "/",
    "?+",
    "?=",
    "?",
    "#",
    "%2c",
    "%2C",
    "%",
    "%g",
    "'",
    "*",
    "**",
    "_",
    "___",
    "~~",
    "(",
    ")",
    ".",
    ",",
    ";",
    "!",
    " ",
    "\n",
    "\"",
    "<",
    ">",
    "\u{e9}",
    "return:",
    "x-urn:",
    "a.urn:",
    "%22",
    "=",
    "&",
    "~",
    "@",
    "q",
    "Z9",
];

fn text() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(prop::sample::select(FRAGMENTS), 0..60).prop_map(|parts| parts.concat().into_bytes())
}

fn options() -> impl Strategy<Value = ExtractOptions> {
    (any::<bool>(), any::<bool>()).prop_map(|(rfc2141, trim)| ExtractOptions {
        grammar: if rfc2141 { Grammar::Rfc2141 } else { Grammar::Rfc8141 },
        trim,
    })
}

fn pool(threads: usize) -> &'static rayon::ThreadPool {
    static POOLS: OnceLock<Vec<rayon::ThreadPool>> = OnceLock::new();
    let pools = POOLS
        .get_or_init(|| (1..=4).map(|n| rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap()).collect());
    &pools[threads - 1]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 10_000, ..ProptestConfig::default() })]

    #[test]
    fn parallel_chunks_equal_the_reference(
        hay in text(), opts in options(), chunk in prop_oneof![1usize..16, 16usize..200], threads in 1usize..=4
    ) {
        let expected = reference(&hay, opts);
        let scanner = Scanner::new(opts).with_chunk_size(chunk);
        let got = pool(threads).install(|| scanner.scan(&hay));
        prop_assert_eq!(&got, &expected);
        prop_assert_eq!(scanner.scan_sequential(&hay), expected);
    }

    #[test]
    fn streamed_blocks_equal_the_whole_scan(hay in text(), opts in options(), block in 1usize..64) {
        let scanner = Scanner::new(opts).with_chunk_size(7);
        let whole = scanner.scan(&hay);
        let mut streamed = Vec::new();
        let mut reader = &hay[..];
        let bytes = scanner.scan_reader(&mut reader, block, |_, base, events| {
            streamed.extend(events.iter().map(|e| shift(e, base as usize)));
            true
        }).unwrap();
        prop_assert_eq!(bytes as usize, hay.len());
        prop_assert_eq!(streamed, whole);
    }

    #[test]
    fn windows_equal_the_whole_scan(hay in text(), opts in options(), window in 1usize..64) {
        let scanner = Scanner::new(opts).with_chunk_size(5);
        let mut windowed = Vec::new();
        scanner.scan_windows(&hay, window, |events| {
            windowed.extend_from_slice(events);
            true
        });
        prop_assert_eq!(windowed, scanner.scan(&hay));
    }

    /// `Scanner::urns` is the reference's URN events, none left out, each
    /// with the parts a parse of its bytes gives.
    #[test]
    fn urns_are_the_reference_urn_events_parsed(hay in text(), opts in options(), chunk in 1usize..64) {
        let urns = Scanner::new(opts).with_chunk_size(chunk).urns(&hay);
        let expected: Vec<(usize, usize)> = reference(&hay, opts)
            .into_iter()
            .filter_map(|e| match e {
                Event::Urn { offset, len } => Some((offset, len)),
                Event::Rejected { .. } => None,
            })
            .collect();
        prop_assert_eq!(urns.iter().map(|(offset, urn)| (*offset, urn.as_bytes().len())).collect::<Vec<_>>(), expected);
        for (offset, urn) in &urns {
            let checked = parse(&hay[*offset..*offset + urn.as_bytes().len()], opts.grammar).unwrap();
            prop_assert_eq!((urn.nid(), urn.nss(), urn.key()), (checked.nid(), checked.nss(), checked.key()));
            prop_assert_eq!((urn.r_component(), urn.q_component(), urn.f_component()), (checked.r_component(), checked.q_component(), checked.f_component()));
        }
    }

    #[test]
    fn every_reported_urn_passes_check_with_the_same_key(hay in text(), opts in options()) {
        for event in Scanner::new(opts).scan(&hay) {
            if let Event::Urn { offset, len } = event {
                let found = &hay[offset..offset + len];
                let checked = parse(found, opts.grammar);
                prop_assert!(checked.is_ok(), "{:?}", String::from_utf8_lossy(found));
                let from_text = extract(&hay, offset, opts).unwrap();
                prop_assert_eq!(checked.unwrap().key(), from_text.key());
            }
        }
    }
}

fn long_text() -> impl Strategy<Value = Vec<u8>> {
    // Longer than the stream look-ahead (MAX_URN_LEN + a few bytes), so
    // blocks really split the text.
    // (Fragments average 2.3 bytes.)
    let n = MAX_URN_LEN;
    prop::collection::vec(prop::sample::select(FRAGMENTS), n * 3 / 4..n * 9 / 8)
        .prop_map(|parts| parts.concat().into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn streamed_blocks_equal_the_whole_scan_across_block_edges(hay in long_text(), opts in options(), block in 1usize..3000) {
        prop_assume!(hay.len() > MAX_URN_LEN + 16 + block);
        let scanner = Scanner::new(opts).with_chunk_size(61);
        let whole = scanner.scan(&hay);
        prop_assert_eq!(&whole, &reference(&hay, opts));
        let mut streamed = Vec::new();
        let mut blocks = 0;
        scanner.scan_reader(&mut &hay[..], block, |_, base, events| {
            blocks += 1;
            streamed.extend(events.iter().map(|e| shift(e, base as usize)));
            true
        }).unwrap();
        prop_assert!(blocks > 1);
        prop_assert_eq!(streamed, whole);
    }
}

/// Pieces of URN characters only, most of them starting or making `urn:`.
const RUN_FRAGMENTS: &[&str] =
    &["urn:", "URN:", "urn:ab:", "urn:x-y:", "ab", "x-", ":", "/", "%2c", ".", ",", "(", ")", "q"];

/// Runs of URN characters longer than `MAX_URN_LEN`, full of candidates,
/// now and then ended by a space or a line break, cut by an apostrophe
/// (rule 2) or a `%` that starts no escape, or taken into a component (a
/// second `#` ends a walk): the too-long candidates, whose bytes hide the
/// candidates inside them, and where they end.
fn run_text() -> impl Strategy<Value = Vec<u8>> {
    // A run of pieces (2.6 bytes on average) is about a third of
    // `MAX_URN_LEN` long, so that some runs are longer than it.
    const RUN_PIECES: u32 = MAX_URN_LEN as u32 / 8;
    let piece = prop_oneof![
        RUN_PIECES => prop::sample::select(RUN_FRAGMENTS),
        1 => prop::sample::select(&["'", "%", " ", "\n", "?+", "?=", "#"][..]),
    ];
    let n = MAX_URN_LEN;
    prop::collection::vec(piece, n / 2..n * 5 / 4).prop_map(|parts| parts.concat().into_bytes())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn long_runs_of_candidates_equal_the_reference_every_way(
        hay in run_text(), opts in options(), chunk in prop_oneof![1 => 1usize..64, 3 => 64usize..MAX_URN_LEN * 5 / 2],
        threads in 1usize..=4, block in 1usize..MAX_URN_LEN * 5 / 2, window in 1usize..MAX_URN_LEN * 5 / 2,
    ) {
        let expected = reference(&hay, opts);
        let scanner = Scanner::new(opts).with_chunk_size(chunk);
        prop_assert_eq!(&pool(threads).install(|| scanner.scan(&hay)), &expected);
        let mut streamed = Vec::new();
        scanner.scan_reader(&mut &hay[..], block, |_, base, events| {
            streamed.extend(events.iter().map(|e| shift(e, base as usize)));
            true
        }).unwrap();
        prop_assert_eq!(&streamed, &expected);
        let mut windowed = Vec::new();
        pool(threads).install(|| scanner.scan_windows(&hay, window, |events| {
            windowed.extend_from_slice(events);
            true
        }));
        prop_assert_eq!(&windowed, &expected);
    }
}

/// A stream of `hay` whose writer stops after some of its pieces, as a
/// `source::Live` stream reports it: `WouldBlock` once, then the next
/// piece. Each read after a pause checks that the scan has handed over
/// every event before the last space or line break written so far (such a
/// byte ends any URN, so nothing after it can change them): a paused
/// writer's URNs are not held back until it writes again.
struct Pausing<'a> {
    hay: &'a [u8],
    at: usize,
    /// Where pieces end, in order, each with whether the writer pauses there.
    cuts: Vec<(usize, bool)>,
    pause_next: bool,
    paused: bool,
    expected: &'a [Event],
    handed_over: &'a std::cell::RefCell<Vec<Event>>,
}

impl std::io::Read for Pausing<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.paused {
            self.paused = false;
            let judged = self.hay[..self.at].iter().rposition(|&b| b == b' ' || b == b'\n').map_or(0, |i| i + 1);
            let due = self.expected.iter().filter(|e| e.offset() < judged).count();
            let handed = self.handed_over.borrow().len();
            assert!(handed >= due, "after a pause at {}: {handed} events handed over, {due} due", self.at);
        }
        if self.pause_next {
            (self.pause_next, self.paused) = (false, true);
            return Err(std::io::ErrorKind::WouldBlock.into());
        }
        let cut = self.cuts.iter().find(|&&(end, _)| end > self.at).copied().unwrap_or((self.hay.len(), false));
        let n = buf.len().min(cut.0 - self.at);
        buf[..n].copy_from_slice(&self.hay[self.at..self.at + n]);
        self.at += n;
        self.pause_next = self.at == cut.0 && cut.1;
        Ok(n)
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// A stream whose writer pauses anywhere (within a URN, between two)
    /// gives the events of the whole scan, and the events before a pause
    /// as soon as it comes (see `Pausing`).
    #[test]
    fn paused_streams_equal_the_whole_scan(
        hay in text(), opts in options(), block in 1usize..64, cuts in prop::collection::vec((0usize..400, any::<bool>()), 0..12)
    ) {
        let scanner = Scanner::new(opts).with_chunk_size(7);
        let whole = scanner.scan(&hay);
        let mut cuts: Vec<(usize, bool)> = cuts.into_iter().filter(|&(at, _)| at > 0 && at <= hay.len()).collect();
        cuts.sort_unstable();
        cuts.dedup_by_key(|c| c.0);
        let handed_over = std::cell::RefCell::new(Vec::new());
        let mut reader =
            Pausing { hay: &hay, at: 0, cuts, pause_next: false, paused: false, expected: &whole, handed_over: &handed_over };
        let bytes = scanner.scan_reader(&mut reader, block, |_, base, events| {
            handed_over.borrow_mut().extend(events.iter().map(|e| shift(e, base as usize)));
            true
        }).unwrap();
        prop_assert_eq!(bytes as usize, hay.len());
        prop_assert_eq!(handed_over.into_inner(), whole);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// A stream that fails (a corrupt archive, a device error) gives the
    /// events of the reference over what came before the failure, up to
    /// its last byte that no URN can hold, and then the error: whatever
    /// follows that byte may be a URN the failure cut short.
    #[test]
    fn a_stream_cut_by_an_error_gives_no_urn_the_error_may_have_cut(
        hay in text(), opts in options(), block in 1usize..64, at in 0usize..400
    ) {
        use std::io::Read;
        let at = at.min(hay.len());
        let judged = hay[..at].iter().rposition(|&b| !in_any_urn(b)).map_or(0, |i| i + 1);
        let expected = reference(&hay[..judged], opts);
        let scanner = Scanner::new(opts).with_chunk_size(7);
        let mut reader = (&hay[..at]).chain(FailsOnce(Some(std::io::Error::other("cut"))));
        let mut handed = Vec::new();
        let result = scanner.scan_reader(&mut reader, block, |_, base, events| {
            handed.extend(events.iter().map(|e| shift(e, base as usize)));
            true
        });
        prop_assert_eq!(result.unwrap_err().to_string(), "cut");
        prop_assert_eq!(handed, expected);
    }
}

/// Text for the key table's test: runs of URN-like words that differ
/// only in what the key normalises (scheme and NID case, hex digit case) or
/// drops (r-, q-, f-components), so keys repeat in many spellings; `urn:`
/// inside NSSs, so that chunks starting inside a URN find candidates that
/// the in-order fix-up then removes; separators that end, trim, join or
/// break them.
fn key_text() -> impl Strategy<Value = Vec<u8>> {
    let pick = |choices: &'static [&'static str]| prop::sample::select(choices);
    let nss =
        prop::collection::vec(pick(&["a", "q", "0451", "%2c", "%2C", "%aF", "/", "/urn:ab:", "/URN:Ab:c", "."]), 1..5);
    let word = (
        pick(&["urn:", "URN:", "Urn:", "uRn:"]),
        pick(&["ab", "Ab", "AB", "isbn", "x-1", "a"]),
        nss,
        pick(&["", "", "?+r", "?=q", "#f", "?+r?=q#F", "?", "#", "%"]),
        pick(&[" ", " ", "\n", ". ", "(", ")", "/", "", "'", "\u{e9}", " x-urn:ab:c "]),
    );
    prop::collection::vec(word, 0..24).prop_map(|words| {
        let mut text = String::new();
        for (scheme, nid, nss, component, separator) in words {
            text.extend([scheme, nid, ":"]);
            text.extend(nss);
            text.extend([component, separator]);
        }
        text.into_bytes()
    })
}

/// key -> (count, first offset, first raw form)
type KeyClasses = std::collections::BTreeMap<Vec<u8>, (u64, u64, Vec<u8>)>;

/// The plain definition of the key table: every URN of the reference scan,
/// in order, parsed on its own and keyed by [`urnscan::Urn::key`].
fn reference_keys(hay: &[u8], opts: ExtractOptions) -> KeyClasses {
    let mut classes = KeyClasses::new();
    for event in reference(hay, opts) {
        if let Event::Urn { offset, len } = event {
            let raw = &hay[offset..offset + len];
            let key = parse(raw, opts.grammar).unwrap().key().as_bytes().to_vec();
            classes.entry(key).or_insert((0, offset as u64, raw.to_vec())).0 += 1;
        }
    }
    classes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2_000, ..ProptestConfig::default() })]

    /// The key table built as a run builds it (each chunk's keys from the
    /// key shapes its scan kept, rescans included) equals the reference.
    #[test]
    fn keys_from_the_scan_equal_the_parsed_reference(
        hay in key_text(),
        opts in options(),
        chunk in prop_oneof![1usize..8, 8usize..100],
        window in prop_oneof![1usize..50, Just(usize::MAX)],
        mapped in any::<bool>(),
        threads in 1usize..=4,
    ) {
        let scanner = Scanner::new(opts).with_chunk_size(chunk);
        let origin = Origin { file: 0, base: 0, grammar: opts.grammar, mapped, ns_rules: false };
        let mut table = ShardedTable::new();
        let mut events = Vec::new();
        pool(threads).install(|| {
            scan_windows_keyed(&scanner, &hay, window, origin, |window_events, keys| {
                events.extend_from_slice(window_events);
                absorb(&mut table, &keys, &hay);
                true
            })
        });
        prop_assert_eq!(events, reference(&hay, opts));
        let got: KeyClasses =
            table.sorted().iter().map(|e| (e.key.to_vec(), (e.count, e.first.offset, e.raw.to_vec()))).collect();
        prop_assert_eq!(got, reference_keys(&hay, opts));
    }
}

fn shift(event: &Event, base: usize) -> Event {
    match *event {
        Event::Urn { offset, len } => Event::Urn { offset: offset + base, len },
        Event::Rejected { offset, error } => Event::Rejected { offset: offset + base, error },
    }
}

#[test]
fn long_urns_and_streams_across_many_blocks() {
    // URNs longer than a block, a too-long candidate, and URNs that straddle
    // block and chunk edges.
    let mut hay = Vec::new();
    for i in 0..50 {
        hay.extend_from_slice(format!("x urn:ab:{}{} y ", "n".repeat(i * 37), i).as_bytes());
    }
    hay.extend_from_slice(b"urn:ab:");
    hay.extend(std::iter::repeat_n(b'z', MAX_URN_LEN + 10));
    hay.extend_from_slice(b" ");
    // 70,000 bytes of candidates: too long from 0 and from the first `urn:`
    // after the MAX_URN_LEN + 1 bytes that one covers, then a URN from the
    // first `urn:` after those of the second.
    hay.extend_from_slice(&b"urn:ab:".repeat(10_000));
    hay.extend_from_slice(b" urn:cd:tail.");
    let opts = ExtractOptions::default();
    let expected = reference(&hay, opts);
    assert_eq!(expected.iter().filter(|e| matches!(e, Event::Urn { .. })).count(), 52);
    let too_long: Vec<usize> = expected
        .iter()
        .filter(|e| matches!(e, Event::Rejected { error, .. } if error.kind() == ErrorKind::TooLong))
        .map(Event::offset)
        .collect();
    let run = hay.len() - b" urn:cd:tail.".len() - 70_000;
    let step = (MAX_URN_LEN + 1).next_multiple_of(7);
    assert!(70_000 - 2 * step < MAX_URN_LEN, "the third candidate is short enough to be a URN");
    assert_eq!(too_long[1..], [run, run + step]);
    assert!(
        expected.contains(&Event::Urn { offset: run + 2 * step, len: 70_000 - 2 * step - 1 }),
        "trailing `:` trimmed"
    );
    assert!(matches!(expected[50], Event::Rejected { error, .. } if error.kind() == ErrorKind::TooLong));
    for block in [1, 3, 4, 100, 4096, 1 << 20] {
        let scanner = Scanner::new(opts).with_chunk_size(97);
        let mut streamed = Vec::new();
        scanner
            .scan_reader(&mut &hay[..], block, |_, base, events| {
                streamed.extend(events.iter().map(|e| shift(e, base as usize)));
                true
            })
            .unwrap();
        assert_eq!(streamed, expected, "block {block}");
        assert_eq!(scanner.scan(&hay), expected);
    }
}
