//! The `urnscan` command: wires clap, I/O and output formats around the
//! library. Each subcommand lives in its own file under `cli/`.

use std::process::ExitCode;

use mimalloc::MiMalloc;

mod cli;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() -> ExitCode {
    // Measured: huge pages cost the heap more in zeroing than they save,
    // and spare the file mappings page faults (see urnscan::platform::pages).
    // The allocator's own setting wins.
    if std::env::var_os("MIMALLOC_ALLOW_THP").is_none() {
        urnscan::platform::pages::limit_transparent_huge_pages();
    }
    cli::run()
}
