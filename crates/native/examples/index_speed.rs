//! How long indexing a record takes (`Terms::of_record_with_content`), natively, over
//! the shapes of result bench/io.mjs saves (search hits, a file's text) and a log, at
//! 1 KB of record and at the default 16 KiB of content read.
//!   cargo run --release -p toolctx --example index_speed [ROUNDS]
//! Prints µs per record: the fastest of ROUNDS rounds (default 7), the figure least
//! disturbed by other work on a shared machine. `cargo run --release -p toolctx
//! --example index_speed 1 phases` also times the parts of the 16 KiB cases; other words
//! after ROUNDS pick the cases whose label holds them (`log 16`).

use std::time::Instant;

use serde_json::{json, Value};
use toolctx::select::{Terms, DEFAULT_CONTENT_BYTES};

/// bench/io.mjs `hitsPayload`: `{query, total, hits: [{path, line, score, text}]}`.
fn hits(bytes: usize) -> Value {
    let mut hits = Vec::new();
    let mut size = 40;
    let mut i = 0;
    while size < bytes {
        let hit = json!({
            "path": format!("src/{}/module_{}.ts", ["auth", "billing", "search", "db"][i % 4], i % 37),
            "line": 10 + (i * 37) % 900,
            "score": 1.0 / (1.0 + i as f64),
            "text": format!("  const token = await session.verify(request.headers.authorization, {{ maxAge: {i} }});"),
        });
        size += hit.to_string().len() + 1;
        hits.push(hit);
        i += 1;
    }
    json!({"query": "session.verify", "total": hits.len(), "hits": hits})
}

/// bench/io.mjs `textPayload`: `{path, encoding, content}`.
fn text(bytes: usize) -> Value {
    let mut lines = Vec::new();
    let mut size = 60;
    let mut i = 0;
    while size < bytes {
        let line =
            format!("export function handler{i}(req, res) {{ return res.status(200).json({{ ok: true, id: {i} }}); }}");
        size += line.len() + 2;
        lines.push(line);
        i += 1;
    }
    json!({"path": "src/routes/api.ts", "encoding": "utf8", "content": lines.join("\n")})
}

/// A service log: timestamps, levels, varied English messages and identifiers.
fn log(bytes: usize) -> Value {
    const MESSAGES: [&str; 6] = [
        "Refreshing expired access tokens for tenant",
        "GET /api/v2/users/{id}/sessions returned 401 Unauthorized (AuthError: token expired)",
        "Connection pool exhausted; waiting for an idle connection to db-primary",
        "Retrying payment webhook delivery after a timeout, attempt",
        "Cache miss for key user:profile:",
        "Indexed documents into the searchIndex shard in milliseconds",
    ];
    let mut out = String::new();
    let mut i = 0;
    while out.len() < bytes {
        let level = ["INFO", "WARN", "ERROR", "DEBUG"][i % 4];
        out.push_str(&format!(
            "2026-11-23T09:{:02}:{:02}.{:03}Z {level} worker-{} {} {}\n",
            i / 60 % 60,
            i % 60,
            i * 7 % 1000,
            i % 8,
            MESSAGES[i % MESSAGES.len()],
            i * 13
        ));
        i += 1;
    }
    json!({"stdout": out, "exitCode": 0})
}

fn time(label: &str, rounds: usize, reps: usize, mut f: impl FnMut() -> Terms) {
    // `index_speed N phases|WORDS…`: only the cases whose label holds every word given.
    if !std::env::args().skip(2).filter(|a| a != "phases").all(|w| label.contains(&w)) {
        return;
    }
    let mut per: Vec<f64> = Vec::new();
    let mut check = 0usize;
    for _ in 0..rounds {
        let t0 = Instant::now();
        for _ in 0..reps {
            check += f().merged().len();
        }
        per.push(t0.elapsed().as_secs_f64() * 1e6 / reps as f64);
    }
    per.sort_by(f64::total_cmp);
    println!("{label:<28} {:>8.1} µs   ({} terms)", per[0], check / (rounds * reps));
}

fn main() {
    let rounds = std::env::args().nth(1).and_then(|r| r.parse().ok()).unwrap_or(7);
    let cases = [
        (
            "grep",
            json!({"pattern": "session.verify", "path": "src", "maxResults": 500}),
            "hits",
            hits as fn(usize) -> Value,
        ),
        ("readFile", json!({"path": "src/routes/api_7.ts"}), "text", text),
        ("runCommand", json!({"command": "kubectl logs deploy/api --since=1h"}), "log", log),
    ];
    for (tool, args, shape, make) in cases {
        let description = format!("{tool}: {}", args.as_object().map_or(0, |o| o.len()));
        let small = make(1024).to_string();
        let large = make(64 * 1024).to_string();
        time(&format!("{shape} 1 KB record"), rounds, 2000, || {
            Terms::of_record_with_content(&description, tool, &args, Some(&small), DEFAULT_CONTENT_BYTES)
        });
        time(&format!("{shape} 16 KiB of content"), rounds, 200, || {
            Terms::of_record_with_content(&description, tool, &args, Some(&large), DEFAULT_CONTENT_BYTES)
        });
        if std::env::args().any(|a| a == "phases") {
            phases(&large);
        }
        time(&format!("{shape} metadata only"), rounds, 5000, || {
            Terms::of_record_with_content(&description, tool, &args, None, 0)
        });
    }
}

/// The 16 KiB case in parts: the JSON scan, then tokenising, then counting and stemming.
fn phases(json: &str) {
    use std::collections::HashMap;
    use toolctx::select::{for_each_index_token, for_each_string_value, stem};
    let reps = 200;
    let t = Instant::now();
    let mut n = 0;
    for _ in 0..reps {
        for_each_string_value(json, DEFAULT_CONTENT_BYTES, |s| n += s.len());
    }
    let scan = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    let t = Instant::now();
    let mut toks = 0;
    for _ in 0..reps {
        for_each_string_value(json, DEFAULT_CONTENT_BYTES, |s| {
            toks += for_each_index_token(s, |t| n += t.len());
        });
    }
    let tok = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    let t = Instant::now();
    let mut distinct = 0;
    for _ in 0..reps {
        let mut counts: HashMap<String, u32> = HashMap::new();
        for_each_string_value(json, DEFAULT_CONTENT_BYTES, |s| {
            for_each_index_token(s, |t| match counts.get_mut(t) {
                Some(c) => *c += 1,
                None => {
                    counts.insert(t.to_owned(), 1);
                }
            });
        });
        distinct = counts.len();
        for k in counts.keys() {
            n += stem(k).len();
        }
    }
    let stemmed = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    println!(
        "  scan {scan:.1} µs, +tokenize {tok:.1}, +count+stem {stemmed:.1} ({} tokens/rec, {distinct} distinct) {}",
        toks / reps,
        n % 2
    );
}
