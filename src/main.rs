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
    // Measured: a pipe of the default 64 KiB makes each block read and
    // each buffer written wait on the other process several times (see
    // urnscan::platform::pipe). Nothing to do for files and terminals.
    urnscan::platform::pipe::widen(std::io::stdin());
    urnscan::platform::pipe::widen(std::io::stdout());
    cli::run()
}
