//! Memory-mapped input files. (Stub: plain memmap2; fault guard comes next.)

use std::fs::File;
use std::io;

/// A read-only mapping of a whole file.
pub struct Mapping {
    map: memmap2::Mmap,
}

impl Mapping {
    /// Maps `file` read-only.
    pub fn map(file: &File) -> io::Result<Mapping> {
        // SAFETY: stub; see the module docs of the full version.
        let map = unsafe { memmap2::Mmap::map(file)? };
        Ok(Mapping { map })
    }
    /// The mapped bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.map
    }
    /// Whether the file shrank while mapped (bytes past the new end read as zero).
    pub fn changed_during_use(&self) -> bool {
        false
    }
}
