//! A manager's lifecycle: open, closing, closed, and the operations in flight.
//!
//! Every operation that does I/O enters through the [`Gate`] and holds a [`Pass`] until
//! it ends. `close()` shuts the gate (later operations fail with
//! [`ErrorKind::Closed`]), waits until the passes in flight are dropped, writes out
//! what is held in memory, and only then reports the manager closed: once `close()`
//! has resolved, no write, lock or timer of the manager is left running.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::task::Waker;

use crate::error::{Error, ErrorKind, Result};

/// Where a manager is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Accepting operations.
    Open,
    /// `close()` is waiting for the operations in flight and writing out.
    Closing,
    /// Closed: operations fail with [`ErrorKind::Closed`].
    Closed,
}

/// The open/closed state and the count of operations in flight.
pub struct Gate {
    phase: Cell<Phase>,
    in_flight: Cell<usize>,
    waiters: RefCell<Vec<Waker>>,
}

impl Default for Gate {
    fn default() -> Self {
        Gate { phase: Cell::new(Phase::Open), in_flight: Cell::new(0), waiters: RefCell::new(Vec::new()) }
    }
}

/// An operation in flight; dropping it ends the operation. It owns a handle on the
/// gate, so an operation run in steps (a save whose write the host does) holds it
/// between them.
pub struct Pass(Rc<Gate>);

impl Drop for Pass {
    fn drop(&mut self) {
        let left = self.0.in_flight.get() - 1;
        self.0.in_flight.set(left);
        if left == 0 {
            self.0.wake_all();
        }
    }
}

impl Gate {
    /// A pass for one operation, or `CLOSED` once `close()` has begun.
    pub fn enter(self: &Rc<Self>, what: &str) -> Result<Pass> {
        if self.phase.get() != Phase::Open {
            return Err(Error::new(ErrorKind::Closed, format!("{what}: this ContextManager is closed")));
        }
        self.in_flight.set(self.in_flight.get() + 1);
        Ok(Pass(self.clone()))
    }

    /// The current phase.
    pub fn phase(&self) -> Phase {
        self.phase.get()
    }

    /// Moves to `phase` and wakes whoever waits for a change.
    pub fn set(&self, phase: Phase) {
        self.phase.set(phase);
        self.wake_all();
    }

    /// Whether no operation is in flight.
    pub fn is_idle(&self) -> bool {
        self.in_flight.get() == 0
    }

    /// Calls `waker` at the next change: an operation ending, or the phase changing.
    pub fn wake_on_change(&self, waker: &Waker) {
        self.waiters.borrow_mut().push(waker.clone());
    }

    fn wake_all(&self) {
        let waiters = std::mem::take(&mut *self.waiters.borrow_mut());
        waiters.into_iter().for_each(Waker::wake);
    }
}
