//! The native driver: [`ContextManager`], a [`Manager`] over a [`Storage`], for Rust users
//! and the tests. Its async methods run the manager's synchronous steps over the storage,
//! as the package's JavaScript driver (`pkg-template/driver.js`) runs them over a host:
//! begin a step, do the I/O it asks for, hand the outcome back. Nothing in the manager
//! itself awaits.

use std::ops::Deref;
use std::rc::Rc;

use futures_util::lock::Mutex;

use crate::error::{Error, ErrorKind, Result};
use crate::runner;
use crate::storage::Storage;
use crate::store::{
    remove_written, Clearing, ClosePlan, Job, JobPlan, LoadRecords, Manager, Options, PrepareQuery, SaveInput,
    SaveRecord,
};
use toolctx_core::plan::Plan;
use toolctx_core::select::{Query, Ranking};
use toolctx_core::{Fallback, Strategy};

/// The tool-context store over a [`Storage`]: a [`Manager`] (the state and its
/// synchronous steps, which it derefs to, as a guard to what it guards) and the storage
/// its async methods do the I/O with. See the crate docs for an example.
pub struct ContextManager<S> {
    core: Manager,
    storage: S,
    /// This manager's turn at the session lock (the JavaScript driver keeps one per lock
    /// name): so an older manifest never lands after a newer one.
    turn: Mutex<()>,
}

impl<S> Deref for ContextManager<S> {
    type Target = Manager;

    fn deref(&self) -> &Manager {
        &self.core
    }
}

impl<S: Storage> ContextManager<S> {
    /// A manager over `storage` with `options` (see [`Manager::new`]); a session it names
    /// is read by [`ContextManager::open`]. What the storage says of itself is set in the
    /// options: whether it reads ranges ([`Options::ranges`]) and its largest value, if it
    /// has one ([`Options::max_value_bytes`]; a limit of 0 is `InvalidArgument`).
    pub fn new(storage: S, mut options: Options) -> Result<Self> {
        options.ranges = storage.reads_ranges();
        // A storage with a largest value: index segments are written within it.
        match storage.max_value_bytes() {
            Some(0) => {
                return Err(Error::invalid("the storage's max_value_bytes must be ≥ 1 (the largest file it writes)"))
            }
            Some(n) => options.max_value_bytes = n,
            None => {}
        }
        Ok(ContextManager { core: Manager::new(options)?, storage, turn: Mutex::new(()) })
    }

    /// The storage.
    pub fn storage(&self) -> &S {
        &self.storage
    }

    /// A manager, ready: a new session's manifest is written, a named one is resumed.
    pub async fn open(storage: S, options: Options) -> Result<Self> {
        let manager = Self::new(storage, options)?;
        if let Some(job) = manager.opening() {
            manager.drive(job).await?;
        }
        Ok(manager)
    }

    /// Saves one tool output and returns its filepath. Nothing is written and no
    /// pointer is added when it fails.
    ///
    /// The save is the plan the JavaScript driver runs ([`Manager::begin_save`], then
    /// [`SaveRecord`]); only the I/O is awaited here.
    pub async fn save(&self, input: SaveInput<'_>) -> Result<String> {
        let save = SaveRecord::new(&self.core, self.begin_save(input)?);
        let filepath = match save.done() {
            Some(filepath) => filepath.to_owned(),
            None => runner::run_in_turn(&self.storage, &self.turn, save).await?.0,
        };
        Ok(self.finish_save(filepath).await)
    }

    /// A saved record's filepath, once the index segment the save made due is written.
    async fn finish_save(&self, filepath: String) -> String {
        // Natively there is no background: a segment due is written here (JavaScript's
        // driver starts it after the save resolves).
        if let Some(job) = self.begin_persist_index() {
            let _ = self.drive(job).await;
        }
        filepath
    }

    /// The records at `filepaths`, in the order asked (a path asked twice, twice). A
    /// path outside the store, a missing file, one the storage cannot read or one that
    /// is not a whole record is skipped with a debug warning.
    pub async fn load(&self, filepaths: &[String]) -> Result<Vec<Rc<[u8]>>> {
        let plan = LoadRecords::new(&self.core, filepaths.to_vec())?;
        let (order, kept) = runner::run_in_turn(&self.storage, &self.turn, plan).await?;
        let record = |at: u32| {
            kept.get(at as usize)
                .cloned()
                .ok_or_else(|| Error::new(ErrorKind::Internal, "no record kept under that number"))
        };
        order.into_iter().map(record).collect()
    }

    /// Ranks every pointer for `query` (see [`Manager::rank_all`]), having read first what
    /// the ranking needs of the index segments read by range (their dictionary blocks and
    /// the query's lists; a storage that reads ranges: [`Storage::reads_ranges`]).
    /// [`Manager::rank_all`] alone ranks the records of those segments by their metadata.
    pub async fn search(
        &self,
        query: &Query,
        fallback: Fallback,
        strategy: Strategy,
        limit: Option<usize>,
    ) -> Result<Ranking> {
        let prepared = PrepareQuery::new(&self.core, query);
        runner::run(&self.storage, prepared.map(|()| Ok(self.core.rank_all(query, fallback, strategy, limit)))).await
    }

    /// Writes out every record held in memory.
    pub async fn flush(&self) -> Result<()> {
        self.drive(self.begin_flush()?).await
    }

    /// Closes the manager: later operations fail with [`ErrorKind::Closed`]; the
    /// operations in flight finish; the records held in memory are written out and the
    /// session manifest brought up to date. Once it resolves nothing of this manager
    /// runs any more (no write, no lock). Closing a closed manager does nothing. If
    /// writing out fails, the error is returned and the manager stays open with its
    /// records, so nothing is lost and `close` can be retried. Pointers stay readable.
    pub async fn close(&self) -> Result<()> {
        runner::run_in_turn(&self.storage, &self.turn, ClosePlan::new(&self.core)).await.map(drop)
    }

    /// Removes the records this manager wrote and drops those held in memory. Never
    /// touches any other file. Every removal is attempted; the first failure is returned.
    pub async fn clear_context_dir(&self) -> Result<()> {
        self.remove_written(self.begin_clear("clearContextDir")?, false).await
    }

    /// `clear_context_dir` after its first step (and `clear` with `pointers`).
    async fn remove_written(&self, clearing: Clearing, pointers: bool) -> Result<()> {
        match clearing {
            Clearing::Session(job) => self.drive(job).await,
            Clearing::Files(pass, written) => {
                runner::run(&self.storage, remove_written(&self.core, pass, written, pointers)).await
            }
        }
    }

    /// `clear_context_dir` and `clear_pointers`.
    pub async fn clear(&self) -> Result<()> {
        // In a session, the job clears the pointers.
        self.remove_written(self.begin_clear("clear")?, true).await
    }

    /// Ends the session: removes the files its manifest tracks and this manager wrote,
    /// the manifest, and then the folders if empty; drops pointers and in-memory records.
    pub async fn end_session(&self) -> Result<()> {
        let job = self.begin_end_session()?;
        self.drive(job).await
    }

    /// Rebuilds the index from the record files: in a session, the manifest (a torn
    /// record is removed); without one, the pointers of every record in the context
    /// dir (records written by the seed implementation are adopted too). Adopted records
    /// are pointers, not this manager's own: `clear_context_dir` leaves them. Read-only,
    /// only the pointers are rebuilt. Returns the number of records indexed.
    pub async fn rebuild_index(&self) -> Result<usize> {
        let job = self.begin_rebuild_index()?;
        Ok(self.drive_indexing(job).await?.len())
    }

    /// Adopts the records a crash left out of the session manifest: the record files of
    /// the session folder (and its category folders) that neither this manager nor the
    /// manifest on disk lists get a manifest entry and a pointer, so `endSession`, stale
    /// cleanup and retention count them. A file that does not parse is skipped (reported
    /// through `onDebug`). Outside a session there is nothing to reconcile: records in a
    /// shared folder belong to whoever wrote them (`rebuildIndex` re-reads them as
    /// pointers). Returns the filepaths adopted.
    pub async fn reconcile(&self) -> Result<Vec<String>> {
        match self.begin_reconcile()? {
            Some(job) => self.drive_indexing(job).await,
            None => Ok(Vec::new()),
        }
    }

    /// Runs `job` natively: its operations against the storage, between its steps, its
    /// locks inside this manager's turn at them.
    async fn drive(&self, job: Job) -> Result<()> {
        self.drive_indexing(job).await.map(drop)
    }

    /// [`ContextManager::drive`], resolving to the filepaths the job indexed.
    async fn drive_indexing(&self, job: Job) -> Result<Vec<String>> {
        runner::run_in_turn(&self.storage, &self.turn, JobPlan { manager: &self.core, job })
            .await
            .map(|(indexed, _)| indexed)
    }
}
