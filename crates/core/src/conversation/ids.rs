//! Conversation, message and artifact ids: generated (`conv-…`, `msg-…`, `art-…`) or
//! given by the caller and validated, so that an id can never form a path.

use std::rc::Rc;

use crate::error::{Error, Result};

/// Longest id accepted.
pub const MAX_ID_LEN: usize = 128;
/// Random characters in a generated id.
pub const RANDOM_ID_LEN: usize = 16;

/// A source of `n` characters of `[a-z0-9]`: the platform's (the `toolctx` crate's `platform::random_chars`),
/// or a caller's (tests, the `random` option).
pub type IdRandom = Rc<dyn Fn(usize) -> Result<String>>;

/// Checks an id: 1 to 128 characters of `[A-Za-z0-9_-]`, so never `/`, `.`, `..`, a
/// NUL, a drive letter or an empty name.
///
/// ```
/// use toolctx_core::conversation::validate_id;
/// assert!(validate_id("conv-abc_1", "conversation id").is_ok());
/// for bad in ["", "..", "a/b", "a\0", "x.json", "C:"] {
///     assert!(validate_id(bad, "id").is_err());
/// }
/// ```
pub fn validate_id(id: &str, what: &str) -> Result<()> {
    let ok = !id.is_empty()
        && id.len() <= MAX_ID_LEN
        && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!("{what} must be 1-{MAX_ID_LEN} characters of [A-Za-z0-9_-], got {id:?}")))
    }
}

/// A fresh id `{prefix}-{16 random characters}`.
pub fn new_id(prefix: &str, random: &IdRandom) -> Result<String> {
    Ok(format!("{prefix}-{}", checked_random(random, RANDOM_ID_LEN)?))
}

/// `n` characters from `random`, checked to be of `[a-z0-9]`.
pub(crate) fn checked_random(random: &IdRandom, n: usize) -> Result<String> {
    let s = random(n)?;
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit()) {
        return Err(Error::invalid("the random option must give characters of [a-z0-9]"));
    }
    Ok(s)
}
