//! Command-line interface: argument definitions and dispatch.
//!
//! Exit codes follow ripgrep: 0 when something was found (or, for `check`,
//! every input is valid), 1 when nothing was found (or an input is invalid),
//! 2 on an error. A closed output pipe (`urnscan ... | head`) ends the
//! program quietly with the status it would have had.

mod check;
mod output;

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

/// Find, validate, deduplicate and count URNs (RFC 8141 / RFC 2141).
#[derive(Parser, Debug)]
#[command(name = "urnscan", version, about, long_about = None)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Validate URNs given as arguments, or one per line on stdin.
    #[command(after_help = CHECK_EXAMPLES)]
    Check(CheckArgs),
}

const CHECK_EXAMPLES: &str = "\
Examples:
  urnscan check urn:ietf:rfc:8141 'URN:ISBN:0451450523?=lang=en#p3'
  urnscan check --format jsonl < datasets/urns/valid.txt
  urnscan check --rfc2141 urn:foo:a123,456

Exit status: 0 if every input is valid, 1 if any is invalid, 2 on an error.";

/// Options of `urnscan check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Judge by RFC 2141 (1997) instead of RFC 8141.
    #[arg(long)]
    rfc2141: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// URNs to check; none means one per line on stdin.
    #[arg(value_name = "URN")]
    urns: Vec<OsString>,
}

/// Output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Jsonl,
}

fn grammar(rfc2141: bool) -> urnscan::Grammar {
    if rfc2141 {
        urnscan::Grammar::Rfc2141
    } else {
        urnscan::Grammar::Rfc8141
    }
}

/// Parses the arguments, runs the subcommand, and turns its outcome into an
/// exit status.
pub fn run() -> ExitCode {
    let cli = Cli::parse();
    let outcome = match cli.command {
        Command::Check(args) => check::run(&args),
    };
    match outcome {
        Ok(code) => code,
        Err(err) if output::is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("urnscan: {err:#}");
            ExitCode::from(2)
        }
    }
}
