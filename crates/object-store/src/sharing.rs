//! Delta Sharing natively: a profile file read from disk, its OAuth client credentials
//! exchanged for a token when it has them, and `deltalens-sharing`'s requests sent with
//! reqwest (no redirect followed: the token must not travel to another host), each answer
//! bounded.

use std::collections::HashMap;
use std::io::Read;
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deltalens_sharing::{
    FileKind, MAX_ANSWER_BYTES, MAX_ITEMS, MAX_LINE_BYTES, MAX_PAGES, MAX_PROFILE_BYTES,
    OAuthToken, Page, Profile, Query, Request, ResponseFormat, Server, ShareName, SharedItem,
    SharingError, TableAnswer, TableReader, check_status, table_version,
};
use deltalens_storage::{ByteRange, ObjectMeta, Storage, StorageError};

/// How long one request to the sharing server (or its token endpoint) may take.
const SHARING_TIMEOUT: Duration = Duration::from_secs(60);

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A sharing server, as a profile file names it, and the HTTP client that talks to it.
#[derive(Debug, Clone)]
pub struct Share {
    server: Server,
    client: reqwest::Client,
}

/// An answer: its status, `Delta-Table-Version` header and body.
struct Answer {
    status: u16,
    version: Option<String>,
    body: Vec<u8>,
}

impl Share {
    /// The server of the profile file at `path` (a local file: a profile named by a URL
    /// is not fetched), with a token: the profile's own, or one its OAuth client
    /// credentials are exchanged for.
    pub async fn open(path: &str) -> Result<Share, SharingError> {
        let text = read_profile(path)?;
        let profile = Profile::parse(path, &text)?;
        profile.check_expiry(now_ms())?;
        let client = reqwest::Client::builder()
            .timeout(SHARING_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            // no proxy from the environment: the token would reach it (in clear, for a
            // server on this machine)
            .no_proxy()
            .build()
            .map_err(|e| SharingError::Unreachable {
                endpoint: profile.endpoint.clone(),
                what: "a client".into(),
                message: e.to_string(),
            })?;
        let token = match profile.oauth_token() {
            Some(req) => {
                let a = send(&client, &req, MAX_ANSWER_BYTES).await?;
                Some(OAuthToken::parse(
                    &profile,
                    &req,
                    a.status,
                    &a.body,
                    now_ms(),
                )?)
            }
            None => None,
        };
        Ok(Share {
            server: profile.server(token.as_ref())?,
            client,
        })
    }

    /// The server's endpoint (for messages).
    pub fn endpoint(&self) -> &str {
        self.server.endpoint()
    }

    /// What `name` holds: the shares (no share named), a share's schemas, or a schema's
    /// tables, every page of them (at most [`MAX_PAGES`]).
    pub async fn list(&self, name: &ShareName) -> Result<Vec<SharedItem>, SharingError> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        for _ in 0..MAX_PAGES {
            let req = match (&name.share, &name.schema) {
                (None, _) => self.server.list_shares(token.as_deref()),
                (Some(s), None) => self.server.list_schemas(s, token.as_deref()),
                (Some(s), Some(sc)) => self.server.list_tables(s, sc, token.as_deref()),
            };
            let a = send(&self.client, &req, MAX_ANSWER_BYTES).await?;
            let page = Page::parse(self.endpoint(), &req.what, a.status, &a.body)?;
            if items.len() + page.items.len() > MAX_ITEMS {
                return Err(SharingError::LimitExceeded {
                    endpoint: self.endpoint().to_string(),
                    what: req.what,
                    limit: "MAX_ITEMS",
                    value: (items.len() + page.items.len()) as u64,
                    max: MAX_ITEMS as u64,
                });
            }
            items.extend(page.items);
            match page.next_page_token {
                Some(t) if Some(&t) != token.as_ref() => token = Some(t),
                Some(_) => {
                    return Err(SharingError::InvalidAnswer {
                        endpoint: self.endpoint().to_string(),
                        what: req.what,
                        why: "the same page token twice".into(),
                    });
                }
                None => return Ok(items),
            }
        }
        Err(SharingError::LimitExceeded {
            endpoint: self.endpoint().to_string(),
            what: format!("the listing of {}", name.dotted()),
            limit: "MAX_PAGES",
            value: MAX_PAGES as u64 + 1,
            max: MAX_PAGES as u64,
        })
    }

    /// The table's current version.
    pub async fn version(
        &self,
        share: &str,
        schema: &str,
        table: &str,
    ) -> Result<u64, SharingError> {
        let req = self.server.table_version(share, schema, table, None);
        let a = send(&self.client, &req, MAX_ANSWER_BYTES).await?;
        check_status(self.endpoint(), &req.what, a.status, &a.body)?;
        table_version(self.endpoint(), &req.what, a.version.as_deref())
    }
}

/// The shared table `location` names, opened, when it is one: `<profile file>#share.schema.table`
/// (what comes before its last `#` is an existing file: a profile); `None` for any other
/// location.
pub async fn open_shared(location: &str) -> Option<Result<SharedTable, SharingError>> {
    let (profile, _) = location.rsplit_once('#')?;
    let local = profile.strip_prefix("file://").unwrap_or(profile);
    if !std::path::Path::new(local).is_file() {
        return None;
    }
    Some(open_named(location).await)
}

async fn open_named(location: &str) -> Result<SharedTable, SharingError> {
    let name = ShareName::parse(location)?;
    let (Some(share), Some(schema), Some(table)) = (&name.share, &name.schema, &name.table) else {
        return Err(SharingError::BadName {
            name: location.to_string(),
            why: "it names no table (deltalens share PROFILE lists what the profile holds)".into(),
        });
    };
    Share::open(&name.profile)
        .await?
        .table(share, schema, table)
        .await
}

/// Sends `req` for a table's answer (newline-delimited JSON) and reads it line by line as
/// it arrives (at most [`MAX_QUERY_BYTES`] in all, never held whole): its version header
/// and the answer.
async fn send_table(
    client: &reqwest::Client,
    req: &Request,
    endpoint: &str,
) -> Result<(Option<String>, TableAnswer), SharingError> {
    let unreachable = |e: reqwest::Error| SharingError::Unreachable {
        endpoint: req.url.clone(),
        what: req.what.clone(),
        message: e.without_url().to_string(),
    };
    let mut resp = request(client, req).send().await.map_err(unreachable)?;
    let status = resp.status().as_u16();
    if !(200..300).contains(&status) {
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
            body.extend_from_slice(&chunk[..chunk.len().min(65_536 - body.len().min(65_536))]);
            if body.len() >= 65_536 {
                break;
            }
        }
        check_status(endpoint, &req.what, status, &body)?;
    }
    let version = resp
        .headers()
        .get("delta-table-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut reader = TableReader::new(endpoint, &req.what);
    let (mut pending, mut total) = (Vec::new(), 0usize);
    while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
        total += chunk.len();
        if total > MAX_QUERY_BYTES {
            return Err(SharingError::LimitExceeded {
                endpoint: endpoint.to_string(),
                what: req.what.clone(),
                limit: "MAX_QUERY_BYTES",
                value: total as u64,
                max: MAX_QUERY_BYTES as u64,
            });
        }
        pending.extend_from_slice(&chunk);
        let mut start = 0;
        while let Some(n) = pending[start..].iter().position(|b| *b == b'\n') {
            reader.line(&pending[start..start + n])?;
            start += n + 1;
        }
        pending.drain(..start);
        // a line longer than the limit is refused before the rest of it arrives
        if pending.len() > MAX_LINE_BYTES {
            reader.line(&pending)?;
        }
    }
    reader.line(&pending)?;
    Ok((version, reader.finish()?))
}

/// The HTTP request `req` describes.
fn request(client: &reqwest::Client, req: &Request) -> reqwest::RequestBuilder {
    let method = reqwest::Method::from_bytes(req.method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut r = client.request(method, &req.url);
    for (k, v) in &req.headers {
        r = r.header(k, v);
    }
    if let Some(b) = &req.body {
        r = r.body(b.clone());
    }
    r
}

/// Sends `req`: the status, the version header and at most `max` bytes of the body.
async fn send(client: &reqwest::Client, req: &Request, max: usize) -> Result<Answer, SharingError> {
    let unreachable = |e: reqwest::Error| SharingError::Unreachable {
        endpoint: req.url.clone(),
        what: req.what.clone(),
        message: e.without_url().to_string(),
    };
    let mut resp = request(client, req).send().await.map_err(unreachable)?;
    let status = resp.status().as_u16();
    let version = resp
        .headers()
        .get("delta-table-version")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(unreachable)? {
        if body.len() + chunk.len() > max {
            return Err(SharingError::LimitExceeded {
                endpoint: req.url.clone(),
                what: req.what.clone(),
                limit: "MAX_ANSWER_BYTES",
                value: (body.len() + chunk.len()) as u64,
                max: max as u64,
            });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Answer {
        status,
        version,
        body,
    })
}

/// The profile file at `path`, at most [`MAX_PROFILE_BYTES`] of it (more is an error).
fn read_profile(path: &str) -> Result<Vec<u8>, SharingError> {
    let bad = |why: String| SharingError::BadProfile {
        profile: path.to_string(),
        why,
    };
    if path.contains("://") && !path.starts_with("file://") {
        return Err(bad(
            "is a URL: deltalens reads a profile from a local file only (download it first)".into(),
        ));
    }
    let local = path.strip_prefix("file://").unwrap_or(path);
    // (a FIFO or a device would block the open: only a regular file is opened)
    if !std::fs::metadata(local).is_ok_and(|m| m.is_file()) {
        return Err(bad("is not a file".into()));
    }
    let file = std::fs::File::open(local).map_err(|e| bad(format!("cannot be read ({e})")))?;
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return Err(bad("is not a file".into()));
    }
    let mut text = Vec::new();
    file.take(MAX_PROFILE_BYTES as u64 + 1)
        .read_to_end(&mut text)
        .map_err(|e| bad(format!("cannot be read ({e})")))?;
    Ok(text)
}

/// The most bytes of a table's query answer (its protocol, metadata and one line per file,
/// about 1 KB each: some 250,000 files), held while it is read.
pub const MAX_QUERY_BYTES: usize = 256 << 20;

impl Share {
    /// The shared table `share.schema.table`, as a table deltalens reads like any other
    /// ([`SharedTable`]): its current version is asked for now, each snapshot when the
    /// core reads it.
    pub async fn table(
        &self,
        share: &str,
        schema: &str,
        table: &str,
    ) -> Result<SharedTable, SharingError> {
        let latest = self.version(share, schema, table).await?;
        let req = self
            .server
            .metadata(share, schema, table, ResponseFormat::Delta);
        let a = send(&self.client, &req, MAX_ANSWER_BYTES).await?;
        check_status(self.endpoint(), &req.what, a.status, &a.body)?;
        let metadata = TableAnswer::parse(self.endpoint(), &req.what, &a.body)?.metadata;
        let name = [share, schema, table].map(str::to_string);
        // the change data feed, when the table has it and the server shares it (one
        // request to see: a server may share a table's snapshots only)
        let change_feed = metadata
            .pointer("/configuration/delta.enableChangeDataFeed")
            .and_then(|v| v.as_str())
            .is_some_and(|v| v.eq_ignore_ascii_case("true"))
            && self.changes(&name, latest, latest).await.is_ok();
        Ok(SharedTable {
            share: self.clone(),
            name,
            latest,
            change_feed,
            snapshots: Mutex::new(HashMap::new()),
            commits: Mutex::new(HashMap::new()),
            files: Mutex::new(HashMap::new()),
            refreshing: tokio::sync::Mutex::new(()),
            windowing: tokio::sync::Mutex::new(()),
        })
    }

    /// The protocol and metadata of `version`, in the delta format.
    async fn metadata_at(
        &self,
        [share, schema, table]: &[String; 3],
        version: u64,
    ) -> Result<TableAnswer, SharingError> {
        let req =
            self.server
                .metadata_at(share, schema, table, Some(version), ResponseFormat::Delta);
        let a = send(&self.client, &req, MAX_ANSWER_BYTES).await?;
        check_status(self.endpoint(), &req.what, a.status, &a.body)?;
        TableAnswer::parse(self.endpoint(), &req.what, &a.body)
    }

    /// The changes of versions `from..=to` (the change data feed), in the delta format.
    async fn changes(
        &self,
        [share, schema, table]: &[String; 3],
        from: u64,
        to: u64,
    ) -> Result<TableAnswer, SharingError> {
        let req = self
            .server
            .changes(share, schema, table, from, Some(to), ResponseFormat::Delta);
        Ok(send_table(&self.client, &req, self.endpoint()).await?.1)
    }

    /// The snapshot of version `version`, asked in the delta format.
    async fn snapshot(
        &self,
        [share, schema, table]: &[String; 3],
        version: u64,
    ) -> Result<TableAnswer, SharingError> {
        let query = Query {
            version: Some(version),
            ..Query::default()
        };
        let req = self
            .server
            .query(share, schema, table, &query, ResponseFormat::Delta);
        let (header, answer) = send_table(&self.client, &req, self.endpoint()).await?;
        // the answer must be the version asked for (its header says which)
        let answered = table_version(self.endpoint(), &req.what, header.as_deref())?;
        if answered != version {
            return Err(SharingError::InvalidAnswer {
                endpoint: self.endpoint().to_string(),
                what: req.what,
                why: format!("version {answered} answered for version {version}"),
            });
        }
        Ok(answer)
    }
}

/// The most versions of a shared table listed (the newest): older ones cannot be read.
pub const MAX_LISTED_VERSIONS: u64 = 10_000;

/// The most bytes of one deletion vector of a shared table read (its size is the figure
/// the server's descriptor gives; a real one is kilobytes to a few megabytes).
pub const MAX_SHARED_DV_BYTES: u64 = 256 << 20;

/// A file of a shared table: its pre-signed URL, its size when the answer gives it, and
/// the answer it came from (asked again when the URL has expired).
#[derive(Clone)]
struct FileEntry {
    url: String,
    size: Option<u64>,
    source: Source,
}

/// The answer a pre-signed URL came from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    /// The snapshot of a version.
    Snapshot(u64),
    /// The changes of versions `.0..=.1`.
    Changes(u64, u64),
}

/// Written checkpoints kept at once (the oldest versions' are written again if read).
const KEPT_SNAPSHOTS: usize = 4;

/// Versions whose changes one request asks for.
const CHANGES_WINDOW: u64 = 200;

/// The file name the written checkpoint of each version has (a v2 checkpoint, UUID-named).
const CHECKPOINT_UUID: &str = "00000000-0000-0000-0000-000000000000";

/// A shared table as storage: a Delta log of one v2 JSON checkpoint per version (the
/// newest [`MAX_LISTED_VERSIONS`]), each written here, when the core first reads it, from
/// the server's answer for that version (its protocol, metadata and files), and the files
/// they name (`files/NNNNNNNN.parquet`, one path per server file id; deletion vectors as
/// `deletion_vector_<uuid>.bin`, one per version and file line), each read from its pre-signed URL with a range request
/// and no credential. Nothing else exists in it; nothing in it is written to.
pub struct SharedTable {
    share: Share,
    name: [String; 3],
    latest: u64,
    /// Whether the table has the change data feed: then each version also has a commit,
    /// written from the server's changes (for `changes` and `history`).
    change_feed: bool,
    /// Written checkpoints by version.
    snapshots: Mutex<HashMap<u64, bytes::Bytes>>,
    /// Written commits by version.
    commits: Mutex<HashMap<u64, bytes::Bytes>>,
    /// Path -> (pre-signed URL, size if known), for every version written (a file's newest
    /// URL).
    files: Mutex<HashMap<String, FileEntry>>,
    /// One refresh of expired pre-signed URLs at a time.
    refreshing: tokio::sync::Mutex<()>,
    /// One window of changes asked for at a time.
    windowing: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for SharedTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // (no pre-signed URL: their signatures are credentials)
        f.debug_struct("SharedTable")
            .field("endpoint", &self.share.endpoint())
            .field("name", &self.name)
            .field("latest", &self.latest)
            .finish_non_exhaustive()
    }
}

impl SharedTable {
    /// The version `TIMESTAMP AS OF ts_ms` reads, as the server says: the metadata as of
    /// that timestamp names it (PROTOCOL.md, "Query Table Metadata", `timestamp`), and the
    /// first version committed after it (`/version?startingTimestamp=`, one millisecond
    /// later) must be the next one. The table's own log is not shared, so commit times are
    /// the server's to tell; two answers that disagree (a server that ignores the metadata's
    /// `timestamp` answers its latest version) are an invalid answer, not a wrong version.
    pub async fn version_at_timestamp(&self, ts_ms: i64) -> Result<u64, SharingError> {
        let [share, schema, table] = &self.name;
        let req = self.share.server.metadata_at_timestamp(
            share,
            schema,
            table,
            &sharing_timestamp(ts_ms),
            ResponseFormat::Delta,
        );
        let v = self.answered_version(&req).await?;
        match self
            .first_version_at_or_after(ts_ms.saturating_add(1))
            .await
        {
            Ok(next) if next == v.saturating_add(1) => Ok(v),
            Ok(next) => Err(SharingError::InvalidAnswer {
                endpoint: self.share.endpoint().to_string(),
                what: req.what,
                why: format!(
                    "its metadata as of {} is version {v}, but its first version after that time is {next}",
                    sharing_timestamp(ts_ms)
                ),
            }),
            // no version after the timestamp: the newest is the one
            Err(_) if v == self.latest => Ok(v),
            Err(e) => Err(e),
        }
    }

    /// The first version committed at or after `ts_ms` (`changes --from-timestamp`), as
    /// the server says (`/version?startingTimestamp=`).
    pub async fn first_version_at_or_after(&self, ts_ms: i64) -> Result<u64, SharingError> {
        let [share, schema, table] = &self.name;
        let req =
            self.share
                .server
                .table_version(share, schema, table, Some(&sharing_timestamp(ts_ms)));
        self.answered_version(&req).await
    }

    /// The version `req`'s answer names in its `Delta-Table-Version` header, when it is one
    /// of those this table lists.
    async fn answered_version(&self, req: &Request) -> Result<u64, SharingError> {
        let a = send(&self.share.client, req, MAX_ANSWER_BYTES).await?;
        check_status(self.share.endpoint(), &req.what, a.status, &a.body)?;
        let v = table_version(self.share.endpoint(), &req.what, a.version.as_deref())?;
        self.listed(v, &req.what)
    }

    /// `v`, when it is one of the versions this table lists (a server's answer names it).
    fn listed(&self, v: u64, what: &str) -> Result<u64, SharingError> {
        let first = self.latest.saturating_sub(MAX_LISTED_VERSIONS - 1);
        let why = if v > self.latest {
            format!(
                "version {v} answered: the table changed since it was opened at version {}; open it again",
                self.latest
            )
        } else if v < first {
            format!(
                "version {v} answered, older than the {MAX_LISTED_VERSIONS} newest versions read (MAX_LISTED_VERSIONS: {first} to {})",
                self.latest
            )
        } else {
            return Ok(v);
        };
        Err(SharingError::InvalidAnswer {
            endpoint: self.share.endpoint().to_string(),
            what: what.to_string(),
            why,
        })
    }

    fn checkpoint_path(version: u64) -> String {
        format!("_delta_log/{version:020}.checkpoint.{CHECKPOINT_UUID}.json")
    }

    /// The version whose commit `path` is, if it is one of this table's.
    fn commit_version(&self, path: &str) -> Option<u64> {
        let v: u64 = path
            .strip_prefix("_delta_log/")?
            .strip_suffix(".json")?
            .parse()
            .ok()?;
        (self.change_feed && v <= self.latest && self.latest - v < MAX_LISTED_VERSIONS).then_some(v)
    }

    /// The commit of `version`, written from the server's changes the first time (with
    /// those of up to [`CHANGES_WINDOW`] versions around it, asked in one request).
    async fn commit(&self, version: u64) -> deltalens_storage::Result<bytes::Bytes> {
        if let Some(b) = lock(&self.commits).get(&version) {
            return Ok(b.clone());
        }
        // one window asked at a time: reads of commits come many at once, mostly of one
        // window (and after waiting, the commit may be there)
        let _one = self.windowing.lock().await;
        if let Some(b) = lock(&self.commits).get(&version) {
            return Ok(b.clone());
        }
        let path = format!("_delta_log/{version:020}.json");
        let failed = |message: String| StorageError::Backend {
            path: path.clone(),
            operation: "get",
            message,
        };
        // the aligned window of CHANGES_WINDOW versions around it; a server that refuses
        // it (the feed enabled later, versions past retention) is asked for this one alone
        let first = self.latest.saturating_sub(MAX_LISTED_VERSIONS - 1);
        let start = (version / CHANGES_WINDOW * CHANGES_WINDOW).max(first);
        let end = start.saturating_add(CHANGES_WINDOW - 1).min(self.latest);
        let (from, to, answer) = match self.share.changes(&self.name, start, end).await {
            Ok(a) => (start, end, a),
            Err(_) => match self.share.changes(&self.name, version, version).await {
                Ok(a) => (version, version, a),
                // a version before the feed was turned on: its commit says only its
                // protocol and metadata (the core then refuses changes that reach it, as
                // the table's own log would make it)
                Err(e) => {
                    let m = self
                        .share
                        .metadata_at(&self.name, version)
                        .await
                        .map_err(|_| failed(e.to_string()))?;
                    let text = format!(
                        "{}\n{}\n",
                        serde_json::json!({ "protocol": protocol_of(&m) }),
                        serde_json::json!({ "metaData": metadata_of(&m) })
                    );
                    let bytes = bytes::Bytes::from(text);
                    lock(&self.commits).insert(version, bytes.clone());
                    return Ok(bytes);
                }
            },
        };
        let (mut commits, files) = written_commits(from..=to, &answer).map_err(failed)?;
        if from == 0 {
            // the table's first commit holds its protocol and metadata: those of the
            // snapshot at version 0 (the second and third lines of its checkpoint); when
            // that cannot be read, commit 0 is not kept (a read of it asks again)
            match self.checkpoint(0).await {
                Ok(first) => {
                    let head: Vec<&[u8]> = first.split(|b| *b == b'\n').skip(1).take(2).collect();
                    if let Some((_, c)) = commits.iter_mut().find(|(v, _)| *v == 0) {
                        let mut text = head.join(&b'\n');
                        text.push(b'\n');
                        text.extend_from_slice(c);
                        *c = bytes::Bytes::from(text);
                    }
                }
                Err(e) if version == 0 => return Err(e),
                Err(_) => commits.retain(|(v, _)| *v != 0),
            }
        }
        lock(&self.files).extend(files);
        let mut cached = lock(&self.commits);
        cached.extend(commits);
        cached
            .get(&version)
            .cloned()
            .ok_or_else(|| failed(format!("the server's changes hold no version {version}")))
    }

    /// The version whose checkpoint `path` is, if it is one.
    fn version_of(&self, path: &str) -> Option<u64> {
        let v: u64 = path
            .strip_prefix("_delta_log/")?
            .strip_suffix(&format!(".checkpoint.{CHECKPOINT_UUID}.json"))?
            .parse()
            .ok()?;
        (v <= self.latest && self.latest - v < MAX_LISTED_VERSIONS).then_some(v)
    }

    /// The checkpoint of `version`, written from the server's answer the first time.
    async fn checkpoint(&self, version: u64) -> deltalens_storage::Result<bytes::Bytes> {
        if let Some(b) = lock(&self.snapshots).get(&version) {
            return Ok(b.clone());
        }
        let path = Self::checkpoint_path(version);
        let answer = self
            .share
            .snapshot(&self.name, version)
            .await
            .map_err(|e| StorageError::Backend {
                path: path.clone(),
                operation: "get",
                message: e.to_string(),
            })?;
        let (bytes, files) =
            written(version, &answer).map_err(|message| StorageError::Backend {
                path,
                operation: "get",
                message,
            })?;
        lock(&self.files).extend(files);
        let mut kept = lock(&self.snapshots);
        // a long-lived table (Python, a SQL session) reading many versions keeps the few
        // newest read (the core holds what it needs of each)
        while kept.len() >= KEPT_SNAPSHOTS {
            let Some(oldest) = kept.keys().min().copied() else {
                break;
            };
            kept.remove(&oldest);
        }
        kept.insert(version, bytes.clone());
        Ok(bytes)
    }

    /// The file at `path`.
    fn entry(&self, path: &str) -> deltalens_storage::Result<FileEntry> {
        lock(&self.files)
            .get(path)
            .cloned()
            .ok_or_else(|| StorageError::NotFound {
                path: path.to_string(),
            })
    }

    /// GET `range` of `path`; when its pre-signed URL is refused (it expired), the answer
    /// it came from is asked for again and the read made once more with the new URL.
    async fn read(
        &self,
        path: &str,
        range: Option<ByteRange>,
    ) -> deltalens_storage::Result<bytes::Bytes> {
        let entry = self.entry(path)?;
        match self.fetch(path, &entry, range.clone()).await {
            Err(e @ StorageError::PermissionDenied { .. }) => {
                self.refresh(path, &entry).await?;
                let fresh = self.entry(path)?;
                if fresh.url == entry.url {
                    return Err(e);
                }
                self.fetch(path, &fresh, range).await
            }
            other => other,
        }
    }

    /// Asks again for the answer `stale` (the file at `path`) came from, unless another
    /// read did meanwhile; every file of it gets its new URL.
    async fn refresh(&self, path: &str, stale: &FileEntry) -> deltalens_storage::Result<()> {
        let _one = self.refreshing.lock().await;
        if lock(&self.files)
            .get(path)
            .is_some_and(|e| e.url != stale.url)
        {
            return Ok(());
        }
        let failed = |message: String| StorageError::Backend {
            path: path.to_string(),
            operation: "get",
            message: format!("asking again for an expired pre-signed URL: {message}"),
        };
        let files = match stale.source {
            Source::Snapshot(v) => {
                let answer = self
                    .share
                    .snapshot(&self.name, v)
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                written(v, &answer).map_err(failed)?.1
            }
            Source::Changes(from, to) => {
                let answer = self
                    .share
                    .changes(&self.name, from, to)
                    .await
                    .map_err(|e| failed(e.to_string()))?;
                written_commits(from..=to, &answer).map_err(failed)?.1
            }
        };
        lock(&self.files).extend(files);
        Ok(())
    }

    /// GET `range` of `path` from `entry`'s pre-signed URL, checking the answer is that
    /// range.
    async fn fetch(
        &self,
        path: &str,
        entry: &FileEntry,
        range: Option<ByteRange>,
    ) -> deltalens_storage::Result<bytes::Bytes> {
        let (url, size) = (&entry.url, &entry.size);
        let bounded = match (range, size) {
            (None, _) => None,
            (Some(r), Some(size)) => Some(r.resolve(*size).ok_or(StorageError::InvalidRange {
                path: path.to_string(),
                range: r,
                size: *size,
            })?),
            (Some(ByteRange::Bounded(r)), None) => Some(r),
            (Some(r), None) => {
                return Err(StorageError::InvalidResponse {
                    path: path.to_string(),
                    operation: "get",
                    message: format!("{r} of a file of unknown size"),
                });
            }
        };
        // (the error without its URL: a pre-signed URL's signature is a credential)
        // a file of unknown size (a deletion vector) is read by the range its descriptor
        // gives, a figure the server wrote: bounded here
        if size.is_none()
            && bounded
                .as_ref()
                .is_some_and(|r| r.end - r.start > MAX_SHARED_DV_BYTES)
        {
            let len = bounded.as_ref().map_or(0, |r| r.end - r.start);
            return Err(StorageError::InvalidResponse {
                path: path.to_string(),
                operation: "get",
                message: format!(
                    "the server's descriptor gives this deletion vector {len} bytes, more than MAX_SHARED_DV_BYTES ({MAX_SHARED_DV_BYTES})"
                ),
            });
        }
        let failed = |e: reqwest::Error| StorageError::Unreachable {
            path: path.to_string(),
            operation: "get",
            message: e.without_url().to_string(),
        };
        let mut req = self.share.client.get(url);
        if let Some(r) = &bounded {
            if r.is_empty() {
                return Ok(bytes::Bytes::new());
            }
            req = req.header("range", format!("bytes={}-{}", r.start, r.end - 1));
        }
        let mut resp = req.send().await.map_err(failed)?;
        let status = resp.status().as_u16();
        if !(200..300).contains(&status) {
            return Err(match status {
                401 | 403 => StorageError::PermissionDenied {
                    path: path.to_string(),
                    operation: "get",
                    message: format!(
                        "the pre-signed URL was refused ({status}): it may have expired; open the table again"
                    ),
                },
                404 => StorageError::NotFound {
                    path: path.to_string(),
                },
                _ => StorageError::Http {
                    path: path.to_string(),
                    operation: "get",
                    status,
                    message: "from the pre-signed URL".into(),
                },
            });
        }
        // at most what was asked for: the range (a server that ignored it: the file up to
        // the range's end, then no more is read), or a whole file's size
        let whole = status == 200;
        let max = match (&bounded, whole) {
            (Some(r), false) => r.end - r.start,
            (Some(r), true) => r.end,
            (None, _) => size.unwrap_or(MAX_QUERY_BYTES as u64),
        };
        let mut body = Vec::new();
        while let Some(chunk) = resp.chunk().await.map_err(failed)? {
            let room = max.saturating_sub(body.len() as u64);
            if chunk.len() as u64 > room {
                if whole && bounded.is_some() {
                    body.extend_from_slice(&chunk[..room as usize]);
                    break;
                }
                return Err(StorageError::InvalidResponse {
                    path: path.to_string(),
                    operation: "get",
                    message: format!("more than the {max} bytes asked for"),
                });
            }
            body.extend_from_slice(&chunk);
        }
        let body = bytes::Bytes::from(body);
        match bounded {
            // a server that ignored the range sent the whole file
            Some(r) if whole => {
                if (body.len() as u64) < r.end {
                    return Err(StorageError::InvalidResponse {
                        path: path.to_string(),
                        operation: "get",
                        message: format!(
                            "{} bytes for a file that holds {}..{}",
                            body.len(),
                            r.start,
                            r.end
                        ),
                    });
                }
                Ok(body.slice(r.start as usize..r.end as usize))
            }
            Some(r) if body.len() as u64 != r.end - r.start => Err(StorageError::InvalidResponse {
                path: path.to_string(),
                operation: "get",
                message: format!("{} bytes for the {} asked for", body.len(), r.end - r.start),
            }),
            _ => Ok(body),
        }
    }
}

/// The v2 checkpoint of `version` written from its answer (each file at the path of
/// `number_of` its id), and its files' paths.
#[allow(clippy::type_complexity)]
fn written(
    version: u64,
    answer: &TableAnswer,
) -> Result<(bytes::Bytes, Vec<(String, FileEntry)>), String> {
    let entry = |url: String, size| FileEntry {
        url,
        size,
        source: Source::Snapshot(version),
    };
    let mut lines = vec![
        serde_json::json!({ "checkpointMetadata": { "version": version } }).to_string(),
        serde_json::json!({ "protocol": protocol_of(answer) }).to_string(),
        serde_json::json!({ "metaData": metadata_of(answer) }).to_string(),
    ];
    let mut files = Vec::with_capacity(answer.files.len());
    for f in &answer.files {
        let path = file_path(&f.id);
        let mut add = match &f.delta_action {
            Some(a) => a
                .get("add")
                .cloned()
                .ok_or("the server answered a snapshot with removes or changes")?,
            None if f.kind != FileKind::File => {
                return Err(
                    "the server answered a snapshot with added, removed or changed files".into(),
                );
            }
            None => serde_json::json!({
                "partitionValues": f.partition_values,
                "size": f.size,
                "modificationTime": f.timestamp.unwrap_or(0),
                "dataChange": false,
                "stats": f.stats,
            }),
        };
        add["path"] = path.clone().into();
        if let Some(dv) = add.get_mut("deletionVector")
            && dv.get("storageType").and_then(|s| s.as_str()) == Some("p")
        {
            let url = dv["pathOrInlineDv"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let (encoded, dv_path) = dv_name(dv);
            dv["storageType"] = "u".into();
            dv["pathOrInlineDv"] = encoded.into();
            files.push((dv_path, entry(url, None)));
        }
        files.push((path, entry(f.url.clone(), Some(f.size))));
        lines.push(serde_json::json!({ "add": add }).to_string());
    }
    Ok((bytes::Bytes::from(lines.join("\n") + "\n"), files))
}

/// The commits of `versions` written from a changes answer (each: its commit time, then
/// its added, removed and change data files, each at the path of `number_of` its id), and
/// their files'
/// paths. A version without files is an empty commit.
#[allow(clippy::type_complexity)]
fn written_commits(
    versions: std::ops::RangeInclusive<u64>,
    answer: &TableAnswer,
) -> Result<(Vec<(u64, bytes::Bytes)>, Vec<(String, FileEntry)>), String> {
    let source = Source::Changes(*versions.start(), *versions.end());
    let entry = |url: String, size| FileEntry { url, size, source };
    let mut lines: HashMap<u64, Vec<String>> = HashMap::new();
    let mut stamps: HashMap<u64, i64> = HashMap::new();
    let mut files = Vec::new();
    for f in &answer.files {
        let v = f.version.ok_or("a change without its version")?;
        if !versions.contains(&v) {
            return Err(format!(
                "a change of version {v}, outside the versions asked for"
            ));
        }
        if let Some(t) = f.timestamp {
            stamps.insert(v, t);
        }
        let action = f
            .delta_action
            .as_ref()
            .ok_or("a change not in the delta format")?;
        let Some((kind, body)) = action.as_object().and_then(|o| o.iter().next()) else {
            return Err("an empty change".into());
        };
        let path = file_path(&f.id);
        let mut body = body.clone();
        body["path"] = path.clone().into();
        if let Some(dv) = body.get_mut("deletionVector")
            && dv.get("storageType").and_then(|s| s.as_str()) == Some("p")
        {
            let url = dv["pathOrInlineDv"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let (encoded, dv_path) = dv_name(dv);
            dv["storageType"] = "u".into();
            dv["pathOrInlineDv"] = encoded.into();
            files.push((dv_path, entry(url, None)));
        }
        files.push((path, entry(f.url.clone(), Some(f.size))));
        lines
            .entry(v)
            .or_default()
            .push(serde_json::json!({ kind.as_str(): body }).to_string());
    }
    // the metadata each version set (a change of schema, the change data feed turned on)
    let mut metadata: HashMap<u64, String> = HashMap::new();
    let first = (answer.metadata_version, answer.metadata.clone());
    for (v, m) in std::iter::once(&first).chain(&answer.later_metadata) {
        if let Some(v) = v.filter(|v| versions.contains(v)) {
            metadata.insert(v, serde_json::json!({ "metaData": m }).to_string());
        }
    }
    let commits = versions
        .map(|v| {
            let mut text = match stamps.get(&v) {
                Some(t) => {
                    serde_json::json!({ "commitInfo": { "timestamp": t } }).to_string() + "\n"
                }
                None => String::new(),
            };
            if let Some(m) = metadata.remove(&v) {
                text.push_str(&m);
                text.push('\n');
            }
            for l in lines.remove(&v).unwrap_or_default() {
                text.push_str(&l);
                text.push('\n');
            }
            (v, bytes::Bytes::from(text))
        })
        .collect();
    Ok((commits, files))
}

/// `ts_ms` in the protocol's Timestamp Format (ISO 8601 in UTC), with milliseconds.
fn sharing_timestamp(ts_ms: i64) -> String {
    match chrono::DateTime::from_timestamp_millis(ts_ms) {
        Some(t) => t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
        // (beyond chrono's range: the server refuses it, naming it)
        None => ts_ms.to_string(),
    }
}

/// `m` locked (a panic elsewhere while it was held leaves it usable: its maps are only
/// ever extended).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The protocol of a shared table's answer (the parquet format's has only reader version
/// 1: a table with features is answered in the delta format).
fn protocol_of(answer: &TableAnswer) -> serde_json::Value {
    match answer.format {
        ResponseFormat::Delta => answer.protocol.clone(),
        ResponseFormat::Parquet => {
            serde_json::json!({ "minReaderVersion": 1, "minWriterVersion": 2 })
        }
    }
}

/// The metadata of a shared table's answer, as a Delta `metaData` action.
fn metadata_of(answer: &TableAnswer) -> serde_json::Value {
    let m = &answer.metadata;
    match answer.format {
        ResponseFormat::Delta => m.clone(),
        ResponseFormat::Parquet => serde_json::json!({
            "id": m.get("id").cloned().unwrap_or_else(|| "shared".into()),
            "format": m.get("format").cloned().unwrap_or_else(|| serde_json::json!({"provider": "parquet", "options": {}})),
            "schemaString": m.get("schemaString").cloned().unwrap_or_default(),
            "partitionColumns": m.get("partitionColumns").cloned().unwrap_or_else(|| serde_json::json!([])),
            "configuration": m.get("configuration").cloned().unwrap_or_else(|| serde_json::json!({})),
        }),
    }
}

/// A stable 64-bit digest of `parts` (the same in every process and run: the standard
/// hasher with its fixed keys).
fn digest(parts: &[&str]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    parts.hash(&mut h);
    h.finish()
}

/// The path of the file the server calls `id`: the same in every version, change and
/// process, so that the core pairs a remove with the add of the same file (a deletion
/// vector updated) and a plan shipped elsewhere names the same files.
fn file_path(id: &str) -> String {
    format!(
        "files/{:016x}-{:016x}.parquet",
        digest(&["file", id]),
        digest(&["id", id])
    )
}

/// A deletion vector's name in the written log: a relative ('u') descriptor whose UUID is
/// the file's number, and the path the core reads it at (`deletion_vector_<uuid>.bin`).
fn dv_name(dv: &serde_json::Value) -> (String, String) {
    // named by what it is: the pre-signed URL without its query (the signature changes
    // from answer to answer), its offset and size; the same vector keeps its name across
    // versions (diff sees it unchanged)
    let url = dv["pathOrInlineDv"].as_str().unwrap_or_default();
    let file = url.split('?').next().unwrap_or_default();
    let (offset, size) = (dv["offset"].to_string(), dv["sizeInBytes"].to_string());
    let n = (u128::from(digest(&["dv", file, &offset, &size])) << 64)
        | u128::from(digest(&["vector", file, &offset, &size]));
    const Z85: &[u8; 85] =
        b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";
    let bytes = n.to_be_bytes();
    let mut encoded = String::with_capacity(20);
    for chunk in bytes.chunks(4) {
        let mut v = u32::from_be_bytes([chunk[0], chunk[1], chunk[2], chunk[3]]);
        let mut digits = [0u8; 5];
        for d in digits.iter_mut().rev() {
            *d = Z85[(v % 85) as usize];
            v /= 85;
        }
        encoded.extend(digits.iter().map(|d| char::from(*d)));
    }
    let h: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    let uuid = format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    );
    (encoded, format!("deletion_vector_{uuid}.bin"))
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
impl Storage for SharedTable {
    async fn list(
        &self,
        prefix: &str,
        start_after: Option<&str>,
    ) -> deltalens_storage::Result<Vec<ObjectMeta>> {
        if !"_delta_log/".starts_with(prefix) && !prefix.starts_with("_delta_log/") {
            return Ok(Vec::new());
        }
        let first = self.latest.saturating_sub(MAX_LISTED_VERSIONS - 1);
        let commits = self
            .change_feed
            .then_some(first..=self.latest)
            .into_iter()
            .flatten();
        let mut paths: Vec<String> = (first..=self.latest)
            .map(Self::checkpoint_path)
            .chain(commits.map(|v| format!("_delta_log/{v:020}.json")))
            .collect();
        paths.sort();
        Ok(paths
            .into_iter()
            .filter(|p| p.starts_with(prefix) && start_after.is_none_or(|s| p.as_str() > s))
            // (a JSON checkpoint is read whole: its size is not used)
            .map(|path| ObjectMeta {
                path,
                size: 0,
                last_modified_ms: None,
            })
            .collect())
    }

    async fn get_range(
        &self,
        path: &str,
        range: ByteRange,
    ) -> deltalens_storage::Result<bytes::Bytes> {
        if let Some(v) = self.version_of(path) {
            return range.slice(path, &self.checkpoint(v).await?);
        }
        if let Some(v) = self.commit_version(path) {
            return range.slice(path, &self.commit(v).await?);
        }
        self.read(path, Some(range)).await
    }

    async fn get(&self, path: &str) -> deltalens_storage::Result<bytes::Bytes> {
        if let Some(v) = self.version_of(path) {
            return self.checkpoint(v).await;
        }
        if let Some(v) = self.commit_version(path) {
            return self.commit(v).await;
        }
        self.read(path, None).await
    }

    async fn head(&self, path: &str) -> deltalens_storage::Result<ObjectMeta> {
        let size = match (self.version_of(path), self.commit_version(path)) {
            (Some(v), _) => Some(self.checkpoint(v).await?.len() as u64),
            (None, Some(v)) => Some(self.commit(v).await?.len() as u64),
            (None, None) => lock(&self.files).get(path).and_then(|e| e.size),
        };
        size.map(|size| ObjectMeta {
            path: path.to_string(),
            size,
            last_modified_ms: None,
        })
        .ok_or_else(|| StorageError::NotFound {
            path: path.to_string(),
        })
    }
}
