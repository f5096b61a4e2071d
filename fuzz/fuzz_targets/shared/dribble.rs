//! A reader that hands its data out in tiny, varying pieces, so the fuzz
//! targets exercise every block edge of the streaming code paths; and, as
//! a pipe whose writer pauses (`urnscan::source::Live`), every place a
//! pause can cut a stream.

use std::io::{self, Read};

/// A reader that returns 1, 2, ... 13 bytes per call, then starts over;
/// a pausing one fails with `WouldBlock` before every `pause`-th call.
pub struct Dribble<'a> {
    data: &'a [u8],
    pos: usize,
    step: usize,
    pause: usize,
    calls: usize,
}

#[allow(dead_code)] // each target uses what it needs
impl<'a> Dribble<'a> {
    pub fn new(data: &'a [u8]) -> Dribble<'a> {
        Dribble { data, pos: 0, step: 0, pause: 0, calls: 0 }
    }

    pub fn pausing(data: &'a [u8], pause: usize) -> Dribble<'a> {
        Dribble { pause, ..Dribble::new(data) }
    }
}

impl Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.calls += 1;
        if self.pause > 0 && self.calls.is_multiple_of(self.pause) {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.step = self.step % 13 + 1;
        let n = self.step.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
