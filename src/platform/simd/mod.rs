//! Candidate search: where does the next `urn:` (any ASCII case) start?
//!
//! Everything after this step (grammar, dedup) only runs at candidates, so on
//! URN-sparse text this search *is* the scanner's speed.
//!
//! # Design
//!
//! [`UrnFinder`] picks a [`Kernel`] once, at construction, with
//! `is_x86_feature_detected!`, and keeps it in the struct (no global state; a
//! `match` on a field that never changes is a perfectly predicted branch).
//! The layout follows the memchr crate: `scalar.rs` is the portable fallback,
//! `x86_64/{sse2,avx2}.rs` are `#[target_feature]` kernels; other targets use
//! the scalar kernel.
//!
//! Vector kernels test one candidate start per lane. Exact test of a block
//! at `p`: four unaligned loads at `p`, `p+1`, `p+2`, `p+3`, so lane `k` of
//! load `j` is byte `p+k+j`. Loads 0–2 are OR-ed with 0x20 and compared with
//! `u`, `r`, `n` (OR 0x20 is an exact case fold for these three letters: only
//! 0x55 and 0x75 become 0x75, etc.); load 3 is compared with `:` as is (0x3A
//! already has bit 0x20, so folding it would also accept 0x1A). AND of the
//! four masks, then `movemask`, gives the match starts of the block as bits;
//! the lowest one is the answer.
//!
//! That exact test is load-bound (four loads per block, several of them split
//! across cache lines), so the main loop runs a cheap superset test first:
//! `u`/`U` at +0 AND `:` at +3, two loads of which the first is aligned, over
//! a turn of blocks (four in SSE2, 64 bytes; in AVX2 four, 128 bytes, or two,
//! 64 bytes, when it prefetches: see `x86_64/avx2.rs`) with one branch. In
//! text, `u` followed 3 bytes later by `:` is rare, so the exact test runs on
//! few turns. Edges need no scalar loop: an exact head block covers the bytes
//! before the first aligned address, and one exact block that ENDS at the
//! haystack end covers the tail; it overlaps positions already proven empty,
//! so its lowest set bit is still the first match. Haystacks shorter than one
//! block plus 3 bytes go down to SSE2 (19 bytes), then scalar. The scalar
//! kernel runs the same cheap test as SWAR on four 8-byte words per turn.
//! The x86_64 main loops can also prefetch the haystack 4 KiB ahead: the
//! search is bound by memory, and on Intel VMs and AMD Zen 3 and Zen 5 ones
//! the hardware prefetcher alone left it slower than with the prefetch,
//! while on an AMD Zen 4 one the extra requests made it slower (see
//! `x86_64/mod.rs`). The finder turns it on for Intel CPUs, Zen 3 EPYC
//! (family 25, models 0-15) and AMD CPUs from Zen 5 (family 26) on
//! ([`UrnFinder::prefetches`]).
//!
//! # Measured
//!
//! 2-core Xeon VM with AVX2, shared with other builds: the 64 MiB numbers
//! move with other processes' memory traffic (under load earlier runs gave
//! avx2 5–20, sse2 3–18 GiB/s), the L2 ones much less. Quiet run of
//! `cargo bench --bench search -- --warm-up-time 1 --measurement-time 3`,
//! log/XML-like text with 216 `urn:` per MiB and 4.2% `:` bytes, GiB/s:
//!
//! | | 64 MiB | 256 KiB (L2) |
//! |---|---|---|
//! | read_every_byte (floor) | 24.1 | 65.0 |
//! | memchr `\n` count | 18.9 | 29.5 |
//! | **avx2** | 17.1 | 27.9 |
//! | **sse2** | 14.8 | 21.9 |
//! | **scalar** (SWAR) | 10.0 | 12.0 |
//! | regex `(?i)urn:` | 6.6 | 7.6 |
//! | memmem `urn:` (case-sensitive, not an answer) | 16.9 | 23.0 |
//! | memchr `:` then check | 2.1 | 2.7 |
//!
//! Variants measured on the way (best of 25 runs, L2-resident 256 KiB, GB/s):
//! exact test only, 32 B/turn 15.8, 128 B/turn 17.3; cheap test first,
//! unaligned 64 B/turn 24.6, 128 B/turn 27.4; cheap test with aligned first
//! load 64 B/turn 29.1, **128 B/turn 30.5** (shipped AVX2); one load per
//! block with per-letter movemasks combined by shifts 14.3; SSE2 exact only
//! 12.5, **cheap+aligned 64 B/turn 24–26** (shipped); scalar per position 1.6,
//! SWAR cheap test 8/16/32/64 B per turn 8.0/11.9/**15.2** (shipped)/14.5;
//! memchr `:` then check 2.9; memmem (case-sensitive, for scale) 26.5.
//! memmem cannot be made case-insensitive here: any literal it could search
//! for (`rn:`, `:`) still needs a check per hit, and `:` is frequent in logs,
//! so no memmem-based kernel is shipped.
//!
//! AVX-512 is deliberately not used: it measured slower on this machine.

pub mod ascii16;
pub mod class;
pub mod line_bits;
pub mod marks;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86_64;

/// A search implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// Portable search (SWAR on 8-byte words); the only kernel off x86_64.
    Scalar,
    /// x86_64 SSE2, 16 positions per vector (part of the x86_64 baseline).
    Sse2,
    /// x86_64 AVX2, 32 positions per vector (detected at run time).
    Avx2,
}

impl Kernel {
    /// Every kernel, slowest first, whether or not this CPU supports it.
    pub const ALL: [Kernel; 3] = [Kernel::Scalar, Kernel::Sse2, Kernel::Avx2];

    /// The fastest kernel this CPU supports.
    pub fn best() -> Kernel {
        Kernel::ALL.into_iter().rev().find(|k| k.is_available()).unwrap_or(Kernel::Scalar)
    }

    /// Every kernel this CPU supports, slowest first.
    pub fn available() -> Vec<Kernel> {
        Kernel::ALL.into_iter().filter(|k| k.is_available()).collect()
    }

    /// Whether this CPU (and this build's target) supports the kernel.
    pub fn is_available(self) -> bool {
        match self {
            Kernel::Scalar => true,
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => std::arch::is_x86_feature_detected!("sse2"),
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => std::arch::is_x86_feature_detected!("avx2"),
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Sse2 | Kernel::Avx2 => false,
        }
    }

    /// Short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Scalar => "scalar",
            Kernel::Sse2 => "sse2",
            Kernel::Avx2 => "avx2",
        }
    }
}

/// Finds case-insensitive `urn:` with a kernel chosen once at construction.
///
/// Invariant: `kernel.is_available()` held when the finder was built (both
/// constructors check it), which is what makes the `unsafe` kernel calls in
/// [`UrnFinder::find`] sound.
#[derive(Clone, Copy, Debug)]
pub struct UrnFinder {
    kernel: Kernel,
    /// Whether the vector kernels prefetch the haystack ahead.
    prefetch: bool,
}

impl Default for UrnFinder {
    fn default() -> Self {
        UrnFinder::new()
    }
}

impl UrnFinder {
    /// Uses [`Kernel::best`]. Build a finder once and copy it: choosing
    /// the prefetch default asks the CPU (`cpuid`), which is slow in a
    /// virtual machine.
    pub fn new() -> UrnFinder {
        UrnFinder { kernel: Kernel::best(), prefetch: prefetch_helps() }
    }

    /// Uses `kernel`, or `None` when this CPU lacks it.
    pub fn with_kernel(kernel: Kernel) -> Option<UrnFinder> {
        kernel.is_available().then_some(UrnFinder { kernel, prefetch: prefetch_helps() })
    }

    /// The same finder with software prefetch of the haystack turned on or
    /// off. It changes speed only, never a result; by default it is on
    /// where it was measured to help (Intel CPUs, Zen 3 EPYC, AMD CPUs from
    /// Zen 5 on).
    /// Ignored by the scalar kernel.
    pub fn with_prefetch(self, prefetch: bool) -> UrnFinder {
        UrnFinder { prefetch, ..self }
    }

    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }

    /// Whether the vector kernels prefetch the haystack ahead.
    pub fn prefetches(&self) -> bool {
        self.prefetch
    }

    /// Start of the first `urn:` (any case) that begins at or after `from`.
    ///
    /// Exactly `hay[from..].windows(4).position(|w| w.eq_ignore_ascii_case(b"urn:"))`
    /// shifted by `from`; `None` when `from > hay.len()`.
    #[inline]
    pub fn find(&self, hay: &[u8], from: usize) -> Option<usize> {
        let rest = hay.get(from..)?;
        let found = match self.kernel {
            Kernel::Scalar => scalar::find(rest),
            // SAFETY: the finder only holds a kernel that `is_available()`
            // (struct invariant), so the CPU has the feature.
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 if self.prefetch => unsafe { x86_64::sse2::find::<true>(rest) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Kernel::Sse2 => unsafe { x86_64::sse2::find::<false>(rest) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 if self.prefetch => unsafe { x86_64::avx2::find::<true>(rest) },
            // SAFETY: as above.
            #[cfg(target_arch = "x86_64")]
            Kernel::Avx2 => unsafe { x86_64::avx2::find::<false>(rest) },
            #[cfg(not(target_arch = "x86_64"))]
            Kernel::Sse2 | Kernel::Avx2 => scalar::find(rest),
        };
        found.map(|p| p + from)
    }

    /// Every candidate start in `hay`, in order (overlaps cannot occur:
    /// `urn:` has no proper prefix that is also a suffix).
    pub fn find_iter<'h>(&self, hay: &'h [u8]) -> FindIter<'h> {
        FindIter { finder: *self, hay, from: 0 }
    }
}

/// Whether this CPU's vector kernels should prefetch ahead by default.
fn prefetch_helps() -> bool {
    #[cfg(target_arch = "x86_64")]
    return x86_64::software_prefetch_helps();
    #[cfg(not(target_arch = "x86_64"))]
    return false;
}

/// Iterator over candidate starts; see [`UrnFinder::find_iter`].
#[derive(Clone, Debug)]
pub struct FindIter<'h> {
    finder: UrnFinder,
    hay: &'h [u8],
    from: usize,
}

impl Iterator for FindIter<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let at = self.finder.find(self.hay, self.from)?;
        // A match can never start inside the previous one, so skip all 4 bytes.
        self.from = at + 4;
        Some(at)
    }
}

/// Reads every byte of `hay` and folds them together: the speed floor a
/// search cannot beat.
pub fn read_every_byte(hay: &[u8]) -> u8 {
    hay.iter().fold(0, |a, &b| a ^ b)
}

/// The value of field `name` in /proc/cpuinfo (its first processor), as
/// Linux decodes it from `cpuid`: the tests compare our own decoding and
/// defaults with it. `None` where the file or the field is missing (other
/// systems, sandboxes), and those tests then have nothing to compare.
#[cfg(all(test, target_arch = "x86_64"))]
fn cpuinfo_field(name: &str) -> Option<String> {
    let info = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    // Fields are `name<tabs>: value`; "model" is also the start of "model name".
    let line = info.lines().find(|l| l.split(':').next().map(str::trim) == Some(name))?;
    Some(line.split_once(':')?.1.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The written rule, position by position, straight from the brief.
    fn definition(hay: &[u8], from: usize) -> Option<usize> {
        hay.get(from..)?.windows(4).position(|w| w.eq_ignore_ascii_case(b"urn:")).map(|p| p + from)
    }

    /// `next[f]` = definition(hay, f) for every `f` in `0..=len`, in one backward pass.
    fn definition_table(hay: &[u8]) -> Vec<Option<usize>> {
        let mut next = vec![None; hay.len() + 1];
        for f in (0..hay.len()).rev() {
            let here = hay.len() - f >= 4 && hay[f..f + 4].eq_ignore_ascii_case(b"urn:");
            next[f] = if here { Some(f) } else { next[f + 1] };
        }
        next
    }

    /// The buffer lengths of the sweeps that compare the kernels with
    /// their definitions: every one up to `max`. Under Miri, which
    /// interprets every load and would take hours over them, every one up
    /// to 40 (past one 32-byte vector, with every shorter tail) and those
    /// around 64, 128 and `max` (one and two turns of the 64-byte loops):
    /// what Miri checks is that no kernel reads outside its slice or breaks
    /// another rule of `unsafe` code (`.ci/run` runs it).
    pub(super) fn lengths(max: usize) -> impl Iterator<Item = usize> {
        let miri =
            move |len: usize| len <= 40 || (62..=66).contains(&len) || (126..=130).contains(&len) || len + 2 >= max;
        (0..=max).filter(move |&len| !cfg!(miri) || miri(len))
    }

    /// Offsets of a slice's start from an aligned address: every one below
    /// `n`, or under Miri (see [`lengths`]) 0, 1 and `n - 1`.
    pub(super) fn offsets(n: usize) -> Vec<usize> {
        if cfg!(miri) {
            vec![0, 1, n - 1]
        } else {
            (0..n).collect()
        }
    }

    /// The kernels a test compares: every one available, or under Miri
    /// (see [`lengths`]) all but `scalar`, safe code that the native run
    /// tests.
    pub(super) fn tested<K: PartialEq>(available: Vec<K>, scalar: K) -> Vec<K> {
        available.into_iter().filter(|k| !cfg!(miri) || *k != scalar).collect()
    }

    /// Positions from 0 to `last` where a sweep starts a search or plants
    /// a byte: every one, or under Miri (see [`lengths`]) the first two,
    /// the middle and the last two.
    pub(super) fn positions(last: usize) -> Vec<usize> {
        if cfg!(miri) {
            let mut some = vec![0, 1, last / 2, last.saturating_sub(1), last];
            some.retain(|&p| p <= last);
            some.dedup();
            some
        } else {
            (0..=last).collect()
        }
    }

    /// xorshift64*: deterministic, no dependency (shared with the class
    /// kernel's tests).
    pub(super) struct Rng(pub(super) u64);
    impl Rng {
        pub(super) fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }
        pub(super) fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }

    /// Bytes that make near misses likely: every case of the letters, the
    /// colon and its case-flipped twin 0x1A, high-bit twins, filler.
    const ALPHABET: &[u8] = b"uUrRnN::::x \x1a\x0e\xf5\xd5\xf2\xee\xbaUrn";

    /// A random buffer over [`ALPHABET`] with a few whole `urn:`s (random case) planted.
    fn random_buffer(rng: &mut Rng, len: usize) -> Vec<u8> {
        let mut buf: Vec<u8> = (0..len).map(|_| ALPHABET[rng.below(ALPHABET.len())]).collect();
        if len >= 4 {
            for _ in 0..rng.below(4) {
                let at = rng.below(len - 3);
                for (k, &c) in b"urn:".iter().enumerate() {
                    buf[at + k] = if rng.below(2) == 0 { c.to_ascii_uppercase() } else { c };
                }
            }
        }
        buf
    }

    fn finders() -> Vec<UrnFinder> {
        let kernels =
            tested(Kernel::available(), Kernel::Scalar).into_iter().map(|k| UrnFinder::with_kernel(k).unwrap());
        kernels.flat_map(|f| [f.with_prefetch(false), f.with_prefetch(true)]).collect()
    }

    #[test]
    #[cfg_attr(miri, ignore = "no kernel runs here")]
    fn definition_table_matches_definition() {
        let mut rng = Rng(7);
        for len in 0..64 {
            let buf = random_buffer(&mut rng, len);
            let table = definition_table(&buf);
            for (from, &want) in table.iter().enumerate() {
                assert_eq!(definition(&buf, from), want);
            }
        }
    }

    #[test]
    fn every_kernel_equals_definition_at_every_alignment_length_and_from() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let finders = finders();
        for len in lengths(256) {
            let buf = random_buffer(&mut rng, 64 + len);
            for offset in offsets(64) {
                let hay = &buf[offset..offset + len];
                let table = definition_table(hay);
                for f in &finders {
                    for from in positions(len) {
                        let want = table[from];
                        assert_eq!(
                            f.find(hay, from),
                            want,
                            "{} len {len} offset {offset} from {from}",
                            f.kernel().name()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn single_match_at_every_position_across_block_boundaries() {
        // One match, in each case spelling, at every position of haystacks
        // from 4 to 200 bytes, under several start alignments: covers matches
        // straddling 16/32/64-byte blocks and in the overlapping tail block.
        let spellings: [&[u8; 4]; 4] = [b"urn:", b"URN:", b"uRn:", b"UrN:"];
        let mut buf = vec![b'x'; 64 + 200];
        for f in finders() {
            let starts = if cfg!(miri) { offsets(64) } else { vec![0, 1, 3, 15, 16, 31, 33, 63] };
            for &offset in &starts {
                for len in lengths(200).skip(4) {
                    for at in positions(len - 4) {
                        let spelling = spellings[at % spellings.len()];
                        buf[offset + at..offset + at + 4].copy_from_slice(spelling);
                        let hay = &buf[offset..offset + len];
                        assert_eq!(f.find(hay, 0), Some(at), "{} len {len} offset {offset}", f.kernel().name());
                        assert_eq!(f.find(hay, at), Some(at));
                        assert_eq!(f.find(hay, at + 1), None);
                        buf[offset + at..offset + at + 4].fill(b'x');
                    }
                }
            }
        }
    }

    #[test]
    fn match_cut_by_the_haystack_end_is_not_reported() {
        for f in finders() {
            for len in 0..=100 {
                let mut buf = vec![b'.'; len + 4];
                buf[len..].copy_from_slice(b"urn:");
                // The slice ends 1..=3 bytes into the match, or just before it.
                for cut in 0..4 {
                    assert_eq!(f.find(&buf[..len + cut], 0), None, "{} len {len} cut {cut}", f.kernel().name());
                }
                assert_eq!(f.find(&buf, 0), Some(len));
            }
        }
    }

    #[test]
    fn first_of_several_matches_in_one_block() {
        for f in finders() {
            let mut hay = vec![b'-'; 300];
            for at in [290, 200, 130, 70, 40, 33, 31, 5] {
                hay[at..at + 4].copy_from_slice(b"Urn:");
                assert_eq!(f.find(&hay, 0), Some(at), "{}", f.kernel().name());
            }
        }
    }

    #[test]
    fn from_past_the_end_is_none() {
        for f in finders() {
            assert_eq!(f.find(b"urn:", 4), None);
            assert_eq!(f.find(b"urn:", 5), None);
            assert_eq!(f.find(b"urn:", usize::MAX), None);
            assert_eq!(f.find(b"", 0), None);
        }
    }

    #[test]
    fn find_iter_lists_every_match() {
        let hay = b"urn:urn:URN: xurn:a urn urn:";
        let want = [0, 4, 8, 14, 24];
        for f in finders() {
            assert_eq!(f.find_iter(hay).collect::<Vec<_>>(), want, "{}", f.kernel().name());
        }
    }

    #[test]
    fn long_haystacks_give_every_match_with_and_without_prefetch() {
        // Past 4 KiB the main loops' prefetch reaches real addresses; a
        // sparse buffer keeps them in the main loop for most of it.
        let mut rng = Rng(0x5eed);
        let lens: &[usize] = if cfg!(miri) { &[4096 + 200] } else { &[4096 + 200, 20_000, 70_001] };
        for &len in lens {
            let mut hay: Vec<u8> = (0..len).map(|_| b"abc xyz:u\n"[rng.below(10)]).collect();
            for _ in 0..20 {
                let at = rng.below(len - 3);
                hay[at..at + 4].copy_from_slice(b"uRN:");
            }
            let table = definition_table(&hay);
            let want: Vec<usize> = (0..len).filter(|&i| table[i] == Some(i)).collect();
            for f in finders() {
                for offset in [0, 1, 17] {
                    let got: Vec<usize> = f.find_iter(&hay[offset..]).map(|p| p + offset).collect();
                    let want: Vec<usize> = want.iter().copied().filter(|&p| p >= offset).collect();
                    assert_eq!(got, want, "{} prefetch {} len {len}", f.kernel().name(), f.prefetches());
                }
            }
        }
    }

    #[test]
    fn with_prefetch_changes_only_the_prefetch() {
        for f in finders() {
            for on in [false, true] {
                let g = f.with_prefetch(on);
                assert_eq!((g.kernel(), g.prefetches()), (f.kernel(), on));
            }
        }
    }

    /// The default follows the CPU vendor, family and model as the kernel reads
    /// them from `cpuid`; Linux reports the same in /proc/cpuinfo. On: Intel,
    /// AMD family 25 models 0-15 (Zen 3 EPYC), and AMD from family 26 (Zen
    /// 5) on.
    #[cfg(all(target_arch = "x86_64", target_os = "linux"))]
    #[test]
    #[cfg_attr(miri, ignore = "Miri runs no cpuid: the stub names no vendor")]
    fn prefetch_default_follows_the_cpu_vendor_family_and_model() {
        let field = super::cpuinfo_field;
        let (Some(vendor), Some(family), Some(model)) = (field("vendor_id"), field("cpu family"), field("model"))
        else {
            return;
        };
        let family: u32 = family.parse().expect("a decimal cpu family");
        let model: u32 = model.parse().expect("a decimal model");
        let expected = match vendor.as_str() {
            "GenuineIntel" => true,
            "AuthenticAMD" => family >= 26 || (family == 25 && model <= 15),
            _ => false,
        };
        assert_eq!(UrnFinder::new().prefetches(), expected, "{vendor}, family {family}, model {model}");
        for k in Kernel::available() {
            assert_eq!(UrnFinder::with_kernel(k).unwrap().prefetches(), expected);
        }
    }

    #[test]
    fn kernel_selection() {
        let available = Kernel::available();
        assert_eq!(available.first(), Some(&Kernel::Scalar));
        assert_eq!(Some(&Kernel::best()), available.last());
        assert_eq!(UrnFinder::new().kernel(), Kernel::best());
        for k in Kernel::ALL {
            assert_eq!(UrnFinder::with_kernel(k).is_some(), available.contains(&k), "{}", k.name());
        }
        #[cfg(target_arch = "x86_64")]
        assert!(available.contains(&Kernel::Sse2), "SSE2 is x86_64 baseline");
        let names: Vec<_> = Kernel::ALL.iter().map(|k| k.name()).collect();
        assert_eq!(names, ["scalar", "sse2", "avx2"]);
    }

    #[test]
    fn read_every_byte_folds_with_xor() {
        assert_eq!(read_every_byte(b""), 0);
        assert_eq!(read_every_byte(&[0x0f, 0xf0, 0x01]), 0xfe);
    }
}
