//! Where a table is and how to open it: what a shipped plan carries to another process
//! instead of an open connection.

use std::sync::Arc;

use deltalens_core::Table;
use deltalens_object_store::{ObjectStoreStorage, Vending, is_credential_option};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Whether a store option may travel in a plan: not a credential, and not one that
/// chooses where requests go or how (`aws_endpoint`, `azure_storage_endpoint`,
/// `google_base_url`, `uc_endpoint`, a proxy, `allow_http`, ...).
fn shippable(key: &str) -> bool {
    !is_credential_option(key) && !chooses_host(key)
}

/// Whether a store option chooses where requests go or how (see [`shippable`]).
pub(crate) fn chooses_host(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "endpoint",
        "url",
        "host",
        "proxy",
        "authority",
        "allow_http",
        "allow_invalid",
    ]
    .iter()
    .any(|w| k.contains(w))
}

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
    /// The shared table, when the location is one: its server says which version a
    /// timestamp reads (its log, with the commit times, is not shared).
    pub shared: Option<Arc<deltalens_object_store::SharedTable>>,
}

impl Location {
    /// A location with no store options.
    pub fn new(url: impl Into<String>) -> Self {
        Location {
            url: url.into(),
            options: Vec::new(),
        }
    }

    /// Open the table's storage (nothing is read yet). A shared table,
    /// `<profile file>#share.schema.table`, is asked of its sharing server.
    pub async fn open(&self) -> Result<Opened> {
        if let Some(shared) = deltalens_object_store::open_shared(&self.url).await {
            let shared = Arc::new(shared?);
            return Ok(Opened {
                table: Table::new(shared.clone(), self.url.clone()),
                vending: None,
                shared: Some(shared),
            });
        }
        let (store, vending) = ObjectStoreStorage::open_resolved(&self.url, &self.options)
            .await
            .map_err(|source| Error::Storage {
                location: self.url.clone(),
                source,
            })?;
        Ok(Opened {
            table: Table::new(Arc::new(store), self.url.clone()),
            vending,
            shared: None,
        })
    }

    /// The location as a plan may carry it to another process: without credentials and
    /// without options that choose a host or a transport (endpoints, URLs, proxies, plain
    /// HTTP). The receiving process reads with its own credentials and endpoints, from
    /// its environment.
    pub fn without_credentials(&self) -> Location {
        Location {
            url: self.url.clone(),
            options: self
                .options
                .iter()
                .filter(|(k, _)| shippable(k))
                .cloned()
                .collect(),
        }
    }

    /// Check a location decoded from a shipped plan: it may hold no credential and no
    /// option that chooses a host or transport, or a plan could send this process'
    /// credentials (from its environment) to a host of the plan's choosing.
    pub fn check_shipped(&self) -> Result<()> {
        match self.options.iter().find(|(k, _)| !shippable(k)) {
            Some((k, _)) => Err(Error::InvalidArgument(format!(
                "a shipped plan may not set the store option {k:?} (credentials, endpoints and transports come from the reading process' environment)"
            ))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn credentials_and_endpoints_stay_behind() {
        let l = Location {
            url: "s3://b/t".into(),
            options: vec![
                ("aws_endpoint".into(), "http://127.0.0.1:9000".into()),
                ("aws_secret_access_key".into(), "s".into()),
                ("aws_access_key_id".into(), "k".into()),
                ("azure_storage_sas_key".into(), "sig".into()),
                ("azure_storage_account_key".into(), "key".into()),
                ("aws_region".into(), "eu-west-1".into()),
                ("allow_http".into(), "true".into()),
                ("uc_endpoint".into(), "https://evil.example".into()),
                ("google_base_url".into(), "https://evil.example".into()),
            ],
        };
        let shipped = l.without_credentials();
        assert_eq!(
            shipped.options,
            vec![("aws_region".to_string(), "eu-west-1".to_string())]
        );
        assert!(shipped.check_shipped().is_ok());
        let e = l.check_shipped().unwrap_err().to_string();
        assert!(e.contains("aws_endpoint"), "{e}");
    }
}
