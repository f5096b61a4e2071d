//! A stream's line that is still not finished after 64 KiB, condensed
//! while it is read (see the module docs of [`crate::lines`]): its first
//! `HEAD` bytes (twice [`crate::MAX_URN_LEN`]) are kept, the rest is
//! skipped and `...` stands for it, so that a gigantic line costs no more
//! memory than a long one and still gets the verdict the whole line would.

use std::io::{self, Read};

use super::{HEAD, LONG_LINE};

/// `buf` holds the start of a line and no `\n`: reads the rest of the line
/// and leaves in `buf` its condensed form (see the module docs), then the
/// `\n` and whatever followed it. Returns whether the input ended first.
pub(super) fn condense_long_line(reader: &mut dyn Read, buf: &mut Vec<u8>) -> io::Result<bool> {
    let mut head = Condensed::default();
    let mut piece = std::mem::take(buf);
    let mut scratch = vec![0u8; LONG_LINE];
    loop {
        if let Some(nl) = memchr::memchr(b'\n', &piece) {
            head.absorb(&piece[..nl]);
            *buf = head.into_line();
            buf.extend_from_slice(&piece[nl..]);
            return Ok(false);
        }
        head.absorb(&piece);
        let n = loop {
            match reader.read(&mut scratch) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        if n == 0 {
            *buf = head.into_line();
            return Ok(true);
        }
        piece.clear();
        piece.extend_from_slice(&scratch[..n]);
    }
}

/// A long line being condensed.
#[derive(Default)]
struct Condensed {
    pub(super) head: Vec<u8>,
    started: bool,
    skipped_text: bool,
}

impl Condensed {
    fn absorb(&mut self, mut bytes: &[u8]) {
        if !self.started {
            match bytes.iter().position(|b| !b.is_ascii_whitespace()) {
                Some(i) => {
                    self.started = true;
                    bytes = &bytes[i..];
                }
                None => return,
            }
        }
        let take = (HEAD - self.head.len()).min(bytes.len());
        self.head.extend_from_slice(&bytes[..take]);
        if !self.skipped_text && bytes[take..].iter().any(|b| !b.is_ascii_whitespace()) {
            self.skipped_text = true;
        }
    }

    fn into_line(mut self) -> Vec<u8> {
        if self.skipped_text {
            self.head.extend_from_slice(b"...");
        }
        self.head
    }
}
