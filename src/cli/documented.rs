//! The commands the documentation shows are ones urnscan accepts.
//!
//! Users copy commands from `README.md` and from the examples of each
//! subcommand's `--help` (which the man pages repeat). When an option is
//! renamed or two options stop going together, those commands would go on
//! showing the old spelling, and nothing else would notice: the tests run
//! the binary with commands of their own. So every `urnscan …` command in
//! the README's code (inline spans, `sh` and `console` blocks) and in the
//! `Examples:` of every subcommand is parsed here with the real [`Cli`]
//! and checked against the rules a run checks before it starts, without
//! running it. What they print is checked where it is shown:
//! `tests/readme_examples.rs` runs the README's `console` blocks.
//!
//! A command is the text from `urnscan ` to the first shell operator outside
//! quotes (`|`, `<`, `>`, `;`, `&`, `)`, or a `#` comment); synopses, which
//! hold `[` or `…`, are not commands and are left out. Prose often leaves
//! the program's name out: an inline span that starts with a subcommand
//! and an option (`scan -u -j2`) is that command too.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, Parser};

use super::man::after_help;
use super::Cli;

const README: &str = include_str!("../../README.md");

/// A piece of code the docs show: a line of a block or an example, or an
/// inline span of prose, which may name a command without its file.
#[derive(Debug, PartialEq)]
struct Code {
    text: String,
    prose: bool,
}

fn block_line(text: &str) -> Code {
    Code { text: text.to_owned(), prose: false }
}

/// The code of a Markdown text: each inline span, and each line of its
/// `sh` and `console` blocks (without a console's `$ ` prompt; a console
/// block's output lines are kept too, and hold no command).
fn code_of(markdown: &str) -> Vec<Code> {
    let mut code = Vec::new();
    let mut fence: Option<&str> = None;
    let mut paragraph = String::new();
    for line in markdown.lines() {
        if let Some(info) = line.strip_prefix("```") {
            code.extend(spans_of(&mut paragraph));
            fence = if fence.is_some() { None } else { Some(info.trim()) };
            continue;
        }
        match fence {
            Some("sh" | "console") => code.push(block_line(line.strip_prefix("$ ").unwrap_or(line))),
            Some(_) => {}
            None if line.trim().is_empty() => code.extend(spans_of(&mut paragraph)),
            None => {
                paragraph.push_str(line);
                paragraph.push('\n');
            }
        }
    }
    code.extend(spans_of(&mut paragraph));
    code
}

/// The inline spans of a paragraph, which is emptied. A span may run over
/// a line break (never over a blank line or a fence): it is one line of
/// code. A table's `\|` is a `|` in the code; a backtick that no other
/// closes is a plain character.
fn spans_of(paragraph: &mut String) -> Vec<Code> {
    let parts: Vec<&str> = paragraph.split('`').collect();
    let closed = parts.len().saturating_sub(1) / 2;
    let spans = parts.iter().skip(1).step_by(2).take(closed);
    let spans = spans.map(|span| Code { text: as_command(&span.replace('\n', " ").replace("\\|", "|")), prose: true });
    let spans = spans.collect();
    paragraph.clear();
    spans
}

/// A span that names a subcommand with options (`scan -u -j2`) is that
/// command: prose often leaves the program's name out. `man` is left out:
/// `man -l urnscan.1` is the other program's.
fn as_command(span: &str) -> String {
    let names_subcommand = Cli::command()
        .get_subcommands()
        .filter(|sub| sub.get_name() != "man")
        .any(|sub| span.strip_prefix(sub.get_name()).is_some_and(|options| options.starts_with(" -")));
    if names_subcommand {
        format!("urnscan {span}")
    } else {
        span.to_owned()
    }
}

/// Every `urnscan` command in a line of shell, each cut where the shell
/// would end it. The value of the Spark script's `--urnscan` option names
/// the binary and is not a command.
fn commands_in(line: &str) -> Vec<String> {
    let line = without_comment(line);
    let mut commands = Vec::new();
    for (at, _) in line.match_indices("urnscan ") {
        let (before, after) = (&line[..at], &line[at + "urnscan ".len()..]);
        let starts_word = before.is_empty() || before.ends_with([' ', '\t', '/', '\'', '(', '|']);
        let word_start = before.trim_end_matches(|c: char| !c.is_whitespace());
        let binary_path = word_start.ends_with("--urnscan ");
        // `urnscan = { … }`: a Cargo dependency, not a command.
        let has_arguments = after.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '-');
        if !starts_word || binary_path || !has_arguments {
            continue;
        }
        // Quoted as one argument (`hyperfine 'urnscan scan x'`): it ends
        // at the closing quote.
        let mut command = &line[at..];
        if let Some(quote) = before[word_start.len()..].chars().next().filter(|c| matches!(c, '\'' | '"')) {
            command = command.split(quote).next().unwrap_or(command);
        }
        let command = cut_at_operator(command);
        if !command.contains(['[', '…']) && !command.contains("...") {
            commands.push(command.trim().to_owned());
        }
    }
    commands
}

/// `text` up to the first shell operator outside quotes.
fn cut_at_operator(text: &str) -> &str {
    cut_at(text, |c, _| matches!(c, '|' | '<' | '>' | ';' | '&' | ')'))
}

/// A line of shell without its comment: a `#` outside quotes that starts a
/// word (`urn:ab:c#f` holds no comment).
fn without_comment(line: &str) -> &str {
    cut_at(line, |c, before| c == '#' && before.is_none_or(char::is_whitespace))
}

/// `text` up to the first character outside quotes for which `ends(c, the
/// character before it)` holds.
fn cut_at(text: &str, ends: impl Fn(char, Option<char>) -> bool) -> &str {
    let mut quote = None;
    let mut before = None;
    for (i, c) in text.char_indices() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if ends(c, before) => return &text[..i],
            _ => {}
        }
        before = Some(c);
    }
    text
}

/// Shell words: split at spaces, quotes removed.
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for c in command.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.get_or_insert_with(String::new).push(c),
            (None, '\'' | '"') => {
                quote = Some(c);
                word.get_or_insert_with(String::new);
            }
            (None, ' ' | '\t') => words.extend(word.take()),
            (None, c) => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// Whether a command the parser stops at is shown right all the same: it
/// asks for help or the version, or it is prose that names a subcommand
/// without the file it reads (`urnscan bench`, `urnscan bench --lines
/// -j2`) or an option without its value. A missing option (`gen --lines 5` without `--dataset`) is not,
/// nor a missing file in a block or an example, which users run as shown.
fn shown_right(error: &clap::Error, prose: bool) -> bool {
    match error.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => true,
        ErrorKind::MissingRequiredArgument if prose => match error.get(ContextKind::InvalidArg) {
            Some(ContextValue::Strings(missing)) => missing.iter().all(|arg| !arg.starts_with('-')),
            _ => false,
        },
        // Prose that names an option (`dedup --memory-limit`), not a value.
        ErrorKind::InvalidValue if prose => {
            matches!(error.get(ContextKind::InvalidValue), Some(ContextValue::String(value)) if value.is_empty())
        }
        _ => false,
    }
}

/// Who refused a command: the parser, with the kind of its error, or the
/// rules a run checks before it starts
/// ([`super::Command::refuse_combinations`]).
#[derive(Debug, PartialEq)]
enum Refusal {
    Parser(ErrorKind),
    Run,
}

/// The commands of `code` that urnscan refuses: each with the reason it
/// gives, and who refused it.
fn refused(code: &[Code]) -> Vec<(String, Refusal)> {
    let mut refused = Vec::new();
    for (command, prose) in code.iter().flat_map(|c| commands_in(&c.text).into_iter().map(|command| (command, c.prose)))
    {
        let (reason, refusal) = match Cli::try_parse_from(words(&command)) {
            Ok(cli) => match cli.command.refuse_combinations() {
                Ok(()) => continue,
                Err(error) => (error.to_string(), Refusal::Run),
            },
            Err(error) if shown_right(&error, prose) => continue,
            Err(error) => {
                let reason = error.render().to_string().lines().next().unwrap_or("").to_owned();
                (reason, Refusal::Parser(error.kind()))
            }
        };
        refused.push((format!("{command}\n    {reason}"), refusal));
    }
    refused
}

fn listed(refused: &[(String, Refusal)]) -> String {
    refused.iter().map(|(why, _)| why.as_str()).collect::<Vec<_>>().join("\n")
}

#[test]
fn shell_lines_are_cut_into_commands_and_words() {
    let line = "find d -print0 | urnscan scan -u --files-from -  # then: urnscan check 'a b'";
    assert_eq!(commands_in(line), ["urnscan scan -u --files-from -"]);
    assert_eq!(
        commands_in("zcat u.gz | urnscan dedup -g '!a|b' x && urnscan scan"),
        ["urnscan dedup -g '!a|b' x", "urnscan scan"]
    );
    assert_eq!(commands_in("urnscan scan <(tail -f app.log)"), ["urnscan scan"]);
    assert_eq!(commands_in("target/release/urnscan bench x"), ["urnscan bench x"]);
    assert_eq!(commands_in("hyperfine 'target/release/urnscan bench --once x' \\"), ["urnscan bench --once x"]);
    assert!(commands_in("urnscan check [--rfc2141] [URN ...]").is_empty(), "a synopsis");
    assert!(commands_in("urnscan scan --rfc2141 …").is_empty(), "a placeholder");
    assert!(commands_in("myurnscan scan").is_empty(), "another program");
    assert!(commands_in("urn_dedup.py --urnscan ./urnscan --output out").is_empty(), "an option's value");
    assert!(commands_in("x --urnscan target/release/urnscan --output out").is_empty(), "an option's value");
    assert!(commands_in(r#"urnscan = { version = "0.1" }"#).is_empty(), "a dependency");
    assert_eq!(commands_in("urnscan check urn:ab:c#f # a comment"), ["urnscan check urn:ab:c#f"]);
    assert_eq!(
        words(r#"urnscan check 'URN:A:b?=x#y' "two words"  z"#),
        ["urnscan", "check", "URN:A:b?=x#y", "two words", "z"]
    );
    assert_eq!(words("urnscan check ''"), ["urnscan", "check", ""], "an empty argument is a word");
}

#[test]
fn markdown_code_is_its_spans_and_shell_blocks() {
    let markdown = "Run `urnscan scan -u x \\| head` or `b`.\n```sh\nurnscan dedup y\n```\n```rust\nurnscan z\n```\n\
                    ```console\n$ urnscan check u\nurn:ab:c\tvalid\n```\nA span over `two\nlines` and `c`.\n\n`d`\n";
    let code = [
        ("urnscan scan -u x | head", true),
        ("b", true),
        ("urnscan dedup y", false),
        ("urnscan check u", false),
        ("urn:ab:c\tvalid", false),
        ("two lines", true),
        ("c", true),
        ("d", true),
    ];
    let code: Vec<Code> = code.iter().map(|&(text, prose)| Code { text: text.to_owned(), prose }).collect();
    assert_eq!(code_of(markdown), code);
    let after_blank = code_of("an odd ` here\n\nthen `e`\n");
    assert_eq!(after_blank, [Code { text: "e".into(), prose: true }], "a blank line ends a paragraph's spans");
}

/// The check can fail: a misspelt option, a value clap does not know, two
/// options that exclude each other, an option without the one it needs,
/// a command shown in a block without its file, and each subcommand's
/// combination that a run refuses are all refused, each for its own
/// reason.
#[test]
fn a_stale_command_is_refused() {
    let stale = [
        ("urnscan scan --uniq x", Refusal::Parser(ErrorKind::UnknownArgument)),
        ("urnscan scan --format xml x", Refusal::Parser(ErrorKind::InvalidValue)),
        ("urnscan scan -u -c x", Refusal::Parser(ErrorKind::ArgumentConflict)),
        ("urnscan frob", Refusal::Parser(ErrorKind::InvalidSubcommand)),
        ("urnscan bench --floor --lines x", Refusal::Parser(ErrorKind::ArgumentConflict)),
        ("urnscan gen --lines 5 -o x", Refusal::Parser(ErrorKind::MissingRequiredArgument)),
        ("urnscan bench --floor --once", Refusal::Parser(ErrorKind::MissingRequiredArgument)),
        ("urnscan scan --ns-rules -c x", Refusal::Run),
        ("urnscan scan -N --format csv x", Refusal::Run),
        ("urnscan check -E utf-16le urn:ab:c", Refusal::Run),
        ("urnscan dedup --rejects - --sort key x", Refusal::Run),
        ("urnscan gen --truth -", Refusal::Run),
    ];
    let code: Vec<Code> = stale.iter().map(|(command, _)| block_line(command)).collect();
    let refusals: Vec<Refusal> = refused(&code).into_iter().map(|(_, refusal)| refusal).collect();
    assert_eq!(refusals, stale.map(|(_, refusal)| refusal));
    // In prose, a command named without its file is shown right; without
    // an option it needs, it is not.
    let prose = |text: &str| [Code { text: text.to_owned(), prose: true }];
    assert!(refused(&prose("urnscan bench --floor --once")).is_empty());
    assert_eq!(refused(&prose("urnscan gen --lines 5")).len(), 1);
    // Prose may name an option without its value, not give a wrong one.
    assert!(refused(&prose("urnscan dedup --memory-limit")).is_empty());
    assert_eq!(refused(&prose("urnscan dedup --memory-limit lots")).len(), 1);
    // A span that starts with a subcommand and an option is a command.
    assert_eq!(refused(&code_of("Give `scan -u -j2` or `scan --uniq`.")).len(), 1);
    assert_eq!(as_command("dedup -q -j2 | cat"), "urnscan dedup -q -j2 | cat");
    for not_a_command in ["scan", "scan reads", "man -l urnscan.1", "scanner -x"] {
        assert_eq!(as_command(not_a_command), not_a_command);
    }
}

#[test]
fn every_command_of_the_readme_is_accepted() {
    let code = code_of(README);
    let commands: Vec<String> = code.iter().flat_map(|c| commands_in(&c.text)).collect();
    // The extraction finds the commands of every kind of place: a cookbook
    // table cell, an `sh` block and a `console` block.
    for expected in [
        "urnscan scan -IN -m 1 datasets/corpus",
        "urnscan scan -u -g '*.xml' -g '*.json' datasets/corpus",
        "urnscan completions zsh",
        "urnscan scan --unique --format csv datasets/corpus",
    ] {
        assert!(commands.iter().any(|c| c == expected), "{expected} not found among {commands:#?}");
    }
    let refused = refused(&code);
    assert!(refused.is_empty(), "README commands urnscan refuses:\n{}", listed(&refused));
}

#[test]
fn every_example_of_the_help_is_accepted() {
    let mut code = Vec::new();
    for sub in Cli::command().get_subcommands() {
        code.extend(after_help(sub).examples.into_iter().map(|(command, _)| block_line(&command)));
    }
    assert!(code.len() >= 40, "only {} examples found", code.len());
    let refused = refused(&code);
    assert!(refused.is_empty(), "--help examples urnscan refuses:\n{}", listed(&refused));
}
