//! The line matcher of `grep_context`: a pattern a model wrote, matched against lines in
//! time linear in their length, whatever the pattern.
//!
//! A backtracking engine (JavaScript's `RegExp`) takes exponential time on patterns such
//! as `(a+)+$`, and a model's pattern is untrusted input. [`LinePattern`] compiles with
//! `regex-lite` (the `regex` crate's small sibling: a Pike VM, no look-around and no
//! back-references, so every match is O(pattern × text)), with limits on the compiled
//! program's size and nesting, and answers which lines of a text match.
//!
//! ```
//! use toolctx_core::grep::LinePattern;
//! let p = LinePattern::new("(a+)+$")?;
//! let line = format!("{}!", "a".repeat(10_000));
//! assert_eq!(p.matching_lines(&format!("{line}\naaa\nb")), vec![1]);
//! assert!(LinePattern::new("(?i)error").unwrap().is_match("An ERROR here"));
//! assert!(LinePattern::new("a(?=b)").is_err(), "look-ahead is not linear-time");
//! # Ok::<(), toolctx_core::Error>(())
//! ```

use regex_lite::{Regex, RegexBuilder};

use crate::error::{Error, Result};

/// The largest compiled program a pattern may make (bytes of regex-lite's program). The
/// default (10 MiB) lets `x{1000}{1000}` compile to a program whose every match step is
/// slow; 512 KiB holds any pattern a person writes for grep, and a 500-character one.
pub const SIZE_LIMIT: usize = 512 * 1024;

/// How deeply groups and repetitions may nest.
pub const NEST_LIMIT: u32 = 64;

/// A compiled line pattern.
#[derive(Debug, Clone)]
pub struct LinePattern {
    regex: Regex,
}

impl LinePattern {
    /// Compiles `pattern`. A pattern that does not compile is an `INVALID_ARGUMENT` error
    /// whose message says why, and what to write instead where the feature is one
    /// JavaScript has and a linear-time matcher does not.
    pub fn new(pattern: &str) -> Result<LinePattern> {
        let built = RegexBuilder::new(pattern).size_limit(SIZE_LIMIT).nest_limit(NEST_LIMIT).build();
        match built {
            Ok(regex) => Ok(LinePattern { regex }),
            Err(e) => Err(Error::invalid(explain(pattern, &e.to_string()))),
        }
    }

    /// Whether `line` holds a match.
    pub fn is_match(&self, line: &str) -> bool {
        self.regex.is_match(line)
    }

    /// The 0-based numbers of the lines of `text` (separated by `\n`) that hold a match.
    pub fn matching_lines(&self, text: &str) -> Vec<u32> {
        text.split('\n').zip(0u32..).filter(|(line, _)| self.regex.is_match(line)).map(|(_, i)| i).collect()
    }
}

/// Why `pattern` does not compile, in words a model can act on.
fn explain(pattern: &str, error: &str) -> String {
    let unsupported = if ["(?=", "(?!", "(?<=", "(?<!"].iter().any(|s| pattern.contains(s)) {
        Some("look-around ((?=, (?!, (?<=, (?<!) is not supported: match the text itself")
    } else if has_back_reference(pattern) {
        Some("back-references (\\1) are not supported: write the repeated text out")
    } else if error.contains("size limit") {
        Some("the pattern compiles too large: use fewer or smaller counted repetitions ({n})")
    } else if error.contains("nest") {
        Some("groups and repetitions nest too deeply")
    } else {
        None
    };
    let first = error.lines().last().unwrap_or(error).trim();
    match unsupported {
        Some(why) => format!("{why} (grep_context matches in linear time)"),
        None => format!("not a regular expression grep_context reads: {first}"),
    }
}

/// Whether `pattern` has `\1`..`\9` outside a character class (a back-reference in
/// JavaScript; regex-lite rejects it as an octal escape).
fn has_back_reference(pattern: &str) -> bool {
    let bytes = pattern.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'\\' {
            if bytes[i + 1].is_ascii_digit() && bytes[i + 1] != b'0' {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catastrophic_patterns_match_in_linear_time() {
        // (a+)+$ on a…a! takes a backtracking engine ~4x longer every 2 characters; a
        // 100,000-character line would never end there.
        let line = format!("{}!", "a".repeat(100_000));
        for pattern in ["(a+)+$", "(a|aa)+$", "(a*)*b", "^(([a-z])+.)+[A-Z]([a-z])+$"] {
            let p = LinePattern::new(pattern).unwrap();
            assert!(!p.is_match(&line), "{pattern}");
        }
    }

    #[test]
    fn lines_are_numbered_from_zero() {
        let p = LinePattern::new(r"\berror\b").unwrap();
        assert_eq!(p.matching_lines("ok\nan error\n\nerrors\nerror"), vec![1, 4]);
        assert_eq!(p.matching_lines(""), Vec::<u32>::new());
    }

    #[test]
    fn what_javascript_has_and_a_linear_matcher_does_not_is_explained() {
        let message = |p: &str| LinePattern::new(p).unwrap_err().to_string();
        assert!(message("foo(?=bar)").contains("look-around"));
        assert!(message("foo(?<!bar)").contains("look-around"));
        assert!(message(r"(a)\1").contains("back-references"));
        assert!(message("(a").contains("not a regular expression"));
        assert!(message("a{1000}{1000}").contains("too large"));
        assert!(message(&"(".repeat(200)).contains("nest"));
        assert_eq!(LinePattern::new("(a").unwrap_err().kind(), crate::ErrorKind::InvalidArgument);
    }

    #[test]
    fn a_character_class_escape_is_no_back_reference() {
        assert!(!has_back_reference(r"[\d]\\1"));
        assert!(has_back_reference(r"x\2"));
    }
}
