//! What the integration tests share: running the built binary with a
//! given standard input.

use std::io::Write;
use std::process::{Command, Output, Stdio};

/// Runs `cmd` with `stdin` fed from a thread (so a large input cannot
/// deadlock against a full stdout pipe) and collects its output.
pub fn run_fed(mut cmd: Command, stdin: &[u8]) -> Output {
    let mut child =
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("run urnscan");
    let mut input = child.stdin.take().expect("piped stdin");
    let data = stdin.to_vec();
    let writer = std::thread::spawn(move || {
        // The program may exit without reading all of it: that is its answer.
        let _ = input.write_all(&data);
    });
    let out = child.wait_with_output().expect("wait for urnscan");
    writer.join().expect("stdin writer");
    out
}
