//! The storage contract (SPEC §4): a handful of async methods over `/`-joined paths.
//!
//! Every backend — [`MemoryStorage`], native [`FsStorage`], and in JavaScript the
//! host objects behind `JsStorage` (Node fs, Deno, Bun, OPFS, IndexedDB, user-written)
//! — keeps the same promises:
//!
//! - `read` returns `Ok(None)` for a missing file, never an error;
//! - `write` replaces the whole file, creates missing parents, and is atomic where the
//!   medium allows; with `exclusive` it fails with [`ErrorKind::AlreadyExists`]
//!   (JavaScript code `EEXIST`) when the path exists, and never replaces it;
//! - `remove` is idempotent;
//! - `list` returns the names of direct children, folders with a trailing `/`, and an
//!   empty list for a missing folder;
//! - `append` adds bytes at the end of a file, creating it (and its parents). Backends
//!   with a native append (`O_APPEND`, IndexedDB in one transaction) make it atomic
//!   with respect to other appends; the default is a read and a whole-file write,
//!   which is not.
//!
//! [`ErrorKind::AlreadyExists`]: crate::ErrorKind::AlreadyExists

use crate::error::{Error, ErrorKind, Result};
#[cfg(all(doc, not(target_arch = "wasm32")))]
use crate::{FsStorage, MemoryStorage};

/// Options of [`Storage::write`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteOptions {
    /// Fail with `AlreadyExists` instead of replacing an existing file.
    pub exclusive: bool,
}

/// A storage backend. Futures need not be `Send`: in wasm they are JavaScript promises.
#[allow(async_fn_in_trait)]
pub trait Storage {
    /// The file's bytes, or `None` when it does not exist.
    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>>;
    /// The bytes `[offset, offset + len)` of the file (fewer at its end, none past it), or
    /// `None` when it does not exist. The default reads the whole file and cuts it;
    /// backends that read ranges override it and [`Storage::reads_ranges`].
    async fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        Ok(self.read(path).await?.map(|bytes| cut(&bytes, offset, len).to_vec()))
    }
    /// Whether [`Storage::read_range`] reads only the range (then the index reads its
    /// segments by range instead of whole).
    fn reads_ranges(&self) -> bool {
        false
    }
    /// The largest file the storage writes, in bytes, or `None` without a limit (the
    /// default). A storage that refuses larger values says so here, as a JavaScript
    /// storage does with `maxValueBytes`: [`ContextManager::new`] hands it to the core
    /// ([`Options::max_value_bytes`]), which writes index segments within it.
    ///
    /// [`ContextManager::new`]: crate::ContextManager::new
    /// [`Options::max_value_bytes`]: crate::Options::max_value_bytes
    fn max_value_bytes(&self) -> Option<usize> {
        None
    }
    /// Replaces the whole file (creating parents); see [`WriteOptions`].
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> Result<()>;
    /// Removes a file; removing a missing file succeeds.
    async fn remove(&self, path: &str) -> Result<()>;
    /// Names of the direct children of `dir`; folders end in `/`.
    async fn list(&self, dir: &str) -> Result<Vec<String>>;
    /// Appends `data` to the file at `path`, creating it and its parents.
    ///
    /// The default reads the file and writes it back whole: correct for one writer,
    /// but not atomic (two concurrent appends may lose one). Backends override it
    /// with a native append.
    async fn append(&self, path: &str, data: &[u8]) -> Result<()> {
        let mut bytes = self.read(path).await?.unwrap_or_default();
        bytes.extend_from_slice(data);
        self.write(path, &bytes, WriteOptions::default()).await
    }
    /// Removes an empty folder; a missing one succeeds. Backends without folders
    /// keep the default, which does nothing.
    async fn remove_dir(&self, _path: &str) -> Result<()> {
        Ok(())
    }
    /// Runs `work` holding the named lock, excluding other processes, tabs and
    /// managers that use the same storage (`name` is a path inside the store). Backends
    /// without cross-process locking keep the default, which just runs it. It always
    /// waits for the lock: a plan's `wait: false` (background index work) is honoured at
    /// the manager's own turn ([`crate::run`]), not here.
    async fn locked<T>(&self, _name: &str, work: impl std::future::Future<Output = T>) -> Result<T> {
        Ok(work.await)
    }
    /// A copy of the bytes the host holds under `handle` (a result passed as a
    /// [`HostBody`](crate::store::HostBody)); storages that hold none have none.
    fn body(&self, _handle: u32) -> Option<Vec<u8>> {
        None
    }
    /// Writes `head`, the bytes held under `body`, then `tail`, as one file. The default
    /// copies the body in; a host that holds it writes the parts without the copy.
    async fn write_parts(&self, path: &str, head: &[u8], body: u32, tail: &[u8], options: WriteOptions) -> Result<()> {
        let held = self.body(body).ok_or_else(|| Error::new(ErrorKind::Internal, "no bytes held under this handle"))?;
        self.write(path, &[head, &held, tail].concat(), options).await
    }
}

impl<S: Storage + ?Sized> Storage for std::rc::Rc<S> {
    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        (**self).read(path).await
    }
    async fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        (**self).read_range(path, offset, len).await
    }
    fn reads_ranges(&self) -> bool {
        (**self).reads_ranges()
    }
    fn max_value_bytes(&self) -> Option<usize> {
        (**self).max_value_bytes()
    }
    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> Result<()> {
        (**self).write(path, data, options).await
    }
    async fn remove(&self, path: &str) -> Result<()> {
        (**self).remove(path).await
    }
    async fn append(&self, path: &str, data: &[u8]) -> Result<()> {
        (**self).append(path, data).await
    }
    async fn list(&self, dir: &str) -> Result<Vec<String>> {
        (**self).list(dir).await
    }
    async fn remove_dir(&self, path: &str) -> Result<()> {
        (**self).remove_dir(path).await
    }
    async fn locked<T>(&self, name: &str, work: impl std::future::Future<Output = T>) -> Result<T> {
        (**self).locked(name, work).await
    }
    fn body(&self, handle: u32) -> Option<Vec<u8>> {
        (**self).body(handle)
    }
    async fn write_parts(&self, path: &str, head: &[u8], body: u32, tail: &[u8], options: WriteOptions) -> Result<()> {
        (**self).write_parts(path, head, body, tail, options).await
    }
}

/// The bytes `[offset, offset + len)` of `bytes`: fewer at their end, none past it.
pub fn cut(bytes: &[u8], offset: u64, len: u64) -> &[u8] {
    let start = usize::try_from(offset).unwrap_or(usize::MAX).min(bytes.len());
    let end = usize::try_from(offset.saturating_add(len)).unwrap_or(usize::MAX).min(bytes.len());
    &bytes[start..end]
}
