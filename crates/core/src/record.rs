//! The record as stored (`StoredContext`) and the pointer kept in memory
//! (`ContextPointer`), with their JSON encodings (SPEC §2).
//!
//! A record file is one line of compact UTF-8 JSON, fields in this order:
//! `{"v":1,"toolName":…,"toolDescription":…,"args":{…},"argsHash":…,"timestamp":…,
//! "taskId":…,"queryId":…,"toolCallId":…,"result":…}`. `taskId`, `queryId`, `toolCallId`
//! and `result` are omitted when absent. `args` and `result` are kept as the JSON text they were given in, so
//! what `JSON.stringify` produced is what is stored, byte for byte.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Number, Value};

use crate::error::{Error, ErrorKind, Result};

/// The record format version written by this crate.
pub const FORMAT_VERSION: u32 = 1;

/// Everything a record holds except its result, which is kept as JSON text.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordMeta {
    /// The tool's name, as given (not sanitised).
    pub tool_name: String,
    /// The human-readable description.
    pub tool_description: String,
    /// The args as compact JSON text (an object).
    pub args_json: String,
    /// Full SHA-256 of the canonical args, 64 hex digits.
    pub args_hash: String,
    /// ISO 8601, UTC, millisecond precision.
    pub timestamp: String,
    /// Optional task id.
    pub task_id: Option<Number>,
    /// Optional query id.
    pub query_id: Option<String>,
    /// Optional id of the model's tool call this is the output of (any length: it is
    /// stored, never part of a file name).
    pub tool_call_id: Option<String>,
}

impl RecordMeta {
    /// The record file's bytes: this header with `result_json` (omitted when `None`).
    pub fn encode(&self, result_json: Option<&str>) -> Vec<u8> {
        let mut out = self.encode_fields(result_json.map_or(0, str::len));
        if let Some(result) = result_json {
            out.push_str(",\"result\":");
            out.push_str(result);
        }
        out.push('}');
        out.into_bytes()
    }

    /// The bytes of a record with a result, up to the result's JSON text: the record is
    /// these, the result's text, then `}`.
    pub fn encode_head(&self) -> Vec<u8> {
        let mut out = self.encode_fields(0);
        out.push_str(",\"result\":");
        out.into_bytes()
    }

    fn encode_fields(&self, reserve: usize) -> String {
        let mut out = String::with_capacity(256 + self.args_json.len() + reserve);
        out.push_str("{\"v\":1,\"toolName\":");
        push_json_str(&mut out, &self.tool_name);
        out.push_str(",\"toolDescription\":");
        push_json_str(&mut out, &self.tool_description);
        out.push_str(",\"args\":");
        out.push_str(&self.args_json);
        out.push_str(",\"argsHash\":\"");
        out.push_str(&self.args_hash);
        out.push_str("\",\"timestamp\":\"");
        out.push_str(&self.timestamp);
        out.push('"');
        if let Some(task) = &self.task_id {
            out.push_str(",\"taskId\":");
            out.push_str(&task.to_string());
        }
        if let Some(query) = &self.query_id {
            out.push_str(",\"queryId\":");
            push_json_str(&mut out, query);
        }
        if let Some(call) = &self.tool_call_id {
            out.push_str(",\"toolCallId\":");
            push_json_str(&mut out, call);
        }
        out
    }
}

/// A task id from a JavaScript number: integers stay integers, others keep their value.
pub fn task_id_from_f64(n: f64) -> Result<Number> {
    const SAFE: f64 = 9_007_199_254_740_991.0;
    if n.is_finite() && n.fract() == 0.0 && n.abs() <= SAFE {
        Ok(Number::from(n as i64))
    } else {
        Number::from_f64(n).ok_or_else(|| Error::invalid("taskId must be a finite number"))
    }
}

/// Parses JSON text. Every parse in the core goes through one reader (the slice one,
/// as [`parse_record`] reads bytes): serde_json compiles its whole parser once per
/// reader, and `from_str` would add a second copy (about 8 KB of wasm) for the same
/// result on text that is already UTF-8.
pub fn from_json<'a, T: Deserialize<'a>>(text: &'a str) -> serde_json::Result<T> {
    serde_json::from_slice(text.as_bytes())
}

/// JSON text as an owned [`RawValue`], checked: `RawValue::from_string` without its
/// `from_str` (see [`from_json`]).
pub fn raw_json(text: &str) -> serde_json::Result<Box<RawValue>> {
    from_json::<&RawValue>(text).map(|raw| raw.to_owned())
}

/// The fields of a record file that are checked on read; `result` is left unparsed.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordView<'a> {
    /// Format version; missing in records written by the seed implementation.
    #[serde(default)]
    pub v: Option<u32>,
    /// Tool name.
    #[serde(borrow)]
    pub tool_name: std::borrow::Cow<'a, str>,
    /// Description; missing only in hand-made files.
    #[serde(default, borrow)]
    pub tool_description: Option<std::borrow::Cow<'a, str>>,
    /// Args object.
    #[serde(borrow)]
    pub args: &'a RawValue,
    /// Full args hash; missing in seed records.
    #[serde(default, borrow)]
    pub args_hash: Option<std::borrow::Cow<'a, str>>,
    /// ISO timestamp.
    #[serde(borrow)]
    pub timestamp: std::borrow::Cow<'a, str>,
    /// Task id.
    #[serde(default)]
    pub task_id: Option<Number>,
    /// Query id.
    #[serde(default, borrow)]
    pub query_id: Option<std::borrow::Cow<'a, str>>,
    /// Tool-call id.
    #[serde(default, borrow)]
    pub tool_call_id: Option<std::borrow::Cow<'a, str>>,
    /// Result, unparsed.
    #[serde(default, borrow)]
    pub result: Option<&'a RawValue>,
}

/// Checks that `bytes` are one whole record (a torn or foreign file is rejected).
pub fn parse_record(bytes: &[u8]) -> Result<RecordView<'_>> {
    let view: RecordView<'_> = serde_json::from_slice(bytes)
        .map_err(|e| Error::new(ErrorKind::CorruptRecord, format!("not a toolctx record: {e}")))?;
    if view.v.is_some_and(|v| v > FORMAT_VERSION) {
        return Err(Error::new(
            ErrorKind::CorruptRecord,
            format!("record format v{} is newer than this toolctx reads", view.v.unwrap_or(0)),
        ));
    }
    if !view.args.get().starts_with('{') {
        return Err(Error::new(ErrorKind::CorruptRecord, "record args is not an object"));
    }
    Ok(view)
}

impl RecordView<'_> {
    /// The record's metadata, for a pointer.
    pub fn meta(&self) -> Result<RecordMeta> {
        let args_hash = match &self.args_hash {
            Some(h) => h.to_string(),
            None => {
                let args: Value =
                    from_json(self.args.get()).map_err(|e| Error::new(ErrorKind::CorruptRecord, e.to_string()))?;
                crate::naming::args_hash(&args)?
            }
        };
        Ok(RecordMeta {
            tool_name: self.tool_name.to_string(),
            tool_description: self.tool_description.as_deref().unwrap_or_default().to_owned(),
            args_json: self.args.get().to_owned(),
            args_hash,
            timestamp: self.timestamp.to_string(),
            task_id: self.task_id.clone(),
            query_id: self.query_id.as_ref().map(|q| q.to_string()),
            tool_call_id: self.tool_call_id.as_ref().map(|c| c.to_string()),
        })
    }
}

/// Appends `s` as a JSON string literal.
pub fn push_json_str(out: &mut String, s: &str) {
    out.push('"');
    let mut start = 0;
    for (i, b) in s.bytes().enumerate() {
        let escape = match b {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if escape.is_empty() {
            out.push_str(&format!("\\u{b:04x}"));
        } else {
            out.push_str(escape);
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC with milliseconds
/// (`2024-12-24T03:52:25.678Z`), as JavaScript's `Date.prototype.toISOString`.
pub fn iso_timestamp(ms: i64) -> String {
    let mut out = String::with_capacity(24);
    push_iso_timestamp(ms, &mut out);
    out
}

/// Appends [`iso_timestamp`]`(ms)` to `out`. A pointer list prints one per pointer: the
/// digits are written by hand (years 0 to 9999, every real clock's), not through `format!`.
pub fn push_iso_timestamp(ms: i64, out: &mut String) {
    let days = ms.div_euclid(86_400_000);
    let rem = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    let (h, min, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    let Ok(year @ 0..=9999) = u32::try_from(y) else {
        out.push_str(&format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z"));
        return;
    };
    // Each field as its digits, most significant first, zero-padded to `width`.
    let mut text = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut n: u32| {
        for i in (at..at + width).rev() {
            text[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, m);
    put(8, 2, d);
    put(11, 2, h as u32);
    put(14, 2, min as u32);
    put(17, 2, s as u32);
    put(20, 3, milli as u32);
    out.push_str(std::str::from_utf8(&text).unwrap_or_default());
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Checks JSON text produced by `JSON.stringify` for an escaped lone UTF-16
/// surrogate (`"\ud800"`), which RFC 8785 and I-JSON forbid.
pub fn check_no_lone_surrogates(json: &str) -> Result<()> {
    let bytes = json.as_bytes();
    let mut i = 0;
    let mut pending_high = false;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            if pending_high {
                break;
            }
            i += 1;
            continue;
        }
        let next = bytes.get(i + 1).copied();
        if next == Some(b'u') {
            let unit = json.get(i + 2..i + 6).and_then(|h| u16::from_str_radix(h, 16).ok());
            match unit {
                Some(0xD800..=0xDBFF) if !pending_high => pending_high = true,
                Some(0xDC00..=0xDFFF) if pending_high => pending_high = false,
                Some(0xD800..=0xDFFF) => break,
                _ if pending_high => break,
                _ => {}
            }
            i += 6;
        } else {
            if pending_high {
                break;
            }
            i += 2;
        }
    }
    if pending_high || i < bytes.len() {
        return Err(Error::new(
            ErrorKind::NotSerializable,
            "a string holds a lone UTF-16 surrogate, which canonical JSON (RFC 8785) cannot represent",
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_one_reader_parses_as_from_str_and_from_string_do() {
        for text in ["{\"a\":[1,2.5e-3,\"\\u00e9\"]}", "  {\"b\": null}\n", "{\"a\":1", "{} x", "\"\\ud800\"", "1e400"]
        {
            let ours = raw_json(text).map(|r| r.get().to_owned()).map_err(|e| e.to_string());
            let theirs = RawValue::from_string(text.to_owned()).map(|r| r.get().to_owned()).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{text}");
            let ours = from_json::<Value>(text).map_err(|e| e.to_string());
            assert_eq!(ours, serde_json::from_str::<Value>(text).map_err(|e| e.to_string()), "{text}");
        }
    }

    fn meta() -> RecordMeta {
        RecordMeta {
            tool_name: "read\"File".into(),
            tool_description: "read file: path=a\nb".into(),
            args_json: r#"{"path":"a\nb"}"#.into(),
            args_hash: "0".repeat(64),
            timestamp: iso_timestamp(1_735_012_345_678),
            task_id: Some(task_id_from_f64(3.0).unwrap()),
            query_id: None,
            tool_call_id: None,
        }
    }

    #[test]
    fn encodes_compact_json_in_field_order_and_parses_back() {
        let bytes = meta().encode(Some(r#"{"lines":["x"]}"#));
        let text = std::str::from_utf8(&bytes).unwrap();
        assert!(text.starts_with(r#"{"v":1,"toolName":"read\"File","toolDescription":"#), "{text}");
        assert!(text.contains(r#","taskId":3,"result":{"lines":["x"]}}"#), "{text}");
        assert!(!text.contains("queryId"));
        let view = parse_record(&bytes).unwrap();
        assert_eq!(view.meta().unwrap(), meta());
        assert_eq!(view.result.unwrap().get(), r#"{"lines":["x"]}"#);
        let parsed: Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(parsed["timestamp"], "2024-12-24T03:52:25.678Z");
    }

    #[test]
    fn torn_and_foreign_files_are_rejected() {
        let bytes = meta().encode(Some("[1,2,3]"));
        for cut in [1, bytes.len() / 2, bytes.len() - 1] {
            let err = parse_record(&bytes[..cut]).unwrap_err();
            assert_eq!(err.kind(), ErrorKind::CorruptRecord);
        }
        assert!(parse_record(br#"{"hello":1}"#).is_err());
        assert!(parse_record(br#"{"v":2,"toolName":"t","args":{},"timestamp":"x"}"#).is_err());
        assert!(parse_record(br#"{"toolName":"t","args":[],"timestamp":"x"}"#).is_err());
    }

    /// serde_json names a float it did not expect by its value, with its own formatting.
    #[test]
    fn a_float_where_an_integer_belongs_is_named_with_its_value() {
        let err = parse_record(br#"{"v":1.5,"toolName":"t","args":{},"timestamp":"x"}"#).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::CorruptRecord);
        assert!(err.to_string().contains("invalid type: floating point `1.5`, expected u32"), "{err}");
    }

    #[test]
    fn seed_records_without_version_or_hash_are_read() {
        let seed = br#"{"toolName":"grep","toolDescription":"grep","args":{"b":1,"a":2},"timestamp":"2025-01-01T00:00:00.000Z","result":"x"}"#;
        let meta = parse_record(seed).unwrap().meta().unwrap();
        let expected = crate::naming::args_hash(&serde_json::json!({"a": 2, "b": 1})).unwrap();
        assert_eq!(meta.args_hash, expected);
    }

    #[test]
    fn timestamps_match_to_iso_string() {
        assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso_timestamp(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso_timestamp(-1), "1969-12-31T23:59:59.999Z");
        assert_eq!(iso_timestamp(4_102_444_800_123), "2100-01-01T00:00:00.123Z");
        assert_eq!(iso_timestamp(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        // Past the hand-written years, the same text as before.
        assert_eq!(iso_timestamp(253_402_300_800_000), "10000-01-01T00:00:00.000Z");
        assert_eq!(iso_timestamp(-62_167_219_200_001), "-001-12-31T23:59:59.999Z");
    }

    #[test]
    fn iso_timestamps_match_the_format_reference() {
        let reference = |ms: i64| {
            let (days, rem) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
            let (y, m, d) = civil_from_days(days);
            let (h, min, s, milli) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
            format!("{y:04}-{m:02}-{d:02}T{h:02}:{min:02}:{s:02}.{milli:03}Z")
        };
        // From year -2 to 10001, a stride that lands on every field's digits in turn.
        let (mut ms, end) = (-62_230_000_000_000_i64, 253_500_000_000_000_i64);
        while ms < end {
            assert_eq!(iso_timestamp(ms), reference(ms), "{ms}");
            ms += 1_234_567_891;
        }
    }

    #[test]
    fn json_strings_escape_controls_only() {
        let mut s = String::new();
        push_json_str(&mut s, "a\"\\\u{1}\u{7f}é\u{2028}");
        assert_eq!(s, "\"a\\\"\\\\\\u0001\u{7f}é\u{2028}\"");
        assert_eq!(serde_json::from_str::<String>(&s).unwrap(), "a\"\\\u{1}\u{7f}é\u{2028}");
    }

    #[test]
    fn lone_surrogates_are_found_and_pairs_pass() {
        assert!(check_no_lone_surrogates(r#"["\ud83d\ude00","\\ud800"]"#).is_ok());
        assert!(check_no_lone_surrogates(r#"["\ud800"]"#).is_err());
        assert!(check_no_lone_surrogates(r#"["\ude00"]"#).is_err());
        assert!(check_no_lone_surrogates(r#"["\ud800\u0041"]"#).is_err());
        assert!(check_no_lone_surrogates(r#""\ud800""#).is_err());
        assert!(check_no_lone_surrogates(r#""\ud83d\ude00""#).is_ok());
    }
}
