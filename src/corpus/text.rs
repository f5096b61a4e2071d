//! The text generator: log, JSON, XML and prose lines with URNs and
//! decoys planted on a schedule (see the module docs of [`crate::corpus`]).

use std::io::{self, Write};
use std::ops::Range;

use super::classes::{class_urn, Catalog, LOWER_ALNUM};
use super::rng::{mix64, Rng, TEXT_SALT};
use super::spellings::{earlier_class, library_key, render_spelling};
use super::vocabulary::{
    push_word, COMPONENTS, DIRS, EXTENSIONS, HOSTS, ID_PREFIXES, JSON_LEVELS, LEVELS, NON_ASCII_SNIPPETS,
    NON_ASCII_WORDS, URN_WORD_DECOYS, XML_TAGS,
};
use super::writers::{ascii, format_date, push_dec, push_hex, push_long_nid, push_scheme, TWO_DIGITS};
use super::{GenSummary, Planted, TextConfig};

/// Output is handed to the writer in blocks of about this size.
pub(super) const FLUSH_AT: usize = 1 << 20;

/// What a slot holds when it holds no URN and no decoy.
#[derive(Clone, Copy)]
enum Fill {
    Word,
    Id,
    Url,
    Path,
}

/// A planted URN (`key` set) or decoy of the current line, by position in
/// the buffer.
struct Mark {
    span: Range<usize>,
    pub(super) key: Option<Range<usize>>,
}

/// The counters a dropped line must give back.
#[derive(Clone, Copy)]
struct Progress {
    /// Classes introduced so far: class indexes `0..fresh`.
    fresh: u64,
    pub(super) planted: u64,
    pub(super) decoys: u64,
    next_urn: u64,
    next_decoy: u64,
}

/// A running wall clock for timestamps, with the date cached per day.
struct Clock {
    pub(super) secs: u64,
    pub(super) day: u64,
    pub(super) date: [u8; 10],
}

type TruthFn<'h> = &'h mut dyn FnMut(Planted<'_>);
type DecoyFn<'h> = &'h mut dyn FnMut(u64, usize);

struct TextGen<'h> {
    pub(super) seed: u64,
    pub(super) rng: Rng,
    pub(super) catalog: Catalog,
    /// Bytes not yet handed to the writer; `flushed` bytes precede them.
    buf: Vec<u8>,
    flushed: u64,
    urn_gap: u64,
    decoy_gap: u64,
    progress: Progress,
    /// Plantings and decoys of the current line, reported once it is kept.
    marks: Vec<Mark>,
    /// Keys of the marks.
    pub(super) keys: Vec<u8>,
    /// Scratch for a class's canonical form.
    pub(super) class: Vec<u8>,
    pub(super) clock: Clock,
    pub(super) truth: Option<TruthFn<'h>>,
    decoy_hook: Option<DecoyFn<'h>>,
}

/// [`generate_text`](super::generate_text), also reporting each decoy's offset and length (tests
/// use it to account for every `urn:` in the text).
pub(super) fn generate_text_traced<'h>(
    cfg: &TextConfig,
    out: &mut impl Write,
    truth: Option<TruthFn<'h>>,
    decoy_hook: Option<DecoyFn<'h>>,
) -> io::Result<GenSummary> {
    let mut g = TextGen::new(cfg, truth, decoy_hook);
    while g.pos() < cfg.size {
        let saved = g.progress;
        let line_start = g.buf.len();
        g.line();
        if g.pos() > cfg.size {
            g.buf.truncate(line_start);
            g.marks.clear();
            g.keys.clear();
            g.progress = saved;
            g.pad_to(cfg.size);
            break;
        }
        g.commit();
        if g.buf.len() >= FLUSH_AT {
            g.flush(out)?;
        }
    }
    g.flush(out)?;
    let p = g.progress;
    Ok(GenSummary { bytes: g.flushed, planted: p.planted, decoys: p.decoys, distinct_keys: p.fresh })
}

/// Bytes between two due points for a density per MiB; `u64::MAX` = never.
fn gap(per_mib: u32) -> u64 {
    if per_mib == 0 {
        u64::MAX
    } else {
        (1u64 << 20) / u64::from(per_mib)
    }
}

impl<'h> TextGen<'h> {
    pub(super) fn new(cfg: &TextConfig, truth: Option<TruthFn<'h>>, decoy_hook: Option<DecoyFn<'h>>) -> TextGen<'h> {
        let mut rng = Rng::new(mix64(cfg.seed ^ TEXT_SALT));
        let (urn_gap, decoy_gap) = (gap(cfg.urns_per_mib), gap(cfg.decoys_per_mib));
        let next_urn = first_due(&mut rng, urn_gap);
        let next_decoy = first_due(&mut rng, decoy_gap);
        // Some instant between 2017 and 2026.
        let secs = 1_500_000_000 + rng.below(280_000_000);
        TextGen {
            seed: cfg.seed,
            rng,
            catalog: Catalog::new(),
            buf: Vec::with_capacity(FLUSH_AT + 64 * 1024),
            flushed: 0,
            urn_gap,
            decoy_gap,
            progress: Progress { fresh: 0, planted: 0, decoys: 0, next_urn, next_decoy },
            marks: Vec::new(),
            keys: Vec::new(),
            class: Vec::with_capacity(256),
            clock: Clock { secs, day: u64::MAX, date: [0; 10] },
            truth,
            decoy_hook,
        }
    }

    #[inline]
    fn pos(&self) -> u64 {
        self.flushed + self.buf.len() as u64
    }

    fn flush(&mut self, out: &mut impl Write) -> io::Result<()> {
        out.write_all(&self.buf)?;
        self.flushed += self.buf.len() as u64;
        self.buf.clear();
        Ok(())
    }

    /// Reports the marks of the line just kept.
    pub(super) fn commit(&mut self) {
        for mark in &self.marks {
            let offset = self.flushed + mark.span.start as u64;
            match &mark.key {
                Some(key) => {
                    if let Some(truth) = self.truth.as_mut() {
                        let urn = ascii(&self.buf[mark.span.clone()]);
                        truth(Planted { offset, urn, key: ascii(&self.keys[key.clone()]) });
                    }
                }
                None => {
                    if let Some(hook) = self.decoy_hook.as_mut() {
                        hook(offset, mark.span.len());
                    }
                }
            }
        }
        self.marks.clear();
        self.keys.clear();
    }

    /// Fills up to `size` with one line of words (no `:`, so no `urn:`).
    fn pad_to(&mut self, size: u64) {
        let room = (size - self.pos()) as usize;
        if room == 0 {
            return;
        }
        let end = self.buf.len() + room - 1;
        while self.buf.len() < end {
            self.word();
            self.put(b" ");
        }
        self.buf.truncate(end);
        self.buf.push(b'\n');
    }

    #[inline]
    pub(super) fn put(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    #[inline]
    pub(super) fn word(&mut self) {
        push_word(&mut self.rng, &mut self.buf);
    }

    pub(super) fn words(&mut self, n: u64) {
        for k in 0..n {
            if k > 0 {
                self.buf.push(b' ');
            }
            self.word();
        }
    }

    fn num_below(&mut self, n: u64) {
        let v = self.rng.below(n);
        push_dec(&mut self.buf, v);
    }

    pub(super) fn hex(&mut self, digits: u32) {
        let v = self.rng.next();
        push_hex(&mut self.buf, v, digits, false);
    }

    /// `2024-05-06T12:34:56.789Z`, moving the clock forward a little.
    fn timestamp(&mut self) {
        self.clock.secs += self.rng.below(3);
        let day = self.clock.secs / 86_400;
        if day != self.clock.day {
            self.clock.day = day;
            self.clock.date = format_date(day);
        }
        let sod = (self.clock.secs % 86_400) as usize;
        let ms = self.rng.below(1000) as usize;
        let mut time = *b"THH:MM:SS.mmmZ";
        time[1..3].copy_from_slice(&TWO_DIGITS[sod / 3600]);
        time[4..6].copy_from_slice(&TWO_DIGITS[sod / 60 % 60]);
        time[7..9].copy_from_slice(&TWO_DIGITS[sod % 60]);
        time[10] = b'0' + (ms / 100) as u8;
        time[11..13].copy_from_slice(&TWO_DIGITS[ms % 100]);
        self.buf.extend_from_slice(&self.clock.date);
        self.buf.extend_from_slice(&time);
    }

    pub(super) fn line(&mut self) {
        match self.rng.below(100) {
            0..=31 => self.log_line(),
            32..=45 => self.json_line(),
            46..=59 => self.xml_line(),
            60..=87 => self.prose_line(),
            88..=93 => self.tsv_line(),
            94..=97 => self.yaml_line(),
            _ => self.put(b"\n"),
        }
    }

    /// A place for a URN, a decoy or filler. The caller writes the bytes
    /// around it; `quoted` says the slot sits between apostrophes.
    pub(super) fn slot(&mut self, quoted: bool, fill: Fill) {
        let pos = self.pos();
        if pos >= self.progress.next_urn && self.plant(quoted) {
            self.progress.next_urn = self.progress.next_urn.saturating_add(jitter(&mut self.rng, self.urn_gap));
        } else if pos >= self.progress.next_decoy {
            self.decoy();
            self.progress.next_decoy = self.progress.next_decoy.saturating_add(jitter(&mut self.rng, self.decoy_gap));
        } else {
            self.filler(fill);
        }
    }

    /// Plants a spelling of a new class (70%) or an earlier one. Returns
    /// false, planting nothing, if the class holds a `'` and the slot is
    /// quoted (rule 2 would cut it short); the URN stays due.
    pub(super) fn plant(&mut self, quoted: bool) -> bool {
        let fresh = self.progress.fresh == 0 || self.rng.percent(70);
        let index = if fresh { self.progress.fresh } else { earlier_class(&mut self.rng, self.progress.fresh) };
        let nid_end = class_urn(&self.catalog, self.seed, index, &mut self.class);
        if quoted && self.class.contains(&b'\'') {
            return false;
        }
        let start = self.buf.len();
        render_spelling(&mut self.rng, &self.class, nid_end, &mut self.buf);
        let key_start = self.keys.len();
        // Nobody reads the key without a truth callback; debug builds still
        // check every planting against the library.
        if self.truth.is_some() || cfg!(debug_assertions) {
            library_key(&self.buf[start..], &self.class, &mut self.keys);
        }
        self.marks.push(Mark { span: start..self.buf.len(), key: Some(key_start..self.keys.len()) });
        if fresh {
            self.progress.fresh += 1;
        }
        self.progress.planted += 1;
        true
    }

    /// Writes a string that contains `urn:` (any case) but yields no URN,
    /// whatever bytes follow it.
    pub(super) fn decoy(&mut self) {
        let start = self.buf.len();
        match self.rng.below(20) {
            0 => {
                self.put(b"return:");
                self.word();
            }
            1 => {
                self.put(b"turn:");
                self.word();
                self.put(b":");
                self.word();
            }
            2 => {
                self.put(b"x-urn:");
                self.word();
            }
            3 => {
                self.word();
                self.put(b".urn:");
                self.word();
            }
            4 => {
                self.scheme();
                self.put(b"::");
                self.word();
            }
            5 => {
                self.scheme();
                self.put(b":");
                let c = self.rng.pick(LOWER_ALNUM);
                self.buf.push(c);
                self.put(b":");
                self.word();
            }
            6 => {
                self.scheme();
                self.put(b":-");
                self.word();
                self.put(b":");
                self.word();
            }
            7 => {
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b"-:");
                self.word();
            }
            8 => {
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b": ");
            }
            9 => self.put(b"URN: "),
            10 => {
                self.scheme();
                self.put(b":");
                push_long_nid(&mut self.rng, &mut self.buf);
                self.put(b":x");
            }
            11 => {
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b":");
                let s = self.rng.pick(NON_ASCII_SNIPPETS);
                self.put(s.as_bytes());
            }
            12 => {
                self.scheme();
                self.put(b":\n");
            }
            13 => {
                let w = self.rng.pick(URN_WORD_DECOYS);
                self.put(w.as_bytes());
            }
            14..=17 => {
                // An NSS that cannot start: leading "/", bad escape, "?", "#".
                self.scheme();
                self.put(b":");
                self.word();
                let bad: &[u8] = [b":/".as_slice(), b":%zz", b":?", b":#"][self.rng.below(4) as usize];
                self.put(bad);
                self.word();
            }
            18 => {
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b"_");
                self.word();
                self.put(b":");
                self.word();
            }
            _ => {
                // No colon after the NID: whatever follows is not `:`
                // (slots are never followed by one, see `prose_slot`).
                self.scheme();
                self.put(b":");
                self.word();
                self.put(b" ");
            }
        }
        self.marks.push(Mark { span: start..self.buf.len(), key: None });
        self.progress.decoys += 1;
    }

    /// `urn` in a random ASCII case.
    pub(super) fn scheme(&mut self) {
        push_scheme(&mut self.rng, &mut self.buf);
    }

    pub(super) fn filler(&mut self, fill: Fill) {
        match fill {
            Fill::Word => self.word(),
            Fill::Id => {
                let p = self.rng.pick(ID_PREFIXES);
                self.put(p.as_bytes());
                self.put(b"-");
                let digits = 6 + self.rng.below(6) as u32;
                self.hex(digits);
            }
            Fill::Url => {
                let scheme: &[u8] = if self.rng.below(3) == 0 { b"http://" } else { b"https://" };
                self.put(scheme);
                let h = self.rng.pick(HOSTS);
                self.put(h.as_bytes());
                self.put(b"/");
                self.word();
                self.put(b"/");
                self.word();
            }
            Fill::Path => self.path(),
        }
    }

    pub(super) fn path(&mut self) {
        let d = self.rng.pick(DIRS);
        self.put(d.as_bytes());
        self.put(b"/");
        self.word();
        self.put(b"/");
        self.word();
        self.put(b"-");
        self.num_below(100);
        let e = self.rng.pick(EXTENSIONS);
        self.put(e.as_bytes());
    }

    fn log_line(&mut self) {
        self.timestamp();
        self.put(b" ");
        let level = self.rng.pick(LEVELS);
        self.put(level.as_bytes());
        self.put(b" [");
        let comp = self.rng.pick(COMPONENTS);
        self.put(comp.as_bytes());
        self.put(b"-");
        self.num_below(16);
        self.put(b"] ");
        let n = 2 + self.rng.below(5);
        self.words(n);
        match self.rng.below(100) {
            0..=39 => {
                self.put(b" id=");
                self.slot(false, Fill::Id);
            }
            40..=59 => {
                self.put(b" resolving ");
                self.slot(false, Fill::Word);
                self.put(b" in ");
                self.num_below(500);
                self.put(b" ms");
            }
            60..=71 => {
                self.put(b" name=\"");
                self.slot(false, Fill::Id);
                self.put(b"\"");
            }
            72..=77 => {
                self.put(b" ref='");
                self.slot(true, Fill::Id);
                self.put(b"'");
            }
            78..=81 => {
                // The scanner's exception: `urn:` right after a `%HH` triplet.
                self.put(b" GET /lookup?q=%");
                let upper = self.rng.below(2) == 0;
                let v = self.rng.next();
                push_hex(&mut self.buf, v, 2, upper);
                self.slot(false, Fill::Word);
                self.put(b" 200");
            }
            82..=86 => {
                self.put(b"\t");
                self.slot(false, Fill::Path);
            }
            _ => {
                self.put(b" ");
                self.path();
            }
        }
        if self.rng.percent(15) {
            self.put(b" parent=");
            self.slot(false, Fill::Id);
        }
        self.put(b"\n");
    }

    fn json_line(&mut self) {
        let colon: &[u8] = if self.rng.below(4) == 0 { b": " } else { b":" };
        self.put(b"{\"ts\"");
        self.put(colon);
        self.put(b"\"");
        self.timestamp();
        self.put(b"\",\"level\"");
        self.put(colon);
        self.put(b"\"");
        let level = self.rng.pick(JSON_LEVELS);
        self.put(level.as_bytes());
        self.put(b"\"");
        if self.rng.percent(85) {
            self.put(b",\"id\"");
            self.put(colon);
            self.put(b"\"");
            self.slot(false, Fill::Id);
            self.put(b"\"");
        }
        self.put(b",\"msg\"");
        self.put(colon);
        self.put(b"\"");
        let n = 3 + self.rng.below(8);
        self.words(n);
        self.put(b"\"");
        if self.rng.percent(30) {
            self.put(b",\"ref\"");
            self.put(colon);
            self.put(b"\"");
            self.slot(false, Fill::Url);
            self.put(b"\"");
        }
        if self.rng.percent(10) {
            self.put(b",\"refs\"");
            self.put(colon);
            self.put(b"[\"");
            self.slot(false, Fill::Id);
            self.put(b"\",\"");
            self.slot(false, Fill::Id);
            self.put(b"\"]");
        }
        self.put(b",\"n\"");
        self.put(colon);
        self.num_below(100_000);
        self.put(b"}\n");
    }

    fn xml_line(&mut self) {
        let tag = self.rng.pick(XML_TAGS).as_bytes();
        self.put(b"<");
        self.put(tag);
        match self.rng.below(4) {
            0 | 1 => {
                self.put(b" xmlns=\"");
                self.slot(false, Fill::Url);
                self.put(b"\"");
            }
            2 => {
                self.put(b" xmlns='");
                self.slot(true, Fill::Url);
                self.put(b"'");
            }
            _ => {
                self.put(b" xmlns:dc=\"");
                self.slot(false, Fill::Url);
                self.put(b"\"");
            }
        }
        if self.rng.percent(40) {
            self.put(b" version=\"1.");
            self.num_below(10);
            self.put(b"\"");
        }
        self.put(b">");
        match self.rng.below(4) {
            0 => {
                self.put(b"<title>");
                let n = 2 + self.rng.below(6);
                self.words(n);
                self.put(b"</title>");
            }
            1 => {
                self.put(b"<id>");
                self.slot(false, Fill::Id);
                self.put(b"</id>");
            }
            2 => {
                self.put(b"<link href=\"");
                self.slot(false, Fill::Url);
                self.put(b"\"/>");
            }
            _ => {
                self.put(b"<note>");
                self.words(2);
                self.put(b" (");
                self.slot(false, Fill::Word);
                self.put(b") ");
                self.words(2);
                self.put(b"</note>");
            }
        }
        self.put(b"</");
        self.put(tag);
        self.put(b">\n");
    }

    fn prose_line(&mut self) {
        let sentences = 1 + self.rng.below(4);
        for k in 0..sentences {
            if k > 0 {
                self.put(b" ");
            }
            self.sentence();
        }
        self.put(b"\n");
    }

    fn sentence(&mut self) {
        let n = 4 + self.rng.below(12);
        let slot_at = if self.rng.percent(55) { 1 + self.rng.below(n - 1) } else { u64::MAX };
        let start = self.buf.len();
        self.word();
        self.buf[start].make_ascii_uppercase();
        for k in 1..n {
            if k == slot_at {
                self.prose_slot();
            }
            self.put(b" ");
            if self.rng.percent(3) {
                let w = self.rng.pick(NON_ASCII_WORDS);
                self.put(w.as_bytes());
            } else {
                self.word();
            }
        }
        if self.rng.percent(15) {
            // The sentence ends with the slot: `urn:...` then `.` `?` `!`.
            if self.rng.percent(40) {
                self.put(b" (");
                self.slot(false, Fill::Word);
                self.put(b")");
            } else {
                self.put(b" ");
                self.slot(false, Fill::Word);
            }
        }
        let end: &[u8] = [b".".as_slice(), b".", b".", b"?", b"!"][self.rng.below(5) as usize];
        self.put(end);
    }

    /// A slot inside a sentence, with the punctuation around it. A word
    /// (after a space) always follows.
    fn prose_slot(&mut self) {
        let (open, quoted, close): (&[u8], bool, &[u8]) = match self.rng.below(16) {
            0..=4 => (b" ", false, b""),
            5 => (b" (", false, b")"),
            6 => (b" (see ", false, b")"),
            7 => (b" \"", false, b"\""),
            8 => (b" '", true, b"'"),
            9 => (b" ", false, b","),
            10 => (b" ", false, b";"),
            11 => (b" ", false, b":"),
            12 => (b" <", false, b">"),
            13 => (b" [", false, b"]"),
            14 => (b" (cf. ", false, b".)"),
            _ => (b" `", false, b"`"),
        };
        self.put(open);
        self.slot(quoted, Fill::Word);
        self.put(close);
    }

    fn tsv_line(&mut self) {
        match self.rng.below(3) {
            0 => {
                self.num_below(1_000_000);
                self.put(b"\t");
                self.word();
                self.put(b"\t");
                self.slot(false, Fill::Id);
                self.put(b"\t");
                self.num_below(100);
                self.put(b".");
                self.num_below(100);
            }
            1 => {
                self.slot(false, Fill::Id);
                self.put(b"\t");
                self.word();
                self.put(b"\t");
                self.num_below(10_000);
            }
            _ => self.slot(false, Fill::Id),
        }
        self.put(b"\n");
    }

    fn yaml_line(&mut self) {
        match self.rng.below(3) {
            0 => {
                self.put(b"  ");
                self.word();
                self.put(b": ");
            }
            1 => {
                self.word();
                self.put(b" = ");
            }
            _ => self.put(b"- "),
        }
        self.slot(false, Fill::Word);
        self.put(b"\n");
    }
}

/// The first due point: uniform within one gap.
fn first_due(rng: &mut Rng, gap: u64) -> u64 {
    if gap == u64::MAX {
        u64::MAX
    } else {
        rng.below(gap + 1)
    }
}

/// The distance to the next due point: `gap` on average, half to one and a
/// half times it.
fn jitter(rng: &mut Rng, gap: u64) -> u64 {
    if gap == u64::MAX {
        u64::MAX
    } else {
        gap / 2 + rng.below(gap + 1)
    }
}
