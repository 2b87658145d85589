//! `JsStorage`: a JavaScript host storage object (SPEC §4), and the typing of what its
//! methods give.
//!
//! The package's workflows never await it: their ops go to the JavaScript driver in steps
//! (`steps.rs`), which carry this storage as [`JsStorage::js`] and each op as
//! [`op_js`] makes it; the outcomes come back typed ([`outcome_of`]). A failed host call,
//! thrown or rejected, is a typed error with the host's error as `cause`: `EEXIST` stays
//! "already exists", out-of-space errors become `QUOTA_EXCEEDED`, the rest `STORAGE`.
//! Nothing here awaits: the wasm tests' `Storage` implementation over it, which awaits the
//! host's Promises, is in `crates/wasm/src/awaited.rs`, compiled for the tests only.

use std::fmt;

use js_sys::{Array, ArrayBuffer, Function, Object, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::args::{get, positive_integer};
use super::steps::{self, OpKind};

use toolctx_core::error::{Error, ErrorKind, Result};
use toolctx_core::plan::{Op, Outcome, RecordOutcome};

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
    pub(crate) host: JsValue,
    /// `close_call` handed out the host's `close()`: it is called once.
    closed: std::cell::Cell<bool>,
    /// The storage as steps carry it (steps::storage): the host, its methods, and
    /// `{root}`, the store folder, passed to `read` so file-system adapters can refuse a
    /// read that a symbolic link would take outside it.
    js: JsValue,
    /// Whether the host has `readRange` (else the driver reads whole files and cuts them).
    reads_ranges: bool,
    /// The largest file the host writes (its `maxValueBytes`), if it has a limit.
    max_value_bytes: Option<usize>,
}

pub(crate) fn method(host: &JsValue, name: &str) -> Option<Function> {
    Reflect::get(host, &name.into()).ok()?.dyn_into::<Function>().ok()
}

/// The host's `maxValueBytes`: none, or a whole number of bytes ≥ 1.
fn max_value_bytes(host: &JsValue) -> Result<Option<usize>> {
    let value = get(host, "maxValueBytes");
    if value.is_undefined() || value.is_null() {
        return Ok(None);
    }
    let n = positive_integer(&value).ok_or_else(|| {
        Error::invalid("the storage's maxValueBytes must be a whole number of bytes ≥ 1 (the largest file it writes)")
    })?;
    Ok(Some(n as usize))
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
        let (read, write, remove, list) =
            (required("read")?, required("write")?, required("remove")?, required("list")?);
        let (remove_dir, lock, append) = (method(&host, "removeDir"), method(&host, "lock"), method(&host, "append"));
        let read_range = method(&host, "readRange");
        let reads_ranges = read_range.is_some();
        let max_value_bytes = max_value_bytes(&host)?;
        let read_options = Object::new();
        let _ = Reflect::set(&read_options, &"root".into(), &root.into());
        let optional = |f: &Option<Function>| f.as_ref().map_or(JsValue::UNDEFINED, |f| f.clone().into());
        let js = steps::storage(
            &host,
            &read,
            &optional(&read_range),
            &write,
            &remove,
            &list,
            &optional(&remove_dir),
            &optional(&append),
            &optional(&lock),
            &read_options,
        );
        Ok(JsStorage { host, closed: std::cell::Cell::new(false), js, reads_ranges, max_value_bytes })
    }

    /// The largest file the host writes, if it says (`maxValueBytes`: the SQL adapters' rows).
    pub fn max_value_bytes(&self) -> Option<usize> {
        self.max_value_bytes
    }

    /// Whether the host reads ranges of files (`readRange`).
    pub fn reads_ranges(&self) -> bool {
        self.reads_ranges
    }

    /// The storage as a step carries it (crates/wasm/src/interop/steps.rs: `storage`).
    pub fn js(&self) -> &JsValue {
        &self.js
    }

    /// What the host says it is (adapters set `description`), or `custom storage`.
    pub fn description(&self) -> String {
        Reflect::get(&self.host, &"description".into())
            .ok()
            .and_then(|d| d.as_string())
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| "custom storage".to_owned())
    }

    /// The host's `close()` for the driver to call, `{host, close}`, once: for a storage
    /// its manager made itself; `None` when it has none or it was handed out.
    pub fn close_call(&self) -> Option<JsValue> {
        if self.closed.replace(true) {
            return None;
        }
        let close = method(&self.host, "close")?;
        Some(steps::close_call(&self.host, &close))
    }
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

/// The names of what the host's `list` gave for `dir` (an array; `undefined` or `null`
/// for a missing folder).
pub fn list_names(value: JsValue, dir: &str) -> Result<Vec<String>> {
    if value.is_undefined() || value.is_null() {
        return Ok(Vec::new());
    }
    let array = value
        .dyn_into::<Array>()
        .map_err(|_| Error::new(ErrorKind::Storage, "storage list returned no array").with_path(dir))?;
    Ok(array.iter().filter_map(|v| v.as_string()).collect())
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

/// `op` as a step carries it (`steps.rs`); `INTERNAL` for a write of held bytes whose
/// save no longer holds them.
pub fn op_js(op: &Op) -> Result<JsValue> {
    Ok(match op {
        Op::Read(path) => steps::op(OpKind::Read, path, None, None),
        Op::ReadRange { path, offset, len } => steps::read_range(path, *offset, *len),
        Op::List(dir) => steps::op(OpKind::List, dir, None, None),
        Op::Write { path, bytes, exclusive } => steps::op(OpKind::Write, path, Some(bytes), Some(*exclusive)),
        Op::Append { path, bytes } => steps::op(OpKind::Append, path, Some(bytes), None),
        Op::Remove(path) => steps::op(OpKind::Remove, path, None, None),
        Op::RemoveDir(path) => steps::op(OpKind::RemoveDir, path, None, None),
        Op::ReadRecord(path) => steps::op(OpKind::ReadRecord, path, None, None),
        Op::KeepRecord { path, text } => steps::keep_record(path, text),
        Op::WriteParts { path, head, body, tail, exclusive } => {
            let held = super::body::held(*body).ok_or_else(|| {
                Error::new(ErrorKind::Internal, "the result's bytes are no longer held").with_path(path)
            })?;
            steps::write_parts(path, head, &held, tail, *exclusive)
        }
    })
}

/// The outcome of `op` from what the driver answered (`{ok, value}` or `{ok, error}`).
pub fn outcome_of(op: &Op, outcome: &JsValue) -> Result<Outcome> {
    let value = steps::outcome(outcome).map_err(|e| host_failure(op.method(), op.path(), e))?;
    match op {
        Op::Read(path) | Op::ReadRange { path, .. } => read_bytes(value, path).map(Outcome::Read),
        Op::List(dir) => list_names(value, dir).map(Outcome::List),
        Op::ReadRecord(path) | Op::KeepRecord { path, .. } => record_outcome(value, path).map(Outcome::Record),
        _ => Ok(Outcome::Done),
    }
}

/// What the driver made of a record (driver.js `keep`): `{kept, size}` (the number it
/// keeps it under and its length in bytes), or `undefined` (no such file), or why it is not
/// a whole record.
fn record_outcome(value: JsValue, path: &str) -> Result<RecordOutcome> {
    if value.is_object() {
        return match steps::kept_record(&value) {
            Some((at, size)) => Ok(RecordOutcome::Kept { at, size: size as usize }),
            None => {
                Err(Error::new(ErrorKind::Internal, "the driver kept a record without its number and size")
                    .with_path(path))
            }
        };
    }
    if value.is_undefined() {
        return Ok(RecordOutcome::Missing);
    }
    match value.as_string() {
        Some(why) => Ok(RecordOutcome::NotARecord(why)),
        None => Err(Error::new(ErrorKind::Internal, "the driver kept a record as neither {kept, size} nor a reason")
            .with_path(path)),
    }
}
