//! Formatting in parallel, writing in order.
//!
//! Millions of output lines take a while to format, and the formatting of
//! one line needs nothing from the others, so the threads each fill a
//! buffer with a block of lines while the calling thread writes the blocks
//! out in order. The writing overlaps the filling: while the calling
//! thread writes one round of blocks (two per thread), the other threads
//! fill the next round, and the calling thread joins them once its writes
//! are done. Output into a pipe is often slower than the formatting (the
//! reader takes the bytes a pipe's buffer at a time), and with the rounds
//! one after the other every thread waited for every write. Measured
//! (2026-11-28, 2-core KVM guest, `benches/ab.sh`, 9 rounds, medians) at
//! two threads: `urnscan dedup -q` of 10 M lines (3 M distinct) into
//! `| cat > /dev/null` 1,117 → 901 ms, as fast as into `/dev/null` (903 →
//! 895); `scan --unique` of 256 MiB of dense text into the same pipe 395
//! → 313 ms. At one thread nothing can overlap, and nothing changed.
//!
//! Two rounds of buffers exist, one being written and one being filled, so
//! memory stays a few buffers whatever the output's size, and the same
//! buffers serve every round: a fresh buffer per block, filled on one
//! thread and freed on another, made the allocator hold tens of MB more
//! than the buffers themselves (measured on 3 M lines of `scan --unique`:
//! 247 MiB peak RSS against 208 MiB with reused buffers). Two rounds hold
//! twice the buffers of one: peak RSS of `scan --unique -j2` on the 10 M
//! lines went from 200,968–203,220 to 203,776–205,460 KB (five runs each;
//! blocks of 16,384 lines).
//!
//! A thread fills its buffer as a local, not in place in the round's array:
//! the buffers' `Vec` headers sit side by side there, and two threads
//! appending to neighbours kept writing to one cache line. [`InOrder`]
//! keeps the buffers for output that comes in parts, such as a stream read
//! a block at a time.

use std::io::{self, Write};

use rayon::prelude::*;

/// Fills one buffer per item with `fill` on the pool's threads and writes
/// the buffers to `out` in item order from the calling thread, each round
/// written while the next is filled. The bytes are those of filling and
/// writing one item after the other; the first error (of a fill or of a
/// write) ends the output, and no buffer after it is written.
pub fn write_in_order<T: Sync>(
    items: &[T],
    out: &mut dyn Write,
    fill: impl Fn(&T, &mut Vec<u8>) -> io::Result<()> + Sync,
) -> io::Result<()> {
    InOrder::new().write(items, out, fill)
}

/// [`write_in_order`] for output that comes in parts (a stream read a
/// block at a time): the buffers are kept from one part to the next. A
/// fresh set per part was freed and faulted in again each time (`urnscan
/// check` of 10 M lines in blocks of 4 MiB: 25,454 page faults against 264
/// when it wrote as it went).
#[derive(Debug, Default)]
pub struct InOrder {
    filling: Vec<Vec<u8>>,
    writing: Vec<Vec<u8>>,
}

impl InOrder {
    /// No buffers yet.
    pub fn new() -> InOrder {
        InOrder::default()
    }

    /// [`write_in_order`] with this value's buffers.
    pub fn write<T: Sync>(
        &mut self,
        items: &[T],
        out: &mut dyn Write,
        fill: impl Fn(&T, &mut Vec<u8>) -> io::Result<()> + Sync,
    ) -> io::Result<()> {
        let round = rayon::current_num_threads() * 2;
        self.filling.resize_with(round, Vec::new);
        self.writing.resize_with(round, Vec::new);
        let (mut filling, mut writing) = (&mut self.filling, &mut self.writing);
        let fill_round = |texts: &mut [Vec<u8>], group: &[T]| {
            texts.par_iter_mut().zip(group).try_for_each(|(text, item)| {
                // Filled as a local: the buffers' `Vec` headers sit side by
                // side, and a length updated on every write by two threads
                // kept their shared cache line moving between the cores
                // (`urnscan dedup -q` of 10 M lines at two threads: 916 -> 881
                // ms; `urnscan check` used 40 % more CPU time at two threads
                // than at one).
                let mut local = std::mem::take(text);
                local.clear();
                let filled = fill(item, &mut local);
                *text = local;
                filled
            })
        };
        let mut groups = items.chunks(round);
        // Buffers of `writing` that hold the round before, to be written.
        let mut ready = 0;
        loop {
            let group = groups.next();
            let (mut filled, mut written) = (Ok(()), Ok(()));
            rayon::in_place_scope(|scope| {
                if let Some(group) = group {
                    let (texts, filled) = (&mut filling[..group.len()], &mut filled);
                    let fill_round = &fill_round;
                    scope.spawn(move |_| *filled = fill_round(texts, group));
                }
                // Here, on the calling thread: `out` need not be `Send`.
                written = writing[..ready].iter().try_for_each(|text| out.write_all(text));
            });
            written?;
            filled?;
            let Some(group) = group else { return Ok(()) };
            ready = group.len();
            std::mem::swap(&mut filling, &mut writing);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::{Duration, Instant};

    use super::*;

    #[test]
    fn blocks_come_out_in_item_order() {
        let items: Vec<u32> = (0..1000).collect();
        let mut out = Vec::new();
        write_in_order(&items, &mut out, |&i, text| writeln!(text, "{i}")).unwrap();
        let want: String = (0..1000).map(|i| format!("{i}\n")).collect();
        assert_eq!(String::from_utf8(out).unwrap(), want);
    }

    fn pool(threads: usize) -> rayon::ThreadPool {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap()
    }

    #[test]
    fn blocks_come_out_in_item_order_whatever_the_fills_take() {
        // Fills of uneven length on three threads, a count of items that
        // is no multiple of a round: still the bytes of one after the other.
        let items: Vec<u32> = (0..101).collect();
        let mut out = Vec::new();
        pool(3)
            .install(|| {
                write_in_order(&items, &mut out, |&i, text| {
                    std::thread::sleep(Duration::from_micros(u64::from(i % 4) * 300));
                    writeln!(text, "{i}")
                })
            })
            .unwrap();
        let want: String = (0..101).map(|i| format!("{i}\n")).collect();
        assert_eq!(String::from_utf8(out).unwrap(), want);
        let mut none = Vec::new();
        write_in_order(&[] as &[u32], &mut none, |_, _| unreachable!()).unwrap();
        assert!(none.is_empty());
    }

    #[test]
    fn parts_written_through_one_in_order_are_the_whole_written_at_once() {
        let items: Vec<u32> = (0..101).collect();
        let fill = |&i: &u32, text: &mut Vec<u8>| writeln!(text, "{}", "x".repeat(i as usize));
        let mut whole = Vec::new();
        write_in_order(&items, &mut whole, fill).unwrap();
        for threads in [1, 3] {
            let mut parts = Vec::new();
            let mut in_order = InOrder::new();
            pool(threads).install(|| {
                for part in [&items[..37], &items[37..38], &[][..], &items[38..]] {
                    in_order.write(part, &mut parts, fill).unwrap();
                }
            });
            assert!(parts == whole, "{threads} threads");
        }
    }

    /// Holds its first write until `begun` is set (or a few seconds have
    /// passed), and notes whether it was.
    struct WaitsForFill<'a> {
        begun: &'a AtomicBool,
        waited: Option<bool>,
    }

    impl Write for WaitsForFill<'_> {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            if self.waited.is_none() {
                let deadline = Instant::now() + Duration::from_secs(5);
                while !self.begun.load(Ordering::SeqCst) && Instant::now() < deadline {
                    std::thread::sleep(Duration::from_millis(1));
                }
                self.waited = Some(self.begun.load(Ordering::SeqCst));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_next_round_is_filled_while_one_is_written() {
        // Two threads: rounds of four. The first write (item 0) waits for
        // the fill of item 4, the next round's first: rounds one after the
        // other would only begin that fill once the write returned.
        let items: Vec<u32> = (0..8).collect();
        let begun = AtomicBool::new(false);
        let mut out = WaitsForFill { begun: &begun, waited: None };
        pool(2)
            .install(|| {
                write_in_order(&items, &mut out, |&i, text| {
                    if i == 4 {
                        begun.store(true, Ordering::SeqCst);
                    }
                    writeln!(text, "{i}")
                })
            })
            .unwrap();
        assert_eq!(out.waited, Some(true), "the fill of the next round had not begun during the write");
    }

    #[test]
    fn a_failed_write_ends_the_output() {
        // A reader that went away (a closed pipe): its error comes back and
        // nothing is written after it, though the next round was filled.
        struct Closed(usize);
        impl Write for Closed {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0 += 1;
                if self.0 > 3 {
                    return Err(io::Error::from(io::ErrorKind::BrokenPipe));
                }
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let items: Vec<u32> = (0..50).collect();
        let mut out = Closed(0);
        let result = pool(2).install(|| write_in_order(&items, &mut out, |&i, text| writeln!(text, "{i}")));
        assert_eq!(result.unwrap_err().kind(), io::ErrorKind::BrokenPipe);
        assert_eq!(out.0, 4, "a write was tried after the first failed one");
    }

    #[test]
    fn the_first_error_stops_the_output() {
        let items: Vec<u32> = (0..100).collect();
        let mut out = Vec::new();
        let result = write_in_order(&items, &mut out, |&i, text| {
            if i == 50 {
                return Err(io::Error::other("no"));
            }
            writeln!(text, "{i}")
        });
        assert!(result.is_err());
        assert!(!String::from_utf8(out).unwrap().contains("50\n"));
    }
}
