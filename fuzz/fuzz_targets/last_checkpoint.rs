//! `_delta_log/_last_checkpoint`: `log::hint::Hint::parse`, `Hint::part_paths` and
//! `log::hint::fetch_hinted` against a store holding small files at those paths.
#![no_main]

use deltalens_core::log::{Hint, LOG_DIR, LogFile, LogFileKind, fetch_hinted};
use deltalens_fuzz::{IntoPaths, block_on, memory_table};
use deltalens_storage::ObjectMeta;

/// The smallest file that ends like a Parquet file.
const PARQUET_ISH: &[u8] = b"PAR1\0\0\0\0PAR1";

deltalens_fuzz::target!(|data| {
    let Some(hint) = Hint::parse(data) else {
        return;
    };
    let Some(paths) = hint.part_paths().into_paths() else {
        return;
    };
    assert!(!paths.is_empty(), "a hint names at least one file");
    assert!(
        paths.len() as u64 <= deltalens_core::limits::MAX_CHECKPOINT_PARTS,
        "{} paths from one hint",
        paths.len()
    );
    for p in &paths {
        // a plain file of the log, named as a checkpoint of the hinted version
        let name = p
            .strip_prefix(LOG_DIR)
            .unwrap_or_else(|| panic!("{p} is outside the log"));
        assert!(
            !name.is_empty()
                && !matches!(name, "." | "..")
                && !name.contains(['/', '\\'])
                && !name.chars().any(char::is_control),
            "{p:?} is not a plain file of the log"
        );
        assert!(
            name.starts_with(&format!("{:020}.checkpoint.", hint.version)),
            "{p} is not a checkpoint of version {}",
            hint.version
        );
        // classic and multi-part names are exactly the ones the log uses
        if hint.v2_checkpoint.is_none() {
            let file = LogFile::parse(ObjectMeta {
                path: p.clone(),
                size: 0,
                last_modified_ms: None,
            });
            assert!(
                matches!(&file, Some(f) if f.version == hint.version
                    && matches!(f.kind, LogFileKind::Checkpoint(_))),
                "{p} is not a checkpoint file of the log"
            );
        }
    }
    if let (None, Some(parts)) = (&hint.v2_checkpoint, hint.parts) {
        assert_eq!(paths.len(), parts.max(1) as usize, "one path per part");
    }
    // reading the hinted files (bounded here so that one run stays fast; the allocation
    // sized by the hint is exercised by part_paths above)
    if paths.len() <= 64 {
        let files: Vec<(&str, &[u8])> = paths.iter().map(|p| (p.as_str(), PARQUET_ISH)).collect();
        let (_, storage) = memory_table(&files);
        if let Ok(Some((checkpoint, _))) = block_on(fetch_hinted(storage.as_ref(), &hint)) {
            assert_eq!(checkpoint.version, hint.version);
            assert_eq!(checkpoint.parts.len(), paths.len());
        }
    }
});
