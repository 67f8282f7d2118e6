//! Where a table's bytes come from: a store URL or local path opened with object_store,
//! or a Unity Catalog name resolved to its storage location with vended credentials.

use std::sync::Arc;

use deltalens_object_store::ObjectStoreStorage;
use deltalens_storage::StorageError;

use crate::error::CliError;

/// An opened table location.
pub struct Source {
    store: Arc<ObjectStoreStorage>,
}

impl Source {
    /// Opens `location` (a URL or a local path) with the store `options`.
    pub async fn open(location: &str, options: &[(String, String)]) -> Result<Source, CliError> {
        let (store, _vending) = ObjectStoreStorage::open_resolved(location, options).await?;
        Ok(Source {
            store: Arc::new(store),
        })
    }

    /// The storage to read through now.
    pub async fn storage(&self) -> Result<Arc<ObjectStoreStorage>, StorageError> {
        Ok(Arc::clone(&self.store))
    }
}
