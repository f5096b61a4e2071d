//! Candidate search: where does the next `urn:` (any ASCII case) start?
//!
//! (Stub: scalar only; SIMD kernels with runtime dispatch come next.)

/// A search implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kernel {
    /// Portable byte-at-a-time search.
    Scalar,
}

impl Kernel {
    /// The fastest kernel this CPU supports.
    pub fn best() -> Kernel {
        Kernel::Scalar
    }
    /// Every kernel this CPU supports.
    pub fn available() -> Vec<Kernel> {
        vec![Kernel::Scalar]
    }
    /// Short name for reports.
    pub fn name(self) -> &'static str {
        "scalar"
    }
}

/// Finds case-insensitive `urn:` with a kernel chosen once at construction.
#[derive(Clone, Copy, Debug)]
pub struct UrnFinder {
    kernel: Kernel,
}

impl Default for UrnFinder {
    fn default() -> Self {
        UrnFinder::new()
    }
}

impl UrnFinder {
    /// Uses [`Kernel::best`].
    pub fn new() -> UrnFinder {
        UrnFinder { kernel: Kernel::best() }
    }
    /// Uses `kernel`, or `None` when this CPU lacks it.
    pub fn with_kernel(kernel: Kernel) -> Option<UrnFinder> {
        Kernel::available().contains(&kernel).then_some(UrnFinder { kernel })
    }
    /// The kernel in use.
    pub fn kernel(&self) -> Kernel {
        self.kernel
    }
    /// Start of the first `urn:` (any case) that begins at or after `from`.
    pub fn find(&self, hay: &[u8], from: usize) -> Option<usize> {
        let hay_from = hay.get(from..)?;
        hay_from.windows(4).position(|w| w.eq_ignore_ascii_case(b"urn:")).map(|p| p + from)
    }
}

/// Reads every byte of `hay` and folds them together: the speed floor a
/// search cannot beat.
pub fn read_every_byte(hay: &[u8]) -> u8 {
    hay.iter().fold(0, |a, &b| a ^ b)
}
