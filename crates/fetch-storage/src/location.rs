//! Where a table URL's objects live over HTTP: the object URL for each path, how to list,
//! and how to authorise. Pure (no browser), so it is tested natively.

use std::fmt;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

/// Characters kept as they are in URL paths (S3's and Azure's unreserved set plus `/`).
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Characters kept as they are in query values and SigV4 canonical strings.
const QUERY: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Encode a path for a URL (keeping `/`).
pub fn encode_path(p: &str) -> String {
    utf8_percent_encode(p, PATH).to_string()
}

/// Encode a query value (or a SigV4 canonical query component).
pub fn encode_query(p: &str) -> String {
    utf8_percent_encode(p, QUERY).to_string()
}

/// What the user typed beside the table URL: endpoints and credentials. Credentials live
/// only in this value (never in a URL shown to the user, never logged: `Debug` hides them).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct BrowserOptions {
    /// S3-compatible endpoint (`https://<account>.r2.cloudflarestorage.com`,
    /// `http://127.0.0.1:9000`); AWS when empty.
    pub s3_endpoint: Option<String>,
    /// S3 region (`us-east-1` when empty; R2 uses `auto`).
    pub s3_region: Option<String>,
    pub s3_access_key_id: Option<String>,
    pub s3_secret_access_key: Option<String>,
    pub s3_session_token: Option<String>,
    /// `bucket.host/key` instead of `host/bucket/key`.
    pub s3_virtual_hosted: bool,
    /// Azure SAS token (with or without the leading `?`).
    pub azure_sas: Option<String>,
    /// Azure blob endpoint including the account (`http://127.0.0.1:10000/devstoreaccount1`
    /// for azurite); `https://<account>.blob.core.windows.net` when empty.
    pub azure_endpoint: Option<String>,
    /// Storage account for `az://container/path`.
    pub azure_account: Option<String>,
}

impl fmt::Debug for BrowserOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hidden = |o: &Option<String>| o.as_ref().map(|_| "<hidden>");
        f.debug_struct("BrowserOptions")
            .field("s3_endpoint", &self.s3_endpoint)
            .field("s3_region", &self.s3_region)
            .field("s3_access_key_id", &hidden(&self.s3_access_key_id))
            .field("s3_secret_access_key", &hidden(&self.s3_secret_access_key))
            .field("s3_session_token", &hidden(&self.s3_session_token))
            .field("s3_virtual_hosted", &self.s3_virtual_hosted)
            .field("azure_sas", &hidden(&self.azure_sas))
            .field("azure_endpoint", &self.azure_endpoint)
            .field("azure_account", &self.azure_account)
            .finish()
    }
}

/// S3 access keys.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl fmt::Debug for S3Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("S3Credentials(<hidden>)")
    }
}

/// The protocol spoken to the store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Service {
    /// Static hosting: GET/HEAD with Range, no listing.
    Http,
    /// S3 and S3-compatible stores: `bucket_url` answers ListObjectsV2.
    S3 {
        bucket_url: String,
        region: String,
        credentials: Option<S3Credentials>,
    },
    /// Azure Blob Storage: `container_url` answers List Blobs; `sas` is appended to
    /// every request.
    Azure {
        container_url: String,
        sas: Option<String>,
    },
    /// Google Cloud Storage (public buckets): the JSON API lists.
    Gcs { bucket: String },
}

/// A table's root resolved to HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// URL of the table root (no trailing `/`, no query).
    pub root: String,
    /// The table root's key prefix inside its bucket/container (`path/to/table/`, or
    /// empty), for listing.
    pub key_prefix: String,
    pub service: Service,
}

/// Why a table URL cannot be opened in the browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationError(pub String);

impl fmt::Display for LocationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn split_scheme(url: &str) -> Option<(&str, &str)> {
    let (scheme, rest) = url.split_once("://")?;
    Some((scheme, rest))
}

/// `bucket/key/prefix` → (`bucket`, `key/prefix`).
fn split_first(rest: &str) -> (&str, &str) {
    match rest.split_once('/') {
        Some((a, b)) => (a, b.trim_matches('/')),
        None => (rest, ""),
    }
}

fn prefix_of(key: &str) -> String {
    if key.is_empty() {
        String::new()
    } else {
        format!("{key}/")
    }
}

fn join(base: &str, key: &str) -> String {
    if key.is_empty() {
        base.to_string()
    } else {
        format!("{base}/{}", encode_path(key))
    }
}

impl Endpoint {
    /// Resolve a table URL: `s3://`, `s3a://`, `abfss://`, `abfs://`, `az://`, `azure://`,
    /// `gs://`, `https://account.blob.core.windows.net/...`, or any `http(s)://` URL.
    pub fn parse(url: &str, opts: &BrowserOptions) -> Result<Endpoint, LocationError> {
        let url = url.trim().trim_end_matches('/');
        let (scheme, rest) = split_scheme(url).ok_or_else(|| {
            LocationError(format!(
                "'{url}' is not a URL: use s3://bucket/path, abfss://container@account.dfs.core.windows.net/path, az://container/path, gs://bucket/path or https://host/path"
            ))
        })?;
        match scheme {
            "s3" | "s3a" => Ok(Self::s3(rest, opts)),
            "abfss" | "abfs" => {
                // container@account.dfs.core.windows.net/path
                let (authority, key) = split_first(rest);
                let (container, host) = authority.split_once('@').ok_or_else(|| {
                    LocationError(format!(
                        "'{url}': abfss URLs name the container and account as container@account.dfs.core.windows.net"
                    ))
                })?;
                let account = host.split('.').next().unwrap_or(host);
                Ok(Self::azure(account, container, key, opts))
            }
            "az" | "azure" => {
                let (container, key) = split_first(rest);
                let account = opts.azure_account.clone().unwrap_or_default();
                if account.is_empty() && opts.azure_endpoint.is_none() {
                    return Err(LocationError(format!(
                        "'{url}': az:// URLs need the storage account (or an Azure endpoint); or use abfss://{container}@<account>.dfs.core.windows.net/{key}"
                    )));
                }
                Ok(Self::azure(&account, container, key, opts))
            }
            "gs" | "gcs" => {
                let (bucket, key) = split_first(rest);
                Ok(Endpoint {
                    root: join(&format!("https://storage.googleapis.com/{bucket}"), key),
                    key_prefix: prefix_of(key),
                    service: Service::Gcs {
                        bucket: bucket.to_string(),
                    },
                })
            }
            "http" | "https" => {
                let (host, key) = split_first(rest);
                if let Some(account) = host.strip_suffix(".blob.core.windows.net") {
                    let (container, key) = split_first(key);
                    return Ok(Self::azure(account, container, key, opts));
                }
                if let Some(account) = host.strip_suffix(".dfs.core.windows.net") {
                    let (container, key) = split_first(key);
                    return Ok(Self::azure(account, container, key, opts));
                }
                Ok(Endpoint {
                    root: url.to_string(),
                    key_prefix: String::new(),
                    service: Service::Http,
                })
            }
            other => Err(LocationError(format!(
                "'{url}': the browser cannot open {other}:// tables (local files need `deltalens serve`); use s3://, abfss://, az://, gs:// or https://"
            ))),
        }
    }

    fn s3(rest: &str, opts: &BrowserOptions) -> Endpoint {
        let (bucket, key) = split_first(rest);
        let region = opts
            .s3_region
            .clone()
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| "us-east-1".into());
        let endpoint = opts
            .s3_endpoint
            .clone()
            .filter(|e| !e.is_empty())
            .map(|e| e.trim_end_matches('/').to_string());
        let bucket_url = match (endpoint, opts.s3_virtual_hosted) {
            (Some(e), true) => match split_scheme(&e) {
                Some((scheme, host)) => format!("{scheme}://{bucket}.{host}"),
                None => format!("https://{bucket}.{e}"),
            },
            (Some(e), false) => format!("{e}/{bucket}"),
            (None, false) => format!("https://s3.{region}.amazonaws.com/{bucket}"),
            (None, true) => format!("https://{bucket}.s3.{region}.amazonaws.com"),
        };
        let credentials = match (&opts.s3_access_key_id, &opts.s3_secret_access_key) {
            (Some(k), Some(s)) if !k.is_empty() && !s.is_empty() => Some(S3Credentials {
                access_key_id: k.clone(),
                secret_access_key: s.clone(),
                session_token: opts.s3_session_token.clone().filter(|t| !t.is_empty()),
            }),
            _ => None,
        };
        Endpoint {
            root: join(&bucket_url, key),
            key_prefix: prefix_of(key),
            service: Service::S3 {
                bucket_url,
                region,
                credentials,
            },
        }
    }

    fn azure(account: &str, container: &str, key: &str, opts: &BrowserOptions) -> Endpoint {
        let base = opts
            .azure_endpoint
            .clone()
            .filter(|e| !e.is_empty())
            .map(|e| e.trim_end_matches('/').to_string())
            .unwrap_or_else(|| format!("https://{account}.blob.core.windows.net"));
        let container_url = format!("{base}/{container}");
        let sas = opts
            .azure_sas
            .as_ref()
            .map(|s| s.trim_start_matches('?').to_string())
            .filter(|s| !s.is_empty());
        Endpoint {
            root: join(&container_url, key),
            key_prefix: prefix_of(key),
            service: Service::Azure { container_url, sas },
        }
    }

    /// The URL of the object at `path` (relative to the table root), without auth.
    pub fn object_url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.root,
            encode_path(path.trim_start_matches('/'))
        )
    }

    /// Whether this service can list.
    pub fn can_list(&self) -> bool {
        !matches!(self.service, Service::Http)
    }

    /// What the user must change when the store answers 401/403 to `operation`.
    pub fn permission_hint(&self, operation: &str) -> String {
        match (&self.service, operation) {
            (Service::S3 { credentials: None, .. }, _) => {
                "the bucket does not allow anonymous access: enter an access key and secret (s3:GetObject and s3:ListBucket on the table's prefix)".into()
            }
            (Service::S3 { .. }, "list") => {
                "the key lacks s3:ListBucket on the table's prefix (deltalens falls back to finding files by name)".into()
            }
            (Service::S3 { .. }, _) => {
                "the key lacks s3:GetObject on the table's prefix, or the secret, session token or region is wrong".into()
            }
            (Service::Azure { sas: None, .. }, _) => {
                "the container is not public: enter a SAS token with read (r) and list (l) permissions".into()
            }
            (Service::Azure { .. }, "list") => {
                "the SAS token lacks the list (l) permission, or is not a container SAS".into()
            }
            (Service::Azure { .. }, _) => {
                "the SAS token lacks the read (r) permission, has expired, or is for another container".into()
            }
            (Service::Gcs { .. }, _) => {
                "the bucket is not public: grant allUsers roles/storage.objectViewer, or serve the table another way".into()
            }
            (Service::Http, _) => "the server refused the request".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(url: &str, opts: &BrowserOptions) -> Endpoint {
        Endpoint::parse(url, opts).unwrap()
    }

    #[test]
    fn s3_styles() {
        let o = BrowserOptions::default();
        let e = parse("s3://bkt/path/to/t/", &o);
        assert_eq!(e.root, "https://s3.us-east-1.amazonaws.com/bkt/path/to/t");
        assert_eq!(e.key_prefix, "path/to/t/");
        let o = BrowserOptions {
            s3_region: Some("eu-west-1".into()),
            s3_virtual_hosted: true,
            ..Default::default()
        };
        assert_eq!(
            parse("s3://bkt/t", &o).object_url("_delta_log/0.json"),
            "https://bkt.s3.eu-west-1.amazonaws.com/t/_delta_log/0.json"
        );
        let o = BrowserOptions {
            s3_endpoint: Some("http://127.0.0.1:5000/".into()),
            ..Default::default()
        };
        assert_eq!(
            parse("s3a://bkt/a b", &o).root,
            "http://127.0.0.1:5000/bkt/a%20b"
        );
        let o = BrowserOptions {
            s3_endpoint: Some("https://acct.r2.cloudflarestorage.com".into()),
            s3_virtual_hosted: true,
            ..Default::default()
        };
        assert_eq!(
            parse("s3://bkt/t", &o).root,
            "https://bkt.acct.r2.cloudflarestorage.com/t"
        );
        // credentials only with both halves, and never printed
        let o = BrowserOptions {
            s3_access_key_id: Some("AKIA".into()),
            s3_secret_access_key: Some("very-secret".into()),
            ..Default::default()
        };
        let e = parse("s3://bkt/t", &o);
        assert!(matches!(
            e.service,
            Service::S3 {
                credentials: Some(_),
                ..
            }
        ));
        assert!(!format!("{e:?} {o:?}").contains("very-secret"));
    }

    #[test]
    fn azure_forms() {
        let o = BrowserOptions {
            azure_sas: Some("?sv=1&sig=x".into()),
            ..Default::default()
        };
        let a = parse("abfss://cont@acct.dfs.core.windows.net/dir/t", &o);
        assert_eq!(a.root, "https://acct.blob.core.windows.net/cont/dir/t");
        assert_eq!(
            a.service,
            Service::Azure {
                container_url: "https://acct.blob.core.windows.net/cont".into(),
                sas: Some("sv=1&sig=x".into())
            }
        );
        let b = parse("https://acct.blob.core.windows.net/cont/dir/t", &o);
        assert_eq!(a, b);
        assert!(Endpoint::parse("az://cont/t", &BrowserOptions::default()).is_err());
        let o = BrowserOptions {
            azure_endpoint: Some("http://127.0.0.1:10000/devstoreaccount1".into()),
            ..Default::default()
        };
        assert_eq!(
            parse("az://cont/t", &o).root,
            "http://127.0.0.1:10000/devstoreaccount1/cont/t"
        );
    }

    #[test]
    fn gcs_http_and_refusals() {
        let o = BrowserOptions::default();
        let g = parse("gs://b/t", &o);
        assert_eq!(g.root, "https://storage.googleapis.com/b/t");
        assert!(g.can_list());
        let h = parse("https://example.com/tables/t/", &o);
        assert_eq!(h.root, "https://example.com/tables/t");
        assert!(!h.can_list());
        let e = Endpoint::parse("file:///tmp/t", &o).unwrap_err();
        assert!(e.0.contains("deltalens serve"), "{e}");
        assert!(Endpoint::parse("not a url", &o).is_err());
    }
}
