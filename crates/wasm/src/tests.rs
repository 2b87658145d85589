//! wasm-bindgen tests of the JavaScript boundary (`make test-wasm`: in Node, then Chromium): host
//! storage calls, error mapping, and the vectors computed inside wasm.

use js_sys::{Array, Function, Object, Promise, Reflect, Uint32Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use super::interop::storage::JsStorage;
use super::manager::JsContextManager;
use toolctx::{Storage, WriteOptions};
use toolctx_core::error::ErrorKind;

#[wasm_bindgen(inline_js = r#"
export function makeHost(asPromises) {
  const files = new Map();
  const wrap = (f) => (...args) => {
    if (!asPromises) return f(...args);
    return new Promise((resolve, reject) => { try { resolve(f(...args)); } catch (e) { reject(e); } });
  };
  return {
    files,
    read: wrap((p) => files.get(p)),
    write: wrap((p, d, o) => {
      if (o && o.exclusive && files.has(p)) throw Object.assign(new Error("exists"), { code: "EEXIST" });
      files.set(p, typeof d === "string" ? d : new TextDecoder().decode(d));
    }),
    remove: wrap((p) => { files.delete(p); }),
    list: wrap((d) => [...files.keys()].filter((k) => k.startsWith(d + "/")).map((k) => k.slice(d.length + 1))),
  };
}
export function failingHost(error) {
  const host = makeHost(true);
  host.write = () => Promise.reject(error);
  return host;
}
export function lockingHost(fails) {
  const host = makeHost(true);
  host.log = [];
  host.lock = async (name, fn) => {
    if (fails) throw new Error("lock refused");
    host.log.push(`take ${name}`);
    try { return await fn(); } finally { host.log.push(`release ${name}`); }
  };
  return host;
}
export function quotaError() {
  const e = new Error("quota"); e.name = "QuotaExceededError"; return e;
}
export function options(host) {
  return { contextDir: "/ctx", fileSystem: host, persistThreshold: 0 };
}
export function cyclic() { const o = {}; o.self = o; return o; }
export function closeWith(driver, m) {
  return driver.close(m, () => m.begin({ kind: "close" }), () => {});
}
export function request(kind, fields) {
  return { kind, ...fields };
}
export function closableDefaults() {
  const host = makeHost(true);
  host.closed = 0;
  host.close = () => { host.closed++; };
  return { host, defaults: { defaultStorage: () => host, defaultContextDir: () => "/default" } };
}
"#)]
extern "C" {
    #[wasm_bindgen(js_name = makeHost)]
    fn make_host(as_promises: bool) -> JsValue;
    #[wasm_bindgen(js_name = failingHost)]
    fn failing_host(error: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = lockingHost)]
    fn locking_host(fails: bool) -> JsValue;
    #[wasm_bindgen(js_name = quotaError)]
    fn quota_error() -> JsValue;
    fn options(host: &JsValue) -> JsValue;
    fn cyclic() -> JsValue;
    #[wasm_bindgen(js_name = closableDefaults)]
    fn closable_defaults() -> JsValue;
    #[wasm_bindgen(js_name = closeWith)]
    fn close_with(driver: &JsValue, m: &JsValue) -> Promise;
    fn request(kind: &str, fields: &JsValue) -> JsValue;
}

// The package's host defaults (crates/wasm/src/interop/host.rs imports the same file).
#[wasm_bindgen(module = "/../../pkg-template/host.js")]
extern "C" {
    #[wasm_bindgen(js_name = useRuntime)]
    fn use_runtime(defaults: &JsValue);
}

// What driver.js parses a load's records with, and the op kinds it reads (the snippets
// it imports, beside it: a snippet no test names is not copied, and driver.js would not load).
#[wasm_bindgen(module = "/../../pkg-template/records.js")]
extern "C" {
    #[wasm_bindgen(js_name = parseRecord)]
    fn parse_record(value: &JsValue) -> JsValue;
}
#[wasm_bindgen(module = "/../../pkg-template/protocol.js")]
extern "C" {
    #[wasm_bindgen(thread_local_v2, js_name = OP)]
    static OP: JsValue;
}
// What driver.js joins a record's parts with (another snippet it imports, beside it).
#[wasm_bindgen(module = "/../../pkg-template/adapters/base/bytes.js")]
extern "C" {
    fn concat(parts: &Array) -> js_sys::Uint8Array;
}

#[wasm_bindgen_test]
fn a_records_parts_join_into_the_bytes_of_the_whole_record() {
    let part = |b: &[u8]| js_sys::Uint8Array::from(b);
    let parts = Array::of3(&part(b"{\"result\":"), &part(b"\"ok\""), &part(b"}"));
    assert_eq!(concat(&parts).to_vec(), br#"{"result":"ok"}"#);
}

// The package's own driver follows the plans, as in the package.
#[wasm_bindgen(module = "/../../pkg-template/driver.js")]
extern "C" {
    #[wasm_bindgen(js_name = createDriver)]
    fn create_driver(core: &JsValue, on_trap: &Function) -> JsValue;
}

thread_local! {
    static DRIVER: JsValue = {
        let core = Object::new();
        let step = Closure::<dyn Fn(u32, Array) -> JsValue>::new(super::plans::plan_step).into_js_value();
        Reflect::set(&core, &"__planStep".into(), &step).unwrap();
        create_driver(&core, &Function::new_with_args("err", "return err"))
    };
}

fn get(v: &JsValue, k: &str) -> JsValue {
    Reflect::get(v, &k.into()).unwrap()
}

/// `close()` of the manager `m` (a JavaScript object), as the package runs it (driver.js:
/// `close`).
async fn close(m: &JsValue) -> Result<JsValue, JsValue> {
    let driver = DRIVER.with(Clone::clone);
    JsFuture::from(close_with(&driver, m)).await
}

/// `{kind, ...fields}`: what the package asks of a manager (crates/wasm/src/interop/requests.rs).
fn ask(kind: &str, fields: &[(&str, JsValue)]) -> JsValue {
    let o = Object::new();
    for (k, v) in fields {
        Reflect::set(&o, &(*k).into(), v).unwrap();
    }
    request(kind, &o)
}

/// The outcome of the plan (crates/wasm/src/plans.rs) whose first step is `step` (driver.js: `plan`).
async fn plan(step: JsValue) -> Result<JsValue, JsValue> {
    let driver = DRIVER.with(Clone::clone);
    let plan: Function = get(&driver, "plan").dyn_into().unwrap();
    let promise: Promise = plan.call1(&driver, &step).unwrap().dyn_into().unwrap();
    JsFuture::from(promise).await
}

/// The error of `saveContext("t", {}, result)`, which must fail.
async fn save_failing(m: &JsContextManager, result: JsValue) -> JsValue {
    m.save_context("t".into(), Object::new().into(), result, JsValue::UNDEFINED, JsValue::UNDEFINED).await.unwrap_err()
}

#[wasm_bindgen_test]
async fn sync_and_async_hosts_behave_alike() {
    for as_promises in [false, true] {
        let storage = JsStorage::new(make_host(as_promises), "/").unwrap();
        host_round_trip(&storage).await;
    }
}

async fn host_round_trip(storage: &JsStorage) {
    {
        assert_eq!(storage.read("/a").await.unwrap(), None);
        storage.write("/d/a", b"one", WriteOptions { exclusive: true }).await.unwrap();
        assert_eq!(storage.read("/d/a").await.unwrap().as_deref(), Some(&b"one"[..]));
        let taken = storage.write("/d/a", b"two", WriteOptions { exclusive: true }).await.unwrap_err();
        assert_eq!(taken.kind(), ErrorKind::AlreadyExists);
        assert_eq!(storage.list("/d").await.unwrap(), ["a"]);
        storage.remove("/d/a").await.unwrap();
        storage.remove("/d/a").await.unwrap();
        assert_eq!(storage.read("/d/a").await.unwrap(), None);
    }
}

#[wasm_bindgen_test]
async fn work_under_a_storage_lock_runs_inside_the_host_lock() {
    let host = locking_host(false);
    let storage = JsStorage::new(host.clone(), "/").unwrap();
    let log: Array = get(&host, "log").dyn_into().unwrap();
    let inside = storage.locked("m", async { log.push(&"work".into()) }).await.unwrap();
    assert_eq!(inside, 2, "the work ran once the lock was taken, and gave its value");
    let logged: Vec<String> = log.iter().map(|v| v.as_string().unwrap()).collect();
    assert_eq!(logged, ["take m", "work", "release m"]);

    let refused = JsStorage::new(locking_host(true), "/").unwrap();
    let err = refused.locked("m", async { panic!("no work without the lock") }).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Storage);
    assert!(err.to_string().contains("lock refused"), "{err}");
}

#[wasm_bindgen_test]
async fn save_and_load_through_a_js_host() {
    let host = make_host(true);
    let m = JsContextManager::new(options(&host)).unwrap();
    let mut paths = Vec::new();
    for (tool, args, result, task) in [
        ("listDirectory", r#"{"path":"docs"}"#, "intro.md", 1),
        ("grep", r#"{"pattern":"AuthError","dir":"src/auth"}"#, "errors.ts:3", 1),
        ("readFile", r#"{"path":"src/auth/login.ts"}"#, "body", 7),
    ] {
        let args = js_sys::JSON::parse(args).unwrap();
        let saved = m.save_context(tool.into(), args, result.into(), task.into(), JsValue::UNDEFINED).await;
        paths.push(saved.unwrap().as_string().unwrap());
    }
    // loadContexts is a plan: a `run` step of a `readRecord` op for each record in storage
    // (both were written: persistThreshold 0), in the order asked; a path outside the
    // store (asked second) is skipped. The driver reads each record and keeps it
    // (records.js parses it), answering `{kept, size}`: the number it keeps it under and
    // its bytes (as the pointer's: it was not rewritten); the plan ends with those numbers
    // in the order asked.
    let asked = Array::of3(&paths[2].as_str().into(), &"/elsewhere/x.json".into(), &paths[0].as_str().into());
    let step = m.begin(ask("load", &[("filepaths", asked.into())])).unwrap();
    assert_eq!(get(&step, "kind").as_string().as_deref(), Some("run"));
    let ops: Vec<(String, String)> = Array::from(&get(&step, "ops"))
        .iter()
        .map(|op| (get(&op, "op").as_string().unwrap(), get(&op, "path").as_string().unwrap()))
        .collect();
    let read_record = |path: &String| (OP.with(|kinds| get(kinds, "READ_RECORD")).as_string().unwrap(), path.clone());
    assert_eq!(ops, [read_record(&paths[2]), read_record(&paths[0])]);
    let storage = get(&step, "storage");
    let read: Function = get(&storage, "read").into();
    let mut records = Vec::new();
    let mut sizes = Vec::new();
    for (_, path) in &ops {
        let called = read.call2(&get(&storage, "host"), &path.into(), &get(&storage, "readOptions")).unwrap();
        let text = JsFuture::from(Promise::from(called)).await.unwrap();
        sizes.push(text.as_string().map_or_else(|| js_sys::Uint8Array::new(&text).length(), |t| t.len() as u32));
        records.push(parse_record(&text));
    }
    // Kept the other way round: the plan gives the numbers in the order asked.
    let kept = |at: u32, size: u32| {
        let value = Object::new();
        Reflect::set(&value, &"kept".into(), &at.into()).unwrap();
        Reflect::set(&value, &"size".into(), &size.into()).unwrap();
        let outcome = Object::new();
        Reflect::set(&outcome, &"ok".into(), &true.into()).unwrap();
        Reflect::set(&outcome, &"value".into(), &value).unwrap();
        JsValue::from(outcome)
    };
    let id = get(&step, "id").as_f64().unwrap() as u32;
    let done = crate::plans::plan_step(id, Array::of2(&kept(1, sizes[0]), &kept(0, sizes[1])));
    assert_eq!(get(&done, "kind").as_string().as_deref(), Some("done"));
    assert_eq!(Uint32Array::from(get(&done, "kept")).to_vec(), [1, 0]);
    assert_eq!(get(&records[0], "result").as_string().as_deref(), Some("body"));
    assert_eq!(get(&records[0], "taskId").as_f64(), Some(7.0));
    assert!(get(&records[0], "queryId").is_undefined());
    assert_eq!(get(&records[1], "result").as_string().as_deref(), Some("intro.md"));

    // Ranking over three pointers, so a wrong answer is possible: only the relevant
    // ones, best first; every pointer in the given order only when none matches.
    let slots = m.query(ask("slots", &[])).unwrap();
    let pointers = js_sys::JSON::parse(&m.query(ask("pointers", &[("slots", slots)])).unwrap().as_string().unwrap());
    let pointers = pointers.unwrap();
    let select = |query: &str, fallback: Option<&str>| {
        let options = js_sys::Object::new();
        if let Some(f) = fallback {
            Reflect::set(&options, &"fallback".into(), &f.into()).unwrap();
        }
        let fields = [("query", query.into()), ("pointers", pointers.clone()), ("options", options.into())];
        let out = Uint32Array::from(m.query(ask("selectListed", &fields)).unwrap()).to_vec();
        out.iter().map(|&i| paths[i as usize].clone()).collect::<Vec<_>>()
    };
    assert_eq!(select("login", None), [paths[2].clone()]);
    assert_eq!(select("auth login", None), [paths[2].clone(), paths[1].clone()]);
    assert_eq!(select("zebra", Some("all")), paths);
    assert!(select("zebra", Some("none")).is_empty());
}

#[wasm_bindgen_test]
async fn errors_carry_a_code_and_the_host_cause() {
    let quota = quota_error();
    let m = JsContextManager::new(options(&failing_host(quota.clone()))).unwrap();
    let err = save_failing(&m, 1.into()).await;
    assert!(err.is_instance_of::<js_sys::Error>());
    assert_eq!(get(&err, "code").as_string().as_deref(), Some("QUOTA_EXCEEDED"));
    assert_eq!(get(&err, "cause"), quota);
    assert_eq!(m.query(ask("size", &[])).unwrap().as_f64(), Some(0.0));

    let m = JsContextManager::new(options(&make_host(false))).unwrap();
    let err = save_failing(&m, cyclic()).await;
    assert_eq!(get(&err, "code").as_string().as_deref(), Some("NOT_SERIALIZABLE"));
    assert!(get(&err, "cause").is_instance_of::<js_sys::TypeError>());
    let bad = JsContextManager::new(JsValue::from("nope")).err().unwrap();
    assert_eq!(get(&bad, "code").as_string().as_deref(), Some("INVALID_ARGUMENT"));
}

#[wasm_bindgen_test]
fn vectors_hash_alike_in_wasm() {
    let doc: serde_json::Value = serde_json::from_str(include_str!("../../../tests/vectors/hash_query.json")).unwrap();
    for v in doc["vectors"].as_array().unwrap() {
        let hash = ask("hashQuery", &[("query", v["query"].as_str().unwrap().into())]);
        let id = JsContextManager::compute(hash).unwrap();
        assert_eq!(id.as_string().as_deref(), v["id"].as_str());
    }
    let doc: serde_json::Value = serde_json::from_str(include_str!("../../../tests/vectors/canonical.json")).unwrap();
    for v in doc["vectors"].as_array().unwrap() {
        let args: serde_json::Value = serde_json::from_str(v["json"].as_str().unwrap()).unwrap();
        assert_eq!(toolctx_core::naming::args_hash(&args).unwrap(), v["sha256"].as_str().unwrap());
    }
}

#[wasm_bindgen_test]
async fn close_closes_the_default_storage_it_made_once_and_never_one_given() {
    let made = closable_defaults();
    let host = get(&made, "host");
    use_runtime(&get(&made, "defaults"));
    let own: JsValue = JsContextManager::new(JsValue::UNDEFINED).unwrap().into();
    let given: JsValue = JsContextManager::new(options(&host)).unwrap().into();
    use_runtime(&Object::new());
    close(&given).await.unwrap();
    assert_eq!(get(&host, "closed").as_f64(), Some(0.0), "a storage passed in stays the caller's");
    close(&own).await.unwrap();
    close(&own).await.unwrap();
    assert_eq!(get(&host, "closed").as_f64(), Some(1.0), "the default storage is closed once");
    let begin: Function = get(&own, "begin").dyn_into().unwrap();
    let err = plan(begin.call1(&own, &ask("flush", &[])).unwrap()).await.unwrap_err();
    assert_eq!(get(&err, "code").as_string().as_deref(), Some("CLOSED"));
}

#[wasm_bindgen_test]
fn compute_answers_with_no_manager_and_names_what_is_wrong() {
    let code = |r: Result<JsValue, JsValue>| get(&r.unwrap_err(), "code").as_string();
    let matching = |pattern: JsValue, text: &str| {
        JsContextManager::compute(ask("matchingLines", &[("pattern", pattern), ("text", text.into())]))
    };
    let lines = |r: Result<JsValue, JsValue>| r.unwrap().dyn_into::<Uint32Array>().unwrap().to_vec();
    assert_eq!(lines(matching("(a+)+$".into(), "aaa!\naaa\nb")), vec![1]);
    // Asked again, chunk after chunk, and after more patterns than are kept compiled.
    for (pattern, found) in [("b", vec![1]), ("c", vec![]), ("d", vec![]), ("e", vec![]), ("(a+)+$", vec![0])] {
        assert_eq!(lines(matching(pattern.into(), "aaa\nb")), found, "{pattern}");
    }
    assert_eq!(code(matching("a(?=b)".into(), "")).as_deref(), Some("INVALID_ARGUMENT"));
    assert_eq!(code(matching(3.into(), "")).as_deref(), Some("INVALID_ARGUMENT"));
    // A field the package makes, wrong: INTERNAL, naming it.
    let wrong = JsContextManager::compute(ask("matchingLines", &[("pattern", "a".into())])).unwrap_err();
    assert_eq!(get(&wrong, "code").as_string().as_deref(), Some("INTERNAL"));
    assert!(get(&wrong, "message").as_string().unwrap().contains("compute.text"));
    let unknown = JsContextManager::compute(ask("nope", &[])).unwrap_err();
    assert!(get(&unknown, "message").as_string().unwrap().contains("compute.kind"));
    let view = JsContextManager::compute(ask("lines", &[("resultJson", r#"{"a":1,"b":[2,3]}"#.into())]));
    assert!(view.unwrap().as_string().is_some());
    assert_eq!(
        code(JsContextManager::compute(ask("hashQuery", &[("query", 1.into())]))).as_deref(),
        Some("INVALID_ARGUMENT")
    );
}

#[wasm_bindgen_test]
async fn open_is_a_plan_that_resolves_to_the_manager_and_a_failed_one_to_its_error() {
    let host = make_host(true);
    let options = options(&host);
    Reflect::set(&options, &"session".into(), &true.into()).unwrap();
    let handle = plan(JsContextManager::start(options.clone(), ask("open", &[])).unwrap()).await.unwrap();
    let begin: Function = get(&handle, "begin").dyn_into().unwrap();
    plan(begin.call1(&handle, &ask("flush", &[])).unwrap()).await.unwrap();
    Reflect::set(&options, &"session".into(), &"20200101-000000-none".into()).unwrap();
    let err = plan(JsContextManager::start(options, ask("open", &[])).unwrap()).await.unwrap_err();
    assert_eq!(get(&err, "code").as_string().as_deref(), Some("NOT_FOUND"));
    // Options that are wrong fail the plan; a request the package made wrong throws.
    let err = plan(JsContextManager::start("nope".into(), ask("open", &[])).unwrap()).await.unwrap_err();
    assert_eq!(get(&err, "code").as_string().as_deref(), Some("INVALID_ARGUMENT"));
    let thrown = JsContextManager::start(JsValue::UNDEFINED, ask("storewide", &[])).unwrap_err();
    assert!(get(&thrown, "message").as_string().unwrap().contains("work.kind"));
}
