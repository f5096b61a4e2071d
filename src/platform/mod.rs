//! Platform code: the only place in urnscan with `unsafe`.
//!
//! Five things need it: SIMD kernels for the candidate search ([`simd`]),
//! memory-mapped files ([`mmap`]), the page-size policy of the heap and mappings
//! ([`pages`]), cache prefetch hints for the key tables ([`prefetch`]) and
//! the buffer size of the pipes on standard input and output ([`pipe`]).
//! Each is wrapped in a safe API here so the rest of the crate
//! (which denies `unsafe_code`) never touches raw pointers.
#![allow(unsafe_code)]

pub mod mmap;
pub mod pages;
pub mod pipe;
pub mod prefetch;
pub mod simd;
