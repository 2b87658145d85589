//! Messages and `messages.jsonl`: one compact JSON object a line, append-only.
//!
//! A crash in the middle of an append leaves a torn last line (no final newline). The
//! reader skips it (and any line that does not parse) and reports it; the writer starts
//! its next line on a fresh line, so a good message is never glued onto a torn one.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, ErrorKind, Result};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
    /// Instructions.
    System,
}

impl Role {
    /// Every role, in the order stats report them.
    pub const ALL: [Role; 4] = [Role::User, Role::Assistant, Role::Tool, Role::System];

    /// `"user"`, `"assistant"`, `"tool"` or `"system"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
            Role::System => "system",
        }
    }

    /// The role named `name`.
    pub fn parse(name: &str) -> Result<Role> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == name)
            .ok_or_else(|| Error::invalid(format!("role must be user, assistant, tool or system, got {name:?}")))
    }
}

/// A tool call a message made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// The tool's name.
    pub name: String,
    /// Its arguments, as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Value>,
}

/// One message, as stored (one line of `messages.jsonl`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Message {
    /// `msg-…`, or the caller's id.
    pub id: String,
    /// Who wrote it.
    pub role: Role,
    /// The text (large data goes to artifacts and is referenced as `artifact://{id}`).
    pub content: String,
    /// ISO 8601 UTC with milliseconds.
    pub timestamp: String,
    /// Tool calls made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Whether the operation succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
}

impl Message {
    /// The message's line, newline included.
    pub fn to_line(&self) -> Result<String> {
        let mut line = serde_json::to_string(self).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))?;
        line.push('\n');
        Ok(line)
    }

    /// Checks the id, the timestamp and the tool-call names.
    pub fn validate(&self) -> Result<()> {
        super::ids::validate_id(&self.id, "message id")?;
        parse_timestamp(&self.timestamp)?;
        Ok(())
    }

    /// The order of a conversation: timestamp, then id.
    pub fn order_key(&self) -> (&str, &str) {
        (&self.timestamp, &self.id)
    }
}

/// Milliseconds since the epoch of an ISO 8601 UTC timestamp with milliseconds
/// (`YYYY-MM-DDTHH:MM:SS.sssZ`, what `Date.prototype.toISOString` prints).
pub fn parse_timestamp(s: &str) -> Result<i64> {
    let bad = || Error::invalid(format!("timestamp must look like 2025-01-31T12:00:00.000Z, got {s:?}"));
    let b = s.as_bytes();
    if b.len() != 24 || b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    if b[19] != b'.' || b[23] != b'Z' {
        return Err(bad());
    }
    let num = |from: usize, to: usize| -> Result<i64> {
        let part = &s[from..to];
        if part.bytes().all(|c| c.is_ascii_digit()) {
            part.parse().map_err(|_| bad())
        } else {
            Err(bad())
        }
    };
    let (y, mo, d) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (h, mi, sec, ms) = (num(11, 13)?, num(14, 16)?, num(17, 19)?, num(20, 23)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 59 {
        return Err(bad());
    }
    let days = days_from_civil(y, mo, d);
    let out = days * 86_400_000 + h * 3_600_000 + mi * 60_000 + sec * 1000 + ms;
    if crate::record::iso_timestamp(out) != s {
        return Err(bad()); // 31 February and the like
    }
    Ok(out)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// What reading `messages.jsonl` found.
#[derive(Debug, Default)]
pub struct Parsed {
    /// The messages of the lines that parsed, in file order.
    pub messages: Vec<Message>,
    /// Descriptions of the lines skipped (torn or corrupt).
    pub skipped: Vec<String>,
    /// Whether the file ends with a newline (or is empty): the next append may go
    /// straight on; otherwise it must start a fresh line.
    pub clean_tail: bool,
}

/// Parses `messages.jsonl`. Never fails: what does not parse is skipped and described.
pub fn parse_jsonl(bytes: &[u8]) -> Parsed {
    let mut out = Parsed { clean_tail: bytes.is_empty() || bytes.ends_with(b"\n"), ..Parsed::default() };
    let mut lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let torn = if out.clean_tail { None } else { lines.pop() };
    for (i, line) in lines.iter().enumerate() {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match super::from_json::<Message>(line).map_err(|e| e.to_string()).and_then(|m| {
            m.validate().map_err(|e| e.to_string())?;
            Ok(m)
        }) {
            Ok(m) => out.messages.push(m),
            Err(e) => out.skipped.push(format!("line {} does not parse as a message ({e}); skipped", i + 1)),
        }
    }
    if let Some(torn) = torn {
        out.skipped.push(format!(
            "the last line ({} bytes, no newline) is torn, as a crash mid-append leaves it; skipped",
            torn.len()
        ));
    }
    out
}

/// The lines of `messages`, for a whole-file write.
pub fn encode_jsonl(messages: &[Message]) -> Result<String> {
    let mut out = String::new();
    for m in messages {
        out.push_str(&m.to_line()?);
    }
    Ok(out)
}

/// The union of two message lists by id, minus the `dropped` ids, ordered by timestamp
/// then id. Where both sides hold an id with different contents, the later timestamp
/// wins, and on a tie the larger JSON (so both sides pick the same one).
pub fn merge(a: &[Message], b: &[Message], dropped: &std::collections::BTreeSet<String>) -> Vec<Message> {
    // By id (the sort is stable: a side's order, `a` first, holds within an id), then the
    // winner of each id's run, taken in that order. No map: the crate's one sort.
    let mut all: Vec<&Message> = a.iter().chain(b).filter(|m| !dropped.contains(&m.id)).collect();
    crate::sort::sort_by(&mut all, |x, y| x.id.cmp(&y.id));
    let mut out: Vec<Message> = Vec::new();
    let mut run = all.iter().peekable();
    while let Some(&first) = run.next() {
        let mut best = first;
        while let Some(&&m) = run.peek().filter(|m| m.id == first.id) {
            run.next();
            if wins(m, best) {
                best = m;
            }
        }
        out.push(best.clone());
    }
    crate::sort::sort_by(&mut out, |x, y| x.order_key().cmp(&y.order_key()));
    out
}

fn wins(new: &Message, old: &Message) -> bool {
    if new == old {
        return false;
    }
    match new.timestamp.cmp(&old.timestamp) {
        std::cmp::Ordering::Equal => {
            serde_json::to_string(new).unwrap_or_default() > serde_json::to_string(old).unwrap_or_default()
        }
        other => other.is_gt(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn msg(id: &str, ts: &str) -> Message {
        Message {
            id: id.into(),
            role: Role::User,
            content: id.into(),
            timestamp: ts.into(),
            tool_calls: None,
            success: None,
        }
    }

    #[test]
    fn timestamps_round_trip_and_reject_the_rest() {
        assert_eq!(parse_timestamp("1970-01-01T00:00:01.500Z").unwrap(), 1500);
        assert_eq!(parse_timestamp("2024-12-24T03:52:25.678Z").unwrap(), 1_735_012_345_678);
        for bad in ["2024-02-30T00:00:00.000Z", "2024-12-24T03:52:25Z", "2024-12-24 03:52:25.678Z", "x"] {
            assert!(parse_timestamp(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn torn_and_corrupt_lines_are_skipped_not_fatal() {
        let a = msg("a", "2025-01-01T00:00:00.000Z").to_line().unwrap();
        let b = msg("b", "2025-01-01T00:00:01.000Z").to_line().unwrap();
        let text = format!("{a}{{not json\n{b}{{\"id\":\"c\",\"ro");
        let parsed = parse_jsonl(text.as_bytes());
        assert_eq!(parsed.messages.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(parsed.skipped.len(), 2);
        assert!(!parsed.clean_tail);
        assert!(parse_jsonl(a.as_bytes()).clean_tail);
    }

    #[test]
    fn merge_is_a_union_by_id_in_timestamp_then_id_order() {
        let x = [msg("b", "2025-01-01T00:00:00.000Z"), msg("c", "2025-01-01T00:00:02.000Z")];
        let y = [msg("a", "2025-01-01T00:00:00.000Z"), msg("c", "2025-01-01T00:00:02.000Z")];
        let dropped = std::collections::BTreeSet::new();
        let merged = merge(&x, &y, &dropped);
        assert_eq!(merged.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["a", "b", "c"]);
        assert_eq!(merge(&y, &x, &dropped), merged, "both sides agree");
        let dropped = ["b".to_owned()].into_iter().collect();
        assert_eq!(merge(&x, &y, &dropped).len(), 2);
    }

    /// The merge as it was written first, over a map by id: the reference.
    fn merge_by_map(a: &[Message], b: &[Message], dropped: &std::collections::BTreeSet<String>) -> Vec<Message> {
        let mut by_id: std::collections::BTreeMap<&str, &Message> = std::collections::BTreeMap::new();
        for m in a.iter().chain(b) {
            if dropped.contains(&m.id) {
                continue;
            }
            match by_id.get(m.id.as_str()) {
                Some(old) if !wins(m, old) => {}
                _ => {
                    by_id.insert(&m.id, m);
                }
            }
        }
        let mut out: Vec<Message> = by_id.into_values().cloned().collect();
        out.sort_by(|x, y| x.order_key().cmp(&y.order_key()));
        out
    }

    #[test]
    fn merge_picks_the_same_winners_as_a_map_by_id() {
        // Few ids, timestamps and contents, so ids repeat within and across the sides with
        // equal and different timestamps and contents.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        for _ in 0..2000 {
            let mut side = |len: u64| -> Vec<Message> {
                (0..next(len))
                    .map(|_| {
                        let mut m = msg(&format!("m{}", next(5)), &format!("2025-01-01T00:00:0{}.000Z", next(3)));
                        m.content = "x".repeat(next(3) as usize);
                        m
                    })
                    .collect()
            };
            let (a, b) = (side(7), side(7));
            let dropped = (0..next(2)).map(|_| format!("m{}", next(5))).collect();
            assert_eq!(merge(&a, &b, &dropped), merge_by_map(&a, &b, &dropped), "{a:?} {b:?} {dropped:?}");
        }
    }
}
