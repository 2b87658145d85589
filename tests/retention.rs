//! Retention caps (bytes, records, age), `reconcile`, and stale cleanup of the records a
//! crash left out of a session's manifest.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures_executor::block_on;
use toolctx::session::{Manifest, MANIFEST};
use toolctx::{ContextManager, Error, MemoryStorage, Options, SaveInput, SessionChoice, Storage, WriteOptions};

type Shared = Rc<MemoryStorage>;

const T0: i64 = 1_737_210_622_000; // 2025-01-18T14:30:22Z
const DAY: i64 = 86_400_000;

fn options(session: Option<SessionChoice>, now: Rc<Cell<i64>>) -> Options {
    let mut o = Options::new("/ctx");
    o.persist_threshold = 0;
    o.session = session;
    o.clock = Rc::new(move || now.get());
    o
}

fn save(tool: &str) -> SaveInput<'_> {
    SaveInput { tool_name: tool, args_json: "{}", result_json: Some("\"body\""), ..SaveInput::default() }
}

async fn manifest_of(storage: &Shared, id: &str) -> Manifest {
    let bytes = storage.read(&format!("/ctx/sessions/{id}/{MANIFEST}")).await.unwrap().expect("manifest");
    Manifest::parse(&bytes, id).unwrap()
}

/// A record file written into a session folder the way a crashed writer leaves it:
/// the file is there, the manifest never heard of it.
async fn orphan(storage: &Shared, id: &str, rel: &str, at: i64) -> String {
    let path = format!("/ctx/sessions/{id}/{rel}");
    let record = format!(
        r#"{{"v":1,"toolName":"grep","toolDescription":"grep","args":{{}},"argsHash":"{}","timestamp":"{}","result":1}}"#,
        toolctx::args_hash(&serde_json::json!({})).unwrap(),
        toolctx::record::iso_timestamp(at),
    );
    storage.write(&path, record.as_bytes(), WriteOptions::default()).await.unwrap();
    path
}

#[test]
fn stale_cleanup_removes_the_records_a_crash_left_out_of_the_manifest() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(Some(SessionChoice::New), now.clone())).await?;
        m.save(save("t")).await?;
        m.flush().await?;
        let id = m.session_id().unwrap().to_owned();
        // The crash: two records on disk that no manifest write ever listed.
        let a = orphan(&storage, &id, &format!("grep_{}_{T0}_7_abcd.json", "0".repeat(12)), T0).await;
        let b = orphan(&storage, &id, &format!("code/grep_{}_{T0}_8_abcd.json", "0".repeat(12)), T0).await;
        storage.write(&format!("/ctx/sessions/{id}/notes.txt"), b"user file", WriteOptions::default()).await?;
        now.set(T0 + 2 * DAY);
        let removed = toolctx::cleanup_stale_sessions(&storage, "/ctx", now.get(), DAY).await?;
        assert_eq!(removed, [id.clone()]);
        let left: Vec<String> = storage.paths().into_iter().filter(|p| p.contains(&id)).collect();
        assert!(!left.contains(&a) && !left.contains(&b), "orphaned records leaked: {left:?}");
        assert_eq!(left, [format!("/ctx/sessions/{id}/notes.txt")], "only the user's file stays");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_recent_orphan_keeps_its_session_from_stale_cleanup() {
    block_on(async {
        let storage: Shared = Rc::new(MemoryStorage::new());
        let now = Rc::new(Cell::new(T0));
        let m = ContextManager::open(storage.clone(), options(Some(SessionChoice::New), now.clone())).await?;
        m.save(save("t")).await?;
        m.flush().await?;
        let id = m.session_id().unwrap().to_owned();
        // A writer of the session saved an hour ago; its manifest update never landed.
        let recent = T0 + 2 * DAY - 3_600_000;
        let a = orphan(&storage, &id, &format!("grep_{}_{recent}_3_abcd.json", "0".repeat(12)), recent).await;
        now.set(T0 + 2 * DAY);
        assert!(toolctx::cleanup_stale_sessions(&storage, "/ctx", now.get(), DAY).await?.is_empty());
        assert!(storage.read(&a).await?.is_some());
        Ok::<(), Error>(())
    })
    .unwrap();
}
