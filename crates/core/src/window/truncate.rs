//! The truncation range (the seed's `TruncationCalculator`): which messages to drop
//! from the middle of a conversation.
//!
//! The first user–assistant pair always stays, and so does a last user message. The
//! range is sized as the seed does (`none`: everything between; `lastTwo`: all but the
//! last pair; `half` / `quarter`: half / three quarters of the rest, an even number),
//! then shrunk until it is a clean cut:
//! - the messages around it still alternate (the message after the range has the other
//!   role than the one before it);
//! - no `tool_result` kept after the range answers a `tool_use` inside it, and no
//!   `tool_use` kept before it is answered inside it. When the first assistant message
//!   calls tools, or in an agent loop where every assistant → user cut would separate a
//!   call from its result, the range starts one message later (the user message after
//!   the first pair stays too) and ends with a user message.

use std::collections::HashMap;

use serde_json::Value;

use super::message;
use super::Strategy;

/// For each cut position `i` (between messages `i - 1` and `i`), whether a tool call
/// before it is answered at or after it.
fn dirty_cuts(messages: &[Value]) -> Vec<bool> {
    let mut called_at: HashMap<&str, usize> = HashMap::new();
    for (i, m) in messages.iter().enumerate() {
        for id in message::tool_use_ids(m) {
            called_at.entry(id).or_insert(i);
        }
    }
    // +1 over (call, answer]: a difference array, then a running sum.
    let mut diff = vec![0i64; messages.len() + 2];
    for (r, m) in messages.iter().enumerate() {
        for id in message::tool_result_ids(m) {
            if let Some(&u) = called_at.get(id) {
                if u < r {
                    diff[u + 1] += 1;
                    diff[r + 1] -= 1;
                }
            }
        }
    }
    let mut running = 0;
    (0..=messages.len())
        .map(|i| {
            running += diff[i];
            running > 0
        })
        .collect()
}

/// The inclusive range `[start, end]` of messages to remove with `strategy`, given the
/// range already removed (`deleted`, which the new one extends); `None` when nothing
/// (more) can be removed.
pub fn truncation_range(
    messages: &[Value],
    strategy: Strategy,
    deleted: Option<(usize, usize)>,
) -> Option<(usize, usize)> {
    let n = messages.len();
    if n < 4 {
        return None;
    }
    let dirty = dirty_cuts(messages);
    // The range starts after the first pair (2) or, when that cut is not clean or leaves
    // no clean end, one message later (3); a range that extends an earlier one keeps its
    // start.
    let starts: Vec<usize> = match deleted {
        Some((start, _)) => vec![start],
        None => match (2..n).find(|&s| !dirty[s]) {
            Some(2) => vec![2, 3],
            Some(s) => vec![s],
            None => vec![],
        },
    };
    starts
        .into_iter()
        .filter(|&s| s >= 2 && s < n && !dirty[s])
        .find_map(|s| range_from(messages, &dirty, s, strategy, deleted))
}

fn range_from(
    messages: &[Value],
    dirty: &[bool],
    start: usize,
    strategy: Strategy,
    deleted: Option<(usize, usize)>,
) -> Option<(usize, usize)> {
    let n = messages.len();
    let rest_from = match deleted {
        Some((_, end)) => (end + 1).max(start),
        None => start,
    };
    let rest = n.saturating_sub(rest_from);
    let remove = match strategy {
        Strategy::None => rest,
        Strategy::LastTwo => rest.saturating_sub(2),
        Strategy::Half => rest / 4 * 2,
        Strategy::Quarter => rest * 3 / 4 / 2 * 2,
    };
    if remove == 0 {
        return None;
    }
    let before = message::role(&messages[start - 1]);
    // A last user message (the one about to be answered) stays; shrink until the cut
    // after the range is clean.
    let last = if message::is_user(&messages[n - 1]) { n - 2 } else { n - 1 };
    let mut end = (rest_from + remove - 1).min(last);
    loop {
        if end < rest_from {
            return None;
        }
        if message::role(&messages[end]) == before && !dirty[end + 1] {
            return Some((start, end));
        }
        end -= 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chat(n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| json!({"role": if i % 2 == 0 { "user" } else { "assistant" }, "content": format!("m{i}")}))
            .collect()
    }

    #[test]
    fn the_seed_sizes_on_a_plain_chat() {
        let m = chat(12); // rest = 10 after the first pair
        assert_eq!(truncation_range(&m, Strategy::None, None), Some((2, 11))); // it ends with an answer
        assert_eq!(truncation_range(&m, Strategy::LastTwo, None), Some((2, 9)));
        assert_eq!(truncation_range(&m, Strategy::Half, None), Some((2, 5))); // 10/4*2 = 4
        assert_eq!(truncation_range(&m, Strategy::Quarter, None), Some((2, 7)));
        // 10*3/4/2*2 = 6
    }

    #[test]
    fn a_previous_range_is_extended() {
        let m = chat(22);
        assert_eq!(truncation_range(&m, Strategy::Half, Some((2, 5))), Some((2, 13)));
        // rest 16 -> 8 more
    }

    #[test]
    fn too_short_conversations_are_left_alone() {
        assert_eq!(truncation_range(&chat(3), Strategy::None, None), None);
        assert_eq!(truncation_range(&chat(5), Strategy::Half, None), None);
    }
}
