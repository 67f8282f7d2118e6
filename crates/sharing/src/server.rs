//! The requests deltalens makes of a sharing server (PROTOCOL.md "REST APIs"), each built
//! from the profile's endpoint, so the token goes nowhere else.

use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::error::SharingError;
use crate::oauth::OAuthToken;
use crate::profile::{Auth, Profile};
use crate::request::{Query, Request, ResponseFormat};

/// Results per listing page asked for.
pub(crate) const PAGE_SIZE: u32 = 500;

/// Kept as they are in a path segment or a query value: the URL-unreserved characters.
const KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'.')
    .remove(b'-')
    .remove(b'_')
    .remove(b'~');

fn enc(s: &str) -> String {
    utf8_percent_encode(s, KEEP).to_string()
}

/// A sharing server with the bearer token to send it (`Debug` hides the token).
#[derive(Clone, PartialEq, Eq)]
pub struct Server {
    endpoint: String,
    token: String,
}

impl fmt::Debug for Server {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Server")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl Profile {
    /// The request exchanging an OAuth profile's client credentials for a token (form
    /// body, HTTP basic authentication, as the delta-sharing connectors send it); `None`
    /// for a bearer-token profile.
    pub fn oauth_token(&self) -> Option<Request> {
        let Auth::OAuthClientCredentials {
            token_endpoint,
            client_id,
            client_secret,
            scope,
        } = &self.auth
        else {
            return None;
        };
        // each form-urlencoded first (RFC 6749 §2.3.1), then joined and encoded
        let basic = base64(format!("{}:{}", form(client_id), form(client_secret)).as_bytes());
        let mut body = "grant_type=client_credentials".to_string();
        if let Some(s) = scope {
            body.push_str(&format!("&scope={}", enc(s)));
        }
        Some(Request {
            method: "POST",
            url: token_endpoint.clone(),
            headers: vec![
                ("authorization".into(), format!("Basic {basic}")),
                ("accept".into(), "application/json".into()),
                (
                    "content-type".into(),
                    "application/x-www-form-urlencoded".into(),
                ),
            ],
            body: Some(body),
            what: format!("an OAuth token for {}", self.source),
        })
    }

    /// The server, with the profile's bearer token or `oauth`'s (an OAuth profile needs
    /// one: [`Profile::oauth_token`]).
    pub fn server(&self, oauth: Option<&OAuthToken>) -> Result<Server, SharingError> {
        let token = match (&self.auth, oauth) {
            (Auth::Bearer { token, .. }, _) => token.clone(),
            (Auth::OAuthClientCredentials { .. }, Some(t)) => t.access_token.clone(),
            (Auth::OAuthClientCredentials { .. }, None) => {
                return Err(SharingError::BadProfile {
                    profile: self.source.clone(),
                    why:
                        "needs an OAuth token first (its client credentials are exchanged for one)"
                            .into(),
                });
            }
        };
        Ok(Server {
            endpoint: self.endpoint.clone(),
            token,
        })
    }
}

impl Server {
    /// The endpoint requests go to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    fn request(&self, method: &'static str, path_and_query: String, what: String) -> Request {
        let mut headers = vec![
            (
                "authorization".to_string(),
                format!("Bearer {}", self.token),
            ),
            ("accept".to_string(), "application/json".to_string()),
        ];
        if method == "POST" {
            headers.push((
                "content-type".into(),
                "application/json; charset=utf-8".into(),
            ));
        }
        Request {
            method,
            url: format!("{}{path_and_query}", self.endpoint),
            headers,
            body: None,
            what,
        }
    }

    fn page(path: String, page_token: Option<&str>) -> String {
        match page_token {
            Some(t) => format!("{path}?maxResults={PAGE_SIZE}&pageToken={}", enc(t)),
            None => format!("{path}?maxResults={PAGE_SIZE}"),
        }
    }

    /// `GET /shares` (one page).
    pub fn list_shares(&self, page_token: Option<&str>) -> Request {
        self.request(
            "GET",
            Self::page("/shares".into(), page_token),
            "the shares".into(),
        )
    }

    /// `GET /shares/{share}/schemas` (one page).
    pub fn list_schemas(&self, share: &str, page_token: Option<&str>) -> Request {
        let path = format!("/shares/{}/schemas", enc(share));
        self.request(
            "GET",
            Self::page(path, page_token),
            format!("share {share}"),
        )
    }

    /// `GET /shares/{share}/schemas/{schema}/tables` (one page).
    pub fn list_tables(&self, share: &str, schema: &str, page_token: Option<&str>) -> Request {
        let path = format!("/shares/{}/schemas/{}/tables", enc(share), enc(schema));
        self.request(
            "GET",
            Self::page(path, page_token),
            format!("schema {share}.{schema}"),
        )
    }

    /// `GET /shares/{share}/all-tables` (one page).
    pub fn list_all_tables(&self, share: &str, page_token: Option<&str>) -> Request {
        let path = format!("/shares/{}/all-tables", enc(share));
        self.request(
            "GET",
            Self::page(path, page_token),
            format!("share {share}"),
        )
    }

    fn table_path(share: &str, schema: &str, table: &str) -> String {
        format!(
            "/shares/{}/schemas/{}/tables/{}",
            enc(share),
            enc(schema),
            enc(table)
        )
    }

    /// `GET …/tables/{table}/version`: the version in the `Delta-Table-Version` header
    /// ([`crate::table_version`]); with `starting_timestamp`, the first version at or
    /// after it.
    pub fn table_version(
        &self,
        share: &str,
        schema: &str,
        table: &str,
        starting_timestamp: Option<&str>,
    ) -> Request {
        let mut path = format!("{}/version", Self::table_path(share, schema, table));
        if let Some(t) = starting_timestamp {
            path.push_str(&format!("?startingTimestamp={}", enc(t)));
        }
        self.request("GET", path, format!("table {share}.{schema}.{table}"))
    }

    /// `GET …/tables/{table}/metadata` in `format`.
    pub fn metadata(
        &self,
        share: &str,
        schema: &str,
        table: &str,
        format: ResponseFormat,
    ) -> Request {
        self.metadata_at(share, schema, table, None, format)
    }

    /// `GET …/tables/{table}/metadata?version=N` (the current version without one), in
    /// `format`.
    pub fn metadata_at(
        &self,
        share: &str,
        schema: &str,
        table: &str,
        version: Option<u64>,
        format: ResponseFormat,
    ) -> Request {
        let mut path = format!("{}/metadata", Self::table_path(share, schema, table));
        if let Some(v) = version {
            path.push_str(&format!("?version={v}"));
        }
        let mut r = self.request("GET", path, format!("table {share}.{schema}.{table}"));
        r.headers.push((
            "delta-sharing-capabilities".into(),
            format.capabilities().into(),
        ));
        r
    }

    /// `GET …/tables/{table}/metadata?timestamp=T` in `format`: the metadata of the version
    /// `TIMESTAMP AS OF T` reads (the newest committed at or before `T`), named by the
    /// answer's `Delta-Table-Version` header. `timestamp` is the protocol's Timestamp Format
    /// (ISO 8601 in UTC, `2022-01-01T00:00:00Z`, with milliseconds when they matter).
    pub fn metadata_at_timestamp(
        &self,
        share: &str,
        schema: &str,
        table: &str,
        timestamp: &str,
        format: ResponseFormat,
    ) -> Request {
        let path = format!(
            "{}/metadata?timestamp={}",
            Self::table_path(share, schema, table),
            enc(timestamp)
        );
        let mut r = self.request("GET", path, format!("table {share}.{schema}.{table}"));
        r.headers.push((
            "delta-sharing-capabilities".into(),
            format.capabilities().into(),
        ));
        r
    }

    /// `POST …/tables/{table}/query` in `format`.
    pub fn query(
        &self,
        share: &str,
        schema: &str,
        table: &str,
        query: &Query,
        format: ResponseFormat,
    ) -> Request {
        let path = format!("{}/query", Self::table_path(share, schema, table));
        let mut r = self.request("POST", path, format!("table {share}.{schema}.{table}"));
        r.headers.push((
            "delta-sharing-capabilities".into(),
            format.capabilities().into(),
        ));
        let mut body = serde_json::Map::new();
        let mut put = |k: &str, v: serde_json::Value| {
            body.insert(k.to_string(), v);
        };
        if let Some(v) = query.version {
            put("version", v.into());
        }
        if let Some(t) = &query.timestamp {
            put("timestamp", t.clone().into());
        }
        if let Some(l) = query.limit_hint {
            put("limitHint", l.into());
        }
        if let Some(p) = &query.json_predicate_hints {
            put("jsonPredicateHints", p.clone().into());
        }
        if let Some(v) = query.starting_version {
            put("startingVersion", v.into());
        }
        if let Some(v) = query.ending_version {
            put("endingVersion", v.into());
        }
        r.body = Some(serde_json::Value::Object(body).to_string());
        r
    }

    /// `GET …/tables/{table}/changes` from `starting_version` to `ending_version`
    /// (inclusive), in `format`.
    pub fn changes(
        &self,
        share: &str,
        schema: &str,
        table: &str,
        starting_version: u64,
        ending_version: Option<u64>,
        format: ResponseFormat,
    ) -> Request {
        // (with the metadata of each version that changed it: a change of schema, or the
        // change data feed turned on, within the range)
        let mut path = format!(
            "{}/changes?startingVersion={starting_version}&includeHistoricalMetadata=true",
            Self::table_path(share, schema, table)
        );
        if let Some(v) = ending_version {
            path.push_str(&format!("&endingVersion={v}"));
        }
        let mut r = self.request("GET", path, format!("table {share}.{schema}.{table}"));
        r.headers.push((
            "delta-sharing-capabilities".into(),
            format.capabilities().into(),
        ));
        r
    }

    /// `POST …/tables/{table}/temporary-table-credentials` for `location` (the table's
    /// root when `None`): directory access ([`crate::temporary_credentials`]).
    pub fn temporary_credentials(
        &self,
        share: &str,
        schema: &str,
        table: &str,
        location: Option<&str>,
    ) -> Request {
        let path = format!(
            "{}/temporary-table-credentials",
            Self::table_path(share, schema, table)
        );
        let mut r = self.request("POST", path, format!("table {share}.{schema}.{table}"));
        let body = match location {
            Some(l) => serde_json::json!({ "location": l }),
            None => serde_json::json!({}),
        };
        r.body = Some(body.to_string());
        r
    }
}

/// `s` form-urlencoded (application/x-www-form-urlencoded: a space as `+`).
fn form(s: &str) -> String {
    utf8_percent_encode(s, KEEP).to_string().replace("%20", "+")
}

/// Standard base64 with padding (RFC 4648), for HTTP basic authentication.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18u32, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[((n >> shift) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(extra: &str) -> Profile {
        Profile::parse(
            "p.share",
            format!(r#"{{"shareCredentialsVersion":1,"endpoint":"https://h.example/ds/","bearerToken":"tok"{extra}}}"#)
                .as_bytes(),
        )
        .unwrap()
    }

    #[test]
    fn every_request_goes_to_the_endpoint_with_the_token() {
        let s = profile("").server(None).unwrap();
        let q = Query {
            version: Some(3),
            limit_hint: Some(100),
            ..Query::default()
        };
        let reqs = [
            s.list_shares(None),
            s.list_shares(Some("a b&c")),
            s.list_schemas("sh", None),
            s.list_tables("sh", "sc", None),
            s.list_all_tables("sh", None),
            s.table_version("sh", "sc", "t", Some("2024-01-01T00:00:00Z")),
            s.metadata("sh", "sc", "t", ResponseFormat::Delta),
            s.query("sh", "sc", "t", &q, ResponseFormat::Parquet),
            s.changes("sh", "sc", "t", 1, Some(4), ResponseFormat::Delta),
            s.temporary_credentials("sh", "sc", "t", None),
            s.metadata_at_timestamp(
                "sh",
                "sc",
                "t",
                "2024-01-01T00:00:00.001Z",
                ResponseFormat::Delta,
            ),
        ];
        for r in &reqs {
            assert!(r.url.starts_with("https://h.example/ds/shares"), "{r:?}");
            assert!(
                r.headers
                    .contains(&("authorization".into(), "Bearer tok".into()))
            );
            assert!(!format!("{r:?}").contains("tok\""));
        }
        assert_eq!(
            reqs[1].url,
            "https://h.example/ds/shares?maxResults=500&pageToken=a%20b%26c"
        );
        assert_eq!(
            reqs[5].url,
            "https://h.example/ds/shares/sh/schemas/sc/tables/t/version?startingTimestamp=2024-01-01T00%3A00%3A00Z"
        );
        assert_eq!(
            reqs[7].body.as_deref(),
            Some(r#"{"version":3,"limitHint":100}"#)
        );
        assert_eq!(
            reqs[8].url,
            "https://h.example/ds/shares/sh/schemas/sc/tables/t/changes?startingVersion=1&includeHistoricalMetadata=true&endingVersion=4"
        );
        assert!(
            reqs[6]
                .headers
                .iter()
                .any(|(k, v)| k == "delta-sharing-capabilities"
                    && v.starts_with(
                        "responseformat=delta;readerfeatures=deletionvectors,columnmapping"
                    ))
        );
        assert_eq!(
            reqs[10].url,
            "https://h.example/ds/shares/sh/schemas/sc/tables/t/metadata?timestamp=2024-01-01T00%3A00%3A00.001Z"
        );
        // a name cannot reshape the path
        let r = s.list_tables("../x", "a/b?c", None);
        assert_eq!(
            r.url,
            "https://h.example/ds/shares/..%2Fx/schemas/a%2Fb%3Fc/tables?maxResults=500"
        );
    }

    #[test]
    fn oauth_client_credentials_are_exchanged_at_the_token_endpoint() {
        let p = Profile::parse(
            "p.share",
            br#"{"shareCredentialsVersion":2,"type":"oauth_client_credentials","endpoint":"https://h/ds","tokenEndpoint":"https://login.example/token","clientId":"id","clientSecret":"secret","scope":"a b"}"#,
        )
        .unwrap();
        assert!(p.server(None).is_err());
        let r = p.oauth_token().unwrap();
        assert_eq!(
            (r.method, r.url.as_str()),
            ("POST", "https://login.example/token")
        );
        assert_eq!(
            r.body.as_deref(),
            Some("grant_type=client_credentials&scope=a%20b")
        );
        // base64("id:secret")
        assert!(
            r.headers
                .contains(&("authorization".into(), "Basic aWQ6c2VjcmV0".into()))
        );
        let t = OAuthToken {
            access_token: "at".into(),
            expires_at_ms: 0,
        };
        let s = p.server(Some(&t)).unwrap();
        assert!(
            s.list_shares(None)
                .headers
                .contains(&("authorization".into(), "Bearer at".into()))
        );
        assert!(profile("").oauth_token().is_none());
        // the id and secret are form-urlencoded before they are joined (RFC 6749 §2.3.1)
        let p = Profile::parse(
            "p.share",
            br#"{"shareCredentialsVersion":2,"type":"oauth_client_credentials","endpoint":"https://h/ds","tokenEndpoint":"https://login.example/token","clientId":"id","clientSecret":"s:e c%"}"#,
        )
        .unwrap();
        let r = p.oauth_token().unwrap();
        assert!(
            r.headers
                .contains(&("authorization".into(), "Basic aWQ6cyUzQWUrYyUyNQ==".into()))
        );
    }

    #[test]
    fn base64_pads_as_the_rfc_says() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64(i.as_bytes()), o);
        }
    }
}
