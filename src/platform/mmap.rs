//! Memory-mapped input files that survive being truncated while mapped.
//!
//! # The problem
//!
//! Reading a page of a `MAP_SHARED` file mapping that now lies past the end
//! of the file (someone truncated it after we mapped it) raises `SIGBUS`,
//! whose default action kills the process. A scanner that maps files it does
//! not own (logs being rotated, files being rewritten) must not die for that.
//!
//! # The rule
//!
//! Every live [`Mapping`] is registered in a fixed table of 256 slots that a
//! process-wide `SIGBUS` handler can read without locks or allocation. The
//! handler is installed once (`std::sync::Once`, `sigaction` with
//! `SA_SIGINFO | SA_ONSTACK`). On a fault whose address lies inside a
//! registered mapping, it maps anonymous zero pages (`MAP_FIXED |
//! MAP_PRIVATE | MAP_ANONYMOUS`, read-only) over that mapping from the
//! faulting page to its end, sets the mapping's `faulted` flag and returns;
//! the faulting load is retried and reads zero. So after a truncation:
//!
//! - bytes before the new end of file read as the file's bytes,
//! - bytes past it read as zero (the kernel zeroes the tail of the last
//!   partial page itself; whole pages past it fault and become zero pages),
//! - [`Mapping::changed_during_use`] is true: the handler's flag, or a
//!   current file size below the mapped length.
//!
//! A fault at any other address is passed on to the disposition that was in
//! place before ours: a previous `SA_SIGINFO` or plain handler is called (for
//! Rust programs that is std's stack-overflow handler, which restores the
//! default and returns); a default or ignored disposition is restored and the
//! signal re-raised, so a genuine bug still dies with `SIGBUS`.
//!
//! Slots carry a generation counter read like a seqlock, so the handler
//! never trusts a `(start, len)` pair torn by a concurrent register/drop. A
//! mapping is unregistered *before* it is unmapped, so no stale slot can
//! cover an address the kernel hands out again.
//!
//! # Limits
//!
//! - At most 256 mappings live at once; [`Mapping::map`] returns an error
//!   beyond that (callers fall back to reading the file).
//! - Linux only; elsewhere [`Mapping::map`] returns `Unsupported`.
//! - Only shrinking is caught. Bytes rewritten in place (or a file truncated
//!   and regrown before we touch the lost pages) are read as they are now;
//!   growth past the mapped length is not seen.
//! - As with any Rust view of a shared mapping, a concurrent writer changes
//!   bytes behind a `&[u8]`; callers treat the bytes as untrusted input and
//!   must not rely on two reads of one byte agreeing.
//! - Code that later replaces the `SIGBUS` disposition without chaining to
//!   ours removes the protection.
//! - If the kernel refuses the replacement zero mapping (out of memory), the
//!   fault is passed on as above and the process dies as it would without us.
//! - The handler calls `mmap`, which POSIX does not list as async-signal-safe;
//!   on Linux it is a plain system call wrapper, which is safe in practice.
//!
//! # Populate/advice: measured, not used
//!
//! Map + touch of a 1 GiB file (best of 3, 2-core VM shared with builds):
//!
//! | | touch 1 byte/page, warm | read every byte, warm | read every byte, cold |
//! |---|---|---|---|
//! | plain | 26–34 ms | 203 ms | 547–649 ms |
//! | `MAP_POPULATE` | 26–32 ms | 203 ms | 630–660 ms |
//! | `MADV_SEQUENTIAL` | 25–31 ms | 206 ms | 547–581 ms |
//! | `MADV_WILLNEED` | 22–27 ms | 206 ms | 1630–1674 ms |
//! | `MADV_HUGEPAGE` | 25–30 ms | 194 ms | 732–858 ms |
//!
//! ("cold" = the file's pages dropped with `POSIX_FADV_DONTNEED` first.)
//! Warm, every option is within noise of the plain mapping; cold,
//! `MADV_SEQUENTIAL` is at best equal to plain and the others are slower. So
//! no option or advice API is offered.
//!
//! That table was measured with the page cache in 4 KiB pages and, as it
//! turned out, in a process that had turned transparent huge pages off
//! (see [`super::pages`]). Where the page cache holds the file in 2 MiB
//! folios and the process lets advised memory have huge pages,
//! `MADV_HUGEPAGE` maps them with 2 MiB entries, and that is measurably
//! faster (figures in [`super::pages`]): every mapping of at least a huge
//! page is advised so, where a huge page is at most 2 MiB (x86-64, arm64
//! with 4 KiB pages; arm64's 32 and 512 MiB ones would keep that much of
//! the file resident between releases). Its pages then go back in whole
//! huge pages ([`Mapping::release_before`]): `MADV_DONTNEED` on part of a
//! 2 MiB entry of a file drops all of it.

use std::fs::File;
use std::io;

/// A read-only mapping of a whole file.
///
/// Reads past a concurrent truncation see zeros instead of killing the
/// process; see the module docs.
pub struct Mapping {
    inner: imp::Inner,
}

impl Mapping {
    /// Maps `file` read-only.
    ///
    /// Fails when the file cannot be mapped, when 256 mappings are already
    /// live, or on targets other than Linux; callers should then read the
    /// file instead. A file of size 0 maps to no bytes, even a /proc file
    /// that has content when read: callers read such a file instead
    /// ([`crate::source`] never maps one).
    pub fn map(file: &File) -> io::Result<Mapping> {
        Ok(Mapping { inner: imp::Inner::map(file)? })
    }

    /// The mapped bytes.
    pub fn as_bytes(&self) -> &[u8] {
        self.inner.as_bytes()
    }

    /// Whether the file shrank while mapped (bytes past the new end read as zero).
    pub fn changed_during_use(&self) -> bool {
        self.inner.changed_during_use()
    }

    /// Drops the pages of every byte before `end` from this process's
    /// resident memory (`MADV_DONTNEED`), as far as earlier calls did not:
    /// a scan that is done with a prefix of the file gives it back, so a
    /// mapped file of many GB does not count in full against the process's
    /// RSS. The bytes do not change: the file's pages stay in the page
    /// cache and a later read maps them again (or, past a truncation, reads
    /// zeros as before). Advice the kernel refuses is ignored.
    ///
    /// Pages go back in whole huge pages (see the module docs): the one
    /// `end` falls in stays until a later call passes it, or `end` reaches
    /// the end of the file.
    pub fn release_before(&self, end: usize) {
        self.inner.release_before(end);
    }

    /// How much of the mapping this process has resident now, and how much
    /// of that the kernel maps with huge pages, from `/proc/self/smaps`;
    /// `None` where that cannot be read. For reports (`urnscan bench`),
    /// not for decisions: it reads and parses a file of every mapping.
    pub fn resident(&self) -> Option<Resident> {
        self.inner.resident()
    }
}

/// What [`Mapping::resident`] found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Resident {
    /// Bytes of the mapping in memory and mapped (its `Rss`).
    pub bytes: usize,
    /// Of those, the bytes mapped with huge pages (`FilePmdMapped`).
    pub in_huge_pages: usize,
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping").field("len", &self.as_bytes().len()).finish()
    }
}

#[cfg(not(target_os = "linux"))]
mod imp {
    use std::fs::File;
    use std::io;

    pub(super) enum Inner {}

    impl Inner {
        pub(super) fn map(_file: &File) -> io::Result<Inner> {
            Err(io::Error::new(io::ErrorKind::Unsupported, "guarded memory maps need Linux"))
        }
        pub(super) fn as_bytes(&self) -> &[u8] {
            match *self {}
        }
        pub(super) fn changed_during_use(&self) -> bool {
            match *self {}
        }
        pub(super) fn release_before(&self, _end: usize) {
            match *self {}
        }
        pub(super) fn resident(&self) -> Option<super::Resident> {
            match *self {}
        }
    }
}

#[cfg(target_os = "linux")]
mod imp {
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;
    use std::ptr::NonNull;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::guard;

    /// The largest huge page a mapping is advised to use.
    const MAX_HUGE: usize = 2 << 20;

    pub(super) struct Inner {
        /// Start of the mapping (dangling when `len == 0`: nothing is mapped).
        ptr: NonNull<u8>,
        len: usize,
        /// Registry slot; `None` for an empty file.
        slot: Option<usize>,
        /// A duplicate descriptor, to compare the current size with `len`.
        file: File,
        /// Every page before this offset has been given back
        /// ([`Inner::release_before`]); a multiple of the page size or `len`.
        released: AtomicUsize,
        /// What pages go back in: a huge page for a mapping advised to use
        /// them, otherwise a page.
        granule: usize,
    }

    // SAFETY: the memory is read-only for our whole lifetime (the fault
    // handler only swaps pages for other read-only zero pages), so sharing
    // or moving the view across threads is as safe as for `&[u8]`.
    unsafe impl Send for Inner {}
    // SAFETY: as above.
    unsafe impl Sync for Inner {}

    impl Inner {
        pub(super) fn map(file: &File) -> io::Result<Inner> {
            let file = file.try_clone()?;
            let len = usize::try_from(file.metadata()?.len())
                .map_err(|_| io::Error::new(io::ErrorKind::OutOfMemory, "file larger than the address space"))?;
            if len == 0 {
                // mmap rejects length 0; an empty file needs no guard.
                let released = AtomicUsize::new(0);
                return Ok(Inner { ptr: NonNull::dangling(), len, slot: None, file, released, granule: 1 });
            }
            guard::install()?;
            // SAFETY: a fresh read-only shared mapping at an address of the
            // kernel's choice; it aliases no Rust object.
            let raw = unsafe {
                libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ, libc::MAP_SHARED, file.as_raw_fd(), 0)
            };
            if raw == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            // Linux never places a mapping at address 0 without MAP_FIXED; the
            // null check only spares us an `expect`.
            let registered =
                NonNull::new(raw.cast::<u8>()).and_then(|ptr| Some((ptr, guard::register(raw as usize, len)?)));
            let Some((ptr, slot)) = registered else {
                // SAFETY: unmapping what we just mapped; nothing refers to it.
                unsafe { libc::munmap(raw, len) };
                return Err(io::Error::other("too many live mappings (256); read the file instead"));
            };
            // Huge pages of up to 2 MiB only (x86-64's, arm64's with 4 KiB
            // pages): pages go back a huge page at a time, and one of 32 or
            // 512 MiB would keep that much of the file resident.
            let huge = guard::huge_page_size();
            let advised = huge <= MAX_HUGE && len >= huge;
            let granule = if advised { huge } else { guard::page_size() };
            if advised {
                // SAFETY: advice on our own fresh mapping; it changes how
                // the kernel maps the file's pages, never their contents.
                unsafe { libc::madvise(raw, len, libc::MADV_HUGEPAGE) };
            }
            Ok(Inner { ptr, len, slot: Some(slot), file, released: AtomicUsize::new(0), granule })
        }

        pub(super) fn as_bytes(&self) -> &[u8] {
            // SAFETY: `ptr..ptr+len` stays mapped and readable until drop (the
            // guard keeps it readable even if the file shrinks); for len 0 a
            // dangling, aligned pointer is valid for an empty slice.
            unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
        }

        /// What pages go back in (tests only).
        #[cfg(test)]
        pub(super) fn granule(&self) -> usize {
            self.granule
        }

        /// Whether the fault handler replaced pages (tests only; the public
        /// answer also checks the file size).
        #[cfg(test)]
        pub(super) fn guard_fired(&self) -> bool {
            self.slot.is_some_and(guard::faulted)
        }

        pub(super) fn changed_during_use(&self) -> bool {
            let faulted = self.slot.is_some_and(guard::faulted);
            // A size we cannot read is reported as a change: the caller will
            // then treat the bytes with suspicion, which is the safe side.
            let shrank = self.file.metadata().map_or(true, |m| m.len() < self.len as u64);
            faulted || shrank
        }

        pub(super) fn release_before(&self, end: usize) {
            if self.slot.is_none() {
                return;
            }
            let to = if end >= self.len {
                self.len.next_multiple_of(guard::page_size())
            } else {
                // Down to a huge-page boundary of the address: advice on
                // part of a huge page drops all of it, the rest of which
                // the caller may still be reading.
                let base = self.ptr.as_ptr() as usize;
                ((base + end) / self.granule * self.granule).saturating_sub(base)
            };
            let from = self.released.fetch_max(to, Ordering::Relaxed);
            if from >= to {
                return;
            }
            // SAFETY: a page-aligned range inside our own read-only shared
            // file mapping (`from` is 0 or an earlier `to`; both are page
            // multiples, the mapping's last partial page included).
            // MADV_DONTNEED on it only drops page-table entries: later
            // reads fault the file's pages back in (or the guard's zero
            // pages, which read as zeros again), so every `&[u8]` view keeps
            // reading the same bytes.
            unsafe {
                libc::madvise(self.ptr.as_ptr().add(from).cast(), to - from, libc::MADV_DONTNEED);
            }
        }

        pub(super) fn resident(&self) -> Option<super::Resident> {
            if self.slot.is_none() {
                return Some(super::Resident { bytes: 0, in_huge_pages: 0 });
            }
            let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
            let head = format!("{:x}-", self.ptr.as_ptr() as usize);
            let mut lines = smaps.lines().skip_while(|l| !l.starts_with(&head));
            lines.next()?;
            // The mapping's fields ("Name:   12 kB"), up to the next
            // mapping's header line, which has spaces before its first ':'.
            let fields: Vec<(&str, usize)> = lines
                .map_while(|l| l.split_once(':').filter(|(name, _)| !name.contains(' ')))
                .filter_map(|(name, value)| Some((name, value.trim().strip_suffix("kB")?.trim().parse().ok()?)))
                .collect();
            let kib = |name: &str| fields.iter().find(|(n, _)| *n == name).map(|&(_, v)| v * 1024);
            Some(super::Resident { bytes: kib("Rss")?, in_huge_pages: kib("FilePmdMapped").unwrap_or(0) })
        }
    }

    impl Drop for Inner {
        fn drop(&mut self) {
            if let Some(slot) = self.slot {
                // Unregister first: once the range is unmapped the kernel may
                // hand it to someone else, and no slot may cover it then.
                guard::unregister(slot);
                // SAFETY: our own mapping; no borrow of it outlives `self`.
                unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
            }
        }
    }
}

/// The `SIGBUS` handler and the registry of live mappings it consults.
#[cfg(target_os = "linux")]
mod guard {
    use std::cell::UnsafeCell;
    use std::io;
    use std::mem::MaybeUninit;
    use std::sync::atomic::{fence, AtomicBool, AtomicUsize, Ordering};
    use std::sync::Once;

    /// Maximum number of live mappings.
    pub(super) const SLOTS: usize = 256;

    /// Low two bits of a slot's `tag`; the rest is a generation count that
    /// changes on every unregister, so a reader can detect reuse.
    const FREE: usize = 0;
    const WRITING: usize = 1;
    const LIVE: usize = 2;
    const STATE_BITS: usize = 3;
    const GENERATION: usize = 4;

    struct Slot {
        tag: AtomicUsize,
        start: AtomicUsize,
        len: AtomicUsize,
        faulted: AtomicBool,
    }

    #[allow(clippy::declare_interior_mutable_const)] // only used as the array initializer below
    const EMPTY_SLOT: Slot = Slot {
        tag: AtomicUsize::new(FREE),
        start: AtomicUsize::new(0),
        len: AtomicUsize::new(0),
        faulted: AtomicBool::new(false),
    };

    static REGISTRY: [Slot; SLOTS] = [EMPTY_SLOT; SLOTS];

    /// Claims a slot for `start..start + len`; `None` when all are taken.
    pub(super) fn register(start: usize, len: usize) -> Option<usize> {
        for (index, slot) in REGISTRY.iter().enumerate() {
            let tag = slot.tag.load(Ordering::Relaxed);
            if tag & STATE_BITS != FREE {
                continue;
            }
            if slot.tag.compare_exchange(tag, tag | WRITING, Ordering::Acquire, Ordering::Relaxed).is_err() {
                continue;
            }
            // Seqlock writer: the state change must be visible before the
            // new range is, so a reader that sees the new range re-reads a
            // different tag.
            fence(Ordering::Release);
            slot.start.store(start, Ordering::Relaxed);
            slot.len.store(len, Ordering::Relaxed);
            slot.faulted.store(false, Ordering::Relaxed);
            slot.tag.store(tag | LIVE, Ordering::Release);
            return Some(index);
        }
        None
    }

    /// Frees a slot from [`register`]; bumps its generation.
    pub(super) fn unregister(index: usize) {
        let slot = &REGISTRY[index];
        let tag = slot.tag.load(Ordering::Relaxed);
        slot.tag.store((tag & !STATE_BITS) + GENERATION, Ordering::Release);
    }

    /// Whether the handler replaced pages of the mapping in slot `index`.
    pub(super) fn faulted(index: usize) -> bool {
        REGISTRY[index].faulted.load(Ordering::Acquire)
    }

    /// The live registered range containing `addr`: `(slot, start, len)`.
    /// Async-signal-safe: atomics only.
    fn owner_of(addr: usize) -> Option<(usize, usize, usize)> {
        REGISTRY.iter().enumerate().find_map(|(index, slot)| {
            let before = slot.tag.load(Ordering::Acquire);
            if before & STATE_BITS != LIVE {
                return None;
            }
            let start = slot.start.load(Ordering::Relaxed);
            let len = slot.len.load(Ordering::Relaxed);
            fence(Ordering::Acquire);
            let stable = slot.tag.load(Ordering::Relaxed) == before;
            (stable && addr >= start && addr - start < len).then_some((index, start, len))
        })
    }

    /// The disposition that was in place before ours, written once before
    /// our handler is installed and only read afterwards.
    struct Previous(UnsafeCell<MaybeUninit<libc::sigaction>>);
    // SAFETY: written once inside `INSTALL` before the handler that reads it
    // exists; never written again.
    unsafe impl Sync for Previous {}

    static PREVIOUS: Previous = Previous(UnsafeCell::new(MaybeUninit::uninit()));
    static INSTALL: Once = Once::new();
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    static PAGE_SIZE: AtomicUsize = AtomicUsize::new(0);

    /// The page size, read when the guard was installed (every mapping
    /// installs it first).
    pub(super) fn page_size() -> usize {
        PAGE_SIZE.load(Ordering::Relaxed).max(1)
    }

    /// The size of a huge page (a page-middle-directory entry) of
    /// transparent huge pages, as the kernel reports it; 2 MiB, x86-64's,
    /// where it does not. Read once.
    pub(super) fn huge_page_size() -> usize {
        static HUGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        *HUGE.get_or_init(|| {
            std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size")
                .ok()
                .and_then(|s| s.trim().parse::<usize>().ok())
                .filter(|size| size.is_power_of_two() && *size >= page_size())
                .unwrap_or(2 << 20)
        })
    }

    /// Installs the handler once per process.
    pub(super) fn install() -> io::Result<()> {
        INSTALL.call_once(|| INSTALLED.store(try_install().is_ok(), Ordering::Release));
        if INSTALLED.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(io::Error::other("could not install the SIGBUS guard"))
        }
    }

    fn try_install() -> io::Result<()> {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        let page = usize::try_from(page).ok().filter(|p| p.is_power_of_two()).ok_or_else(io::Error::last_os_error)?;
        PAGE_SIZE.store(page, Ordering::Relaxed);
        // SAFETY: querying the current disposition into our own storage;
        // no handler of ours reads PREVIOUS before the install below.
        if unsafe { libc::sigaction(libc::SIGBUS, std::ptr::null(), (*PREVIOUS.0.get()).as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a zeroed sigaction is a valid value to fill in; the handler
        // has the SA_SIGINFO signature.
        let rc = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as libc::sighandler_t;
            action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut())
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// The `SIGBUS` handler. Async-signal-safe: atomics, `mmap`, `sigaction`,
    /// `raise` and calls to the previous handler only.
    extern "C" fn on_sigbus(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        // SAFETY: the kernel passes a valid siginfo for SA_SIGINFO handlers.
        let addr = unsafe { (*info).si_addr() } as usize;
        if let Some((index, start, len)) = owner_of(addr) {
            if zero_fill(addr, start, len) {
                REGISTRY[index].faulted.store(true, Ordering::Release);
                return;
            }
        }
        // SAFETY: not ours; hand over to what was there before, with the
        // arguments we were given.
        unsafe { chain(signal, info, context) }
    }

    /// Replaces `[page of addr, end of mapping)` with read-only zero pages.
    fn zero_fill(addr: usize, start: usize, len: usize) -> bool {
        let page = PAGE_SIZE.load(Ordering::Relaxed);
        let from = addr & !(page - 1);
        let end = (start + len).next_multiple_of(page);
        // SAFETY: the range lies inside a live mapping of ours (the slot was
        // stable and a reader of it is faulting right now, so it cannot be
        // dropped); MAP_FIXED swaps its pages for zero pages in one step.
        let raw = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_FIXED | libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        raw != libc::MAP_FAILED
    }

    /// Passes a fault that is not ours to the previous disposition.
    ///
    /// # Safety
    /// Must be called from the signal handler with its own arguments.
    unsafe fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
        // SAFETY: PREVIOUS was filled before our handler was installed.
        let previous = unsafe { (*PREVIOUS.0.get()).assume_init_ref() };
        let handler = previous.sa_sigaction;
        if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
            // Restore the default and re-raise: the signal stays blocked until
            // we return, then kills the process (a hardware fault would also
            // simply recur on return).
            // SAFETY: plain async-signal-safe calls with valid arguments.
            unsafe {
                let mut default: libc::sigaction = std::mem::zeroed();
                default.sa_sigaction = libc::SIG_DFL;
                libc::sigemptyset(&mut default.sa_mask);
                libc::sigaction(signal, &default, std::ptr::null_mut());
                libc::raise(signal);
            }
        } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
            // SAFETY: with SA_SIGINFO the stored address is a three-argument handler.
            let previous: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
                unsafe { std::mem::transmute(handler) };
            previous(signal, info, context);
        } else {
            // SAFETY: without SA_SIGINFO the stored address is a one-argument handler.
            let previous: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
            previous(signal);
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::{Arc, Barrier};

    /// Every byte of the test files is nonzero, so a zero can only come
    /// from the guard (or the kernel zeroing past the new end).
    fn pattern(i: usize) -> u8 {
        (i % 251) as u8 + 1
    }

    fn temp_file(len: usize) -> (tempfile::NamedTempFile, Vec<u8>) {
        let bytes: Vec<u8> = (0..len).map(pattern).collect();
        let mut file = tempfile::NamedTempFile::new().unwrap();
        file.write_all(&bytes).unwrap();
        file.flush().unwrap();
        (file, bytes)
    }

    const MIB: usize = 1 << 20;

    /// Held by every test here that maps, so the registry-full test cannot
    /// starve the others of slots.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn untouched_file_maps_whole_and_reports_no_change() {
        let _alone = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (file, bytes) = temp_file(3 * MIB + 123);
        let map = Mapping::map(file.as_file()).unwrap();
        assert_eq!(map.as_bytes(), &bytes[..]);
        assert!(!map.changed_during_use());
    }

    /// The resident memory of `map`'s range, in bytes.
    fn resident(map: &Mapping) -> Option<usize> {
        map.resident().map(|r| r.bytes)
    }

    #[test]
    fn pages_go_back_in_whole_huge_pages_up_to_the_end_and_read_the_same() {
        let _alone = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let len = 8 * MIB + 300;
        let (file, bytes) = temp_file(len);
        let map = Mapping::map(file.as_file()).unwrap();
        let huge = map.inner.granule();
        assert!(huge == guard::huge_page_size() || huge == guard::page_size());
        let read_all = || assert!(map.as_bytes() == &bytes[..], "bytes changed");
        read_all();
        let Some(all) = map.resident() else { return }; // no smaps: nothing to measure
        let touched = all.bytes;
        assert_eq!(touched, len.next_multiple_of(guard::page_size()));
        assert!(all.in_huge_pages <= touched && all.in_huge_pages % guard::huge_page_size() == 0, "{all:?}");
        // Up to the last huge-page boundary of the address before `end`.
        let base = map.as_bytes().as_ptr() as usize;
        let end = 3 * MIB + 5;
        let kept_from = ((base + end) / huge * huge).saturating_sub(base);
        map.release_before(end);
        assert_eq!(resident(&map), Some(touched - kept_from), "release_before({end})");
        map.release_before(MIB); // behind what went: nothing changes
        assert_eq!(resident(&map), Some(touched - kept_from));
        map.release_before(len);
        assert_eq!(resident(&map), Some(0), "the end releases everything");
        read_all();
        assert_eq!(resident(&map), Some(touched), "read again, mapped again");
        map.release_before(len);
        assert_eq!(resident(&map), Some(touched), "each page is given back once");
    }

    #[test]
    fn empty_file_maps_to_empty_slice() {
        let _alone = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (file, _) = temp_file(0);
        let map = Mapping::map(file.as_file()).unwrap();
        assert!(map.as_bytes().is_empty());
        assert!(!map.changed_during_use());
    }

    /// Truncates the file to `cut` from another thread after the reader has
    /// read the first `cut` bytes, then reads on; returns what was read.
    fn read_across_truncation(len: usize, cut: usize) -> (Vec<u8>, Vec<u8>, bool) {
        let _alone = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (file, bytes) = temp_file(len);
        let map = Mapping::map(file.as_file()).unwrap();
        assert!(!map.inner.guard_fired());
        let truncated = Arc::new(Barrier::new(2));
        let start = Arc::new(Barrier::new(2));
        let cutter = {
            let (file, truncated, start) = (file.reopen().unwrap(), truncated.clone(), start.clone());
            std::thread::spawn(move || {
                start.wait();
                file.set_len(cut as u64).unwrap();
                truncated.wait();
            })
        };
        let view = map.as_bytes();
        let mut seen = Vec::with_capacity(len);
        seen.extend_from_slice(&view[..cut]);
        start.wait();
        truncated.wait();
        // Every byte, one at a time, as a scanner would (no memcpy tricks).
        seen.extend(view[cut..].iter().copied());
        cutter.join().unwrap();
        // Pages past the cut were taken away by the truncation, so reading
        // them must have gone through the handler.
        assert!(map.inner.guard_fired());
        let changed = map.changed_during_use();
        (bytes, seen, changed)
    }

    #[test]
    fn truncation_to_half_reads_zeros_past_the_cut() {
        let (len, cut) = (4 * MIB + 77, 2 * MIB + 5);
        let (bytes, seen, changed) = read_across_truncation(len, cut);
        assert_eq!(seen.len(), len);
        assert_eq!(seen[..cut], bytes[..cut], "bytes before the cut are the file's");
        assert!(seen[cut..].iter().all(|&b| b == 0), "bytes past the cut read as zero");
        assert!(changed);
    }

    #[test]
    fn truncation_to_zero_reads_zeros() {
        let len = 3 * MIB;
        let (_, seen, changed) = read_across_truncation(len, 0);
        assert_eq!(seen.len(), len);
        assert_eq!(seen.iter().map(|&b| u64::from(b)).sum::<u64>(), 0);
        assert!(changed);
    }

    #[test]
    fn truncation_racing_the_reader_never_crashes() {
        let _alone = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // No ordering between cutter and reader: each byte is either the
        // file's or zero, and zeros (if any) start no earlier than the cut.
        let (len, cut) = (8 * MIB, 3 * MIB);
        let (file, bytes) = temp_file(len);
        let map = Mapping::map(file.as_file()).unwrap();
        let cutter = {
            let file = file.reopen().unwrap();
            std::thread::spawn(move || file.set_len(cut as u64).unwrap())
        };
        let sum: u64 = map.as_bytes().iter().map(|&b| u64::from(b)).sum();
        cutter.join().unwrap();
        for (i, (&got, &want)) in map.as_bytes().iter().zip(&bytes).enumerate() {
            assert!(got == want && i < cut || got == 0 && i >= cut, "byte {i}: {got} (file had {want})");
        }
        assert!(sum >= bytes[..cut].iter().map(|&b| u64::from(b)).sum::<u64>());
        assert!(map.changed_during_use());
    }

    #[test]
    fn full_registry_is_an_error_until_a_slot_frees() {
        let _alone = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        let (file, _) = temp_file(10_000);
        // Other code in this process may hold a few slots, so the table can
        // fill before we reach 256 ourselves, never after.
        let mut live = Vec::new();
        let error = loop {
            match Mapping::map(file.as_file()) {
                Ok(map) => live.push(map),
                Err(error) => break error,
            }
            assert!(live.len() <= guard::SLOTS, "more live mappings than slots");
        };
        assert_eq!(error.kind(), std::io::ErrorKind::Other, "{error}");
        assert!(!live.is_empty());
        live.pop();
        assert!(Mapping::map(file.as_file()).is_ok(), "a dropped mapping frees its slot");
    }

    #[test]
    fn slots_are_released_on_drop() {
        let _alone = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        // More maps in sequence than there are slots: each drop frees its slot.
        let (file, bytes) = temp_file(10_000);
        for _ in 0..2 * guard::SLOTS {
            let map = Mapping::map(file.as_file()).unwrap();
            assert_eq!(map.as_bytes()[9_999], bytes[9_999]);
        }
    }

    /// Run in a child process by `fault_outside_mappings_still_kills`.
    #[test]
    #[ignore = "run by fault_outside_mappings_still_kills in a child process"]
    fn child_faults_outside_any_mapping() {
        if std::env::var_os("URNSCAN_SIGBUS_CHILD").is_none() {
            return;
        }
        // Install the guard, then fault on a mapping it does not know.
        let (file, _) = temp_file(10_000);
        let _ours = Mapping::map(file.as_file()).unwrap();
        let (other, _) = temp_file(2 * 4096);
        use std::os::fd::AsRawFd;
        // SAFETY: test-only raw mapping of our own temp file.
        let raw = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                2 * 4096,
                libc::PROT_READ,
                libc::MAP_SHARED,
                other.as_file().as_raw_fd(),
                0,
            )
        };
        assert_ne!(raw, libc::MAP_FAILED);
        other.as_file().set_len(0).unwrap();
        // SAFETY: deliberately faults (SIGBUS): the page is past the end of the file.
        let byte = unsafe { std::ptr::read_volatile(raw.cast::<u8>()) };
        println!("unexpectedly survived, read {byte}");
    }

    #[test]
    fn fault_outside_mappings_still_kills() {
        use std::os::unix::process::ExitStatusExt;
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", "platform::mmap::tests::child_faults_outside_any_mapping", "--ignored", "--nocapture"])
            .env("URNSCAN_SIGBUS_CHILD", "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // A handler that swallowed the fault would make the child re-fault
        // forever; give up after a generous bound instead of hanging.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            if std::time::Instant::now() > deadline {
                child.kill().unwrap();
                panic!("child still running: the fault was swallowed");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        };
        assert_eq!(status.signal(), Some(libc::SIGBUS), "child status {status:?}");
    }
}
