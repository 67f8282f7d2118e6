//! Helpers shared by the fuzz targets (see `fuzz/README.md`).

use std::sync::Arc;

use deltalens_storage::{DynStorage, MemoryStorage};

pub use futures::executor::block_on;

/// The location tables are opened at in the targets (only used in messages and to resolve
/// absolute paths).
pub const LOCATION: &str = "s3://fuzz-bucket/table";

/// An in-memory table holding `files` (path relative to the table root, bytes).
pub fn memory_table(files: &[(&str, &[u8])]) -> (Arc<MemoryStorage>, DynStorage) {
    let mem = Arc::new(MemoryStorage::new());
    for (path, data) in files {
        mem.put(path, data.to_vec(), 1_600_000_000_000);
    }
    let dyn_storage: DynStorage = mem.clone();
    (mem, dyn_storage)
}

/// Paths returned either as a plain `Vec` or as a `Result` of one (an API that gains a
/// limit check keeps compiling here).
pub trait IntoPaths {
    fn into_paths(self) -> Option<Vec<String>>;
}

impl IntoPaths for Vec<String> {
    fn into_paths(self) -> Option<Vec<String>> {
        Some(self)
    }
}

impl<E> IntoPaths for Result<Vec<String>, E> {
    fn into_paths(self) -> Option<Vec<String>> {
        self.ok()
    }
}

/// The input as UTF-8, or `None`.
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Split `data` at the first `sep` byte: (before, after); all of it and an empty tail
/// when there is none.
pub fn split_once(data: &[u8], sep: u8) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == sep) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

pub mod table;
