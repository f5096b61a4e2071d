//! The bytes of a span of lines as bit maps, one bit per byte: where the
//! lines end and, for every byte, the answers the URN grammar asks of it.
//!
//! `urnscan dedup` judges lines of a few dozen bytes. Walked a byte at a
//! time, with a table lookup, a test and a branch per byte, the grammar cost
//! about 340 instructions a line, a third of the whole run, and the walk's
//! exits (the end of the NID, of the NSS, of each component) mispredicted on
//! every line; the vector kernel of [`super::class`] cannot help there, as
//! its set-up costs about as much as the byte loop on a short run. Here one
//! pass over a span of up to [`SPAN`] bytes turns every 64 bytes into nine
//! words of answers (`\n`, `%`, letter, digit or `-`, NSS character, hex
//! digit, bit 0x20 set, bit 0x40 set, `?`, `=`; bits 0x20 and 0x40 tell
//! upper-case letters and the hex digits `a`–`f`), and those, a word at a
//! time, into the seven maps lines are judged by:
//!
//! | map | bit set for a byte that is |
//! |---|---|
//! | `newline` | `\n` |
//! | `ldh` | a letter, digit or `-` (an NID character) |
//! | `upper` | an upper-case letter |
//! | `covered` | an NSS character after the first (`pchar` or `/`), or the `%` of an escape |
//! | `lower_escape` | the `%` of an escape with a digit in `a`–`f` |
//! | `frag` | `covered` or `?`: what a q- or f-component holds |
//! | `r_part` | `covered`, or `?` not followed by `=`: what an r-component holds |
//!
//! An escape is a `%` and two hex digits, found with shifts as in the class
//! kernel (`percent & hex >> 1 & hex >> 2`, the next word's digits shifted
//! in). [`for_each_line`] then steps from line end to line end with
//! `trailing_zeros` and clearing the lowest bit (a `memchr` per line cost
//! about 60 instructions a line) and hands each line the maps of its span,
//! so that its parts are judged a word at a time (`grammar/bits.rs`): the
//! length of a run is a `trailing_zeros`. Spans are small enough that their
//! bytes are still in the first-level cache when the lines are read. The
//! sets are those of [`crate::grammar::class`], read through the same nibble
//! tables as the class kernel, so the tables stay the one definition.
//!
//! Measured on a URN dataset of 1 M lines (callgrind, `urnscan dedup -q
//! -j1`): 1,151 M instructions with the walk and `\n` bits, 1,132 M with
//! these maps, the walk left with 1.9 % of the lines (the 1 % that are
//! invalid, and about one a span: the line that runs into the next); and
//! 8 % less time on the 10 M-line dataset at one and two threads
//! (`BENCHMARKS.md`, item 68): about as many instructions, far fewer
//! mispredicted branches.
//!
//! Kernels ([`ClassKernel`]): a byte loop over the tables, and AVX2 for the
//! whole 64-byte blocks (three `vpshufb` lookups, four compares and two
//! shifts per 32 bytes, each ending in a `vpmovmskb`); the last partial
//! block goes to the byte loop. The tests compare both with the definition
//! at every length up to 256 bytes and every alignment within 64.

use std::ops::Range;

use super::class::ClassKernel;
use crate::grammar::class::{is, HEX, LDH, NSS_TAIL};

/// The most bytes one [`LineBits`] holds.
pub const SPAN: usize = 4096;

/// Words per map: one per 64 bytes, and one more that stays zero, so that a
/// window of 64 bits may start anywhere in the span.
pub const WORDS: usize = SPAN / 64 + 1;

/// The kernel's nine answers for one 64-byte block: `\n`, `%`, [`LDH`],
/// [`NSS_TAIL`], [`HEX`], bit 0x20 set, bit 0x40 set, `?`, `=`.
pub(super) type Block = [u64; 9];

/// The maps of one span; see the module docs. Bits past the span's end are
/// zero.
#[derive(Clone)]
pub struct LineBits {
    /// `\n`.
    pub newline: [u64; WORDS],
    /// Letters, digits and `-` ([`LDH`]).
    pub ldh: [u64; WORDS],
    /// `A`–`Z`.
    pub upper: [u64; WORDS],
    /// NSS characters after the first ([`NSS_TAIL`]) and the `%` of escapes.
    pub covered: [u64; WORDS],
    /// The `%` of escapes with a digit in `a`–`f`.
    pub lower_escape: [u64; WORDS],
    /// What a q- or f-component may hold ([`crate::grammar::class::FRAG`]:
    /// `covered` and `?`).
    pub frag: [u64; WORDS],
    /// What an r-component may hold: `covered`, and `?` unless `=` follows
    /// (the first `?=` ends it).
    pub r_part: [u64; WORDS],
    /// Bytes of the span.
    len: usize,
}

impl Default for LineBits {
    fn default() -> Self {
        LineBits {
            newline: [0; WORDS],
            ldh: [0; WORDS],
            upper: [0; WORDS],
            covered: [0; WORDS],
            lower_escape: [0; WORDS],
            frag: [0; WORDS],
            r_part: [0; WORDS],
            len: 0,
        }
    }
}

impl LineBits {
    /// The maps of `span`, which must be at most [`SPAN`] bytes, with the
    /// best kernel.
    #[inline]
    pub fn fill(&mut self, span: &[u8]) {
        self.fill_with(span, ClassKernel::best());
    }

    /// [`LineBits::fill`] with `kernel`; a kernel this CPU lacks gives the
    /// byte loop's answer (the same answer).
    ///
    /// # Panics
    /// When `span` is longer than [`SPAN`].
    pub fn fill_with(&mut self, span: &[u8], kernel: ClassKernel) {
        assert!(span.len() <= SPAN, "a span of {} bytes", span.len());
        // The kernels hand over each block's answers with the previous
        // block's, whose maps need the digits at the start of this one.
        let mut previous = None;
        let done = match kernel {
            // SAFETY: AVX2 is checked right here; the kernel reads the whole
            // 64-byte blocks of `span` only.
            #[cfg(target_arch = "x86_64")]
            ClassKernel::Avx2 if kernel.is_available() => unsafe {
                super::x86_64::line_bits::blocks(span, |k, answers| self.next_block(&mut previous, k, answers))
            },
            _ => 0,
        };
        for (k, block) in span.chunks(64).enumerate().skip(done) {
            self.next_block(&mut previous, k, block_scalar(block));
        }
        // The block after the last answers nothing: windows read zeros
        // there, and no digit shifts into an escape from beyond the span.
        let blocks = span.len().div_ceil(64);
        self.next_block(&mut previous, blocks, [0; 9]);
        self.set(blocks, [0; 9], [0; 9]);
        self.len = span.len();
    }

    /// Takes block `k`'s answers; writes the maps of block `k - 1`.
    #[inline(always)]
    pub(super) fn next_block(&mut self, previous: &mut Option<Block>, k: usize, answers: Block) {
        if let Some(before) = previous.replace(answers) {
            self.set(k - 1, before, answers);
        }
    }

    /// The maps of block `k` from its answers and the next block's.
    #[inline(always)]
    fn set(&mut self, k: usize, answers: Block, next: Block) {
        let [newline, percent, ldh, nss, _, bit5, _, question, _] = answers;
        // Bit i of `ahead(..., n)` answers for byte i + n.
        let ahead = |m: usize, n: u32| answers[m] >> n | next[m] << (64 - n);
        let lower_digit = |a: &Block| a[4] & a[5] & a[6];
        let lower_ahead = |n: u32| lower_digit(&answers) >> n | lower_digit(&next) << (64 - n);
        let escape = percent & ahead(4, 1) & ahead(4, 2);
        let covered = nss | escape;
        self.newline[k] = newline;
        self.ldh[k] = ldh;
        // Among letters, digits and "-", only upper-case letters lack 0x20.
        self.upper[k] = ldh & !bit5;
        self.covered[k] = covered;
        self.lower_escape[k] = escape & (lower_ahead(1) | lower_ahead(2));
        self.frag[k] = covered | question;
        self.r_part[k] = covered | question & !ahead(8, 1);
    }

    /// Bytes of the span.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the span is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Calls `f(line, span)` for every line of `hay`, in order: `line` is its
/// range without the `\n` (the last line may end at the end of `hay`
/// instead), and `span` the maps of the [`SPAN`]-byte piece of `hay` that
/// holds the whole line, with the piece's start, or `None` for a line that
/// runs from one piece into the next. Generic, so that `f` is inlined into
/// the loop (the line loop of `urnscan dedup`).
#[inline]
pub fn for_each_line(hay: &[u8], mut f: impl FnMut(Range<usize>, Option<(&LineBits, usize)>)) {
    let mut bits = LineBits::default();
    let mut start = 0;
    for (k, span) in hay.chunks(SPAN).enumerate() {
        let base = k * SPAN;
        bits.fill(span);
        for (w, &word) in bits.newline[..span.len().div_ceil(64)].iter().enumerate() {
            let mut ends = word;
            while ends != 0 {
                let end = base + w * 64 + ends.trailing_zeros() as usize;
                f(start..end, (start >= base).then_some((&bits, base)));
                start = end + 1;
                ends &= ends - 1;
            }
        }
    }
    if start < hay.len() {
        // The last piece's maps are still those in `bits`.
        let base = (hay.len() - 1) / SPAN * SPAN;
        f(start..hay.len(), (start >= base).then_some((&bits, base)));
    }
}

/// Bits `at..at + 64` of `map` (bit 0 of the answer stands for byte `at`),
/// for `at` up to the span's length; bits past the span are zero.
#[inline(always)]
pub fn window(map: &[u64; WORDS], at: usize) -> u64 {
    let word = at / 64;
    let pair = u128::from(map[word]) | u128::from(map[(word + 1).min(WORDS - 1)]) << 64;
    (pair >> (at % 64)) as u64
}

/// The answers for up to 64 bytes, a byte at a time: the fallback kernel
/// and the reference the vector kernel is tested against.
pub(super) fn block_scalar(block: &[u8]) -> Block {
    let mut words = [0u64; 9];
    for (i, &b) in block.iter().enumerate().take(64) {
        let answers = [
            b == b'\n',
            b == b'%',
            is(b, LDH),
            is(b, NSS_TAIL),
            is(b, HEX),
            b & 0x20 != 0,
            b & 0x40 != 0,
            b == b'?',
            b == b'=',
        ];
        for (word, yes) in words.iter_mut().zip(answers) {
            *word |= u64::from(yes) << i;
        }
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::class::FRAG;
    use crate::platform::simd::tests::{lengths, offsets, tested, Rng};

    fn maps(bits: &LineBits) -> [&[u64; WORDS]; 7] {
        [&bits.newline, &bits.ldh, &bits.upper, &bits.covered, &bits.lower_escape, &bits.frag, &bits.r_part]
    }

    /// The definition, a byte and a map at a time, from the grammar's words:
    /// an escape is a `%` and two hex digits inside the span.
    fn reference(span: &[u8]) -> Vec<[bool; 7]> {
        let at = |i: usize| span.get(i).copied().unwrap_or(0);
        (0..span.len())
            .map(|i| {
                let b = span[i];
                let escape = b == b'%' && at(i + 1).is_ascii_hexdigit() && at(i + 2).is_ascii_hexdigit();
                let lower = |d: u8| (b'a'..=b'f').contains(&d);
                let covered = is(b, NSS_TAIL) || escape;
                [
                    b == b'\n',
                    b.is_ascii_alphanumeric() || b == b'-',
                    b.is_ascii_uppercase(),
                    covered,
                    escape && (lower(at(i + 1)) || lower(at(i + 2))),
                    is(b, FRAG) || escape,
                    covered || (b == b'?' && at(i + 1) != b'='),
                ]
            })
            .collect()
    }

    fn check(span: &[u8], bits: &LineBits, kernel: ClassKernel) {
        let want = reference(span);
        // The span's words and the zero word after them: all a window reads.
        let words = span.len().div_ceil(64) + 1;
        for (m, map) in maps(bits).into_iter().enumerate() {
            for i in 0..words * 64 {
                let got = map[i / 64] >> (i % 64) & 1 == 1;
                let wanted = want.get(i).is_some_and(|w| w[m]);
                assert_eq!(got, wanted, "{kernel:?}: map {m}, byte {i} of {}", span.len());
            }
        }
    }

    #[test]
    fn every_kernel_gives_the_definition_at_every_length_and_alignment() {
        let mut rng = Rng(0x1b17_5eed);
        // The grammar's characters, their case twins, `\n`, and high bytes.
        let alphabet = b"uUrRnN:-%aAfFgG09/??#==+~.\n \r\t\x00\x7f\x80\xc3\xe9\xff";
        let buf: Vec<u8> = (0..256 + 64).map(|_| alphabet[rng.below(alphabet.len())]).collect();
        let mut bits = LineBits::default();
        // Under Miri, where each length costs seconds, a stale span as long
        // as the longest tested is enough, and the kernels' 64-byte blocks
        // are cut at 0, 1, 2, 31 to 33 and 63 bytes into one.
        let stale = if cfg!(miri) { &[b'%'; SPAN][..320] } else { &[b'%'; SPAN][..] };
        let cut = |len: usize| !cfg!(miri) || matches!(len % 64, 0..=2 | 31..=33 | 63);
        for kernel in tested(ClassKernel::available(), ClassKernel::Scalar) {
            for align in offsets(64) {
                for len in lengths(256).filter(|&len| cut(len)) {
                    let span = &buf[align..align + len];
                    // A stale span first: nothing of it may show through.
                    bits.fill_with(stale, kernel);
                    bits.fill_with(span, kernel);
                    assert_eq!(bits.len(), len);
                    check(span, &bits, kernel);
                }
            }
        }
    }

    #[test]
    fn a_whole_span_and_its_last_word() {
        let span: Vec<u8> = (0..SPAN).map(|i| if i % 7 == 0 { b'\n' } else { b"a%-Z/e%"[i % 7] }).collect();
        let mut bits = LineBits::default();
        for kernel in tested(ClassKernel::available(), ClassKernel::Scalar) {
            bits.fill_with(&span, kernel);
            check(&span, &bits, kernel);
        }
    }

    #[test]
    fn windows_start_anywhere() {
        let mut bits = LineBits::default();
        let span: Vec<u8> = (0..200).map(|i| if i % 3 == 0 { b'\n' } else { b'x' }).collect();
        bits.fill(&span);
        for at in 0..=span.len() {
            let want = (0..64).filter(|k| span.get(at + k) == Some(&b'\n')).fold(0u64, |w, k| w | 1 << k);
            assert_eq!(window(&bits.newline, at), want, "at {at}");
        }
    }

    proptest::proptest! {
        /// Every line once, in order, across the spans: with its piece's
        /// maps exactly when it lies inside one piece.
        #[test]
        #[cfg_attr(miri, ignore = "the sweeps reach every load; too slow interpreted")]
        fn every_line_is_visited_in_order(
            hay in proptest::collection::vec(proptest::sample::select(b"\nab".to_vec()), 0..10_000),
        ) {
            let mut got = Vec::new();
            for_each_line(&hay, |line, span| {
                let piece = span.map(|(bits, base)| (base, bits.len()));
                got.push((line, piece));
            });
            let mut want = Vec::new();
            let mut start = 0;
            for (i, _) in hay.iter().enumerate().filter(|&(_, &b)| b == b'\n') {
                want.push(start..i);
                start = i + 1;
            }
            if start < hay.len() {
                want.push(start..hay.len());
            }
            proptest::prop_assert_eq!(got.iter().map(|(l, _)| l.clone()).collect::<Vec<_>>(), want);
            for (line, piece) in got {
                // The piece of its first byte, and of its `\n` (or last byte).
                let ended_by = if line.end < hay.len() { line.end } else { line.end - 1 };
                let (first, last) = (line.start / SPAN, ended_by / SPAN);
                let whole = hay.chunks(SPAN).nth(first).map(|p| (first * SPAN, p.len()));
                proptest::prop_assert_eq!(piece, whole.filter(|_| first == last), "{:?}", line);
            }
        }
    }

    #[test]
    #[should_panic(expected = "a span of 4097 bytes")]
    fn a_longer_span_is_refused() {
        LineBits::default().fill(&[0; SPAN + 1]);
    }
}
