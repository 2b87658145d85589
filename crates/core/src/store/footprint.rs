//! Where the pointer table's memory goes, structure by structure (tests only).
//!
//! A [`Meter`] walks the manager's state and counts, per structure, the bytes each heap
//! allocation asks for and the bytes the allocator gives it. The allocator is modelled
//! as wasm32's (Rust's dlmalloc port): a chunk is the request plus a 4-byte header,
//! rounded up to 8, and at least 16 bytes. Hash tables are modelled as hashbrown lays
//! them out: a power of two of buckets, each slot plus one control byte, in one
//! allocation. Run it with `cargo test -p toolctx-core --lib footprint -- --ignored --nocapture`
//! (the structures' own sizes are the native target's, 64-bit; this crate has no
//! wasm-bindgen, so the report no longer runs in wasm32 itself, where it measured the
//! memory grown too).

use std::mem::size_of;
use std::rc::Rc;

pub(crate) use toolctx_search::footprint::Meter;

use super::Entry;
use crate::naming::StoredPath;
use crate::store::Manager;
use crate::testing::TestStorage;

impl Entry {
    pub(super) fn footprint(&self, m: &mut Meter) {
        if let StoredPath::Text(text) = &self.filepath {
            m.shared("entry: path text (not record-name form)", text);
        }
        if let Some(rare) = &self.rare {
            m.alloc("entry: rare", size_of::<super::entry::Rare>());
            for text in [&rare.tool_description, &rare.tool_call_id, &rare.args_hash].into_iter().flatten() {
                m.alloc("entry: rare", text.len());
            }
            if let Some(super::entry::Stamp::Text(text)) = &rare.timestamp {
                m.alloc("entry: rare", text.len());
            }
        }
    }
}

/// The bench's corpus (bench/select.mjs `corpus`, `smallResult`, `queryIdOf`): the same
/// generator, so the same tools, args and results.
struct Corpus {
    s: u32,
}

const AREAS: &[&str] =
    &["auth", "billing", "search", "db", "api", "ui", "jobs", "notify", "admin", "reports", "cache", "storage"];
const PARTS: &str = "session token login logout password reset invoice payment refund subscription plan index query \
ranking crawler schema migration route handler middleware controller component modal form table chart \
worker queue retry email webhook sms user role permission audit export import upload bucket config";
const EXT: &[&str] = &["ts", "tsx", "test.ts", "md", "json", "sql"];
const VERBS: &[&str] =
    &["get", "create", "update", "delete", "validate", "parse", "render", "fetch", "handle", "build"];

impl Corpus {
    fn r(&mut self) -> f64 {
        self.s = self.s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        f64::from(self.s) / 4_294_967_296.0
    }

    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.r() * xs.len() as f64) as usize]
    }

    fn capital(s: &str) -> String {
        s[..1].to_uppercase() + &s[1..]
    }

    /// `n` calls: (tool, args JSON, result JSON).
    fn calls(n: usize) -> Vec<(&'static str, String, String)> {
        let parts: Vec<&str> = PARTS.split(' ').collect();
        let mut c = Corpus { s: 7 };
        let files: Vec<String> = (0..3000)
            .map(|i| {
                let area = c.pick(AREAS);
                let (a, b, d) = (c.pick(&parts), c.pick(&parts), c.pick(&parts));
                let num = if i % 7 != 0 { String::new() } else { i.to_string() };
                format!("src/{area}/{a}/{b}{}{num}.{}", Self::capital(d), c.pick(EXT))
            })
            .collect();
        let json = |v: serde_json::Value| v.to_string();
        (0..n)
            .map(|i| {
                let kind = c.r();
                let (tool, args) = if kind < 0.45 {
                    let f = &files[(c.r() * files.len() as f64) as usize];
                    ("readFile", serde_json::json!({ "path": f }))
                } else if kind < 0.65 {
                    let ident = format!("{}{}", c.pick(VERBS), Self::capital(c.pick(&parts)));
                    ("grep", serde_json::json!({ "pattern": ident, "path": format!("src/{}", c.pick(AREAS)) }))
                } else if kind < 0.8 {
                    let q = format!("{} {} {}", c.pick(&parts), c.pick(&parts), c.pick(AREAS));
                    ("searchCode", serde_json::json!({ "query": q }))
                } else if kind < 0.88 {
                    (
                        "listDirectory",
                        serde_json::json!({ "path": format!("src/{}/{}", c.pick(AREAS), c.pick(&parts)) }),
                    )
                } else if kind < 0.95 {
                    let url =
                        format!("https://docs.example.com/{}/{}-{}", c.pick(AREAS), c.pick(&parts), c.pick(&parts));
                    ("fetchPage", serde_json::json!({ "url": url }))
                } else {
                    (
                        "runCommand",
                        serde_json::json!({ "command": format!("npm test -- {}/{}", c.pick(AREAS), c.pick(&parts)) }),
                    )
                };
                let first = args.as_object().and_then(|o| o.values().next()).and_then(|v| v.as_str()).unwrap_or("");
                let lines: Vec<String> = (1..=3)
                    .map(|k| {
                        let at = (i * 7 + k * 13) % 500;
                        format!("{first}:{at}: const {} = await load({k});", parts[(i + k) % parts.len()])
                    })
                    .collect();
                (tool, json(args), json(serde_json::json!({ "total": 3, "lines": lines })))
            })
            .collect()
    }
}

/// The bench's "default" store: the saves of `calls` (small results) with the default
/// options, over a storage that keeps nothing (as the bench's: every record goes to a
/// disk elsewhere).
fn build(calls: &[(&'static str, String, String)]) -> Manager {
    // A fixed clock and random part: the names differ by their counter.
    let options = crate::Options::with("/bench", Rc::new(|| 1_795_811_832_434), Rc::new(|| Ok(0.5)));
    let m = Manager::new(options).unwrap();
    let files = TestStorage::discard();
    for (i, (tool, args, result)) in calls.iter().enumerate() {
        let input = crate::SaveInput {
            tool_name: tool,
            args_json: args,
            result_json: Some(result),
            task_id: Some((i % 10).into()),
            query_id: Some(format!("query-{}", i % 10)),
            ..crate::SaveInput::default()
        };
        files.save(&m, input).unwrap();
    }
    m
}

fn report(m: &Manager) -> String {
    let mut meter = Meter::default();
    m.state.borrow().footprint(&mut meter);
    let terms = m.state.borrow().live.terms();
    format!("{} pointers, {} terms\n{}", m.len(), terms, meter.report(m.len()))
}

#[test]
#[ignore = "a report: cargo test -p toolctx-core --lib footprint -- --ignored --nocapture"]
fn footprint_of_the_bench_store() {
    let m = build(&Corpus::calls(100_000));
    println!("{}", report(&m));
}
