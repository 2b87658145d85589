//! What a stage of a job asks for next ([`Next`]): the one type the jobs (`jobs`) and the
//! stages written beside them (`persist`: the segment write; `open`: the opening of a
//! store) share, so neither imports the other's.

use crate::plan::Op;

/// What a stage asks for next.
pub(super) enum Next {
    /// Nothing: the stage is done.
    Nothing,
    /// Run these ops.
    Run(Vec<Op>),
    /// Take the named lock (the stage's next step gets no outcome, or the lock's failure);
    /// `wait: false` as [`Step::Lock`](crate::plan::Step::Lock) says.
    Lock { name: String, wait: bool },
    /// Release it (the next step gets no outcome, or the lock's failure).
    Unlock,
}

impl From<Vec<Op>> for Next {
    fn from(ops: Vec<Op>) -> Next {
        if ops.is_empty() {
            Next::Nothing
        } else {
            Next::Run(ops)
        }
    }
}
