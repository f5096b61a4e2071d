//! `urnscan gen`: deterministic corpora with planted URNs and their ground
//! truth, for tests and benchmarks.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context, Result};
use urnscan::corpus::{self, DatasetConfig, TextConfig};

use super::output::thousands;
use super::GenArgs;

/// `--distinct` when not given (a dataset of fewer valid lines has a key
/// for each).
const DEFAULT_DISTINCT: u64 = 300_000;

/// `--decoys` per MiB when not given (fewer when the URNs leave fewer slots).
const DEFAULT_DECOYS: u32 = 50;

/// `-` is stdout, as for urnscan's inputs; so is no file at all.
fn is_stdout(path: &Option<PathBuf>) -> bool {
    path.as_ref().is_none_or(|p| p.as_os_str() == "-")
}

/// Refuses the combinations of options that clap cannot see, as they
/// depend on other options' values (see `Command::refuse_combinations`).
pub(super) fn refuse_combinations(args: &GenArgs) -> Result<()> {
    // Both files cannot go to stdout.
    if is_stdout(&args.output) && args.truth.as_ref().is_some_and(|p| p.as_os_str() == "-") {
        bail!("--truth - writes the truth to stdout, where the corpus goes too: give -o FILE for the corpus");
    }
    if let (Some(output), Some(truth)) = (&args.output, &args.truth) {
        // Two names of one existing file; one not made yet is found once
        // both are created (see `run`).
        let same = super::FileId::of_path(output).is_some_and(|id| super::FileId::of_path(truth) == Some(id));
        if !is_stdout(&args.output) && (output == truth || same) {
            bail!("{}", one_file(output));
        }
    }
    Ok(())
}

/// The refusal of `-o` and `--truth` naming one file.
fn one_file(path: &Path) -> String {
    format!("-o and --truth name one file, {}: give each its own", path.display())
}

/// The refusal of `--truth` naming the file stdout writes the corpus to.
fn truth_is_stdout(path: &Path) -> String {
    format!("--truth {} is the file standard output writes the corpus to: give each its own", path.display())
}

pub fn run(args: &GenArgs) -> Result<ExitCode> {
    let corpus_to_stdout = is_stdout(&args.output);
    let mut corpus_id = None;
    let mut out: Box<dyn Write> = match &args.output {
        Some(path) if !corpus_to_stdout => {
            let file = File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            corpus_id = super::FileId::of_file(&file);
            Box::new(file)
        }
        _ => Box::new(io::stdout().lock()),
    };
    let mut out = BufWriter::with_capacity(1 << 20, &mut out);
    let mut truth: Option<BufWriter<Box<dyn Write>>> = match &args.truth {
        Some(path) if path.as_os_str() == "-" => Some(BufWriter::new(Box::new(io::stdout()))),
        Some(path) => {
            let file = File::create(path).with_context(|| format!("cannot create truth file {}", path.display()))?;
            // Two names of one file that did not exist before (`d/../a`, a
            // dangling link), or stdout redirected to the truth file (`gen
            // --truth t.tsv > t.tsv`): created empty, nothing is lost.
            let truth_id = super::FileId::of_file(&file);
            let corpus_id = if corpus_to_stdout { super::FileId::of_stdout() } else { corpus_id };
            if truth_id.is_some() && truth_id == corpus_id {
                bail!("{}", if corpus_to_stdout { truth_is_stdout(path) } else { one_file(path) });
            }
            Some(BufWriter::new(Box::new(file)))
        }
        None => None,
    };
    let mut truth_error = None;
    let summary = if args.dataset {
        let cfg = DatasetConfig {
            lines: args.lines,
            distinct: args.distinct.unwrap_or(DEFAULT_DISTINCT),
            seed: args.seed,
            invalid_per_mille: args.invalid_per_mille,
        };
        let mut record = |k: corpus::KeyCount<'_>| {
            if let Some(t) = truth.as_mut() {
                if let Err(e) = corpus::write_key_count_tsv_line(t, &k) {
                    truth_error.get_or_insert(e);
                }
            }
        };
        corpus::generate_dataset(&cfg, &mut out, Some(&mut record))
    } else {
        let cfg = TextConfig {
            size: args.size,
            seed: args.seed,
            urns_per_mib: args.density,
            decoys_per_mib: args.decoys.unwrap_or(DEFAULT_DECOYS),
        };
        let mut record = |p: corpus::Planted<'_>| {
            if let Some(t) = truth.as_mut() {
                if let Err(e) = corpus::write_truth_tsv_line(t, &p) {
                    truth_error.get_or_insert(e);
                }
            }
        };
        corpus::generate_text(&cfg, &mut out, Some(&mut record))
    }
    .context("cannot write the corpus")?;
    out.flush().context("cannot write the corpus")?;
    if let Some(e) = truth_error {
        return Err(e).context("cannot write the truth file");
    }
    if let Some(mut t) = truth {
        t.flush().context("cannot write the truth file")?;
    }
    let (bytes, planted, decoys) = (thousands(summary.bytes), thousands(summary.planted), thousands(summary.decoys));
    let keys = thousands(summary.distinct_keys);
    if args.dataset {
        super::say(format_args!(
            "urnscan gen: {bytes} bytes, {planted} valid lines, {decoys} invalid, {keys} distinct keys"
        ));
    } else {
        super::say(format_args!(
            "urnscan gen: {bytes} bytes, {planted} URNs planted, {decoys} decoys, {keys} distinct keys"
        ));
    }
    for shortfall in shortfalls(args, &summary) {
        super::say(format_args!("urnscan gen: {shortfall}"));
    }
    Ok(ExitCode::SUCCESS)
}

/// What the corpus holds less of than the options asked for: more
/// distinct keys than the dataset has valid lines, or more URNs or decoys
/// than the text has slots for (a line has a few; URNs take them first).
/// A default of `--distinct` or `--decoys` that does not fit is no
/// shortfall. The generator gives what fits rather than failing: the
/// summary line shows the counts, and these lines say why they fall
/// short.
fn shortfalls(args: &GenArgs, summary: &corpus::GenSummary) -> Vec<String> {
    if args.dataset {
        return match args.distinct {
            Some(asked) if summary.distinct_keys < asked => vec![format!(
                "{} distinct keys, not the {} --distinct asks for: each key needs a valid line, and the dataset has {}",
                thousands(summary.distinct_keys),
                thousands(asked),
                thousands(summary.planted)
            )],
            _ => Vec::new(),
        };
    }
    const MIB: u128 = 1 << 20;
    let bytes = u128::from(summary.bytes);
    let asked = |per_mib: u32| u64::try_from(u128::from(per_mib) * bytes / MIB).unwrap_or(u64::MAX);
    // The due points jitter: a text may fall a little short of a density
    // by chance (by a few in a short one), which is no shortfall.
    let short = |asked: u64, got: u64| got.saturating_add((asked / 10).max(10)) <= asked;
    let slots = u128::from(summary.planted + summary.decoys) * MIB / bytes.max(1);
    let room = format!("the text has room for about {} URNs and decoys per MiB, URNs first", thousands(slots as u64));
    let mut said = Vec::new();
    // A default --decoys that falls short (many URNs leave few slots) is
    // no shortfall: nobody asked for it.
    let asked_for = [
        ("URNs planted", summary.planted, "--density", Some(args.density)),
        ("decoys", summary.decoys, "--decoys", args.decoys),
    ];
    for (what, got, option, per_mib) in asked_for.into_iter().filter_map(|(w, g, o, p)| Some((w, g, o, p?))) {
        let asked = asked(per_mib);
        if short(asked, got) {
            said.push(format!(
                "{} {what}, not the {} {option} {per_mib} asks for: {room}",
                thousands(got),
                thousands(asked)
            ));
        }
    }
    said
}

/// `--distinct`: a count of keys, 1 or more (a dataset of valid lines
/// has at least one).
pub fn distinct_arg(text: &str) -> Result<u64, String> {
    match text.parse::<u64>() {
        Ok(0) => Err("a dataset has at least 1 distinct key".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(format!("{e} (a count of keys, 1 or more)")),
    }
}

/// `1GiB`, `64MiB`, `100MB`, `4k`, `1000`: binary units for `KiB`/`MiB`/`GiB`
/// and for the bare letters `k`/`m`/`g` (as `dd` and most tools read them),
/// decimal for `KB`/`MB`/`GB`. The value parser of every size option
/// (`gen --size`, `bench --generate`, `dedup --memory-limit`), so a bad
/// size is a usage error before any file is created.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit() && c != '.').unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number: f64 = number.parse().map_err(|_| format!("not a size: {text:?} (try 64MiB or 1GiB)"))?;
    let scale: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024.0 * 1024.0,
        "g" | "gib" => 1024.0 * 1024.0 * 1024.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        other => return Err(format!("unknown size unit {other:?} in {text:?} (use KiB, MiB, GiB, KB, MB or GB)")),
    };
    Ok((number * scale) as u64)
}

#[cfg(test)]
mod tests {
    use super::{parse_size, DEFAULT_DECOYS, DEFAULT_DISTINCT};

    /// `--decoys` and `--distinct` have no clap default (a default that
    /// does not fit is left out of the warnings, which need to know whether
    /// the value was given), so their help says the default in words: the
    /// words must be the value used.
    #[test]
    fn help_says_the_defaults_used() {
        use clap::CommandFactory;
        let cli = crate::cli::Cli::command();
        let gen = cli.find_subcommand("gen").expect("gen");
        let help = |id: &str| {
            let arg = gen.get_arguments().find(|a| a.get_id() == id).unwrap_or_else(|| panic!("no --{id}"));
            arg.get_help().map(ToString::to_string).unwrap_or_default()
        };
        assert!(help("decoys").contains(&format!("(default: {DEFAULT_DECOYS})")), "{}", help("decoys"));
        assert!(help("distinct").contains(&format!("(default: {DEFAULT_DISTINCT})")), "{}", help("distinct"));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1000").unwrap(), 1000);
        assert_eq!(parse_size("4k").unwrap(), 4096);
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("1GiB").unwrap(), 1 << 30);
        assert_eq!(parse_size("1.5MB").unwrap(), 1_500_000);
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("MiB").is_err());
    }

    /// Per thousand lines: 1,000 makes every line invalid, more would be
    /// capped there without a word.
    #[test]
    fn invalid_lines_per_mille_are_at_most_a_thousand() {
        use clap::Parser;
        let parsed =
            |n: &str| super::super::Cli::try_parse_from(["urnscan", "gen", "--dataset", "--invalid-per-mille", n]);
        assert!(parsed("1000").is_ok());
        assert!(parsed("1001").is_err());
    }
}
