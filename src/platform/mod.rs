//! Platform code: the only place in urnscan with `unsafe`.
//!
//! Two things need it: SIMD kernels for the candidate search ([`simd`]) and
//! memory-mapped files ([`mmap`]). Each is wrapped in a safe API here so the
//! rest of the crate (which denies `unsafe_code`) never touches raw pointers.
#![allow(unsafe_code)]

pub mod mmap;
pub mod simd;
