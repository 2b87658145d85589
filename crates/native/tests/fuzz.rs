//! Property tests over hostile and broken input: names, args, queries, paths, record
//! files and manifests. Nothing panics, nothing leaves the store. Each property runs
//! `PROPTEST_CASES` cases (default 1,000).

use std::rc::Rc;

use futures_executor::block_on;
use proptest::prelude::*;
use toolctx::session::{Manifest, MANIFEST};
use toolctx::{paths, ContextManager, MemoryStorage, SaveInput, SessionChoice, Storage, WriteOptions};

fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(1000);
    ProptestConfig { cases, ..ProptestConfig::default() }
}

/// Strings rich in what breaks paths: separators, dots, NUL, look-alikes, surrogates' neighbours.
fn hostile() -> impl Strategy<Value = String> {
    let pieces = prop::sample::select(vec![
        "..",
        ".",
        "/",
        "\\",
        "\0",
        "C:",
        "~",
        "%2e",
        "\u{FF0E}",
        "\u{2215}",
        "\u{202E}",
        "a",
        "é",
        "認",
        "🙂",
        " ",
        "\n",
        "sessions",
        ".manifest.json",
        "_",
        "-",
        "000000000000",
        "1700000000000",
    ]);
    prop::collection::vec(prop_oneof![pieces.prop_map(str::to_owned), any::<String>()], 0..12).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn tool_names_always_make_a_valid_file_name(name in hostile()) {
        let clean = toolctx::sanitize_tool_name(&name);
        let file = toolctx::naming::record_filename(&clean, &"a".repeat(64), 1_700_000_000_000, 0, "abcd");
        prop_assert!(toolctx::is_record_filename(&file), "{file}");
    }

    #[test]
    fn confined_paths_never_leave_the_store(path in hostile()) {
        for candidate in [path.clone(), format!("/ctx/{path}"), format!("/ctx/sessions/{path}")] {
            if let Some(p) = paths::confine("/ctx", &candidate) {
                prop_assert!(p.starts_with("/ctx/") && !p.split('/').any(|c| c == ".." || c == "."), "{p}");
            }
        }
    }

    #[test]
    fn queries_tokenise_and_hash_without_panicking(query in any::<String>()) {
        let id = toolctx::hash_query(&query);
        prop_assert_eq!(id.len(), 18);
        for t in toolctx::tokenize(&query) {
            prop_assert!(!t.is_empty());
        }
        let _ = toolctx::keywords(&query);
    }

    #[test]
    fn saves_of_any_name_args_and_category_stay_inside(name in hostile(), key in hostile(), value in hostile(), category in hostile()) {
        block_on(async {
            let storage = Rc::new(MemoryStorage::new());
            let mut o = toolctx::options("/ctx");
            o.persist_threshold = 0;
            o.session = Some(SessionChoice::New);
            let m = ContextManager::open(storage.clone(), o).await.unwrap();
            let args = serde_json::json!({ key: value }).to_string();
            let result = serde_json::json!([value]).to_string();
            let input = SaveInput { tool_name: &name, args_json: &args, result_json: Some(&result), category: Some(category), ..SaveInput::default() };
            let _ = m.save(input).await;
            for p in storage.paths() {
                assert!(p.starts_with("/ctx/sessions/"), "{p}");
            }
        });
    }

    #[test]
    fn broken_record_files_are_skipped(bytes in prop::collection::vec(any::<u8>(), 0..400), text in any::<String>()) {
        block_on(async {
            let storage = Rc::new(MemoryStorage::new());
            let m = ContextManager::new(storage.clone(), toolctx::options("/ctx")).unwrap();
            let a = "/ctx/t_000000000000_1700000000000_0_aaaa.json".to_owned();
            let b = "/ctx/t_000000000000_1700000000000_1_bbbb.json".to_owned();
            storage.write(&a, &bytes, WriteOptions::default()).await.unwrap();
            storage.write(&b, text.as_bytes(), WriteOptions::default()).await.unwrap();
            let _ = m.load(&[a, b]).await;
            let _ = m.rebuild_index().await;
        });
    }

    #[test]
    fn broken_manifests_never_panic_or_escape(bytes in prop::collection::vec(any::<u8>(), 0..600), rel in hostile()) {
        block_on(async {
            let storage = Rc::new(MemoryStorage::new());
            let id = "20250118-143022-a4f2";
            let dir = format!("/ctx/sessions/{id}");
            let _ = Manifest::parse(&bytes, id);
            let crafted = serde_json::json!({
                "session_id": id, "created_at": "x", "last_activity": "2000-01-01T00:00:00Z",
                "context_files": { rel.clone(): { "created": "x", "for": "t", "toolName": "t", "args": {} } }
            });
            storage.write(&format!("{dir}/{MANIFEST}"), crafted.to_string().as_bytes(), WriteOptions::default()).await.unwrap();
            storage.write("/secret.json", b"keep", WriteOptions::default()).await.unwrap();
            storage.write("/ctx/keep.txt", b"keep", WriteOptions::default()).await.unwrap();
            storage.write(&format!("{dir}/t_000000000000_1700000000000_0_aaaa.json"), &bytes, WriteOptions::default()).await.unwrap();
            let mut o = toolctx::options("/ctx");
            o.session = Some(SessionChoice::Resume(id.to_owned()));
            if let Ok(m) = ContextManager::open(storage.clone(), o).await {
                let _ = m.end_session().await;
            }
            let _ = toolctx::cleanup_stale_sessions(&storage, "/ctx", 4_102_444_800_000, 0).await;
            assert!(storage.read("/secret.json").await.unwrap().is_some());
            assert!(storage.read("/ctx/keep.txt").await.unwrap().is_some());
        });
    }
}
