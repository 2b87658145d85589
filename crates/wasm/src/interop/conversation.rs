//! The conversation store's arguments and results: arguments cross as `JSON.stringify`
//! text into serde types, results go back as JSON text (the driver parses it), and a
//! sync's ops and outcomes are typed as the plans' are.

use js_sys::JSON;
use serde::de::DeserializeOwned;
use serde::Serialize;
use wasm_bindgen::prelude::*;

use super::super::plans::Reply;
use super::args::{get, opt_size, opt_string};
use super::errors::with_cause;
use super::named::named;
#[cfg(test)]
use super::named::table;
use toolctx_core::conversation::{parse_export, validate_type};
use toolctx_core::conversation::{
    validate_id, Answer, ArtifactInput, ArtifactMeta, Conversations, ExportedArtifact, Format, Message, MessageInput,
    PruneOptions, Request, Role, DEFAULT_KEEP_RECENT,
};
use toolctx_core::error::{Error, ErrorKind, Result};

/// `JSON.stringify(value)` parsed as `T`: `INVALID_ARGUMENT` for a wrong shape,
/// `NOT_SERIALIZABLE` for what JSON cannot hold.
pub(crate) fn from_js<T: DeserializeOwned>(value: &JsValue, what: &str) -> Result<T> {
    let json = json_of(value, what)?;
    serde_json::from_str(&json).map_err(|e| Error::invalid(format!("{what}: {e}")))
}

/// `JSON.stringify(value)` of an object (the part of [`from_js`] that is the same for
/// every type, compiled once).
pub(crate) fn json_of(value: &JsValue, what: &str) -> Result<String> {
    if !value.is_object() {
        return Err(Error::invalid(format!("{what} must be an object")));
    }
    let json = JSON::stringify(value)
        .map_err(|e| with_cause(ErrorKind::NotSerializable, format!("{what} cannot be serialised as JSON"), e))?
        .as_string()
        .ok_or_else(|| Error::invalid(format!("{what} must be an object")))?;
    toolctx_core::record::check_no_lone_surrogates(&json)?;
    Ok(json)
}

/// The JSON text of a result (the driver parses it).
pub(crate) fn to_json<T: Serialize>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| Error::new(ErrorKind::Internal, e.to_string()))
}

pub(crate) fn string_arg(value: &JsValue, what: &str) -> Result<String> {
    value.as_string().ok_or_else(|| Error::invalid(format!("{what} must be a string")))
}

#[derive(Serialize)]
struct WithArtifact {
    message: Message,
    artifact: ArtifactMeta,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PruneResult {
    kept: Vec<Message>,
    dropped: Vec<Message>,
    tokens_before: usize,
    tokens_after: usize,
}

/// What an operation's plan resolves with: the JSON text of what `answer` is for
/// JavaScript (`undefined` for none).
pub(crate) fn answer_reply(answer: Answer) -> Result<Reply> {
    let json = match answer {
        Answer::Nothing => return Ok(Reply::Value(JsValue::UNDEFINED)),
        Answer::Conversation(meta) => to_json(&meta),
        Answer::Conversations(list) => to_json(&list),
        Answer::Message(message, None) => to_json(&message),
        Answer::Message(message, Some(artifact)) => to_json(&WithArtifact { message, artifact }),
        Answer::Messages(list) => to_json(&list),
        Answer::Artifact(meta) => to_json(&meta),
        Answer::Artifacts(list) => to_json(&list),
        Answer::Found(meta, content) => to_json(&ExportedArtifact::new(&meta, content)?),
        Answer::Contents(found) => {
            let out: Result<Vec<ExportedArtifact>> =
                found.into_iter().map(|(meta, content)| ExportedArtifact::new(&meta, content)).collect();
            to_json(&out?)
        }
        Answer::Stats(stats) => to_json(&stats),
        Answer::Pruned(p) => to_json(&PruneResult {
            kept: p.kept,
            dropped: p.dropped,
            tokens_before: p.tokens_before,
            tokens_after: p.tokens_after,
        }),
        // The export's text itself, as JSON text (the driver parses every answer).
        Answer::Text(text) => to_json(&text),
        Answer::SyncStatus(status) => to_json(&status),
    };
    json.map(Reply::Json)
}

named! {
    /// An operation of the conversation store, its public method's name (protocol.js
    /// `OPERATION`): `perform({kind, ...})` begins it, its arguments named.
    pub enum OperationKind {
        /// `{init}`.
        CreateConversation = "createConversation",
        ListConversations = "listConversations",
        /// `{id}`.
        GetConversation = "getConversation",
        /// `{id}`.
        DeleteConversation = "deleteConversation",
        /// `{id, message}`.
        AppendMessage = "appendMessage",
        /// `{id, message, artifact}`.
        AppendWithArtifact = "appendWithArtifact",
        /// `{id, filter}`.
        GetMessages = "getMessages",
        /// `{id, artifact}`.
        StoreArtifact = "storeArtifact",
        /// `{id, artifactId}`.
        GetArtifact = "getArtifact",
        /// `{id}`.
        ListArtifacts = "listArtifacts",
        /// `{id, text}`.
        ResolveArtifacts = "resolveArtifacts",
        /// `{id, options}`.
        Stats = "stats",
        /// `{id, options}`.
        Prune = "prune",
        /// `{id, format}`.
        Export = "export",
        /// `{text, options}`.
        Import = "import",
        SyncStatus = "syncStatus",
    }
}

/// `[("OPERATION", …)]`, for the test that keeps protocol.js equal to them (interop/named.rs).
#[cfg(test)]
pub fn tables() -> Vec<(&'static str, JsValue)> {
    vec![("OPERATION", table(OperationKind::ALL, OperationKind::constant, OperationKind::name))]
}

/// The request of the operation `op` (`{kind, ...}`, its arguments named), checked: the
/// package makes `op`, so a wrong `kind` is `INTERNAL`; the arguments are the user's,
/// `INVALID_ARGUMENT` when wrong.
pub(crate) fn request(store: &Conversations, op: &JsValue) -> Result<Request> {
    let kind = get(op, "kind").as_string();
    let kind = kind.as_deref().and_then(OperationKind::named).ok_or_else(|| {
        Error::new(ErrorKind::Internal, format!("operation.kind must be an operation of the store, not {kind:?}"))
    })?;
    let arg = |name: &str| get(op, name);
    let id = arg("id");
    let conv = || -> Result<String> {
        let id = string_arg(&id, "conversation id")?;
        validate_id(&id, "conversation id")?;
        Ok(id)
    };
    Ok(match kind {
        OperationKind::CreateConversation => {
            let init = arg("init");
            let title = opt_string(&init, "title")?;
            let id = opt_string(&init, "id")?;
            if let Some(id) = &id {
                validate_id(id, "conversation id")?;
            }
            Request::Create { title, id }
        }
        OperationKind::ListConversations => Request::List,
        OperationKind::GetConversation => Request::Get(conv()?),
        OperationKind::DeleteConversation => Request::Delete(conv()?),
        OperationKind::AppendMessage => {
            let input: MessageInput = from_js(&arg("message"), "message")?;
            store.append_request(&string_arg(&id, "conversation id")?, input, None)?
        }
        OperationKind::AppendWithArtifact => {
            let input: MessageInput = from_js(&arg("message"), "message")?;
            let artifact: ArtifactInput = from_js(&arg("artifact"), "artifact")?;
            store.append_request(&string_arg(&id, "conversation id")?, input, Some(artifact))?
        }
        OperationKind::GetMessages => {
            let role = opt_string(&arg("filter"), "role")?.map(|r| Role::parse(&r)).transpose()?;
            Request::Messages { conv: conv()?, role }
        }
        OperationKind::StoreArtifact => {
            let conv = conv()?;
            let input: ArtifactInput = from_js(&arg("artifact"), "artifact")?;
            validate_type(&input.kind)?;
            Request::StoreArtifact { conv, input }
        }
        OperationKind::GetArtifact => {
            let art = string_arg(&arg("artifactId"), "artifact id")?;
            validate_id(&art, "artifact id")?;
            Request::Artifact { conv: conv()?, art }
        }
        OperationKind::ListArtifacts => Request::ListArtifacts(conv()?),
        OperationKind::ResolveArtifacts => {
            let conv = conv()?;
            Request::Resolve { conv, text: string_arg(&arg("text"), "text")? }
        }
        OperationKind::Stats => {
            let conv = conv()?;
            let cost = match get(&arg("options"), "costPerToken") {
                v if v.is_undefined() => None,
                v => match v.as_f64() {
                    Some(c) if c.is_finite() && c >= 0.0 => Some(c),
                    _ => return Err(Error::invalid("costPerToken must be a non-negative number")),
                },
            };
            Request::Stats { conv, cost }
        }
        OperationKind::Prune => {
            let conv = conv()?;
            let b = arg("options");
            let task = opt_string(&b, "task")?.unwrap_or_default();
            let max_tokens = opt_size(&b, "maxTokens")?.ok_or_else(|| Error::invalid("prune needs maxTokens"))?;
            let keep_recent = opt_size(&b, "keepRecent")?.unwrap_or(DEFAULT_KEEP_RECENT);
            let now_ms = get(&b, "now").as_f64().map_or_else(|| store.now_ms(), |n| n as i64);
            let apply = get(&b, "apply").as_bool().unwrap_or(false);
            Request::Prune { conv, options: PruneOptions { task, max_tokens, keep_recent, now_ms }, apply }
        }
        OperationKind::Export => {
            let conv = conv()?;
            Request::Export { conv, format: string_arg(&arg("format"), "format").and_then(|f| Format::parse(&f))? }
        }
        OperationKind::Import => {
            let text = string_arg(&arg("text"), "the text to import")?;
            let format = opt_string(&arg("options"), "format")?.map(|f| Format::parse(&f)).transpose()?;
            Request::Import(Box::new(parse_export(&text, format)?))
        }
        OperationKind::SyncStatus => Request::SyncStatus,
    })
}
