//! Where a table is and how to open it: what a shipped plan carries to another process
//! instead of an open connection.

use std::sync::Arc;

use deltalens_core::Table;
use deltalens_object_store::{ObjectStoreStorage, Vending, is_credential_option};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// A table's location (URL, local path or `uc://catalog.schema.table`) and store options
/// (`aws_endpoint`, `allow_http`, ...; credentials come from the environment or options).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Location {
    /// The location as given.
    pub url: String,
    /// Store options, as `deltalens --option` takes them.
    pub options: Vec<(String, String)>,
}

/// An opened table, and the credential vending that keeps a catalog table readable.
#[derive(Debug, Clone)]
pub struct Opened {
    /// The table.
    pub table: Table,
    /// Unity Catalog's vended credentials, refreshed while this lives.
    pub vending: Option<Arc<Vending>>,
}

impl Location {
    /// A location with no store options.
    pub fn new(url: impl Into<String>) -> Self {
        Location {
            url: url.into(),
            options: Vec::new(),
        }
    }

    /// Open the table's storage (nothing is read yet).
    pub async fn open(&self) -> Result<Opened> {
        let (store, vending) = ObjectStoreStorage::open_resolved(&self.url, &self.options)
            .await
            .map_err(|source| Error::Storage {
                location: self.url.clone(),
                source,
            })?;
        Ok(Opened {
            table: Table::new(Arc::new(store), self.url.clone()),
            vending,
        })
    }

    /// The location without credential options: what a plan may carry to another process
    /// (which reads with its own credentials, from its environment).
    pub fn without_credentials(&self) -> Location {
        Location {
            url: self.url.clone(),
            options: self
                .options
                .iter()
                .filter(|(k, _)| !is_credential_option(k))
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_stay_behind() {
        let l = Location {
            url: "s3://b/t".into(),
            options: vec![
                ("aws_endpoint".into(), "http://127.0.0.1:9000".into()),
                ("aws_secret_access_key".into(), "s".into()),
                ("aws_access_key_id".into(), "k".into()),
                ("azure_storage_sas_key".into(), "sig".into()),
            ],
        };
        assert_eq!(
            l.without_credentials().options,
            vec![(
                "aws_endpoint".to_string(),
                "http://127.0.0.1:9000".to_string()
            )]
        );
    }
}
