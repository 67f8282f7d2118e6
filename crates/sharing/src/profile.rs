//! A profile file, as the data provider hands it to a recipient (PROTOCOL.md "Profile File
//! Format"): `shareCredentialsVersion` 1 (`endpoint`, `bearerToken`, `expirationTime`) or 2
//! (`type`: `bearer_token`, or `oauth_client_credentials` with `tokenEndpoint`, `clientId`,
//! `clientSecret`, `scope`, as the delta-sharing connectors read it).

use std::fmt;

use crate::error::SharingError;

/// The most bytes of a profile file read: a real one is a few hundred.
pub const MAX_PROFILE_BYTES: usize = 64 * 1024;

/// The newest profile format read.
const NEWEST_VERSION: u64 = 2;

/// How requests to the server are authorized (`Debug` hides the secrets).
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    /// A bearer token, valid until `expiration_ms` when the profile says.
    Bearer {
        /// The token.
        token: String,
        /// `expirationTime` in ms since the epoch.
        expiration_ms: Option<i64>,
        /// `expirationTime` as written, for messages.
        expiration: Option<String>,
    },
    /// OAuth 2.0 client credentials, exchanged at `token_endpoint` for a bearer token
    /// ([`crate::Request::oauth_token`], [`crate::OAuthToken`]).
    OAuthClientCredentials {
        /// Where tokens are asked for (checked as the endpoint is).
        token_endpoint: String,
        /// The client id.
        client_id: String,
        /// The client secret.
        client_secret: String,
        /// The scope asked for, if any.
        scope: Option<String>,
    },
}

/// A profile: the server and how to authorize to it.
#[derive(Clone, PartialEq, Eq)]
pub struct Profile {
    /// Where the profile came from (a path or URL), for messages.
    pub source: String,
    /// The server's endpoint: `https://…` (or `http://` to a loopback host), no trailing
    /// `/`, no user info, query or fragment.
    pub endpoint: String,
    /// How requests are authorized.
    pub auth: Auth,
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Auth::Bearer { expiration, .. } => {
                write!(f, "Bearer(<hidden>, expires {expiration:?})")
            }
            Auth::OAuthClientCredentials { token_endpoint, .. } => {
                write!(f, "OAuthClientCredentials({token_endpoint}, <hidden>)")
            }
        }
    }
}

impl fmt::Debug for Profile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Profile")
            .field("source", &self.source)
            .field("endpoint", &self.endpoint)
            .field("auth", &self.auth)
            .finish()
    }
}

impl Profile {
    /// Reads the profile `text` (from `source`, named in errors).
    pub fn parse(source: &str, text: &[u8]) -> Result<Profile, SharingError> {
        let bad = |why: String| SharingError::BadProfile {
            profile: source.to_string(),
            why,
        };
        if text.len() > MAX_PROFILE_BYTES {
            return Err(bad(format!(
                "is {} bytes, more than a profile holds (MAX_PROFILE_BYTES {MAX_PROFILE_BYTES})",
                text.len()
            )));
        }
        let v: serde_json::Value = deltalens_json::from_slice(text)
            .map_err(|e| bad(format!("is not a JSON profile file ({e})")))?;
        let text_field = |k: &str| -> Result<String, SharingError> {
            v.get(k)
                .and_then(|x| x.as_str())
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| bad(format!("has no {k}")))
        };
        let version = v
            .get("shareCredentialsVersion")
            .and_then(|x| x.as_u64().or_else(|| x.as_str()?.trim().parse().ok()))
            .ok_or_else(|| bad("has no shareCredentialsVersion".into()))?;
        if version == 0 || version > NEWEST_VERSION {
            return Err(bad(format!(
                "has shareCredentialsVersion {version}; this deltalens reads 1 and 2 (a newer deltalens may read it)"
            )));
        }
        let endpoint = check_endpoint(&text_field("endpoint")?).map_err(&bad)?;
        let kind = match version {
            1 => "bearer_token".to_string(),
            _ => text_field("type")?,
        };
        let auth = match kind.as_str() {
            "bearer_token" => {
                let expiration = v
                    .get("expirationTime")
                    .and_then(|x| x.as_str())
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string);
                let expiration_ms = match &expiration {
                    Some(e) => Some(
                        chrono::DateTime::parse_from_rfc3339(e)
                            .map_err(|err| {
                                bad(format!(
                                    "has an expirationTime that is not ISO 8601: {e:?} ({err})"
                                ))
                            })?
                            .timestamp_millis(),
                    ),
                    None => None,
                };
                Auth::Bearer {
                    token: text_field("bearerToken")?,
                    expiration_ms,
                    expiration,
                }
            }
            "oauth_client_credentials" => Auth::OAuthClientCredentials {
                token_endpoint: check_endpoint(&text_field("tokenEndpoint")?)
                    .map_err(|why| bad(format!("tokenEndpoint: {why}")))?,
                client_id: text_field("clientId")?,
                client_secret: text_field("clientSecret")?,
                scope: text_field("scope").ok(),
            },
            other => {
                return Err(bad(format!(
                    "has type {other:?}; deltalens reads bearer_token and oauth_client_credentials profiles"
                )));
            }
        };
        Ok(Profile {
            source: source.to_string(),
            endpoint,
            auth,
        })
    }

    /// An error when the bearer token has expired at `now_ms` (ms since the epoch).
    pub fn check_expiry(&self, now_ms: i64) -> Result<(), SharingError> {
        match &self.auth {
            Auth::Bearer {
                expiration_ms: Some(at),
                expiration,
                ..
            } if *at <= now_ms => Err(SharingError::Expired {
                profile: self.source.clone(),
                at: expiration.clone().unwrap_or_default(),
            }),
            _ => Ok(()),
        }
    }
}

/// `https://host[:port][/path]`, or `http://` to a loopback host only (a token never
/// crosses a network in clear); no user info, query or fragment; no trailing `/`.
pub(crate) fn check_endpoint(given: &str) -> Result<String, String> {
    let u = url::Url::parse(given).map_err(|e| format!("{given:?} is not a URL ({e})"))?;
    match u.scheme() {
        "https" => {}
        "http" if is_loopback(&u) => {}
        "http" => {
            return Err(format!(
                "{given:?} is plain http to another machine: the token would travel in clear; use https"
            ));
        }
        _ => return Err(format!("{given:?} is not an https:// URL")),
    }
    if u.host_str().unwrap_or("").is_empty() {
        return Err(format!("{given:?} names no host"));
    }
    if !u.username().is_empty()
        || u.password().is_some()
        || u.query().is_some()
        || u.fragment().is_some()
    {
        return Err(format!(
            "{given:?} must not carry user info, a query or a fragment"
        ));
    }
    Ok(u.as_str().trim_end_matches('/').to_string())
}

/// Whether `u` names this machine (`localhost`, 127.0.0.0/8, `[::1]`).
pub(crate) fn is_loopback(u: &url::Url) -> bool {
    match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Profile, SharingError> {
        Profile::parse("config.share", text.as_bytes())
    }

    #[test]
    fn version_1_is_a_bearer_token_with_an_expiry() {
        let p = parse(
            r#"{"shareCredentialsVersion":1,"endpoint":"https://sharing.delta.io/delta-sharing/","bearerToken":"tok","expirationTime":"2021-11-12T00:12:29.0Z"}"#,
        )
        .unwrap();
        assert_eq!(p.endpoint, "https://sharing.delta.io/delta-sharing");
        let Auth::Bearer {
            token,
            expiration_ms,
            ..
        } = &p.auth
        else {
            panic!("{p:?}")
        };
        assert_eq!(token, "tok");
        assert_eq!(*expiration_ms, Some(1_636_675_949_000));
        assert!(!format!("{p:?}").contains("tok\""));
        assert!(p.check_expiry(1_636_675_948_999).is_ok());
        let e = p.check_expiry(1_636_675_949_000).unwrap_err();
        assert!(
            e.to_string().contains("expired at 2021-11-12T00:12:29.0Z"),
            "{e}"
        );
        // no expirationTime: never expires
        let p =
            parse(r#"{"shareCredentialsVersion":1,"endpoint":"https://h/p","bearerToken":"t"}"#)
                .unwrap();
        assert!(p.check_expiry(i64::MAX).is_ok());
    }

    #[test]
    fn version_2_reads_bearer_and_oauth_client_credentials() {
        let p = parse(
            r#"{"shareCredentialsVersion":2,"type":"oauth_client_credentials","endpoint":"https://h/ds","tokenEndpoint":"https://login.example/oauth2/token","clientId":"id","clientSecret":"s3cret","scope":"all-apis"}"#,
        )
        .unwrap();
        assert!(
            p.auth
                == Auth::OAuthClientCredentials {
                    token_endpoint: "https://login.example/oauth2/token".into(),
                    client_id: "id".into(),
                    client_secret: "s3cret".into(),
                    scope: Some("all-apis".into()),
                }
        );
        assert!(!format!("{p:?}").contains("s3cret"));
        let p = parse(
            r#"{"shareCredentialsVersion":2,"type":"bearer_token","endpoint":"http://127.0.0.1:8080/ds","bearerToken":"t"}"#,
        )
        .unwrap();
        assert!(matches!(p.auth, Auth::Bearer { .. }));
    }

    #[test]
    fn a_profile_that_cannot_be_used_says_why() {
        for (text, why) in [
            ("{", "not a JSON profile"),
            (
                r#"{"endpoint":"https://h","bearerToken":"t"}"#,
                "no shareCredentialsVersion",
            ),
            (
                r#"{"shareCredentialsVersion":3,"endpoint":"https://h","bearerToken":"t"}"#,
                "reads 1 and 2",
            ),
            (
                r#"{"shareCredentialsVersion":1,"endpoint":"http://sharing.example/ds","bearerToken":"t"}"#,
                "plain http",
            ),
            (
                r#"{"shareCredentialsVersion":1,"endpoint":"file:///etc","bearerToken":"t"}"#,
                "not an https",
            ),
            (
                r#"{"shareCredentialsVersion":1,"endpoint":"https://u:p@h/ds","bearerToken":"t"}"#,
                "user info",
            ),
            (
                r#"{"shareCredentialsVersion":1,"endpoint":"https://h/ds?x=1","bearerToken":"t"}"#,
                "query",
            ),
            (
                r#"{"shareCredentialsVersion":1,"endpoint":"https://h/ds"}"#,
                "no bearerToken",
            ),
            (
                r#"{"shareCredentialsVersion":1,"endpoint":"https://h/ds","bearerToken":"t","expirationTime":"soon"}"#,
                "not ISO 8601",
            ),
            (
                r#"{"shareCredentialsVersion":2,"type":"basic","endpoint":"https://h/ds"}"#,
                "reads bearer_token and oauth_client_credentials",
            ),
            (
                r#"{"shareCredentialsVersion":2,"type":"oauth_client_credentials","endpoint":"https://h/ds","tokenEndpoint":"http://evil.example/t","clientId":"i","clientSecret":"s"}"#,
                "tokenEndpoint",
            ),
        ] {
            let e = parse(text).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("config.share"), "{text}: {e}");
        }
        let big = format!(r#"{{"pad":"{}"}}"#, "x".repeat(MAX_PROFILE_BYTES));
        assert!(
            parse(&big)
                .unwrap_err()
                .to_string()
                .contains("MAX_PROFILE_BYTES")
        );
    }

    #[test]
    fn loopback_is_this_machine_only() {
        for (u, want) in [
            ("http://127.0.0.1:1/", true),
            ("http://127.1.2.3/", true),
            ("http://localhost/", true),
            ("http://[::1]/", true),
            ("http://127.0.0.1.example/", false),
            ("http://10.0.0.1/", false),
        ] {
            assert_eq!(is_loopback(&url::Url::parse(u).unwrap()), want, "{u}");
        }
    }
}
