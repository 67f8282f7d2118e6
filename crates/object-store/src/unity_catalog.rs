//! `uc://catalog.schema.table`: the table's storage location from Unity Catalog, read
//! with credentials the catalog vends for it (never the user's own keys), refreshed
//! before they expire: object_store asks [`Vending`] for a credential before each
//! request, and it asks the catalog again once the one it holds is stale.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deltalens_catalog::{
    CatalogConfig, CatalogEntry, CatalogError, ListPage, MAX_ANSWER_BYTES, MAX_PAGES, Request,
    TableInfo, Vended, VendedKind,
};
use deltalens_storage::{StorageError, Store, TableUrl};
use object_store::CredentialProvider;
use object_store::aws::AwsCredential;
use object_store::azure::AzureCredential;
use object_store::gcp::GcpCredential;
use tokio::sync::Mutex;

/// How long a catalog request may take.
const CATALOG_TIMEOUT: Duration = Duration::from_secs(30);

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A Unity Catalog endpoint and the HTTP client that talks to it.
#[derive(Debug, Clone)]
pub struct Catalog {
    config: CatalogConfig,
    client: reqwest::Client,
}

impl Catalog {
    /// The catalog configured by `options` (`uc_endpoint`, `uc_token`) or the
    /// environment (`UC_ENDPOINT`/`UC_TOKEN`, `DATABRICKS_HOST`/`DATABRICKS_TOKEN`).
    pub fn from_env(options: &[(String, String)]) -> Result<Catalog, CatalogError> {
        let config = CatalogConfig::from_sources(options, |k| std::env::var(k).ok())?;
        let client = reqwest::Client::builder()
            .timeout(CATALOG_TIMEOUT)
            // the token must not follow a redirect to another host
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| CatalogError::Unreachable {
                endpoint: config.endpoint.clone(),
                what: "a client".into(),
                message: e.to_string(),
            })?;
        Ok(Catalog { config, client })
    }

    /// The catalog's endpoint as configured (for messages).
    pub fn endpoint(&self) -> &str {
        &self.config.endpoint
    }

    /// Whether the catalog runs on this machine (its endpoint's host is a loopback
    /// address or `localhost`): only such a catalog may name a local path (`file://`) as a
    /// table's location, as the open-source server does for its own tables; a remote
    /// catalog naming one would have deltalens read (and `serve` relay) this machine's
    /// files.
    pub fn is_on_this_machine(&self) -> bool {
        endpoint_is_loopback(&self.config.endpoint)
    }

    /// Sends `req`: the status and at most [`MAX_ANSWER_BYTES`] of the body.
    async fn send(&self, req: &Request) -> Result<(u16, Vec<u8>), CatalogError> {
        let unreachable = |e: reqwest::Error| CatalogError::Unreachable {
            endpoint: self.config.endpoint.clone(),
            what: req.what.clone(),
            message: e.to_string(),
        };
        let method =
            reqwest::Method::from_bytes(req.method.as_bytes()).unwrap_or(reqwest::Method::GET);
        let mut r = self.client.request(method, &req.url);
        for (k, v) in &req.headers {
            r = r.header(k, v);
        }
        if let Some(b) = &req.body {
            r = r.body(b.clone());
        }
        let mut resp = r.send().await.map_err(unreachable)?;
        let status = resp.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(CatalogError::InvalidResponse {
                    endpoint: self.config.endpoint.clone(),
                    what: req.what.clone(),
                    why: "longer than 4 MiB".into(),
                });
            }
            body.extend_from_slice(&chunk);
        }
        Ok((status, body))
    }

    /// Resolve `catalog.schema.table` to a Delta table with a storage location.
    pub async fn table(&self, full_name: &str) -> Result<TableInfo, CatalogError> {
        let req = self.config.get_table(full_name);
        let (status, body) = self.send(&req).await?;
        TableInfo::parse(&self.config, &req, full_name, status, &body)
    }

    /// Read credentials for `table`.
    pub async fn vend(&self, table: &TableInfo) -> Result<Vended, CatalogError> {
        let req = self
            .config
            .read_credentials(&table.table_id, &table.full_name);
        let (status, body) = self.send(&req).await?;
        Vended::parse(&self.config, &req, table, status, &body)
    }

    /// The catalogs (`[]`), schemas of a catalog or tables of a schema, every page (at
    /// most [`MAX_PAGES`]).
    pub async fn list(&self, parent: &[String]) -> Result<Vec<CatalogEntry>, CatalogError> {
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let req = self.config.list(parent, token.as_deref());
            let (status, body) = self.send(&req).await?;
            let page = ListPage::parse(&self.config, &req, parent, status, &body)?;
            out.extend(page.entries);
            match page.next_page_token {
                Some(t) if Some(&t) != token.as_ref() => token = Some(t),
                _ => return Ok(out),
            }
        }
        Ok(out)
    }
}

/// A table's vended credentials: the current ones and when they were vended.
#[derive(Debug)]
pub struct Vending {
    catalog: Catalog,
    table: TableInfo,
    current: Mutex<(Vended, i64)>,
    /// How many times credentials were vended (for tests and `--io-stats`).
    vends: std::sync::atomic::AtomicU64,
}

impl Vending {
    /// Vends the first credentials for `table`.
    pub async fn start(catalog: Catalog, table: TableInfo) -> Result<Vending, CatalogError> {
        let first = catalog.vend(&table).await?;
        Ok(Vending {
            catalog,
            table,
            current: Mutex::new((first, now_ms())),
            vends: std::sync::atomic::AtomicU64::new(1),
        })
    }

    /// The credentials to use now, vended again when stale.
    pub async fn current(&self) -> Result<Vended, CatalogError> {
        let mut cur = self.current.lock().await;
        if cur.0.stale(cur.1, now_ms()) {
            let fresh = self.catalog.vend(&self.table).await?;
            self.vends
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            *cur = (fresh, now_ms());
        }
        Ok(cur.0.clone())
    }

    /// How many times credentials were vended.
    pub fn vends(&self) -> u64 {
        self.vends.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn store_error(&self, e: CatalogError) -> object_store::Error {
        object_store::Error::Unauthenticated {
            path: self.table.storage_location.clone(),
            source: Box::new(e),
        }
    }
}

/// The vended credential as object_store's AWS credential.
#[derive(Debug)]
pub(crate) struct AwsVending(pub(crate) Arc<Vending>);
/// The vended credential as object_store's Azure credential.
#[derive(Debug)]
pub(crate) struct AzureVending(pub(crate) Arc<Vending>);
/// The vended credential as object_store's GCS credential.
#[derive(Debug)]
pub(crate) struct GcpVending(pub(crate) Arc<Vending>);

fn wrong_kind(v: &Vending) -> object_store::Error {
    v.store_error(CatalogError::NoCredential {
        name: v.table.full_name.clone(),
        why: "the catalog vended a credential for another kind of store than the table's location"
            .into(),
    })
}

#[async_trait::async_trait]
impl CredentialProvider for AwsVending {
    type Credential = AwsCredential;
    async fn get_credential(&self) -> object_store::Result<Arc<AwsCredential>> {
        let v = self.0.current().await.map_err(|e| self.0.store_error(e))?;
        match v.kind {
            VendedKind::Aws {
                access_key_id,
                secret_access_key,
                session_token,
            } => Ok(Arc::new(AwsCredential {
                key_id: access_key_id,
                secret_key: secret_access_key,
                token: session_token,
            })),
            _ => Err(wrong_kind(&self.0)),
        }
    }
}

#[async_trait::async_trait]
impl CredentialProvider for AzureVending {
    type Credential = AzureCredential;
    async fn get_credential(&self) -> object_store::Result<Arc<AzureCredential>> {
        let v = self.0.current().await.map_err(|e| self.0.store_error(e))?;
        match v.kind {
            VendedKind::AzureSas(sas) => {
                let pairs = url::form_urlencoded::parse(sas.as_bytes())
                    .map(|(k, v)| (k.into_owned(), v.into_owned()))
                    .collect();
                Ok(Arc::new(AzureCredential::SASToken(pairs)))
            }
            _ => Err(wrong_kind(&self.0)),
        }
    }
}

#[async_trait::async_trait]
impl CredentialProvider for GcpVending {
    type Credential = GcpCredential;
    async fn get_credential(&self) -> object_store::Result<Arc<GcpCredential>> {
        let v = self.0.current().await.map_err(|e| self.0.store_error(e))?;
        match v.kind {
            VendedKind::GcpToken(bearer) => Ok(Arc::new(GcpCredential { bearer })),
            _ => Err(wrong_kind(&self.0)),
        }
    }
}

/// The parts of a `uc://` URL, or `None` for any other location.
pub fn catalog_name(location: &str) -> Option<Vec<String>> {
    match TableUrl::parse(location).ok()?.store {
        Store::UnityCatalog { name } => Some(name),
        _ => None,
    }
}

/// A catalog failure as a storage error (the table cannot be opened): a refusal stays a
/// refusal (HTTP 403 from a relay), anything else is a location that cannot be opened.
pub fn catalog_error(location: &str, e: CatalogError) -> StorageError {
    match e {
        CatalogError::PermissionDenied { .. } | CatalogError::Unauthenticated { .. } => {
            StorageError::PermissionDenied {
                path: location.to_string(),
                operation: "open",
                message: e.to_string(),
            }
        }
        _ => StorageError::InvalidLocation {
            location: location.to_string(),
            message: e.to_string(),
        },
    }
}

/// Whether a store option is a credential (the user's own, never used for a table whose
/// credentials the catalog vends).
pub fn is_credential_option(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    [
        "access_key",
        "secret",
        "session_token",
        "sas",
        "token",
        "password",
        "bearer",
        "client_id",
        "service_account",
        "application_credentials",
        "profile",
        // Azure's shared key (`azure_storage_account_key`, `account_key`, `master_key`)
        "account_key",
        "master_key",
    ]
    .iter()
    .any(|c| k.contains(c))
}

/// Whether `endpoint`'s host is a loopback address or `localhost`.
fn endpoint_is_loopback(endpoint: &str) -> bool {
    match url::Url::parse(endpoint)
        .ok()
        .and_then(|u| u.host().map(|h| h.to_owned()))
    {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod loopback_tests {
    use super::endpoint_is_loopback;

    #[test]
    fn only_a_catalog_on_this_machine_is_local() {
        for local in [
            "http://127.0.0.1:8080",
            "http://localhost:8080/api",
            "http://[::1]:1",
            "http://127.1.2.3",
        ] {
            assert!(endpoint_is_loopback(local), "{local}");
        }
        for remote in [
            "https://dbc-1.cloud.databricks.com",
            "http://10.0.0.1:8080",
            "http://localhost.evil.example",
            "http://127.0.0.1.nip.io",
            "not a url",
            "file:///tmp",
        ] {
            assert!(!endpoint_is_loopback(remote), "{remote}");
        }
    }
}
