//! A sync's pull: the conversations the remote has that differ from the local copy (none
//! with changes still queued), each read there and absorbed; then the queue left.

use super::{conv_want, queue_items, At, Merged, Phase, Step, SyncFailure, SyncRun};
use crate::conversation::files::{Side, Want};
use crate::conversation::Conversations;
use crate::error::{ErrorKind, Result};
use crate::sort::set_of;

impl Conversations {
    /// Reports the queue's unreadable items; the pull begins.
    pub(super) fn unreadable(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let queue = Want { queue: true, ..Want::default() };
        if let Some(step) = self.load(run, Side::Local, &queue) {
            return Ok(Some(step));
        }
        for (name, item) in queue_items(&self.view(&run.local, Side::Local))? {
            if let Err(e) = item {
                run.report.failed.push(SyncFailure {
                    item: name,
                    conversation_id: None,
                    code: e.code(),
                    error: format!("unreadable queue item, kept: {e}"),
                    attempts: 0,
                });
            }
        }
        run.phase = Phase::Pull;
        run.remote.forget_index(&self.remote_base);
        run.at = At::Pull;
        Ok(None)
    }

    /// Reads the remote's index: the conversations to pull.
    pub(super) fn pull(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        if let Some(step) = self.load(run, Side::Remote, &Want { index: true, ..Want::default() }) {
            return Ok(Some(step));
        }
        // Not those with changes still queued, nor those that failed or wait.
        let queued = queue_items(&self.view(&run.local, Side::Local))?
            .into_iter()
            .filter_map(|(_, i)| i.ok().map(|i| i.conversation_id));
        let skip = set_of(queued.chain(run.waiting.iter().cloned()));
        let mut list = self.view(&run.remote, Side::Remote).index()?;
        list.retain(|m| !skip.contains(&m.id));
        list.reverse();
        run.pull = list;
        run.at = At::PullNext;
        Ok(None)
    }

    /// Moves to the next conversation to pull (none: the end).
    pub(super) fn pull_next(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let queue_dir = self.layout(Side::Local).queue_dir();
        let Some(rmeta) = run.pull.last() else {
            run.phase = Phase::Queue;
            run.local.forget_listing(&queue_dir);
            run.at = At::Final;
            return Ok(None);
        };
        run.conv = rmeta.id.clone();
        run.local.forget(&self.layout(Side::Local).dir(&run.conv));
        run.remote.forget(&self.view(&run.remote, Side::Remote).dir(&run.conv));
        run.at = At::PullLocal;
        Ok(None)
    }

    /// Compares its local metadata with the remote's.
    pub(super) fn pull_local(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let want = Want { conv: Some(run.conv.clone()), meta: true, ..Want::default() };
        if let Some(step) = self.load(run, Side::Local, &want) {
            return Ok(Some(step));
        }
        // Any difference, not only a later updatedAt: two sides can change within
        // one clock tick, or with skewed clocks.
        let rmeta = run.pull.pop();
        if self.view(&run.local, Side::Local).metadata(&run.conv)? == rmeta {
            run.at = At::PullNext;
            return Ok(None);
        }
        run.at = At::PullRemote;
        Ok(None)
    }

    /// Reads its remote copy, to absorb.
    pub(super) fn pull_remote(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        if let Some(step) = self.load(run, Side::Remote, &conv_want(&run.conv)) {
            return Ok(Some(step));
        }
        let remote = self.view(&run.remote, Side::Remote);
        let conv = run.conv.as_str();
        let meta = match remote.metadata(conv) {
            Ok(Some(meta)) => meta,
            Ok(None) => {
                run.at = At::PullNext;
                return Ok(None);
            }
            Err(e) if e.kind() == ErrorKind::CorruptRecord => {
                self.debug(format!("skipped the remote's conversation {conv}: {e}"), e.path());
                run.at = At::PullNext;
                return Ok(None);
            }
            Err(e) => return Err(e),
        };
        let messages = remote.messages(conv)?.messages;
        let pruned = remote.pruned(conv)?;
        let artifacts = remote.artifacts(conv)?;
        run.merged = Some(Box::new(Merged { meta, messages, pruned, artifacts }));
        run.changed = false;
        run.at = At::Absorb;
        Ok(None)
    }

    /// Counts the queue that is left: the sync is done.
    pub(super) fn finish_sync(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let queue = Want { queue: true, ..Want::default() };
        if let Some(step) = self.load(run, Side::Local, &queue) {
            return Ok(Some(step));
        }
        run.report.pending = queue_items(&self.view(&run.local, Side::Local))?.len();
        Ok(Some(Step::Done(std::mem::take(&mut run.report))))
    }
}
