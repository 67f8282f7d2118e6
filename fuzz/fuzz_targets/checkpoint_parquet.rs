//! A Parquet checkpoint: `checkpoint::read_checkpoint` (both projections) on the input
//! stored as `_delta_log/00000000000000000001.checkpoint.parquet`, then the whole table
//! opened from it and `_last_checkpoint` (`Table::snapshot`).
#![no_main]

use deltalens_core::checkpoint::{CheckpointRead, read_checkpoint};
use deltalens_core::{Table, VersionSpec};
use deltalens_fuzz::{LOCATION, block_on, memory_table};
use deltalens_storage::ObjectMeta;

const CHECKPOINT: &str = "_delta_log/00000000000000000001.checkpoint.parquet";

deltalens_fuzz::target!(|data| {
    let hint = format!(r#"{{"version":1,"size":{},"parts":null}}"#, data.len());
    let (mem, storage) = memory_table(&[
        (CHECKPOINT, data),
        ("_delta_log/_last_checkpoint", hint.as_bytes()),
    ]);
    let part = ObjectMeta {
        path: CHECKPOINT.to_string(),
        size: data.len() as u64,
        last_modified_ms: None,
    };
    block_on(async {
        let _ = read_checkpoint(
            mem.as_ref(),
            &[part.clone()],
            CheckpointRead::ProtocolAndMetadata,
        )
        .await;
        let _ = read_checkpoint(mem.as_ref(), &[part], CheckpointRead::Snapshot).await;
        let table = Table::new(storage, LOCATION);
        if let Ok(snapshot) = table.snapshot(VersionSpec::Latest).await {
            assert_eq!(snapshot.version, 1);
            assert!(
                snapshot.files.windows(2).all(|w| w[0].path <= w[1].path),
                "files are not sorted by path"
            );
            snapshot
                .schema
                .to_arrow()
                .expect("a loaded schema converts to Arrow");
            for f in &snapshot.files {
                let _ = snapshot.partition_values_json(f);
            }
            let _ = snapshot.num_rows();
            let _ = snapshot.size_bytes();
        }
    });
});
