//! Vocabulary of the filler text. No entry contains "urn" in any case (a
//! unit test checks), so filler text cannot spell `urn:`.

use super::rng::Rng;

// Kept as a paragraph: rustfmt would put each word on its own line.
#[rustfmt::skip]
pub(super) const WORDS: &[&str] = &[
    "the", "of", "and", "a", "to", "in", "is", "was", "for", "on", "that", "with", "as", "by", "at", "from", "this",
    "be", "are", "or", "an", "it", "not", "which", "have", "has", "but", "all", "were", "when", "we", "there", "can",
    "been", "one", "would", "their", "more", "if", "so", "about", "what", "out", "them", "into", "only", "other",
    "time", "some", "could", "these", "two", "may", "then", "first", "any", "like", "now", "such", "make", "over",
    "our", "even", "most", "state", "after", "also", "made", "many", "must", "before", "back", "see", "through",
    "way", "where", "get", "much", "well", "your", "know", "should", "down", "work", "year", "because", "people",
    "just", "each", "those", "how", "too", "little", "good", "very", "long", "new", "great", "old", "public",
    "record", "archive", "library", "catalog", "index", "entry", "title", "author", "volume", "issue", "page",
    "section", "chapter", "schema", "namespace", "resource", "identifier", "document", "standard", "draft",
    "version", "registry", "name", "value", "service", "request", "response", "server", "client", "cache", "queue",
    "worker", "session", "token", "user", "account", "order", "invoice", "shipment", "item", "product", "batch",
    "stream", "packet", "frame", "buffer", "memory", "thread", "process", "signal", "event", "metric", "sample",
    "report", "summary", "detail", "note", "comment", "review", "update", "delete", "insert", "select", "query",
    "result", "match", "parse", "scan", "check", "valid", "error", "warning", "notice", "timeout", "retry",
    "backoff", "limit", "quota", "region", "zone", "cluster", "node", "shard", "replica", "leader", "follower",
    "commit", "rollback", "snapshot", "backup", "restore", "migrate", "deploy", "build", "release", "tag", "branch",
    "merge", "patch", "fix", "feature", "config", "option", "flag", "default", "custom", "random", "seed", "hash",
    "key", "lock", "channel", "socket", "port", "host", "domain", "path", "file", "folder", "disk", "block",
    "sector", "river", "mountain", "forest", "garden", "window", "kitchen", "letter", "paper", "pencil", "music",
    "story", "history", "science", "nature", "language", "morning", "evening", "summer", "winter", "spring",
    "autumn", "green", "blue", "red", "yellow", "quick", "brown", "fox", "lazy", "dog", "jumps", "museum", "map",
    "atlas", "thesis", "article", "edition", "series", "publisher", "isbn", "serial", "field", "label", "format",
];

/// [`WORDS`] padded to 16 bytes, the length in byte 16: copying a word is
/// then a fixed-size move instead of a `memcpy` call, which is most of the
/// cost of filler text.
const PADDED_WORDS: [[u8; 17]; WORDS.len()] = pad_words(WORDS);

const fn pad_words<const N: usize>(words: &[&str]) -> [[u8; 17]; N] {
    let mut out = [[0u8; 17]; N];
    let mut i = 0;
    while i < N {
        let word = words[i].as_bytes();
        assert!(word.len() <= 16, "words are at most 16 bytes");
        let mut j = 0;
        while j < word.len() {
            out[i][j] = word[j];
            j += 1;
        }
        out[i][16] = word.len() as u8;
        i += 1;
    }
    out
}

/// Appends a random word of [`WORDS`].
#[inline]
pub(super) fn push_word(rng: &mut Rng, out: &mut Vec<u8>) {
    let padded = &PADDED_WORDS[rng.below(PADDED_WORDS.len() as u64) as usize];
    let len = out.len();
    out.extend_from_slice(&padded[..16]);
    out.truncate(len + usize::from(padded[16]));
}

/// Words with non-ASCII letters, for prose.
pub(super) const NON_ASCII_WORDS: &[&str] =
    &["café", "naïve", "Zürich", "façade", "über", "mañana", "São", "Ελλάδα", "東京"];

/// Non-ASCII text that follows `urn:ab:` in a decoy.
pub(super) const NON_ASCII_SNIPPETS: &[&str] = &["é", "ü", "→", "日本", "ø"];

pub(super) const LEVELS: &[&str] = &["INFO ", "INFO ", "INFO ", "WARN ", "ERROR", "DEBUG", "TRACE"];
pub(super) const JSON_LEVELS: &[&str] = &["info", "info", "warn", "error", "debug"];
pub(super) const COMPONENTS: &[&str] =
    &["auth", "db", "http", "cache", "sched", "index", "ingest", "resolver", "gc", "net", "api"];
pub(super) const ID_PREFIXES: &[&str] = &["req", "txn", "sess", "doc", "obj", "job", "evt"];
pub(super) const XML_TAGS: &[&str] = &["record", "item", "entry", "resource", "meta", "doc", "dataset", "package"];
pub(super) const HOSTS: &[&str] = &["example.org", "example.com", "data.example.net", "cdn.example.org"];
pub(super) const DIRS: &[&str] = &["/var/log", "/srv/data", "/opt/app", "/home/ci", "/tmp"];
pub(super) const EXTENSIONS: &[&str] = &[".log", ".json", ".xml", ".db", ".txt"];
pub(super) const LANGS: &[&str] = &["en", "fr", "de", "es", "ja"];
pub(super) const COUNTRIES: &[&str] = &["de", "fi", "nl", "se", "ch", "at", "it", "no", "hu", "cz"];

/// Words that contain `urn:` but are not candidates (a letter precedes it).
pub(super) const URN_WORD_DECOYS: &[&str] = &["burn:", "Turn:", "Return:", "sojourn:", "Saturn:", "TURN:"];
