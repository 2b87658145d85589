//! wasm-bindgen tests of the JavaScript boundary (`wasm-pack test --node`): host
//! storage calls, error mapping, and the vectors computed inside wasm.

use js_sys::{Array, Promise, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

use super::manager::JsContextManager;
use super::storage::JsStorage;
use crate::error::ErrorKind;
use crate::storage::{Storage, WriteOptions};

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
export function quotaError() {
  const e = new Error("quota"); e.name = "QuotaExceededError"; return e;
}
export function options(host) {
  return { contextDir: "/ctx", fileSystem: host, persistThreshold: 0 };
}
export function cyclic() { const o = {}; o.self = o; return o; }
"#)]
extern "C" {
    #[wasm_bindgen(js_name = makeHost)]
    fn make_host(as_promises: bool) -> JsValue;
    #[wasm_bindgen(js_name = failingHost)]
    fn failing_host(error: JsValue) -> JsValue;
    #[wasm_bindgen(js_name = quotaError)]
    fn quota_error() -> JsValue;
    fn options(host: &JsValue) -> JsValue;
    fn cyclic() -> JsValue;
}

fn get(v: &JsValue, k: &str) -> JsValue {
    Reflect::get(v, &k.into()).unwrap()
}

async fn settle(p: Promise) -> Result<JsValue, JsValue> {
    JsFuture::from(p).await
}

#[wasm_bindgen_test]
async fn sync_and_async_hosts_behave_alike() {
    for as_promises in [false, true] {
        let storage = JsStorage::new(make_host(as_promises), "/").unwrap();
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
async fn save_and_load_through_a_js_host() {
    let host = make_host(true);
    let m = JsContextManager::new(options(&host)).unwrap();
    let args = js_sys::JSON::parse(r#"{"path":"src/auth/login.ts"}"#).unwrap();
    let path =
        settle(m.save_context("readFile".into(), args, "body".into(), 7.into(), JsValue::UNDEFINED)).await.unwrap();
    let list = Array::of1(&path);
    let loaded = settle(m.load_contexts(list.into())).await.unwrap();
    let record = Array::from(&loaded).get(0);
    assert_eq!(get(&record, "result").as_string().as_deref(), Some("body"));
    assert_eq!(get(&record, "taskId").as_f64(), Some(7.0));
    assert!(get(&record, "queryId").is_undefined());
    let pointers = m.pointers(&m.slots(0, JsValue::UNDEFINED));
    let joined = Array::from(&pointers).get(0);
    let joined = get(&joined, "filepath").as_string().unwrap();
    let ranked = m.select_paths("login".into(), pointers, JsValue::UNDEFINED, joined.clone()).unwrap();
    assert_eq!(ranked, joined);
}

#[wasm_bindgen_test]
async fn errors_carry_a_code_and_the_host_cause() {
    let quota = quota_error();
    let m = JsContextManager::new(options(&failing_host(quota.clone()))).unwrap();
    let err = settle(m.save_context(
        "t".into(),
        js_sys::Object::new().into(),
        1.into(),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap_err();
    assert!(err.is_instance_of::<js_sys::Error>());
    assert_eq!(get(&err, "code").as_string().as_deref(), Some("QUOTA_EXCEEDED"));
    assert_eq!(get(&err, "cause"), quota);
    assert_eq!(m.size(), 0);

    let m = JsContextManager::new(options(&make_host(false))).unwrap();
    let err = settle(m.save_context(
        "t".into(),
        js_sys::Object::new().into(),
        cyclic(),
        JsValue::UNDEFINED,
        JsValue::UNDEFINED,
    ))
    .await
    .unwrap_err();
    assert_eq!(get(&err, "code").as_string().as_deref(), Some("NOT_SERIALIZABLE"));
    assert!(get(&err, "cause").is_instance_of::<js_sys::TypeError>());
    let bad = JsContextManager::new(JsValue::from("nope")).err().unwrap();
    assert_eq!(get(&bad, "code").as_string().as_deref(), Some("INVALID_ARGUMENT"));
}

#[wasm_bindgen_test]
fn vectors_hash_alike_in_wasm() {
    let doc: serde_json::Value = serde_json::from_str(include_str!("../../tests/vectors/hash_query.json")).unwrap();
    for v in doc["vectors"].as_array().unwrap() {
        let id = JsContextManager::hash_query(v["query"].as_str().unwrap().into()).unwrap();
        assert_eq!(id, v["id"].as_str().unwrap());
    }
    let doc: serde_json::Value = serde_json::from_str(include_str!("../../tests/vectors/canonical.json")).unwrap();
    for v in doc["vectors"].as_array().unwrap() {
        let args: serde_json::Value = serde_json::from_str(v["json"].as_str().unwrap()).unwrap();
        assert_eq!(crate::naming::args_hash(&args).unwrap(), v["sha256"].as_str().unwrap());
    }
}
