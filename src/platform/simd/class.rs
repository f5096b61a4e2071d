//! Runs of class members and `%HH` escapes: the NSS/component hot loop of
//! the grammar, 64 bytes per step.
//!
//! [`ClassRun::run`] answers one question: starting at `from`, where does a
//! walk that steps over members of a class (one byte) and valid escapes
//! (`%` and two hex digits, three bytes) stop? That is all the grammar needs
//! from an NSS, r-, q- or f-component between its delimiters, and it also
//! reports whether any escape it stepped over has a lower-case hex digit
//! (the one thing the equivalence key has to fix in an NSS).
//!
//! # The tables stay the definition
//!
//! The scalar kernel is the walk itself over [`crate::grammar::class::CLASS`],
//! eight lookups per block. The AVX2 kernel uses a form of the same table
//! that `vpshufb` can read: for a set of ASCII bytes, `LOW[class][lo]` has bit
//! `hi` set when byte `hi * 16 + lo` is a member; a byte is a member when
//! `LOW[lo] & (1 << hi)` is not zero, which `vpshufb` computes for 32 bytes
//! at once (bytes >= 0x80 look up a zero high-nibble bit, so they are never
//! members, as in `CLASS`). Those nibble tables are built at compile time
//! from `CLASS`, and the tests compare both kernels with a byte-at-a-time
//! walk over `CLASS` at every length and alignment up to 256 bytes.
//!
//! # The escape trick
//!
//! The vector kernel turns 64 bytes into bit masks (non-members, `%`, hex
//! digits, `a`–`f` candidates) and finds valid escapes with shifts:
//! `pct & hex >> 1 & hex >> 2`. The bytes an escape covers are then cleared
//! from the non-member mask and the lowest remaining bit is the stop. This
//! equals the byte walk because the walk visits every `%` before its stop
//! (hex digits are never `%`, so no escape hides another), and only escapes
//! starting at or after `from` count. A `%` in the last two bytes of a
//! window has its digits outside it; it shows as a stop, and the kernel
//! checks that escape by hand and goes on after it.
//!
//! Tails shorter than a window reload the last 64 bytes of the input (when it
//! has that many) and shift the masks; shorter inputs are copied to a zeroed
//! stack buffer (zero is a non-member, so it stops the walk at the end).
//! Inputs with fewer than [`SHORT`] bytes left never reach a kernel: a byte
//! loop over the table, escapes inline, is cheaper than a call, a copy and a
//! window there (measured: 26 against 41 ns per ~20-byte URN).
//!
//! # The key's escape fix-up
//!
//! [`ClassRun::upper_case_escapes`] upper-cases the hex digits of the
//! escapes in a copied NSS, 32 bytes per step on AVX2: loads at `j - 1` and
//! `j - 2` line each byte up with the two before it, so "follows a `%`" is
//! two compares, with no search loop (it replaced one `memchr` per escape).
//!
//! The kernel is chosen per [`ClassRun`] with `is_x86_feature_detected!`
//! (std caches the CPUID answer, so constructing one per parse is a load and
//! a bit test).

use crate::grammar::class::{is, skip_members, CLASS, HEX};

/// Where a run stopped, and what it stepped over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Run {
    /// The first index the walk could not step over (`hay.len()` at the end).
    pub end: usize,
    /// Whether an escape in the run has a lower-case hex digit (`%2c`).
    pub lower_hex: bool,
}

/// Inputs with fewer bytes left than this are walked a byte at a time.
pub const SHORT: usize = 32;

/// Which implementation [`ClassRun`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ClassKernel {
    /// Table lookups, eight bytes per block; every target.
    Scalar,
    /// x86_64 AVX2 `vpshufb` lookups, 64 bytes per step (detected at run time).
    Avx2,
}

impl ClassKernel {
    /// Every kernel this CPU supports, slowest first.
    pub fn available() -> Vec<ClassKernel> {
        [ClassKernel::Scalar, ClassKernel::Avx2].into_iter().filter(|k| k.is_available()).collect()
    }

    /// The fastest kernel this CPU supports.
    #[inline]
    pub fn best() -> ClassKernel {
        if ClassKernel::Avx2.is_available() {
            ClassKernel::Avx2
        } else {
            ClassKernel::Scalar
        }
    }

    /// Whether this CPU (and this build's target) supports the kernel.
    #[inline]
    pub fn is_available(self) -> bool {
        match self {
            ClassKernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            ClassKernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(not(target_arch = "x86_64"))]
            ClassKernel::Avx2 => false,
        }
    }
}

/// The run finder with a kernel fixed at construction.
///
/// Invariant: `kernel.is_available()` held when it was built, which is what
/// makes the `unsafe` kernel call in [`ClassRun::run`] sound.
#[derive(Clone, Copy, Debug)]
pub struct ClassRun {
    kernel: ClassKernel,
}

impl Default for ClassRun {
    fn default() -> Self {
        ClassRun::new()
    }
}

impl ClassRun {
    /// The fastest kernel this CPU supports.
    #[inline]
    pub fn new() -> ClassRun {
        ClassRun { kernel: ClassKernel::best() }
    }

    /// Uses `kernel`, or `None` when this CPU lacks it.
    pub fn with_kernel(kernel: ClassKernel) -> Option<ClassRun> {
        kernel.is_available().then_some(ClassRun { kernel })
    }

    /// The kernel in use.
    pub fn kernel(&self) -> ClassKernel {
        self.kernel
    }

    /// Walks `hay` from `from` over bytes in `class` (a single bit of
    /// `CLASS`) and valid `%HH` escapes; see the module docs. `from` past
    /// the end stops at once.
    #[inline(always)]
    pub fn run(&self, hay: &[u8], from: usize, class: u8) -> Run {
        let mut lower_hex = false;
        let mut at = from.min(hay.len());
        if hay.len() - at < SHORT {
            return run_bytes(hay, at, class);
        }
        loop {
            let (end, lower) = self.kernel_run(hay, at, class);
            lower_hex |= lower;
            // A kernel may stop at an escape it could not see whole.
            match escape_at(hay, end) {
                Some(lower) => {
                    lower_hex |= lower;
                    at = end + 3;
                }
                None => return Run { end, lower_hex },
            }
        }
    }

    /// For every index `j` at or after `from` (and at least 2): `dst[j]`
    /// becomes `src[j]` with bit 0x20 cleared when `src[j]` follows a `%` by
    /// one or two places and has bits 0x60 set; other bytes of `dst` are
    /// left alone. Both slices are cut to the shorter length.
    ///
    /// With `dst` a copy of a validated NSS, the bytes changed are exactly
    /// the lower-case hex digits of its escapes (`a`–`f`), upper-cased: the
    /// hex fix-up of the equivalence key. Reading `src` rather than the
    /// bytes just written keeps loads from waiting on stores.
    #[inline]
    pub fn upper_case_escapes(&self, src: &[u8], dst: &mut [u8], from: usize) {
        let len = src.len().min(dst.len());
        let (src, dst) = (&src[..len], &mut dst[..len]);
        let from = from.max(2);
        match self.kernel {
            // SAFETY: the struct only holds an available kernel (invariant),
            // and the kernel's length and `from` conditions are checked here.
            #[cfg(target_arch = "x86_64")]
            ClassKernel::Avx2 if len >= from + 32 => unsafe {
                super::x86_64::class::upper_case_escapes(src, dst, from)
            },
            _ => upper_case_escapes_scalar(src, dst, from),
        }
    }

    #[inline(always)]
    fn kernel_run(&self, hay: &[u8], from: usize, class: u8) -> (usize, bool) {
        match self.kernel {
            ClassKernel::Scalar => (skip_members(hay, from, class), false),
            // SAFETY: the struct only holds an available kernel (invariant).
            #[cfg(target_arch = "x86_64")]
            ClassKernel::Avx2 => unsafe { super::x86_64::class::run(hay, from, class_index(class)) },
            #[cfg(not(target_arch = "x86_64"))]
            ClassKernel::Avx2 => (skip_members(hay, from, class), false),
        }
    }
}

/// [`ClassRun::upper_case_escapes`] a byte at a time (`from` >= 2, equal lengths).
fn upper_case_escapes_scalar(src: &[u8], dst: &mut [u8], from: usize) {
    for j in from..src.len() {
        if (src[j - 1] == b'%' || src[j - 2] == b'%') && src[j] & 0x60 == 0x60 {
            dst[j] = src[j] & !0x20;
        }
    }
}

/// [`ClassRun::run`] a byte at a time: for short inputs, where setting up a
/// block costs more than it saves.
#[inline(always)]
fn run_bytes(hay: &[u8], mut i: usize, class: u8) -> Run {
    let mut lower_hex = false;
    while let Some(&b) = hay.get(i) {
        if is(b, class) {
            i += 1;
            continue;
        }
        match escape_at(hay, i) {
            Some(lower) => {
                lower_hex |= lower;
                i += 3;
            }
            None => break,
        }
    }
    Run { end: i, lower_hex }
}

/// `Some(has a lower-case digit)` when `hay[at..]` starts with `%HH`.
#[inline(always)]
pub(super) fn escape_at(hay: &[u8], at: usize) -> Option<bool> {
    match hay.get(at..at + 3) {
        Some(&[b'%', h1, h2]) if is(h1, HEX) && is(h2, HEX) => Some(is_lower_hex(h1) || is_lower_hex(h2)),
        _ => None,
    }
}

/// For a hex digit: whether it is one of `a`–`f`.
#[inline(always)]
fn is_lower_hex(digit: u8) -> bool {
    digit & 0x60 == 0x60 && digit > b'9'
}

/// Nibble table for `vpshufb`: `table[lo]` has bit `hi` set when byte
/// `hi * 16 + lo` (`hi` < 8) is in a class of `bits`, as [`is`] tests it.
const fn low_nibble_table(bits: u8) -> [u8; 16] {
    let mut table = [0u8; 16];
    let mut byte = 0;
    while byte < 0x80 {
        if CLASS[byte] & bits != 0 {
            table[byte & 0x0f] |= 1 << (byte >> 4);
        }
        byte += 1;
    }
    table
}

const fn all_low_nibble_tables() -> [[u8; 16]; 8] {
    let mut tables = [[0u8; 16]; 8];
    let mut bit = 0;
    while bit < 8 {
        tables[bit] = low_nibble_table(1 << bit);
        bit += 1;
    }
    tables
}

/// [`low_nibble_table`] of each single class bit, by bit index.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) static LOW_NIBBLE: [[u8; 16]; 8] = all_low_nibble_tables();
/// The hex digit table in the same form.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) static HEX_LOW_NIBBLE: [u8; 16] = low_nibble_table(HEX);
/// `1 << hi` for high nibbles 0–7; zero for non-ASCII bytes.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(super) static HIGH_NIBBLE_BIT: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 0, 0, 0, 0, 0, 0, 0, 0];

/// The index in [`LOW_NIBBLE`] of a single class bit.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
#[inline(always)]
fn class_index(class: u8) -> usize {
    debug_assert!(class.is_power_of_two(), "one class at a time");
    class.trailing_zeros() as usize & 7
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::grammar::class::{FRAG, LDH, NSS_TAIL, TRANS};

    /// The definition, one byte at a time over `CLASS`.
    fn oracle(hay: &[u8], from: usize, class: u8) -> Run {
        let mut i = from.min(hay.len());
        let mut lower_hex = false;
        loop {
            if i < hay.len() && CLASS[hay[i] as usize] & class != 0 {
                i += 1;
            } else if i + 2 < hay.len()
                && hay[i] == b'%'
                && CLASS[hay[i + 1] as usize] & HEX != 0
                && CLASS[hay[i + 2] as usize] & HEX != 0
            {
                lower_hex |= matches!(hay[i + 1], b'a'..=b'f') || matches!(hay[i + 2], b'a'..=b'f');
                i += 3;
            } else {
                return Run { end: i, lower_hex };
            }
        }
    }

    use crate::platform::simd::tests::{lengths, offsets, positions, tested, Rng};

    /// Mostly members and escapes (so runs are long), with every kind of
    /// stop: `%` with bad or missing digits, delimiters, controls, high bytes.
    fn random_buffer(rng: &mut Rng, len: usize, stops: usize) -> Vec<u8> {
        const MEMBERS: &[u8] = b"aZ09-._~:@!$'()*+,;=/";
        const ODD: &[u8] = b"%?#&~ \"<>\\^`{|}\x00\x1f\x7f\x80\xc3\xff";
        let mut buf = Vec::with_capacity(len + 2);
        while buf.len() < len {
            match rng.below(32) {
                0..=3 => {
                    let digits = b"0123456789abcdefABCDEFgG%";
                    buf.extend_from_slice(&[b'%', digits[rng.below(digits.len())], digits[rng.below(digits.len())]]);
                }
                k if k < 4 + stops => buf.push(ODD[rng.below(ODD.len())]),
                _ => buf.push(MEMBERS[rng.below(MEMBERS.len())]),
            }
        }
        buf.truncate(len);
        buf
    }

    fn kernels() -> Vec<ClassRun> {
        let kernels = tested(ClassKernel::available(), ClassKernel::Scalar);
        kernels.into_iter().map(|k| ClassRun::with_kernel(k).unwrap()).collect()
    }

    #[test]
    fn nibble_tables_agree_with_class() {
        for (bit, low) in LOW_NIBBLE.iter().enumerate() {
            for byte in 0..=255u8 {
                let hi = HIGH_NIBBLE_BIT[usize::from(byte >> 4)];
                let member = low[usize::from(byte & 0x0f)] & hi != 0;
                assert_eq!(member, is(byte, 1 << bit), "bit {bit} byte {byte:#x}");
                let hex = HEX_LOW_NIBBLE[usize::from(byte & 0x0f)] & hi != 0;
                assert_eq!(hex, is(byte, HEX), "byte {byte:#x}");
            }
        }
    }

    #[test]
    fn every_kernel_equals_the_byte_walk_at_every_length_alignment_and_start() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let kernels = kernels();
        let classes = [NSS_TAIL, FRAG, TRANS, LDH];
        for len in lengths(256) {
            // Every start address modulo 64 (the kernel's step), with the
            // density of stops and the class varying along.
            for align in offsets(64) {
                let buf = random_buffer(&mut rng, 128 + len, (len + align) % 4);
                let base = buf.as_ptr().align_offset(64);
                let hay = &buf[base + align..base + align + len];
                let class = classes[(len / 3 + align) % classes.len()];
                for from in positions(len + 1) {
                    let want = oracle(hay, from, class);
                    for k in &kernels {
                        assert_eq!(k.run(hay, from, class), want, "{:?} len {len} from {from} {hay:?}", k.kernel());
                    }
                }
            }
        }
    }

    #[test]
    fn a_single_stop_or_escape_at_every_position() {
        let kernels = kernels();
        for len in lengths(200).skip(1) {
            for at in positions(len - 1) {
                for (stop, class) in [
                    (&b"%"[..], NSS_TAIL),
                    (b"%4", NSS_TAIL),
                    (b"%4f", NSS_TAIL),
                    (b"%A1", TRANS),
                    (b"?", NSS_TAIL),
                    (b"\x80", FRAG),
                ] {
                    let mut hay = vec![b'x'; len];
                    let end = (at + stop.len()).min(len);
                    hay[at..end].copy_from_slice(&stop[..end - at]);
                    let want = oracle(&hay, 0, class);
                    for k in &kernels {
                        assert_eq!(k.run(&hay, 0, class), want, "{:?} len {len} at {at} {stop:?}", k.kernel());
                    }
                }
            }
        }
    }

    #[test]
    fn every_escape_fix_up_equals_the_definition() {
        // The definition, reading a copy of the input.
        fn want(key: &[u8], from: usize) -> Vec<u8> {
            let mut out = key.to_vec();
            for j in from.max(2)..key.len() {
                if (key[j - 1] == b'%' || key[j - 2] == b'%') && matches!(key[j], 0x60..=0x7f | 0xe0..=0xff) {
                    out[j] = key[j] - 0x20;
                }
            }
            out
        }
        let mut rng = Rng(0x5eed);
        const BYTES: &[u8] = b"%%%aAfF09gz`{~\x7f\xe5\xc5";
        let starts: &[usize] = if cfg!(miri) { &[0, 31] } else { &[0, 1, 7, 31] };
        for len in lengths(256) {
            for &offset in starts {
                let buf: Vec<u8> = (0..offset + len).map(|_| BYTES[rng.below(BYTES.len())]).collect();
                for from in [0, 1, 2, 3, len / 2, len.saturating_sub(33), len.saturating_sub(32), len] {
                    for k in kernels() {
                        let mut key = buf[offset..].to_vec();
                        k.upper_case_escapes(&buf[offset..], &mut key, from);
                        assert_eq!(key, want(&buf[offset..], from), "{:?} len {len} from {from}", k.kernel());
                    }
                }
            }
        }
        let src = b"urn:ex:%2c%aF%%e1z%";
        let mut key = src.to_vec();
        ClassRun::new().upper_case_escapes(src, &mut key, 7);
        assert_eq!(key, b"urn:ex:%2C%AF%%E1z%");
    }

    #[test]
    fn oracle_examples() {
        // From the grammar: "%2c" is one step with a lower-case digit, "%2"
        // at the end and "%G0" stop at the "%".
        assert_eq!(oracle(b"ab%2cd", 0, NSS_TAIL), Run { end: 6, lower_hex: true });
        assert_eq!(oracle(b"ab%2Cd", 0, NSS_TAIL), Run { end: 6, lower_hex: false });
        assert_eq!(oracle(b"ab%2", 0, NSS_TAIL), Run { end: 2, lower_hex: false });
        assert_eq!(oracle(b"a%G0", 0, NSS_TAIL), Run { end: 1, lower_hex: false });
        assert_eq!(oracle(b"a?b", 0, NSS_TAIL), Run { end: 1, lower_hex: false });
        assert_eq!(oracle(b"a?b", 0, FRAG), Run { end: 3, lower_hex: false });
    }
}
