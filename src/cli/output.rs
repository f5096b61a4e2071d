//! Output helpers shared by the subcommands: JSON string writing and error
//! classification. A new output format starts here.

use std::io::{self, Write};

/// Writes `s` as a JSON string literal (quotes and escapes included).
pub fn json_str(out: &mut impl Write, s: &str) -> io::Result<()> {
    serde_json::to_writer(&mut *out, s).map_err(io::Error::from)
}

/// Writes `Some(s)` as a JSON string and `None` as `null`.
pub fn json_opt(out: &mut impl Write, s: Option<&str>) -> io::Result<()> {
    match s {
        Some(s) => json_str(out, s),
        None => out.write_all(b"null"),
    }
}

/// Whether `err` comes from writing to a closed pipe, which ends the program
/// quietly: the reader (`head`, `less`) has all it wanted.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| e.downcast_ref::<io::Error>().is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe))
}
