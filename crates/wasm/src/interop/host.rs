//! Host defaults: what the wasm modules import from JavaScript, the module `host.js`
//! (pkg-template/host.js, next to the glue in the package). It answers with the
//! runtime's default storage and context dir, how to make a context dir absolute and how
//! to wrap a seed `IFileSystem`, as each package entry point (`index.node.js`,
//! `index.js`...) stated them; and it hears of traps. The defaults live in JavaScript,
//! so an instance made again after a trap has them at once.

use js_sys::{Function, Reflect};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

use super::errors::with_cause;
use super::storage::{is_storage_host, JsStorage};
use toolctx_core::error::{Error, ErrorKind, Result};

// The package's glue imports `./host.js` (the file beside it); the wasm-bindgen tests,
// whose glue lives elsewhere, get the same file as a snippet.
#[cfg_attr(not(test), wasm_bindgen(raw_module = "./host.js"))]
#[cfg_attr(test, wasm_bindgen(module = "/../../pkg-template/host.js"))]
extern "C" {
    #[wasm_bindgen(js_name = defaultContextDir, catch)]
    fn default_context_dir() -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = resolveDir, catch)]
    fn host_resolve_dir(dir: &str) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = defaultStorage, catch)]
    fn default_storage() -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = adaptFileSystem, catch)]
    fn adapt_file_system(fs: &JsValue) -> std::result::Result<JsValue, JsValue>;
    #[wasm_bindgen(js_name = onTrap)]
    fn on_trap(module: &str, message: &str);
    #[wasm_bindgen(js_name = takeDefaultDirNote)]
    fn take_default_dir_note() -> Option<String>;
}

/// Why the default context dir taken is not the documented one, once a process (the
/// runtime's entry point notes it: Deno without --allow-env).
#[cfg(feature = "core")]
pub fn default_dir_note() -> Option<String> {
    take_default_dir_note()
}

/// A host default's answer; `undefined` where the runtime has none.
fn answer(name: &str, out: std::result::Result<JsValue, JsValue>) -> Result<Option<JsValue>> {
    match out {
        Ok(v) if v.is_undefined() => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(e) => Err(with_cause(ErrorKind::InvalidArgument, format!("{name} failed"), e)),
    }
}

/// The context dir from the `contextDir` option (or the runtime's default), made
/// absolute where the runtime has a working directory. `storage` is the
/// `fileSystem`/`storage` option as given: a seed `IFileSystem` with `getHomeDir` or
/// `resolvePath` owns home and paths, as in the seed (see [`seed_context_dir`]).
pub fn resolve_context_dir(given: Option<String>, storage: &JsValue) -> Result<String> {
    let home = seed_method(storage, "getHomeDir");
    let resolve = seed_method(storage, "resolvePath");
    if home.is_some() || resolve.is_some() {
        return seed_context_dir(given, storage, home, resolve);
    }
    let dir = match given {
        Some(dir) => dir,
        None => answer("defaultContextDir", default_context_dir())?
            .and_then(|v| v.as_string())
            .unwrap_or_else(|| "agent/context".to_owned()),
    };
    resolve_dir(dir)
}

fn resolve_dir(dir: String) -> Result<String> {
    match answer("resolveDir", host_resolve_dir(&dir))? {
        Some(v) => v.as_string().ok_or_else(|| Error::invalid("resolveDir returned no string")),
        None => Ok(dir),
    }
}

/// A method of a seed `IFileSystem` (an object that is not a StorageHost).
fn seed_method(storage: &JsValue, name: &str) -> Option<Function> {
    if !storage.is_object() || is_storage_host(storage) {
        return None;
    }
    Reflect::get(storage, &name.into()).ok()?.dyn_into::<Function>().ok()
}

fn call_seed(f: &Function, fs: &JsValue, name: &str, args: &[JsValue]) -> Result<String> {
    let out = match args {
        [] => f.call0(fs),
        [a, ..] => f.call1(fs, a),
    };
    out.map_err(|e| with_cause(ErrorKind::InvalidArgument, format!("fileSystem.{name}() failed"), e))?
        .as_string()
        .ok_or_else(|| Error::invalid(format!("fileSystem.{name}() must return a string")))
}

/// The context dir through a seed `IFileSystem`: the default is `~/.agent/context`; a
/// leading `~` is `getHomeDir()`; `resolvePath` (when present) makes the result
/// absolute, else the runtime does.
fn seed_context_dir(
    given: Option<String>,
    fs: &JsValue,
    home: Option<Function>,
    resolve: Option<Function>,
) -> Result<String> {
    let mut dir = given.unwrap_or_else(|| "~/.agent/context".to_owned());
    if let Some(get_home) = home {
        if let Some(rest) = dir.strip_prefix('~').filter(|rest| rest.is_empty() || rest.starts_with('/')) {
            let home = call_seed(&get_home, fs, "getHomeDir", &[])?;
            let joined = format!("{}{rest}", home.trim_end_matches('/'));
            dir = if joined.is_empty() { "/".to_owned() } else { joined };
        }
    }
    match resolve {
        Some(resolve) => call_seed(&resolve, fs, "resolvePath", &[dir.into()]),
        None => resolve_dir(dir),
    }
}

/// The storage from the `fileSystem`/`storage` option, or the runtime's default.
pub fn storage_from(given: JsValue, root: &str, debug: &dyn Fn(&str)) -> Result<JsStorage> {
    if given.is_undefined() || given.is_null() {
        let host = answer("defaultStorage", default_storage())?
            .ok_or_else(|| Error::invalid("no storage given and this runtime registered no default"))?;
        if let Some(note) = Reflect::get(&host, &"description".into()).ok().and_then(|d| d.as_string()) {
            debug(&note);
        }
        return JsStorage::new(host, root);
    }
    if is_storage_host(&given) {
        return JsStorage::new(given, root);
    }
    let has = |m: &str| Reflect::get(&given, &m.into()).is_ok_and(|f| f.is_function());
    if has("readFile") && has("writeFile") {
        let wrapped = answer("adaptFileSystem", adapt_file_system(&given))?
            .ok_or_else(|| Error::invalid("this runtime cannot wrap an IFileSystem"))?;
        return JsStorage::new(wrapped, root);
    }
    Err(Error::invalid("fileSystem/storage must have read, write, remove and list methods (or be a seed IFileSystem)"))
}

/// Tells the JS glue that `module` panicked (`onTrap(module, message)`, which throws).
pub fn notify_trap(module: &str, message: &str) {
    on_trap(module, message);
}
