//! A commit file (newline-delimited JSON actions): `actions::parse_actions`,
//! `actions::parse_commit_info`, the actions' serde round trip and `replay::Replay`.
#![no_main]

use std::collections::HashSet;

use deltalens_core::actions::{Action, parse_actions, parse_commit_info};
use deltalens_core::protocol::check_readable;
use deltalens_core::replay::Replay;
use serde::Serialize;
use serde::de::DeserializeOwned;

const PATH: &str = "_delta_log/00000000000000000000.json";

/// Serialising an action and reading it back gives the same action.
fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(v: &T) {
    let json = serde_json::to_string(v).expect("an action serialises");
    let back: T =
        deltalens_json::from_str(&json).unwrap_or_else(|e| panic!("{json} does not read back: {e}"));
    assert_eq!(&back, v, "round trip through {json}");
}

deltalens_fuzz::target!(|data| {
    let actions = parse_actions(PATH, data);
    let info = parse_commit_info(PATH, data);
    let Ok(actions) = actions else {
        return;
    };
    // every line that reads as an action line also reads as a commitInfo line
    assert!(
        info.is_ok(),
        "parse_actions accepted what parse_commit_info refused: {info:?}"
    );
    for a in &actions {
        match a {
            Action::Add(add) => {
                round_trip(add);
                let _ = add.num_records();
                let _ = add.stats_json();
                let _ = add.key();
            }
            Action::Remove(rm) => {
                round_trip(rm);
                let _ = rm.key();
            }
            Action::Cdc(c) => round_trip(c),
            Action::Metadata(m) => {
                round_trip(m);
                let _ = m.property("delta.columnMapping.mode");
                let _ = deltalens_core::column_mapping::ColumnMappingMode::of(m);
            }
            Action::Protocol(p) => {
                round_trip(p);
                let _ = check_readable(p);
            }
            Action::Txn(t) => round_trip(t),
            Action::DomainMetadata(d) => round_trip(d),
            Action::Sidecar(s) => round_trip(s),
            Action::CommitInfo(_) | Action::CheckpointMetadata { .. } => {}
        }
    }
    let mut replay = Replay::new();
    replay.commit(actions);
    let _ = replay.has_protocol_and_metadata();
    let result = replay.finish();
    // reconciliation: one active file per (path, deletion vector id)
    let mut keys = HashSet::new();
    for f in &result.files {
        assert!(keys.insert(f.key()), "file {:?} is active twice", f.key());
    }
});
