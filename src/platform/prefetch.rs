//! Software prefetch: a hint that a cache line will be read soon.
//!
//! A key table much larger than the caches spends most of an insert
//! waiting for memory: the index slot, then the entry it points to. When
//! the hashes of the next few keys are already known, asking for their
//! lines ahead lets those waits overlap instead of adding up. A prefetch
//! never faults and changes no value, so a wrong or stale address costs a
//! wasted memory read and nothing else; the safe wrappers take references
//! anyway, so only valid addresses are ever passed.
//!
//! x86-64 only (`prefetcht0`, part of SSE, which every x86-64 CPU has);
//! elsewhere these compile to nothing.

/// Hints that the cache line holding `*value` will be read soon.
#[inline(always)]
pub fn prefetch<T: ?Sized>(value: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` only hints the cache; it reads nothing into a
    // register and cannot fault, and SSE is part of the x86-64 baseline.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>((value as *const T).cast::<i8>());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = value;
}

#[cfg(test)]
mod tests {
    #[test]
    fn prefetch_changes_nothing() {
        let bytes = vec![7u8; 4096];
        super::prefetch(&bytes[4095]);
        super::prefetch(&bytes[..]);
        super::prefetch(&bytes[..0]);
        assert!(bytes.iter().all(|&b| b == 7));
    }
}
