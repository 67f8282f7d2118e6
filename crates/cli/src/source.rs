//! Where a table's bytes come from: a store URL or local path opened with object_store,
//! or a Unity Catalog name resolved to its storage location with vended credentials.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use deltalens_object_store::{ObjectStoreStorage, catalog_name, location_to_url};
use deltalens_storage::StorageError;

use crate::error::CliError;

/// An opened table location.
pub struct Source {
    store: Arc<ObjectStoreStorage>,
    /// A local table's directory (canonical), whose files `serve` holds to its one rule
    /// for local files (`cmd::serve::files::local_file`).
    local: Option<PathBuf>,
}

impl Source {
    /// Opens `location` (a URL or a local path) with the store `options`.
    pub async fn open(location: &str, options: &[(String, String)]) -> Result<Source, CliError> {
        let (store, _vending) = ObjectStoreStorage::open_resolved(location, options).await?;
        Ok(Source {
            store: Arc::new(store),
            local: local_dir(location)?,
        })
    }

    /// The storage to read through now.
    pub async fn storage(&self) -> Result<Arc<ObjectStoreStorage>, StorageError> {
        Ok(Arc::clone(&self.store))
    }

    /// The table's directory (canonical) when it is local (`file://` or a path).
    pub fn local_root(&self) -> Option<&Path> {
        self.local.as_deref()
    }
}

/// The canonical directory of a local `location`; `None` for a store (or a Unity Catalog
/// name, resolved inside the object-store crate).
fn local_dir(location: &str) -> Result<Option<PathBuf>, CliError> {
    if catalog_name(location).is_some() {
        return Ok(None);
    }
    let url = location_to_url(location)?;
    if url.scheme() != "file" {
        return Ok(None);
    }
    let dir = url
        .to_file_path()
        .map_err(|_| StorageError::InvalidLocation {
            location: location.to_string(),
            message: "not a local path: give an absolute file:// URL or a directory".into(),
        })?;
    let root = dir
        .canonicalize()
        .map_err(|source| CliError::ServeTable { path: dir, source })?;
    Ok(Some(root))
}
