//! Candidate finding: every `urn:` (any ASCII case) whose left neighbour
//! lets it start a URN.
//!
//! The SIMD kernels in [`crate::platform::simd`] only answer "where is the
//! next `urn:`"; this module confirms each hit against the left-boundary
//! rule, kept apart from the kernels as a prefilter is kept apart from the
//! logic that confirms a match. A hit preceded by a URI-scheme character
//! (letter, digit, `+`, `-`, `.`) is part of another word (`return:`,
//! `x-urn:`, `a.urn:`) and is not a candidate, unless that character ends a
//! percent-encoded triplet (`%22urn:` is a quote, encoded).

use crate::grammar::class::{is, HEX, SCHEME};
use crate::platform::simd::UrnFinder;

/// Whether a `urn:` at `at` may start a URN, judging by the bytes before it.
#[inline]
pub fn left_boundary_ok(hay: &[u8], at: usize) -> bool {
    if at == 0 || !is(hay[at - 1], SCHEME) {
        return true;
    }
    at >= 3 && hay[at - 3] == b'%' && is(hay[at - 2], HEX) && is(hay[at - 1], HEX)
}

/// Iterator over the candidates that start in `from..end` of `hay`. It
/// may look at bytes before `from` (left boundary) but reports only starts
/// inside the range; the caller may move the cursor forward with
/// [`Candidates::skip_to`] after a match (matches never overlap).
pub struct Candidates<'h> {
    finder: UrnFinder,
    hay: &'h [u8],
    pos: usize,
    end: usize,
}

/// Where it stands in the buffer, not the buffer's bytes.
impl std::fmt::Debug for Candidates<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Candidates")
            .field("finder", &self.finder)
            .field("hay_len", &self.hay.len())
            .field("pos", &self.pos)
            .field("end", &self.end)
            .finish()
    }
}

impl<'h> Candidates<'h> {
    /// Candidates of `hay` starting in `from..end`.
    pub fn new(finder: UrnFinder, hay: &'h [u8], from: usize, end: usize) -> Candidates<'h> {
        Candidates { finder, hay, pos: from, end: end.min(hay.len()) }
    }

    /// Continue the search at `pos` (never moves backwards).
    pub fn skip_to(&mut self, pos: usize) {
        self.pos = self.pos.max(pos);
    }
}

impl Iterator for Candidates<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        // Search only where an owned candidate can be: starting before `end`.
        let window = &self.hay[..self.hay.len().min(self.end + 3)];
        while self.pos < self.end {
            let at = self.finder.find(window, self.pos)?;
            self.pos = at + 1;
            if left_boundary_ok(self.hay, at) {
                return Some(at);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn candidates(text: &str) -> Vec<usize> {
        Candidates::new(UrnFinder::new(), text.as_bytes(), 0, text.len()).collect()
    }

    #[test]
    fn left_boundary_rule() {
        for blocked in ["return:x", "turn:a:b", "x-urn:y", "a.urn:b", "9urn:a", "+urn:a", "Burn:x"] {
            assert_eq!(candidates(blocked), Vec::<usize>::new(), "{blocked}");
        }
        for (text, at) in [(":urn:", 1), ("\"urn:", 1), ("(urn:", 1), ("{urn:", 1), ("=urn:", 1), ("urn:", 0)] {
            assert_eq!(candidates(text), vec![at], "{text}");
        }
        assert_eq!(candidates("%22urn:a:b"), vec![3]);
        assert_eq!(candidates("%2Gurn:a:b"), Vec::<usize>::new()); // not a triplet
        assert_eq!(candidates("2Furn:a"), Vec::<usize>::new());
        assert_eq!(candidates("URN:x Urn:y uRN:"), vec![0, 6, 12]);
    }

    #[test]
    fn range_and_skip() {
        let text = b"urn:a urn:b urn:c";
        let mut c = Candidates::new(UrnFinder::new(), text, 1, 12);
        assert_eq!(c.next(), Some(6));
        c.skip_to(11);
        assert_eq!(c.next(), None); // 12 is outside the range
    }
}
