//! Fuzz target: UTF-16 inputs (`urnscan::transcode`) on arbitrary bytes.
//!
//! The first byte chooses the byte order and the `--encoding` value; the
//! rest is the input. Checked:
//!
//! - no panic, whatever the bytes;
//! - `Utf16Reader`, fed in pieces of 1 to 13 bytes (and through a reader
//!   that pauses with `WouldBlock`, read again after each pause), gives
//!   exactly the text the standard library decodes from the whole input
//!   at once (`String::from_utf16_lossy`, an odd last byte as U+FFFD), so
//!   its output is always UTF-8;
//! - `source::decoded` of the input as a stream and as a whole file gives
//!   the same bytes, and those are the input as it is or the text above
//!   (after the mark when `Encoding::decide` found one);
//! - `source::decoded_counting` counts every input byte once, when read to
//!   the end, for a transcoded input, and none for one left as it is
//!   (its reader's caller counts those).

#![no_main]

use std::io::{self, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use urnscan::source::{self, Contents, Whole};
use urnscan::transcode::{Encoding, Utf16, Utf16Reader};

#[path = "shared/dribble.rs"]
mod dribble;
use dribble::Dribble;

fuzz_target!(|data: &[u8]| {
    let Some((&choice, bytes)) = data.split_first() else { return };
    let order = if choice & 1 == 0 { Utf16::Le } else { Utf16::Be };
    let want = reference(bytes, order);
    assert_eq!(read_all(Utf16Reader::new(Dribble::new(bytes), order)), want, "in pieces");
    let pause = 2 + usize::from(choice >> 4);
    assert_eq!(read_all(Utf16Reader::new(Dribble::pausing(bytes, pause), order)), want, "with pauses");

    let encoding = [Encoding::Auto, Encoding::None, Encoding::Utf16Le, Encoding::Utf16Be][usize::from(choice >> 1) & 3];
    let expected = match encoding.decide(bytes) {
        Some((order, mark)) => reference(&bytes[mark..], order),
        None => bytes.to_vec(),
    };
    let stream = Contents::Stream(Box::new(io::Cursor::new(bytes.to_vec())));
    let whole = Contents::Whole(Whole::Owned(bytes.to_vec()));
    for contents in [stream, whole] {
        let read = Arc::new(AtomicU64::new(0));
        let opened = source::decoded_counting(contents, false, encoding, Some(&read)).expect("nothing to decompress");
        assert_eq!(opened.utf16.is_some(), encoding.decide(bytes).is_some());
        let counted = if opened.is_decoded() { bytes.len() as u64 } else { 0 };
        let got = match opened.contents {
            Contents::Whole(whole) => whole.as_bytes().to_vec(),
            Contents::Stream(reader) => read_all(reader),
            Contents::Pipe(_) => panic!("a stream or a file became a pipe"),
        };
        assert_eq!(got, expected, "{encoding:?}");
        assert_eq!(read.load(Ordering::Relaxed), counted, "{encoding:?}: bytes counted");
    }
});

/// The whole input decoded at once by the standard library.
fn reference(bytes: &[u8], order: Utf16) -> Vec<u8> {
    let units: Vec<u16> = bytes
        .chunks_exact(2)
        .map(|p| match order {
            Utf16::Le => u16::from_le_bytes([p[0], p[1]]),
            Utf16::Be => u16::from_be_bytes([p[0], p[1]]),
        })
        .collect();
    let mut text = String::from_utf16_lossy(&units);
    if bytes.len() % 2 == 1 {
        text.push(char::REPLACEMENT_CHARACTER);
    }
    text.into_bytes()
}

/// Everything `reader` gives, read again after each `WouldBlock`.
fn read_all(mut reader: impl Read) -> Vec<u8> {
    let mut all = Vec::new();
    let mut buf = [0; 7];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return all,
            Ok(n) => all.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("read error: {e}"),
        }
    }
}
