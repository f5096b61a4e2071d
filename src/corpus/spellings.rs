//! Spellings: what equivalence ignores (case of the scheme and NID,
//! case of percent-encoding hex, r/q/f components), applied to a class's
//! canonical URN to plant a variant of it.

use super::rng::Rng;
use super::vocabulary::{push_word, LANGS};
use super::writers::{ascii, push_dec, push_hex};
use crate::grammar::{parse, Grammar};

#[derive(Clone, Copy)]
pub(super) enum Case {
    Keep,
    Upper,
    Lower,
    Capital,
    Mixed,
}

/// Picks a case with weights (keep, upper, lower, capital), the rest mixed.
fn pick_case(rng: &mut Rng, weights: [u64; 4]) -> Case {
    let mut roll = rng.below(100);
    for (case, w) in [Case::Keep, Case::Upper, Case::Lower, Case::Capital].into_iter().zip(weights) {
        if roll < w {
            return case;
        }
        roll -= w;
    }
    Case::Mixed
}

pub(super) fn apply_case(rng: &mut Rng, bytes: &mut [u8], case: Case) {
    match case {
        Case::Keep => {}
        Case::Upper => bytes.make_ascii_uppercase(),
        Case::Lower => bytes.make_ascii_lowercase(),
        Case::Capital => {
            bytes.make_ascii_lowercase();
            if let Some(first) = bytes.first_mut() {
                first.make_ascii_uppercase();
            }
        }
        Case::Mixed => {
            let bits = rng.next();
            for (k, b) in bytes.iter_mut().enumerate() {
                if (bits >> (k % 64)) & 1 == 1 {
                    b.make_ascii_uppercase();
                } else {
                    b.make_ascii_lowercase();
                }
            }
        }
    }
}

/// Appends a random spelling of the canonical URN `canonical`: same key,
/// possibly other case for scheme, NID and percent hex, possibly r-, q-
/// and f-components. The result never ends in a character that trimming
/// removes and holds a `'` only if the canonical form does.
pub(super) fn render_spelling(rng: &mut Rng, canonical: &[u8], nid_end: usize, out: &mut Vec<u8>) {
    let start = out.len();
    out.extend_from_slice(canonical);
    let urn = &mut out[start..];
    let scheme_case = pick_case(rng, [86, 8, 0, 3]);
    apply_case(rng, &mut urn[..3], scheme_case);
    let nid_case = pick_case(rng, [82, 9, 0, 5]);
    apply_case(rng, &mut urn[4..nid_end], nid_case);
    let nss = &mut urn[nid_end + 1..];
    if nss.contains(&b'%') {
        let hex_case = pick_case(rng, [60, 0, 25, 0]);
        let mut from = 0;
        while let Some(p) = memchr::memchr(b'%', &nss[from..]) {
            let at = from + p;
            apply_case(rng, &mut nss[at + 1..at + 3], hex_case);
            from = at + 3;
        }
    }
    push_components(rng, out);
}

/// Optional `?+r`, `?=q`, `#f`, each non-empty and ending in a letter or
/// digit.
fn push_components(rng: &mut Rng, out: &mut Vec<u8>) {
    let (r, q, f) = match rng.below(100) {
        0..=71 => return,
        72..=79 => (true, false, false),
        80..=87 => (false, true, false),
        88..=94 => (false, false, true),
        95..=97 => (true, false, true),
        _ => (true, true, true),
    };
    if r {
        out.extend_from_slice(b"?+");
        match rng.below(3) {
            0 => out.extend_from_slice(b"CCResolve:cc=uk"),
            1 => push_word(rng, out),
            _ => {
                push_word(rng, out);
                out.push(b'/');
                push_dec(out, rng.below(1000));
            }
        }
    }
    if q {
        out.extend_from_slice(b"?=");
        push_word(rng, out);
        out.push(b'=');
        match rng.below(3) {
            0 => push_word(rng, out),
            1 => {
                push_dec(out, rng.below(100));
                out.extend_from_slice(b"&lang=");
                out.extend_from_slice(rng.pick(LANGS).as_bytes());
            }
            _ => {
                push_word(rng, out);
                out.push(b'%');
                push_hex(out, rng.next(), 2, rng.below(2) == 0);
                push_word(rng, out);
            }
        }
    }
    if f {
        out.push(b'#');
        match rng.below(4) {
            0 => push_word(rng, out),
            1 => {
                out.push(b'p');
                push_dec(out, rng.below(500));
            }
            2 => {
                out.extend_from_slice(b"sec");
                push_dec(out, 1 + rng.below(9));
                out.push(b'.');
                push_dec(out, 1 + rng.below(9));
            }
            _ => {
                push_word(rng, out);
                out.push(b'/');
                push_word(rng, out);
            }
        }
    }
}

/// An earlier class among `0..n` (`n > 0`): uniform, skewed toward the
/// first classes (hot keys), or among the last thousand.
pub(super) fn earlier_class(rng: &mut Rng, n: u64) -> u64 {
    match rng.below(10) {
        0..=3 => rng.below(n),
        4..=6 => {
            let u = rng.below(1 << 20);
            ((u128::from(n) * u128::from(u * u * u)) >> 60) as u64
        }
        _ => n - 1 - rng.below(n.min(1000)),
    }
}

/// Appends the key of `urn` by the library to `keys`; `canonical` (the key
/// by construction) if it does not parse, which the debug assertions rule
/// out along with any disagreement between the two.
pub(super) fn library_key(urn: &[u8], canonical: &[u8], keys: &mut Vec<u8>) {
    let start = keys.len();
    let parsed = parse(urn, Grammar::Rfc8141);
    debug_assert!(parsed.is_ok(), "generated an invalid URN: {}", ascii(urn));
    match parsed {
        Ok(u) => u.write_key(keys),
        Err(_) => keys.extend_from_slice(canonical),
    }
    debug_assert_eq!(ascii(&keys[start..]), ascii(canonical), "key of {}", ascii(urn));
}
