//! Names and hashes (SPEC §3): the record filename grammar, tool-name sanitising,
//! the RFC 8785 canonical-JSON args hash, and `hashQuery`.

use sha2::{Digest, Sha256};

use crate::error::{Error, ErrorKind, Result};
use crate::shared::Shared;

/// Longest sanitised tool name, in characters.
pub const MAX_TOOL_NAME: usize = 64;
/// Hex digits of the args hash that go into a filename.
pub const FILENAME_HASH_LEN: usize = 12;
/// Characters of the random part of a filename.
pub const RANDOM_LEN: usize = 4;
/// Most hex digits of the args hash in a file name the TypeScript original wrote.
pub const ORIGINAL_HASH_LEN: usize = 8;

const ALPHABET: &[u8; 36] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// Sanitises a tool name for use in a filename: every Unicode scalar value outside
/// `[A-Za-z0-9_-]` becomes one `-`, the first 64 characters are kept, and an empty
/// name becomes `tool`.
///
/// ```
/// assert_eq!(toolctx_core::sanitize_tool_name("../etc/passwd"), "---etc-passwd");
/// assert_eq!(toolctx_core::sanitize_tool_name("grép"), "gr-p");
/// assert_eq!(toolctx_core::sanitize_tool_name(""), "tool");
/// ```
pub fn sanitize_tool_name(name: &str) -> String {
    let out: String = name
        .chars()
        .take(MAX_TOOL_NAME)
        .map(|c| if c.is_ascii_alphanumeric() || c == '_' || c == '-' { c } else { '-' })
        .collect();
    if out.is_empty() {
        "tool".to_owned()
    } else {
        out
    }
}

/// The RFC 8785 canonical JSON of a value: keys sorted by UTF-16 code units at every
/// depth, no whitespace, numbers as ECMAScript prints them.
pub fn canonical_json(value: &serde_json::Value) -> Result<String> {
    serde_json_canonicalizer::to_string(value)
        .map_err(|e| Error::new(ErrorKind::NotSerializable, format!("cannot canonicalise: {e}")))
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The full 64-digit args hash: SHA-256 over the canonical JSON of `args`.
///
/// ```
/// use serde_json::json;
/// let a = toolctx_core::args_hash(&json!({"a": 1, "b": {"c": 2, "d": 3}})).unwrap();
/// let b = toolctx_core::args_hash(&json!({"b": {"d": 3, "c": 2}, "a": 1})).unwrap();
/// assert_eq!(a, b);
/// assert_eq!(a.len(), 64);
/// ```
pub fn args_hash(args: &serde_json::Value) -> Result<String> {
    Ok(sha256_hex(canonical_json(args)?.as_bytes()))
}

/// `hashQuery`: `q_` and 16 hex digits of SHA-256 over the query trimmed of
/// `White_Space`, inner runs collapsed to one space, lowercased (full case mapping).
///
/// ```
/// assert_eq!(
///     toolctx_core::hash_query("  Auth   ERROR\t"),
///     toolctx_core::hash_query("auth error"),
/// );
/// ```
pub fn hash_query(query: &str) -> String {
    let normalised = normalize_query(query);
    let digest = Sha256::digest(normalised.as_bytes());
    format!("q_{}", hex(&digest[..8]))
}

/// The text `hash_query` hashes.
pub fn normalize_query(query: &str) -> String {
    let collapsed = query.split(char::is_whitespace).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ");
    toolctx_text::to_lowercase(&collapsed)
}

/// The record filename `{tool}_{hash12}_{timestamp}_{counter}_{random}.json`.
pub fn record_filename(sanitized_tool: &str, args_hash: &str, timestamp_ms: u64, counter: u64, random: &str) -> String {
    let short = args_hash.get(..FILENAME_HASH_LEN).unwrap_or(args_hash);
    format!("{sanitized_tool}_{short}_{timestamp_ms:013}_{counter}_{random}.json")
}

/// Whether `name` is the file name of a record, as toolctx or the TypeScript original
/// writes it: one grammar for every place that recognises records (adopt, load, export,
/// import, purge, cleanup; SPEC §3), `{tool}_{hash}_{ms}_{counter}_{random}.json` with
///
/// - `tool`: `[A-Za-z0-9_-]+` (toolctx keeps 64 characters, the original all of them);
/// - `hash`: 12 lowercase hex digits (toolctx) or 1 to 8 (the original's 32-bit string
///   hash, `Math.abs(hash).toString(16)`);
/// - `ms`: 13 digits; `counter`: digits;
/// - `random`: up to 4 of `[a-z0-9]` (toolctx draws 4; the original's
///   `Math.random().toString(36).substring(2, 6)` may print fewer).
///
/// ```
/// use toolctx_core::is_record_filename;
/// assert!(is_record_filename("readFile_7d6441497d2a_1795811832434_2_80nz.json"));
/// assert!(is_record_filename("readFile_1a2b3c4d_1735012345678_0_x9k2.json"), "the original's");
/// assert!(is_record_filename("web_search_f3_1735012345679_1_i.json"), "a short hash and random part");
/// assert!(!is_record_filename("notes.json"));
/// ```
pub fn is_record_filename(name: &str) -> bool {
    let Some(stem) = name.strip_suffix(".json") else {
        return false;
    };
    // Split from the right: random, counter, timestamp, hash; the rest is the tool name.
    let mut parts = stem.rsplitn(5, '_');
    let (Some(random), Some(counter), Some(ts), Some(hash), Some(tool)) =
        (parts.next(), parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let tool_ok = !tool.is_empty() && tool.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let hash_ok = (hash.len() == FILENAME_HASH_LEN || (1..=ORIGINAL_HASH_LEN).contains(&hash.len()))
        && hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let ts_ok = ts.len() == 13 && ts.bytes().all(|b| b.is_ascii_digit());
    let counter_ok = !counter.is_empty() && counter.bytes().all(|b| b.is_ascii_digit());
    let random_ok = random.len() <= RANDOM_LEN && random.bytes().all(|b| ALPHABET.contains(&b));
    tool_ok && hash_ok && ts_ok && counter_ok && random_ok
}

/// A record's path as the pointer table keeps it. A path of the record-name form,
/// `{prefix}_{hash12}_{timestamp}_{counter}_{random}.json` (the prefix is the folder and
/// the tool name, shared by many records), whose `hash12` begins the record's args hash,
/// is kept as its other parts: 24 bytes in wasm and no text of its own (the args hash,
/// which the pointer keeps anyway, is given back to print it). Any other path (a record
/// adopted with another name, or one whose parts would not print back to it byte for
/// byte) is kept as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoredPath {
    /// `ms` as two halves (high, low), so the path aligns to 4 bytes in wasm, not 8.
    Named {
        prefix: Shared,
        random: [u8; RANDOM_LEN],
        counter: u32,
        ms: [u32; 2],
    },
    Text(Shared),
}

/// The part of a [`StoredPath`] after its prefix, printed: at most
/// `_` 12 `_` 13 `_` 10 `_` 4 `.json` = 48 bytes.
pub(crate) struct Tail {
    bytes: [u8; 48],
    len: usize,
}

impl Tail {
    pub(crate) fn as_str(&self) -> &str {
        // Only ASCII digits, letters, `_` and `.` are written.
        std::str::from_utf8(&self.bytes[..self.len]).unwrap_or_default()
    }

    fn push(&mut self, bytes: &[u8]) {
        self.bytes[self.len..self.len + bytes.len()].copy_from_slice(bytes);
        self.len += bytes.len();
    }

    fn push_number(&mut self, mut n: u64, width: usize) {
        let mut digits = [b'0'; 20];
        let mut at = digits.len();
        while n > 0 || at == digits.len() {
            at -= 1;
            digits[at] = b'0' + (n % 10) as u8;
            n /= 10;
        }
        at = at.min(digits.len() - width.min(digits.len()));
        self.push(&digits[at..]);
    }
}

/// The bytes of an args hash whose first [`FILENAME_HASH_LEN`] hex digits name records.
pub(crate) type HashBytes = [u8; 32];

impl StoredPath {
    /// `path` in its compact form when it has one (its name's hash begins `args_hash`);
    /// `intern` gives the shared copy of the prefix.
    pub(crate) fn new(path: &str, args_hash: &HashBytes, mut intern: impl FnMut(&str) -> Shared) -> Self {
        match Self::parts(path) {
            Some((prefix, hash, random, counter, ms)) if hash == args_hash[..FILENAME_HASH_LEN / 2] => {
                let ms = [(ms >> 32) as u32, ms as u32];
                let named = StoredPath::Named { prefix: intern(prefix), random, counter, ms };
                // The parts must print back to the very text (no leading zeros lost, ...).
                if named.is(path, args_hash) {
                    return named;
                }
                StoredPath::Text(path.into())
            }
            _ => StoredPath::Text(path.into()),
        }
    }

    /// The hash a record name carries, as the start of an args hash (the rest zero; all
    /// zero for a path of another form): a path kept with it prints back whatever the
    /// record's args hash is.
    pub(crate) fn name_hash(path: &str) -> HashBytes {
        let mut out = [0; 32];
        if let Some((_, hash, ..)) = Self::parts(path) {
            out[..hash.len()].copy_from_slice(&hash);
        }
        out
    }

    #[allow(clippy::type_complexity)]
    fn parts(path: &str) -> Option<(&str, [u8; 6], [u8; RANDOM_LEN], u32, u64)> {
        let stem = path.strip_suffix(".json")?;
        let mut parts = stem.rsplitn(5, '_');
        let (random, counter, ts, hex_hash, prefix) =
            (parts.next()?, parts.next()?, parts.next()?, parts.next()?, parts.next()?);
        let random: [u8; RANDOM_LEN] = random.as_bytes().try_into().ok()?;
        if !random.iter().all(|b| ALPHABET.contains(b)) || ts.len() != 13 || hex_hash.len() != FILENAME_HASH_LEN {
            return None;
        }
        let counter: u32 = counter.parse().ok()?;
        let ms: u64 = ts.parse().ok()?;
        let mut hash = [0u8; 6];
        for (byte, pair) in hash.iter_mut().zip(hex_hash.as_bytes().chunks(2)) {
            let digit = |c: u8| match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                _ => None,
            };
            *byte = digit(pair[0])? << 4 | digit(pair[1])?;
        }
        Some((prefix, hash, random, counter, ms))
    }

    /// The path as a head and a tail: the prefix and the printed parts, or the text and
    /// an empty tail. The tail holds no `/` and nothing JSON escapes. `args_hash`: the one
    /// the path was made with.
    pub(crate) fn split(&self, args_hash: &HashBytes) -> (&str, Tail) {
        let mut tail = Tail { bytes: [0; 48], len: 0 };
        match self {
            StoredPath::Named { prefix, random, counter, .. } => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                tail.push(b"_");
                for b in &args_hash[..FILENAME_HASH_LEN / 2] {
                    tail.push(&[HEX[(b >> 4) as usize], HEX[(b & 15) as usize]]);
                }
                tail.push(b"_");
                tail.push_number(self.ms().unwrap_or_default() as u64, 13);
                tail.push(b"_");
                tail.push_number(u64::from(*counter), 1);
                tail.push(b"_");
                tail.push(random);
                tail.push(b".json");
                (prefix, tail)
            }
            StoredPath::Text(text) => (text, tail),
        }
    }

    /// The milliseconds of the record-name form (the instant the record was saved).
    pub(crate) fn ms(&self) -> Option<i64> {
        match self {
            // 13 digits: far inside an `i64`.
            StoredPath::Named { ms: [high, low], .. } => Some((i64::from(*high) << 32) | i64::from(*low)),
            StoredPath::Text(_) => None,
        }
    }

    /// Whether this is `path`, byte for byte.
    pub(crate) fn is(&self, path: &str, args_hash: &HashBytes) -> bool {
        let (head, tail) = self.split(args_hash);
        path.strip_prefix(head).is_some_and(|rest| rest == tail.as_str())
    }

    /// Appends the path to `out`.
    pub(crate) fn push_to(&self, out: &mut String, args_hash: &HashBytes) {
        let (head, tail) = self.split(args_hash);
        out.push_str(head);
        out.push_str(tail.as_str());
    }

    /// The path as text.
    pub(crate) fn text(&self, args_hash: &HashBytes) -> String {
        let mut out = String::new();
        self.push_to(&mut out, args_hash);
        out
    }
}

/// `n` characters of `[a-z0-9]` drawn without bias from `next_byte`.
pub fn random_chars(n: usize, mut next_byte: impl FnMut() -> u8) -> String {
    let mut out = String::with_capacity(n);
    while out.len() < n {
        let b = next_byte();
        // 252 = 7 * 36: reject the top of the range so every character is equally likely.
        if b < 252 {
            out.push(ALPHABET[(b % 36) as usize] as char);
        }
    }
    out
}

/// A byte for [`random_chars`] from a uniform number in `[0, 1)` (`Math.random`'s range):
/// `[0, 1)` onto `0..252`, so no draw is rejected; a number outside the range is held to
/// it, and one that is not finite gives 0.
pub fn unit_byte(x: f64) -> u8 {
    let x = if x.is_finite() { x.clamp(0.0, 0.999_999_999) } else { 0.0 };
    (x * 252.0) as u8
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    push_hex(bytes, &mut out);
    out
}

/// Appends `bytes` in lowercase hex to `out` (digits gathered, then one copy: a pointer
/// list prints an args hash per pointer).
pub(crate) fn push_hex(bytes: &[u8], out: &mut String) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut buf = [0u8; 64];
    for chunk in bytes.chunks(buf.len() / 2) {
        for (i, b) in chunk.iter().enumerate() {
            buf[2 * i] = DIGITS[(b >> 4) as usize];
            buf[2 * i + 1] = DIGITS[(b & 15) as usize];
        }
        out.push_str(std::str::from_utf8(&buf[..2 * chunk.len()]).unwrap_or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hostile_names_never_make_a_path() {
        for name in ["..", "/", "a/b", "C:\\x", "a\0b", "🙂", "\u{202e}x", "名前"] {
            let s = sanitize_tool_name(name);
            assert!(s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-'), "{s}");
            assert!(!s.contains(".."));
        }
        assert_eq!(sanitize_tool_name("🙂"), "-");
        assert_eq!(sanitize_tool_name(&"x".repeat(100)).len(), 64);
        assert_eq!(sanitize_tool_name(&"é".repeat(100)), "-".repeat(64));
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_depth() {
        let v = json!({"b": {"d": 3, "c": [1.5, 1e21, "x"]}, "a": null});
        assert_eq!(canonical_json(&v).unwrap(), r#"{"a":null,"b":{"c":[1.5,1e+21,"x"],"d":3}}"#);
        assert_ne!(args_hash(&json!({"a": {"b": 1}})).unwrap(), args_hash(&json!({"a": {"b": 2}})).unwrap());
    }

    #[test]
    fn filenames_round_trip_the_grammar() {
        let name = record_filename("read_file", &"ab".repeat(32), 1_735_012_345_678, 7, "x9k2");
        assert_eq!(name, "read_file_abababababab_1735012345678_7_x9k2.json");
        assert!(is_record_filename(&name));
        // The original's names: short hashes, short random parts, long tool names.
        for original in [
            "read_file_abababababab_1735012345678_7_x9k.json",
            "readFile_1a2b3c4d_1735012345678_0_x9k2.json",
            "read_file_0_1735012345678_12_.json",
            &format!("{}_abc_1735012345678_0_zz.json", "t".repeat(100)),
        ] {
            assert!(is_record_filename(original), "{original}");
        }
        for bad in [
            "read_file_ABABABABABAB_1735012345678_7_x9k2.json",
            "read_file_abababababa_1735012345678_7_x9k2.json",
            "read_file_123456789_1735012345678_7_x9k2.json",
            "read_file_abababababab_1735012345678_7_x9k22.json",
            "read_file_abababababab_1735012345678_7_X9k2.json",
            "_abababababab_1735012345678_7_x9k2.json",
            "a_abababababab_173501234567_7_x9k2.json",
            "a_abababababab_1735012345678__x9k2.json",
            "a_abababababab_1735012345678_1_x9k2.txt",
            "notes.json",
        ] {
            assert!(!is_record_filename(bad), "{bad}");
        }
    }

    #[test]
    fn a_stored_path_prints_back_byte_for_byte() {
        let mut interned: Vec<Shared> = Vec::new();
        let mut intern = |s: &str| match interned.iter().find(|t| &***t == s) {
            Some(t) => t.clone(),
            None => {
                interned.push(s.into());
                interned[interned.len() - 1].clone()
            }
        };
        let long_tool = "x_".repeat(32);
        let named = [
            "/ctx/read_file_abababababab_1735012345678_7_x9k2.json".to_owned(),
            "/ctx/sess_1/cat egory/é\"q\n/read_file_0123456789ab_0000000000000_0_0000.json".to_owned(),
            "/ctx/-_ffffffffffff_9999999999999_4294967295_zzzz.json".to_owned(),
            format!("/ctx/{long_tool}_00000000000a_1700000000000_12_a1b2.json"),
            "t_000000000000_1700000000000_0_aaaa.json".to_owned(),
            "__000000000000_1700000000000_0_aaaa.json".to_owned(),
            "_abababababab_1735012345678_7_x9k2.json".to_owned(),
        ];
        let text = [
            // Seed-style and adopted names, and names whose parts would not print back.
            "/ctx/read_file_3f2a9c1b_1735012345678_0_k3j9x2.json",
            "/ctx/notes.json",
            "/ctx/t_abababababab_1735012345678_007_x9k2.json",
            "/ctx/t_abababababab_1735012345678_4294967296_x9k2.json",
            "/ctx/t_abababababab_1735012345678_+7_x9k2.json",
            "/ctx/t_ABABABABABAB_1735012345678_7_x9k2.json",
            "/ctx/t_abababababab_173501234567_7_x9k2.json",
            "/ctx/t_abababababab_+735012345678_7_x9k2.json",
            "/ctx/t_abababababab_1735012345678_7_X9k2.json",
            "/ctx/t_abababababab_1735012345678_7_x9k2.JSON",
            "/ctx/t_abababababab_1735012345678_7_x9k2.json.json",
            "",
        ];
        // The args hash each path was made with: its name's 12 digits, then anything.
        let hash_of = |path: &str| {
            let mut hash = [0x5a; 32];
            if let Some((_, h, ..)) = StoredPath::parts(path) {
                hash[..6].copy_from_slice(&h);
            }
            hash
        };
        for path in named.iter().map(String::as_str).chain(text) {
            let hash = hash_of(path);
            let stored = StoredPath::new(path, &hash, &mut intern);
            assert_eq!(stored.text(&hash), path);
            assert!(stored.is(path, &hash), "{path}");
            assert!(!stored.is(&format!("{path}x"), &hash) && !stored.is(&format!("/{path}"), &hash), "{path}");
            let compact = matches!(stored, StoredPath::Named { .. });
            assert_eq!(compact, named.iter().any(|n| n == path), "compact form of {path:?}");
            // A name whose hash does not begin the args hash is kept as text.
            let mut other = hash;
            other[5] ^= 1;
            let apart = StoredPath::new(path, &other, &mut intern);
            assert!(matches!(apart, StoredPath::Text(_)) && apart.text(&other) == path, "{path}");
        }
        // One prefix for every record of a folder and tool.
        let (pa, pb) =
            ("/ctx/t_abababababab_1735012345678_1_aaaa.json", "/ctx/t_cdcdcdcdcdcd_1735012345679_2_bbbb.json");
        let a = StoredPath::new(pa, &hash_of(pa), &mut intern);
        let b = StoredPath::new(pb, &hash_of(pb), &mut intern);
        match (&a, &b) {
            (StoredPath::Named { prefix: p, .. }, StoredPath::Named { prefix: q, .. }) => assert!(Shared::ptr_eq(p, q)),
            _ => panic!("not compact: {a:?} {b:?}"),
        }
        assert_ne!(a, b);
        assert!(!a.is("/ctx/t_abababababab_1735012345678_1_aaab.json", &hash_of(pa)));
        #[cfg(target_pointer_width = "32")]
        assert_eq!(std::mem::size_of::<StoredPath>(), 20);
    }

    #[test]
    fn random_chars_stay_in_the_alphabet() {
        let mut b = 0u8;
        let s = random_chars(64, || {
            b = b.wrapping_add(37);
            b
        });
        assert_eq!(s.len(), 64);
        assert!(s.bytes().all(|c| ALPHABET.contains(&c)));
    }

    #[test]
    fn query_normalisation_uses_unicode_whitespace_and_case() {
        assert_eq!(normalize_query("\u{3000}ÀB\u{2003}\u{2003}CD\n"), "àb cd");
        assert_eq!(normalize_query("İ"), "i\u{307}");
        assert!(hash_query("x").starts_with("q_") && hash_query("x").len() == 18);
    }
}
