//! x86_64 kernels. SSE2 is part of the x86_64 baseline, AVX2 is detected at
//! run time by `Kernel::is_available`; callers of these `unsafe fn`s must
//! have checked the feature first.

pub(super) mod avx2;
pub(super) mod class;
pub(super) mod sse2;
