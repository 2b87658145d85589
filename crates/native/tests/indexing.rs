//! The ContextManager's index over native storage: filters, ranking on indexed terms,
//! content indexed up to its bound and off the save path, duplicates collapsed.

use std::cell::RefCell;
use std::rc::Rc;

use futures_executor::block_on;
use toolctx::{Candidate, ContextManager, DebugEvent, Error, Fallback, Filter, MemoryStorage, SaveInput};

mod common;
use common::{options, save};

#[test]
fn filters_list_and_rank_the_pointers_of_a_query_and_a_task() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), options("/ctx"))?;
        let mut paths = Vec::new();
        for i in 0..12u64 {
            let args = format!(r#"{{"path":"src/auth/file{i}.ts"}}"#);
            let query_id = (i % 3 == 0).then(|| "q_auth".to_owned());
            let input = SaveInput { task_id: Some((i % 2).into()), query_id, ..save("readFile", &args, "1") };
            paths.push(m.save(input).await?);
        }
        let one = serde_json::Number::from(1);
        let slots_of =
            |f: Filter<'_>| -> Vec<String> { m.slots(f).into_iter().map(|s| m.filepath_of(s).unwrap()).collect() };
        let pick = |keep: &dyn Fn(usize) -> bool| -> Vec<String> {
            paths.iter().enumerate().filter(|(i, _)| keep(*i)).map(|(_, p)| p.clone()).collect()
        };
        assert_eq!(slots_of(Filter::ALL), paths);
        assert_eq!(slots_of(Filter::query("q_auth")), pick(&|i| i % 3 == 0));
        assert_eq!(slots_of(Filter::task(&one)), pick(&|i| i % 2 == 1));
        let both = Filter { query_id: Some("q_auth"), task_id: Some(&one) };
        assert_eq!(slots_of(both), pick(&|i| i % 6 == 3));
        assert!(slots_of(Filter::query("q_other")).is_empty());

        // Ranked through the index: the same as ranking those pointers as candidates.
        for (filter, keep) in [(Filter::query("q_auth"), 0usize), (both, 1)] {
            let ranked = m.rank_matching(
                &toolctx::select::query_for("file3 auth", toolctx::Strategy::Bm25, true),
                filter,
                Fallback::All,
                toolctx::Strategy::Bm25,
                None,
            );
            let expected = if keep == 0 { pick(&|i| i % 3 == 0) } else { pick(&|i| i % 6 == 3) };
            let candidates: Vec<Candidate> = expected.iter().map(|p| Candidate::Known(m.slot_of(p).unwrap())).collect();
            let direct = m.rank(
                &toolctx::select::query_for("file3 auth", toolctx::Strategy::Bm25, true),
                &candidates,
                Fallback::All,
                toolctx::Strategy::Bm25,
                None,
            );
            let got: Vec<(String, f64)> =
                ranked.hits.iter().map(|h| (m.filepath_of(h.index as u32).unwrap(), h.score)).collect();
            let want: Vec<(String, f64)> = direct.hits.iter().map(|h| (expected[h.index].clone(), h.score)).collect();
            assert_eq!(got, want);
            assert_eq!(got.len(), expected.len(), "every one matches \"auth\"");
            assert_eq!(got[0].0, paths[3], "file3 first");
        }
        let nothing = m.rank_matching(
            &toolctx::select::query_for("zebra", toolctx::Strategy::Bm25, true),
            Filter::task(&one),
            Fallback::All,
            toolctx::Strategy::Bm25,
            Some(2),
        );
        let fallback: Vec<String> = nothing.hits.iter().map(|h| m.filepath_of(h.index as u32).unwrap()).collect();
        assert_eq!(fallback, pick(&|i| i % 2 == 1)[..2], "the fallback lists them in save order");
        let none = m.rank_matching(
            &toolctx::select::query_for("auth", toolctx::Strategy::Bm25, true),
            Filter::query("q_other"),
            Fallback::All,
            toolctx::Strategy::Bm25,
            None,
        );
        assert!(none.hits.is_empty());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn ranking_uses_indexed_terms_of_known_pointers() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), options("/ctx"))?;
        let a = m.save(save("readFile", r#"{"path":"README.md"}"#, "1")).await?;
        let b = m.save(save("grep", r#"{"pattern":"AuthError","dir":"src/auth"}"#, "1")).await?;
        let c = m.save(save("readFile", r#"{"path":"src/auth/login.ts"}"#, "1")).await?;
        let candidates = [&a, &b, &c].map(|p| Candidate::Known(m.slot_of(p).unwrap()));
        let ranked = m.rank(
            &toolctx::select::query_for("auth error", toolctx::Strategy::Overlap, true),
            &candidates,
            Fallback::All,
            toolctx::Strategy::Overlap,
            None,
        );
        let order: Vec<usize> = ranked.hits.iter().map(|s| s.index).collect();
        assert_eq!(order, [1, 2]);
        // Through the index, over every pointer: the same order, by slot.
        let all = m.rank_all(
            &toolctx::select::query_for("auth error", toolctx::Strategy::Overlap, true),
            Fallback::All,
            toolctx::Strategy::Overlap,
            None,
        );
        let paths: Vec<String> = all.hits.iter().map(|s| m.filepath_of(s.index as u32).unwrap()).collect();
        assert_eq!(paths, [b.clone(), c.clone()]);
        assert_eq!(all.matched(&all.hits[0]).collect::<Vec<_>>(), ["auth", "error"]);
        // Nothing matches: every pointer in save order; after clear_pointers, none.
        let none = m.rank_all(
            &toolctx::select::query_for("zebra", toolctx::Strategy::Bm25, true),
            Fallback::All,
            toolctx::Strategy::Bm25,
            None,
        );
        assert_eq!(none.hits.iter().map(|s| s.index).collect::<Vec<_>>(), [0, 1, 2]);
        let epoch = m.epoch();
        m.clear_pointers();
        assert_ne!(m.epoch(), epoch);
        assert!(m
            .rank_all(
                &toolctx::select::query_for("auth", toolctx::Strategy::Bm25, true),
                Fallback::All,
                toolctx::Strategy::Bm25,
                None
            )
            .hits
            .is_empty());
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn results_are_indexed_up_to_content_bytes_and_duplicates_collapse_to_the_latest() {
    block_on(async {
        let mut o = options("/ctx");
        o.content_bytes = 64;
        let m = ContextManager::new(MemoryStorage::new(), o)?;
        let body =
            r#"{"content":"fn rotate_refresh_tokens() {}","tail":"                                   kubernetes"}"#;
        let a = m.save(save("readFile", r#"{"path":"src/auth/refresh.ts"}"#, body)).await?;
        let other = m.save(save("readFile", r#"{"path":"src/auth/login.ts"}"#, r#""refresh""#)).await?;
        let b = m.save(save("readFile", r#"{"path":"src/auth/refresh.ts"}"#, body)).await?;
        let found = |q: &str| {
            let r = m.rank_all(&toolctx::select::Query::new(q), Fallback::None, toolctx::Strategy::Bm25, None);
            r.hits.iter().map(|s| m.filepath_of(s.index as u32).unwrap()).collect::<Vec<_>>()
        };
        // Content words, stemmed ("token" finds "tokens"); past 64 bytes nothing is read.
        assert_eq!(found("rotate token"), [a.clone(), b.clone()]);
        assert!(found("kubernetes").is_empty());
        // The same tool, args and result: one hit, the latest copy, at the best place.
        let mut hits = m
            .rank_all(
                &toolctx::select::query_for("refresh token", toolctx::Strategy::Bm25, true),
                Fallback::None,
                toolctx::Strategy::Bm25,
                None,
            )
            .hits;
        assert_eq!(hits.len(), 3);
        assert_eq!(m.collapse_duplicates(&mut hits, |i| Some(i as u32)), 1);
        let paths: Vec<String> = hits.iter().map(|s| m.filepath_of(s.index as u32).unwrap()).collect();
        assert_eq!(paths, [b, other]);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn every_word_of_every_record_is_indexed_by_default() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), options("/ctx"))?;
        // A 200 KB file read: 3,000 distinct words, the one a query looks for once, past
        // the first 150 KB; and a short word the query names as it is.
        let mut words: Vec<String> = (0..3000).map(|i| format!("filler{i}")).collect();
        words.push("kubernetes".into());
        let mut text = words.join(" ").repeat(8);
        text.push_str(" open the db handle");
        let body = serde_json::to_string(&serde_json::json!({ "content": text })).unwrap();
        assert!(body.len() > 200_000);
        let big = m.save(save("readFile", r#"{"path":"src/deploy.ts"}"#, &body)).await?;
        let other = m.save(save("grep", r#"{"pattern":"deploy"}"#, r#""no match""#)).await?;
        let found = |q: &str| {
            let r = m.rank_all(&toolctx::select::Query::new(q), Fallback::None, toolctx::Strategy::Bm25, None);
            r.hits.iter().map(|s| m.filepath_of(s.index as u32).unwrap()).collect::<Vec<_>>()
        };
        assert_eq!(found("kubernetes"), std::slice::from_ref(&big), "a word far into the record");
        assert_eq!(found("filler2999"), std::slice::from_ref(&big), "a word seen once among thousands");
        assert_eq!(found("db"), std::slice::from_ref(&big), "a word of 2 characters");
        assert_eq!(found("match"), [other]);
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn a_save_returns_before_its_content_is_indexed_and_the_next_query_sees_it() {
    block_on(async {
        let m = ContextManager::new(MemoryStorage::new(), options("/ctx"))?;
        let text = format!("\"{} kubernetes\"", "word ".repeat(5000));
        let a = m.save(save("readFile", r#"{"path":"a.ts"}"#, &text)).await?;
        let b = m.save(save("readFile", r#"{"path":"b.ts"}"#, r#""kubernetes""#)).await?;
        assert_eq!(m.content_waiting(), 2, "tokenising the results waits: the saves wrote and returned");
        assert_eq!(m.storage().paths().len(), 2);
        let r = m.rank_all(&toolctx::select::Query::new("kubernetes"), Fallback::None, toolctx::Strategy::Bm25, None);
        let mut found: Vec<String> = r.hits.iter().map(|s| m.filepath_of(s.index as u32).unwrap()).collect();
        found.sort();
        assert_eq!(found, [a, b], "the query sees every save acknowledged before it");
        assert_eq!(m.content_waiting(), 0);
        // Past UNINDEXED_BYTES of results waiting, a save indexes them itself.
        let big = format!("\"{}\"", "x ".repeat(toolctx::store::UNINDEXED_BYTES / 3));
        m.save(save("readFile", r#"{"path":"c.ts"}"#, &big)).await?;
        assert_eq!(m.content_waiting(), 1);
        m.save(save("readFile", r#"{"path":"d.ts"}"#, &big)).await?;
        assert_eq!(m.content_waiting(), 0, "memory for waiting results stays bounded");
        Ok::<(), Error>(())
    })
    .unwrap();
}

#[test]
fn idle_time_indexes_the_content_waiting_a_slice_at_a_time() {
    block_on(async {
        let events = Rc::new(RefCell::new(Vec::new()));
        let heard = events.clone();
        let mut o = options("/ctx");
        o.on_debug = Some(Rc::new(move |e: &DebugEvent| heard.borrow_mut().push(e.message.clone())));
        let m = ContextManager::new(MemoryStorage::new(), o)?;
        // Three results of 40 KB: a slice of 64 KB indexes two (it ends past its bytes), the
        // next the third.
        let text = |word: &str| format!("\"{} {word}\"", "filler ".repeat(40 * 1024 / 7));
        let paths = [
            m.save(save("readFile", r#"{"path":"a.ts"}"#, &text("alpha"))).await?,
            m.save(save("readFile", r#"{"path":"b.ts"}"#, &text("bravo"))).await?,
            m.save(save("readFile", r#"{"path":"c.ts"}"#, &text("charlie"))).await?,
        ];
        assert_eq!(m.content_waiting(), 3);
        assert!(m.index_some(toolctx::store::INDEX_SLICE_BYTES), "one still waits");
        assert_eq!(m.content_waiting(), 1);
        let found = |word: &str| {
            let query = toolctx::select::Query::new(word);
            let r = m.rank_all(&query, Fallback::None, toolctx::Strategy::Bm25, None);
            r.hits.iter().map(|s| m.filepath_of(s.index as u32).unwrap()).collect::<Vec<_>>()
        };
        assert!(!m.index_some(toolctx::store::INDEX_SLICE_BYTES), "none waits");
        assert_eq!(m.content_waiting(), 0);
        assert_eq!(found("alpha"), [paths[0].clone()]);
        assert_eq!(found("charlie"), [paths[2].clone()]);
        assert!(events.borrow().iter().all(|e| !e.contains("idle time did not keep up")), "{:?}", events.borrow());
        // Past UNINDEXED_BYTES waiting, a save indexes them itself, and says so once.
        let big = format!("\"{}\"", "x ".repeat(toolctx::store::UNINDEXED_BYTES / 3));
        for name in ["d", "e", "f", "g"] {
            m.save(save("readFile", &format!(r#"{{"path":"{name}.ts"}}"#), &big)).await?;
        }
        let behind = events.borrow().iter().filter(|e| e.contains("idle time did not keep up")).count();
        assert_eq!(behind, 1, "{:?}", events.borrow());
        Ok::<(), Error>(())
    })
    .unwrap();
}
