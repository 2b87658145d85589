//! `JsStorage`: the core's [`Storage`] over a JavaScript host object (SPEC §4).
//!
//! Host methods may return a value or a Promise; a synchronous throw and a rejection
//! are both turned into typed errors with the host's error as `cause`: `EEXIST` stays
//! "already exists", out-of-space errors become `QUOTA_EXCEEDED`, the rest `STORAGE`.

use std::fmt;

use js_sys::{Array, ArrayBuffer, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::body;
use super::tasks::HostCall;

use crate::error::{Error, ErrorKind, Result};
use crate::plan::{Got, Op, Outcome};
use crate::storage::{Storage, WriteOptions};

/// A JavaScript value thrown or rejected by the host, kept as an error's source.
pub struct HostError(pub JsValue);

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let message = Reflect::get(&self.0, &"message".into())
            .ok()
            .and_then(|m| m.as_string())
            .or_else(|| self.0.as_string())
            .unwrap_or_else(|| "host error".to_owned());
        f.write_str(&message)
    }
}

impl fmt::Debug for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HostError({self})")
    }
}

impl std::error::Error for HostError {}

/// The host object and its methods, looked up once.
pub struct JsStorage {
    host: JsValue,
    /// `{root}`: the store folder, passed to `read` so file-system adapters can refuse
    /// a read that a symbolic link would take outside it.
    read_options: Object,
    read: Function,
    write: Function,
    remove: Function,
    list: Function,
    remove_dir: Option<Function>,
    lock: Option<Function>,
    append: Option<Function>,
    /// `close_entry` ran: the host's `close()` is called once.
    closed: std::cell::Cell<bool>,
}

fn method(host: &JsValue, name: &str) -> Option<Function> {
    Reflect::get(host, &name.into()).ok()?.dyn_into::<Function>().ok()
}

/// Whether `value` has the four required host methods.
pub fn is_storage_host(value: &JsValue) -> bool {
    value.is_object() && ["read", "write", "remove", "list"].iter().all(|m| method(value, m).is_some())
}

impl JsStorage {
    /// Wraps a host object for a store in `root`; it must have `read`, `write`,
    /// `remove` and `list`.
    pub fn new(host: JsValue, root: &str) -> Result<Self> {
        let required = |name: &str| {
            method(&host, name).ok_or_else(|| Error::invalid(format!("the storage has no {name}() method")))
        };
        Ok(JsStorage {
            read: required("read")?,
            write: required("write")?,
            remove: required("remove")?,
            list: required("list")?,
            remove_dir: method(&host, "removeDir"),
            lock: method(&host, "lock"),
            append: method(&host, "append"),
            closed: std::cell::Cell::new(false),
            read_options: {
                let o = Object::new();
                let _ = Reflect::set(&o, &"root".into(), &root.into());
                o
            },
            host,
        })
    }

    /// What the host says it is (adapters set `description`), or `custom storage`.
    pub fn description(&self) -> String {
        Reflect::get(&self.host, &"description".into())
            .ok()
            .and_then(|d| d.as_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| "custom storage".to_owned())
    }

    /// The call of the host's `close()` as a step's operation (see `op_entry`), once: for
    /// a storage its manager made itself; `None` when it has none or it was called.
    pub fn close_entry(&self) -> Option<Array> {
        if self.closed.replace(true) {
            return None;
        }
        let close = method(&self.host, "close")?;
        Some(Array::of4(&1.into(), &self.host, &close, &Array::new()))
    }

    /// `f` called on the host by the driver (see `tasks`), its failure typed.
    async fn call(&self, op: &str, path: &str, f: &Function, args: &[JsValue]) -> Result<JsValue> {
        HostCall::new(&self.host, f, args).await.map_err(|e| host_failure(op, path, e))
    }

    /// What the driver writes a new record with: the host, its `write` and its `remove`.
    pub fn record_writer(&self) -> (&JsValue, &Function, &Function) {
        (&self.host, &self.write, &self.remove)
    }

    /// The host object and the options its `read` takes (`{root}`), for the JavaScript
    /// that runs the calls itself (window.js: the window module runs no tasks).
    #[cfg_attr(not(feature = "window"), allow(dead_code))]
    pub fn host(&self) -> (&JsValue, &Object) {
        (&self.host, &self.read_options)
    }
}

impl JsStorage {
    /// The host's `lock`, or `undefined`.
    fn lock_fn(&self) -> JsValue {
        self.lock.as_ref().map_or(JsValue::UNDEFINED, |f| f.clone().into())
    }

    /// An operation of a step as the driver runs it (driver.js, `runOps`): `[1, host,
    /// fn, args]` a host call, `[2, host, lock, name]` take a lock (`lock` undefined: only
    /// this process's turn), `[3]` release it, `[0]` nothing to do (no `removeDir`).
    pub fn op_entry(&self, op: &Op) -> Array {
        let call = |f: &Function, args: &[JsValue]| {
            let args: Array = args.iter().collect();
            Array::of4(&1.into(), &self.host, f, &args)
        };
        match op {
            Op::Read(path) => call(&self.read, &[path.into(), self.read_options.clone().into()]),
            Op::Write { path, bytes, exclusive } => call(
                &self.write,
                &[
                    path.into(),
                    Uint8Array::from(&bytes[..]).into(),
                    write_options(WriteOptions { exclusive: *exclusive }),
                ],
            ),
            Op::Remove(path) => call(&self.remove, &[path.into()]),
            Op::List(dir) => call(&self.list, &[dir.into()]),
            Op::RemoveDir(path) => match &self.remove_dir {
                Some(f) => call(f, &[path.into()]),
                None => Array::of1(&0.into()),
            },
            Op::Lock(name) => Array::of4(&2.into(), &self.host, &self.lock_fn(), &name.into()),
            Op::Unlock => Array::of1(&3.into()),
        }
    }

    /// What the host gave for `op` (`ok`: its value, else what it threw), typed.
    pub fn outcome(&self, op: &Op, ok: bool, value: JsValue) -> Outcome {
        let (name, path) = match op {
            Op::Read(p) => ("read", p),
            Op::Write { path, .. } => ("write", path),
            Op::Remove(p) => ("remove", p),
            Op::List(p) => ("list", p),
            Op::RemoveDir(p) => ("removeDir", p),
            Op::Lock(p) => ("lock", p),
            Op::Unlock => ("lock", &String::new()),
        };
        if !ok {
            return Err(host_failure(name, path, value));
        }
        match op {
            Op::Read(path) => read_bytes(value, path).map(Got::Bytes),
            Op::List(dir) => names_of(value, dir).map(Got::Names),
            _ => Ok(Got::Nothing),
        }
    }
}

/// The names a host's `list` gave (`undefined`: none).
fn names_of(value: JsValue, dir: &str) -> Result<Vec<String>> {
    if value.is_undefined() || value.is_null() {
        return Ok(Vec::new());
    }
    let array = value
        .dyn_into::<Array>()
        .map_err(|_| Error::new(ErrorKind::Storage, "storage list returned no array").with_path(dir))?;
    Ok(array.iter().filter_map(|v| v.as_string()).collect())
}

/// The bytes of what the host's `read` gave for `path` (bytes or a string); `None` for
/// `undefined` or `null` (no such file).
pub fn read_bytes(value: JsValue, path: &str) -> Result<Option<Vec<u8>>> {
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    bytes_of(&value).map(Some).ok_or_else(|| {
        Error::new(ErrorKind::Storage, "storage read returned neither bytes, a string nor undefined").with_path(path)
    })
}

fn write_options(options: WriteOptions) -> JsValue {
    let opts = Object::new();
    let _ = Reflect::set(&opts, &"exclusive".into(), &options.exclusive.into());
    opts.into()
}

/// The host's failed `op` on `path`, typed (see [`classify`]), its error kept as `cause`.
pub fn host_failure(op: &str, path: &str, err: JsValue) -> Error {
    classify(op, &err).with_path(path).with_source(HostError(err))
}

/// Maps a host error onto a kind by its `code` or `name`.
fn classify(op: &str, err: &JsValue) -> Error {
    let field = |k: &str| Reflect::get(err, &k.into()).ok().and_then(|v| v.as_string()).unwrap_or_default();
    let (code, name) = (field("code"), field("name"));
    let kind = match (code.as_str(), name.as_str()) {
        ("EEXIST", _) | (_, "EEXIST") => ErrorKind::AlreadyExists,
        ("ENOSPC" | "EDQUOT" | "QUOTA_EXCEEDED", _) | (_, "QuotaExceededError") => ErrorKind::QuotaExceeded,
        ("OUTSIDE_STORE", _) => ErrorKind::OutsideStore,
        _ => ErrorKind::Storage,
    };
    let message = HostError(err.clone()).to_string();
    Error::new(kind, format!("storage {op} failed: {message}"))
}

fn bytes_of(value: &JsValue) -> Option<Vec<u8>> {
    if let Some(s) = value.as_string() {
        return Some(s.into_bytes());
    }
    if let Some(u8s) = value.dyn_ref::<Uint8Array>() {
        return Some(u8s.to_vec());
    }
    if let Some(buf) = value.dyn_ref::<ArrayBuffer>() {
        return Some(Uint8Array::new(buf).to_vec());
    }
    if ArrayBuffer::is_view(value) {
        let view: &Object = value.unchecked_ref();
        let get = |k: &str| Reflect::get(view, &k.into()).ok();
        let buffer = get("buffer")?.dyn_into::<ArrayBuffer>().ok()?;
        let offset = get("byteOffset")?.as_f64()? as u32;
        let len = get("byteLength")?.as_f64()? as u32;
        return Some(Uint8Array::new_with_byte_offset_and_length(&buffer, offset, len).to_vec());
    }
    None
}

impl JsStorage {
    /// What the host's `read` gives (bytes or a string), not copied into wasm; `None`
    /// when the file does not exist.
    pub async fn read_value(&self, path: &str) -> Result<Option<JsValue>> {
        let value = self.call("read", path, &self.read, &[path.into(), self.read_options.clone().into()]).await?;
        Ok((!value.is_undefined() && !value.is_null()).then_some(value))
    }
}

impl Storage for JsStorage {
    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        match self.read_value(path).await? {
            Some(value) => read_bytes(value, path),
            None => Ok(None),
        }
    }

    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> Result<()> {
        let bytes = Uint8Array::from(data);
        self.call("write", path, &self.write, &[path.into(), bytes.into(), write_options(options)]).await?;
        Ok(())
    }

    fn body(&self, handle: u32) -> Option<Vec<u8>> {
        body::held(handle).map(|b| b.to_vec())
    }

    async fn remove(&self, path: &str) -> Result<()> {
        self.call("remove", path, &self.remove, &[path.into()]).await?;
        Ok(())
    }

    /// The host's `append` when it has one; else a read and a whole-file write (not atomic).
    async fn append(&self, path: &str, data: &[u8]) -> Result<()> {
        let Some(append) = &self.append else {
            let mut bytes = self.read(path).await?.unwrap_or_default();
            bytes.extend_from_slice(data);
            return self.write(path, &bytes, WriteOptions::default()).await;
        };
        self.call("append", path, append, &[path.into(), Uint8Array::from(data).into()]).await?;
        Ok(())
    }

    async fn list(&self, dir: &str) -> Result<Vec<String>> {
        let value = self.call("list", dir, &self.list, &[dir.into()]).await?;
        names_of(value, dir)
    }

    async fn remove_dir(&self, path: &str) -> Result<()> {
        if let Some(f) = &self.remove_dir {
            self.call("removeDir", path, f, &[path.into()]).await?;
        }
        Ok(())
    }

    /// `host.lock(name, fn)`, run by the driver: the lock is held from the callback's
    /// call until the driver releases it (after `work`), and the host's `lock` settles.
    /// Without a host `lock`, the driver still gives this process's turns at the name in order.
    async fn locked<T>(&self, name: &str, work: impl std::future::Future<Output = T>) -> Result<T> {
        let failed = |v: JsValue| classify("lock", &v).with_path(name).with_source(HostError(v));
        let held = HostCall::lock(&self.host, &self.lock_fn(), name);
        let lock_call = held.id();
        held.await.map_err(failed)?;
        let out = work.await;
        HostCall::unlock(lock_call).await.map_err(failed)?;
        Ok(out)
    }
}
