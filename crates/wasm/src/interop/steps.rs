//! The step protocol (docs/protocol.md): every step, host op and outcome that crosses the
//! boundary is built or read here, and nowhere else.
//!
//! A step is a plain JavaScript object whose `kind` says what the driver
//! (pkg-template/driver.js) must do, its other fields named. JavaScript names the same
//! kinds in pkg-template/protocol.js; a test (interop/named.rs) keeps the two equal.
//!
//! Steps are built field by field with a setter each (a save is hot: no JSON, no serde,
//! no `Reflect` on its path).

use js_sys::{Array, Object, Uint32Array, Uint8Array};
use wasm_bindgen::prelude::*;

use super::named::named;
#[cfg(test)]
use super::named::table;
use super::storage::JsStorage;

named! {
    /// What a step asks of the driver (protocol.js `STEP`).
    pub enum Kind {
        /// Run `ops` over `storage`, all at once; answer their outcomes in order.
        Run = "run",
        /// Run `ops` over `storage` one after the other, stopping at the first that fails;
        /// answer the outcomes of those run.
        Change = "change",
        /// Take this process's turn at the lock `name` of `storage`, then the host's lock;
        /// answer one outcome once it is held (or failed).
        Lock = "lock",
        /// Release that lock; answer the outcome of the host's `lock` call.
        Unlock = "unlock",
        /// Wait until the operations in flight beside the plan (its manager's others) have
        /// changed; answer no outcome.
        Wait = "wait",
        /// Finished: `value`, or `json` (text the driver parses), or `kept` (the records
        /// the driver kept in the run, by number).
        Done = "done",
        /// Failed with `error`.
        Failed = "failed",
    }
}

named! {
    /// A host call (protocol.js `OP`): the StorageHost method of that name.
    pub enum OpKind {
        Read = "read",
        ReadRange = "readRange",
        List = "list",
        Write = "write",
        Append = "append",
        Remove = "remove",
        RemoveDir = "removeDir",
        ReadRecord = "readRecord",
        KeepRecord = "keepRecord",
    }
}

/// The fields of steps, ops, outcomes and the objects around them: each set and read
/// by a setter or getter of its own (`o.kind = v`, with no key to pass and no `Reflect`).
macro_rules! fields {
    (set { $($key:ident: $set:ident = $js:ident,)* } get { $($gkey:ident: $get:ident = $gjs:ident,)* }) => {
        #[wasm_bindgen]
        extern "C" {
            /// A plain object a step, op or outcome is made of.
            #[wasm_bindgen(extends = Object)]
            type Fields;
            $(
                #[wasm_bindgen(method, setter = $js)]
                fn $set(this: &Fields, value: &JsValue);
            )*
            $(
                #[wasm_bindgen(method, getter = $gjs)]
                fn $get(this: &Fields) -> JsValue;
            )*
        }

        /// A field set (`kind` and `op` are set directly).
        #[derive(Clone, Copy)]
        #[allow(dead_code)]
        enum Key { $($key,)* }

        /// A field read.
        #[derive(Clone, Copy)]
        enum Got { $($gkey,)* }

        fn set(o: &Fields, key: Key, value: &JsValue) {
            match key { $(Key::$key => o.$set(value),)* }
        }

        /// `key` of `o`; `undefined` when `o` is no object.
        fn get(o: &JsValue, key: Got) -> JsValue {
            if !o.is_object() {
                return JsValue::UNDEFINED;
            }
            let o: &Fields = o.unchecked_ref();
            match key { $(Got::$gkey => o.$get(),)* }
        }
    };
}

fields! {
    set {
        Kind: set_kind = kind,
        Id: set_id = id,
        Storage: set_storage = storage,
        Ops: set_ops = ops,
        Op: set_op = op,
        Path: set_path = path,
        Bytes: set_bytes = bytes,
        Parts: set_parts = parts,
        Exclusive: set_exclusive = exclusive,
        Name: set_name = name,
        Value: set_value = value,
        Json: set_json = json,
        Error: set_error = error,
        Wait: set_wait = wait,
        Kept: set_kept = kept,
        Text: set_text = text,
        Offset: set_offset = offset,
        Length: set_length = length,
        Paths: set_paths = paths,
        Host: set_host = host,
        ReadFn: set_read = read,
        ReadRangeFn: set_read_range = readRange,
        WriteFn: set_write = write,
        RemoveFn: set_remove = remove,
        ListFn: set_list = list,
        RemoveDirFn: set_remove_dir = removeDir,
        AppendFn: set_append = append,
        LockFn: set_lock = lock,
        ReadOptions: set_read_options = readOptions,
        Close: set_close = close,
        Filepath: set_filepath = filepath,
        Embed: set_embed = embed,
    }
    get {
        Ok: get_ok = ok,
        Value: get_value = value,
        Error: get_error = error,
        KeptAt: get_kept = kept,
        Size: get_size = size,
    }
}

/// The strings of [`Kind`] and [`OpKind`], made once per instance.
struct Strings {
    kinds: Vec<JsValue>,
    ops: Vec<JsValue>,
}

thread_local! {
    static STRINGS: Strings = Strings {
        kinds: Kind::ALL.iter().map(|k| JsValue::from_str(k.name())).collect(),
        ops: OpKind::ALL.iter().map(|k| JsValue::from_str(k.name())).collect(),
    };
}

/// A fresh plain object.
fn object() -> Fields {
    Object::new().unchecked_into()
}

/// A step of `kind`, its other fields to set.
fn step(kind: Kind) -> Fields {
    let o = object();
    STRINGS.with(|s| o.set_kind(&s.kinds[kind as usize]));
    o
}

/// `{kind: "done", value}`.
pub fn done(value: &JsValue) -> JsValue {
    let o = step(Kind::Done);
    set(&o, Key::Value, value);
    o.into()
}

/// `{kind: "done", kept}`: the driver resolves with the records it kept in this run
/// (`readRecord`, `keepRecord` ops) under the numbers `kept` gives, in that order.
pub fn done_kept(kept: &[u32]) -> JsValue {
    let o = step(Kind::Done);
    set(&o, Key::Kept, &Uint32Array::from(kept));
    o.into()
}

/// `{kind: "done", json}`: the driver resolves with `JSON.parse(json)`, once the wasm call
/// has returned (a `JSON.parse` inside one has crashed Node 20's V8).
pub fn done_json(text: &str) -> JsValue {
    let o = step(Kind::Done);
    set(&o, Key::Json, &text.into());
    o.into()
}

/// `{kind: "failed", error}`.
pub fn failed(error: &JsValue) -> JsValue {
    let o = step(Kind::Failed);
    set(&o, Key::Error, error);
    o.into()
}

/// `{op, path, bytes?, exclusive?}`: one host call.
pub fn op(kind: OpKind, path: &str, bytes: Option<&[u8]>, exclusive: Option<bool>) -> JsValue {
    op_object(kind, path, bytes, exclusive).into()
}

/// `{op: "write", path, parts: [head, body, tail], exclusive}`: a file written as the
/// bytes of its parts joined (the driver passes them to a gather write where the host's
/// write has one).
pub fn write_parts(path: &str, head: &[u8], body: &Uint8Array, tail: &[u8], exclusive: bool) -> JsValue {
    let o = op_object(OpKind::Write, path, None, Some(exclusive));
    set(&o, Key::Parts, &Array::of3(&Uint8Array::from(head), body, &Uint8Array::from(tail)));
    o.into()
}

/// `{op: "readRange", path, offset, length}`: the bytes `[offset, offset + length)` of a file.
pub fn read_range(path: &str, offset: u64, len: u64) -> JsValue {
    let o = op_object(OpKind::ReadRange, path, None, None);
    // Offsets and lengths of files fit a double exactly (below 2^53).
    set(&o, Key::Offset, &(offset as f64).into());
    set(&o, Key::Length, &(len as f64).into());
    o.into()
}

/// `{op: "keepRecord", path, text}`: a record's text, held in memory, for the driver to keep.
pub fn keep_record(path: &str, text: &str) -> JsValue {
    let o = op_object(OpKind::KeepRecord, path, None, None);
    set(&o, Key::Text, &text.into());
    o.into()
}

fn op_object(kind: OpKind, path: &str, bytes: Option<&[u8]>, exclusive: Option<bool>) -> Fields {
    let o = object();
    STRINGS.with(|s| o.set_op(&s.ops[kind as usize]));
    set(&o, Key::Path, &path.into());
    if let Some(bytes) = bytes {
        set(&o, Key::Bytes, &Uint8Array::from(bytes));
    }
    if let Some(exclusive) = exclusive {
        set(&o, Key::Exclusive, &exclusive.into());
    }
    o
}

/// `{kind: "run" | "change", id?, storage, ops}`.
pub fn run(kind: Kind, id: Option<u32>, storage: &JsStorage, ops: Array) -> JsValue {
    let o = step(kind);
    if let Some(id) = id {
        set(&o, Key::Id, &id.into());
    }
    set(&o, Key::Storage, storage.js());
    set(&o, Key::Ops, &ops);
    o.into()
}

/// `{kind: "lock", id?, storage, name, wait}`: take the lock `name` (a plan's, when `id`),
/// waiting while another holds it only when `wait`.
pub fn lock(id: Option<u32>, storage: &JsStorage, name: &str, wait: bool) -> JsValue {
    let o = lock_step(Kind::Lock, id, storage, name);
    set(&o, Key::Wait, &wait.into());
    o.into()
}

/// `{kind: "unlock", id?, storage, name}`: release the lock `name` (a plan's, when `id`).
pub fn unlock(id: Option<u32>, storage: &JsStorage, name: &str) -> JsValue {
    lock_step(Kind::Unlock, id, storage, name).into()
}

fn lock_step(kind: Kind, id: Option<u32>, storage: &JsStorage, name: &str) -> Fields {
    let o = step(kind);
    if let Some(id) = id {
        set(&o, Key::Id, &id.into());
    }
    set(&o, Key::Storage, storage.js());
    set(&o, Key::Name, &name.into());
    o
}

/// `{kind: "wait", id}`: once the operations in flight beside plan `id` (its manager's
/// others) have changed, its next step.
pub fn wait(id: u32) -> JsValue {
    let o = step(Kind::Wait);
    set(&o, Key::Id, &id.into());
    o.into()
}

/// An outcome the driver answers, `{ok: true, value}` or `{ok: false, error}`: the value,
/// or the host's error.
pub fn outcome(outcome: &JsValue) -> Result<JsValue, JsValue> {
    if get(outcome, Got::Ok).as_bool() == Some(true) {
        Ok(get(outcome, Got::Value))
    } else {
        Err(get(outcome, Got::Error))
    }
}

/// A record the driver kept (driver.js `keep`: `{kept, size}`): its number and its length
/// in bytes, each a whole number in `u32`'s range; `None` when either is not.
pub fn kept_record(value: &JsValue) -> Option<(u32, u32)> {
    let number = |key: Got| {
        get(value, key)
            .as_f64()
            .filter(|n| n.fract() == 0.0 && (0.0..=f64::from(u32::MAX)).contains(n))
            .map(|n| n as u32)
    };
    Some((number(Got::KeptAt)?, number(Got::Size)?))
}

/// What a step's `storage` is: the host object and its methods, looked up once (`undefined`
/// where the host has none), and the options its `read` takes.
#[allow(clippy::too_many_arguments)]
pub fn storage(
    host: &JsValue,
    read: &JsValue,
    read_range: &JsValue,
    write: &JsValue,
    remove: &JsValue,
    list: &JsValue,
    remove_dir: &JsValue,
    append: &JsValue,
    lock: &JsValue,
    read_options: &JsValue,
) -> JsValue {
    let o = object();
    for (key, value) in [
        (Key::Host, host),
        (Key::ReadFn, read),
        (Key::ReadRangeFn, read_range),
        (Key::WriteFn, write),
        (Key::RemoveFn, remove),
        (Key::ListFn, list),
        (Key::RemoveDirFn, remove_dir),
        (Key::AppendFn, append),
        (Key::LockFn, lock),
        (Key::ReadOptions, read_options),
    ] {
        set(&o, key, value);
    }
    o.into()
}

/// `{host, close}`: the host's `close()` for the driver to call last.
pub fn close_call(host: &JsValue, close: &JsValue) -> JsValue {
    let o = object();
    set(&o, Key::Host, host);
    set(&o, Key::Close, close);
    o.into()
}

/// `{filepath, embed}`: a saved record and the text the `embed` option gets.
pub fn saved_to_embed(filepath: &str, text: &str) -> JsValue {
    let o = object();
    set(&o, Key::Filepath, &filepath.into());
    set(&o, Key::Embed, &text.into());
    o.into()
}

/// `[("STEP", …), ("OP", …)]`: the step kinds and host calls, for the test that keeps
/// protocol.js equal to them (interop/named.rs).
#[cfg(test)]
pub fn tables() -> Vec<(&'static str, JsValue)> {
    vec![
        ("STEP", table(Kind::ALL, Kind::constant, Kind::name)),
        ("OP", table(OpKind::ALL, OpKind::constant, OpKind::name)),
    ]
}
