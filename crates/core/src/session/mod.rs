//! Sessions (SPEC §5): ids, the `.manifest.json` index of a session's records, and the
//! store-level operations over sessions (list, stale cleanup).
//!
//! Layout: `{contextDir}/sessions/{id}/[{category}/]{record}.json` and
//! `{contextDir}/sessions/{id}/.manifest.json`. The record files are the source of
//! truth; the manifest is an index of them, replaced atomically, and may lag behind
//! (updates are coalesced): resume reads the records it does not list yet.

use crate::error::{Error, Result};
use crate::naming::is_record_filename;
use crate::paths;
use crate::record::{civil_from_days, iso_timestamp};

mod cleanup;
mod list;
mod manifest;
pub use cleanup::{CleanupStale, RecordFiles, RemoveSession};
pub use list::{ListSessions, Manifests, SearchSessions, SessionHit, SessionInfo};
pub use manifest::{Manifest, ManifestEntry};

/// The folder of sessions inside a context dir.
pub const SESSIONS_DIR: &str = "sessions";
/// The manifest's file name inside a session folder.
pub const MANIFEST: &str = ".manifest.json";
/// The name of the lock of the session in folder `dir`: a path beside the folder (a lock
/// file on file systems, so it never keeps the folder from being removed).
pub fn lock_name(dir: &str) -> String {
    format!("{dir}.lock")
}

/// Default idle time after which `cleanup_stale_sessions` removes a session.
pub const DEFAULT_STALE_MS: i64 = 24 * 60 * 60 * 1000;
/// Most keywords kept per record in the manifest.
pub const MAX_KEYWORDS: usize = 32;
/// Most content terms kept per record in the manifest (the most frequent).
pub const MAX_CONTENT_TERMS: usize = 16;

/// A new session id `YYYYMMDD-HHMMSS-xxxx` (UTC) from a clock reading and 4 random chars.
pub fn session_id(now_ms: i64, random4: &str) -> String {
    let iso = iso_timestamp(now_ms); // 2025-01-18T14:30:22.000Z
    format!("{}{}{}-{}{}{}-{random4}", &iso[0..4], &iso[5..7], &iso[8..10], &iso[11..13], &iso[14..16], &iso[17..19])
}

/// Whether `id` is a session id (`^[0-9]{8}-[0-9]{6}-[a-z0-9]{4}$`).
pub fn is_session_id(id: &str) -> bool {
    let b = id.as_bytes();
    b.len() == 20
        && b[8] == b'-'
        && b[15] == b'-'
        && b[..8].iter().chain(&b[9..15]).all(u8::is_ascii_digit)
        && b[16..].iter().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// Checks a category folder name: 1 to 64 characters of `[A-Za-z0-9_-]`.
pub fn check_category(category: &str) -> Result<()> {
    let ok = (1..=64).contains(&category.len())
        && category.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::invalid(format!("category {category:?} must be 1-64 characters of [A-Za-z0-9_-]")))
    }
}

/// The folder of session `id` in `context_dir`.
pub fn session_dir(context_dir: &str, id: &str) -> String {
    paths::join(&paths::join(context_dir, SESSIONS_DIR), id)
}

/// Whether `rel` is `record.json` or `category/record.json` (nothing that could escape).
pub fn is_relative_record_path(rel: &str) -> bool {
    match rel.split_once('/') {
        None => is_record_filename(rel),
        Some((category, name)) => check_category(category).is_ok() && is_record_filename(name),
    }
}

/// Parses an ISO 8601 date-time (`2025-01-18T14:30:22Z`, with optional fraction and
/// `Z` or `±HH:MM` offset; a space may stand for `T`) into epoch milliseconds.
pub fn parse_iso_ms(s: &str) -> Option<i64> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !(b[10] == b'T' || b[10] == b't' || b[10] == b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> {
        let part = s.get(r)?;
        part.bytes().all(|c| c.is_ascii_digit()).then(|| part.parse().ok())?
    };
    let (y, mo, d, h, mi, sec) = (num(0..4)?, num(5..7)?, num(8..10)?, num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || sec > 60 {
        return None;
    }
    let mut rest = &s[19..];
    let mut millis = 0;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let padded = format!("{:0<3}", &frac[..digits.min(3)]);
        millis = padded.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset_min = match rest {
        "" | "Z" | "z" => 0,
        _ => {
            let sign = match rest.as_bytes()[0] {
                b'+' => 1,
                b'-' => -1,
                _ => return None,
            };
            let hm = rest[1..].replace(':', "");
            if hm.len() != 4 || !hm.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            sign * (hm[..2].parse::<i64>().ok()? * 60 + hm[2..].parse::<i64>().ok()?)
        }
    };
    let days = days_from_civil(y, mo as u32, d as u32);
    if civil_from_days(days) != (y, mo as u32, d as u32) {
        return None; // 2025-02-30 and the like
    }
    Some(((days * 24 + h) * 60 + mi - offset_min) * 60_000 + sec * 1000 + millis)
}

/// (year, month, day) to days since 1970-01-01 (Howard Hinnant's `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The save time in a record file name (its 13-digit timestamp part), in epoch ms.
pub fn record_time_ms(rel: &str) -> Option<i64> {
    let name = crate::paths::file_name(rel);
    name.strip_suffix(".json")?.rsplit('_').nth(2)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;
    use crate::record::RecordMeta;

    #[test]
    fn ids_have_the_documented_shape() {
        let id = session_id(1_737_210_622_000, "a4f2");
        assert_eq!(id, "20250118-143022-a4f2");
        assert!(is_session_id(&id));
        for bad in ["20250118-143022-A4F2", "2025011-143022-a4f2", "../../etc", "20250118_143022-a4f2"] {
            assert!(!is_session_id(bad), "{bad}");
        }
    }

    #[test]
    fn dates_parse_in_every_iso_form_and_nothing_else() {
        let base = parse_iso_ms("2025-01-18T14:30:22Z").unwrap();
        assert_eq!(base, 1_737_210_622_000);
        assert_eq!(parse_iso_ms("2025-01-18T14:30:22.5Z"), Some(base + 500));
        assert_eq!(parse_iso_ms("2025-01-18T14:30:22.123456Z"), Some(base + 123));
        assert_eq!(parse_iso_ms("2025-01-18T16:30:22+02:00"), Some(base));
        assert_eq!(parse_iso_ms("2025-01-18 14:30:22"), Some(base));
        for bad in
            ["", "yesterday", "2025-02-30T00:00:00Z", "2025-01-18T25:00:00Z", "1737210622000", "2025-01-18T14:30:22+2"]
        {
            assert_eq!(parse_iso_ms(bad), None, "{bad}");
        }
        for ms in [0, 951_782_400_123, 4_102_444_800_000] {
            assert_eq!(parse_iso_ms(&iso_timestamp(ms)), Some(ms));
        }
    }

    #[test]
    fn manifests_refuse_paths_that_leave_the_session() {
        let ok = br#"{"session_id":"20250118-143022-a4f2","created_at":"x","last_activity":"x","context_files":{},"context_index":{}}"#;
        assert!(Manifest::parse(ok, "20250118-143022-a4f2").is_ok());
        assert!(Manifest::parse(ok, "20250118-143022-zzzz").is_err());
        for rel in
            ["../t_000000000000_1700000000000_0_aaaa.json", "a/b/t_000000000000_1700000000000_0_aaaa.json", "notes.txt"]
        {
            assert!(!is_relative_record_path(rel), "{rel}");
        }
        assert!(is_relative_record_path("code/t_000000000000_1700000000000_0_aaaa.json"));
    }

    #[test]
    fn a_manifest_its_reader_would_refuse_is_a_typed_error_not_bytes() {
        let id = "20250118-143022-a4f2";
        let meta = RecordMeta {
            tool_name: "t".into(),
            tool_description: "t".into(),
            args_json: "{}".into(),
            args_hash: "0".repeat(64),
            timestamp: "2025-01-18T14:30:22.000Z".into(),
            task_id: None,
            query_id: None,
            tool_call_id: None,
        };
        let entry = ManifestEntry::new(&meta, 2, &[]).unwrap();
        let mut good = Manifest::new(id, "2025-01-18T14:30:22.000Z");
        good.context_files.insert("code/t_000000000000_1700000000000_0_aaaa.json".into(), entry.clone());
        let bytes = good.encode().expect("a sound manifest encodes");
        assert_eq!(Manifest::parse(&bytes, id).unwrap().context_files.len(), 1);
        let mut escaping = good.clone();
        escaping.context_files.insert("../t_000000000000_1700000000000_1_aaaa.json".into(), entry.clone());
        let mut misnamed = good.clone();
        misnamed.session_id = "../../etc".into();
        for mut bad in [escaping, misnamed] {
            let err = bad.encode().expect_err("never bytes a reader refuses, never an empty manifest");
            assert_eq!(err.kind(), ErrorKind::Internal, "{err}");
        }
    }
}
