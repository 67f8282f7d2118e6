//! Read credentials the catalog vends for a table, and when to ask again.

use std::fmt;

use crate::config::CatalogConfig;
use crate::error::CatalogError;
use crate::request::Request;
use crate::table::{TableInfo, invalid_answer, json_answer};

/// Credentials for one table's storage, valid until `expiration_ms`.
#[derive(Clone, PartialEq, Eq)]
pub struct Vended {
    /// The credential.
    pub kind: VendedKind,
    /// When it expires (ms since the epoch); `None` when the catalog does not say.
    pub expiration_ms: Option<i64>,
}

/// The kinds of credential Unity Catalog vends (`Debug` hides them all).
#[derive(Clone, PartialEq, Eq)]
pub enum VendedKind {
    /// AWS (or R2) temporary credentials.
    Aws {
        /// Access key id.
        access_key_id: String,
        /// Secret access key.
        secret_access_key: String,
        /// Session token.
        session_token: Option<String>,
    },
    /// An Azure SAS (user delegation), without a leading `?`.
    AzureSas(String),
    /// A GCS OAuth access token.
    GcpToken(String),
    /// None: the storage needs no credential (a local or public location).
    None,
}

impl fmt::Debug for Vended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match &self.kind {
            VendedKind::Aws { .. } => "Aws(<hidden>)",
            VendedKind::AzureSas(_) => "AzureSas(<hidden>)",
            VendedKind::GcpToken(_) => "GcpToken(<hidden>)",
            VendedKind::None => "None",
        };
        f.debug_struct("Vended")
            .field("kind", &kind)
            .field("expiration_ms", &self.expiration_ms)
            .finish()
    }
}

/// At most this long before expiry, credentials are replaced (less for short-lived ones:
/// half their life).
const REFRESH_MARGIN_MS: i64 = 5 * 60 * 1000;

impl Vended {
    /// Read the answer to [`CatalogConfig::read_credentials`].
    pub fn parse(
        config: &CatalogConfig,
        req: &Request,
        table: &TableInfo,
        status: u16,
        body: &[u8],
    ) -> Result<Vended, CatalogError> {
        let v = json_answer(config, req, &table.full_name, status, body)?;
        let invalid = |why: &str| invalid_answer(config, req, why);
        let field = |o: &str, k: &str| {
            v.get(o)
                .and_then(|x| x.get(k))
                .and_then(|x| x.as_str())
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let aws = |o: &str| {
            Some(VendedKind::Aws {
                access_key_id: field(o, "access_key_id")?,
                secret_access_key: field(o, "secret_access_key")?,
                session_token: field(o, "session_token"),
            })
        };
        let kind = aws("aws_temp_credentials")
            .or_else(|| aws("r2_temp_credentials"))
            .or_else(|| {
                field("azure_user_delegation_sas", "sas_token")
                    .map(|s| VendedKind::AzureSas(s.trim_start_matches('?').to_string()))
            })
            .or_else(|| field("gcp_oauth_token", "oauth_token").map(VendedKind::GcpToken));
        let kind = match kind {
            Some(k) => k,
            None if table.storage_location.starts_with("file:") => VendedKind::None,
            None => {
                return Err(CatalogError::NoCredential {
                    name: table.full_name.clone(),
                    why: "the answer holds no AWS, R2, Azure or GCP credential".into(),
                });
            }
        };
        let expiration_ms = match v.get("expiration_time") {
            None | Some(serde_json::Value::Null) => None,
            Some(t) => Some(
                t.as_i64()
                    .ok_or_else(|| invalid("expiration_time is not a number"))?,
            ),
        };
        Ok(Vended {
            kind,
            expiration_ms,
        })
    }

    /// Whether credentials vended at `issued_ms` should be replaced at `now_ms`: within
    /// five minutes of expiry, or half their life for short-lived ones.
    pub fn stale(&self, issued_ms: i64, now_ms: i64) -> bool {
        let Some(exp) = self.expiration_ms else {
            return false;
        };
        let margin = REFRESH_MARGIN_MS.min((exp - issued_ms).max(0) / 2);
        now_ms >= exp - margin
    }

    /// Store options for object_store's builders (`aws_*`, `azure_*`, `google_*`).
    pub fn store_options(&self) -> Vec<(String, String)> {
        let kv = |k: &str, v: &str| (k.to_string(), v.to_string());
        match &self.kind {
            VendedKind::Aws {
                access_key_id,
                secret_access_key,
                session_token,
            } => {
                let mut o = vec![
                    kv("aws_access_key_id", access_key_id),
                    kv("aws_secret_access_key", secret_access_key),
                ];
                if let Some(t) = session_token {
                    o.push(kv("aws_session_token", t));
                }
                o
            }
            VendedKind::AzureSas(sas) => vec![kv("azure_storage_sas_key", sas)],
            VendedKind::GcpToken(_) | VendedKind::None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> TableInfo {
        TableInfo {
            full_name: "m.s.t".into(),
            table_id: "id".into(),
            storage_location: "s3://b/t".into(),
            s3_endpoint: None,
        }
    }

    fn parse(body: &str) -> Result<Vended, CatalogError> {
        let c = CatalogConfig {
            endpoint: "https://h".into(),
            token: "t".into(),
        };
        let r = c.read_credentials("id", "m.s.t");
        Vended::parse(&c, &r, &table(), 200, body.as_bytes())
    }

    #[test]
    fn each_kind_of_credential() {
        let v = parse(r#"{"aws_temp_credentials":{"access_key_id":"AK","secret_access_key":"SK","session_token":"ST"},"expiration_time":1000}"#).unwrap();
        assert_eq!(v.expiration_ms, Some(1000));
        assert_eq!(v.store_options().len(), 3);
        assert!(!format!("{v:?}").contains("SK"));
        let v = parse(r#"{"azure_user_delegation_sas":{"sas_token":"?sv=1&sig=x"}}"#).unwrap();
        assert!(v.kind == VendedKind::AzureSas("sv=1&sig=x".into()));
        let v = parse(r#"{"gcp_oauth_token":{"oauth_token":"ya29"}}"#).unwrap();
        assert!(v.kind == VendedKind::GcpToken("ya29".into()));
        assert!(matches!(
            parse("{}"),
            Err(CatalogError::NoCredential { .. })
        ));
        assert!(
            parse(r#"{"azure_user_delegation_sas":{"sas_token":"x"},"expiration_time":"soon"}"#)
                .is_err()
        );
    }

    #[test]
    fn replaced_before_they_expire() {
        let v = Vended {
            kind: VendedKind::None,
            expiration_ms: Some(3_600_000),
        };
        assert!(!v.stale(0, 3_000_000));
        assert!(v.stale(0, 3_300_000)); // five minutes before
        let short = Vended {
            kind: VendedKind::None,
            expiration_ms: Some(20_000),
        };
        assert!(!short.stale(0, 9_000));
        assert!(short.stale(0, 10_000)); // half its life
        let forever = Vended {
            kind: VendedKind::None,
            expiration_ms: None,
        };
        assert!(!forever.stale(0, i64::MAX));
    }
}
