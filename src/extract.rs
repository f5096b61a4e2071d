//! From a candidate to a URN: where does a URN end in running text?
//!
//! Given the position of a candidate `urn:`, [`extract`] applies the rules
//! in order:
//!
//! 1. the longest prefix that is a valid URN under the chosen grammar;
//! 2. after an apostrophe (`xmlns='urn:...'`), the URN ends before the next
//!    apostrophe;
//! 3. unless trimming is off, trailing sentence punctuation is dropped
//!    (`.` `,` `;` `:` `!` `?` `'`, and `)` while the URN holds more `)`
//!    than `(`), then the longest valid prefix is taken again so that a
//!    dangling `?+`, `?=` or `#` goes too (a `#` only when trimming exposed
//!    it: `urn:ab:c#` alone has a valid, empty f-component). Under RFC 2141
//!    nothing dangles: it has no components, and `?`, `+`, `=` and `#` are
//!    NSS characters (`urn:ab:c#.` gives `urn:ab:c#`, as `urn:ab:c?+.`
//!    gives `urn:ab:c?+`). Trimming never enters `urn:NID:`; when no NSS is
//!    left the candidate yields nothing. And after a run of `*`, `_` or `~`
//!    that starts a word (Markdown emphasis: `**urn:isbn:0451450523**`,
//!    `_urn:ab:c_`, `~~urn:ab:c~~`, `**_urn:ab:c_**`; the three marks
//!    nearest the candidate, of a longer run), its mirror image at the URN's
//!    end is dropped once, before or after the punctuation, and a `#` that
//!    exposes goes as trimming's does: all three are URN characters, so
//!    without it the closing marks were part of the URN, and one name
//!    written in bold and plain counted as two. A run after a letter or
//!    digit (`field_urn:...`) is no emphasis.
//!
//! Rule 4 (matches never overlap) belongs to the caller, which resumes after
//! the URN returned here. A candidate that yields nothing reports the error
//! `check` gives for the longest attempt, which ends where the candidate
//! does: at an ASCII byte no URN holds (a space, a quote, `<`, a control
//! character), as a line ends for `check`. So `urn:ab: x` has an empty NSS
//! (not a space in its NSS) and `"urn:"` an empty NID; a non-ASCII byte
//! ends nothing (`urn:ab:é` stays `non-ascii`).

use crate::error::{ErrorKind, UrnError};
use crate::grammar::class::in_any_urn;
use crate::grammar::{parse, parse_prefix, Grammar, MAX_URN_LEN};
use crate::urn::Urn;

/// How URNs are delimited in text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ExtractOptions {
    /// The grammar URNs must satisfy.
    pub grammar: Grammar,
    /// Rule 3: trim trailing sentence punctuation, and Markdown emphasis
    /// marks that close a run before the candidate.
    pub trim: bool,
}

/// RFC 8141, with trailing punctuation trimmed (rule 3), as `urnscan scan`
/// runs without options.
impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions { grammar: Grammar::Rfc8141, trim: true }
    }
}

/// The URN that starts at `at` (where `hay[at..]` begins with `urn:`), or
/// why there is none. The error offset is relative to `at`.
///
/// # Panics
///
/// If `at > hay.len()`.
pub fn extract(hay: &[u8], at: usize, opts: ExtractOptions) -> Result<Urn<'_>, UrnError> {
    let window = window(hay, at);
    let urn = parse_prefix(window, opts.grammar).map_err(|e| judged_to_its_end(window, e, opts.grammar))?;
    if opts.trim {
        trim(window, urn, opts.grammar, emphasis_before(hay, at))
    } else {
        Ok(urn)
    }
}

/// The text of the candidate at `at` (where `hay[at..]` begins with
/// `urn:`) that [`extract`] rejects: its bytes up to where it ends, by the
/// rules [`extract`] judges it by (see the module doc): before the first
/// ASCII byte that no URN holds (a space, a quote, `<`, a control
/// character), and after an apostrophe before the next one (rule 2). A
/// non-ASCII byte ends nothing: `urn:ab:é x` gives `urn:ab:é`. At most
/// [`MAX_URN_LEN`] + 1 bytes, the most [`extract`] reads; the error's
/// offset lies within the text or at its end. What
/// [`Sink::rejected`](crate::job::Sink::rejected) is given of a rejected
/// candidate is its first 64 bytes.
///
/// ```
/// use urnscan::extract::candidate_text;
/// let text = b"see urn:ab:/a urn:ab:ok and 'urn:ab:/b'c'";
/// assert_eq!(candidate_text(text, 4), b"urn:ab:/a");
/// assert_eq!(candidate_text(text, 29), b"urn:ab:/b");
/// ```
///
/// # Panics
///
/// If `at > hay.len()`.
pub fn candidate_text(hay: &[u8], at: usize) -> &[u8] {
    let window = window(hay, at);
    &window[..window.iter().position(|&b| ends_candidate(b)).unwrap_or(window.len())]
}

/// The most of `hay` from `at` that a candidate there may span: the
/// longest URN and one byte more, and after an apostrophe, no further than
/// the next one (rule 2).
fn window(hay: &[u8], at: usize) -> &[u8] {
    let window = &hay[at..hay.len().min(at + MAX_URN_LEN + 1)];
    match at.checked_sub(1).map(|i| hay[i]) {
        Some(b'\'') => match memchr::memchr(b'\'', window) {
            Some(quote) => &window[..quote],
            None => window,
        },
        _ => window,
    }
}

/// Whether a rejected candidate ends before `byte`: an ASCII byte that no
/// URN holds (see the module doc).
fn ends_candidate(byte: u8) -> bool {
    byte.is_ascii() && !in_any_urn(byte)
}

/// The error `check` gives for the candidate's text up to where it ends,
/// when `error` is at an ASCII byte that no URN holds (see the module doc).
fn judged_to_its_end(window: &[u8], error: UrnError, grammar: Grammar) -> UrnError {
    match window.get(error.offset()) {
        Some(&b) if ends_candidate(b) => parse(&window[..error.offset()], grammar).err().unwrap_or(error),
        _ => error,
    }
}

/// Markdown emphasis marks right before a candidate, the nearest first
/// (which is how they close after it): `**_urn:` gives `_**`.
type Emphasis = ([u8; 3], usize);

/// The run of emphasis marks (`*`, `_`, `~`) right before `at`, at most the
/// three nearest, when it starts a word (no ASCII letter or digit before
/// it), or `None`. Three bytes before a candidate are what a stream keeps
/// of the block before it (for the left boundary): the byte before a run
/// of three may be gone there, so it is not looked at, in any input.
fn emphasis_before(hay: &[u8], at: usize) -> Option<Emphasis> {
    let is_mark = |b: &u8| matches!(b, b'*' | b'_' | b'~');
    let mut marks = [0u8; 3];
    let mut n = 0;
    for &b in hay[..at].iter().rev().take(3).take_while(|b| is_mark(b)) {
        marks[n] = b;
        n += 1;
    }
    let word_before = at > n && hay[at - n - 1].is_ascii_alphanumeric() && n < 3;
    (n > 0 && !word_before).then_some((marks, n))
}

/// Rule 3, repeated until nothing changes; `emphasis` (see
/// [`emphasis_before`]) is closed once, where the URN's trimmed text ends
/// in its mirror image, and what that exposes is trimmed in turn.
fn trim<'h>(
    window: &'h [u8],
    mut urn: Urn<'h>,
    grammar: Grammar,
    mut emphasis: Option<Emphasis>,
) -> Result<Urn<'h>, UrnError> {
    let nss_start = urn.nss_range().start;
    loop {
        let text = urn.as_bytes();
        let mut end = trimmed_end(text, nss_start, grammar, false);
        if let Some((marks, n)) = emphasis {
            if text[..end].ends_with(&marks[..n]) {
                end = trimmed_end(&text[..end - n], nss_start, grammar, true);
                emphasis = None;
            }
        }
        if end == urn.len() {
            return Ok(urn);
        }
        if end <= nss_start {
            return Err(no_nss_left(nss_start, grammar));
        }
        urn = parse_prefix(&window[..end], grammar)?;
    }
}

/// Where `text` ends once trailing punctuation is dropped, never going
/// below `floor`. A `#` goes only when trimming left it dangling (or `cut`:
/// `text` is what is left of a URN whose end was cut already): a URN that
/// ends in `#` by itself has a valid, empty f-component; and under RFC 2141
/// a `#` is an NSS character like any other, which never dangles.
fn trimmed_end(text: &[u8], floor: usize, grammar: Grammar, cut: bool) -> usize {
    let hash_dangles = grammar == Grammar::Rfc8141;
    let mut end = text.len();
    // How many more `)` than `(` `text[..end]` holds, counted once and kept
    // as `)`s go: counted again for each `)`, a URN ending in thousands of
    // them took time in the square of its length (1 MB of such URNs, 9 s).
    let mut excess = None;
    while end > floor {
        let drop = match text[end - 1] {
            b'.' | b',' | b';' | b':' | b'!' | b'?' | b'\'' => true,
            b'#' => hash_dangles && (cut || end < text.len()),
            b')' => {
                let n = excess.get_or_insert_with(|| close_excess(&text[..end]));
                *n -= 1;
                *n >= 0
            }
            _ => false,
        };
        if !drop {
            break;
        }
        end -= 1;
    }
    end
}

/// How many more `)` than `(` `text` holds (negative when fewer).
fn close_excess(text: &[u8]) -> isize {
    // One pass, which the compiler vectorises: two `memchr` counts cost
    // more in set-up than a URN-sized input takes (2 % of a dense scan).
    text.iter().fold(0isize, |n, &b| n + isize::from(b == b')') - isize::from(b == b'('))
}

fn no_nss_left(nss_start: usize, grammar: Grammar) -> UrnError {
    UrnError::new(ErrorKind::NssEmpty, nss_start, grammar)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn first(text: &str) -> Result<String, String> {
        first_with(text, ExtractOptions::default())
    }

    fn first_with(text: &str, opts: ExtractOptions) -> Result<String, String> {
        let at = text.to_ascii_lowercase().find("urn:").expect("test text has urn:");
        extract(text.as_bytes(), at, opts).map(|u| u.as_str().to_owned()).map_err(|e| e.kind().as_str().to_owned())
    }

    #[test]
    fn rule1_longest_valid_prefix() {
        assert_eq!(first("see urn:isbn:0451450523 now"), Ok("urn:isbn:0451450523".into()));
        assert_eq!(first("<id>urn:isbn:123</id>"), Ok("urn:isbn:123".into()));
        assert_eq!(first("\"urn:a1:b\","), Ok("urn:a1:b".into()));
        assert_eq!(first("urn:ab:c%zz"), Ok("urn:ab:c".into()));
        assert_eq!(first("urn:ab:c?x"), Ok("urn:ab:c".into()));
        assert_eq!(first("urn:ab:c\u{e9}"), Ok("urn:ab:c".into()));
        assert_eq!(first("urn:a:b"), Err("nid-too-short".into()));
        assert_eq!(first("urn::b"), Err("nid-empty".into()));
    }

    #[test]
    fn rule2_apostrophe() {
        let xml = "<stream xmlns='urn:ietf:params:xml:ns:xmpp-tls'/>";
        assert_eq!(first(xml), Ok("urn:ietf:params:xml:ns:xmpp-tls".into()));
        // Without a leading apostrophe, "'" is an NSS character (sub-delims).
        assert_eq!(first("urn:ab:it's fine"), Ok("urn:ab:it's".into()));
        assert_eq!(first("x='urn:ab:c'd'"), Ok("urn:ab:c".into()));
    }

    #[test]
    fn rule3_trimming() {
        assert_eq!(first("See urn:isbn:0451450523."), Ok("urn:isbn:0451450523".into()));
        assert_eq!(first("(urn:isbn:123)"), Ok("urn:isbn:123".into()));
        assert_eq!(first("(see urn:x1:f(a))."), Ok("urn:x1:f(a)".into()));
        assert_eq!(first("urn:x1:f(a)"), Ok("urn:x1:f(a)".into()));
        assert_eq!(first("((urn:x1:f(a)))"), Ok("urn:x1:f(a)".into()));
        assert_eq!(first("urn:ab:c?!.;:,"), Ok("urn:ab:c".into()));
        assert_eq!(first("urn:ab:c?+."), Ok("urn:ab:c".into()));
        assert_eq!(first("urn:ab:c?=."), Ok("urn:ab:c".into()));
        assert_eq!(first("urn:ab:c#."), Ok("urn:ab:c".into()));
        assert_eq!(first("urn:ab:c# ok"), Ok("urn:ab:c#".into()));
        assert_eq!(first("urn:ab:c#?"), Ok("urn:ab:c".into()));
        assert_eq!(first("urn:ab:c?+r."), Ok("urn:ab:c?+r".into()));
        // Trimming never enters urn:NID:.
        assert_eq!(first("urn:ab:."), Err("nss-empty".into()));
        assert_eq!(first("urn:ab:..."), Err("nss-empty".into()));
        let keep = ExtractOptions { trim: false, ..ExtractOptions::default() };
        assert_eq!(first_with("urn:ab:c.", keep), Ok("urn:ab:c.".into()));
        assert_eq!(first_with("urn:ab:c#", keep), Ok("urn:ab:c#".into()));
    }

    /// Markdown emphasis around a URN: `*`, `_` and `~` are URN characters
    /// (RFC 3986 sub-delims and unreserved), so the closing run was kept.
    #[test]
    fn rule3_emphasis_closes_once() {
        assert_eq!(first("- **urn:isbn:0451450523**: a book"), Ok("urn:isbn:0451450523".into()));
        assert_eq!(first("_urn:ab:c_ and"), Ok("urn:ab:c".into()));
        assert_eq!(first("~~urn:ab:c~~"), Ok("urn:ab:c".into()));
        assert_eq!(first("***urn:ab:c***"), Ok("urn:ab:c".into()));
        // Punctuation on either side of the closing run.
        assert_eq!(first("**urn:ab:c**."), Ok("urn:ab:c".into()));
        assert_eq!(first("**urn:ab:c.**"), Ok("urn:ab:c".into()));
        // The run's own length, once: a longer run keeps the rest, a
        // shorter one is no closing run; without a run before, nothing.
        assert_eq!(first("*urn:ab:c**"), Ok("urn:ab:c*".into()));
        assert_eq!(first("**urn:ab:c*"), Ok("urn:ab:c*".into()));
        assert_eq!(first("urn:ab:c_"), Ok("urn:ab:c_".into()));
        assert_eq!(first("_urn:ab:c*"), Ok("urn:ab:c*".into()));
        // Four marks before: the three nearest count.
        assert_eq!(first("****urn:ab:c****"), Ok("urn:ab:c*".into()));
        // Mixed marks close in mirror image (bold italic, as Prettier
        // writes it); the same marks in another order close nothing.
        assert_eq!(first("**_urn:ab:c_**"), Ok("urn:ab:c".into()));
        assert_eq!(first("_**urn:ab:c**_"), Ok("urn:ab:c".into()));
        assert_eq!(first("**_urn:ab:c**_"), Ok("urn:ab:c**_".into()));
        // A `#` the closing exposes goes, as one trimming exposes does,
        // whichever side of the marks the punctuation is on.
        assert_eq!(first("**urn:ab:c#**."), Ok("urn:ab:c".into()));
        assert_eq!(first("**urn:ab:c#.**"), Ok("urn:ab:c".into()));
        // Inside a word, `_` (or any mark) opens no emphasis.
        assert_eq!(first("foo_urn:ab:c_"), Ok("urn:ab:c_".into()));
        assert_eq!(first("(_urn:ab:c_)"), Ok("urn:ab:c".into()));
        // Never into urn:NID:.
        assert_eq!(first("**urn:ab:**"), Err("nss-empty".into()));
        assert_eq!(first("_urn:ab:_"), Err("nss-empty".into()));
        // Not when trimming is off.
        let keep = ExtractOptions { trim: false, ..ExtractOptions::default() };
        assert_eq!(first_with("**urn:ab:c**", keep), Ok("urn:ab:c**".into()));
        // RFC 2141 too (`*` and `_` are its <other>; `~` is no NSS character).
        let old = ExtractOptions { grammar: Grammar::Rfc2141, trim: true };
        assert_eq!(first_with("*urn:ab:c*", old), Ok("urn:ab:c".into()));
    }

    #[test]
    fn rfc2141_mode() {
        let opts = ExtractOptions { grammar: Grammar::Rfc2141, trim: true };
        assert_eq!(first_with("urn:a:b~c", opts), Ok("urn:a:b".into()));
        assert_eq!(first_with("urn:a:b/c?d#e.", opts), Ok("urn:a:b/c?d#e".into()));
        // No components, so nothing dangles once the `.` goes: `#`, `?+`
        // and `?=` are NSS characters (<reserved> and <other> of RFC 2141
        // §2.2), and `urn:ab:c#` is a valid URN of its own, not `urn:ab:c`.
        assert_eq!(first_with("See urn:ab:c#.", opts), Ok("urn:ab:c#".into()));
        assert_eq!(first_with("See urn:ab:c##.", opts), Ok("urn:ab:c##".into()));
        assert_eq!(first_with("See urn:ab:#.", opts), Ok("urn:ab:#".into()));
        assert_eq!(first_with("See urn:ab:c?+.", opts), Ok("urn:ab:c?+".into()));
        assert_eq!(first_with("See urn:ab:c?=.", opts), Ok("urn:ab:c?=".into()));
        assert_eq!(first_with("See urn:ab:c#?!", opts), Ok("urn:ab:c#".into()));
        // The `?` is sentence punctuation, trimmed as under RFC 8141.
        assert_eq!(first_with("Is it urn:ab:c?", opts), Ok("urn:ab:c".into()));
    }

    #[test]
    fn a_rejected_candidate_ends_where_a_urn_would() {
        let kind = |text: &str| first(text).unwrap_err();
        assert_eq!(kind("urn:ab: x"), "nss-empty");
        assert_eq!(kind("\"urn:ab:\""), "nss-empty");
        assert_eq!(kind("<id>urn:ab:</id>"), "nss-empty");
        assert_eq!(kind("urn:ab:\0\0"), "nss-empty");
        assert_eq!(kind("urn:\nnext"), "nid-empty");
        assert_eq!(kind("urn: x"), "nid-empty");
        assert_eq!(kind("urn:isbn x"), "missing-nss-colon");
        // Where two kinds fit, the one `check` gives for the text before the space.
        for text in ["urn:a", "urn:ab-", "urn:-ab"] {
            let checked = parse(text.as_bytes(), Grammar::Rfc8141).unwrap_err();
            assert_eq!(kind(&format!("{text} x")), checked.kind().as_str(), "{text}");
        }
        // Bytes a URN may not hold there, but that do not end it in text.
        assert_eq!(kind("urn:ab:\u{e9}t\u{e9}"), "non-ascii");
        assert_eq!(kind("urn:a_b:c"), "nid-bad-char");
        assert_eq!(kind("urn:ab:/x"), "nss-leading-slash");
        assert_eq!(kind("urn:ab:%zz"), "bad-percent-encoding");
    }

    /// A rejected candidate's text ends where its judgement does: at an
    /// ASCII byte no URN holds, after an apostrophe at the next one, not at
    /// a non-ASCII byte; it never reaches into the next candidate.
    #[test]
    fn a_rejected_candidate_s_text_ends_where_it_does() {
        let text = |hay: &str| {
            let at = hay.find("urn:").unwrap();
            std::str::from_utf8(candidate_text(hay.as_bytes(), at)).unwrap().to_owned()
        };
        // (input, the candidate's text)
        let cases = [
            ("urn:ab:/a urn:a:b", "urn:ab:/a"),
            ("<id>urn:ab:</id>", "urn:ab:"),
            ("\"urn:a:b\",x", "urn:a:b"),
            ("urn:\tab\r\n", "urn:"),
            ("urn:ab:/x\0\0", "urn:ab:/x"),
            ("x='urn:ab:/c'd'", "urn:ab:/c"),
            ("urn:ab:/c'd e", "urn:ab:/c'd"),
            ("urn:ab:\u{e9}t\u{e9} x", "urn:ab:\u{e9}t\u{e9}"),
            ("urn:ab:%zz,;x y", "urn:ab:%zz,;x"),
        ];
        for (hay, want) in cases {
            assert_eq!(text(hay), want, "{hay:?}");
        }
        let long = format!("urn:ab:{}", "a".repeat(MAX_URN_LEN * 2));
        assert_eq!(text(&long).len(), MAX_URN_LEN + 1);
    }

    proptest::proptest! {
        /// The error of a rejected candidate lies within its text or at
        /// its end (the documented promise of `candidate_text`).
        #[test]
        fn a_rejected_candidate_s_error_lies_in_its_text(
            parts in proptest::collection::vec(
                proptest::sample::select(vec!["urn:", "ab", "a", ":", "/", "%", "%zz", "'", " ", "\"", "<", "\u{e9}", "x", ".", "\t", "#", "?="]),
                0..24,
            ),
            trim: bool,
        ) {
            let hay = parts.concat();
            let opts = ExtractOptions { grammar: Grammar::Rfc8141, trim };
            for (at, _) in hay.to_ascii_lowercase().match_indices("urn:") {
                if let Err(e) = extract(hay.as_bytes(), at, opts) {
                    let text = candidate_text(hay.as_bytes(), at);
                    proptest::prop_assert!(e.offset() <= text.len(), "{hay:?} at {at}: {e:?}, {text:?}");
                }
            }
        }
    }

    #[test]
    fn error_offset_is_relative_to_the_candidate() {
        let e = extract(b"xx urn:a:b", 3, ExtractOptions::default()).unwrap_err();
        assert_eq!((e.kind(), e.offset()), (ErrorKind::NidTooShort, 5));
    }

    #[test]
    fn thousands_of_closing_parentheses() {
        let closes = ")".repeat(5000);
        assert_eq!(first(&format!("urn:x1:f(a){closes}")), Ok("urn:x1:f(a)".into()));
        assert_eq!(first(&format!("urn:x1:(((f{closes}.")), Ok("urn:x1:(((f)))".into()));
        assert_eq!(first(&format!("urn:x1:f{closes}")), Ok("urn:x1:f".into()));
    }

    /// Rule 3 as written: drop the last byte while it is sentence
    /// punctuation, a `#` that trimming exposed (RFC 8141: an empty
    /// f-component), or a `)` of a prefix with more `)` than `(`, counting
    /// the prefix again each time. What it checks is the counting of `)`;
    /// the `#` condition is the rule restated, which `rfc2141_mode` and
    /// `rule3_trimming` check by example.
    fn trimmed_end_reference(text: &[u8], floor: usize, grammar: Grammar, cut: bool) -> usize {
        let mut end = text.len();
        while end > floor {
            let prefix = &text[..end];
            let excess = prefix.iter().filter(|&&b| b == b')').count() > prefix.iter().filter(|&&b| b == b'(').count();
            let drop = match text[end - 1] {
                b'.' | b',' | b';' | b':' | b'!' | b'?' | b'\'' => true,
                b'#' => grammar == Grammar::Rfc8141 && (cut || end < text.len()),
                b')' => excess,
                _ => false,
            };
            if !drop {
                return end;
            }
            end -= 1;
        }
        end
    }

    proptest::proptest! {
        #[test]
        fn trimmed_end_equals_the_rule_as_written(
            text in proptest::collection::vec(proptest::sample::select(b"()).,#:a?".to_vec()), 0..40),
            floor in 0usize..8,
            rfc2141: bool,
            cut: bool,
        ) {
            let floor = floor.min(text.len());
            let grammar = if rfc2141 { Grammar::Rfc2141 } else { Grammar::Rfc8141 };
            proptest::prop_assert_eq!(
                trimmed_end(&text, floor, grammar, cut),
                trimmed_end_reference(&text, floor, grammar, cut)
            );
        }
    }
}
