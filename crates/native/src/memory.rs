//! In-process storage for tests and ephemeral agents.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::error::{Error, ErrorKind, Result};
use crate::{Storage, WriteOptions};

/// Files in a sorted map from path to bytes; folders exist while they hold a file.
#[derive(Debug, Default)]
pub struct MemoryStorage {
    files: RefCell<BTreeMap<String, Vec<u8>>>,
}

impl MemoryStorage {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every path held, sorted (for tests).
    pub fn paths(&self) -> Vec<String> {
        self.files.borrow().keys().cloned().collect()
    }
}

impl Storage for MemoryStorage {
    async fn read(&self, path: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.files.borrow().get(path).cloned())
    }

    async fn read_range(&self, path: &str, offset: u64, len: u64) -> Result<Option<Vec<u8>>> {
        Ok(self.files.borrow().get(path).map(|bytes| crate::storage::cut(bytes, offset, len).to_vec()))
    }

    fn reads_ranges(&self) -> bool {
        true
    }

    async fn write(&self, path: &str, data: &[u8], options: WriteOptions) -> Result<()> {
        let mut files = self.files.borrow_mut();
        if options.exclusive && files.contains_key(path) {
            return Err(Error::new(ErrorKind::AlreadyExists, "file exists").with_path(path));
        }
        files.insert(path.to_owned(), data.to_vec());
        Ok(())
    }

    async fn append(&self, path: &str, data: &[u8]) -> Result<()> {
        self.files.borrow_mut().entry(path.to_owned()).or_default().extend_from_slice(data);
        Ok(())
    }

    async fn remove(&self, path: &str) -> Result<()> {
        self.files.borrow_mut().remove(path);
        Ok(())
    }

    async fn list(&self, dir: &str) -> Result<Vec<String>> {
        let prefix = if dir.is_empty() || dir.ends_with('/') { dir.to_owned() } else { format!("{dir}/") };
        let mut out: Vec<String> = Vec::new();
        for path in self.files.borrow().range(prefix.clone()..).map(|(k, _)| k) {
            let Some(rest) = path.strip_prefix(&prefix) else { break };
            let child = match rest.find('/') {
                Some(i) => &rest[..=i],
                None => rest,
            };
            if out.last().map(String::as_str) != Some(child) {
                out.push(child.to_owned());
            }
        }
        Ok(out)
    }
}
