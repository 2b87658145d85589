//! Handles (SPEC §3): what the model sees of a record and passes back. `ctx:` followed by
//! lowercase base32 (RFC 4648's alphabet, `a`–`z` and `2`–`7`): [`SHORT`] characters, or
//! [`LONG`] when another record of the store has the same short one, so at most 16
//! characters in all (`ctx:k3v9q2mfx7`).
//!
//! A handle is derived from the record's file name alone (a hash of it), so every
//! process and every backend gives a record the same handle, and it never holds the
//! tool-call id or anything else the record says. Uniqueness is the store's: a manager
//! lengthens the handles of records whose short handles collide (at 50 bits, about one
//! pair in a store of 30 million records).

use toolctx_text::ResultHasher;

/// What every handle begins with.
pub const PREFIX: &str = "ctx:";
/// Base32 characters of a handle (50 bits).
pub const SHORT: usize = 10;
/// Base32 characters of a lengthened handle (60 bits): `ctx:` and these make 16.
pub const LONG: usize = 12;

const ALPHABET: &[u8; 32] = b"abcdefghijklmnopqrstuvwxyz234567";

/// The 60 bits a record's handles are made of: a hash of its file name, mixed so every
/// bit depends on every byte (MurmurHash3's 64-bit finaliser over the FxHash-style hash).
pub fn digest(filename: &str) -> u64 {
    let mut h = ResultHasher::default();
    h.update(filename.as_bytes());
    let mut x = h.finish();
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^= x >> 33;
    x >> 4
}

/// The short part of `digest` (its top 50 bits): records whose short parts are equal
/// get [`LONG`] handles.
pub fn short_key(digest: u64) -> u64 {
    digest >> 10
}

/// Appends the handle of `digest`, `len` base32 characters long ([`SHORT`] or [`LONG`]).
pub fn push_handle(out: &mut String, digest: u64, len: usize) {
    out.push_str(PREFIX);
    for i in 0..len.min(LONG) {
        let shift = 55 - 5 * i;
        out.push(ALPHABET[((digest >> shift) & 31) as usize] as char);
    }
}

/// The handle of `digest`, `len` characters of base32 long.
pub fn handle(digest: u64, len: usize) -> String {
    let mut out = String::with_capacity(PREFIX.len() + len);
    push_handle(&mut out, digest, len);
    out
}

/// The base32 part of `text` when it is a handle's form (`ctx:` and [`SHORT`] to
/// [`LONG`] base32 characters, any case), lowercased; `None` otherwise.
pub fn parse(text: &str) -> Option<String> {
    let body = text.strip_prefix(PREFIX).or_else(|| text.strip_prefix("CTX:"))?;
    let ok = (SHORT..=LONG).contains(&body.len())
        && body.bytes().all(|b| b.is_ascii_alphabetic() || (b'2'..=b'7').contains(&b));
    ok.then(|| body.to_ascii_lowercase())
}

/// Whether `body` (a parsed handle's base32 part) names `digest`: it is the first
/// characters of the digest's handle.
pub fn names(body: &str, digest: u64) -> bool {
    handle(digest, body.len()).strip_prefix(PREFIX) == Some(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_handle_is_short_lowercase_base32_and_the_same_for_the_same_name() {
        let name = "readFile_7d6441497d2a_1795811832434_2_80nz.json";
        let h = handle(digest(name), SHORT);
        assert_eq!(h.len(), 14, "{h}");
        assert!(h.starts_with("ctx:") && h[4..].bytes().all(|b| ALPHABET.contains(&b)), "{h}");
        assert_eq!(h, handle(digest(name), SHORT), "derived from the name alone");
        assert_ne!(h, handle(digest("readFile_7d6441497d2a_1795811832434_2_80ny.json"), SHORT));
        let long = handle(digest(name), LONG);
        assert_eq!(long.len(), 16);
        assert!(long.starts_with(&h), "a lengthened handle extends the short one");
        assert_eq!(parse(&h).as_deref(), Some(&h[4..]));
        assert_eq!(parse(&h.to_uppercase()).as_deref(), Some(&h[4..]));
        assert!(names(&parse(&long).unwrap(), digest(name)) && names(&parse(&h).unwrap(), digest(name)));
        for bad in ["ctx:", "ctx:abc", "ctx:abcdefghijklm", "ctx:abcdefgh1j", "toolctx://x.json", "abcdefghij"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn short_keys_spread_over_fifty_bits() {
        let keys: std::collections::HashSet<u64> = (0..100_000)
            .map(|i| short_key(digest(&format!("grep_000000000000_1795811832434_{i}_abcd.json"))))
            .collect();
        assert_eq!(keys.len(), 100_000);
        assert!(keys.iter().all(|&k| k < 1 << 50));
    }
}
