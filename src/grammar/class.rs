//! 256-entry character-class tables.
//!
//! Every grammar decision in urnscan is one table lookup per byte: a byte's
//! entry is a bit set of the classes it belongs to, so the hot loops test
//! `CLASS[b as usize] & BIT != 0` instead of chains of comparisons. The
//! tables are built at compile time from the ABNF sets below, written out
//! once, so each set can be checked against the RFC text by eye.
//!
//! Bytes >= 0x80 belong to no class: no URN grammar admits them.

/// ALPHA / DIGIT (RFC 3986 `alphanum`, RFC 2141 `let-num`).
pub const ALNUM: u8 = 1 << 0;
/// ALPHA / DIGIT / "-" (RFC 8141 `ldh`, RFC 2141 `let-num-hyp`).
pub const LDH: u8 = 1 << 1;
/// HEXDIG, both cases.
pub const HEX: u8 = 1 << 2;
/// RFC 3986 `pchar` without `pct-encoded` (the `%` is handled apart):
/// unreserved / sub-delims / ":" / "@".
pub const PCHAR: u8 = 1 << 3;
/// `pchar / "/"`: what may follow the first character of an RFC 8141 NSS.
pub const NSS_TAIL: u8 = 1 << 4;
/// `pchar / "/" / "?"`: RFC 3986 `fragment`, and the tail of r- and
/// q-components.
pub const FRAG: u8 = 1 << 5;
/// RFC 2141 `<trans>` without "%": upper / lower / number / other /
/// reserved ("/", "?", "#"). The "%" must start an escape.
pub const TRANS: u8 = 1 << 6;
/// URI scheme characters (RFC 3986 §3.1): ALPHA / DIGIT / "+" / "-" / ".".
/// A `urn:` preceded by one of these is part of another word.
pub const SCHEME: u8 = 1 << 7;

const ALPHA_LOWER: &[u8] = b"abcdefghijklmnopqrstuvwxyz";
const ALPHA_UPPER: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGIT: &[u8] = b"0123456789";
/// RFC 3986 unreserved punctuation.
const UNRESERVED_PUNCT: &[u8] = b"-._~";
/// RFC 3986 sub-delims.
const SUB_DELIMS: &[u8] = b"!$&'()*+,;=";
/// RFC 2141 `<other>`.
const RFC2141_OTHER: &[u8] = b"()+,-.:=@;$_!*'";
/// RFC 2141 `<reserved>` without "%".
const RFC2141_RESERVED: &[u8] = b"/?#";

const fn mark(mut table: [u8; 256], set: &[u8], bit: u8) -> [u8; 256] {
    let mut i = 0;
    while i < set.len() {
        table[set[i] as usize] |= bit;
        i += 1;
    }
    table
}

const fn mark_alnum(table: [u8; 256], bit: u8) -> [u8; 256] {
    mark(mark(mark(table, ALPHA_LOWER, bit), ALPHA_UPPER, bit), DIGIT, bit)
}

const fn mark_pchar(table: [u8; 256], bit: u8) -> [u8; 256] {
    let t = mark_alnum(table, bit);
    let t = mark(t, UNRESERVED_PUNCT, bit);
    let t = mark(t, SUB_DELIMS, bit);
    mark(t, b":@", bit)
}

const fn build() -> [u8; 256] {
    let t = [0u8; 256];
    let t = mark_alnum(t, ALNUM);
    let t = mark_alnum(t, LDH);
    let t = mark(t, b"-", LDH);
    let t = mark(t, DIGIT, HEX);
    let t = mark(t, b"abcdefABCDEF", HEX);
    let t = mark_pchar(t, PCHAR);
    let t = mark_pchar(t, NSS_TAIL);
    let t = mark(t, b"/", NSS_TAIL);
    let t = mark_pchar(t, FRAG);
    let t = mark(t, b"/?", FRAG);
    let t = mark_alnum(t, TRANS);
    let t = mark(t, RFC2141_OTHER, TRANS);
    let t = mark(t, RFC2141_RESERVED, TRANS);
    let t = mark_alnum(t, SCHEME);
    mark(t, b"+-.", SCHEME)
}

/// The class table: `CLASS[byte]` is the set of classes `byte` belongs to.
pub static CLASS: [u8; 256] = build();

/// Whether `byte` is in every class of `bits`.
#[inline(always)]
pub fn is(byte: u8, bits: u8) -> bool {
    CLASS[byte as usize] & bits != 0
}

/// Whether a URN under either grammar may hold `byte` anywhere: in its
/// scheme, NID, NSS or a component, or as the `%` of an escape. A URN
/// never runs across any other byte, which tells a scanning chunk which
/// of its events a URN of the chunk before may cover (see `crate::scan`).
#[inline(always)]
pub fn in_any_urn(byte: u8) -> bool {
    is(byte, LDH | FRAG | TRANS) || byte == b'%'
}

/// Index of the first byte at or after `i` that is not in `class`.
///
/// Eight bytes at a time are looked up and turned into a bit mask of class
/// members; a full mask moves on eight bytes, otherwise the first clear bit
/// is the answer. That is one bounds check and one branch per eight bytes,
/// and no per-byte branch to mispredict where a run of characters ends.
#[inline(always)]
pub(crate) fn skip_members(hay: &[u8], mut i: usize, class: u8) -> usize {
    while let Some(block) = hay.get(i..i + 8) {
        let mut members = 0u32;
        for (k, &b) in block.iter().enumerate() {
            members |= u32::from(CLASS[b as usize] & class != 0) << k;
        }
        if members != 0xff {
            return i + (!members).trailing_zeros() as usize;
        }
        i += 8;
    }
    while i < hay.len() && is(hay[i], class) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn members(bit: u8) -> String {
        (0u8..=255).filter(|&b| is(b, bit)).map(char::from).collect()
    }

    #[test]
    fn sets_match_the_abnf() {
        let alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
        assert_eq!(members(ALNUM), alnum);
        assert_eq!(members(LDH), format!("-{alnum}"));
        assert_eq!(members(HEX), "0123456789ABCDEFabcdef");
        // pchar = unreserved / sub-delims / ":" / "@" (sorted by byte value)
        assert_eq!(members(PCHAR), "!$&'()*+,-.0123456789:;=@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~");
        assert_eq!(
            members(NSS_TAIL),
            "!$&'()*+,-./0123456789:;=@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~"
        );
        assert_eq!(members(FRAG), "!$&'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz~");
        // RFC 2141: no "~", "&", "%" (escape only), but "/", "?", "#" are admitted.
        assert_eq!(members(TRANS), "!#$'()*+,-./0123456789:;=?@ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz");
        assert_eq!(members(SCHEME), format!("+-.{alnum}"));
    }

    #[test]
    fn urns_hold_every_printable_ascii_byte_but_twelve() {
        // RFC 3986 appendix A: no URI holds a space, `"`, `<`, `>`, `\`,
        // `^`, a backquote, `{`, `|` or `}`, and `[` `]` only in a host,
        // which no pchar, RFC 8141 component or RFC 2141 <trans> admits;
        // nor controls, DEL, non-ASCII.
        let outside: String = (0u8..=255).filter(|&b| !in_any_urn(b)).map(char::from).collect();
        let printable_outside: String = outside.chars().filter(|c| c.is_ascii_graphic() || *c == ' ').collect();
        assert_eq!(printable_outside, " \"<>[\\]^`{|}");
        assert_eq!(outside.chars().count(), 256 - 95 + 12);
    }

    #[test]
    fn no_class_for_non_ascii_or_controls() {
        for b in
            (0x80u8..=0xff).chain(0..0x20).chain([0x7f, b' ', b'"', b'<', b'>', b'\\', b'^', b'`', b'{', b'|', b'}'])
        {
            assert_eq!(CLASS[b as usize], 0, "byte {b:#x}");
        }
    }
}
