//! The URN grammars: RFC 8141 (default) and RFC 2141 (legacy).
//!
//! One forward walk over the bytes decides everything. It stops at the first
//! byte that breaks the grammar and remembers the last position at which the
//! bytes seen so far formed a complete URN. That gives both answers the
//! crate needs from a single pass:
//!
//! - [`parse`]: is the whole input a URN? (`check`, `dedup`)
//! - [`parse_prefix`]: what is the longest prefix that is a URN? (the
//!   scanner, which finds URNs in running text)
//!
//! `urnscan dedup` asks the first question of millions of short lines, and
//! there a byte walk's exits mispredict on every line; most lines are
//! judged instead from the bit maps of the 4 KiB they lie in (`bits.rs`),
//! which accept exactly what this walk accepts and leave every error to it.
//!
//! Every grammar decision is a lookup in the tables of [`class`]. The bulk
//! of a URN, the run of NSS (or component) characters and `%HH` escapes
//! between two delimiters, is one call to
//! [`ClassRun`]: an AVX2 kernel that
//! checks 64 bytes per step, escapes included, against the same tables in
//! `vpshufb` form (a byte loop over the tables on short inputs and other
//! CPUs). Only the delimiters `?`, `#`, a bad byte and the end take the
//! walker's slow path. The scheme is one 4-byte compare; the NID a byte loop
//! (it is short). Nothing is allocated: the result is a [`Urn`] that
//! borrows the input and records where its parts are, plus the two facts
//! the equivalence key needs (upper case in the scheme or NID, lower-case
//! hex in an NSS escape), so most keys are a plain copy.
//!
//! Measured with callgrind on the `benches/validate.rs` corpus, instructions
//! per URN (parse / parse + `write_key`): 998 / 1604 with the eight-byte
//! table blocks that stopped at every `%`; 677 / 917 with the kernel and the
//! key flags; 487 / 625 after the one-compare scheme, the byte-loop NID, the
//! inlined run wrapper, the byte loop for short runs and the AVX2 escape
//! fix-up. Tried and dropped: the AVX2 kernel on runs under 32 bytes (a
//! zeroed stack copy; 60% slower on short URNs than the byte loop); inline
//! fixed-size moves for that copy instead of `memcpy` (more instructions,
//! not fewer); walking the first 16 bytes of every long run a byte at a
//! time, and a 32-byte first step in the kernel (both help URNs in running
//! text a little and cost long NSSs more).
//!
//! The ambiguous corners are settled as follows (see `README.md`):
//! the first `?=` ends an r-component; under RFC 2141 the NID is 1–32
//! characters and may end in `-`, and the NID `urn` is invalid; under
//! RFC 8141 the NID `urn` is valid syntax (classed as reserved).

pub(crate) mod bits;
pub mod class;

use crate::error::{ErrorKind, UrnError};
use crate::platform::simd::class::ClassRun;
use crate::urn::{Parts, Urn};
use class::{is, FRAG, HEX, LDH, NSS_TAIL, PCHAR, TRANS};

/// The longest URN urnscan accepts, in bytes. The RFCs set no limit and real
/// URNs are far shorter; the limit bounds the work spent on one candidate in
/// hostile input (a megabyte of NSS characters) and how far a scanning
/// chunk reads past its end. A longer URN is rejected as
/// [`ErrorKind::TooLong`]. It is a round figure just under what the key
/// store allows (32,753): one of its entries (a key and a first-seen form
/// stored whole) fits a 64 KiB block, and a key's length has 15 bits beside
/// a flag. The 16-bit offsets of a URN's parts would allow 65,532.
pub const MAX_URN_LEN: usize = 32_000;
const _: () = assert!(MAX_URN_LEN + 3 <= u16::MAX as usize, "Parts stores offsets as u16");

/// Which specification a URN is judged by; RFC 8141 by default. Ordered
/// as declared, RFC 8141 first (URNs of the same text sort that way).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grammar {
    /// RFC 8141 (2017): NID of 2–32 characters, NSS of `pchar` and `/`,
    /// optional r-, q- and f-components.
    #[default]
    Rfc8141,
    /// RFC 2141 (1997): NID of 1–32 characters, NSS of `<trans>` and
    /// `%`-escapes, no components (`/`, `?`, `#` are plain NSS characters).
    Rfc2141,
}

impl Grammar {
    /// `"rfc8141"` or `"rfc2141"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Grammar::Rfc8141 => "rfc8141",
            Grammar::Rfc2141 => "rfc2141",
        }
    }
}

/// [`Grammar::as_str`].
impl std::fmt::Display for Grammar {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Parses the whole of `input` as a URN.
///
/// ```
/// use urnscan::{parse, Grammar};
/// let urn = parse(b"URN:ISBN:0451450523?=lang=en#p3", Grammar::Rfc8141).unwrap();
/// assert_eq!(urn.nid(), "ISBN");
/// assert_eq!(urn.q_component(), Some("lang=en"));
/// assert_eq!(urn.key(), "urn:isbn:0451450523");
/// let err = parse(b"urn:a:b", Grammar::Rfc8141).unwrap_err();
/// assert_eq!(err.kind().as_str(), "nid-too-short");
/// assert_eq!(err.offset(), 5);
/// ```
pub fn parse(input: &[u8], grammar: Grammar) -> Result<Urn<'_>, UrnError> {
    let walk = walk::<false>(input, grammar);
    match (walk.error, walk.accept) {
        (None, Some(parts)) => Ok(Urn::from_parts(input, grammar, parts)),
        (Some(e), _) => Err(e),
        // A walk that ends without error always ends accepting.
        (None, None) => Err(UrnError::new(ErrorKind::NotUrn, 0, grammar)),
    }
}

/// Parses the longest prefix of `input` that is a URN.
///
/// The error, when there is no such prefix, is the one [`parse`] gives for
/// the whole input. A URN that runs past [`MAX_URN_LEN`] is
/// [`ErrorKind::TooLong`] even though a shorter prefix would be valid.
///
/// ```
/// use urnscan::{parse_prefix, Grammar};
/// let urn = parse_prefix(b"urn:ietf:rfc:8141 is the spec", Grammar::Rfc8141).unwrap();
/// assert_eq!(urn.as_str(), "urn:ietf:rfc:8141");
/// ```
pub fn parse_prefix(input: &[u8], grammar: Grammar) -> Result<Urn<'_>, UrnError> {
    let walk = walk::<true>(input, grammar);
    match (walk.error, walk.accept) {
        (Some(e), _) if e.kind() == ErrorKind::TooLong => Err(e),
        (_, Some(parts)) => Ok(Urn::from_parts(input, grammar, parts)),
        (Some(e), None) => Err(e),
        (None, None) => Err(UrnError::new(ErrorKind::NotUrn, 0, grammar)),
    }
}

struct Walk {
    /// The parts of the longest valid prefix seen, if any.
    accept: Option<Parts>,
    /// The first violation; `None` when the whole input is a URN.
    error: Option<UrnError>,
}

/// Walks `input`. With `PREFIX`, [`Walk::accept`] is the longest valid
/// prefix; without it, only a walk that takes the whole input accepts (all
/// [`parse`] asks), and no copy of the parts is made at each accepting
/// position.
///
/// Every walker method is inlined into this function (the component walks
/// and `first_pchar` by `#[inline(always)]`), so the walker's state lives in
/// registers. While one of them was a call taking `&self`, the whole walker
/// sat on the stack, and each accept stored the parts' fields one by one and
/// at once read them back as a whole: a wide load over narrow stores, which
/// waits for them to reach the cache. That copy was 6 % of the samples of
/// `urnscan dedup -j1` on a URN dataset; inlined, the walk went from 19.9 %
/// to 16.6 % of them.
fn walk<const PREFIX: bool>(input: &[u8], grammar: Grammar) -> Walk {
    // One byte past the limit is enough to tell "too long" from "ends here".
    let hay = &input[..input.len().min(MAX_URN_LEN + 1)];
    let mut walker = Walker::<PREFIX> { hay, grammar, runs: ClassRun::new(), parts: Parts::default(), accept: None };
    let result = walker.run();
    if !PREFIX && result.is_ok() {
        // A walk that ends without error ends with an accept at the end of
        // the input, after which the parts do not change.
        walker.accept = Some(walker.parts);
    }
    let ran_out = match &result {
        Ok(()) => true,
        Err(e) => e.offset() >= hay.len(),
    };
    let error = if input.len() > MAX_URN_LEN && ran_out {
        Some(UrnError::new(ErrorKind::TooLong, MAX_URN_LEN, grammar))
    } else {
        result.err()
    };
    Walk { accept: walker.accept, error }
}

type Step = Result<(), UrnError>;

struct Walker<'a, const PREFIX: bool> {
    hay: &'a [u8],
    grammar: Grammar,
    /// The kernel that walks runs of class members and escapes.
    runs: ClassRun,
    /// The parts found so far.
    parts: Parts,
    /// A copy of `parts` at the last accepting position: with `PREFIX`,
    /// taken at each one; without, once, when the whole input is a URN.
    accept: Option<Parts>,
}

impl<const PREFIX: bool> Walker<'_, PREFIX> {
    fn run(&mut self) -> Step {
        self.scheme()?;
        let nss_start = self.nid()?;
        match self.grammar {
            Grammar::Rfc8141 => self.nss_8141(nss_start),
            Grammar::Rfc2141 => self.nss_2141(nss_start),
        }
    }

    fn fail(&self, kind: ErrorKind, at: usize) -> Step {
        Err(UrnError::new(kind, at, self.grammar))
    }

    /// A byte that is not allowed where it stands: `kind`, unless it is
    /// non-ASCII, which always reports as such.
    fn bad_byte(&self, kind: ErrorKind, at: usize) -> Step {
        match self.hay.get(at) {
            Some(&b) if b >= 0x80 => self.fail(ErrorKind::NonAscii, at),
            _ => self.fail(kind, at),
        }
    }

    /// Records that `hay[..end]` is a complete URN with the current parts.
    fn accept(&mut self, end: usize) {
        self.parts.end = pos(end);
        if PREFIX {
            self.accept = Some(self.parts);
        }
    }

    fn scheme(&mut self) -> Step {
        // One compare for the common case: OR 0x20 folds exactly "U", "R"
        // and "N" onto their lower case (only 0x55/0x75 map to 0x75, and
        // so on); the ":" is compared as is.
        if let Some(&[u, r, n, colon]) = self.hay.get(..4) {
            let word = u32::from_le_bytes([u, r, n, colon]);
            if word | 0x0020_2020 == u32::from_le_bytes(*b"urn:") {
                self.parts.upper_name = word != u32::from_le_bytes(*b"urn:");
                return Ok(());
            }
        }
        // The first byte that differs is the error.
        for (i, &want) in b"urn:".iter().enumerate() {
            match self.hay.get(i) {
                Some(b) if b.to_ascii_lowercase() == want => {}
                _ => return self.bad_byte(ErrorKind::NotUrn, i),
            }
        }
        Ok(())
    }

    /// Walks the NID and its closing ":"; returns where the NSS starts.
    fn nid(&mut self) -> Result<usize, UrnError> {
        const START: usize = 4;
        // NIDs are short: a byte loop ends sooner than eight-byte blocks.
        // Past 33 characters the verdict no longer depends on the length.
        let limit = self.hay.len().min(START + 33);
        let mut i = START;
        // Among letters, digits and "-", only upper-case letters lack 0x20.
        let mut all_bits = 0xff;
        while i < limit && is(self.hay[i], LDH) {
            all_bits &= self.hay[i];
            i += 1;
        }
        self.parts.upper_name |= all_bits & 0x20 == 0;
        let nid = &self.hay[START..i];
        // The first byte that breaks the grammar comes first: a leading
        // "-", then (RFC 8141) a "-" in 32nd place, which can never be
        // followed by the alphanumeric that must end the NID, then a 33rd
        // character.
        if nid.first() == Some(&b'-') {
            self.fail(ErrorKind::NidLeadingHyphen, START)?;
        }
        if self.grammar == Grammar::Rfc8141 && nid.get(31) == Some(&b'-') {
            self.fail(ErrorKind::NidTrailingHyphen, START + 31)?;
        }
        if nid.len() > 32 {
            self.fail(ErrorKind::NidTooLong, START + 32)?;
        }
        match self.hay.get(i) {
            None | Some(b':') => {}
            Some(_) => self.bad_byte(ErrorKind::NidBadChar, i)?,
        }
        let rfc8141 = self.grammar == Grammar::Rfc8141;
        if nid.is_empty() {
            self.fail(ErrorKind::NidEmpty, i)?;
        } else if rfc8141 && nid.len() == 1 {
            self.fail(ErrorKind::NidTooShort, i)?;
        } else if rfc8141 && nid.ends_with(b"-") {
            self.fail(ErrorKind::NidTrailingHyphen, i)?;
        } else if !rfc8141 && nid.eq_ignore_ascii_case(b"urn") {
            self.fail(ErrorKind::NidReservedUrn, i)?;
        }
        if i == self.hay.len() {
            self.fail(ErrorKind::MissingNssColon, i)?;
        }
        self.parts.nid_end = pos(i);
        Ok(i + 1)
    }

    /// Checks the escape `%HH` at `at`; returns the index after it.
    fn percent(&self, at: usize) -> Result<usize, UrnError> {
        for i in at + 1..at + 3 {
            match self.hay.get(i) {
                Some(&b) if is(b, HEX) => {}
                _ => self.bad_byte(ErrorKind::BadPercentEncoding, i)?,
            }
        }
        Ok(at + 3)
    }

    /// The first character of an NSS or r-/q-component: `pchar`.
    #[inline(always)]
    fn first_pchar(&self, at: usize, kind: ErrorKind) -> Result<usize, UrnError> {
        match self.hay.get(at) {
            Some(b'%') => self.percent(at),
            Some(&b) if is(b, PCHAR) => Ok(at + 1),
            _ => self.bad_byte(kind, at).map(|()| at),
        }
    }

    /// Where a walk from `i` over members of `class` and valid escapes
    /// stops: the hot loop of validation (see [`ClassRun`]).
    #[inline(always)]
    fn skip(&self, i: usize, class: u8) -> usize {
        self.runs.run(self.hay, i, class).end
    }

    fn nss_8141(&mut self, start: usize) -> Step {
        match self.hay.get(start) {
            None | Some(b'?') | Some(b'#') => return self.fail(ErrorKind::NssEmpty, start),
            Some(b'/') => return self.fail(ErrorKind::NssLeadingSlash, start),
            Some(_) => {}
        }
        // With "/" ruled out, the first character is a pchar or an escape
        // exactly when the run over the tail class moves.
        let run = self.runs.run(self.hay, start, NSS_TAIL);
        let i = run.end;
        if i == start {
            return self.first_pchar(start, ErrorKind::NssBadChar).map(drop);
        }
        // Leaving the NSS (or failing in it): `hay[..i]` is a URN.
        self.parts.nss_end = pos(i);
        self.parts.lower_hex = run.lower_hex;
        self.accept(i);
        match self.hay.get(i) {
            None => Ok(()),
            // Not a valid escape, or the run would have taken it.
            Some(b'%') => self.percent(i).map(drop),
            Some(b'?') => match self.hay.get(i + 1) {
                Some(b'+') => self.r_component(i + 2),
                Some(b'=') => self.q_component(i + 2),
                _ => self.bad_byte(ErrorKind::LoneQuestionMark, i + 1),
            },
            Some(b'#') => self.f_component(i + 1),
            Some(_) => self.bad_byte(ErrorKind::NssBadChar, i),
        }
    }

    #[inline(always)]
    fn r_component(&mut self, start: usize) -> Step {
        let mut i = match self.hay.get(start) {
            None | Some(b'#') | Some(b'?') => return self.fail(ErrorKind::EmptyRComponent, start),
            Some(_) => self.first_pchar(start, ErrorKind::ComponentBadChar)?,
        };
        loop {
            i = self.skip(i, NSS_TAIL);
            match self.hay.get(i) {
                // The first "?=" ends the r-component (RFC 8141 §2.3.1)...
                Some(b'?') if self.hay.get(i + 1) == Some(&b'=') => {
                    // ...but "...?" alone is still a valid r-component.
                    self.parts.r = Some((pos(start), pos(i + 1)));
                    self.accept(i + 1);
                    self.parts.r = Some((pos(start), pos(i)));
                    return self.q_component(i + 2);
                }
                Some(b'?') => i += 1,
                next => {
                    self.parts.r = Some((pos(start), pos(i)));
                    self.accept(i);
                    return match next {
                        None => Ok(()),
                        Some(b'%') => self.percent(i).map(drop),
                        Some(b'#') => self.f_component(i + 1),
                        Some(_) => self.bad_byte(ErrorKind::ComponentBadChar, i),
                    };
                }
            }
        }
    }

    #[inline(always)]
    fn q_component(&mut self, start: usize) -> Step {
        let i = match self.hay.get(start) {
            None | Some(b'#') => return self.fail(ErrorKind::EmptyQComponent, start),
            Some(_) => self.first_pchar(start, ErrorKind::ComponentBadChar)?,
        };
        let i = self.skip(i, FRAG);
        self.parts.q = Some((pos(start), pos(i)));
        self.accept(i);
        match self.hay.get(i) {
            None => Ok(()),
            Some(b'%') => self.percent(i).map(drop),
            Some(b'#') => self.f_component(i + 1),
            Some(_) => self.bad_byte(ErrorKind::ComponentBadChar, i),
        }
    }

    #[inline(always)]
    fn f_component(&mut self, start: usize) -> Step {
        self.parts.f = Some(pos(start));
        let i = self.skip(start, FRAG);
        self.accept(i);
        match self.hay.get(i) {
            None => Ok(()),
            Some(b'%') => self.percent(i).map(drop),
            Some(_) => self.bad_byte(ErrorKind::ComponentBadChar, i),
        }
    }

    fn nss_2141(&mut self, start: usize) -> Step {
        if self.hay.get(start).is_none() {
            return self.fail(ErrorKind::NssEmpty, start);
        }
        let run = self.runs.run(self.hay, start, TRANS);
        let i = run.end;
        if i > start {
            self.parts.nss_end = pos(i);
            self.parts.lower_hex = run.lower_hex;
            self.accept(i);
        }
        match self.hay.get(i) {
            None => Ok(()),
            Some(b'%') => self.percent(i).map(drop),
            Some(_) => self.bad_byte(ErrorKind::NssBadChar, i),
        }
    }
}

/// An offset inside the walked bytes, which are at most `MAX_URN_LEN + 1`
/// long, as the compact form `Parts` stores.
#[inline(always)]
fn pos(i: usize) -> u16 {
    debug_assert!(i <= MAX_URN_LEN + 3);
    i as u16
}

#[cfg(test)]
mod tests;
