//! [`Storage`] over a [`JsStorage`], for the wasm tests only: they drive the core's async
//! API (the `toolctx` crate) in wasm, awaiting the host's Promises with `wasm-bindgen-futures`.
//! The package's modules compile none of it: their workflows are steps the JavaScript
//! driver runs.

use js_sys::{Array, Function, Object, Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

use super::interop::body;
use super::interop::steps;
use super::interop::storage::{host_failure, list_names, method, read_bytes, JsStorage};
use toolctx::{Storage, WriteOptions};
use toolctx_core::error::Result;

impl JsStorage {
    /// The host's method `name` called and its value awaited (a plain value or a
    /// thenable), its failure typed.
    async fn call(&self, op: &str, path: &str, name: &str, args: &[JsValue]) -> Result<JsValue> {
        let f = method(&self.host, name).unwrap_or_else(|| Function::new_no_args(""));
        let args: Array = args.iter().collect();
        let settled = match f.apply(&self.host, &args) {
            Ok(value) => JsFuture::from(Promise::resolve(&value)).await,
            Err(e) => Err(e),
        };
        settled.map_err(|e| host_failure(op, path, e))
    }

    /// The host's `lock`, or `undefined` (then the driver gives this process's turns at
    /// a lock name alone).
    fn lock_fn(&self) -> JsValue {
        method(&self.host, "lock").map_or(JsValue::UNDEFINED, JsValue::from)
    }

    /// What the host's `read` gives (bytes or a string), not copied into wasm; `None`
    /// when the file does not exist.
    pub async fn read_value(&self, path: &str) -> Result<Option<JsValue>> {
        let value = self.call("read", path, "read", &[path.into(), read_options(self)]).await?;
        Ok((!value.is_undefined() && !value.is_null()).then_some(value))
    }
}

/// `{root}`, as the steps carry it (`readOptions`).
fn read_options(storage: &JsStorage) -> JsValue {
    Reflect::get(storage.js(), &"readOptions".into()).unwrap_or(JsValue::UNDEFINED)
}

fn write_options(options: WriteOptions) -> JsValue {
    let opts = Object::new();
    let _ = Reflect::set(&opts, &"exclusive".into(), &options.exclusive.into());
    opts.into()
}

impl Storage for JsStorage {
    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        match self.read_value(path).await? {
            Some(value) => read_bytes(value, path),
            None => Ok(None),
        }
    }

    /// The host's `maxValueBytes` (the inherent method, read when the storage was made).
    fn max_value_bytes(&self) -> Option<usize> {
        JsStorage::max_value_bytes(self)
    }

    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> Result<()> {
        let bytes = Uint8Array::from(data);
        self.call("write", path, "write", &[path.into(), bytes.into(), write_options(options)]).await?;
        Ok(())
    }

    fn body(&self, handle: u32) -> Option<Vec<u8>> {
        body::held(handle).map(|b| b.to_vec())
    }

    async fn remove(&self, path: &str) -> Result<()> {
        self.call("remove", path, "remove", &[path.into()]).await?;
        Ok(())
    }

    /// The host's `append` when it has one; else a read and a whole-file write (not atomic).
    async fn append(&self, path: &str, data: &[u8]) -> Result<()> {
        if method(&self.host, "append").is_none() {
            let mut bytes = self.read(path).await?.unwrap_or_default();
            bytes.extend_from_slice(data);
            return self.write(path, &bytes, WriteOptions::default()).await;
        }
        self.call("append", path, "append", &[path.into(), Uint8Array::from(data).into()]).await?;
        Ok(())
    }

    async fn list(&self, dir: &str) -> Result<Vec<String>> {
        list_names(self.call("list", dir, "list", &[dir.into()]).await?, dir)
    }

    async fn remove_dir(&self, path: &str) -> Result<()> {
        if method(&self.host, "removeDir").is_some() {
            self.call("removeDir", path, "removeDir", &[path.into()]).await?;
        }
        Ok(())
    }

    /// `host.lock(name, fn)` through the driver's `hold` (driver.js), as the plans take
    /// it: this process's turn at the name first, then the host's lock (none: the turn
    /// alone), held from the callback's call until `work` is done and the host's `lock`
    /// has settled.
    async fn locked<T>(&self, name: &str, work: impl std::future::Future<Output = T>) -> Result<T> {
        let failed = |v: JsValue| host_failure("lock", name, v);
        let lock = hold(&self.host, &self.lock_fn(), name);
        let part = |key: &str| Reflect::get(&lock, &key.into()).unwrap_or(JsValue::UNDEFINED);
        // `held`: an outcome (crates/wasm/src/interop/steps.rs), once held or once the lock failed before.
        let held = JsFuture::from(Promise::resolve(&part("held"))).await.map_err(failed)?;
        steps::outcome(&held).map_err(failed)?;
        let out = work.await;
        if let Some(release) = part("release").dyn_ref::<Function>() {
            let _ = release.call0(&JsValue::UNDEFINED);
        }
        // `settled`: the outcome of the host's lock.
        let settled = JsFuture::from(Promise::resolve(&part("settled"))).await.map_err(failed)?;
        steps::outcome(&settled).map_err(failed)?;
        Ok(out)
    }
}

// The driver's lock holder (pkg-template/driver.js, a snippet for the wasm-bindgen tests).
#[wasm_bindgen(module = "/../../pkg-template/driver.js")]
extern "C" {
    fn hold(host: &JsValue, lock: &JsValue, name: &str) -> JsValue;
}
