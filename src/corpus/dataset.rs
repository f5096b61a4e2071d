//! The dataset generator's plan (which line is which class, which is
//! invalid) and its invalid lines.

use std::io;

use super::classes::{class_urn, Catalog};
use super::rng::Rng;
use super::vocabulary::NON_ASCII_SNIPPETS;
use super::writers::{ascii, push_hex, push_long_nid, push_scheme};
use super::DatasetConfig;
use crate::grammar::{parse, Grammar};

pub(super) struct DatasetPlan {
    pub(super) lines: u64,
    pub(super) invalid: u64,
    pub(super) valid: u64,
    pub(super) distinct: u64,
}

impl DatasetPlan {
    pub(super) fn new(cfg: &DatasetConfig) -> io::Result<DatasetPlan> {
        let invalid_input = |msg: &str| io::Error::new(io::ErrorKind::InvalidInput, msg.to_owned());
        if cfg.lines > u64::from(u32::MAX) {
            return Err(invalid_input("dataset: at most 4294967295 lines"));
        }
        let invalid = cfg.lines * u64::from(cfg.invalid_per_mille.min(1000)) / 1000;
        let valid = cfg.lines - invalid;
        let distinct = cfg.distinct.min(valid);
        if distinct == 0 && valid > 0 {
            return Err(invalid_input("dataset: distinct must be at least 1"));
        }
        Ok(DatasetPlan { lines: cfg.lines, invalid, valid, distinct })
    }
}

/// A line that is not a URN and holds no URN: a class's canonical form
/// broken at its NID or at the start of its NSS, so that no prefix is valid.
pub(super) fn invalid_line(
    rng: &mut Rng,
    catalog: &Catalog,
    seed: u64,
    classes: u64,
    class: &mut Vec<u8>,
    out: &mut Vec<u8>,
) {
    let nid_end = class_urn(catalog, seed, rng.below(classes), class);
    let (nid, nss) = (&class[4..nid_end], &class[nid_end + 1..]);
    let start = out.len();
    push_scheme(rng, out);
    out.push(b':');
    let breakage = rng.below(10);
    match breakage {
        0 => out.push(nid[0]),
        1 => {
            out.push(nid[0]);
            out.push(b'_');
            out.extend_from_slice(&nid[1..]);
        }
        2 => {
            out.push(b'-');
            out.extend_from_slice(nid);
        }
        3 => {
            out.extend_from_slice(nid);
            out.push(b'-');
        }
        4 => push_long_nid(rng, out),
        5 => {}
        _ => out.extend_from_slice(nid),
    }
    out.push(b':');
    match breakage {
        6 => out.push(b'/'),
        7 => {
            out.extend_from_slice(b"%G");
            push_hex(out, rng.next(), 1, true);
        }
        8 => out.extend_from_slice(rng.pick(NON_ASCII_SNIPPETS).as_bytes()),
        _ => {}
    }
    // 9: nothing after `urn:NID:`.
    if breakage != 9 {
        out.extend_from_slice(nss);
    }
    debug_assert!(parse(&out[start..], Grammar::Rfc8141).is_err(), "{}", ascii(&out[start..]));
}
