//! Records out of a store and back: purge, JSONL export and import.

use std::rc::Rc;

use futures_executor::block_on;
use toolctx::{ContextManager, Error, ErrorKind, MemoryStorage, Storage, WriteOptions};

mod common;
use common::{options, save};

#[test]
fn purge_removes_every_record_and_nothing_else() {
    block_on(async {
        let storage = Rc::new(MemoryStorage::new());
        storage.write("/ctx/notes.json", b"{}", WriteOptions::default()).await?;
        storage.write("/ctx/sub/t_000000000000_1700000000000_0_aaaa.json", b"{}", WriteOptions::default()).await?;
        for _ in 0..2 {
            let m = ContextManager::new(storage.clone(), options("/ctx"))?;
            m.save(save("t", "{}", "1")).await?;
        }
        assert_eq!(toolctx::purge(&storage, "/ctx").await?, 2);
        assert_eq!(storage.paths(), ["/ctx/notes.json", "/ctx/sub/t_000000000000_1700000000000_0_aaaa.json"]);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn jsonl_export_and_import_are_lossless_and_idempotent() {
    block_on(async {
        let from = Rc::new(MemoryStorage::new());
        let m = ContextManager::new(from.clone(), options("/a"))?;
        m.save(save("grep", r#"{"q":"é🙂"}"#, "[12345678901234567890,1e-7]")).await?;
        m.save(save("readFile", r#"{"path":"x"}"#, r#""line\nbreak""#)).await?;
        from.write("/a/notes.txt", b"not a record", WriteOptions::default()).await?;
        let jsonl = toolctx::export_jsonl(&from, "/a").await?.jsonl;
        assert_eq!(jsonl.lines().count(), 2);
        let to = MemoryStorage::new();
        let report = toolctx::import_jsonl(&to, "/b", &jsonl).await?;
        assert_eq!(report, toolctx::ImportReport { imported: 2, unchanged: 0 });
        for path in from.paths().iter().filter(|p| p.ends_with(".json")) {
            let copy = path.replacen("/a/", "/b/", 1);
            assert_eq!(from.read(path).await?, to.read(&copy).await?, "byte for byte");
        }
        assert_eq!(toolctx::export_jsonl(&to, "/b").await?.jsonl, jsonl);
        assert_eq!(toolctx::import_jsonl(&to, "/b", &jsonl).await?.unchanged, 2);
        let bad = jsonl.replacen("grep_", "../grep_", 1);
        assert_eq!(toolctx::import_jsonl(&to, "/c", &bad).await.unwrap_err().kind(), ErrorKind::CorruptRecord);
        Ok::<(), Error>(())
    })
    .unwrap();
}

/// A record as the TypeScript original writes it: `JSON.stringify(record, null, 2)`.
const SEED_RECORD: &str = "{\n  \"toolName\": \"readFile\",\n  \"toolDescription\": \"Read src/a.ts\",\n  \"args\": {\n    \"path\": \"src/a.ts\"\n  },\n  \"timestamp\": \"2025-01-18T14:30:22.000Z\",\n  \"taskId\": 1,\n  \"result\": \"line one\\nline two\"\n}";
const SEED_NAME: &str = "readFile_625c49607612_1737210622000_0_x9k2.json";

#[test]
fn export_keeps_pretty_printed_seed_records_byte_for_byte() {
    block_on(async {
        let from = Rc::new(MemoryStorage::new());
        let m = ContextManager::new(from.clone(), options("/a"))?;
        m.save(save("grep", r#"{"q":"auth"}"#, "1")).await?;
        from.write(&format!("/a/{SEED_NAME}"), SEED_RECORD.as_bytes(), WriteOptions::default()).await?;
        // Bytes that are a record but not a single line of them: a trailing newline, CRLF.
        let crlf = SEED_RECORD.replace('\n', "\r\n") + "\r\n";
        from.write("/a/x_000000000000_1700000000000_0_aaaa.json", crlf.as_bytes(), WriteOptions::default()).await?;
        let torn = "/a/t_000000000000_1700000000000_0_aaaa.json";
        from.write(torn, b"{\"toolName\":\"t\",", WriteOptions::default()).await?;
        let export = toolctx::export_jsonl(&from, "/a").await?;
        assert_eq!(export.exported, 3, "every record, pretty-printed or not");
        assert_eq!(export.skipped.len(), 1);
        assert_eq!(export.skipped[0].filename, "t_000000000000_1700000000000_0_aaaa.json");
        assert!(export.skipped[0].reason.contains("not a toolctx record"), "{:?}", export.skipped);
        assert_eq!(export.jsonl.lines().count(), 3, "one line a record");
        // A single-line record keeps today's form, so old exports and new ones read alike.
        assert!(export.jsonl.lines().any(|l| l.starts_with(r#"{"filename":"grep_"#) && l.contains(r#","record":{"#)));
        let to = MemoryStorage::new();
        let report = toolctx::import_jsonl(&to, "/b", &export.jsonl).await?;
        assert_eq!(report, toolctx::ImportReport { imported: 3, unchanged: 0 });
        for path in from.paths().iter().filter(|p| p.as_str() != torn) {
            let copy = path.replacen("/a/", "/b/", 1);
            assert_eq!(from.read(path).await?, to.read(&copy).await?, "byte for byte: {path}");
        }
        assert_eq!(toolctx::export_jsonl(&to, "/b").await?.jsonl, export.jsonl);
        // The text form is checked like the verbatim one: it must be a record.
        let line = format!(r#"{{"filename":"{SEED_NAME}","recordText":"{{\"no\":1}}"}}"#);
        assert_eq!(toolctx::import_jsonl(&to, "/c", &line).await.unwrap_err().kind(), ErrorKind::CorruptRecord);
        let both = format!(r#"{{"filename":"{SEED_NAME}","record":{{}},"recordText":"{{}}"}}"#);
        assert_eq!(toolctx::import_jsonl(&to, "/c", &both).await.unwrap_err().kind(), ErrorKind::CorruptRecord);
        assert!(to.paths().iter().all(|p| !p.starts_with("/c/")));
        Ok::<(), Error>(())
    })
    .unwrap();
}
