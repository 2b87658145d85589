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

/// The request of `method` called with `a`, `b`, checked.
pub(crate) fn request(store: &Conversations, method: &str, a: &JsValue, b: &JsValue) -> Result<Request> {
    let conv = || -> Result<String> {
        let id = string_arg(a, "conversation id")?;
        validate_id(&id, "conversation id")?;
        Ok(id)
    };
    Ok(match method {
        "createConversation" => {
            let title = opt_string(a, "title")?;
            let id = opt_string(a, "id")?;
            if let Some(id) = &id {
                validate_id(id, "conversation id")?;
            }
            Request::Create { title, id }
        }
        "listConversations" => Request::List,
        "getConversation" => Request::Get(conv()?),
        "deleteConversation" => Request::Delete(conv()?),
        "appendMessage" => {
            let input: MessageInput = from_js(b, "message")?;
            store.append_request(&string_arg(a, "conversation id")?, input, None)?
        }
        "getMessages" => {
            let role = opt_string(b, "role")?.map(|r| Role::parse(&r)).transpose()?;
            Request::Messages { conv: conv()?, role }
        }
        "storeArtifact" => {
            let conv = conv()?;
            let input: ArtifactInput = from_js(b, "artifact")?;
            validate_type(&input.kind)?;
            Request::StoreArtifact { conv, input }
        }
        "getArtifact" => {
            let art = string_arg(b, "artifact id")?;
            validate_id(&art, "artifact id")?;
            Request::Artifact { conv: conv()?, art }
        }
        "listArtifacts" => Request::ListArtifacts(conv()?),
        "resolveArtifacts" => {
            let conv = conv()?;
            Request::Resolve { conv, text: string_arg(b, "text")? }
        }
        "stats" => {
            let conv = conv()?;
            let cost = match get(b, "costPerToken") {
                v if v.is_undefined() => None,
                v => match v.as_f64() {
                    Some(c) if c.is_finite() && c >= 0.0 => Some(c),
                    _ => return Err(Error::invalid("costPerToken must be a non-negative number")),
                },
            };
            Request::Stats { conv, cost }
        }
        "prune" => {
            let conv = conv()?;
            let task = opt_string(b, "task")?.unwrap_or_default();
            let max_tokens = opt_size(b, "maxTokens")?.ok_or_else(|| Error::invalid("prune needs maxTokens"))?;
            let keep_recent = opt_size(b, "keepRecent")?.unwrap_or(DEFAULT_KEEP_RECENT);
            let now_ms = get(b, "now").as_f64().map_or_else(|| store.now_ms(), |n| n as i64);
            let apply = get(b, "apply").as_bool().unwrap_or(false);
            Request::Prune { conv, options: PruneOptions { task, max_tokens, keep_recent, now_ms }, apply }
        }
        "export" => {
            let conv = conv()?;
            Request::Export { conv, format: string_arg(b, "format").and_then(|f| Format::parse(&f))? }
        }
        "import" => {
            let text = string_arg(a, "the text to import")?;
            let format = opt_string(b, "format")?.map(|f| Format::parse(&f)).transpose()?;
            Request::Import(Box::new(parse_export(&text, format)?))
        }
        "syncStatus" => Request::SyncStatus,
        other => return Err(Error::invalid(format!("ConversationStore has no method {other}"))),
    })
}
