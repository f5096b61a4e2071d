//! Generated documentation: `urnscan completions SHELL` (clap_complete) and
//! `urnscan man` (clap_mangen).
//!
//! Both are generated from the clap definitions in `cli/mod.rs`, so they
//! cannot drift from the real options. The man pages take clap_mangen's
//! standard sections (NAME, SYNOPSIS, DESCRIPTION, OPTIONS, SUBCOMMANDS,
//! VERSION) and add EXAMPLES and EXIT STATUS, which clap has no fields for.
//! Those come from the subcommands' `after_help` texts, the one source of
//! truth that `--help` also shows: a paragraph starting `Examples:` holds
//! lines `  COMMAND  COMMENT` (two or more spaces before the comment), a
//! paragraph starting `Exit status:` the exit codes, and any other
//! paragraph is appended to the DESCRIPTION. A subcommand's page shows its
//! own examples and exit status; `urnscan.1` shows all of them.

use std::fs;
use std::io::{self, Write};
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::{Command, CommandFactory};
use clap_mangen::roff::{bold, roman, Roff};
use clap_mangen::Man;

use super::Cli;

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> Result<ExitCode> {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "urnscan", &mut script);
    write_stdout(&script)
}

/// Prints `urnscan.1`, or writes it and one page per subcommand to `out_dir`.
pub fn run(out_dir: Option<&Path>) -> Result<ExitCode> {
    let mut cmd = Cli::command().disable_help_subcommand(true);
    cmd.build();
    let Some(dir) = out_dir else {
        return write_stdout(&main_page(&cmd)?);
    };
    // A user's man directory (~/.local/share/man/man1) often does not exist yet.
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    write_page(dir, &format!("{}.1", cmd.get_name()), &main_page(&cmd)?)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_display_name().unwrap_or_else(|| sub.get_name());
        write_page(dir, &format!("{name}.1"), &sub_page(sub)?)?;
    }
    Ok(ExitCode::SUCCESS)
}

fn write_stdout(bytes: &[u8]) -> Result<ExitCode> {
    let mut out = io::stdout().lock();
    out.write_all(bytes).and_then(|()| out.flush()).context("cannot write to standard output")?;
    Ok(ExitCode::SUCCESS)
}

fn write_page(dir: &Path, name: &str, page: &[u8]) -> Result<()> {
    let path = dir.join(name);
    fs::write(&path, page).with_context(|| format!("cannot write {}", path.display()))
}

/// The parts of an `after_help` text.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct AfterHelp {
    /// (command, comment) of each example line; the comment may be empty.
    pub(super) examples: Vec<(String, String)>,
    /// The `Exit status:` paragraph without its label, on one line.
    exit_status: Option<String>,
    /// Other paragraphs, each on one line.
    notes: Vec<String>,
}

fn parse_after_help(text: &str) -> AfterHelp {
    let mut parts = AfterHelp::default();
    for paragraph in text.split("\n\n") {
        let paragraph = paragraph.trim_matches('\n');
        if let Some(lines) = paragraph.strip_prefix("Examples:") {
            parts.examples.extend(lines.lines().filter(|l| !l.trim().is_empty()).map(split_example));
        } else if let Some(status) = paragraph.strip_prefix("Exit status:") {
            parts.exit_status = Some(one_line(status));
        } else if !paragraph.trim().is_empty() {
            parts.notes.push(one_line(paragraph));
        }
    }
    parts
}

/// `  urnscan scan app.log      every URN` → ("urnscan scan app.log", "every URN").
fn split_example(line: &str) -> (String, String) {
    let line = line.trim();
    match line.find("  ") {
        Some(at) => (line[..at].to_owned(), line[at..].trim().to_owned()),
        None => (line.to_owned(), String::new()),
    }
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

pub(super) fn after_help(cmd: &Command) -> AfterHelp {
    cmd.get_after_help().map(|h| parse_after_help(&h.to_string())).unwrap_or_default()
}

/// `urnscan.1`: the command, its global options, the list of subcommands,
/// every subcommand's examples and exit status.
fn main_page(cmd: &Command) -> io::Result<Vec<u8>> {
    let man = Man::new(cmd.clone());
    let mut page = Page::default();
    page.add(|w| man.render_title(w))?;
    page.add(|w| man.render_name_section(w))?;
    page.add(|w| man.render_synopsis_section(w))?;
    page.add(|w| man.render_description_section(w))?;
    page.add(|w| man.render_options_section(w))?;
    page.add(|w| man.render_subcommands_section(w))?;
    let subs: Vec<(&str, AfterHelp)> = cmd.get_subcommands().map(|s| (s.get_name(), after_help(s))).collect();
    let mut examples = Roff::new();
    examples.control("SH", ["EXAMPLES"]);
    for (_, help) in &subs {
        push_examples(&mut examples, &help.examples);
    }
    page.add(|w| examples.to_writer(w))?;
    let mut status = Roff::new();
    status.control("SH", ["EXIT", "STATUS"]);
    status.text([roman(
        "urnscan follows ripgrep's convention: 0 when something was found (for check: every input is valid), \
         1 when nothing was found (for check: an input is invalid), 2 on an error. \
         One unreadable input is reported on stderr and the others are still processed; the status is then 2. \
         By subcommand:",
    )]);
    for (name, help) in &subs {
        if let Some(text) = &help.exit_status {
            status.control("TP", []).text([bold(*name)]).text([roman(text.as_str())]);
        }
    }
    page.add(|w| status.to_writer(w))?;
    page.add(|w| man.render_version_section(w))?;
    Ok(page.bytes)
}

/// `urnscan-SUBCOMMAND.1`.
fn sub_page(cmd: &Command) -> io::Result<Vec<u8>> {
    let man = Man::new(cmd.clone());
    let help = after_help(cmd);
    let mut page = Page::default();
    page.add(|w| man.render_title(w))?;
    page.add(|w| man.render_name_section(w))?;
    page.add(|w| man.render_synopsis_section(w))?;
    page.add(|w| man.render_description_section(w))?;
    let mut notes = Roff::new();
    for note in &help.notes {
        notes.control("PP", []).text([roman(note.as_str())]);
    }
    page.add(|w| notes.to_writer(w))?;
    page.add(|w| man.render_options_section(w))?;
    let mut extra = Roff::new();
    if !help.examples.is_empty() {
        extra.control("SH", ["EXAMPLES"]);
        push_examples(&mut extra, &help.examples);
    }
    if let Some(text) = &help.exit_status {
        extra.control("SH", ["EXIT", "STATUS"]).text([roman(text.as_str())]);
    }
    page.add(|w| extra.to_writer(w))?;
    Ok(page.bytes)
}

/// Each example as a tagged paragraph: the command in bold, the comment below.
fn push_examples(roff: &mut Roff, examples: &[(String, String)]) {
    for (command, comment) in examples {
        roff.control("TP", []).text([bold(command.as_str())]);
        if !comment.is_empty() {
            roff.text([roman(comment.as_str())]);
        }
    }
}

/// A man page assembled from sections rendered one by one. Every rendering
/// starts with the same preamble (the definition of the apostrophe string);
/// it is kept once.
#[derive(Default)]
struct Page {
    bytes: Vec<u8>,
}

impl Page {
    fn add(&mut self, render: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
        let mut section = Vec::new();
        render(&mut section)?;
        let preamble = Roff::new().render();
        let body = match section.strip_prefix(preamble.as_bytes()) {
            Some(body) if !self.bytes.is_empty() => body,
            _ => &section,
        };
        self.bytes.extend_from_slice(body);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn after_help_parts() {
        let text = "Examples:\n  urnscan a x      does a\n  zcat f | urnscan b  b from a pipe\n  urnscan c 'q'\n\n\
                    A note\nover two lines.\n\nExit status: 0 if fine,\n2 if not.";
        let parts = parse_after_help(text);
        let ex = |c: &str, m: &str| (c.to_owned(), m.to_owned());
        assert_eq!(
            parts.examples,
            [ex("urnscan a x", "does a"), ex("zcat f | urnscan b", "b from a pipe"), ex("urnscan c 'q'", "")]
        );
        assert_eq!(parts.notes, ["A note over two lines."]);
        assert_eq!(parts.exit_status.as_deref(), Some("0 if fine, 2 if not."));
    }

    #[test]
    fn every_subcommand_has_examples_and_an_exit_status() {
        for sub in Cli::command().get_subcommands() {
            let help = after_help(sub);
            assert!(!help.examples.is_empty(), "{} has no examples", sub.get_name());
            assert!(help.exit_status.is_some(), "{} has no exit status", sub.get_name());
            for (command, _) in &help.examples {
                assert!(command.contains("urnscan"), "{}: {command}", sub.get_name());
            }
        }
    }
}
