//! Listing sessions and searching them: plans over their manifests.

use super::{is_session_id, session_dir, Manifest, ManifestEntry, MANIFEST, SESSIONS_DIR};
use crate::paths;
use crate::plan::{self, Op, Outcomes, Plan, Step};

/// One session, as `listSessions` reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionInfo {
    /// Its id.
    pub id: String,
    /// When it began.
    pub created_at: String,
    /// Its last write.
    pub last_activity: String,
    /// Records its manifest lists.
    pub records: usize,
    /// Bytes of those records.
    pub bytes: usize,
}

/// `toolctx::list_sessions` as a plan.
pub struct ListSessions;

impl ListSessions {
    /// The plan that lists the sessions of `context_dir`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(context_dir: &str) -> impl Plan<Output = Vec<SessionInfo>> {
        Manifests::new(context_dir).map(|manifests| {
            Ok(manifests
                .into_iter()
                .map(|(id, manifest)| SessionInfo {
                    records: manifest.context_files.len(),
                    bytes: manifest.context_files.values().map(|e| e.size).sum(),
                    id,
                    created_at: manifest.created_at,
                    last_activity: manifest.last_activity,
                })
                .collect())
        })
    }
}

/// A plan: the sessions of a context dir whose manifest parses, by id, with it.
pub enum Manifests {
    /// Nothing asked yet.
    Start(String),
    /// The sessions folder is being listed.
    Listing(String),
    /// The manifests of these sessions are being read.
    Reading(Vec<String>),
    /// Finished.
    Done,
}

impl Manifests {
    /// The manifests of the sessions of `context_dir`.
    pub fn new(context_dir: &str) -> Self {
        Manifests::Start(context_dir.to_owned())
    }
}

impl Plan for Manifests {
    type Output = Vec<(String, Manifest)>;

    fn step(&mut self, outcomes: Outcomes) -> Step<Self::Output> {
        match std::mem::replace(self, Manifests::Done) {
            Manifests::Start(context_dir) => {
                let root = paths::join(&context_dir, SESSIONS_DIR);
                *self = Manifests::Listing(context_dir);
                Step::Run(vec![Op::List(root)])
            }
            Manifests::Listing(context_dir) => {
                let names = match plan::names(plan::only(outcomes)) {
                    Ok(names) => names,
                    Err(e) => return Step::Done(Err(e)),
                };
                let ids: Vec<String> = names
                    .iter()
                    .filter_map(|n| n.strip_suffix('/').filter(|id| is_session_id(id)).map(str::to_owned))
                    .collect();
                let reads =
                    ids.iter().map(|id| Op::Read(paths::join(&session_dir(&context_dir, id), MANIFEST))).collect();
                *self = Manifests::Reading(ids);
                Step::Run(reads)
            }
            Manifests::Reading(ids) => {
                let mut out = Vec::new();
                for (id, read) in ids.into_iter().zip(outcomes) {
                    match plan::bytes(read) {
                        Ok(Some(bytes)) => {
                            if let Ok(manifest) = Manifest::parse(&bytes, &id) {
                                out.push((id, manifest));
                            }
                        }
                        Ok(None) => {}
                        Err(e) => return Step::Done(Err(e)),
                    }
                }
                Step::Done(Ok(out))
            }
            Manifests::Done => Step::Done(Err(plan::stepped_after_done())),
        }
    }
}

/// One record found by `toolctx::search_sessions`.
#[derive(Debug, Clone)]
pub struct SessionHit {
    /// The session the record belongs to.
    pub session_id: String,
    /// The record's path.
    pub filepath: String,
    /// BM25 score (higher is better).
    pub score: f64,
    /// The query's keywords the record matched, as written.
    pub matched: Vec<String>,
    /// The record's manifest entry (what a pointer needs).
    pub entry: ManifestEntry,
}

/// `toolctx::search_sessions` as a plan.
pub struct SearchSessions;

impl SearchSessions {
    /// The plan that ranks the records of every session of `context_dir` for `query`.
    #[allow(clippy::new_ret_no_self)]
    pub fn new(context_dir: &str, query: &str, limit: usize) -> impl Plan<Output = Vec<SessionHit>> {
        let (context_dir, query) = (context_dir.to_owned(), query.to_owned());
        Manifests::new(&context_dir).map(move |manifests| Ok(ranked(&context_dir, manifests, &query, limit)))
    }
}

/// The best `limit` records of `manifests` for `query` (`toolctx::search_sessions`).
fn ranked(context_dir: &str, manifests: Vec<(String, Manifest)>, query: &str, limit: usize) -> Vec<SessionHit> {
    use crate::select::{rank, Fallback, Strategy, Terms};
    let mut entries: Vec<(String, String, ManifestEntry)> = Vec::new();
    for (id, manifest) in manifests {
        let dir = session_dir(context_dir, &id);
        for (rel, entry) in manifest.context_files {
            entries.push((id.clone(), paths::join(&dir, &rel), entry));
        }
    }
    let terms: Vec<Terms> = entries.iter().map(|(_, _, e)| e.terms()).collect();
    let refs: Vec<&Terms> = terms.iter().collect();
    let ranking = rank(query, &refs, Fallback::None, Strategy::Bm25);
    ranking
        .hits
        .iter()
        .take(limit)
        .map(|hit| {
            let (id, filepath, entry) = &entries[hit.index];
            SessionHit {
                session_id: id.clone(),
                filepath: filepath.clone(),
                score: hit.score,
                matched: ranking.matched(hit).map(str::to_owned).collect(),
                entry: entry.clone(),
            }
        })
        .collect()
}
