//! The context-window optimiser over realistic conversations: an agent loop with
//! structured tool calls (Claude Code / Anthropic API style) and the seed's Cline text
//! forms.

use futures_executor::block_on;
use serde_json::{json, Value};
use toolctx::window::{
    self, apply_history, find_file_reads, history_path, message, optimize, should_compact, truncation_range, Edit,
    EditKind, History, OccurrenceKind, OptimizeOptions, Strategy, Tools, Usage, DUPLICATE_NOTICE, TRUNCATION_NOTICE,
};
use toolctx::{ErrorKind, MemoryStorage, Storage, WriteOptions};

fn file(path: &str, version: usize) -> String {
    (0..80).map(|i| format!("// {path} v{version} line {i}: export function f{i}() {{ return {i}; }}\n")).collect()
}

fn user(text: &str) -> Value {
    json!({"role": "user", "content": text})
}

fn assistant(text: &str) -> Value {
    json!({"role": "assistant", "content": [{"type": "text", "text": text}]})
}

fn call(id: &str, name: &str, input: Value) -> Value {
    json!({"role": "assistant", "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": id, "name": name, "input": input}]})
}

fn result(id: &str, content: &str) -> Value {
    json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": content}]})
}

/// Task, first answer, then `reads` read calls cycling over `files` (each answered).
fn agent_loop(files: &[&str], reads: usize) -> Vec<Value> {
    let mut m =
        vec![user("Refactor the auth module"), assistant("I will start by reading the files."), user("Go ahead.")];
    for i in 0..reads {
        let path = files[i % files.len()];
        let id = format!("toolu_{i}");
        m.push(call(&id, "read_file", json!({"path": path})));
        m.push(result(&id, &file(path, i)));
    }
    m.push(assistant("Done reading."));
    m.push(user("Now summarise."));
    m
}

fn opts() -> OptimizeOptions {
    OptimizeOptions { now: 1_000, ..OptimizeOptions::default() }
}

fn tool_result_text(m: &Value) -> &str {
    m["content"][0]["content"].as_str().unwrap()
}

#[test]
fn structured_reads_keep_only_the_latest_copy_of_each_file() {
    let messages = agent_loop(&["src/auth.ts", "src/auth.ts", "src/db.ts"], 6);
    let original = messages.clone();
    let out = optimize(&messages, &opts(), &mut History::default()).unwrap();
    assert_eq!(messages, original, "the input is not modified");
    // auth.ts: reads 0,1,3,4 (results at messages 4,6,10,12); db.ts: reads 2,5 (8,14).
    for i in [4, 6, 10, 8] {
        assert_eq!(tool_result_text(&out.messages[i]), DUPLICATE_NOTICE, "message {i}");
    }
    assert_eq!(tool_result_text(&out.messages[12]), file("src/auth.ts", 4));
    assert_eq!(tool_result_text(&out.messages[14]), file("src/db.ts", 5));
    assert_eq!(out.edits.len(), 4);
    assert!(out.edits.iter().all(|e| e.kind == EditKind::ReadFile && e.ts == 1_000 && e.block == 0));
    assert_eq!(out.truncated, None, "two thirds saved, more than 30%");
    assert_eq!(out.messages.len(), messages.len());
    // tool_use_id and the rest of the block are kept
    assert_eq!(out.messages[4]["content"][0]["tool_use_id"], "toolu_0");
}

#[test]
fn duplicates_are_reported_with_their_kinds() {
    let messages = agent_loop(&["a.ts", "b.ts"], 5);
    let reads = find_file_reads(&messages, &Tools::default(), |_| true, true);
    assert_eq!(reads.len(), 2);
    assert_eq!(reads[0].path, "a.ts");
    let places: Vec<(usize, usize)> = reads[0].occurrences.iter().map(|o| (o.message, o.block)).collect();
    assert_eq!(places, [(4, 0), (8, 0), (12, 0)]);
    assert!(reads[0].occurrences.iter().all(|o| o.kind == OccurrenceKind::ToolResult));
    let all = find_file_reads(&agent_loop(&["a.ts", "b.ts"], 3), &Tools::default(), |_| true, true);
    assert_eq!(all.len(), 1, "b.ts read once is no duplicate");
}

#[test]
fn cline_text_forms_are_recognised() {
    let a1 = file("src/a.ts", 1);
    let a2 = file("src/a.ts", 2);
    let b1 = file("src/b.ts", 1);
    let messages = vec![
        user("<task>Fix a.ts</task>"),
        assistant("<read_file><path>src/a.ts</path></read_file>"),
        // header, then the content in the next block
        json!({"role": "user", "content": [
            {"type": "text", "text": "[read_file for 'src/a.ts'] Result:"},
            {"type": "text", "text": a1},
            {"type": "text", "text": "<environment_details>cwd</environment_details>"}]}),
        assistant("<replace_in_file>...</replace_in_file>"),
        // a write/replace result carrying the final content
        json!({"role": "user", "content": [
            {"type": "text", "text": "[replace_in_file for 'src/a.ts'] Result:"},
            {"type": "text", "text": format!("The content was saved.\n\n<final_file_content path=\"src/a.ts\">\n{a2}</final_file_content>\n\nIMPORTANT: ...")}]}),
        assistant("Let me check b."),
        // two mentions in one block; b.ts only once
        user(&format!("Look at <file_content path=\"src/a.ts\">\n{a2}</file_content> and <file_content path=\"src/b.ts\">\n{b1}</file_content>")),
        assistant("Reading again."),
        // header and content in one block: the latest copy of a.ts
        json!({"role": "user", "content": [{"type": "text", "text": format!("[read_file for 'src/a.ts'] Result:\n{a2}")}]}),
    ];
    let reads = find_file_reads(&messages, &Tools::default(), |_| true, true);
    assert_eq!(reads.len(), 1);
    let kinds: Vec<(usize, usize, OccurrenceKind)> =
        reads[0].occurrences.iter().map(|o| (o.message, o.block, o.kind)).collect();
    assert_eq!(
        kinds,
        [
            (2, 1, OccurrenceKind::ReadFileText),
            (4, 1, OccurrenceKind::FinalFileContent),
            (6, 0, OccurrenceKind::FileMention),
            (8, 0, OccurrenceKind::ReadFileText),
        ]
    );
    let out = optimize(&messages, &opts(), &mut History::default()).unwrap();
    assert_eq!(out.messages[2]["content"][1]["text"], DUPLICATE_NOTICE);
    assert_eq!(out.messages[2]["content"][0]["text"], "[read_file for 'src/a.ts'] Result:");
    let final_text = out.messages[4]["content"][1]["text"].as_str().unwrap();
    assert!(
        final_text.contains(&format!("<final_file_content path=\"src/a.ts\">{DUPLICATE_NOTICE}</final_file_content>"))
    );
    assert!(final_text.starts_with("The content was saved.") && final_text.ends_with("IMPORTANT: ..."));
    let mention = out.messages[6]["content"].as_str().unwrap();
    assert!(
        mention.starts_with(&format!("Look at <file_content path=\"src/a.ts\">{DUPLICATE_NOTICE}</file_content> and "))
    );
    assert!(mention.contains(&b1), "the only copy of b.ts stays");
    assert_eq!(out.messages[8]["content"][0]["text"], format!("[read_file for 'src/a.ts'] Result:\n{a2}"));
    let kinds: Vec<EditKind> = out.edits.iter().map(|e| e.kind).collect();
    assert_eq!(kinds, [EditKind::ReadFile, EditKind::WriteFile, EditKind::FileMention]);
}

#[test]
fn a_write_tool_input_is_a_copy_and_partial_or_failed_reads_are_not() {
    let v1 = file("main.py", 1);
    let messages = vec![
        user("Write main.py"),
        assistant("OK."),
        user("Go on"),
        call("w1", "Write", json!({"file_path": "main.py", "content": v1})),
        result("w1", "File created successfully at: main.py"),
        call("r1", "Read", json!({"file_path": "main.py", "offset": 10, "limit": 5})),
        result("r1", "partial"),
        call("r2", "Read", json!({"file_path": "main.py"})),
        json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "r2", "content": "EACCES", "is_error": true}]}),
        call("r3", "Read", json!({"file_path": "main.py"})),
        result("r3", &v1),
    ];
    let reads = find_file_reads(&messages, &Tools::default(), |_| true, false);
    assert_eq!(reads.len(), 1);
    let kinds: Vec<OccurrenceKind> = reads[0].occurrences.iter().map(|o| o.kind).collect();
    assert_eq!(kinds, [OccurrenceKind::ToolInput, OccurrenceKind::ToolResult]);
    let out = optimize(&messages, &opts(), &mut History::default()).unwrap();
    assert_eq!(out.messages[3]["content"][1]["input"]["content"], DUPLICATE_NOTICE);
    assert_eq!(out.messages[3]["content"][1]["input"]["file_path"], "main.py");
    assert_eq!(tool_result_text(&out.messages[6]), "partial");
    assert_eq!(tool_result_text(&out.messages[10]), v1);
}

#[test]
fn custom_tool_names_replace_the_defaults() {
    let messages = vec![
        user("t"),
        assistant("a"),
        user("go"),
        call("1", "fs.cat", json!({"path": "x"})),
        result("1", &file("x", 1)),
        call("2", "fs.cat", json!({"path": "x"})),
        result("2", &file("x", 2)),
    ];
    assert!(find_file_reads(&messages, &Tools::default(), |_| true, true).is_empty());
    let tools = Tools { read: vec!["fs.cat".into()], write: vec![] };
    assert_eq!(find_file_reads(&messages, &tools, |_| true, true).len(), 1);
}

#[test]
fn the_first_pair_is_never_edited() {
    let a = file("a.ts", 1);
    let messages = vec![
        user(&format!("Task: <file_content path=\"a.ts\">{a}</file_content>")),
        assistant("ok"),
        user(&format!("again <file_content path=\"a.ts\">{a}</file_content>")),
        assistant("ok"),
        user(&format!("and again <file_content path=\"a.ts\">{a}</file_content>")),
    ];
    let out = optimize(&messages, &opts(), &mut History::default()).unwrap();
    assert_eq!(out.messages[0], messages[0]);
    assert_eq!(out.edits.len(), 1);
    assert_eq!(out.edits[0].message, 2);
}

/// Checks the API's rules on a message list: roles alternate, every tool_result answers
/// a tool_use of the message just before, every tool_use is answered in the next one.
fn assert_well_formed(messages: &[Value]) {
    for (i, pair) in messages.windows(2).enumerate() {
        assert_ne!(message::role(&pair[0]), message::role(&pair[1]), "roles alternate at {i}");
    }
    for (i, m) in messages.iter().enumerate() {
        for id in message::tool_result_ids(m) {
            assert!(
                i > 0 && message::tool_use_ids(&messages[i - 1]).any(|u| u == id),
                "orphan tool_result {id} at {i}"
            );
        }
        if i + 1 < messages.len() {
            for id in message::tool_use_ids(m) {
                assert!(message::tool_result_ids(&messages[i + 1]).any(|r| r == id), "unanswered tool_use {id} at {i}");
            }
        }
    }
}

#[test]
fn truncation_never_orphans_a_tool_result_nor_breaks_alternation() {
    for reads in 1..30 {
        // first assistant message calls a tool, so its result stays with the first pair
        let mut messages = vec![user("task"), call("first", "grep", json!({"q": "x"})), result("first", "hits")];
        for i in 0..reads {
            let id = format!("t{i}");
            messages.push(call(&id, "read_file", json!({"path": format!("f{}", i % 3)})));
            messages.push(result(&id, &file("f", i)));
        }
        messages.push(assistant("summary"));
        messages.push(user("next question"));
        for strategy in [Strategy::None, Strategy::LastTwo, Strategy::Half, Strategy::Quarter] {
            let Some((start, end)) = truncation_range(&messages, strategy, None) else { continue };
            assert_eq!(start, 3, "the first tool result stays with the first pair");
            assert!(end < messages.len() - 1, "the last message stays");
            let o = OptimizeOptions { min_savings: 2.0, strategy, now: 5, ..OptimizeOptions::default() };
            let out = optimize(&messages, &o, &mut History::default()).unwrap();
            assert_eq!(out.truncated, Some((start, end)));
            assert_eq!(out.messages.len(), messages.len() - (end - start + 1));
            assert_well_formed(&out.messages);
            assert_eq!(out.messages.last(), messages.last());
            // the notice is a text block appended to the message before the range
            let before = &out.messages[start - 1]["content"];
            assert_eq!(before.as_array().unwrap().last().unwrap()["text"], TRUNCATION_NOTICE);
        }
    }
}

#[test]
fn strategies_size_the_range_as_the_seed_does() {
    let messages: Vec<Value> =
        (0..42).map(|i| if i % 2 == 0 { user(&format!("q{i}")) } else { assistant("a") }).collect();
    // rest = 40 after the first pair
    assert_eq!(truncation_range(&messages, Strategy::None, None), Some((2, 41)), "it ends with an answer");
    assert_eq!(truncation_range(&messages, Strategy::LastTwo, None), Some((2, 39)));
    assert_eq!(truncation_range(&messages, Strategy::Half, None), Some((2, 21)));
    assert_eq!(truncation_range(&messages, Strategy::Quarter, None), Some((2, 31)));
    // the quarter strategy keeps the later half of what half keeps
    let out = optimize(
        &messages,
        &OptimizeOptions { min_savings: 0.5, strategy: Strategy::Quarter, ..opts() },
        &mut History::default(),
    )
    .unwrap();
    assert_eq!(out.messages.len(), 12);
    assert_eq!(out.messages[2], messages[32]);
    // string content of the message before the range becomes [text, notice]
    assert_eq!(out.messages[1]["content"][1]["text"], TRUNCATION_NOTICE);
    assert_eq!(out.messages[1]["content"][0]["text"], "a");
}

#[test]
fn min_savings_decides_between_stopping_and_truncating() {
    let messages = agent_loop(&["a.ts"], 10);
    let out = optimize(&messages, &opts(), &mut History::default()).unwrap();
    assert!(out.metrics.duplicate_savings > 0.8);
    assert_eq!(out.truncated, None);
    let strict = OptimizeOptions { min_savings: 0.95, ..opts() };
    let out = optimize(&messages, &strict, &mut History::default()).unwrap();
    assert!(out.truncated.is_some());
    assert_eq!(out.edits.last().unwrap().kind, EditKind::TruncationNotice);
    let never = OptimizeOptions { min_savings: 0.0, ..opts() };
    let plain: Vec<Value> = (0..20).map(|i| if i % 2 == 0 { user("q") } else { assistant("a") }).collect();
    let out = optimize(&plain, &never, &mut History::default()).unwrap();
    assert_eq!((out.truncated, out.messages.len()), (None, 20));
}

#[test]
fn metrics_add_up() {
    let messages = agent_loop(&["a.ts", "b.ts"], 8);
    let out = optimize(&messages, &opts(), &mut History::default()).unwrap();
    let m = out.metrics;
    assert_eq!(m.chars_before, message::total_size(&messages).chars);
    assert_eq!(m.chars_after, message::total_size(&out.messages).chars);
    assert_eq!(m.tokens_before, window::estimate_message_tokens(&messages));
    assert_eq!(m.tokens_after, window::estimate_message_tokens(&out.messages));
    assert!(m.tokens_after < m.tokens_before);
    assert_eq!(m.duplicates_replaced, 6);
    let saved = (m.chars_before - m.chars_after) as f64 / m.chars_before as f64;
    assert!((saved - m.duplicate_savings).abs() < 1e-9, "nothing else changed: {saved} vs {}", m.duplicate_savings);
    // UTF-16 code units, as JavaScript counts them
    assert_eq!(message::total_size(&[user("é😀")]).chars, 3);
}

#[test]
fn history_is_persisted_and_rolled_back_to_a_checkpoint() {
    block_on(async {
        let storage = MemoryStorage::new();
        let path = history_path("/ctx/", "conv-1").unwrap();
        assert_eq!(path, "/ctx/window/conv-1.json");
        let mut messages = agent_loop(&["a.ts", "b.ts"], 4);
        let mut history = toolctx::window_history::load(&storage, &path).await.unwrap();
        assert_eq!(history, History::default());
        let first = optimize(&messages, &OptimizeOptions { now: 100, ..opts() }, &mut history).unwrap();
        assert_eq!(first.edits.len(), 2);
        toolctx::window_history::save(&storage, &path, &history).await.unwrap();

        // the conversation goes on: b.ts and a.ts read again
        for (i, p) in ["b.ts", "a.ts"].iter().enumerate() {
            let id = format!("late{i}");
            messages.push(call(&id, "read_file", json!({"path": p})));
            messages.push(result(&id, &file(p, 10 + i)));
        }
        let mut reopened = toolctx::window_history::load(&storage, &path).await.unwrap();
        assert_eq!(reopened, history);
        let second = optimize(&messages, &OptimizeOptions { now: 200, ..opts() }, &mut reopened).unwrap();
        assert_eq!(second.edits.len(), 2, "only the new duplicates: {:?}", second.edits);
        assert_eq!(reopened.edits.len(), 4);
        toolctx::window_history::save(&storage, &path, &reopened).await.unwrap();
        assert_eq!(apply_history(&messages, &reopened).unwrap(), second.messages);

        let mut restored = toolctx::window_history::load(&storage, &path).await.unwrap();
        assert_eq!(restored.restore_checkpoint(150), 2);
        assert!(restored.edits.iter().all(|e| e.ts <= 150));
        let rolled = apply_history(&messages, &restored).unwrap();
        assert_eq!(tool_result_text(&rolled[4]), DUPLICATE_NOTICE);
        assert_eq!(tool_result_text(&rolled[10]), file("b.ts", 3), "the edit made at 200 is gone");
    });
}

#[test]
fn truncations_are_in_the_history_and_extended() {
    let messages: Vec<Value> =
        (0..42).map(|i| if i % 2 == 0 { user(&format!("q{i}")) } else { assistant("a") }).collect();
    let mut history = History::default();
    let o = |now| OptimizeOptions { now, min_savings: 0.5, ..opts() };
    let first = optimize(&messages, &o(10), &mut history).unwrap();
    assert_eq!(first.truncated, Some((2, 21)));
    let second = optimize(&messages, &o(20), &mut history).unwrap();
    assert_eq!(second.truncated, Some((2, 31)), "half of what was left");
    assert_eq!(second.messages.len(), 42 - 30);
    let notices =
        second.messages[1]["content"].as_array().unwrap().iter().filter(|b| b["text"] == TRUNCATION_NOTICE).count();
    assert_eq!(notices, 1, "one notice however often it is truncated");
    history.restore_checkpoint(15);
    assert_eq!(history.deleted_range(), Some((2, 21)));
    assert_eq!(apply_history(&messages, &history).unwrap(), first.messages);
}

#[test]
fn a_corrupt_history_is_a_corrupt_record_error() {
    block_on(async {
        let storage = MemoryStorage::new();
        let path = history_path("/ctx", "c").unwrap();
        // The last is a valid file but for one byte that is not UTF-8 (inside a string).
        let not_utf8 =
            b"{\"v\":1,\"edits\":[{\"ts\":1,\"message\":2,\"block\":0,\"kind\":\"readFile\",\"content\":\"\xff\"}]}";
        for bad in [&b"{not json"[..], b"{\"v\":9,\"edits\":[]}", b"{\"v\":1,\"edits\":[{\"ts\":1}]}", not_utf8] {
            storage.write(&path, bad, WriteOptions::default()).await.unwrap();
            let err = toolctx::window_history::load(&storage, &path).await.unwrap_err();
            assert_eq!(err.kind(), ErrorKind::CorruptRecord);
            assert_eq!(err.path(), Some(path.as_str()));
            if bad == not_utf8 {
                assert!(err.to_string().contains("does not parse"), "{err}");
            }
        }
        // The same file with the byte as UTF-8 loads.
        let fixed = String::from_utf8_lossy(not_utf8).into_owned();
        storage.write(&path, fixed.as_bytes(), WriteOptions::default()).await.unwrap();
        assert_eq!(toolctx::window_history::load(&storage, &path).await.unwrap().edits[0].content, "\u{fffd}");
    });
}

#[test]
fn history_ids_never_form_a_path() {
    for bad in ["", "../x", "a/b", "a\\b", ".", "x.json", &"x".repeat(129)] {
        assert_eq!(history_path("/ctx", bad).unwrap_err().kind(), ErrorKind::InvalidArgument, "{bad:?}");
    }
}

#[test]
fn edits_that_do_not_fit_are_skipped() {
    let messages = vec![user("a"), assistant("b")];
    let history = History {
        edits: vec![
            Edit { ts: 1, message: 9, block: 0, kind: EditKind::ReadFile, content: "x".into() },
            Edit { ts: 1, message: 1, block: 7, kind: EditKind::ReadFile, content: "x".into() },
        ],
        truncations: vec![],
    };
    assert_eq!(apply_history(&messages, &history).unwrap(), messages);
}

#[test]
fn malformed_messages_are_invalid_arguments() {
    for bad in [json!({"content": "x"}), json!({"role": "user"}), json!({"role": "user", "content": 3}), json!("hi")] {
        let err = optimize(&[bad], &opts(), &mut History::default()).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    }
}

#[test]
fn should_compact_keeps_the_usual_reserve_free() {
    let usage = |input| Usage { input, ..Usage::default() };
    assert_eq!(window::default_reserve(200_000), 40_000);
    assert_eq!(window::default_reserve(128_000), 30_000);
    assert_eq!(window::default_reserve(64_000), 27_000);
    assert_eq!(window::default_reserve(1_000_000), 40_000);
    assert_eq!(window::default_reserve(32_000), 6_400);
    assert!(!should_compact(usage(159_999), 200_000, None));
    assert!(should_compact(usage(160_000), 200_000, None));
    let split = Usage { input: 100_000, output: 20_000, cache_read: 30_000, cache_write: 10_000 };
    assert!(should_compact(split, 200_000, None), "all four count");
    assert!(!should_compact(split, 200_000, Some(30_000)));
}

#[test]
fn a_plan_names_the_changed_messages_and_matches_optimize() {
    let messages = agent_loop(&["a.ts", "b.ts"], 6);
    let strict = OptimizeOptions { min_savings: 0.99, ..opts() };
    let plan = window::plan(messages.clone(), &strict, &mut History::default()).unwrap();
    let (start, end) = plan.truncated.unwrap();
    let mut edited: Vec<usize> = plan.edits.iter().map(|e| e.message).filter(|i| *i < start || *i > end).collect();
    edited.sort_unstable();
    edited.dedup();
    assert_eq!(plan.changed, edited, "every edited message outside the range, once, ascending");
    for (i, m) in plan.messages.iter().enumerate() {
        assert_eq!(m != &messages[i], plan.edits.iter().any(|e| e.message == i), "message {i}");
    }
    let outcome = optimize(&messages, &strict, &mut History::default()).unwrap();
    assert_eq!(plan.into_outcome(), outcome);
}
