//! Classes: canonical URNs derived from (seed, index), one family of
//! namespaces at a time (ISBN, UUID, IETF, OID, NBN, EPC, ISO, MPEG, and
//! generic NIDs).

use super::rng::{mix64, Rng, CLASS_SALT, SERIAL_SALT, UUID_SALT};
use super::vocabulary::{push_word, COUNTRIES, LANGS};
use super::writers::{push_cased_word, push_dec, push_dec_padded, push_hex};

/// NIDs owned by the named families; the generic family never uses them.
const FAMILY_NIDS: &[&str] = &["isbn", "uuid", "ietf", "oid", "nbn", "epc", "iso", "mpeg"];

/// ISBN bodies are nine digits: the ISBN family serves the first 10^9
/// classes, later ones fall to the generic family.
pub(super) const ISBN_BODIES: u64 = 1_000_000_000;

/// The registered NIDs the generic family draws from.
pub(super) struct Catalog {
    registered: Vec<&'static str>,
}

impl Catalog {
    pub(super) fn new() -> Catalog {
        let mut registered: Vec<&'static str> = crate::nid::registry()
            .filter(|&(nid, kind)| kind == "formal" && is_plain_nid(nid) && !is_family_nid(nid.as_bytes()))
            .map(|(nid, _)| nid)
            .collect();
        if registered.is_empty() {
            registered.push("example");
        }
        Catalog { registered }
    }
}

/// A registry entry usable as is: RFC 8141 NID syntax.
fn is_plain_nid(nid: &str) -> bool {
    let b = nid.as_bytes();
    (2..=32).contains(&b.len())
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

fn is_family_nid(nid: &[u8]) -> bool {
    FAMILY_NIDS.iter().any(|f| f.as_bytes().eq_ignore_ascii_case(nid))
}

/// Writes the canonical form (= equivalence key) of class `index` into
/// `out` (cleared first); returns the index of the `:` after the NID.
pub(super) fn class_urn(catalog: &Catalog, seed: u64, index: u64, out: &mut Vec<u8>) -> usize {
    out.clear();
    out.extend_from_slice(b"urn:");
    let mut rng = Rng::new(mix64(seed ^ CLASS_SALT).wrapping_add(mix64(index)));
    // Any injective function of the index works; an offset keeps the first
    // serials from all being 0, 1, 2.
    let serial = index.wrapping_add(1 + mix64(seed ^ SERIAL_SALT) % 9000);
    match rng.below(100) {
        0..=7 if index < ISBN_BODIES => isbn(&mut rng, seed, index, out),
        8..=15 => uuid(&mut rng, seed, index, out),
        16..=23 => ietf(&mut rng, serial, out),
        24..=29 => oid(&mut rng, serial, out),
        30..=34 => nbn(&mut rng, serial, out),
        35..=39 => epc(&mut rng, serial, out),
        40..=43 => iso(&mut rng, serial, out),
        44..=46 => mpeg(&mut rng, serial, out),
        _ => generic(catalog, &mut rng, serial, out),
    }
}

/// Writes `nid:`; returns the index of the `:`.
fn begin(out: &mut Vec<u8>, nid: &[u8]) -> usize {
    out.extend_from_slice(nid);
    let nid_end = out.len();
    out.push(b':');
    nid_end
}

/// `isbn:` + 13 digits with a valid check digit; the nine-digit body is an
/// affine bijection of the index modulo 10^9.
pub(super) fn isbn(rng: &mut Rng, seed: u64, index: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"isbn");
    // 3^18 is prime to 10, so the map is a bijection on 0..10^9.
    let body = (index * 387_420_489 + mix64(seed) % ISBN_BODIES) % ISBN_BODIES;
    let mut digits = [0u8; 12];
    digits[..3].copy_from_slice(if rng.below(4) == 0 { b"979" } else { b"978" });
    for (k, d) in digits[3..].iter_mut().enumerate() {
        *d = b'0' + (body / 10u64.pow(8 - k as u32) % 10) as u8;
    }
    let sum: u32 = digits.iter().enumerate().map(|(k, d)| u32::from(d - b'0') * if k % 2 == 0 { 1 } else { 3 }).sum();
    out.extend_from_slice(&digits);
    out.push(b'0' + ((10 - sum % 10) % 10) as u8);
    nid_end
}

/// A version-4-shaped UUID whose first twelve and last-group-first four hex
/// digits hold a bijective mix of the index.
pub(super) fn uuid(rng: &mut Rng, seed: u64, index: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"uuid");
    let v = mix64(index ^ mix64(seed ^ UUID_SALT));
    let upper = rng.below(10) == 0;
    push_hex(out, v >> 32, 8, upper);
    out.push(b'-');
    push_hex(out, v >> 16, 4, upper);
    out.extend_from_slice(b"-4");
    push_hex(out, rng.next(), 3, upper);
    out.push(b'-');
    push_hex(out, 8 + rng.below(4), 1, upper);
    push_hex(out, rng.next(), 3, upper);
    out.push(b'-');
    push_hex(out, v, 4, upper);
    push_hex(out, rng.next(), 8, upper);
    nid_end
}

/// `rfc:N`, or `params:...-N` (the serial after the last `-`).
pub(super) fn ietf(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"ietf");
    match rng.below(3) {
        0 => out.extend_from_slice(b"rfc:"),
        1 => {
            out.extend_from_slice(b"params:xml:ns:");
            push_word(rng, out);
            out.push(b':');
            push_word(rng, out);
            out.push(b'-');
        }
        _ => {
            out.extend_from_slice(b"params:");
            push_word(rng, out);
            out.push(b':');
            push_word(rng, out);
            out.push(b'-');
        }
    }
    push_dec(out, serial);
    nid_end
}

/// A dotted OID whose last arc is the serial.
pub(super) fn oid(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"oid");
    match rng.below(3) {
        0 => {
            out.extend_from_slice(b"1.3.6.1.4.1.");
            push_dec(out, rng.below(60_000));
        }
        1 => {
            out.extend_from_slice(b"2.16.840.1.113883.");
            push_dec(out, rng.below(20));
            out.push(b'.');
            push_dec(out, rng.below(100));
        }
        _ => {
            out.extend_from_slice(b"1.2.840.10008.");
            push_dec(out, rng.below(10));
        }
    }
    out.push(b'.');
    push_dec(out, serial);
    nid_end
}

/// `cc:word:N-word-SERIAL` or `cc-feSERIAL` (the two differ at byte 2).
pub(super) fn nbn(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"nbn");
    out.extend_from_slice(rng.pick(COUNTRIES).as_bytes());
    if rng.below(2) == 0 {
        out.push(b':');
        push_word(rng, out);
        out.push(b':');
        push_dec(out, rng.below(1000));
        out.push(b'-');
        push_word(rng, out);
        out.push(b'-');
    } else {
        out.extend_from_slice(b"-fe");
    }
    push_dec(out, serial);
    nid_end
}

/// EPC pure identities whose last `.` field is the serial.
pub(super) fn epc(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"epc");
    if rng.below(2) == 0 {
        out.extend_from_slice(b"id:sgtin:");
        push_dec_padded(out, rng.below(10_000_000), 7);
        out.push(b'.');
        push_dec_padded(out, rng.below(1_000_000), 6);
    } else {
        out.extend_from_slice(b"id:sscc:");
        push_dec_padded(out, rng.below(1_000_000_000), 9);
    }
    out.push(b'.');
    push_dec(out, serial);
    nid_end
}

/// `std:iso:SERIAL[:-part][:ed-n][:vn][:lang]`: the third `:` field is the
/// serial.
pub(super) fn iso(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"iso");
    out.extend_from_slice(if rng.below(4) == 0 { b"std:iso-iec:" } else { b"std:iso:" });
    push_dec(out, serial);
    if rng.percent(40) {
        out.extend_from_slice(b":-");
        push_dec(out, 1 + rng.below(9));
    }
    if rng.percent(30) {
        out.extend_from_slice(b":ed-");
        push_dec(out, 1 + rng.below(5));
    }
    if rng.percent(20) {
        out.extend_from_slice(b":v");
        push_dec(out, 1 + rng.below(3));
    }
    if rng.percent(30) {
        out.push(b':');
        out.extend_from_slice(rng.pick(LANGS).as_bytes());
    }
    nid_end
}

/// MPEG names whose last `:` field is the serial.
pub(super) fn mpeg(rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = begin(out, b"mpeg");
    if rng.below(2) == 0 {
        out.extend_from_slice(b"mpeg21:diid:");
        push_word(rng, out);
    } else {
        out.extend_from_slice(b"mpeg7:schema:");
        push_dec(out, 2001 + rng.below(20));
    }
    out.push(b':');
    push_dec(out, serial);
    nid_end
}

/// Any other NID; the NSS is `letters* SERIAL tail`, where the tail starts
/// with a non-digit, so the serial is the first run of digits.
pub(super) fn generic(catalog: &Catalog, rng: &mut Rng, serial: u64, out: &mut Vec<u8>) -> usize {
    let nid_end = generic_nid(catalog, rng, out);
    out.push(b':');
    if rng.percent(60) {
        push_cased_word(rng, out);
    }
    push_dec(out, serial);
    let segments = match rng.below(10) {
        0..=2 => 0,
        3..=5 => 1,
        6..=7 => 2,
        8 => 3,
        _ => 5,
    };
    for _ in 0..segments {
        out.push(rng.pick(NSS_SEPARATORS));
        nss_atom(rng, out);
    }
    nid_end
}

/// Separators inside a generic NSS (`:` and `/` weighted up). Each is
/// followed by an atom, so none can end an NSS.
const NSS_SEPARATORS: &[u8] = b"::::////;=@~-_.,!$&*+'";

/// A piece of NSS that ends in a letter, digit, hex digit or balanced `)`.
fn nss_atom(rng: &mut Rng, out: &mut Vec<u8>) {
    match rng.below(12) {
        0..=3 => push_cased_word(rng, out),
        4..=5 => push_dec(out, rng.below(100_000)),
        6 => {
            let digits = 4 + rng.below(9) as u32;
            push_hex(out, rng.next(), digits, false);
        }
        7 => push_percent(rng, out),
        8 => {
            out.extend_from_slice(b"%C3%A9");
            push_word(rng, out);
        }
        9 => {
            out.push(b'(');
            push_word(rng, out);
            out.push(b')');
        }
        10 => {
            push_word(rng, out);
            push_percent(rng, out);
            push_word(rng, out);
        }
        _ => {
            out.push(b'(');
            push_word(rng, out);
            out.push(rng.pick(b",;:=~"));
            out.push(b'(');
            push_dec(out, rng.below(100));
            out.extend_from_slice(b"))");
        }
    }
}

/// `%HH` with upper-case hex (the key form).
fn push_percent(rng: &mut Rng, out: &mut Vec<u8>) {
    out.push(b'%');
    push_hex(out, rng.next(), 2, true);
}

/// A NID outside the named families: registered, `example`, informal,
/// experimental, reserved shapes, or random syntax of 2 to 32 characters.
fn generic_nid(catalog: &Catalog, rng: &mut Rng, out: &mut Vec<u8>) -> usize {
    let start = out.len();
    match rng.below(100) {
        0..=29 => out.extend(rng.pick(&catalog.registered).bytes().map(|b| b.to_ascii_lowercase())),
        30..=44 => out.extend_from_slice(b"example"),
        45..=54 => {
            out.extend_from_slice(b"urn-");
            push_dec(out, 1 + rng.below(99));
        }
        55..=60 => {
            out.extend_from_slice(b"x-");
            push_word(rng, out);
        }
        61..=63 => out.extend_from_slice(b"urn"),
        64..=68 => {
            out.push(rng.pick(LOWER_ALPHA));
            out.push(rng.pick(LOWER_ALNUM));
        }
        69..=72 => {
            out.extend_from_slice(rng.pick(COUNTRIES).as_bytes());
            out.push(b'-');
            push_word(rng, out);
        }
        _ => random_nid(rng, out),
    }
    if is_family_nid(&out[start..]) {
        // Keep the families' NID sets disjoint (no family NID starts with q).
        out[start] = b'q';
    }
    out.len()
}

const LOWER_ALPHA: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
pub(super) const LOWER_ALNUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Letters, digits and a weighted hyphen, for NID middles.
const LOWER_LDH: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789---";

/// Random NID syntax: 3 to 32 characters, mostly short, 32 now and then.
fn random_nid(rng: &mut Rng, out: &mut Vec<u8>) {
    let len = match rng.below(100) {
        0..=69 => 3 + rng.below(6),
        70..=94 => 9 + rng.below(12),
        95..=97 => 21 + rng.below(11),
        _ => 32,
    };
    out.push(rng.pick(LOWER_ALNUM));
    for _ in 2..len {
        out.push(rng.pick(LOWER_LDH));
    }
    out.push(rng.pick(LOWER_ALNUM));
}
