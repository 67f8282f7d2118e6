//! Where the catalog is and the token for it: `DATABRICKS_HOST`/`DATABRICKS_TOKEN`
//! (Databricks) or `UC_ENDPOINT`/`UC_TOKEN` (OSS Unity Catalog), or the options
//! `uc_endpoint`/`uc_token`, which win.

use std::fmt;

use crate::error::CatalogError;

/// The catalog's REST endpoint and bearer token (`Debug` hides the token).
#[derive(Clone, PartialEq, Eq)]
pub struct CatalogConfig {
    /// `scheme://host[:port][/path]`, no trailing `/`.
    pub endpoint: String,
    /// The bearer token; sent only to `endpoint`.
    pub token: String,
}

impl fmt::Debug for CatalogConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CatalogConfig")
            .field("endpoint", &self.endpoint)
            .field("token", &"<hidden>")
            .finish()
    }
}

/// Option keys, then environment variables, for each setting (first found wins).
const ENDPOINT_KEYS: [&str; 4] = [
    "uc_endpoint",
    "databricks_host",
    "UC_ENDPOINT",
    "DATABRICKS_HOST",
];
const TOKEN_KEYS: [&str; 4] = [
    "uc_token",
    "databricks_token",
    "UC_TOKEN",
    "DATABRICKS_TOKEN",
];

impl CatalogConfig {
    /// The configuration from `options` (lowercase keys) and then `env` (a lookup of
    /// environment variables or a worker's vars and secrets).
    pub fn from_sources(
        options: &[(String, String)],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<CatalogConfig, CatalogError> {
        let find = |keys: [&str; 4]| {
            keys.iter().find_map(|k| {
                let v = if k.chars().all(|c| c.is_ascii_lowercase() || c == '_') {
                    options
                        .iter()
                        .find(|(o, _)| o.eq_ignore_ascii_case(k))
                        .map(|(_, v)| v.clone())
                } else {
                    env(k)
                };
                v.map(|v| v.trim().to_string()).filter(|v| !v.is_empty())
            })
        };
        let endpoint =
            find(ENDPOINT_KEYS).ok_or_else(|| CatalogError::NotConfigured("no endpoint".into()))?;
        let token =
            find(TOKEN_KEYS).ok_or_else(|| CatalogError::NotConfigured("no token".into()))?;
        Ok(CatalogConfig {
            endpoint: check_endpoint(&endpoint)?,
            token,
        })
    }
}

/// `https://host[:port][/path]`, or `http://` to a loopback host only (a token never
/// crosses a network in clear); a bare host (`adb-1.azuredatabricks.net`, as
/// `DATABRICKS_HOST` often is) is taken as https. No user info, query or fragment.
pub(crate) fn check_endpoint(given: &str) -> Result<String, CatalogError> {
    let bad = |why: &str| CatalogError::BadEndpoint {
        endpoint: given.to_string(),
        why: why.to_string(),
    };
    let text = if given.contains("://") {
        given.to_string()
    } else {
        format!("https://{given}")
    };
    let u = url::Url::parse(&text).map_err(|e| bad(&format!("is not a URL ({e})")))?;
    let host = u.host_str().unwrap_or("");
    let loopback = matches!(host, "127.0.0.1" | "localhost" | "[::1]");
    match u.scheme() {
        "https" => {}
        "http" if loopback => {}
        "http" => {
            return Err(bad(
                "is plain http to another machine: the token would travel in clear; use https",
            ));
        }
        _ => return Err(bad("is not an https:// URL")),
    }
    if host.is_empty() {
        return Err(bad("names no host"));
    }
    if !u.username().is_empty()
        || u.password().is_some()
        || u.query().is_some()
        || u.fragment().is_some()
    {
        return Err(bad("must not carry user info, a query or a fragment"));
    }
    Ok(u.as_str().trim_end_matches('/').to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn options_then_environment() {
        let c = CatalogConfig::from_sources(
            &[],
            env(&[
                ("DATABRICKS_HOST", "adb-1.azuredatabricks.net/"),
                ("DATABRICKS_TOKEN", "dapi1"),
            ]),
        )
        .unwrap();
        assert_eq!(c.endpoint, "https://adb-1.azuredatabricks.net");
        assert!(!format!("{c:?}").contains("dapi1"));
        let c = CatalogConfig::from_sources(
            &[("uc_endpoint".into(), "http://127.0.0.1:8080".into())],
            env(&[("UC_TOKEN", "t"), ("DATABRICKS_HOST", "x.example")]),
        )
        .unwrap();
        assert_eq!(c.endpoint, "http://127.0.0.1:8080");
        assert!(CatalogConfig::from_sources(&[], env(&[("UC_TOKEN", "t")])).is_err());
        assert!(CatalogConfig::from_sources(&[], env(&[("UC_ENDPOINT", "https://h")])).is_err());
    }

    #[test]
    fn tokens_go_only_to_https_or_loopback() {
        for bad in [
            "http://uc.example.com",
            "ftp://h",
            "https://u:p@h",
            "https://h/?x=1",
            "https://h/#f",
        ] {
            assert!(check_endpoint(bad).is_err(), "{bad}");
        }
        for good in [
            "https://h",
            "http://localhost:8080",
            "https://h/uc/",
            "http://[::1]:1",
        ] {
            assert!(check_endpoint(good).is_ok(), "{good}");
        }
    }
}
