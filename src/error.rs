//! Why a byte string is not a URN, and where.
//!
//! An error is a kind plus the byte offset of the first byte that breaks the
//! grammar: the input up to that offset is still the start of some valid URN
//! (a *viable prefix*), the input up to and including it is not. When the
//! input ends too early the offset is the input's length, one past the last
//! byte. This definition is exact, so the offset never depends on how the
//! parser happens to be written.
//!
//! A non-ASCII byte that breaks the grammar is always reported as
//! [`ErrorKind::NonAscii`], whatever state the parser is in.

use std::fmt;

use crate::grammar::Grammar;

/// The kinds of grammar violation. [`ErrorKind::as_str`] gives the stable,
/// kebab-case name used in every output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum ErrorKind {
    /// The input does not start with `urn:` (any case).
    NotUrn,
    /// Nothing between `urn:` and the next `:`.
    NidEmpty,
    /// RFC 8141: a one-character NID.
    NidTooShort,
    /// More than 32 NID characters.
    NidTooLong,
    /// A NID character outside letters, digits and `-`.
    NidBadChar,
    /// The NID starts with `-`.
    NidLeadingHyphen,
    /// RFC 8141: the NID ends with `-`.
    NidTrailingHyphen,
    /// RFC 2141 §2: the NID `urn` is reserved.
    NidReservedUrn,
    /// The NID is not followed by `:`.
    MissingNssColon,
    /// Nothing after `urn:NID:` (or a component delimiter right there).
    NssEmpty,
    /// A character the NSS may not hold.
    NssBadChar,
    /// RFC 8141: the NSS starts with `/`.
    NssLeadingSlash,
    /// A `%` not followed by two hex digits.
    BadPercentEncoding,
    /// RFC 8141: a `?` in the NSS that starts neither `?+` nor `?=`.
    LoneQuestionMark,
    /// RFC 8141: `?+` with no r-component after it.
    EmptyRComponent,
    /// RFC 8141: `?=` with no q-component after it.
    EmptyQComponent,
    /// RFC 8141: a character an r-, q- or f-component may not hold.
    ComponentBadChar,
    /// A byte >= 0x80: URNs are ASCII.
    NonAscii,
    /// Longer than [`crate::MAX_URN_LEN`] bytes.
    TooLong,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 19] = [
        ErrorKind::NotUrn,
        ErrorKind::NidEmpty,
        ErrorKind::NidTooShort,
        ErrorKind::NidTooLong,
        ErrorKind::NidBadChar,
        ErrorKind::NidLeadingHyphen,
        ErrorKind::NidTrailingHyphen,
        ErrorKind::NidReservedUrn,
        ErrorKind::MissingNssColon,
        ErrorKind::NssEmpty,
        ErrorKind::NssBadChar,
        ErrorKind::NssLeadingSlash,
        ErrorKind::BadPercentEncoding,
        ErrorKind::LoneQuestionMark,
        ErrorKind::EmptyRComponent,
        ErrorKind::EmptyQComponent,
        ErrorKind::ComponentBadChar,
        ErrorKind::NonAscii,
        ErrorKind::TooLong,
    ];

    /// The stable name, e.g. `nid-too-short`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::NotUrn => "not-urn",
            ErrorKind::NidEmpty => "nid-empty",
            ErrorKind::NidTooShort => "nid-too-short",
            ErrorKind::NidTooLong => "nid-too-long",
            ErrorKind::NidBadChar => "nid-bad-char",
            ErrorKind::NidLeadingHyphen => "nid-leading-hyphen",
            ErrorKind::NidTrailingHyphen => "nid-trailing-hyphen",
            ErrorKind::NidReservedUrn => "nid-reserved-urn",
            ErrorKind::MissingNssColon => "missing-nss-colon",
            ErrorKind::NssEmpty => "nss-empty",
            ErrorKind::NssBadChar => "nss-bad-char",
            ErrorKind::NssLeadingSlash => "nss-leading-slash",
            ErrorKind::BadPercentEncoding => "bad-percent-encoding",
            ErrorKind::LoneQuestionMark => "lone-question-mark",
            ErrorKind::EmptyRComponent => "empty-r-component",
            ErrorKind::EmptyQComponent => "empty-q-component",
            ErrorKind::ComponentBadChar => "component-bad-char",
            ErrorKind::NonAscii => "non-ascii",
            ErrorKind::TooLong => "too-long",
        }
    }

    /// The kind whose [`as_str`](Self::as_str) is `name`.
    pub fn from_name(name: &str) -> Option<ErrorKind> {
        ErrorKind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    fn describe(self, grammar: Grammar) -> &'static str {
        const _: () = assert!(crate::grammar::MAX_URN_LEN == 32_000, "the too-long message names the limit");
        let rfc2141 = grammar == Grammar::Rfc2141;
        match self {
            ErrorKind::NotUrn => "does not start with \"urn:\"",
            ErrorKind::NidEmpty => "the namespace identifier (NID) is empty",
            ErrorKind::NidTooShort => "the NID must be 2 to 32 characters long (RFC 8141 §2)",
            ErrorKind::NidTooLong if rfc2141 => "the NID must be 1 to 32 characters long (RFC 2141 §2.1)",
            ErrorKind::NidTooLong => "the NID must be 2 to 32 characters long (RFC 8141 §2)",
            ErrorKind::NidBadChar => "the NID may hold only ASCII letters, digits and \"-\"",
            ErrorKind::NidLeadingHyphen => "the NID must start with a letter or digit",
            ErrorKind::NidTrailingHyphen => "the NID must end with a letter or digit (RFC 8141 §2)",
            ErrorKind::NidReservedUrn => "the NID \"urn\" is reserved (RFC 2141 §2.1)",
            ErrorKind::MissingNssColon => "the NID must be followed by \":\" and the NSS",
            ErrorKind::NssEmpty => "the namespace-specific string (NSS) is empty",
            ErrorKind::NssBadChar if rfc2141 => "character not allowed in the NSS (RFC 2141 §2.2)",
            ErrorKind::NssBadChar => "character not allowed in the NSS (RFC 8141 §2: pchar or \"/\")",
            ErrorKind::NssLeadingSlash => "the NSS must not start with \"/\" (RFC 8141 §2)",
            ErrorKind::BadPercentEncoding => "\"%\" must be followed by two hex digits",
            ErrorKind::LoneQuestionMark => "\"?\" in the NSS must start \"?+\" or \"?=\" (RFC 8141 §2)",
            ErrorKind::EmptyRComponent => "\"?+\" must be followed by a non-empty r-component",
            ErrorKind::EmptyQComponent => "\"?=\" must be followed by a non-empty q-component",
            ErrorKind::ComponentBadChar => "character not allowed in an r-, q- or f-component",
            ErrorKind::NonAscii => "non-ASCII byte: URNs are ASCII (percent-encode it)",
            ErrorKind::TooLong => {
                "longer than 32,000 bytes, the most urnscan accepts (a limit of its own: the RFCs set none)"
            }
        }
    }
}

impl fmt::Display for ErrorKind {
    /// [`ErrorKind::as_str`], padded as asked (`{:<24}`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.as_str())
    }
}

/// A grammar violation: what and where.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UrnError {
    kind: ErrorKind,
    offset: usize,
    grammar: Grammar,
}

impl UrnError {
    pub(crate) fn new(kind: ErrorKind, offset: usize, grammar: Grammar) -> UrnError {
        UrnError { kind, offset, grammar }
    }

    /// What is wrong.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// Byte offset of the first byte that breaks the grammar (the input's
    /// length when the input ends too early).
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The grammar the input was judged by.
    pub fn grammar(&self) -> Grammar {
        self.grammar
    }

    /// What the grammar requires, in words, without the position: e.g.
    /// `the NID must be 2 to 32 characters long (RFC 8141 §2)`. (Not
    /// `std::error::Error::description`, which is deprecated: through the
    /// trait, that one gives std's placeholder text. [`UrnError`]'s
    /// `Display` is [`UrnError::message`].)
    pub fn description(&self) -> &'static str {
        self.kind.describe(self.grammar)
    }

    /// One-line human description, e.g. `nid-too-short at byte 5: the NID
    /// must be 2 to 32 characters long (RFC 8141 §2)`.
    pub fn message(&self) -> String {
        format!("{} at byte {}: {}", self.kind, self.offset, self.kind.describe(self.grammar))
    }

    /// The message, then the input, with a caret under the offending
    /// byte. The input is drawn as text: a UTF-8 character as itself (one
    /// column: when `input` is the one the error came from, the error is
    /// at its first non-ASCII byte or before it, so what stands left of
    /// the caret is ASCII), a control or invisible character (C0, DEL, C1,
    /// bidi overrides, zero-width and combining characters: those
    /// `char::escape_debug` escapes) as `.`, so that no escape sequence
    /// reaches a terminal and nothing reorders the line, and each byte
    /// that is no UTF-8 as U+FFFD. Long inputs are cut to a window of 60
    /// bytes each side of the offset so the caret stays on screen.
    pub fn render(&self, input: &[u8]) -> String {
        const WINDOW: usize = 60;
        let start = self.offset.saturating_sub(WINDOW);
        let end = (self.offset + WINDOW).min(input.len());
        let start = start.min(end);
        let mut line = String::new();
        let mut columns = 0;
        let mut caret_col = None;
        if start > 0 {
            line.push_str("...");
            columns += 3;
        }
        // What each piece of the window is drawn as, and its bytes.
        let mut at = start;
        for chunk in input[start..end].utf8_chunks() {
            let valid = chunk.valid().chars().map(|c| (if is_drawn(c) { c } else { '.' }, c.len_utf8()));
            let invalid = chunk.invalid().iter().map(|_| ('\u{FFFD}', 1));
            for (drawn, len) in valid.chain(invalid) {
                if caret_col.is_none() && at + len > self.offset {
                    caret_col = Some(columns);
                }
                line.push(drawn);
                (at, columns) = (at + len, columns + 1);
            }
        }
        let caret_col = caret_col.unwrap_or(columns);
        if end < input.len() {
            line.push_str("...");
        }
        format!("{}\n  {}\n  {}^", self.message(), line, " ".repeat(caret_col))
    }
}

/// Whether `c` is drawn as itself where an input is shown to a user
/// ([`UrnError::render`]; the command line's text output too): printable
/// ASCII, or a character that `escape_debug` leaves as it is (visible,
/// not combining). Controls, bidi overrides, zero-width and combining
/// characters are not: they would reach a terminal as escape sequences,
/// reorder the line or join the character before them.
pub fn is_drawn(c: char) -> bool {
    if c.is_ascii() {
        !c.is_ascii_control()
    } else {
        c.escape_debug().len() == 1
    }
}

impl fmt::Display for UrnError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for UrnError {}

/// What a reporter of an error chain prints (anyhow's `{:#}`): the
/// error's message, then each source's, joined by ": ". The tests of each
/// error type check with it that a cause is said once (the crate doc,
/// "Errors").
#[cfg(test)]
pub(crate) fn chain_report(error: &(dyn std::error::Error + 'static)) -> String {
    let mut report = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        report.push_str(": ");
        report.push_str(&cause.to_string());
        source = cause.source();
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_the_name_padded_as_asked() {
        assert_eq!(format!("{}", ErrorKind::NssEmpty), "nss-empty");
        assert_eq!(format!("[{:<12}]", ErrorKind::NssEmpty), "[nss-empty   ]");
        assert_eq!(format!("[{:>12}]", ErrorKind::NssEmpty), "[   nss-empty]");
    }

    #[test]
    fn names_round_trip_and_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for k in ErrorKind::ALL {
            assert!(seen.insert(k.as_str()));
            assert_eq!(ErrorKind::from_name(k.as_str()), Some(k));
        }
    }

    #[test]
    fn caret_points_at_offset() {
        let e = UrnError::new(ErrorKind::NidBadChar, 5, Grammar::Rfc8141);
        let r = e.render(b"urn:a_b:c");
        let lines: Vec<&str> = r.lines().collect();
        assert_eq!(lines[1], "  urn:a_b:c");
        assert_eq!(lines[2], "       ^");
    }

    #[test]
    fn caret_past_end_and_on_non_ascii() {
        let e = UrnError::new(ErrorKind::MissingNssColon, 8, Grammar::Rfc8141);
        assert!(e.render(b"urn:isbn").ends_with("\n  urn:isbn\n          ^"));
        // é is two bytes and one column; the caret is under it.
        let e = UrnError::new(ErrorKind::NonAscii, 7, Grammar::Rfc8141);
        let r = e.render("urn:ab:éa".as_bytes());
        assert!(r.ends_with("  urn:ab:éa\n         ^"), "{r}");
        // A byte that is no UTF-8 is U+FFFD; a C0 or C1 control (U+0085),
        // `.`; the caret under the byte at the offset.
        let e = UrnError::new(ErrorKind::NonAscii, 10, Grammar::Rfc8141);
        let r = e.render(b"urn:ab:\x01\xc2\x85\xffz");
        assert!(r.ends_with("  urn:ab:..\u{FFFD}z\n           ^"), "{r}");
        // A right-to-left override, a zero-width space, a combining acute
        // and a byte-order mark are drawn as `.`; CJK as itself.
        let e = UrnError::new(ErrorKind::NonAscii, 7, Grammar::Rfc8141);
        let r = e.render("urn:ab:\u{202E}\u{200B}\u{301}\u{FEFF}日".as_bytes());
        assert!(r.ends_with("  urn:ab:....日\n         ^"), "{r}");
        // A window (60 bytes each side) that cuts a character in two shows
        // the bytes it keeps as U+FFFD. Bytes: urn:ab: 0-6, x 7-38, é 39-40,
        // y 41-100, é 101-102, z 103-111.
        let input = [&b"urn:ab:"[..], &b"x".repeat(32), "é".as_bytes(), &b"y".repeat(60), "é".as_bytes(), b"zzzzzzzzz"]
            .concat();
        let drawn = |offset| {
            let r = UrnError::new(ErrorKind::NssBadChar, offset, Grammar::Rfc8141).render(&input);
            r.lines().skip(1).map(str::to_owned).collect::<Vec<_>>()
        };
        let (x, y) = ("x".repeat(32), "y".repeat(60));
        // Bytes 0-101: the second é cut; the caret under byte 42, a y.
        let caret = format!("  {}^", " ".repeat(7 + 32 + 1 + 1));
        assert_eq!(drawn(42), [format!("  urn:ab:{x}é{y}\u{FFFD}..."), caret]);
        // Bytes 40-111: the first é cut; the caret under byte 100, the last y.
        let caret = format!("  {}^", " ".repeat(3 + 1 + 59));
        assert_eq!(drawn(100), [format!("  ...\u{FFFD}{y}ézzzzzzzzz"), caret]);
    }

    #[test]
    fn long_input_is_windowed() {
        let mut input = b"urn:ab:".to_vec();
        input.extend(std::iter::repeat_n(b'x', 500));
        input.push(b'^');
        input.extend(std::iter::repeat_n(b'y', 500));
        let e = UrnError::new(ErrorKind::NssBadChar, 507, Grammar::Rfc8141);
        let r = e.render(&input);
        let lines: Vec<&str> = r.lines().collect();
        let caret = lines[2].find('^').unwrap();
        assert_eq!(lines[1].as_bytes()[caret], b'^');
    }
}
