//! The relay of `deltalens serve`: the tables given as URLs (`s3://`, `abfss://`, `az://`,
//! `gs://`, `https://`, `uc://`) are read here with the user's own credential sources and
//! passed to the explorer over the relay protocol ([`deltalens_storage::relay`]), so the
//! tab reads a private bucket with no CORS rule on it and no secret in the page.
//!
//! Only the tables given on the command line are relayed, and within them only paths
//! under the table root (the protocol's checks); nothing is ever written.

use std::io;
use std::path::Path;
use std::sync::Arc;

use deltalens_api::{Failure, catalog_failure, error_document, storage_failure};
use deltalens_catalog::EntryKind;
use deltalens_object_store::{Catalog, catalog_error, catalog_name};
use tokio::sync::Mutex;

use deltalens_object_store::{ObjectRead, ReadError};
use deltalens_storage::relay::{self, ListPage, RelayRequest};
use deltalens_storage::{ObjectMeta, StorageError, TableUrl, http_range};
use futures::StreamExt;
use tokio::net::TcpStream;

use super::files::{self, Refused};
use super::http::{self, Answer, Request};
use crate::error::CliError;
use crate::source::Source;

/// A table this server relays.
struct Relayed {
    /// The URL as given on the command line.
    given: String,
    /// Its canonical spelling, to match requests that spell it differently.
    canonical: String,
    source: Source,
}

/// The relayed tables.
pub struct Relay {
    tables: Vec<Arc<Relayed>>,
    /// Unity Catalog catalogs and schemas given (`uc://main`): browsed, and each table in
    /// them relayed once asked for.
    catalogs: Vec<(String, TableUrl)>,
    /// Tables of those catalogs opened so far (most recent last, at most [`OPENED_MAX`]).
    opened: Mutex<Vec<Arc<Relayed>>>,
    options: Vec<(String, String)>,
    /// Names of the local tables served under `/tables/` (listed by `/v1/tables` as
    /// `served`, for the explorer's landing view).
    served: Vec<String>,
}

/// Catalog tables kept open at once.
const OPENED_MAX: usize = 64;

/// Whether a `serve` argument is a URL (else a local directory).
pub fn is_url(arg: &str) -> bool {
    arg.split_once("://").is_some_and(|(s, _)| {
        !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'+')
    })
}

impl Relay {
    /// Opens each table URL with the store options (and the environment's credentials);
    /// nothing is read yet, except a Unity Catalog name, which is resolved now.
    pub async fn open(urls: &[String], options: &[(String, String)]) -> Result<Relay, CliError> {
        let mut tables = Vec::with_capacity(urls.len());
        let mut catalogs = Vec::new();
        for url in urls {
            let given = url.trim().trim_end_matches('/').to_string();
            let parsed = TableUrl::parse(&given).map_err(|e| StorageError::InvalidLocation {
                location: given.clone(),
                message: e.message,
            })?;
            if let Some(name) = catalog_name(&given).filter(|n| n.len() < 3) {
                // a catalog or schema: checked now (configured, visible), opened table by
                // table as the explorer asks
                let catalog = Catalog::from_env(options).map_err(|e| catalog_error(&given, e))?;
                catalog
                    .list(&name)
                    .await
                    .map_err(|e| catalog_error(&given, e))?;
                catalogs.push((given, parsed));
                continue;
            }
            let source = Source::open(&given, options).await?;
            tables.push(Arc::new(Relayed {
                given,
                canonical: parsed.canonical(),
                source,
            }));
        }
        Ok(Relay {
            tables,
            catalogs,
            opened: Mutex::new(Vec::new()),
            options: options.to_vec(),
            served: Vec::new(),
        })
    }

    /// Also list the local tables `names` (served under `/tables/`) in `/v1/tables`.
    pub fn with_served(mut self, names: impl IntoIterator<Item = String>) -> Relay {
        self.served = names.into_iter().collect();
        self
    }

    /// The relayed table URLs and catalogs, as given.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tables
            .iter()
            .map(|t| t.given.as_str())
            .chain(self.catalogs.iter().map(|(g, _)| g.as_str()))
    }

    /// The served catalog or schema `name` lies in, if any.
    fn in_catalogs(&self, name: &TableUrl) -> bool {
        self.catalogs.iter().any(|(_, c)| name.is_within(c))
    }

    /// The relayed table `table`: one given, or a table of a given catalog (opened on
    /// first use); `Ok(None)` when this server does not relay it.
    async fn find(&self, table: &str) -> Result<Option<Arc<Relayed>>, StorageError> {
        let wanted = table.trim().trim_end_matches('/');
        let parsed = TableUrl::parse(wanted).ok();
        let canonical = parsed.as_ref().map(|t| t.canonical());
        let same = |t: &Relayed| t.given == wanted || Some(&t.canonical) == canonical.as_ref();
        if let Some(t) = self.tables.iter().find(|t| same(t)) {
            return Ok(Some(Arc::clone(t)));
        }
        let Some(parsed) = parsed.filter(|p| self.in_catalogs(p)) else {
            return Ok(None);
        };
        if catalog_name(wanted).is_none_or(|n| n.len() < 3) {
            return Ok(None);
        }
        let mut opened = self.opened.lock().await;
        if let Some(i) = opened.iter().position(|t| same(t)) {
            let t = opened.remove(i);
            opened.push(Arc::clone(&t));
            return Ok(Some(t));
        }
        let source = Source::open(wanted, &self.options)
            .await
            .map_err(|e| match e {
                CliError::Storage(s) => s,
                other => StorageError::InvalidLocation {
                    location: wanted.to_string(),
                    message: other.to_string(),
                },
            })?;
        let t = Arc::new(Relayed {
            given: wanted.to_string(),
            canonical: parsed.canonical(),
            source,
        });
        if opened.len() >= OPENED_MAX {
            opened.remove(0);
        }
        opened.push(Arc::clone(&t));
        Ok(Some(t))
    }

    /// `/v1/catalog?name=uc://catalog[.schema]`: what a served catalog holds.
    async fn browse(&self, query: &str) -> Result<String, Refusal> {
        let name = match relay::parse_catalog_request(query) {
            Ok(n) => n,
            Err(e) => return Err(Refusal::new(Failure::InvalidParameter, e.0)),
        };
        let parsed = TableUrl::parse(&name).ok().filter(|p| self.in_catalogs(p));
        let parts = catalog_name(&name).filter(|p| p.len() < 3);
        let (Some(_), Some(parts)) = (parsed, parts) else {
            return Err(Refusal::new(
                Failure::TableNotAllowed,
                self.not_relayed(&name),
            ));
        };
        let listed = match Catalog::from_env(&self.options) {
            Ok(c) => c.list(&parts).await,
            Err(e) => Err(e),
        };
        match listed {
            Ok(entries) => {
                let entries: Vec<relay::CatalogEntry> = entries
                    .into_iter()
                    .map(|e| relay::CatalogEntry {
                        name: format!("uc://{}", e.full_name),
                        kind: match e.kind {
                            EntryKind::Catalog => "catalog",
                            EntryKind::Schema => "schema",
                            EntryKind::Table => "table",
                        }
                        .into(),
                        table_type: e.table_type,
                        format: e.format,
                        comment: e.comment,
                    })
                    .collect();
                Ok(relay::CatalogEntry::list_json(&entries))
            }
            Err(e) => Err(Refusal::new(catalog_failure(&e), e.to_string())),
        }
    }

    /// Answers a request to a relay route; `Ok(false)` when `req` is not one.
    pub async fn answer(
        &self,
        stream: &mut TcpStream,
        req: &Request,
        cors: Vec<(&'static str, String)>,
        close: bool,
    ) -> io::Result<bool> {
        let route = req.path();
        let query = req.target.split_once('?').map_or("", |(_, q)| q);
        if route == relay::CATALOG_ROUTE {
            match self.browse(query).await {
                Ok(body) => json(stream, req, cors, close, "200 OK", body).await?,
                Err(r) => refuse(stream, req, cors, close, r).await?,
            }
            return Ok(true);
        }
        if route == relay::TABLES_ROUTE {
            let names: Vec<&str> = self.names().collect();
            let body = serde_json::json!({ "tables": names, "served": self.served }).to_string();
            json(stream, req, cors, close, "200 OK", body).await?;
            return Ok(true);
        }
        let parsed = match relay::parse_request(&route, query) {
            Ok(Some(r)) => r,
            Ok(None) => return Ok(false),
            Err(e) => {
                let r = Refusal::new(Failure::InvalidParameter, e.0);
                refuse(stream, req, cors, close, r).await?;
                return Ok(true);
            }
        };
        let table = match self.find(parsed.table()).await {
            Ok(Some(t)) => t,
            Ok(None) => {
                let r = Refusal::new(Failure::TableNotAllowed, self.not_relayed(parsed.table()));
                refuse(stream, req, cors, close, r).await?;
                return Ok(true);
            }
            Err(e) => {
                refuse(stream, req, cors, close, Refusal::storage(&e)).await?;
                return Ok(true);
            }
        };
        let storage = match table.source.storage().await {
            Ok(s) => s,
            Err(e) => {
                refuse(stream, req, cors, close, Refusal::storage(&e)).await?;
                return Ok(true);
            }
        };
        match parsed {
            RelayRequest::Object { path, .. } => {
                if let Some(root) = table.source.local_root()
                    && let Some(r) = local_refusal(root, &path).await
                {
                    refuse(stream, req, cors, close, r).await?;
                    return Ok(true);
                }
                let read = if req.method == "HEAD" {
                    storage.head_object(&path).await.map_err(ReadError::Storage)
                } else {
                    let range = req.header("range").and_then(http_range::requested_range);
                    storage.read_object(&path, range).await
                };
                object(stream, req, cors, close, &path, read).await?;
            }
            RelayRequest::List {
                prefix,
                start_after,
                ..
            } => {
                let found = storage
                    .list_page(&prefix, start_after.as_deref(), relay::LIST_PAGE_MAX)
                    .await;
                match found {
                    Ok(objects) => {
                        // paged before filtering: the next page starts where the store's
                        // listing stopped, whatever this one drops
                        let mut page = ListPage::of(objects);
                        if let Some(root) = table.source.local_root() {
                            page.objects = local_only(root, page.objects).await;
                        }
                        let body = page.to_json();
                        json(stream, req, cors, close, "200 OK", body).await?;
                    }
                    Err(e) => refuse(stream, req, cors, close, Refusal::storage(&e)).await?,
                }
            }
        }
        Ok(true)
    }

    fn not_relayed(&self, table: &str) -> String {
        let names: Vec<&str> = self.names().collect();
        if names.is_empty() {
            format!(
                "this server relays no tables (asked for {table:?}): start it with `deltalens serve {table}`"
            )
        } else {
            format!(
                "this server does not relay {table:?}; it relays {}",
                names.join(", ")
            )
        }
    }
}

/// Why the relay does not read `path` of the local table at `root` (the one rule for
/// local files, [`files::local_file`]), checked off the async threads; `None` to read it.
async fn local_refusal(root: &Path, path: &str) -> Option<Refusal> {
    let (dir, rel) = (root.to_path_buf(), path.to_string());
    let checked = tokio::task::spawn_blocking(move || files::local_file(&dir, &rel)).await;
    let why = match checked {
        Ok(Ok(_)) => return None,
        Ok(Err(Refused::Missing)) => (Failure::NotFound, "there is no such file in the table"),
        Ok(Err(Refused::Outside)) => (
            Failure::Forbidden,
            "it leads out of the table (a link to something outside it); the relay reads \
             only files inside the table's directory",
        ),
        Ok(Err(Refused::NotAFile)) => (
            Failure::Forbidden,
            "it is not a regular file (a FIFO, socket or device); the relay reads only files",
        ),
        Err(_) => (Failure::Internal, "the check of the file failed; try again"),
    };
    Some(Refusal::new(
        why.0,
        format!("the relay does not read {path:?}: {}", why.1),
    ))
}

/// The listed `objects` the relay would read (see [`local_refusal`]), off the async
/// threads; none when the check itself fails.
async fn local_only(root: &Path, objects: Vec<ObjectMeta>) -> Vec<ObjectMeta> {
    let dir = root.to_path_buf();
    tokio::task::spawn_blocking(move || {
        let mut objects = objects;
        objects.retain(|o| files::local_file(&dir, &o.path).is_ok());
        objects
    })
    .await
    .unwrap_or_default()
}

/// The status and text of a store's error, for the tab to show.
/// A relay request refused or failed: its row of the front ends' one table
/// ([`deltalens_api::status`], as the worker answers) and what to say.
struct Refusal {
    kind: Failure,
    why: String,
}

impl Refusal {
    fn new(kind: Failure, why: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            why: why.into(),
        }
    }

    /// The store's failure.
    fn storage(e: &StorageError) -> Refusal {
        Refusal::new(
            storage_failure(e),
            format!("the relay could not read the table: {e}"),
        )
    }
}

/// Answers `r` as the worker does: its status and `{"error": {"code", "message"}}`.
async fn refuse(
    stream: &mut TcpStream,
    req: &Request,
    cors: Vec<(&'static str, String)>,
    close: bool,
    r: Refusal,
) -> io::Result<()> {
    let body = error_document(r.kind.code(), &r.why);
    json(stream, req, cors, close, r.kind.status_line(), body).await
}

/// Headers every relay answer carries: the bytes are data, never rendered, never cached
/// by a shared cache (they come from a private store).
fn base(status: &'static str, cors: Vec<(&'static str, String)>, close: bool) -> Answer {
    cached(status, cors, close, "private, no-cache")
}

/// [`base`] with the given `Cache-Control`.
fn cached(
    status: &'static str,
    cors: Vec<(&'static str, String)>,
    close: bool,
    cache: &'static str,
) -> Answer {
    Answer::new(status)
        .header("Cache-Control", cache)
        .sandboxed()
        .headers(cors)
        .closing(close)
}

async fn json(
    stream: &mut TcpStream,
    req: &Request,
    cors: Vec<(&'static str, String)>,
    close: bool,
    status: &'static str,
    body: String,
) -> io::Result<()> {
    base(status, cors, close)
        .header("Content-Type", "application/json")
        .send(stream, body.as_bytes(), req.method == "HEAD")
        .await
}

/// `Last-Modified`'s form (IMF-fixdate).
fn http_date(ms: i64) -> Option<String> {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.format("%a, %d %b %Y %H:%M:%S GMT").to_string())
}

/// Sends an object read: 200 or 206 with its headers and streamed body, 416, or the
/// store's error.
async fn object(
    stream: &mut TcpStream,
    req: &Request,
    cors: Vec<(&'static str, String)>,
    close: bool,
    path: &str,
    read: Result<ObjectRead, ReadError>,
) -> io::Result<()> {
    let read = match read {
        Ok(r) => r,
        Err(ReadError::Unsatisfiable(size)) => {
            return base("416 Range Not Satisfiable", cors, close)
                .header("Content-Range", format!("bytes */{size}"))
                .send(stream, b"", req.method == "HEAD")
                .await;
        }
        Err(ReadError::Storage(e)) => {
            return refuse(stream, req, cors, close, Refusal::storage(&e)).await;
        }
    };
    let partial = req.method == "GET" && (read.range.start, read.range.end) != (0, read.size);
    let status = if partial {
        "206 Partial Content"
    } else {
        "200 OK"
    };
    let mut answer = cached(status, cors, close, relay::cache_control(path))
        .header("Content-Type", "application/octet-stream")
        .header("Accept-Ranges", "bytes");
    if let Some(etag) = &read.etag {
        answer = answer.header("ETag", etag.clone());
    }
    if let Some(date) = read.last_modified_ms.and_then(http_date) {
        answer = answer.header("Last-Modified", date);
    }
    if partial {
        let r = &read.range;
        answer = answer.header(
            "Content-Range",
            format!(
                "bytes {}-{}/{}",
                r.start,
                r.end.saturating_sub(1),
                read.size
            ),
        );
    }
    let len = read.range.end.saturating_sub(read.range.start);
    http::write(stream, &answer.head(len)).await?;
    if req.method == "HEAD" {
        return Ok(());
    }
    let mut body = read.body;
    let mut sent = 0u64;
    while let Some(chunk) = body.next().await {
        // the head is out: a failure now can only end the connection, which the client
        // sees as a body shorter than announced
        let chunk = chunk.map_err(io::Error::other)?;
        sent += chunk.len() as u64;
        if sent > len {
            return Err(io::Error::other("the store sent more than the range"));
        }
        http::write(stream, &chunk).await?;
    }
    if sent != len {
        return Err(io::Error::other("the store's answer ended early"));
    }
    Ok(())
}
