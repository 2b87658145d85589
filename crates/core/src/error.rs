//! The one error type of the crate.
//!
//! Every failure is an [`Error`]: a stable [`ErrorKind`] (its [`code`](ErrorKind::code) is
//! what JavaScript sees as `error.code`), a message, the path or operation it concerns,
//! and the host's original error as its [`source`](std::error::Error::source).

use std::fmt;

/// What went wrong, as a stable, matchable kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// An argument has the wrong type or shape.
    InvalidArgument,
    /// A value cannot be serialised as JSON (BigInt, cycle, lone surrogate).
    NotSerializable,
    /// The storage host failed.
    Storage,
    /// The storage host is out of space.
    QuotaExceeded,
    /// A path would leave the store.
    OutsideStore,
    /// A record or manifest does not parse.
    CorruptRecord,
    /// A named session, conversation or artifact does not exist.
    NotFound,
    /// A record is larger than `maxRecordBytes`.
    TooLarge,
    /// An exclusive write found the path taken (host code `EEXIST`).
    AlreadyExists,
    /// A write to a manager opened with `readOnly` (or a store-level write asked with it).
    ReadOnly,
    /// The manager was closed: it does no more I/O.
    Closed,
    /// A bug in toolctx.
    Internal,
}

impl ErrorKind {
    /// The stable code JavaScript sees as `error.code`.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "INVALID_ARGUMENT",
            ErrorKind::NotSerializable => "NOT_SERIALIZABLE",
            ErrorKind::Storage => "STORAGE",
            ErrorKind::QuotaExceeded => "QUOTA_EXCEEDED",
            ErrorKind::OutsideStore => "OUTSIDE_STORE",
            ErrorKind::CorruptRecord => "CORRUPT_RECORD",
            ErrorKind::NotFound => "NOT_FOUND",
            ErrorKind::TooLarge => "TOO_LARGE",
            ErrorKind::AlreadyExists => "EEXIST",
            ErrorKind::ReadOnly => "READ_ONLY",
            ErrorKind::Closed => "CLOSED",
            ErrorKind::Internal => "INTERNAL",
        }
    }
}

type Source = Box<dyn std::error::Error + 'static>;

/// A toolctx error: kind, message, optional path, optional host error.
///
/// Boxed, so that an `Error` (and a `Result<()>`) is one pointer: every `?` and every
/// await of a `Result` moves it, and in the async workflows that code adds up (the wasm
/// modules: conversation 457,372 -> 427,413 B, core 589,245 -> 571,142 B, window
/// 214,792 -> 209,689 B). Errors are rare, so the allocation costs nothing that matters.
pub struct Error(Box<Inner>);

struct Inner {
    kind: ErrorKind,
    message: String,
    path: Option<String>,
    source: Option<Source>,
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// A new error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error(Box::new(Inner { kind, message: message.into(), path: None, source: None }))
    }

    /// Shorthand for [`ErrorKind::InvalidArgument`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// Attaches the path the error concerns.
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.0.path = Some(path.into());
        self
    }

    /// Attaches the underlying (host) error.
    pub fn with_source(mut self, source: impl std::error::Error + 'static) -> Self {
        self.0.source = Some(Box::new(source));
        self
    }

    /// The kind.
    pub fn kind(&self) -> ErrorKind {
        self.0.kind
    }

    /// The stable code (`"STORAGE"`, `"NOT_SERIALIZABLE"`, ...).
    pub fn code(&self) -> &'static str {
        self.0.kind.code()
    }

    /// The message, without the path.
    pub fn message(&self) -> &str {
        &self.0.message
    }

    /// The path the error concerns, if any.
    pub fn path(&self) -> Option<&str> {
        self.0.path.as_deref()
    }

    /// The underlying error as given, for downcasting to a host error type.
    pub fn host_source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source.as_deref()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0.message)?;
        if let Some(path) = &self.0.path {
            write!(f, " ({path})")?;
        }
        Ok(())
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {self}", self.code())?;
        if let Some(source) = &self.0.source {
            write!(f, " (caused by: {source})")?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.0.source.as_deref()
    }
}

impl From<std::io::Error> for Error {
    fn from(err: std::io::Error) -> Self {
        let kind = match err.kind() {
            std::io::ErrorKind::AlreadyExists => ErrorKind::AlreadyExists,
            std::io::ErrorKind::StorageFull | std::io::ErrorKind::QuotaExceeded => ErrorKind::QuotaExceeded,
            _ => ErrorKind::Storage,
        };
        Error::new(kind, err.to_string()).with_source(err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_path_and_debug_the_code() {
        let err = Error::new(ErrorKind::Storage, "write failed").with_path("a/b.json");
        assert_eq!(err.to_string(), "write failed (a/b.json)");
        assert!(format!("{err:?}").starts_with("STORAGE: "));
    }

    #[test]
    fn io_errors_keep_their_kind_and_source() {
        let io = std::io::Error::new(std::io::ErrorKind::AlreadyExists, "taken");
        let err = Error::from(io);
        assert_eq!(err.kind(), ErrorKind::AlreadyExists);
        assert!(std::error::Error::source(&err).is_some());
    }

    #[test]
    fn an_error_is_one_pointer_so_results_stay_small() {
        // Every `?` and every await of a `Result` moves the error: one pointer keeps that
        // code small in the wasm modules (the conversation module was 30 KB larger with
        // the fields inline).
        assert_eq!(std::mem::size_of::<Error>(), std::mem::size_of::<usize>());
        assert_eq!(std::mem::size_of::<Result<()>>(), std::mem::size_of::<usize>());
    }
}
