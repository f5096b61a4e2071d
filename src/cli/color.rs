//! Colour: when to use it, the styles, and the streams it is written to.
//!
//! The decision is made once per stream (stdout and stderr separately, since
//! one may be a terminal and the other a pipe) by [`wants_color`], a pure
//! function of `--color`, whether the stream is a terminal, `NO_COLOR` and
//! `TERM`:
//!
//! - `never`: no colour.
//! - `always`: colour, even into a pipe and even when `NO_COLOR` is set. The
//!   no-color.org FAQ says per-instance command-line arguments should
//!   override `NO_COLOR`: it sets a default, and `--color always` is the
//!   user asking for colour in this one run.
//! - `auto` (default): colour only when the stream is a terminal, `NO_COLOR`
//!   is unset or empty (no-color.org: "when present and not an empty
//!   string"), and `TERM` is not `dumb` (a terminal that cannot show escape
//!   codes).
//!
//! A [`Palette`] that is off emits no escape codes at all, so plain output
//! is byte for byte what it was before colour existed; it does not rely on
//! stripping codes afterwards, which would also strip escape bytes that are
//! part of the user's own input (`check` echoes invalid input as given).
//! Styled text is padded *before* it is styled, so columns line up whether
//! or not codes surround a cell.
//!
//! Output that may carry colour goes through [`stream`], an
//! [`anstream::AutoStream`]: a pass-through on Unix, and on a Windows console
//! without virtual-terminal support it turns the codes into console calls.

use std::ffi::OsStr;
use std::fmt;
use std::io::IsTerminal;

use anstream::stream::RawStream;
use anstream::{AutoStream, ColorChoice};
use anstyle::{AnsiColor, Style};
use clap::ValueEnum;

/// `--color` values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Colour on a terminal, unless NO_COLOR is set (non-empty) or TERM=dumb.
    #[default]
    Auto,
    /// Always colour, also into pipes and files (overrides NO_COLOR).
    Always,
    /// Never colour.
    Never,
}

/// Whether to colour a stream; `no_color` and `term` are the values of the
/// `NO_COLOR` and `TERM` environment variables.
pub fn wants_color(when: ColorWhen, is_terminal: bool, no_color: Option<&OsStr>, term: Option<&OsStr>) -> bool {
    match when {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => is_terminal && no_color.is_none_or(OsStr::is_empty) && term != Some(OsStr::new("dumb")),
    }
}

/// The styles of one stream, or none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Palette {
    on: bool,
}

/// Table headers.
pub const HEADER: Style = Style::new().bold();
/// Errors: rejected candidates, unreadable inputs, the `urnscan:` prefix of an error.
pub const ERROR: Style = AnsiColor::Red.on_default().bold();
/// A valid URN in `check`.
pub const VALID: Style = AnsiColor::Green.on_default();
/// An invalid URN in `check`.
pub const INVALID: Style = AnsiColor::Red.on_default().bold();

impl Palette {
    /// Colour or not, as decided.
    pub fn new(on: bool) -> Palette {
        Palette { on }
    }

    /// The palette for `stream` under `--color when`, reading the environment.
    pub fn detect(when: ColorWhen, stream: &impl IsTerminal) -> Palette {
        let no_color = std::env::var_os("NO_COLOR");
        let term = std::env::var_os("TERM");
        Palette::new(wants_color(when, stream.is_terminal(), no_color.as_deref(), term.as_deref()))
    }

    /// `text` in `style` (as it is when the palette is off).
    pub fn paint<'a>(self, style: Style, text: &'a str) -> Painted<'a> {
        Painted { style: if self.on { style } else { Style::new() }, text }
    }

    /// The `urnscan:` that starts an error message.
    pub fn error_prefix(self) -> Painted<'static> {
        self.paint(ERROR, "urnscan:")
    }
}

/// Text with a style; shows the bare text for the plain style.
#[derive(Clone, Copy, Debug)]
pub struct Painted<'a> {
    style: Style,
    text: &'a str,
}

impl fmt::Display for Painted<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.style == Style::new() {
            f.write_str(self.text)
        } else {
            write!(f, "{}{}{:#}", self.style, self.text, self.style)
        }
    }
}

/// The style of a NID class in the `--stats` table.
pub fn nid_class(class: &str) -> Style {
    let color = match class {
        "formal" => AnsiColor::Green,
        "informal" => AnsiColor::Cyan,
        "experimental" => AnsiColor::Yellow,
        "reserved" => AnsiColor::Blue,
        _ => AnsiColor::Magenta, // unregistered
    };
    color.on_default()
}

/// `raw` as a stream for `palette`'s output. When the palette is off this is
/// a plain pass-through (never a stripping stream: the user's own bytes must
/// reach the output unchanged).
pub fn stream<S: RawStream>(raw: S, palette: Palette) -> AutoStream<S> {
    AutoStream::new(raw, if palette.on { ColorChoice::Always } else { ColorChoice::AlwaysAnsi })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto(terminal: bool, no_color: Option<&str>, term: Option<&str>) -> bool {
        wants_color(ColorWhen::Auto, terminal, no_color.map(OsStr::new), term.map(OsStr::new))
    }

    #[test]
    fn auto_follows_the_terminal_and_no_color() {
        assert!(auto(true, None, Some("xterm-256color")));
        assert!(auto(true, None, None));
        assert!(!auto(false, None, Some("xterm")), "a pipe gets no colour");
        // no-color.org: present and not empty disables colour, whatever the value.
        assert!(!auto(true, Some("1"), None));
        assert!(!auto(true, Some("0"), None));
        assert!(auto(true, Some(""), None), "an empty NO_COLOR is as if unset");
        assert!(!auto(true, None, Some("dumb")));
    }

    #[test]
    fn flags_win_over_the_environment() {
        let yes = Some(OsStr::new("1"));
        assert!(wants_color(ColorWhen::Always, false, yes, Some(OsStr::new("dumb"))));
        assert!(!wants_color(ColorWhen::Never, true, None, None));
    }

    #[test]
    fn an_off_palette_adds_nothing() {
        let plain = Palette::new(false);
        assert_eq!(plain.paint(ERROR, "x").to_string(), "x");
        let on = Palette::new(true).paint(ERROR, "x").to_string();
        assert!(on.starts_with('\x1b') && on.contains('x') && on.ends_with('m'), "{on:?}");
    }
}
