//! `urnscan check`: validate URNs one by one and show their parts or what is
//! wrong with them.

use std::ffi::OsString;
use std::io::{self, BufRead, BufWriter, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};
use urnscan::{parse, NidClassifier, Urn, UrnError};

use super::color::{self, Palette, INVALID, VALID};
use super::output::{json_opt, json_str};
use super::{grammar, CheckArgs, CheckFormat, Ui};

pub fn run(args: &CheckArgs, ui: Ui) -> Result<ExitCode> {
    let grammar = grammar(args.rfc2141);
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(64 * 1024, color::stream(stdout.lock(), ui.out));
    let mut all_valid = true;
    let classifier = NidClassifier::new();
    let mut judge = |input: &[u8]| -> Result<()> {
        let result = parse(input, grammar);
        all_valid &= result.is_ok();
        match args.format {
            CheckFormat::Text => write_text(&mut out, input, &result, &classifier, ui.out),
            CheckFormat::Jsonl => write_jsonl(&mut out, input, &result, &classifier),
        }
        .context("cannot write to standard output")
    };
    if args.urns.is_empty() {
        let stdin = io::stdin();
        let mut lines = stdin.lock();
        let mut line = Vec::new();
        loop {
            line.clear();
            if lines.read_until(b'\n', &mut line).context("cannot read standard input")? == 0 {
                break;
            }
            judge(strip_line_end(&line))?;
        }
    } else {
        for urn in &args.urns {
            judge(&os_bytes(urn))?;
        }
    }
    out.flush().context("cannot write to standard output")?;
    Ok(if all_valid { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The line without its "\n" and one "\r" before it.
fn strip_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

/// An argument's raw bytes: on Unix arguments need not be UTF-8, and
/// invalid bytes are judged like any others.
fn os_bytes(arg: &OsString) -> Vec<u8> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        arg.as_bytes().to_vec()
    }
    #[cfg(not(unix))]
    {
        arg.to_string_lossy().into_owned().into_bytes()
    }
}

fn write_text(
    out: &mut impl Write,
    input: &[u8],
    result: &Result<Urn, UrnError>,
    classifier: &NidClassifier,
    palette: Palette,
) -> io::Result<()> {
    match result {
        Ok(urn) => {
            write!(out, "{urn}\t{}\tnid={} nss={}", palette.paint(VALID, "valid"), urn.nid(), urn.nss())?;
            for (name, part) in [("r", urn.r_component()), ("q", urn.q_component()), ("f", urn.f_component())] {
                if let Some(part) = part {
                    write!(out, " {name}={part}")?;
                }
            }
            writeln!(out, " class={} key={}", classifier.classify(urn.nid().as_bytes()), urn.key())
        }
        Err(e) => {
            let shown = String::from_utf8_lossy(input);
            let marker = palette.paint(INVALID, "invalid");
            writeln!(out, "{shown}\t{marker}\t{}", e.render(input).replace('\n', "\n\t"))
        }
    }
}

fn write_jsonl(
    out: &mut impl Write,
    input: &[u8],
    result: &Result<Urn, UrnError>,
    classifier: &NidClassifier,
) -> io::Result<()> {
    out.write_all(b"{\"input\":")?;
    json_str(out, &String::from_utf8_lossy(input))?;
    match result {
        Ok(urn) => {
            out.write_all(b",\"valid\":true,\"nid\":")?;
            json_str(out, urn.nid())?;
            out.write_all(b",\"nss\":")?;
            json_str(out, urn.nss())?;
            out.write_all(b",\"r\":")?;
            json_opt(out, urn.r_component())?;
            out.write_all(b",\"q\":")?;
            json_opt(out, urn.q_component())?;
            out.write_all(b",\"f\":")?;
            json_opt(out, urn.f_component())?;
            out.write_all(b",\"key\":")?;
            json_str(out, &urn.key())?;
            out.write_all(b",\"nid_class\":")?;
            json_str(out, classifier.classify(urn.nid().as_bytes()).as_str())?;
            out.write_all(b",\"error\":null}\n")
        }
        Err(e) => {
            out.write_all(
                b",\"valid\":false,\"nid\":null,\"nss\":null,\"r\":null,\"q\":null,\"f\":null,\"key\":null,\
                  \"nid_class\":null,\"error\":{\"kind\":",
            )?;
            json_str(out, e.kind().as_str())?;
            write!(out, ",\"offset\":{},\"message\":", e.offset())?;
            json_str(out, &e.render(input))?;
            out.write_all(b"}}\n")
        }
    }
}
