//! Delta Sharing natively: a profile file read from disk, its OAuth client credentials
//! exchanged for a token when it has them, and `deltalens-sharing`'s requests sent with
//! reqwest (no redirect followed: the token must not travel to another host), each answer
//! bounded.

use std::io::Read;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use deltalens_sharing::{
    MAX_ANSWER_BYTES, MAX_PAGES, MAX_PROFILE_BYTES, OAuthToken, Page, Profile, Request, Server,
    ShareName, SharedItem, SharingError, check_status, table_version,
};

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

/// Sends `req`: the status, the version header and at most `max` bytes of the body.
async fn send(client: &reqwest::Client, req: &Request, max: usize) -> Result<Answer, SharingError> {
    let unreachable = |e: reqwest::Error| SharingError::Unreachable {
        endpoint: req.url.clone(),
        what: req.what.clone(),
        message: e.to_string(),
    };
    let method = reqwest::Method::from_bytes(req.method.as_bytes()).unwrap_or(reqwest::Method::GET);
    let mut r = client.request(method, &req.url);
    for (k, v) in &req.headers {
        r = r.header(k, v);
    }
    if let Some(b) = &req.body {
        r = r.body(b.clone());
    }
    let mut resp = r.send().await.map_err(unreachable)?;
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
