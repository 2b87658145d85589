//! Tests of [`OperationPlan`](super::OperationPlan): what an operation asks of the
//! storage, in order, run by the core's test driver.

use std::cell::Cell;
use std::rc::Rc;

use super::*;
use crate::conversation::{MessageInput, StoreOptions};
use crate::testing::TestStorage;

/// A store in `/s` at 1 000 000 ms whose ids draw `000…1`, `000…2`, … in turn.
fn store(has_remote: bool) -> Conversations {
    let drawn = Rc::new(Cell::new(0u64));
    let random: crate::conversation::IdRandom = Rc::new(move |n| {
        drawn.set(drawn.get() + 1);
        Ok(format!("{:0>n$}", drawn.get()))
    });
    Conversations::new(StoreOptions::with("/s", Rc::new(|| 1_000_000), random), has_remote).unwrap()
}

/// The log's runs of changes (not reads, listings or locks).
fn changes(log: &[String]) -> Vec<&str> {
    let change = |s: &&String| !s.starts_with("read ") && !s.starts_with("list ") && !s.contains("lock");
    log.iter().filter(change).map(String::as_str).collect()
}

fn create(store: &Conversations, host: &TestStorage) -> ConversationMetadata {
    let request = Request::Create { title: None, id: Some("c".into()) };
    match host.run(OperationPlan::new(store, request)).unwrap() {
        Answer::Conversation(meta) => meta,
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_write_runs_under_the_writers_lock_its_changes_in_order() {
    let (store, host) = (store(true), TestStorage::logging());
    create(&store, &host);
    host.take_log();
    let request = store.append_request("c", MessageInput::new("user", "hi"), None).unwrap();
    let answer = host.run(OperationPlan::new(&store, request)).unwrap();
    assert!(matches!(answer, Answer::Message(ref m, None) if m.content == "hi"), "{answer:?}");
    let log = host.take_log();
    assert_eq!(log.first().map(String::as_str), Some("lock /s/conversations/.lock"), "waited for");
    assert_eq!(log.last().map(String::as_str), Some("unlock"));
    // Drawn: the create's queue item, the message id, this queue item.
    let queue = "/s/conversations/sync-queue/0000001000000-000000000003.json";
    assert_eq!(
        changes(&log),
        [
            format!("write {queue}").as_str(),
            "append /s/conversations/c/messages.jsonl",
            "write /s/conversations/c/metadata.json",
            "write /s/conversations/index.json",
        ]
    );
    assert!(host.files.borrow().contains_key(queue));
}

#[test]
fn a_read_takes_no_lock() {
    let (store, host) = (store(false), TestStorage::logging());
    create(&store, &host);
    host.take_log();
    let answer = host.run(OperationPlan::new(&store, Request::Messages { conv: "c".into(), role: None }));
    assert!(matches!(answer, Ok(Answer::Messages(ref list)) if list.is_empty()), "{answer:?}");
    let log = host.take_log();
    assert!(log.iter().all(|s| !s.contains("lock")), "{log:?}");
    assert!(changes(&log).is_empty(), "{log:?}");
}

#[test]
fn a_taken_name_is_drawn_again_and_the_changes_run_on_from_there() {
    let (store, host) = (store(true), TestStorage::logging());
    create(&store, &host);
    // Another writer took the first queue item name and the first artifact id drawn
    // (after the create's queue item and the message id).
    let taken = ["sync-queue/0000001000000-000000000003.json", "c/artifacts/art-0000000000000004"];
    for path in taken {
        host.files.borrow_mut().insert(format!("/s/conversations/{path}"), b"theirs".to_vec());
    }
    host.take_log();
    let artifact = ArtifactInput { kind: "file".into(), name: "a.ts".into(), content: "A".into(), mime_type: None };
    let request = store.append_request("c", MessageInput::new("tool", "read a.ts"), Some(artifact)).unwrap();
    let (message, meta) = match host.run(OperationPlan::new(&store, request)).unwrap() {
        Answer::Message(message, Some(meta)) => (message, meta),
        other => panic!("{other:?}"),
    };
    assert_eq!(meta.id, "art-0000000000000006", "drawn after the taken one and the queue name drawn again");
    assert!(message.content.ends_with("(artifact://art-0000000000000006)"), "{}", message.content);
    let log = host.take_log();
    assert_eq!(
        changes(&log)[..6],
        [
            "write /s/conversations/sync-queue/0000001000000-000000000003.json",
            "write /s/conversations/sync-queue/0000001000000-000000000005.json",
            "write /s/conversations/c/artifacts/art-0000000000000004",
            "write /s/conversations/c/artifacts/art-0000000000000006",
            "write /s/conversations/c/artifacts/art-0000000000000006.meta.json",
            "append /s/conversations/c/messages.jsonl",
        ]
    );
    for path in taken {
        assert_eq!(host.files.borrow()[&format!("/s/conversations/{path}")], b"theirs", "{path} is left as it was");
    }
}

#[test]
fn a_change_that_fails_ends_the_operation_with_its_error_and_the_lock_released() {
    let (store, host) = (store(false), TestStorage::logging());
    create(&store, &host);
    host.take_log();
    *host.fail.borrow_mut() = Some(Box::new(|op| {
        let metadata = matches!(op, Op::Write { path, .. } if path.ends_with("metadata.json"));
        metadata.then(|| Error::new(ErrorKind::Storage, "disk full"))
    }));
    let request = store.append_request("c", MessageInput::new("user", "hi"), None).unwrap();
    let err = host.run(OperationPlan::new(&store, request)).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Storage, "{err}");
    let log = host.take_log();
    assert_eq!(changes(&log), ["append /s/conversations/c/messages.jsonl", "write /s/conversations/c/metadata.json"]);
    assert_eq!(log.last().map(String::as_str), Some("unlock"));
    // What the file ends with is not known after it: the next append reads it again.
    *host.fail.borrow_mut() = None;
    let request = store.append_request("c", MessageInput::new("user", "again"), None).unwrap();
    host.run(OperationPlan::new(&store, request)).unwrap();
    let log = host.take_log();
    assert!(log.iter().any(|s| s.contains("read /s/conversations/c/messages.jsonl")), "{log:?}");
}
