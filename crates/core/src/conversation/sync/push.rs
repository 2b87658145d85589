//! A sync's push: the queue read, each conversation with items due taken under the
//! local lock, merged into the remote's copy under the remote's lock; a failed push
//! recorded in its items.

use super::{conv_want, lww, missing_content, queue_items, At, LocalState, Merged, Phase, Step, SyncFailure, SyncRun};
use crate::conversation::files::{Side, Want};
use crate::conversation::messages::merge;
use crate::conversation::replica::to_json;
use crate::conversation::Conversations;
use crate::error::{Error, ErrorKind, Result};
use crate::paths::join;
use crate::plan::Op;
use crate::sort::set_of;

impl Conversations {
    /// Reads the queue: which conversations have items.
    pub(super) fn start(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let queue = Want { queue: true, ..Want::default() };
        if let Some(step) = self.load(run, Side::Local, &queue) {
            return Ok(Some(step));
        }
        let items = queue_items(&self.view(&run.local, Side::Local))?;
        run.convs =
            set_of(items.into_iter().filter_map(|(_, i)| i.ok()).map(|i| i.conversation_id)).into_iter().collect();
        run.at = At::NextConv;
        Ok(None)
    }

    /// Moves to the next conversation to push, under the local lock.
    pub(super) fn next_conv(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let queue_dir = self.layout(Side::Local).queue_dir();
        let Some(conv) = run.convs.get(run.next).cloned() else {
            run.at = At::Unreadable;
            run.local.forget_listing(&queue_dir);
            return Ok(None);
        };
        run.next += 1;
        run.conv = conv;
        // Read again under the lock: the items written since.
        run.local.forget_listing(&queue_dir);
        run.at = At::Take;
        Ok(Some(Step::Lock(Side::Local)))
    }

    /// Takes the conversation's items that are due (none: on to the next).
    pub(super) fn take(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let queue = Want { queue: true, ..Want::default() };
        if let Some(step) = self.load(run, Side::Local, &queue) {
            return Ok(Some(step));
        }
        let conv = run.conv.clone();
        run.items = queue_items(&self.view(&run.local, Side::Local))?
            .into_iter()
            .filter_map(|(name, item)| match item {
                Ok(item) if item.conversation_id == conv => Some((name, item)),
                _ => None,
            })
            .collect();
        let now = run.now;
        if run.items.iter().all(|(_, i)| i.next_attempt_ms.is_some_and(|t| t > now)) {
            if !run.items.is_empty() {
                run.waiting.insert(conv);
            }
            run.at = At::NextConv;
            return Ok(Some(Step::Unlock(Side::Local)));
        }
        run.local.forget(&self.layout(Side::Local).dir(&conv));
        run.at = At::TakeState;
        Ok(None)
    }

    /// Reads the conversation's local state, then releases the local lock.
    pub(super) fn take_state(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        if let Some(step) = self.load(run, Side::Local, &conv_want(&run.conv)) {
            return Ok(Some(step));
        }
        let view = self.view(&run.local, Side::Local);
        let conv = run.conv.as_str();
        run.state = match view.metadata(conv)? {
            None => None,
            Some(meta) => Some(Box::new(LocalState {
                meta,
                messages: view.messages(conv)?.messages,
                artifacts: view.artifacts(conv)?,
                pruned: view.pruned(conv)?,
            })),
        };
        run.at = At::PushLock;
        Ok(Some(Step::Unlock(Side::Local)))
    }

    /// Locks the remote.
    pub(super) fn push_lock(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        run.phase = Phase::Push;
        run.merged = None;
        run.remote.forget(&self.view(&run.remote, Side::Remote).dir(&run.conv));
        run.remote.forget_index(&self.remote_base);
        run.at = At::PushRead;
        Ok(Some(Step::Lock(Side::Remote)))
    }

    /// Reads the remote's copy; a conversation deleted locally is removed there.
    pub(super) fn push_read(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let want = Want { index: true, ..conv_want(&run.conv) };
        if let Some(step) = self.load(run, Side::Remote, &want) {
            return Ok(Some(step));
        }
        let remote = self.view(&run.remote, Side::Remote);
        let conv = run.conv.as_str();
        let Some(state) = &run.state else {
            let mut plan = Vec::new();
            remote.remove_conversation(&mut plan, conv)?;
            remote.index_remove(&mut plan, conv)?;
            run.at = At::Pushed;
            return Ok(Some(Step::Change(Side::Remote, plan)));
        };
        // Every content is there before anything is written: a missing one fails
        // the push rather than reach the remote as an empty artifact.
        let have = set_of(remote.artifacts(conv)?.into_iter().map(|a| a.id));
        let local = self.view(&run.local, Side::Local);
        let contents = local.artifact_contents(conv)?;
        let missing: Vec<String> =
            state.artifacts.iter().filter(|a| !have.contains(&a.id)).map(|a| a.id.clone()).collect();
        if let Some(art) = missing.iter().find(|a| !contents.contains(*a)) {
            return Err(missing_content(&local, conv, art));
        }
        run.at = At::PushContents;
        let want = Want { conv: Some(conv.to_owned()), artifact_ids: missing, ..Want::default() };
        if let Some(step) = self.load(run, Side::Local, &want) {
            return Ok(Some(step));
        }
        Ok(None)
    }

    /// Writes the merged state to the remote, with the artifacts it lacks.
    pub(super) fn push_contents(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let remote = self.view(&run.remote, Side::Remote);
        let local = self.view(&run.local, Side::Local);
        let conv = run.conv.as_str();
        let Some(state) = &run.state else { return Err(Error::new(ErrorKind::Internal, "no state")) };
        let rmeta = remote.metadata(conv)?;
        let rmsgs = remote.messages(conv)?.messages;
        let rarts = remote.artifacts(conv)?;
        let rpruned = remote.pruned(conv)?;
        let pruned = set_of(state.pruned.union(&rpruned).cloned());
        let merged = merge(&state.messages, &rmsgs, &pruned);
        let have = set_of(rarts.iter().map(|a| a.id.clone()));
        let mut plan = Vec::new();
        let mut art_count = rarts.len();
        for a in state.artifacts.iter().filter(|a| !have.contains(&a.id)) {
            let content = local.artifact_content(conv, &a.id)?.ok_or_else(|| missing_content(&local, conv, &a.id))?;
            remote.write_artifact(&mut plan, conv, a, &content, false)?;
            art_count += 1;
        }
        if pruned != rpruned {
            remote.write_pruned(&mut plan, conv, &pruned)?;
        }
        if merged != rmsgs {
            remote.write_messages(&mut plan, conv, &merged)?;
        }
        let mut meta = lww(&state.meta, rmeta.as_ref());
        meta.message_count = merged.len() as u64;
        meta.artifact_count = art_count as u64;
        if rmeta.as_ref() != Some(&meta) {
            remote.write_metadata(&mut plan, &meta)?;
            remote.index_upsert(&mut plan, &meta)?;
        }
        run.merged = Some(Box::new(Merged { meta, messages: merged, pruned, artifacts: rarts }));
        run.at = At::Pushed;
        Ok(Some(Step::Change(Side::Remote, plan)))
    }

    /// Unlocks the remote; the merged state is absorbed locally next.
    pub(super) fn pushed(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        run.at = if run.merged.is_some() { At::Absorb } else { At::AbsorbEnd };
        run.changed = false;
        run.local.forget(&self.layout(Side::Local).dir(&run.conv));
        Ok(Some(Step::Unlock(Side::Remote)))
    }

    /// Records a failed push in its items (attempts, error, the next attempt).
    pub(super) fn push_failed(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let queue_dir = self.layout(Side::Local).queue_dir();
        let e = run.failure.take().unwrap_or_else(|| Error::new(ErrorKind::Internal, "no failure"));
        let conv = run.conv.clone();
        run.waiting.insert(conv.clone());
        self.debug(format!("sync of conversation {conv} failed: {e}"), None);
        let mut plan = Vec::new();
        for (name, item) in std::mem::take(&mut run.items) {
            let mut item = item.clone();
            item.attempts += 1;
            item.last_error = Some(e.to_string());
            item.next_attempt_ms = Some(run.now.saturating_add(self.options.retry.delay(item.attempts) as i64));
            plan.push(Op::Write {
                path: join(&queue_dir, &name),
                bytes: to_json(&item)?.into_bytes(),
                exclusive: false,
            });
            run.report.failed.push(SyncFailure {
                item: name,
                conversation_id: Some(conv.clone()),
                code: e.code(),
                error: e.to_string(),
                attempts: item.attempts,
            });
        }
        run.at = At::NextConv;
        Ok(Some(Step::Change(Side::Local, plan)))
    }
}
