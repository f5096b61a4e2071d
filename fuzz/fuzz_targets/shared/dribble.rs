//! A reader that hands its data out in tiny, varying pieces, so the fuzz
//! targets exercise every block edge of the streaming code paths.

use std::io::{self, Read};

/// A reader that returns 1, 2, ... 13 bytes per call, then starts over.
pub struct Dribble<'a> {
    data: &'a [u8],
    pos: usize,
    step: usize,
}

impl<'a> Dribble<'a> {
    pub fn new(data: &'a [u8]) -> Dribble<'a> {
        Dribble { data, pos: 0, step: 0 }
    }
}

impl Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.step = self.step % 13 + 1;
        let n = self.step.min(buf.len()).min(self.data.len() - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
