//! The store-wide operations ([`crate::storewide`]) run natively over a [`Storage`].

use crate::error::Result;
use crate::runner::run;
use crate::storage::Storage;
use crate::storewide::{Export, ExportJsonl, ImportJsonl, ImportReport, Purge};

/// Removes every file of `dir` whose name is a record filename (SPEC §3), whoever
/// wrote it, and the index segments of its records (its `.index/` folder: derived data);
/// other files and sub-folders stay. Returns the number of records removed.
pub async fn purge<S: Storage>(storage: &S, dir: &str) -> Result<usize> {
    run(storage, Purge::new(dir)).await
}

/// The persisted records of `dir` as JSON Lines, one record a line, sorted by file name,
/// every record's bytes recoverable exactly:
///
/// - `{"filename":"…","record":{…}}`, the record's bytes embedded verbatim, when they are
///   one line that reads back as themselves (no line break, nothing around the object):
///   every record this library writes;
/// - `{"filename":"…","recordText":"…"}`, the bytes as a JSON string, otherwise (a
///   pretty-printed record of the TypeScript original, a trailing newline, CRLF).
///
/// A file named as a record that does not parse as one (torn, corrupt) is not a record:
/// it is left out and listed in [`Export::skipped`] with the reason, never silently.
pub async fn export_jsonl<S: Storage>(storage: &S, dir: &str) -> Result<Export> {
    run(storage, ExportJsonl::new(dir)).await
}

/// Writes the records of a JSON Lines export into `dir`, each under its own file name
/// and byte for byte (from `record`, verbatim, or `recordText`, the exact text). A record already present with the same bytes is left alone; a
/// different file under the same name, a malformed line, or a name outside the record
/// grammar fails the import with the line number (the lines before it are written).
pub async fn import_jsonl<S: Storage>(storage: &S, dir: &str, jsonl: &str) -> Result<ImportReport> {
    run(storage, ImportJsonl::new(dir, jsonl.to_owned())).await
}
