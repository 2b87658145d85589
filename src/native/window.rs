//! The window optimiser's edit history ([`crate::window::History`]) read and written
//! natively over a [`Storage`].

use super::storage::{Storage, WriteOptions};
use crate::error::Result;
use crate::window::history::of_file;
use crate::window::History;

/// Reads the history at `path`: empty when the file does not exist, `CORRUPT_RECORD` when
/// it does not parse.
pub async fn load<S: Storage>(storage: &S, path: &str) -> Result<History> {
    of_file(storage.read(path).await?.as_deref(), path)
}

/// Writes the history to `path`, replacing the file whole.
pub async fn save<S: Storage>(storage: &S, path: &str, history: &History) -> Result<()> {
    storage.write(path, &history.to_json(), WriteOptions::default()).await
}
