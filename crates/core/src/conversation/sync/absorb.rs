//! Absorbing a merged state into the local copy (after a push, or a pull): the artifacts
//! it lacks, then messages, pruned ids and metadata, under the local lock.

use super::{conv_want, lww, At, Phase, Step, SyncRun};
use crate::conversation::files::{Side, Want};
use crate::conversation::messages::merge;
use crate::conversation::Conversations;
use crate::error::{Error, ErrorKind, Result};
use crate::paths::join;
use crate::plan::Op;
use crate::sort::set_of;

impl Conversations {
    /// Reads which artifacts the local copy lacks, and their contents on the remote.
    pub(super) fn absorb(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let Some(merged) = &run.merged else { return Err(Error::new(ErrorKind::Internal, "no merge")) };
        let conv = merged.meta.id.clone();
        let want = Want { conv: Some(conv.clone()), artifacts: true, ..Want::default() };
        if let Some(step) = self.load(run, Side::Local, &want) {
            return Ok(Some(step));
        }
        let have = set_of(self.view(&run.local, Side::Local).artifacts(&conv)?.into_iter().map(|a| a.id));
        let missing = merged.artifacts.iter().filter(|a| !have.contains(&a.id)).map(|a| a.id.clone());
        let want = Want { conv: Some(conv), artifact_ids: missing.collect(), ..Want::default() };
        run.at = At::AbsorbContents;
        if let Some(step) = self.load(run, Side::Remote, &want) {
            return Ok(Some(step));
        }
        Ok(None)
    }

    /// Writes the artifacts the local copy lacks.
    pub(super) fn absorb_contents(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let Some(merged) = &run.merged else { return Err(Error::new(ErrorKind::Internal, "no merge")) };
        let conv = merged.meta.id.as_str();
        let local = self.view(&run.local, Side::Local);
        let remote = self.view(&run.remote, Side::Remote);
        let have = set_of(local.artifacts(conv)?.into_iter().map(|a| a.id));
        let mut plan = Vec::new();
        for a in merged.artifacts.iter().filter(|a| !have.contains(&a.id)) {
            let Some(content) = remote.artifact_content(conv, &a.id)? else { continue };
            local.write_artifact(&mut plan, conv, a, &content, false)?;
        }
        run.changed = !plan.is_empty();
        run.local.forget(&self.layout(Side::Local).dir(conv));
        run.local.forget_index(&self.base);
        run.at = At::AbsorbRead;
        Ok(Some(Step::Change(Side::Local, plan)))
    }

    /// Merges the state into the local copy, under the local lock.
    pub(super) fn absorb_read(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        if run.held != Some(Side::Local) {
            return Ok(Some(Step::Lock(Side::Local)));
        }
        let Some(merged) = &run.merged else { return Err(Error::new(ErrorKind::Internal, "no merge")) };
        let conv = merged.meta.id.clone();
        let want = Want { index: true, ..conv_want(&conv) };
        if let Some(step) = self.load(run, Side::Local, &want) {
            return Ok(Some(step));
        }
        let local = self.view(&run.local, Side::Local);
        let current = local.metadata(&conv)?;
        let cur = local.messages(&conv)?.messages;
        let cur_pruned = local.pruned(&conv)?;
        let pruned = set_of(cur_pruned.union(&merged.pruned).cloned());
        let messages = merge(&cur, &merged.messages, &pruned);
        let mut plan = Vec::new();
        if messages != cur {
            local.write_messages(&mut plan, &conv, &messages)?;
            self.set_tail(&conv, crate::conversation::latest(&messages));
            run.changed = true;
        }
        if pruned != cur_pruned {
            local.write_pruned(&mut plan, &conv, &pruned)?;
        }
        let mut meta = match &current {
            Some(l) => lww(l, Some(&merged.meta)),
            None => merged.meta.clone(),
        };
        meta.message_count = messages.len() as u64;
        meta.artifact_count = local.artifacts(&conv)?.len() as u64;
        if current.as_ref() != Some(&meta) {
            local.write_metadata(&mut plan, &meta)?;
            local.index_upsert(&mut plan, &meta)?;
            run.changed = true;
        }
        run.at = At::Absorbed;
        Ok(Some(Step::Change(Side::Local, plan)))
    }

    /// Releases the local lock.
    pub(super) fn absorbed(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        run.at = At::AbsorbEnd;
        Ok(Some(Step::Unlock(Side::Local)))
    }

    /// Counts the pull; after a push, removes the pushed items from the queue.
    pub(super) fn absorb_end(&self, run: &mut SyncRun) -> Result<Option<Step>> {
        let queue_dir = self.layout(Side::Local).queue_dir();
        run.report.pulled += usize::from(run.changed);
        if run.phase == Phase::Pull {
            run.at = At::PullNext;
            return Ok(None);
        }
        // Pushed: its items go (an item written meanwhile stays for the next sync).
        run.phase = Phase::Queue;
        run.report.pushed += run.items.len();
        let plan = run.items.iter().map(|(name, _)| Op::Remove(join(&queue_dir, name))).collect();
        run.at = At::NextConv;
        Ok(Some(Step::Change(Side::Local, plan)))
    }
}
