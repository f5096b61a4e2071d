//! The `urnscan` command: wires clap, I/O and output formats around the
//! library. Each subcommand lives in its own file under `cli/`.

use std::process::ExitCode;

use mimalloc::MiMalloc;

mod cli;

#[global_allocator]
static GLOBAL: MiMalloc = MiMalloc;

fn main() -> ExitCode {
    cli::run()
}
