//! Where a store's index segments live and when they merge (SPEC §4: the search index
//! persisted as derived data; the format is `toolctx_search::segment`'s).
//!
//! A record folder (the context dir, or a session's folder) keeps its segments in its
//! `.index/` folder, a name the record grammar never matches and no category can take.
//! A segment is named `{records}-{ms}-{random}.seg`: how many records it holds (so the
//! merge policy reads the listing, not the files), when it was written and a random part
//! (so two processes never write the same name).
//!
//! A manager writes one segment for the records it indexed since its last one: in the
//! background once [`SEGMENT_RECORDS`] wait, at `flush`/`close`, and after an `open` that
//! had to read records no segment held. Segments merge as Lucene's `LogMergePolicy`
//! merges them: a segment's level is the order of magnitude of its record count in
//! [`SEGMENT_RECORDS`] × [`MERGE_FACTOR`]; once [`MERGE_FACTOR`] segments share a level
//! they are merged into one. Segments of [`SEGMENT_RECORDS`] records (the background
//! writes) are rewritten about log₁₀(n) times; smaller ones (a process that saves a few
//! records and closes) share level 0 until it holds 2,560 records, so a record of those is
//! rewritten up to that many / 10 times before it leaves it.
//!
//! A storage with a largest value (`Options::max_value_bytes`: D1's and a Durable Object's
//! 2 MB rows) gets no segment over it: a segment write or a merge is cut into several
//! (`toolctx_search::segment::encode_within`), and a segment over half of it takes no more
//! merges, as Lucene's TieredMergePolicy leaves a segment past half its largest merge
//! (`store/persist.rs`; its size estimated from its record count, as the listing gives no
//! sizes). A record whose index alone is over it is held by no segment.
//!
//! A segment at least half of whose records the manager saw go (evicted, removed from
//! the folder, or written again into a newer segment) is merged whatever its level or
//! size, as Lucene's TieredMergePolicy weighs deletions (`store/holdings.rs`): a store
//! whose records churn keeps about as many segment entries as records. A merge leaves
//! out an input's copy of a record that the manager knows a newer listed segment to
//! hold: the reader never takes that copy, and written into the merged segment (the
//! newest) it would be the one taken. After a merge the
//! folder is planned again, so merges a merge makes due (a level it filled) run in the
//! same job.
//!
//! A merge writes its segment before it removes its inputs: a writer killed in between
//! leaves both, and a reader takes each record once (the newest segment holding it), so
//! nothing is lost or counted twice. The reader removes a segment none of whose records it
//! took because a newer one holds them all (the leftover input), so kills do not pile up
//! segments until the next merge of their level.

use crate::paths;

/// The folder of a record folder's segments.
pub const INDEX_DIR: &str = ".index";

/// Records written or read since the last segment after which one is written in the background.
pub const SEGMENT_RECORDS: usize = 256;

/// Records in no segment past which a save yields to the host's event loop before it
/// resolves (the driver's back-pressure: `Manager::index_backlogged`); past
/// [`SEGMENT_RECORDS`] already while a segment is being written. The driver starts a
/// segment due when the event loop is free; a loop of awaited saves over synchronous
/// writes never frees it, so without this the segment's start, lock and write would wait
/// for the loop to end. A yield costs the save one turn of the event loop, never a wait
/// for a lock or a write.
pub const SEGMENT_BACKLOG: usize = 4 * SEGMENT_RECORDS;

/// Segments of one level that are merged into one.
pub const MERGE_FACTOR: usize = 10;

const EXTENSION: &str = ".seg";

/// The segment folder of the record folder `root`.
pub fn segments_dir(root: &str) -> String {
    paths::join(root, INDEX_DIR)
}

/// The lock a merge holds, for the segment folder `dir`: inside it (an adapter that
/// locks with a file makes it there, beside the segments, not beside the records).
pub fn merge_lock(dir: &str) -> String {
    paths::join(dir, "merge.lock")
}

/// The name of a new segment of `records` records, written at `now_ms`.
pub fn segment_name(records: usize, now_ms: i64, random: &str) -> String {
    format!("{records}-{now_ms}-{random}{EXTENSION}")
}

/// How many records the segment named `name` holds; `None` when it is no segment's name.
pub fn segment_records(name: &str) -> Option<usize> {
    let stem = name.strip_suffix(EXTENSION)?;
    let (records, rest) = stem.split_once('-')?;
    let (ms, random) = rest.split_once('-')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ok = digits(records) && digits(ms) && !random.is_empty() && random.bytes().all(|b| b.is_ascii_alphanumeric());
    ok.then(|| records.parse().ok()).flatten()
}

/// Orders segment names newest first (by the time in the name, then the name): where
/// two segments hold a record (a merge cut short, a rebuild beside an older segment), the
/// reader takes it from the newest.
pub fn newest_first(names: &mut [String]) {
    crate::sort::sort_by(names, |a, b| newest_order(a, b));
}

/// Whether the segment named `a` comes before the one named `b` in [`newest_first`]'s
/// order: where both hold a record, the reader takes it from `a`.
pub fn newer(a: &str, b: &str) -> bool {
    newest_order(a, b) == std::cmp::Ordering::Less
}

/// [`newest_first`]'s order: by the time in the name, the latest first, then by the name.
fn newest_order(a: &str, b: &str) -> std::cmp::Ordering {
    let ms = |name: &str| name.split('-').nth(1).and_then(|ms| ms.parse::<u64>().ok()).unwrap_or(0);
    ms(b).cmp(&ms(a)).then_with(|| a.cmp(b))
}

/// The level of a segment of `records` records: 0 up to [`SEGMENT_RECORDS`] × 10, then
/// one more for every factor of ten.
fn level(records: usize) -> u32 {
    let mut level = 0;
    let mut bound = SEGMENT_RECORDS * MERGE_FACTOR;
    while records >= bound && level < 16 {
        level += 1;
        bound = bound.saturating_mul(MERGE_FACTOR);
    }
    level
}

/// The segments to merge among those named `names` (the segment folder's listing), if
/// any: [`MERGE_FACTOR`] of the lowest level that has that many, smallest first.
pub fn to_merge(names: &[String]) -> Option<Vec<String>> {
    let mut segments: Vec<(u32, usize, &String)> =
        names.iter().filter_map(|n| segment_records(n).map(|r| (level(r), r, n))).collect();
    crate::sort::sort(&mut segments);
    let mut from = 0;
    while from < segments.len() {
        let lvl = segments[from].0;
        let to = segments[from..].iter().position(|s| s.0 != lvl).map_or(segments.len(), |p| from + p);
        if to - from >= MERGE_FACTOR {
            return Some(segments[from..from + MERGE_FACTOR].iter().map(|s| s.2.clone()).collect());
        }
        from = to;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_how_many_records_and_never_look_like_records() {
        let name = segment_name(300, 1_737_210_622_000, "a4f2");
        assert_eq!(name, "300-1737210622000-a4f2.seg");
        assert_eq!(segment_records(&name), Some(300));
        assert!(!crate::naming::is_record_filename(&name));
        for bad in ["300-1737210622000-a4f2.json", "x-1-a.seg", "300-1737210622000-.seg", "300.seg", "300-1-a/.seg"] {
            assert_eq!(segment_records(bad), None, "{bad}");
        }
        assert!(crate::session::check_category(INDEX_DIR).is_err(), "no category is the segment folder");
    }

    #[test]
    fn the_newest_segment_comes_first() {
        let mut names = vec![segment_name(5, 100, "aaaa"), segment_name(9, 300, "bbbb"), segment_name(1, 200, "cccc")];
        newest_first(&mut names);
        assert_eq!(names, ["9-300-bbbb.seg", "1-200-cccc.seg", "5-100-aaaa.seg"]);
        assert!(newer(&names[0], &names[1]) && !newer(&names[1], &names[0]) && !newer(&names[0], &names[0]));
        assert!(newer("1-5-aaaa.seg", "1-5-bbbb.seg"), "the same time: by the name, as sorted");
    }

    #[test]
    fn ten_segments_of_a_level_merge_and_no_fewer() {
        let names = |counts: &[usize]| -> Vec<String> {
            counts.iter().enumerate().map(|(i, &n)| segment_name(n, i as i64, "abcd")).collect()
        };
        assert_eq!(to_merge(&names(&[256; 9])), None);
        let ten = names(&[256; 10]);
        assert_eq!(to_merge(&ten).unwrap().len(), 10);
        // Nine small and nine large: nothing; a tenth large merges the large ones.
        let mut mixed = names(&[10; 9]);
        mixed.extend(names(&[3000; 9]));
        assert_eq!(to_merge(&mixed), None);
        mixed.push(segment_name(5000, 99, "zzzz"));
        let merged = to_merge(&mixed).unwrap();
        assert!(merged.iter().all(|n| segment_records(n).unwrap() >= 2560), "{merged:?}");
    }
}
