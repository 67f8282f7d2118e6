//! deltalens storage over the `object_store` crate: local files and plain paths,
//! `s3://` (custom endpoints and `AWS_*` variables), `az://`, `azure://`,
//! `abfss://container@account.dfs.core.windows.net/path` and Azure `https://` URLs
//! (`AZURE_STORAGE_*`), `gs://` (`GOOGLE_*`) and `https://` / `http://`.
//!
//! No store follows a redirect: a `3xx` answer is an error naming where it pointed. Plain
//! `http://` (a table URL or an endpoint option) is read without options on loopback hosts
//! only; elsewhere it needs `allow_http=true`.

#![warn(missing_docs, unreachable_pub)]

mod aws_profile;
mod local;
pub use local::{Refused as LocalRefused, file_inside, same_file};
mod no_redirects;
mod relaying;
mod sharing;
mod unity_catalog;

use std::sync::Arc;

use bytes::Bytes;
use deltalens_storage::{ByteRange, ObjectMeta, Storage, StorageError};
use futures::TryStreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig};
use std::time::Duration;
use url::Url;

pub use deltalens_sharing::SharingError;
pub use relaying::{ObjectRead, ReadError};
pub use sharing::{
    MAX_LISTED_VERSIONS, MAX_QUERY_BYTES, MAX_SHARED_DV_BYTES, Share, SharedTable, open_shared,
};
pub use unity_catalog::{Catalog, Vending, catalog_error, catalog_name, is_credential_option};

/// A table location opened with `object_store`.
#[derive(Debug, Clone)]
pub struct ObjectStoreStorage {
    store: Arc<dyn ObjectStore>,
    /// The table root inside the store (empty for a store rooted at the table).
    prefix: String,
    /// What the store can do.
    kind: Kind,
}

/// The store behind a location, for what its protocol lacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// S3, GCS: listing (in key order) and suffix ranges.
    Full,
    /// Local files: listing (in no particular order) and suffix ranges, only inside the
    /// table's directory after resolving links.
    Local,
    /// Azure Blob Storage has no suffix ranges: a tail is read as a bounded range after a
    /// HEAD.
    NoSuffixRanges,
    /// Plain HTTP(S): no listing (object_store would try WebDAV PROPFIND, which hosting
    /// answers 405; the core finds files by name instead).
    NoListing,
}

/// Environment variables passed to the store builders as configuration.
const ENV_PREFIXES: &[&str] = &["AWS_", "AZURE_", "GOOGLE_", "OBJECT_STORE_"];

fn env_options() -> Vec<(String, String)> {
    std::env::vars()
        .filter(|(k, _)| ENV_PREFIXES.iter().any(|p| k.starts_with(p)))
        .map(|(k, v)| {
            let k = k.to_ascii_lowercase();
            let k = k
                .strip_prefix("object_store_")
                .map(str::to_string)
                .unwrap_or(k);
            (k, v)
        })
        .collect()
}

fn invalid(location: &str, message: impl ToString) -> StorageError {
    StorageError::InvalidLocation {
        location: location.to_string(),
        message: message.to_string(),
    }
}

/// Turn `location` (a URL or a local path) into a URL.
pub fn location_to_url(location: &str) -> Result<Url, StorageError> {
    let trimmed = location.trim_end_matches('/');
    let has_scheme = trimmed.split_once("://").is_some_and(|(s, _)| {
        !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '+')
    });
    if has_scheme {
        // the checks every backend shares (no query, user info, `..`, odd account or
        // bucket names), then object_store's own parsing of the same text
        deltalens_storage::TableUrl::parse(trimmed).map_err(|e| invalid(location, e.message))?;
        return Url::parse(trimmed).map_err(|e| invalid(location, e));
    }
    let path = std::path::Path::new(trimmed);
    let abs = std::path::absolute(path).map_err(|e| invalid(location, e))?;
    if !abs.is_dir() {
        return Err(invalid(
            location,
            "no such directory; give a local table directory or a URL (s3://, az://, abfss://, gs://, https://)",
        ));
    }
    Url::from_directory_path(&abs).map_err(|_| invalid(location, "not an absolute path"))
}

/// The error for a catalog or schema name where a table was expected: what it holds.
async fn not_a_table(location: &str, name: &[String], catalog: &Catalog) -> StorageError {
    let what = if name.len() == 1 {
        "a catalog"
    } else {
        "a schema"
    };
    let children = match catalog.list(name).await {
        Ok(c) if c.is_empty() => "it holds nothing you may see".to_string(),
        Ok(c) => {
            let shown: Vec<String> = c
                .iter()
                .take(20)
                .map(|e| format!("uc://{}", e.full_name))
                .collect();
            let more = c.len().saturating_sub(shown.len());
            let tail = if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            };
            format!("it holds {}{tail}", shown.join(", "))
        }
        Err(e) => return catalog_error(location, e),
    };
    invalid(location, format!("this is {what}, not a table: {children}"))
}

/// How long a request may wait for its connection, and for the next bytes of an answer,
/// unless the options say otherwise: a stalled store becomes an error naming the
/// timeout instead of a hang (a large download is not limited, only silence).
const CONNECT_TIMEOUT: &str = "5s";
const READ_TIMEOUT: &str = "10s";

/// Retries of transient failures (object_store retries 5xx, 429 and network errors, not
/// other answers): at most 3, and none started after 25 s — so a stalled store fails a
/// request within about 35 s.
fn retry_config() -> RetryConfig {
    RetryConfig {
        max_retries: 3,
        retry_timeout: Duration::from_secs(25),
        ..RetryConfig::default()
    }
}

/// `opts` with the default timeouts where they do not set them.
fn bounded(mut opts: Vec<(String, String)>) -> Vec<(String, String)> {
    for (key, value) in [
        ("connect_timeout", CONNECT_TIMEOUT),
        ("read_timeout", READ_TIMEOUT),
    ] {
        if !opts.iter().any(|(k, _)| k.eq_ignore_ascii_case(key)) {
            opts.insert(0, (key.to_string(), value.to_string()));
        }
    }
    opts
}

/// Azure options that are (or choose) a credential: with none of them, the Azure CLI's
/// login is used when `az` is installed.
const AZURE_CREDENTIALS: &[&str] = &[
    "sas",
    "account_key",
    "access_key",
    "client_secret",
    "client_id",
    "token",
    "skip_signature",
    "emulator",
    "msi",
    "federated",
    "use_azure_cli",
    "use_fabric",
];

/// Whether an executable named `name` is on `PATH`.
fn on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths)
            .any(|dir| std::fs::metadata(dir.join(name)).is_ok_and(|m| m.is_file()))
    })
}

/// The options naming a server a store sends its requests to, by scheme (not the
/// credential endpoints, such as the instance metadata service, which object_store reads
/// over plain HTTP itself).
fn endpoint_keys(scheme: object_store::ObjectStoreScheme) -> &'static [&'static str] {
    use object_store::ObjectStoreScheme as S;
    match scheme {
        S::AmazonS3 => &[
            "aws_endpoint_url",
            "aws_endpoint",
            "endpoint_url",
            "endpoint",
            "aws_endpoint_url_s3",
            "aws_endpoint_url_sts",
            "endpoint_url_sts",
        ],
        S::MicrosoftAzure => &["azure_storage_endpoint", "azure_endpoint", "endpoint"],
        S::GoogleCloudStorage => &["google_base_url", "base_url"],
        _ => &[],
    }
}

/// Whether `url`'s host is a loopback one: `127.0.0.0/8`, `::1` or `localhost`.
fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// Plain `http://` (the table's URL, or the endpoint a store's options name) is read
/// without options only on a loopback host: `allow_http` is set for it, unless the
/// options set it. Anywhere else, without `allow_http`, it is refused before any request
/// (object_store would fail each request with "builder error").
fn plain_http(
    url: &Url,
    scheme: object_store::ObjectStoreScheme,
    opts: &mut Vec<(String, String)>,
) -> Result<(), String> {
    let keys = endpoint_keys(scheme);
    // each plain-HTTP server the store would talk to, and what named it
    let mut plain: Vec<(Url, String)> = opts
        .iter()
        .filter(|(k, _)| keys.contains(&k.to_ascii_lowercase().as_str()))
        .filter_map(|(k, v)| Some((Url::parse(v.trim()).ok()?, format!("the option {k}"))))
        .collect();
    plain.push((url.clone(), "the table URL".into()));
    plain.retain(|(u, _)| u.scheme() == "http");
    let set = opts
        .iter()
        .any(|(k, _)| k.to_ascii_lowercase().ends_with("allow_http"));
    if plain.is_empty() || set {
        return Ok(());
    }
    if let Some((far, named)) = plain.iter().find(|(u, _)| !is_loopback(u)) {
        return Err(format!(
            "{named} is plain http:// to {}, which is refused: only loopback hosts (127.0.0.0/8, ::1, localhost) are read unencrypted by default; use https://, or give -o allow_http=true to read it over plain HTTP",
            far.host_str().unwrap_or("its host")
        ));
    }
    opts.push(("allow_http".into(), "true".into()));
    Ok(())
}

/// Build the store for `url` from `opts` (what `object_store::parse_url_opts` does, with
/// our retry policy, which that function cannot set, and our HTTP client, which follows
/// no redirect). Errors name `location`.
fn build(
    location: &str,
    url: &Url,
    opts: Vec<(String, String)>,
    vended: Option<Arc<Vending>>,
) -> Result<(Arc<dyn ObjectStore>, Path, Kind), StorageError> {
    let (scheme, _) =
        object_store::ObjectStoreScheme::parse(url).map_err(|e| invalid(location, e))?;
    let mut opts = opts;
    plain_http(url, scheme, &mut opts).map_err(|e| invalid(location, e))?;
    build_store(url, opts, vended).map_err(|e| invalid(location, e))
}

fn build_store(
    url: &Url,
    mut opts: Vec<(String, String)>,
    vended: Option<Arc<Vending>>,
) -> Result<(Arc<dyn ObjectStore>, Path, Kind), object_store::Error> {
    use object_store::ObjectStoreScheme as S;
    use unity_catalog::{AwsVending, AzureVending, GcpVending};
    macro_rules! with_opts {
        ($builder:expr) => {
            opts.iter()
                .fold($builder, |b, (k, v)| match k.to_ascii_lowercase().parse() {
                    Ok(key) => b.with_config(key, v.clone()),
                    Err(_) => b,
                })
                .with_retry(retry_config())
                .with_http_connector(no_redirects::NoRedirects)
                .build()
        };
    }
    let (scheme, path) = S::parse(url)?;
    let has = |words: &[&str]| {
        opts.iter()
            .any(|(k, _)| words.iter().any(|w| k.to_ascii_lowercase().contains(w)))
    };
    // the user's own credential sources object_store does not read itself: the AWS
    // shared files' profile, the Azure CLI's login (never for vended credentials)
    let mut process = None;
    let (aws_keys, azure_credential) = (
        has(&["access_key_id", "skip_signature"]),
        has(AZURE_CREDENTIALS),
    );
    if vended.is_none()
        && scheme == S::AmazonS3
        && !aws_keys
        && let Some(profile) = aws_profile::load(&|k| std::env::var(k).ok())
    {
        let mut with = profile.options;
        with.extend(opts);
        opts = with;
        process = profile.process;
    }
    if vended.is_none() && scheme == S::MicrosoftAzure && !azure_credential && on_path("az") {
        opts.push(("azure_use_azure_cli".into(), "true".into()));
    }
    let kind = match scheme {
        S::MicrosoftAzure => Kind::NoSuffixRanges,
        S::Http => Kind::NoListing,
        _ => Kind::Full,
    };
    let store: Arc<dyn ObjectStore> = match scheme {
        S::AmazonS3 => {
            let mut b = object_store::aws::AmazonS3Builder::new().with_url(url.as_str());
            if let Some(v) = vended {
                b = b.with_credentials(Arc::new(AwsVending(v)));
            } else if let Some(command) = process {
                b = b.with_credentials(Arc::new(aws_profile::ProcessCredentials::new(command)));
            }
            Arc::new(with_opts!(b)?)
        }
        S::MicrosoftAzure => {
            let mut b = object_store::azure::MicrosoftAzureBuilder::new().with_url(url.as_str());
            if let Some(v) = vended {
                b = b.with_credentials(Arc::new(AzureVending(v)));
            }
            Arc::new(with_opts!(b)?)
        }
        S::GoogleCloudStorage => {
            let mut b = object_store::gcp::GoogleCloudStorageBuilder::new().with_url(url.as_str());
            if let Some(v) = vended {
                b = b.with_credentials(Arc::new(GcpVending(v)));
            }
            Arc::new(with_opts!(b)?)
        }
        S::Http => Arc::new(with_opts!(
            object_store::http::HttpBuilder::new().with_url(&url[..url::Position::BeforePath])
        )?),
        _ => {
            return Err(object_store::Error::NotSupported {
                source: format!("{} URLs", url.scheme()).into(),
            });
        }
    };
    Ok((store, path, kind))
}

impl ObjectStoreStorage {
    /// Open the table at `location` (URL or local path). Store configuration comes from
    /// the environment (`AWS_*`, `AZURE_*`, `GOOGLE_*`) and then `options`
    /// (builder keys such as `aws_endpoint`, `azure_storage_sas_key`, `allow_http`).
    pub fn open(location: &str, options: &[(String, String)]) -> Result<Self, StorageError> {
        let url = location_to_url(location)?;
        let mut opts = env_options();
        opts.extend(options.iter().cloned());
        if url.scheme() == "file" {
            let dir = url
                .to_file_path()
                .map_err(|_| invalid(location, "not a local path"))?;
            // read only inside the table's directory, links resolved (see `local`)
            let store = local::LocalTable::new(&dir).map_err(|e| invalid(location, e))?;
            return Ok(Self {
                store: Arc::new(store),
                prefix: String::new(),
                kind: Kind::Local,
            });
        }
        let (store, prefix, kind) = build(location, &url, bounded(opts), None)?;
        Ok(Self {
            store,
            prefix: prefix.as_ref().trim_matches('/').to_string(),
            kind,
        })
    }

    /// Like [`ObjectStoreStorage::open`], and `uc://catalog.schema.table` too: the table's
    /// storage location from Unity Catalog, read with the credentials it vends (refreshed
    /// before they expire; the user's own store credentials are not used). Returns the
    /// vending too, for a Unity Catalog table.
    pub async fn open_resolved(
        location: &str,
        options: &[(String, String)],
    ) -> Result<(Self, Option<Arc<Vending>>), StorageError> {
        let Some(name) = catalog_name(location) else {
            return Ok((Self::open(location, options)?, None));
        };
        let err = |e| catalog_error(location, e);
        let catalog = Catalog::from_env(options).map_err(err)?;
        if name.len() < 3 {
            return Err(not_a_table(location, &name, &catalog).await);
        }
        let table = catalog.table(&name.join(".")).await.map_err(err)?;
        let url = location_to_url(&table.storage_location)?;
        if url.scheme() == "file" && !catalog.is_on_this_machine() {
            return Err(invalid(
                location,
                format!(
                    "the catalog at {} names a local path ({}) as the table's location; deltalens reads a local path only from a catalog on this machine (localhost or a loopback address)",
                    catalog.endpoint(),
                    table.storage_location
                ),
            ));
        }
        let vending = Arc::new(Vending::start(catalog, table.clone()).await.map_err(err)?);
        if url.scheme() == "file" {
            return Ok((Self::open(&table.storage_location, &[])?, Some(vending)));
        }
        let mut opts: Vec<(String, String)> = env_options();
        opts.extend(options.iter().cloned());
        opts.retain(|(k, _)| !unity_catalog::is_credential_option(k));
        if let Some(endpoint) = &table.s3_endpoint {
            // an R2 location: its account's S3 endpoint, region auto
            opts.retain(|(k, _)| !k.contains("endpoint") && !k.contains("region"));
            opts.push(("aws_endpoint".into(), endpoint.clone()));
            opts.push(("aws_region".into(), "auto".into()));
        }
        let (store, prefix, kind) = build(
            &table.storage_location,
            &url,
            bounded(opts),
            Some(Arc::clone(&vending)),
        )?;
        let storage = Self {
            store,
            prefix: prefix.as_ref().trim_matches('/').to_string(),
            kind,
        };
        Ok((storage, Some(vending)))
    }

    /// Wrap an existing store whose table root is `prefix`.
    pub fn new(store: Arc<dyn ObjectStore>, prefix: &str) -> Self {
        Self {
            store,
            prefix: prefix.trim_matches('/').to_string(),
            kind: Kind::Full,
        }
    }

    /// The store's path of `rel` (a path from the table root). A path sent to a server
    /// may not hold a `;`, also as `%3B` ([`PATH_PARAMETER`]); a local table's may.
    fn full(&self, rel: &str) -> Result<Path, StorageError> {
        if self.kind != Kind::Local && has_path_parameter(rel) {
            return Err(StorageError::InvalidLocation {
                location: rel.to_string(),
                message: PATH_PARAMETER.to_string(),
            });
        }
        let joined = if self.prefix.is_empty() {
            rel.trim_matches('/').to_string()
        } else {
            format!("{}/{}", self.prefix, rel.trim_matches('/'))
        };
        Ok(Path::parse(&joined).unwrap_or_else(|_| Path::from(joined.as_str())))
    }

    fn relative(&self, p: &Path) -> String {
        let s = p.as_ref();
        if self.prefix.is_empty() {
            s.to_string()
        } else {
            s.strip_prefix(self.prefix.as_str())
                .map(|r| r.trim_start_matches('/').to_string())
                .unwrap_or_else(|| s.to_string())
        }
    }

    fn meta(&self, m: object_store::ObjectMeta) -> ObjectMeta {
        ObjectMeta {
            path: self.relative(&m.location),
            size: m.size,
            last_modified_ms: Some(m.last_modified.timestamp_millis()),
        }
    }
}

/// Why a path holding a `;` is not sent to a server (as `deltalens_storage::TableUrl`
/// refuses one in a table URL).
const PATH_PARAMETER: &str = "a segment of the path is '.', '..' or empty before a ';' (also as '%3B' or '%2e'): servers such as Tomcat read what follows a ';' as a path parameter and drop it, so '..;' climbs out of the table; such paths are not sent to a server (a table whose files' names hold one can be read from a local copy)";

/// Whether a segment of `path` (percent-encoded or not) is a dot segment or empty once a
/// `;` path parameter is dropped (`..;`, `.;x`, `;x`, `%2e%2e%3b`). Other `;` stay: a
/// partition value may hold one (Spark does not escape it), and dropping the parameter
/// of such a segment names another path inside the table, not outside it.
fn has_path_parameter(path: &str) -> bool {
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    [path, decoded.as_ref()].iter().any(|p| {
        p.split('/').any(|seg| match seg.split_once(';') {
            Some((head, _)) => matches!(head, "" | "." | ".."),
            None => false,
        })
    })
}

fn map_err(path: &str, operation: &'static str, e: object_store::Error) -> StorageError {
    if let Some((status, message)) = no_redirects::redirect_in(&e) {
        return StorageError::Http {
            path: path.to_string(),
            operation,
            status,
            message,
        };
    }
    match e {
        object_store::Error::NotImplemented { .. } if operation == "list" => {
            StorageError::ListingUnsupported {
                path: path.to_string(),
                message: e.to_string(),
            }
        }
        object_store::Error::Generic { ref source, .. }
            if operation == "list"
                && ["405", "501", "Method Not Allowed", "PROPFIND"]
                    .iter()
                    .any(|m| source.to_string().contains(m)) =>
        {
            StorageError::ListingUnsupported {
                path: path.to_string(),
                message: e.to_string(),
            }
        }
        // a key allowed to read objects but not to list them (S3 and Azure report the
        // 403 of a listing as a generic error): the core then finds files by name
        object_store::Error::Generic { ref source, .. }
            if operation == "list"
                && [
                    "403 Forbidden",
                    "AccessDenied",
                    "AuthorizationPermissionMismatch",
                ]
                .iter()
                .any(|m| source.to_string().contains(m)) =>
        {
            StorageError::PermissionDenied {
                path: path.to_string(),
                operation,
                message: e.to_string(),
            }
        }
        object_store::Error::NotFound { .. } => StorageError::NotFound {
            path: path.to_string(),
        },
        object_store::Error::PermissionDenied { source, .. }
        | object_store::Error::Unauthenticated { source, .. } => StorageError::PermissionDenied {
            path: path.to_string(),
            operation,
            message: source.to_string(),
        },
        other => StorageError::Backend {
            path: path.to_string(),
            operation,
            message: other.to_string(),
        },
    }
}

/// Attempts after the first of a request whose answer the network cut off: object_store
/// retries a request that fails before its answer, and a body cut off only when the object
/// has an ETag — not a listing's body, nor a plain HTTP server's object without one.
const CUT_OFF_RETRIES: u32 = 2;

/// Whether the network cut `e`'s answer off (a connection reset, closed or ended early) —
/// not a time-out (a stalled store is waited out once), an undecodable answer, or an
/// answer such as 404.
fn is_cut_off(e: &object_store::Error) -> bool {
    use object_store::client::{HttpError, HttpErrorKind};
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(h) = s.downcast_ref::<HttpError>() {
            return matches!(
                h.kind(),
                HttpErrorKind::Connect
                    | HttpErrorKind::Request
                    | HttpErrorKind::Interrupted
                    | HttpErrorKind::Unknown
            );
        }
        source = s.source();
    }
    false
}

/// `op`, again after 200 ms then 400 ms while its answer is cut off ([`is_cut_off`]).
async fn again<T, F, Fut>(op: F) -> object_store::Result<T>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = object_store::Result<T>>,
{
    let mut attempt = 0;
    loop {
        match op().await {
            Err(e) if attempt < CUT_OFF_RETRIES && is_cut_off(&e) => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(100 << attempt)).await;
            }
            other => return other,
        }
    }
}

impl ObjectStoreStorage {
    /// One ranged GET, read whole, and the object's size.
    async fn get_ranged(&self, path: &str, range: GetRange) -> Result<(Bytes, u64), StorageError> {
        let full = self.full(path)?;
        again(|| async {
            let opts = GetOptions {
                range: Some(range.clone()),
                ..Default::default()
            };
            let res = self.store.get_opts(&full, opts).await?;
            let size = res.meta.size;
            Ok((res.bytes().await?, size))
        })
        .await
        .map_err(|e| map_err(path, "get", e))
    }

    /// `range` of `path` and the object's size. A server that ignores `Range` (answers
    /// 200 with the whole object, as simple static servers do) is still read correctly:
    /// the whole object is fetched once and sliced.
    async fn read_range(
        &self,
        path: &str,
        range: &ByteRange,
    ) -> Result<(Bytes, u64), StorageError> {
        let r = match range {
            ByteRange::Bounded(r) if r.is_empty() => return Ok((Bytes::new(), 0)),
            ByteRange::Bounded(r) => GetRange::Bounded(r.clone()),
            ByteRange::From(o) => GetRange::Offset(*o),
            ByteRange::Suffix(n) => GetRange::Suffix(*n),
        };
        match self.get_ranged(path, r).await {
            Err(e) if ignores_ranges(&e) => {
                let whole = self.get(path).await?;
                let size = whole.len() as u64;
                Ok((range.slice(path, &whole)?, size))
            }
            other => other,
        }
    }
}

/// Whether object_store refused an answer because the server ignored `Range`.
fn ignores_ranges(e: &StorageError) -> bool {
    matches!(e, StorageError::Backend { message, .. }
        if message.contains("Range request not supported")
            || message.contains("non-partial response"))
}

#[async_trait::async_trait]
impl Storage for ObjectStoreStorage {
    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> Result<Vec<ObjectMeta>, StorageError> {
        let dir = self.full(prefix.trim_end_matches('/'))?;
        let after = start_after.map(|a| self.full(a)).transpose()?;
        let found: Vec<object_store::ObjectMeta> = again(|| {
            let stream = match &after {
                Some(after) => self.store.list_with_offset(Some(&dir), after),
                None => self.store.list(Some(&dir)),
            };
            stream.try_collect()
        })
        .await
        .map_err(|e| map_err(prefix, "list", e))?;
        let mut out: Vec<ObjectMeta> = found
            .into_iter()
            .map(|m| self.meta(m))
            .filter(|m| {
                m.path.starts_with(prefix) && start_after.is_none_or(|a| m.path.as_str() > a)
            })
            .collect();
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes, StorageError> {
        if let (ByteRange::Suffix(n), Kind::NoSuffixRanges) = (&range, self.kind) {
            return Ok(self.get_tail(path, *n).await?.0);
        }
        Ok(self.read_range(path, &range).await?.0)
    }

    async fn get(&self, path: &str) -> Result<Bytes, StorageError> {
        let full = self.full(path)?;
        again(|| async { self.store.get(&full).await?.bytes().await })
            .await
            .map_err(|e| map_err(path, "get", e))
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta, StorageError> {
        let full = self.full(path)?;
        let m = again(|| self.store.head(&full))
            .await
            .map_err(|e| map_err(path, "head", e))?;
        Ok(self.meta(m))
    }

    /// One ranged GET: the response carries the object's size.
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64), StorageError> {
        if self.kind == Kind::NoSuffixRanges {
            let size = self.head(path).await?.size;
            let start = size.saturating_sub(n);
            let data = self
                .get_range(path, ByteRange::Bounded(start..size))
                .await?;
            return Ok((data, size));
        }
        self.read_range(path, &ByteRange::Suffix(n)).await
    }

    fn can_list(&self) -> bool {
        self.kind != Kind::NoListing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_and_paths() {
        assert_eq!(location_to_url("s3://b/t/").unwrap().as_str(), "s3://b/t");
        assert!(location_to_url("/definitely/not/here").is_err());
        let tmp = std::env::temp_dir();
        assert_eq!(
            location_to_url(tmp.to_str().unwrap()).unwrap().scheme(),
            "file"
        );
    }

    #[test]
    fn hostile_locations_are_refused() {
        for loc in [
            "https://evil.example?.blob.core.windows.net/c/t",
            "https://user@acct.blob.core.windows.net/cont/t",
            "s3://bucket/a/../b",
            "s3://bucket/t#x",
        ] {
            assert!(location_to_url(loc).is_err(), "{loc}");
        }
    }

    #[test]
    fn remote_locations_parse() {
        for loc in [
            "s3://bucket/path/table",
            "az://container/path",
            "azure://container/path",
            "abfss://container@account.dfs.core.windows.net/path/table",
            "https://account.blob.core.windows.net/container/path",
            "gs://bucket/table",
            "https://example.com/tables/t",
        ] {
            let s = ObjectStoreStorage::open(
                loc,
                &[
                    ("aws_region".into(), "us-east-1".into()),
                    ("azure_storage_account_name".into(), "account".into()),
                    ("azure_skip_signature".into(), "true".into()),
                    ("aws_skip_signature".into(), "true".into()),
                    ("google_skip_signature".into(), "true".into()),
                ],
            );
            let s = s.unwrap_or_else(|e| panic!("{loc}: {e}"));
            assert!(
                s.full("_delta_log/x")
                    .unwrap()
                    .as_ref()
                    .ends_with("_delta_log/x"),
                "{loc}"
            );
        }
        let s = ObjectStoreStorage::open(
            "abfss://container@account.dfs.core.windows.net/path/table",
            &[("azure_skip_signature".into(), "true".into())],
        )
        .unwrap();
        assert_eq!(s.prefix, "path/table");
    }

    #[tokio::test]
    async fn local_files_list_sorted_and_ranged() {
        let dir = std::env::temp_dir().join(format!("deltalens-os-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("_delta_log")).unwrap();
        for n in [
            "00000000000000000001.json",
            "00000000000000000000.json",
            "_last_checkpoint",
        ] {
            std::fs::write(dir.join("_delta_log").join(n), "0123456789").unwrap();
        }
        let s = ObjectStoreStorage::open(dir.to_str().unwrap(), &[]).unwrap();
        let l = s.list("_delta_log/", None).await.unwrap();
        let names: Vec<_> = l.iter().map(|m| m.path.as_str()).collect();
        assert_eq!(
            names,
            [
                "_delta_log/00000000000000000000.json",
                "_delta_log/00000000000000000001.json",
                "_delta_log/_last_checkpoint"
            ]
        );
        let l = s
            .list("_delta_log/", Some("_delta_log/00000000000000000000"))
            .await
            .unwrap();
        assert_eq!(l.len(), 3);
        let l = s
            .list("_delta_log/", Some("_delta_log/00000000000000000000.json"))
            .await
            .unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!(
            s.get_range("_delta_log/_last_checkpoint", ByteRange::Suffix(3))
                .await
                .unwrap(),
            "789"
        );
        assert_eq!(
            s.get_range("_delta_log/_last_checkpoint", ByteRange::Bounded(2..4))
                .await
                .unwrap(),
            "23"
        );
        assert_eq!(
            s.head("_delta_log/_last_checkpoint").await.unwrap().size,
            10
        );
        assert!(s.get("_delta_log/nope").await.unwrap_err().is_not_found());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
