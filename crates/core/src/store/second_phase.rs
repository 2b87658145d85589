//! `selectRelevant`'s second phase as a plan: the records of its first results are read,
//! and each one's phrase share (where the query's words stand together in it: the search
//! crate's `phrase.rs`, which says how it scores) and passage (its best-matching lines, as
//! the model reads them) are made as it is read.
//!
//! Records held in memory (saved, not yet written) are read from there; the others are
//! read in steps of at most [`READ_STEP_BYTES`] by the sizes their pointers give (one
//! record at least; a pointer that gives a wrong size, from a list of the caller's, can
//! make a step larger), so a step's records are all the phase holds at once, and most
//! rankings read theirs in one step. A record whose size is not its pointer's was
//! rewritten under its name since it was indexed: it is kept to be indexed again once the
//! answer is made ([`Manager::index_changed`]), as `loadContexts` does.
//!
//! A record that cannot be read, or is not a whole record, keeps its first-phase score and
//! gets no passage; `onDebug` says why (`no passage for <path>: <why>`; a path outside the
//! store is `loadContexts`'s `Failed to load <path>: outside the context dir`).

use std::ops::Deref;

use serde_json::Value;

use super::{LoadStep, Loading, Manager};
use crate::error::{Error, ErrorKind};
use crate::plan::{self, Op, Outcomes, Plan, Step};
use crate::record::{from_json, parse_record};
use crate::select::{best_passage, Passage, Phrase, Query};

/// Most bytes of records one step reads (one record at least).
pub const READ_STEP_BYTES: usize = 4 * 1024 * 1024;

/// A result to read: its record's path, or `None` when it is not read (it matched no word
/// of the query: a fallback's, or found by its vector alone); its size as its pointer gives
/// it (0 when unknown).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// The record's path, as the ranking lists it.
    pub path: Option<String>,
    /// Its size in bytes.
    pub size: usize,
}

/// What the second phase made of each result, in the order given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reread {
    /// Each one's phrase share, from 0 to 1 (0 where not read, or not scored again).
    pub shares: Vec<f64>,
    /// Each one's passage, where a line of its result holds a word of the query.
    pub passages: Vec<Option<Passage>>,
    /// The records read whose size is not their pointer's: rewritten under their name by
    /// another program since they were indexed, with what was read
    /// ([`Manager::index_changed`] indexes them as they are now).
    pub changed: Vec<(String, Vec<u8>)>,
}

impl Manager {
    /// Indexes the records of a [`Reread`]'s `changed` as they are now, as `loadContexts`
    /// does for the records it reads (`load.rs`): their pointers move to new slots, so the
    /// ranking that read them must have made its answer first.
    pub fn index_changed(&self, changed: Vec<(String, Vec<u8>)>) {
        for (path, bytes) in changed {
            self.changed_under_name(&path, &bytes);
        }
    }
}

/// The second phase over `targets` (see the module docs).
pub struct SecondPhase<M> {
    manager: M,
    words: Query,
    /// The query's pairs, when the results are scored again (else only passages are made).
    phrase: Option<Phrase>,
    targets: Vec<Target>,
    /// The first target not yet read or asked for.
    next: usize,
    /// The targets the reads in flight are for, in the order asked.
    asked: Vec<usize>,
    out: Reread,
    /// A load in flight: `close` waits for it, as for `loadContexts`.
    _loading: Loading,
}

impl<M: Deref<Target = Manager>> SecondPhase<M> {
    /// The phase for `query` over `targets`; `rescore`: whether phrase shares are made.
    /// `CLOSED` once `close` has begun.
    pub fn new(manager: M, query: &str, rescore: bool, targets: Vec<Target>) -> crate::error::Result<Self> {
        let loading = manager.begin_load()?;
        let n = targets.len();
        let out = Reread { shares: vec![0.0; n], passages: vec![None; n], changed: Vec::new() };
        let phrase = rescore.then(|| Phrase::new(query));
        let words = Query::new(query);
        Ok(SecondPhase { manager, words, phrase, targets, next: 0, asked: Vec::new(), out, _loading: loading })
    }

    /// Makes target `i`'s share and passage of its record's `bytes`.
    fn take(&mut self, i: usize, bytes: &[u8]) {
        let result = parse_record(bytes).and_then(|record| match record.result {
            Some(raw) => from_json::<Value>(raw.get()).map(Some).map_err(|e| Error::invalid(e.to_string())),
            None => Ok(None),
        });
        match result {
            Ok(Some(result)) => {
                let view = crate::view::lines_of(&result);
                if let Some(phrase) = &self.phrase {
                    self.out.shares[i] = phrase.share(&view);
                }
                self.out.passages[i] = best_passage(&view, &self.words);
            }
            Ok(None) => {}
            Err(e) => self.not_read(i, &e.to_string()),
        }
    }

    /// Tells `onDebug` that target `i` gets no passage, and why.
    fn not_read(&self, i: usize, why: &str) {
        let path = self.targets[i].path.as_deref();
        self.manager.debug(format!("no passage for {}: {why}", path.unwrap_or("a result")), path);
    }
}

impl<M: Deref<Target = Manager>> Plan for SecondPhase<M> {
    type Output = Reread;

    fn step(&mut self, outcomes: Outcomes) -> Step<Reread> {
        if outcomes.len() != self.asked.len() {
            let what = "the driver answered another number of outcomes than ops";
            return Step::Done(Err(Error::new(ErrorKind::Internal, what)));
        }
        for (i, outcome) in std::mem::take(&mut self.asked).into_iter().zip(outcomes) {
            match plan::bytes(outcome) {
                Ok(Some(bytes)) => {
                    self.take(i, &bytes);
                    let path = self.targets[i].path.as_deref().unwrap_or_default();
                    if self.manager.size_changed(path, bytes.len()) {
                        self.out.changed.push((path.to_owned(), bytes));
                    }
                }
                Ok(None) => self.not_read(i, "the record is missing"),
                Err(e) if e.kind() == ErrorKind::Internal => return Step::Done(Err(e)),
                Err(e) => self.not_read(i, &format!("the storage could not read it ({e})")),
            }
        }
        let (mut ops, mut bytes) = (Vec::new(), 0);
        while self.next < self.targets.len() {
            let i = self.next;
            let Target { path, size } = &self.targets[i];
            let Some(path) = path.clone() else {
                self.next += 1;
                continue;
            };
            if !ops.is_empty() && bytes + size > READ_STEP_BYTES {
                break;
            }
            self.next += 1;
            match self.manager.load_step(&path) {
                LoadStep::Held(_, held) => self.take(i, &held),
                LoadStep::Read(path) => {
                    bytes += size;
                    ops.push(Op::Read(path));
                    self.asked.push(i);
                }
                LoadStep::Skipped => {}
            }
        }
        if ops.is_empty() {
            return Step::Done(Ok(std::mem::take(&mut self.out)));
        }
        Step::Run(ops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;
    use std::rc::Rc;

    use crate::store::{DebugEvent, Options, SaveInput};
    use crate::testing::TestStorage;

    /// A manager whose records are written at once or held (`persist_threshold`), its
    /// `onDebug` messages kept in `heard`.
    fn manager(persist_threshold: usize, heard: &Rc<RefCell<Vec<String>>>) -> Manager {
        let mut o = Options::with("/ctx", Rc::new(|| 0), Rc::new(|| Ok(0.5)));
        o.persist_threshold = persist_threshold;
        let heard = heard.clone();
        o.on_debug = Some(Rc::new(move |event: &DebugEvent| heard.borrow_mut().push(event.message.clone())));
        Manager::new(o).unwrap()
    }

    fn save(files: &TestStorage, m: &Manager, result: &str) -> String {
        let input = SaveInput {
            tool_name: "bash",
            args_json: r#"{"c":"x"}"#,
            result_json: Some(result),
            ..SaveInput::default()
        };
        files.save(m, input).unwrap()
    }

    fn target(path: &str, size: usize) -> Target {
        Target { path: Some(path.to_owned()), size }
    }

    #[test]
    fn each_result_read_gets_its_share_and_passage_in_steps_bounded_by_bytes() {
        let (files, m) = (TestStorage::logging(), manager(0, &Rc::default()));
        let quoted = save(&files, &m, r#""x\nerror: connection refused by peer\ny""#);
        let scattered = save(&files, &m, r#""refused\npeer\nconnection""#);
        files.take_log();
        let big = READ_STEP_BYTES - 10;
        let targets = vec![target(&quoted, big), Target { path: None, size: 5 }, target(&scattered, 20)];
        let read = files.run(SecondPhase::new(&m, "connection refused by peer", true, targets).unwrap()).unwrap();
        assert_eq!(read.shares, [1.0, 0.0, 0.0]);
        let passage = read.passages[0].as_ref().unwrap();
        assert_eq!((passage.text.as_str(), passage.start_line), ("error: connection refused by peer", 2));
        assert!(read.passages[1].is_none(), "a result not read");
        assert!(read.passages[2].is_some());
        // The first record fills a step by itself: the second is read in the next.
        let reads: Vec<String> = files.take_log().into_iter().filter(|l| l.starts_with("read")).collect();
        assert_eq!(reads.len(), 2, "{reads:?}");
    }

    #[test]
    fn a_record_held_in_memory_is_not_read_and_one_missing_is_told() {
        let heard = Rc::default();
        let (files, m) = (TestStorage::logging(), manager(64 * 1024, &heard));
        let held = save(&files, &m, r#""refresh token rotated""#);
        files.take_log();
        let targets = vec![target(&held, 30), target("/ctx/bash_gone.json", 30)];
        let read = files.run(SecondPhase::new(&m, "refresh token", true, targets).unwrap()).unwrap();
        assert_eq!(read.shares, [1.0, 0.0]);
        let log = files.take_log();
        assert!(!log.iter().any(|l| l.contains(&held)), "the held record is not read: {log:?}");
        assert!(
            heard.borrow().iter().any(|m| m == "no passage for /ctx/bash_gone.json: the record is missing"),
            "{heard:?}"
        );
    }

    #[test]
    fn without_rescoring_only_passages_are_made() {
        let (files, m) = (TestStorage::default(), manager(0, &Rc::default()));
        let path = save(&files, &m, r#""refresh token""#);
        let read = files.run(SecondPhase::new(&m, "refresh token", false, vec![target(&path, 20)]).unwrap()).unwrap();
        assert_eq!(read.shares, [0.0]);
        assert!(read.passages[0].is_some());
    }
}
