//! The session operations run natively: each plan of [`crate::session`] run over a [`Storage`].

use crate::error::Result;
use crate::runner;
use crate::session::{
    CleanupStale, ListSessions, Manifest, RecordFiles, RemoveSession, SearchSessions, SessionHit, SessionInfo,
};
use crate::storage::Storage;

/// The sessions of a context dir whose manifest parses, by id.
pub async fn list_sessions<S: Storage>(storage: &S, context_dir: &str) -> Result<Vec<SessionInfo>> {
    runner::run(storage, ListSessions::new(context_dir)).await
}

/// Removes the sessions idle for longer than `older_than_ms` at `now_ms`: the files their
/// manifests track and the record files of their own folders that the manifests do not
/// list yet (a crash left them out; one saved within `older_than_ms` keeps the session),
/// the manifest, then the folders if empty. Other files stay. A session whose
/// manifest is missing, does not parse, or has a `last_activity` that is not a date or
/// lies in the future is never touched. Returns the ids removed.
pub async fn cleanup_stale_sessions<S: Storage>(
    storage: &S,
    context_dir: &str,
    now_ms: i64,
    older_than_ms: i64,
) -> Result<Vec<String>> {
    runner::run(storage, CleanupStale::new(context_dir, now_ms, older_than_ms)).await
}

/// The record files of a session folder (one level of category folders), as paths
/// relative to it: names in the record grammar only.
pub async fn record_files<S: Storage>(storage: &S, dir: &str) -> Result<Vec<String>> {
    runner::run(storage, RecordFiles::new(dir)).await
}

/// Removes the files a manifest tracks (and `also`, paths inside the session), the
/// manifest, and then the category folders and the session folder if they are empty.
pub async fn remove_session<S: Storage>(storage: &S, dir: &str, manifest: &Manifest, also: &[String]) -> Result<()> {
    runner::run(storage, RemoveSession::new(dir, manifest, also)).await
}

/// Ranks the records of every session of `context_dir` for `query`, from the sessions'
/// manifests alone (no record is read): BM25F over each entry's description, tool name
/// and argument values, and its top content terms, with statistics over all of them. The best `limit`, best first;
/// nothing when nothing matches.
pub async fn search_sessions<S: Storage>(
    storage: &S,
    context_dir: &str,
    query: &str,
    limit: usize,
) -> Result<Vec<SessionHit>> {
    runner::run(storage, SearchSessions::new(context_dir, query, limit)).await
}
