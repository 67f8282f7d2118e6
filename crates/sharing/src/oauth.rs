//! The answer of an OAuth token endpoint to client credentials (RFC 6749 §5.1):
//! `access_token` and `expires_in` (seconds; some endpoints send it as a string).

use std::fmt;

use crate::answer::{answer_error, json_answer};
use crate::error::SharingError;
use crate::profile::Profile;
use crate::request::Request;

/// A bearer token from the token endpoint (`Debug` hides it).
#[derive(Clone, PartialEq, Eq)]
pub struct OAuthToken {
    /// The token.
    pub access_token: String,
    /// When it expires, in ms since the epoch.
    pub expires_at_ms: i64,
}

impl fmt::Debug for OAuthToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthToken")
            .field("expires_at_ms", &self.expires_at_ms)
            .finish_non_exhaustive()
    }
}

/// A token is replaced this long before it expires (less for short-lived ones: half
/// their life), as the connectors do.
const REFRESH_MARGIN_MS: i64 = 5 * 60 * 1000;

impl OAuthToken {
    /// Reads the answer to [`Profile::oauth_token`] (`req`), received at `now_ms`.
    pub fn parse(
        profile: &Profile,
        req: &Request,
        status: u16,
        body: &[u8],
        now_ms: i64,
    ) -> Result<OAuthToken, SharingError> {
        if !(200..300).contains(&status) {
            return Err(answer_error(&req.url, &req.what, status, body));
        }
        let v = json_answer(&req.url, &req.what, body)?;
        let invalid = |why: &str| SharingError::InvalidAnswer {
            endpoint: req.url.clone(),
            what: format!("{} ({})", req.what, profile.source),
            why: why.to_string(),
        };
        let access_token = v
            .get("access_token")
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .ok_or_else(|| invalid("no access_token"))?
            .to_string();
        let expires_in = v
            .get("expires_in")
            .and_then(|e| e.as_i64().or_else(|| e.as_str()?.trim().parse().ok()))
            .filter(|s| *s > 0)
            .ok_or_else(|| invalid("no expires_in as a positive number of seconds"))?;
        Ok(OAuthToken {
            access_token,
            expires_at_ms: now_ms.saturating_add(expires_in.saturating_mul(1000)),
        })
    }

    /// Whether to ask for a new token at `now_ms`, having got this one at `got_ms`.
    pub fn needs_refresh(&self, got_ms: i64, now_ms: i64) -> bool {
        let life = self.expires_at_ms.saturating_sub(got_ms);
        let margin = REFRESH_MARGIN_MS.min(life / 2);
        now_ms >= self.expires_at_ms.saturating_sub(margin)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        Profile::parse(
            "p.share",
            br#"{"shareCredentialsVersion":2,"type":"oauth_client_credentials","endpoint":"https://h/ds","tokenEndpoint":"https://login.example/token","clientId":"id","clientSecret":"secret"}"#,
        )
        .unwrap()
    }

    #[test]
    fn a_token_and_its_expiry_are_read() {
        let p = profile();
        let req = p.oauth_token().unwrap();
        for body in [
            r#"{"access_token":"at","expires_in":3600,"token_type":"Bearer"}"#,
            r#"{"access_token":"at","expires_in":"3600"}"#,
        ] {
            let t = OAuthToken::parse(&p, &req, 200, body.as_bytes(), 1_000).unwrap();
            assert_eq!(
                (t.access_token.as_str(), t.expires_at_ms),
                ("at", 3_601_000)
            );
            assert!(!format!("{t:?}").contains("\"at\""));
            assert!(!t.needs_refresh(1_000, 1_000 + 3_600_000 - REFRESH_MARGIN_MS - 1));
            assert!(t.needs_refresh(1_000, 1_000 + 3_600_000 - REFRESH_MARGIN_MS));
        }
        // a 60 s token is replaced after half its life
        let t = OAuthToken::parse(&p, &req, 200, br#"{"access_token":"a","expires_in":60}"#, 0)
            .unwrap();
        assert!(!t.needs_refresh(0, 29_999) && t.needs_refresh(0, 30_000));
    }

    #[test]
    fn a_bad_token_answer_is_an_error() {
        let p = profile();
        let req = p.oauth_token().unwrap();
        for (status, body, want) in [
            (
                401,
                r#"{"error":"invalid_client","error_description":"bad secret"}"#,
                "bad secret",
            ),
            (200, r#"{"expires_in":10}"#, "no access_token"),
            (200, r#"{"access_token":"a","expires_in":-1}"#, "expires_in"),
            (200, "<html>", "not JSON"),
        ] {
            let e = OAuthToken::parse(&p, &req, status, body.as_bytes(), 0).unwrap_err();
            assert!(e.to_string().contains(want), "{body}: {e}");
        }
    }
}
