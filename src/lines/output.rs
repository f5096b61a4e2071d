//! The classes out, in order: from the in-memory tables
//! ([`emit_tables`], or [`write_tables`] formatting ranges of them on
//! several threads), or from sorted sources merged ([`merge`]: the spilled
//! runs of [`super::spill`]).

use std::cmp::Ordering;
use std::io::{self, Write};

use super::{Formatter, Order};
use crate::dedup::{CountedEntries, Entry, FirstSeenEntries, KeyTable, SortedEntries};

/// A sorted source of classes for [`merge`].
pub(super) trait Cursor {
    fn head(&self) -> Option<Entry<'_>>;
    fn advance(&mut self) -> io::Result<()>;
}

/// The in-memory result: first-seen order merges the tables (each already
/// in first-seen order, see the module docs); key order sorts them all,
/// and count order reorders the key order by count.
pub(super) fn emit_tables(
    tables: &mut [KeyTable],
    order: Order,
    emit: &mut dyn FnMut(&Entry<'_>) -> io::Result<()>,
) -> io::Result<u64> {
    match order {
        Order::FirstSeen => {
            let entries = FirstSeenEntries::new(tables);
            entries.for_each(emit)?;
            Ok(entries.len() as u64)
        }
        Order::Key => {
            let sorted = SortedEntries::reusing_indexes(tables);
            for e in sorted.iter() {
                emit(&e)?;
            }
            Ok(sorted.len() as u64)
        }
        Order::Count => {
            let counted = CountedEntries::new(&SortedEntries::reusing_indexes(tables));
            for e in counted.iter() {
                emit(&e)?;
            }
            Ok(counted.len() as u64)
        }
    }
}

/// [`emit_tables`] for [`LineDedup::finish_parallel`](super::LineDedup::finish_parallel): the same classes in
/// the same order, formatted a range at a time on several threads.
pub(super) fn write_tables(
    tables: &mut [KeyTable],
    order: Order,
    format: &Formatter<'_>,
    out: &mut dyn Write,
) -> io::Result<u64> {
    match order {
        Order::Key => {
            let sorted = SortedEntries::reusing_indexes(tables);
            sorted.write_in_order(out, format)?;
            Ok(sorted.len() as u64)
        }
        Order::FirstSeen => {
            let entries = FirstSeenEntries::new(tables);
            entries.write_in_order(out, format)?;
            Ok(entries.len() as u64)
        }
        Order::Count => {
            let counted = CountedEntries::new(&SortedEntries::reusing_indexes(tables));
            counted.write_in_order(out, format)?;
            Ok(counted.len() as u64)
        }
    }
}

/// An `emit` for [`merge`] that formats each class and writes it to `out`.
pub(super) fn one_by_one<'a>(
    format: &'a Formatter<'_>,
    out: &'a mut dyn Write,
) -> impl FnMut(&Entry<'_>) -> io::Result<()> + 'a {
    let mut text = Vec::new();
    move |e| {
        text.clear();
        format(e, &mut text)?;
        out.write_all(&text)
    }
}

/// K-way merge of sorted cursors (a binary heap of cursor indexes).
pub(super) fn merge<C: Cursor>(
    mut cursors: Vec<C>,
    order: Order,
    emit: &mut dyn FnMut(&Entry<'_>) -> io::Result<()>,
) -> io::Result<u64> {
    let less = |cursors: &[C], a: usize, b: usize| match (cursors[a].head(), cursors[b].head()) {
        (Some(x), Some(y)) => order.compare(&x, &y).then(a.cmp(&b)) == Ordering::Less,
        (x, _) => x.is_some(),
    };
    let mut heap: Vec<usize> = (0..cursors.len()).filter(|&i| cursors[i].head().is_some()).collect();
    for i in (0..heap.len() / 2).rev() {
        sift_down(&mut heap, i, |a, b| less(&cursors, a, b));
    }
    let mut emitted = 0;
    while let Some(&top) = heap.first() {
        if let Some(e) = cursors[top].head() {
            emit(&e)?;
            emitted += 1;
        }
        cursors[top].advance()?;
        if cursors[top].head().is_none() {
            heap.swap_remove(0);
        }
        sift_down(&mut heap, 0, |a, b| less(&cursors, a, b));
    }
    Ok(emitted)
}

fn sift_down(heap: &mut [usize], mut i: usize, less: impl Fn(usize, usize) -> bool) {
    loop {
        let mut smallest = i;
        for child in [2 * i + 1, 2 * i + 2] {
            if child < heap.len() && less(heap[child], heap[smallest]) {
                smallest = child;
            }
        }
        if smallest == i {
            return;
        }
        heap.swap(i, smallest);
        i = smallest;
    }
}
