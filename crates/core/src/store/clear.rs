//! Forgetting and removing: `clear_pointers`, `clear_context_dir`, `clear` and `end_session`
//! ([`Clearing`]).

use super::{Job, Manager, State};
use crate::error::Result;
use crate::lifecycle::Pass;
use crate::plan::{self, Op, Outcomes, Plan};
use std::ops::Deref;

impl Manager {
    /// Forgets every pointer (records stay where they are).
    pub fn clear_pointers(&self) {
        self.state.borrow_mut().forget_pointers();
    }

    /// The first step of `clear_context_dir` and `clear` (`what`): the gate passed and the
    /// manager writable, what to remove. Without a session, the records held in memory are
    /// dropped here.
    pub fn begin_clear(&self, what: &str) -> Result<Clearing> {
        let pass = self.gate.enter(what)?;
        self.check_writable()?;
        if self.session.is_some() {
            let job = if what == "clear" { Job::clear_session(pass) } else { Job::end_session(Some(pass)) };
            return Ok(Clearing::Session(job));
        }
        let mut state = self.state.borrow_mut();
        state.held.clear();
        Ok(Clearing::Files(pass, state.pointers.written_paths()))
    }

    /// The last step of the removal of the records this manager wrote, given how each
    /// removal of `written` ended: those removed are no longer its own; the first failure
    /// is the error.
    pub fn written_removed(&self, written: &[String], outcomes: Outcomes) -> Result<()> {
        let mut first_error = None;
        let mut state = self.state.borrow_mut();
        for (path, result) in written.iter().zip(outcomes) {
            match result {
                Ok(_) => state.pointers.unmark_written(path),
                Err(e) => {
                    first_error.get_or_insert(e);
                }
            }
        }
        let State { owned, pointers, .. } = &mut *state;
        owned.retain(|p| pointers.is_written(p));
        first_error.map_or(Ok(()), Err)
    }

    /// The first step of `endSession`: its job (see [`Manager::job_step`]).
    pub fn begin_end_session(&self) -> Result<Job> {
        let pass = self.gate.enter("endSession")?;
        self.check_writable()?;
        Ok(Job::end_session(Some(pass)))
    }
}

/// What `clear_context_dir` removes, decided by its first step; each holds the pass of
/// the operation (a `close()` waits for it).
pub enum Clearing {
    /// In a session, the session: its files, manifest and folders (the job of
    /// `end_session`; for `clear`, the one that also forgets the pointers).
    Session(Job),
    /// Else the records this manager wrote ([`remove_written`]).
    Files(Pass, Vec<String>),
}

/// The removals of `Clearing::Files` (`pass`, `written`) over the manager `m` (a reference,
/// or the `Rc` a wasm plan keeps): a plan of one batch, whose last step forgets every
/// pointer too when `pointers` (`clear`), and ends the operation.
pub fn remove_written<M: Deref<Target = Manager>>(
    m: M,
    pass: Pass,
    written: Vec<String>,
    pointers: bool,
) -> impl Plan<Output = ()> {
    let removes = written.iter().map(|p| Op::Remove(p.clone())).collect();
    plan::batch(removes, move |outcomes| {
        let result = m.written_removed(&written, outcomes);
        if pointers {
            m.clear_pointers();
        }
        drop(pass);
        result
    })
}
