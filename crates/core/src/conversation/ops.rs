//! The store's operations as plans (crates/core/src/plan.rs), sans-IO: an [`OperationPlan`] takes
//! the local writers' lock when its request writes ([`Request::exclusive`]), asks for the
//! reads and listings it needs ([`Conversations::needs`], until nothing), decides what to
//! change and what to answer ([`Conversations::decide`]), makes its changes in one
//! [`Step::Change`](crate::plan::Step::Change) (in order, up to the first that fails: a taken name of an exclusive
//! write is drawn again and the changes run on from there, [`Conversations::failed`]),
//! and answers. Natively
//! `ConversationStore::perform` (`crates/native/src/conversation_store.rs`) runs it with the plan
//! runner; in wasm, `crates/wasm/src/conversation.rs` starts it in `crates/wasm/src/plans.rs`, whose
//! steps the JavaScript driver runs (`pkg-template/driver.js`, docs/protocol.md).
//!
//! Here: the requests, their answers and the store's decisions; the plan that runs them
//! is `ops/plan.rs`, its tests `ops/tests.rs`.

use super::artifacts::{self, reference_text, ArtifactMeta};
use super::export::{self, ExportedArtifact, Format, Snapshot};
use super::files::{Files, Side, Want};
use super::ids::new_id;
use super::messages::{merge, Message, Role};
use super::prune::{self, PruneOptions, Pruned};
use super::replica::{ConversationMetadata, View};
use super::stats::{self, Stats};
use super::sync::{queue_items, sync_status, QueueOp, SyncStatus};
use super::{latest, not_found, ArtifactInput, Conversations};
use crate::error::{Error, ErrorKind, Result};
use crate::plan::Op;
use crate::record::iso_timestamp;

mod plan;
#[cfg(test)]
mod tests;

pub use plan::OperationPlan;

/// An operation and its arguments, checked.
#[derive(Debug, Clone)]
pub enum Request {
    /// A new conversation (with the caller's id, if given).
    Create {
        /// Its title.
        title: Option<String>,
        /// The id the caller chose, if any.
        id: Option<String>,
    },
    /// The index.
    List,
    /// One conversation's metadata.
    Get(String),
    /// Removes a conversation.
    Delete(String),
    /// Appends a message (and stores an artifact it references, when given).
    Append {
        /// The conversation id.
        conv: String,
        /// The message.
        message: Message,
        /// Its timestamp was filled in (the caller gave none).
        defaulted: bool,
        /// The caller gave the message its id.
        given_id: bool,
        /// An artifact to store with it.
        artifact: Option<ArtifactInput>,
    },
    /// The messages, optionally of one role.
    Messages {
        /// The conversation id.
        conv: String,
        /// Only messages of this role.
        role: Option<Role>,
    },
    /// Stores an artifact.
    StoreArtifact {
        /// The conversation id.
        conv: String,
        /// The artifact.
        input: ArtifactInput,
    },
    /// One artifact with its content.
    Artifact {
        /// The conversation id.
        conv: String,
        /// The artifact id.
        art: String,
    },
    /// The artifacts' metas.
    ListArtifacts(String),
    /// The artifacts a text references.
    Resolve {
        /// The conversation id.
        conv: String,
        /// The text whose artifact references are resolved.
        text: String,
    },
    /// Stats, with an optional cost per token.
    Stats {
        /// The conversation id.
        conv: String,
        /// Cost per token, for an estimate.
        cost: Option<f64>,
    },
    /// Pruning; `apply` rewrites the conversation.
    Prune {
        /// The conversation id.
        conv: String,
        /// What to prune.
        options: PruneOptions,
        /// Rewrite the conversation (else only report).
        apply: bool,
    },
    /// The conversation in a format.
    Export {
        /// The conversation id.
        conv: String,
        /// The export format.
        format: Format,
    },
    /// Imports an export.
    Import(Box<Snapshot>),
    /// The sync queue's state.
    SyncStatus,
}

/// What an operation answers.
#[derive(Debug, Clone)]
pub enum Answer {
    /// Nothing (a deletion).
    Nothing,
    /// A conversation's metadata.
    Conversation(ConversationMetadata),
    /// Conversations.
    Conversations(Vec<ConversationMetadata>),
    /// A message, and the artifact stored with it.
    Message(Message, Option<ArtifactMeta>),
    /// Messages.
    Messages(Vec<Message>),
    /// An artifact's meta.
    Artifact(ArtifactMeta),
    /// Artifacts' metas.
    Artifacts(Vec<ArtifactMeta>),
    /// An artifact's meta and content.
    Found(ArtifactMeta, Vec<u8>),
    /// Artifacts' metas and contents.
    Contents(Vec<(ArtifactMeta, Vec<u8>)>),
    /// Stats.
    Stats(Stats),
    /// What pruning keeps and drops.
    Pruned(Pruned),
    /// A text (an export).
    Text(String),
    /// The sync queue's state.
    SyncStatus(SyncStatus),
}

/// An operation under way: its request, the time it started, the ids it drew, and the
/// files it has read.
struct Operation {
    request: Request,
    now: i64,
    /// The name of its sync queue item, once drawn.
    queue_name: Option<String>,
    /// The id of the artifact it stores, once drawn.
    artifact_id: Option<String>,
    /// For an append: the latest message timestamp of the conversation, when the store
    /// knows that its file ends with a newline (taken at the first read, as the writer).
    tail: Option<Option<i64>>,
    /// What it has read.
    files: Files,
    /// The actions of its decision already run (before an exclusive write found its
    /// name taken: the same decision with a fresh name runs on from there).
    done: usize,
}

/// What an operation decided: the actions to run in order, the answer, and what the
/// store knows afterwards of the end of the conversation's `messages.jsonl`.
struct Decision {
    /// The changes.
    actions: Vec<Op>,
    /// The answer, once the changes are made.
    answer: Answer,
    /// `Some(None)`: not known (a conversation deleted).
    tail: Option<(String, Option<i64>)>,
}

impl Request {
    /// Whether the operation writes (and so runs as the store's only writer).
    pub fn exclusive(&self) -> bool {
        match self {
            Request::Create { .. }
            | Request::Delete(_)
            | Request::Append { .. }
            | Request::StoreArtifact { .. }
            | Request::Import(_) => true,
            Request::Prune { apply, .. } => *apply,
            _ => false,
        }
    }

    /// The conversation the request is about.
    fn conv(&self) -> Option<&str> {
        match self {
            Request::Get(conv) | Request::Delete(conv) | Request::ListArtifacts(conv) => Some(conv),
            Request::Append { conv, .. }
            | Request::Messages { conv, .. }
            | Request::StoreArtifact { conv, .. }
            | Request::Artifact { conv, .. }
            | Request::Resolve { conv, .. }
            | Request::Stats { conv, .. }
            | Request::Prune { conv, .. }
            | Request::Export { conv, .. } => Some(conv),
            Request::Create { id, .. } => id.as_deref(),
            Request::Import(snapshot) => Some(&snapshot.conversation.id),
            Request::List | Request::SyncStatus => None,
        }
    }
}

/// The name an exclusive write draws, which is drawn again when it is taken.
#[derive(Debug, Clone, Copy)]
enum Drawn {
    /// The sync queue item's.
    QueueItem,
    /// The artifact's id.
    Artifact,
}

impl Conversations {
    /// An operation of `request`, started now.
    fn begin(&self, request: Request) -> Operation {
        Operation {
            request,
            now: self.now_ms(),
            queue_name: None,
            artifact_id: None,
            tail: None,
            files: Files::new(),
            done: 0,
        }
    }

    /// What `op` reads of the local storage.
    fn want(&self, op: &mut Operation) -> Want {
        let mut want = Want { conv: op.request.conv().map(str::to_owned), meta: true, ..Want::default() };
        let index = op.request.exclusive();
        match &op.request {
            Request::List => want.index = true,
            Request::SyncStatus => want.queue = true,
            Request::Get(_) | Request::Create { .. } => {}
            Request::Delete(_) => want.artifacts = true,
            Request::Append { conv, given_id, .. } => {
                let tail = *op.tail.get_or_insert_with(|| self.tails.borrow().get(conv).copied().flatten());
                want.messages = *given_id || tail.is_none();
            }
            Request::Messages { .. } => want.messages = true,
            Request::Prune { .. } => {
                want.messages = true;
                want.pruned = true;
            }
            Request::StoreArtifact { .. } => {}
            Request::Artifact { art, .. } => want.artifact_ids = vec![art.clone()],
            Request::Resolve { text, .. } => {
                want.artifact_ids = artifacts::artifact_refs(text);
                want.artifact_ids.retain(|id| super::validate_id(id, "artifact id").is_ok());
            }
            Request::ListArtifacts(_) => want.artifacts = true,
            Request::Stats { .. } => {
                want.messages = true;
                want.artifacts = true;
            }
            Request::Export { .. } => {
                want.messages = true;
                want.contents = true;
            }
            Request::Import(_) => {
                want.messages = true;
                want.pruned = true;
                want.artifacts = true;
            }
        }
        want.index = want.index || index;
        want
    }

    /// The reads and listings `op` still needs (none: it can decide).
    fn needs(&self, op: &mut Operation) -> Vec<Op> {
        let want = self.want(op);
        self.view(&op.files, Side::Local).needs(&want)
    }

    /// What `op` changes and answers, from what it read.
    fn decide(&self, op: &mut Operation) -> Result<Decision> {
        let now = op.now;
        let mut plan = Vec::new();
        if op.request.exclusive() && self.has_remote && op.queue_name.is_none() {
            op.queue_name = Some(self.queue_name(now)?);
        }
        let queue_name = op.queue_name.clone().unwrap_or_default();
        let view = self.view(&op.files, Side::Local);
        let mut tail = None;
        let answer = match &op.request {
            Request::Create { title, id } => {
                let id = match id {
                    Some(id) => {
                        if view.metadata(id)?.is_some() {
                            return Err(Error::invalid(format!("conversation {id:?} exists already")));
                        }
                        id.clone()
                    }
                    None => new_id("conv", &self.options.random)?,
                };
                let at = iso_timestamp(now);
                let meta = ConversationMetadata {
                    id: id.clone(),
                    title: title.clone(),
                    created_at: at.clone(),
                    updated_at: at,
                    message_count: 0,
                    artifact_count: 0,
                };
                self.enqueue(&mut plan, &id, QueueOp::Update, now, &queue_name)?;
                view.write_metadata(&mut plan, &meta)?;
                view.index_upsert(&mut plan, &meta)?;
                Answer::Conversation(meta)
            }
            Request::List => Answer::Conversations(view.index()?),
            Request::Get(conv) => Answer::Conversation(view.existing(conv)?),
            Request::Delete(conv) => {
                view.existing(conv)?;
                self.enqueue(&mut plan, conv, QueueOp::Delete, now, &queue_name)?;
                view.remove_conversation(&mut plan, conv)?;
                tail = Some((conv.clone(), None));
                view.index_remove(&mut plan, conv)?;
                Answer::Nothing
            }
            Request::Append { conv, message, defaulted, given_id, artifact } => {
                let mut meta = view.existing(conv)?;
                let mut torn = false;
                let last = match op.tail.flatten() {
                    Some(last) if !*given_id => last,
                    _ => {
                        let parsed = view.messages(conv)?;
                        if *given_id && parsed.messages.iter().any(|m| m.id == message.id) {
                            return Err(Error::invalid(format!("message {:?} exists already", message.id)));
                        }
                        torn = !parsed.clean_tail;
                        match op.tail.flatten() {
                            Some(last) => last,
                            None => latest(&parsed.messages),
                        }
                    }
                };
                self.enqueue(&mut plan, conv, QueueOp::Update, now, &queue_name)?;
                let mut message = message.clone();
                let stored = match artifact {
                    Some(input) => {
                        let art = self.store_artifact_in(&view, &mut plan, &mut op.artifact_id, conv, input, now)?;
                        message.content = reference_text(&message.content, &art.id);
                        meta.artifact_count += 1;
                        Some(art)
                    }
                    None => None,
                };
                if *defaulted {
                    // After every message already there, so that conversation order (timestamp,
                    // then id) is append order even within one millisecond.
                    message.timestamp = iso_timestamp(now.max(last.saturating_add(1)));
                }
                let mut line = message.to_line()?;
                let path = view.messages_path(conv);
                if torn {
                    self.debug("messages.jsonl ends in a torn line (a crash mid-append?); the next message starts a new line and the torn one is skipped on read", Some(&path));
                    line.insert(0, '\n');
                }
                plan.push(Op::Append { path, bytes: line.into_bytes() });
                let own = super::parse_timestamp(&message.timestamp).unwrap_or(last);
                tail = Some((conv.clone(), Some(last.max(own))));
                meta.message_count += 1;
                meta.updated_at = iso_timestamp(now).max(meta.updated_at);
                view.write_metadata(&mut plan, &meta)?;
                view.index_upsert(&mut plan, &meta)?;
                Answer::Message(message, stored)
            }
            Request::Messages { conv, role } => {
                view.existing(conv)?;
                let parsed = view.messages(conv)?;
                if parsed.clean_tail {
                    self.set_tail(conv, latest(&parsed.messages));
                }
                Answer::Messages(
                    parsed.messages.into_iter().filter(|m| role.is_none() || *role == Some(m.role)).collect(),
                )
            }
            Request::StoreArtifact { conv, input } => {
                let mut meta = view.existing(conv)?;
                self.enqueue(&mut plan, conv, QueueOp::Update, now, &queue_name)?;
                let art = self.store_artifact_in(&view, &mut plan, &mut op.artifact_id, conv, input, now)?;
                meta.artifact_count += 1;
                meta.updated_at = iso_timestamp(now).max(meta.updated_at);
                view.write_metadata(&mut plan, &meta)?;
                view.index_upsert(&mut plan, &meta)?;
                Answer::Artifact(art)
            }
            Request::Artifact { conv, art } => {
                view.existing(conv)?;
                let (meta, content) = artifact(&view, conv, art)?;
                Answer::Found(meta, content)
            }
            Request::ListArtifacts(conv) => {
                view.existing(conv)?;
                Answer::Artifacts(view.artifacts(conv)?)
            }
            Request::Resolve { conv, text } => {
                view.existing(conv)?;
                let mut out = Vec::new();
                for id in artifacts::artifact_refs(text) {
                    match artifact(&view, conv, &id) {
                        Ok(found) => out.push(found),
                        Err(e) if matches!(e.kind(), ErrorKind::NotFound | ErrorKind::InvalidArgument) => {
                            self.debug(format!("artifact://{id} does not resolve; skipped"), None)
                        }
                        Err(e) => return Err(e),
                    }
                }
                Answer::Contents(out)
            }
            Request::Stats { conv, cost } => {
                view.existing(conv)?;
                let parsed = view.messages(conv)?;
                if parsed.clean_tail {
                    self.set_tail(conv, latest(&parsed.messages));
                }
                Answer::Stats(stats::stats(conv, &parsed.messages, &view.artifacts(conv)?, *cost))
            }
            Request::Prune { conv, options, apply } => {
                let mut meta = view.existing(conv)?;
                let messages = view.messages(conv)?.messages;
                let pruned = prune::prune(&messages, options);
                if *apply && !pruned.dropped.is_empty() {
                    self.enqueue(&mut plan, conv, QueueOp::Update, now, &queue_name)?;
                    let mut dropped = view.pruned(conv)?;
                    dropped.extend(pruned.dropped.iter().map(|m| m.id.clone()));
                    view.write_pruned(&mut plan, conv, &dropped)?;
                    view.write_messages(&mut plan, conv, &pruned.kept)?;
                    tail = Some((conv.clone(), Some(latest(&pruned.kept))));
                    meta.message_count = pruned.kept.len() as u64;
                    meta.updated_at = iso_timestamp(now).max(meta.updated_at);
                    view.write_metadata(&mut plan, &meta)?;
                    view.index_upsert(&mut plan, &meta)?;
                }
                Answer::Pruned(pruned)
            }
            Request::Export { conv, format } => {
                let conversation = view.existing(conv)?;
                let messages = view.messages(conv)?.messages;
                let mut artifacts = Vec::new();
                for meta in view.artifacts(conv)? {
                    let content = view
                        .artifact_content(conv, &meta.id)?
                        .ok_or_else(|| not_found("artifact content", &meta.id))?;
                    artifacts.push(ExportedArtifact::new(&meta, content)?);
                }
                Answer::Text(export::export(&Snapshot { conversation, messages, artifacts }, *format)?)
            }
            Request::Import(snapshot) => {
                let id = &snapshot.conversation.id;
                self.enqueue(&mut plan, id, QueueOp::Update, now, &queue_name)?;
                let current = view.metadata(id)?;
                let mut have = crate::sort::set_of(view.artifacts(id)?.into_iter().map(|a| a.id));
                for a in &snapshot.artifacts {
                    if have.insert(a.id.clone()) {
                        view.write_artifact(&mut plan, id, &a.meta(), a.content.as_bytes(), false)?;
                    }
                }
                let artifact_count = have.len();
                let cur = view.messages(id)?.messages;
                let dropped = view.pruned(id)?;
                let merged = if current.is_some() {
                    merge(&cur, &snapshot.messages, &dropped)
                } else {
                    snapshot.messages.clone()
                };
                view.write_messages(&mut plan, id, &merged)?;
                tail = Some((id.clone(), Some(latest(&merged))));
                let mut meta = match &current {
                    Some(c) if c.updated_at >= snapshot.conversation.updated_at => c.clone(),
                    _ => snapshot.conversation.clone(),
                };
                meta.message_count = merged.len() as u64;
                meta.artifact_count = artifact_count as u64;
                view.write_metadata(&mut plan, &meta)?;
                view.index_upsert(&mut plan, &meta)?;
                Answer::Conversation(meta)
            }
            Request::SyncStatus => Answer::SyncStatus(sync_status(&queue_items(&view)?)),
        };
        Ok(Decision { actions: plan, answer, tail })
    }

    /// The artifact's meta and its actions (content written exclusively, then the meta),
    /// under the id `op` drew (drawn now if none).
    fn store_artifact_in(
        &self,
        view: &View<'_>,
        plan: &mut Vec<Op>,
        drawn: &mut Option<String>,
        conv: &str,
        input: &ArtifactInput,
        now: i64,
    ) -> Result<ArtifactMeta> {
        let id = match drawn {
            Some(id) => id.clone(),
            None => drawn.insert(new_id("art", &self.options.random)?).clone(),
        };
        let meta = ArtifactMeta {
            id,
            kind: input.kind.clone(),
            name: input.name.clone(),
            mime_type: input.mime_type.clone().unwrap_or_else(|| "text/plain".to_owned()),
            size: input.content.len() as u64,
            created_at: iso_timestamp(now),
        };
        view.write_artifact(plan, conv, &meta, input.content.as_bytes(), true)?;
        Ok(meta)
    }

    /// `op`'s actions all ran: its answer.
    fn finish(&self, decision: Decision) -> Answer {
        if let Some((conv, last)) = decision.tail {
            self.tails.borrow_mut().insert(conv, last);
        }
        decision.answer
    }

    /// The name `action` draws, when it is an exclusive write of one.
    fn drawn_by(&self, action: &Op) -> Option<Drawn> {
        match action {
            Op::Write { path, exclusive: true, .. } => {
                Some(match path.starts_with(&self.layout(Side::Local).queue_dir()) {
                    true => Drawn::QueueItem,
                    false => Drawn::Artifact,
                })
            }
            _ => None,
        }
    }

    /// Change `at` of `op`'s decision failed with `error`. A taken name of an exclusive
    /// write (`drawn`: the sync queue item's, the artifact's) is drawn again: `Ok`,
    /// decide again and run on from there. Anything else is the operation's error.
    fn failed(&self, op: &mut Operation, at: usize, drawn: Option<Drawn>, error: Error) -> Result<()> {
        if let (ErrorKind::AlreadyExists, Some(drawn)) = (error.kind(), drawn) {
            match drawn {
                Drawn::QueueItem => op.queue_name = None,
                Drawn::Artifact => op.artifact_id = None,
            }
            op.done = at;
            return Ok(());
        }
        if let Some(conv) = op.request.conv() {
            if op.request.exclusive() {
                // What the file ends with is not known after a failed change.
                self.forget_tail(conv);
            }
        }
        Err(error)
    }
}

/// An artifact's meta and content; `NOT_FOUND` when missing.
fn artifact(view: &View<'_>, conv: &str, art: &str) -> Result<(ArtifactMeta, Vec<u8>)> {
    super::validate_id(art, "artifact id")?;
    match (view.artifact_meta(conv, art)?, view.artifact_content(conv, art)?) {
        (Some(meta), Some(content)) => Ok((meta, content)),
        _ => Err(not_found("artifact", art)),
    }
}
