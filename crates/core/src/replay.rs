//! Action reconciliation (PROTOCOL.md "Action Reconciliation"), replaying newest first:
//! the first protocol / metaData / txn per app / domain seen wins, and a logical file
//! `(path, deletion vector id)` is active when the newest action naming it is an `add`.

use std::collections::{BTreeMap, HashMap};

use crate::actions::{
    Action, Add, DeletionVectorDescriptor, DomainMetadata, Metadata, Protocol, Txn,
};
use crate::checkpoint::CheckpointActions;

/// Logical files seen so far: path -> deletion-vector ids seen with it. Keyed by path so
/// checkpoint adds are looked up without allocating a key.
#[derive(Debug, Default)]
struct Seen(HashMap<String, Vec<Option<String>>>);

impl Seen {
    /// Record `(path, dv)`; true when it was not seen before.
    fn insert(&mut self, path: &str, dv: Option<&DeletionVectorDescriptor>) -> bool {
        let id = dv.map(DeletionVectorDescriptor::unique_id);
        let ids = self.0.entry(path.to_string()).or_default();
        if ids.contains(&id) {
            false
        } else {
            ids.push(id);
            true
        }
    }

    fn contains(&self, path: &str, dv: Option<&DeletionVectorDescriptor>) -> bool {
        match self.0.get(path) {
            None => false,
            Some(ids) => {
                let id = dv.map(DeletionVectorDescriptor::unique_id);
                ids.contains(&id)
            }
        }
    }
}

/// State accumulated while replaying from the newest commit to the checkpoint.
#[derive(Debug, Default)]
pub struct Replay {
    seen: Seen,
    files: Vec<Add>,
    protocol: Option<Protocol>,
    metadata: Option<Metadata>,
    txns: BTreeMap<String, Txn>,
    domains: BTreeMap<String, Option<DomainMetadata>>,
}

/// The reconciled state of a table version.
#[derive(Debug, Clone)]
pub struct ReplayResult {
    /// The active logical files: the newest `add` of each (path, DV id) not removed since.
    pub files: Vec<Add>,
    /// The newest `protocol` action; `None` when the log has none.
    pub protocol: Option<Protocol>,
    /// The newest `metaData` action; `None` when the log has none.
    pub metadata: Option<Metadata>,
    /// The newest `txn` of each application, by `appId`.
    pub txns: BTreeMap<String, Txn>,
    /// Live domain metadata (tombstones dropped).
    pub domain_metadata: BTreeMap<String, DomainMetadata>,
}

impl Replay {
    /// An empty replay, before any file is applied.
    pub fn new() -> Self {
        Self::default()
    }

    /// True once protocol and metadata are known (older files cannot change them).
    pub fn has_protocol_and_metadata(&self) -> bool {
        self.protocol.is_some() && self.metadata.is_some()
    }

    fn non_file(&mut self, a: Action) {
        match a {
            Action::Protocol(p) => {
                self.protocol.get_or_insert(p);
            }
            Action::Metadata(m) => {
                self.metadata.get_or_insert(m);
            }
            Action::Txn(t) => {
                self.txns.entry(t.app_id.clone()).or_insert(t);
            }
            Action::DomainMetadata(d) => {
                let live = (!d.removed).then(|| d.clone());
                self.domains.entry(d.domain).or_insert(live);
            }
            _ => {}
        }
    }

    /// Apply one commit's actions. Commits must be applied newest first.
    pub fn commit(&mut self, actions: Vec<Action>) {
        for a in actions {
            match a {
                Action::Add(add) => {
                    if self.seen.insert(&add.path, add.deletion_vector.as_ref()) {
                        self.files.push(add);
                    }
                }
                Action::Remove(rm) => {
                    self.seen.insert(&rm.path, rm.deletion_vector.as_ref());
                }
                other => self.non_file(other),
            }
        }
    }

    /// Apply the checkpoint's actions, after every newer commit. Its removes are only
    /// tombstones for VACUUM and its adds are already reconciled among themselves.
    pub fn checkpoint(&mut self, checkpoint: CheckpointActions) {
        let CheckpointActions { mut adds, others } = checkpoint;
        for a in others {
            match a {
                Action::Add(add) => adds.push(add),
                Action::Remove(_) => {}
                other => self.non_file(other),
            }
        }
        // filter the (large) checkpoint vector in place and put the newer adds into it
        if !self.seen.0.is_empty() {
            adds.retain(|a| !self.seen.contains(&a.path, a.deletion_vector.as_ref()));
        }
        adds.append(&mut self.files);
        self.files = adds;
    }

    /// Whether a newer action (applied with [`Replay::commit`]) names the same logical
    /// file as `add`: then a checkpoint's `add` of it is no longer active.
    pub fn supersedes(&self, add: &Add) -> bool {
        self.seen.contains(&add.path, add.deletion_vector.as_ref())
    }

    /// The adds of the commits applied so far that are active, taken out.
    pub fn take_files(&mut self) -> Vec<Add> {
        std::mem::take(&mut self.files)
    }

    /// The reconciled state, once every file down to the checkpoint is applied.
    pub fn finish(self) -> ReplayResult {
        ReplayResult {
            files: self.files,
            protocol: self.protocol,
            metadata: self.metadata,
            txns: self.txns,
            domain_metadata: self
                .domains
                .into_iter()
                .filter_map(|(k, v)| v.map(|v| (k, v)))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::actions::parse_actions;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn acts(s: &str) -> Vec<Action> {
        parse_actions("t", s.as_bytes()).unwrap()
    }

    fn cp(actions: Vec<Action>) -> CheckpointActions {
        CheckpointActions {
            adds: Vec::new(),
            others: actions,
        }
    }

    fn paths(r: &ReplayResult) -> Vec<String> {
        let mut p: Vec<_> = r
            .files
            .iter()
            .map(|a| match &a.deletion_vector {
                Some(d) => format!("{}#{}", a.path, d.unique_id()),
                None => a.path.clone(),
            })
            .collect();
        p.sort();
        p
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn newest_action_per_logical_file_wins() {
        let mut r = Replay::new();
        // v3: DV update of b: remove (b, none), add (b, dv1)
        r.commit(acts(
            r#"{"remove":{"path":"b","dataChange":true}}
{"add":{"path":"b","size":1,"partitionValues":{},"modificationTime":0,"dataChange":true,"deletionVector":{"storageType":"u","pathOrInlineDv":"x","offset":1,"sizeInBytes":2,"cardinality":1}}}
{"txn":{"appId":"app","version":9}}
{"domainMetadata":{"domain":"d1","configuration":"{}","removed":true}}"#,
        ));
        // v2: remove a, re-add c
        r.commit(acts(
            r#"{"remove":{"path":"a","dataChange":true}}
{"add":{"path":"c","size":1,"partitionValues":{},"modificationTime":0,"dataChange":true}}
{"txn":{"appId":"app","version":8}}
{"metaData":{"id":"new","schemaString":"{}","format":{"provider":"parquet"}}}"#,
        ));
        // checkpoint at v1: a, b, c (older c), plus a tombstone
        r.checkpoint(cp(acts(
            r#"{"add":{"path":"a","size":1,"partitionValues":{},"modificationTime":0,"dataChange":true}}
{"add":{"path":"b","size":1,"partitionValues":{},"modificationTime":0,"dataChange":true}}
{"add":{"path":"c","size":1,"partitionValues":{},"modificationTime":0,"dataChange":true}}
{"remove":{"path":"z","dataChange":false}}
{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}
{"metaData":{"id":"old","schemaString":"{}","format":{"provider":"parquet"}}}
{"domainMetadata":{"domain":"d1","configuration":"{}","removed":false}}
{"domainMetadata":{"domain":"d2","configuration":"{\"k\":1}","removed":false}}"#,
        )));
        let res = r.finish();
        assert_eq!(paths(&res), ["b#ux@1", "c"]);
        assert_eq!(res.metadata.unwrap().id, "new");
        assert_eq!(res.protocol.unwrap().min_writer_version, 2);
        assert_eq!(res.txns["app"].version, 9);
        assert_eq!(
            res.domain_metadata.keys().collect::<Vec<_>>(),
            [&"d2".to_string()]
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn re_added_file_after_remove_is_active() {
        let mut r = Replay::new();
        r.commit(acts(
            r#"{"add":{"path":"a","size":2,"partitionValues":{},"modificationTime":0,"dataChange":true}}"#,
        ));
        r.commit(acts(r#"{"remove":{"path":"a","dataChange":true}}"#));
        r.commit(acts(
            r#"{"add":{"path":"a","size":1,"partitionValues":{},"modificationTime":0,"dataChange":true}}"#,
        ));
        let res = r.finish();
        assert_eq!(res.files.len(), 1);
        assert_eq!(res.files[0].size, 2);
    }
}
