//! Ranking over segments read by range ranks as ranking over segments read whole: an
//! index that holds the segments' records without their terms, given each query stem's
//! lists read from the segments' bytes block by block (the directory, one dictionary block,
//! the lists), gives the same hits, scores and matched words as an index that appended
//! every list, with records held in memory beside them.

use serde_json::json;
use toolctx_search::segment::layout::{Directory, Head};
use toolctx_search::segment::{encode, List, Segment, ToWrite};
use toolctx_search::{query_for, Index, SegmentLists, Strategy, Terms};

/// A deterministic stream of numbers (a linear congruential generator).
struct Numbers(u64);

impl Numbers {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((self.0 >> 33) % n as u64) as usize
    }
}

/// Words of a vocabulary, the first ones far more often than the rest (as in text).
fn word(numbers: &mut Numbers) -> String {
    let rank = numbers.below(40).min(numbers.below(3000));
    format!("w{rank}")
}

fn record(numbers: &mut Numbers, i: usize) -> Terms {
    let lines: String = (0..numbers.below(12) + 1)
        .map(|_| (0..numbers.below(20) + 1).map(|_| word(numbers)).collect::<Vec<_>>().join(" ") + "\n")
        .collect();
    let description = format!("read file: path=src/{}/f{i}.rs", word(numbers));
    Terms::of_record_with_content(&description, "read_file", &json!({}), Some(&json!(lines).to_string()), usize::MAX)
}

/// A segment's lists of `stem`, read as a reader by range does: its directory, the one
/// dictionary block that would hold it, then the lists' own bytes; `None` when the segment
/// lacks the stem (a read refused fails the test).
fn read<'a>(bytes: &'a [u8], first_slot: u32, first_passage: u32, stem: &str) -> Option<SegmentLists<'a>> {
    let head = Head::decode(bytes).expect("a head");
    let directory = Directory::decode(&head, head.directory.of(bytes).unwrap()).expect("a directory");
    let block = directory.block_of(stem)?;
    let entries =
        directory.dictionary_block(block, directory.dictionary_span(block).of(bytes).unwrap()).expect("a block");
    let entry = entries.into_iter().find(|e| &*e.term == stem)?;
    let list = |list: toolctx_search::segment::layout::ListRef, limit: u32| {
        let bytes = list.span.of(bytes).unwrap();
        List { count: list.count, last: list.check(bytes, limit).expect("a list"), bytes }
    };
    let (metadata, content) = (list(entry.metadata, directory.records), list(entry.content, directory.passages));
    Some(SegmentLists { first_slot, first_passage, df: entry.df, metadata, content })
}

#[test]
fn ranking_from_lists_read_by_range_is_ranking_from_whole_segments() {
    let mut numbers = Numbers(7);
    let mut order = 0u64;
    let mut whole = Index::new();
    let mut ranged = Index::new();
    // Three segments of 150 records, read at open: whole into one index, records alone
    // into the other.
    let mut segments = Vec::new();
    let mut decoded = Vec::new();
    for s in 0..3 {
        let terms: Vec<Terms> = (0..150).map(|i| record(&mut numbers, s * 150 + i)).collect();
        let paths: Vec<String> = (0..150).map(|i| format!("s{s}/r{i}.json")).collect();
        let bytes =
            encode(&terms.iter().zip(&paths).map(|(t, p)| ToWrite::from_terms(p, 1, "{}", t)).collect::<Vec<_>>());
        let segment = Segment::decode(&bytes).expect("decodes");
        let orders: Vec<u64> = (0..150).map(|i| order + i).collect();
        order += 150;
        whole.append_segment(&segment, &orders).expect("room");
        let bases = ranged.append_segment_records(&segment.records, &orders).expect("room");
        segments.push((bytes, bases));
        decoded.push(segment);
    }
    // Then more records saved in this process, held in both.
    for i in 0..40 {
        let terms = record(&mut numbers, 1000 + i);
        whole.add(order, &terms);
        ranged.add(order, &terms);
        order += 1;
    }
    let mut queries: Vec<String> =
        (0..40).map(|_| (0..numbers.below(4) + 1).map(|_| word(&mut numbers)).collect::<Vec<_>>().join(" ")).collect();
    queries.extend(["w0".into(), "w2999 w1".into(), "read file src".into(), "nothing here".into()]);
    let mut compared = 0;
    for q in &queries {
        for strategy in [Strategy::Bm25, Strategy::Overlap] {
            let query = query_for(q, strategy, false);
            let want = whole.rank_all(&query, strategy, Some(10));
            let read_all = |stem: &str| {
                segments.iter().filter_map(|(b, (slot, passage))| read(b, *slot, *passage, stem)).collect()
            };
            let got = ranged.rank_all_with(&query, strategy, Some(10), &read_all);
            assert_eq!(got.hits, want.hits, "{q:?} ({strategy:?})");
            compared += want.hits.len();
        }
    }
    assert!(compared > 400, "{compared} hits compared");

    // The second segment's records given their terms (its lists no longer read): the same.
    let (_, (first_slot, _)) = segments[1];
    let terms: Vec<Terms> = (0..150).map(|i| decoded[1].terms_of(i)).collect();
    let filled: Vec<(u32, &Terms)> = terms.iter().enumerate().map(|(i, t)| (first_slot + i as u32, t)).collect();
    ranged.fill(&filled);
    for q in &queries {
        let query = query_for(q, Strategy::Bm25, false);
        let want = whole.rank_all(&query, Strategy::Bm25, Some(10));
        let read_two = |stem: &str| {
            [0, 2].iter().filter_map(|&s| read(&segments[s].0, segments[s].1 .0, segments[s].1 .1, stem)).collect()
        };
        assert_eq!(ranged.rank_all_with(&query, Strategy::Bm25, Some(10), &read_two).hits, want.hits, "{q:?} filled");
    }
}
