//! The window optimiser's edit history ([`crate::window::History`]) read and written
//! natively over a [`Storage`]: the plans of [`crate::window::history`] run by the runner
//! ([`run`]), as the JavaScript driver runs them in wasm.

use crate::error::Result;
use crate::runner::run;
use crate::storage::Storage;
use crate::window::{history, History};

/// Reads the history at `path`: empty when the file does not exist, `CORRUPT_RECORD` when
/// it does not parse.
pub async fn load<S: Storage>(storage: &S, path: &str) -> Result<History> {
    run(storage, history::load(path, false)).await.map(|loaded| loaded.history)
}

/// Writes the history to `path`, replacing the file whole.
pub async fn save<S: Storage>(storage: &S, path: &str, history: &History) -> Result<()> {
    run(storage, history::save(path, history)).await
}
