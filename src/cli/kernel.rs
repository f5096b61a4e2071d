//! `--kernel` and `--prefetch`: which `urn:` search `scan` and `bench` run.
//!
//! By default the finder picks the widest kernel the CPU has and turns the
//! software prefetch on by vendor and family (`UrnFinder::new`). Those
//! defaults were measured on a few machines, and one that behaves
//! differently showed up: on an Intel guest the AVX2 search with the
//! prefetch once ran at 0.7 times the SSE2 one's speed (BENCHMARKS.md,
//! item 77). `urnscan bench` times every kernel with both settings, so a
//! user who sees a faster one there can run it; results never depend on
//! the choice, only speed does.

use anyhow::{bail, Result};
use clap::ValueEnum;
use urnscan::platform::simd::{Kernel, UrnFinder};

/// How the `urn:` search runs.
#[derive(clap::Args, Debug, Clone, Copy, Default)]
pub struct SearchArgs {
    /// Search kernel: auto takes the widest this CPU has (avx2, sse2, then scalar); `urnscan bench`
    /// times each. Speed only: the output is the same for any value.
    #[arg(long, value_enum, default_value_t = KernelArg::Auto)]
    kernel: KernelArg,
    /// Software prefetch in the avx2 and sse2 kernels: auto turns it on for Intel CPUs, Zen 3 EPYC
    /// and AMD CPUs from Zen 5 on, where it was measured to help. Speed only, as --kernel.
    #[arg(long, value_enum, default_value_t = PrefetchArg::Auto)]
    prefetch: PrefetchArg,
}

/// `--kernel` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum KernelArg {
    /// The widest this CPU has.
    #[default]
    Auto,
    /// 32 bytes per vector (x86_64 CPUs with AVX2).
    Avx2,
    /// 16 bytes per vector (every x86_64 CPU).
    Sse2,
    /// Eight bytes per word, any CPU.
    Scalar,
}

impl KernelArg {
    /// The kernel asked for, `None` for auto.
    fn kernel(self) -> Option<Kernel> {
        match self {
            KernelArg::Auto => None,
            KernelArg::Avx2 => Some(Kernel::Avx2),
            KernelArg::Sse2 => Some(Kernel::Sse2),
            KernelArg::Scalar => Some(Kernel::Scalar),
        }
    }
}

/// `--prefetch` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum PrefetchArg {
    /// By CPU vendor and family.
    #[default]
    Auto,
    /// Always.
    On,
    /// Never.
    Off,
}

impl SearchArgs {
    /// The finder these options ask for; an error for a kernel this CPU
    /// lacks (running another one instead would time the wrong thing).
    pub fn finder(&self) -> Result<UrnFinder> {
        let finder = match self.kernel.kernel() {
            None => UrnFinder::new(),
            Some(kernel) => chosen(kernel)?,
        };
        Ok(match self.prefetch {
            PrefetchArg::Auto => finder,
            PrefetchArg::On => finder.with_prefetch(true),
            PrefetchArg::Off => finder.with_prefetch(false),
        })
    }

    /// Whether the finder is the CPU-based default, for `bench` to say so.
    pub fn is_default(&self) -> bool {
        self.kernel == KernelArg::Auto && self.prefetch == PrefetchArg::Auto
    }
}

fn chosen(kernel: Kernel) -> Result<UrnFinder> {
    match UrnFinder::with_kernel(kernel) {
        Some(finder) => Ok(finder),
        None => {
            let have: Vec<&str> = Kernel::available().into_iter().map(Kernel::name).collect();
            bail!("--kernel {}: this CPU cannot run it (it can run: {})", kernel.name(), have.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(kernel: KernelArg, prefetch: PrefetchArg) -> SearchArgs {
        SearchArgs { kernel, prefetch }
    }

    #[test]
    fn auto_is_the_cpu_default() {
        let finder = args(KernelArg::Auto, PrefetchArg::Auto).finder().unwrap();
        let default = UrnFinder::new();
        assert_eq!((finder.kernel(), finder.prefetches()), (default.kernel(), default.prefetches()));
        assert!(SearchArgs::default().is_default());
        assert!(!args(KernelArg::Auto, PrefetchArg::Off).is_default());
    }

    #[test]
    fn each_value_gives_its_kernel_and_prefetch() {
        for (arg, kernel) in
            [(KernelArg::Avx2, Kernel::Avx2), (KernelArg::Sse2, Kernel::Sse2), (KernelArg::Scalar, Kernel::Scalar)]
        {
            for (pf, want) in
                [(PrefetchArg::On, Some(true)), (PrefetchArg::Off, Some(false)), (PrefetchArg::Auto, None)]
            {
                match args(arg, pf).finder() {
                    Ok(f) => {
                        assert_eq!(f.kernel(), kernel);
                        assert_eq!(f.prefetches(), want.unwrap_or(UrnFinder::new().prefetches()));
                    }
                    Err(e) => {
                        assert!(!kernel.is_available(), "{} is available but refused: {e}", kernel.name());
                        assert!(e.to_string().contains("this CPU cannot run it"), "{e}");
                    }
                }
            }
        }
    }
}
