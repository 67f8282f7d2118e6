//! Where a table URL's objects live over HTTP: the object URL for each path, how to list,
//! and how to authorise. Pure (no browser), so it is tested natively.

use std::fmt;

use deltalens_storage::relay;
use deltalens_storage::table_url::{Store, TableUrl, is_azure_account};
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
    /// S3 access key id; requests are anonymous unless it and the secret are set.
    pub s3_access_key_id: Option<String>,
    /// S3 secret access key, paired with the key id.
    pub s3_secret_access_key: Option<String>,
    /// S3 session token of temporary credentials; `None` for long-term keys.
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
    /// A relay (`deltalens serve`, the edge worker) that reads the table with its own
    /// credentials: every request goes to it (see [`deltalens_storage::relay`]), none to
    /// the store, and the credentials above are not used.
    pub relay: Option<String>,
    /// Bearer token for the relay (a worker that requires one); sent to the relay's
    /// origin only.
    pub relay_token: Option<String>,
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
            .field("relay", &self.relay)
            .field("relay_token", &hidden(&self.relay_token))
            .finish()
    }
}

/// S3 access keys.
#[derive(Clone, PartialEq, Eq)]
pub struct S3Credentials {
    /// The access key id.
    pub access_key_id: String,
    /// The secret access key (signs requests; never sent).
    pub secret_access_key: String,
    /// Session token of temporary credentials; `None` for long-term keys.
    pub session_token: Option<String>,
}

impl fmt::Debug for S3Credentials {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("S3Credentials(<hidden>)")
    }
}

/// The protocol spoken to the store (`Debug` hides the SAS, like every credential).
#[derive(Clone, PartialEq, Eq)]
pub enum Service {
    /// Static hosting: GET/HEAD with Range, no listing.
    Http,
    /// S3 and S3-compatible stores: `bucket_url` answers ListObjectsV2.
    S3 {
        /// URL of the bucket (path-style or virtual-hosted), no trailing `/`.
        bucket_url: String,
        /// The region requests are signed for.
        region: String,
        /// Keys to sign requests with (SigV4); `None` for anonymous access.
        credentials: Option<S3Credentials>,
    },
    /// Azure Blob Storage: `container_url` answers List Blobs; `sas` is appended to
    /// every request.
    Azure {
        /// URL of the container, no trailing `/`.
        container_url: String,
        /// SAS token without the leading `?`; `None` for public access.
        sas: Option<String>,
    },
    /// Google Cloud Storage (public buckets): the JSON API lists.
    Gcs {
        /// The bucket's name.
        bucket: String,
    },
    /// A relay server reads the table for us ([`deltalens_storage::relay`]).
    Relay {
        /// The relay's base URL (`http://127.0.0.1:8080`), no trailing `/`.
        base: String,
        /// The table URL, as the relay is asked for it.
        table: String,
        /// Bearer token for the relay, if it needs one.
        token: Option<String>,
    },
}

impl fmt::Debug for Service {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Service::Http => f.write_str("Http"),
            Service::S3 {
                bucket_url,
                region,
                credentials,
            } => f
                .debug_struct("S3")
                .field("bucket_url", bucket_url)
                .field("region", region)
                .field("credentials", credentials)
                .finish(),
            Service::Azure { container_url, sas } => f
                .debug_struct("Azure")
                .field("container_url", container_url)
                .field("sas", &sas.as_ref().map(|_| "<hidden>"))
                .finish(),
            Service::Gcs { bucket } => f.debug_struct("Gcs").field("bucket", bucket).finish(),
            Service::Relay { base, table, token } => f
                .debug_struct("Relay")
                .field("base", base)
                .field("table", table)
                .field("token", &token.as_ref().map(|_| "<hidden>"))
                .finish(),
        }
    }
}

/// A table's root resolved to HTTP.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// URL of the table root (no trailing `/`, no query).
    pub root: String,
    /// The table root's key prefix inside its bucket/container (`path/to/table/`, or
    /// empty), for listing.
    pub key_prefix: String,
    /// How to talk to the store, and list.
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

/// An endpoint typed beside the URL (`https://host[:port][/path]`): parsed, no user
/// info, query or fragment, returned without a trailing `/`.
fn endpoint_option(name: &str, value: &str) -> Result<String, LocationError> {
    let bad = |why: &str| LocationError(format!("the {name} {value:?} {why}"));
    let u = url::Url::parse(value.trim()).map_err(|e| bad(&format!("is not a URL: {e}")))?;
    if !matches!(u.scheme(), "http" | "https") || u.host_str().is_none() {
        return Err(bad("is not an http(s):// URL"));
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

/// `scheme://host[:port]` of `url`, for comparing where a request goes with where a
/// credential belongs.
pub fn origin_of(url: &str) -> Option<String> {
    let u = url::Url::parse(url).ok()?;
    let host = u.host_str()?;
    Some(match u.port_or_known_default() {
        Some(p) => format!("{}://{host}:{p}", u.scheme()),
        None => format!("{}://{host}", u.scheme()),
    })
}

impl Endpoint {
    /// Resolve a table URL: `s3://`, `s3a://`, `abfss://`, `abfs://`, `az://`, `azure://`,
    /// `gs://`, `https://account.blob.core.windows.net/...`, or any `http(s)://` URL —
    /// parsed and checked by [`TableUrl`], the parser every deltalens backend shares.
    pub fn parse(url: &str, opts: &BrowserOptions) -> Result<Endpoint, LocationError> {
        let t = TableUrl::parse(url).map_err(|e| LocationError(e.to_string()))?;
        if let Some(relay) = opts.relay.as_deref().filter(|r| !r.trim().is_empty()) {
            return Self::relay(url, relay, opts);
        }
        match t.store {
            Store::S3 { bucket } => Self::s3(&bucket, &t.key, opts),
            Store::Azure { account, container } => {
                let account = match account {
                    Some(a) => a,
                    None => {
                        let a = opts.azure_account.clone().unwrap_or_default();
                        if a.is_empty() && opts.azure_endpoint.is_none() {
                            return Err(LocationError(format!(
                                "'{url}': az:// URLs need the storage account (or an Azure endpoint); or use abfss://{container}@<account>.dfs.core.windows.net/{}",
                                t.key
                            )));
                        }
                        if !a.is_empty() && !is_azure_account(&a) {
                            return Err(LocationError(format!(
                                "{a:?} is not an Azure storage account name (3 to 24 lowercase letters and digits)"
                            )));
                        }
                        a
                    }
                };
                Self::azure(&account, &container, &t.key, opts)
            }
            Store::Gcs { bucket } => Ok(Endpoint {
                root: join(&format!("https://storage.googleapis.com/{bucket}"), &t.key),
                key_prefix: prefix_of(&t.key),
                service: Service::Gcs { bucket },
            }),
            Store::Http { origin } => Ok(Endpoint {
                root: if t.key.is_empty() {
                    origin
                } else {
                    format!("{origin}/{}", t.key)
                },
                key_prefix: String::new(),
                service: Service::Http,
            }),
            Store::File => Err(LocationError(format!(
                "'{url}': the browser cannot open local files: serve them with `deltalens serve DIR`"
            ))),
            Store::R2 { .. } => Err(LocationError(format!(
                "'{url}': r2:// tables are read by the edge worker through its bucket binding; use s3:// with the R2 endpoint here, or open it through the worker as a relay"
            ))),
            Store::UnityCatalog { .. } => Err(LocationError(format!(
                "'{url}': Unity Catalog tables open through a relay that holds the catalog token: `deltalens serve {url}` or a worker, then give its address as the relay"
            ))),
        }
    }

    /// Every request goes to the relay at `relay`, which reads `table` itself.
    fn relay(table: &str, relay: &str, opts: &BrowserOptions) -> Result<Endpoint, LocationError> {
        let base = endpoint_option("relay", relay)?;
        Ok(Endpoint {
            root: base.clone(),
            key_prefix: String::new(),
            service: Service::Relay {
                base,
                table: table.trim().trim_end_matches('/').to_string(),
                token: opts.relay_token.clone().filter(|t| !t.trim().is_empty()),
            },
        })
    }

    fn s3(bucket: &str, key: &str, opts: &BrowserOptions) -> Result<Endpoint, LocationError> {
        let region = opts
            .s3_region
            .clone()
            .filter(|r| !r.is_empty())
            .unwrap_or_else(|| "us-east-1".into());
        if !region
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        {
            return Err(LocationError(format!("{region:?} is not an S3 region")));
        }
        let endpoint = match opts.s3_endpoint.as_deref().filter(|e| !e.trim().is_empty()) {
            Some(e) => Some(endpoint_option("S3 endpoint", e)?),
            None => None,
        };
        let bucket_url = match (endpoint, opts.s3_virtual_hosted) {
            (Some(e), true) => match e.split_once("://") {
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
        Ok(Endpoint {
            root: join(&bucket_url, key),
            key_prefix: prefix_of(key),
            service: Service::S3 {
                bucket_url,
                region,
                credentials,
            },
        })
    }

    fn azure(
        account: &str,
        container: &str,
        key: &str,
        opts: &BrowserOptions,
    ) -> Result<Endpoint, LocationError> {
        let base = match opts
            .azure_endpoint
            .as_deref()
            .filter(|e| !e.trim().is_empty())
        {
            Some(e) => endpoint_option("Azure endpoint", e)?,
            None => format!("https://{account}.blob.core.windows.net"),
        };
        let container_url = format!("{base}/{container}");
        let sas = opts
            .azure_sas
            .as_ref()
            .map(|s| s.trim().trim_start_matches('?').to_string())
            .filter(|s| !s.is_empty());
        Ok(Endpoint {
            root: join(&container_url, key),
            key_prefix: prefix_of(key),
            service: Service::Azure { container_url, sas },
        })
    }

    /// The origin (`scheme://host:port`) a credential of this endpoint may be sent to:
    /// the bucket's or container's; `None` for services without credentials.
    pub fn credential_origin(&self) -> Option<String> {
        match &self.service {
            Service::S3 { bucket_url, .. } => origin_of(bucket_url),
            Service::Azure { container_url, .. } => origin_of(container_url),
            Service::Relay { base, .. } => origin_of(base),
            Service::Gcs { .. } | Service::Http => None,
        }
    }

    /// Whether a credential of this endpoint may go with a request to `url`: only when
    /// the request's origin is exactly the credential's.
    pub fn may_authorise(&self, url: &str) -> bool {
        match (self.credential_origin(), origin_of(url)) {
            (Some(want), Some(got)) => want == got,
            _ => false,
        }
    }

    /// The URL of the object at `path` (relative to the table root), without auth.
    pub fn object_url(&self, path: &str) -> String {
        if let Service::Relay { base, table, .. } = &self.service {
            return relay::object_url(base, table, path.trim_start_matches('/'));
        }
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
            (Service::Relay { token: None, .. }, _) => {
                "the relay refused: it may not serve this table (see its list of tables), or it needs a token".into()
            }
            (Service::Relay { .. }, _) => {
                "the relay refused: it may not serve this table, or the token is wrong".into()
            }
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
    fn a_relay_gets_every_request_and_no_store_credential() {
        let o = BrowserOptions {
            relay: Some("http://127.0.0.1:8080/".into()),
            relay_token: Some("s3cr3t-relay".into()),
            s3_access_key_id: Some("AK".into()),
            s3_secret_access_key: Some("SECRET".into()),
            ..Default::default()
        };
        let e = parse("s3://bkt/t/", &o);
        assert_eq!(
            e.object_url("_delta_log/0.json"),
            "http://127.0.0.1:8080/v1/object?table=s3%3A%2F%2Fbkt%2Ft&path=_delta_log%2F0.json"
        );
        assert!(
            matches!(&e.service, Service::Relay { table, token: Some(_), .. } if table == "s3://bkt/t")
        );
        assert!(!format!("{e:?}").contains("s3cr3t"));
        assert!(e.may_authorise(&e.object_url("x")));
        assert!(!e.may_authorise("http://127.0.0.1:9000/bkt/t/x"));
        assert!(e.can_list());
        // a catalog name opens only through a relay
        assert!(Endpoint::parse("uc://main.s.t", &BrowserOptions::default()).is_err());
        assert!(Endpoint::parse("uc://main.s.t", &o).is_ok());
        for relay in ["ftp://h", "http://u:p@h", "http://h/?q=1", "h"] {
            let o = BrowserOptions {
                relay: Some(relay.into()),
                ..Default::default()
            };
            assert!(Endpoint::parse("s3://b/t", &o).is_err(), "{relay}");
        }
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
    fn credentials_go_only_to_their_host() {
        // the SAS was appended to requests to evil.example
        let o = BrowserOptions {
            azure_sas: Some("sv=1&sig=secret".into()),
            s3_access_key_id: Some("AKIA".into()),
            s3_secret_access_key: Some("very-secret".into()),
            ..Default::default()
        };
        for bad in [
            "https://evil.example?.blob.core.windows.net/c/t",
            "https://evil.example#.blob.core.windows.net/cont/t",
            "https://evil.example/x?.blob.core.windows.net/cont/t",
            "https://user@acct.blob.core.windows.net/cont/t",
            "abfss://cont@evil.example/t",
            "s3://bkt.evil.com:443/t",
        ] {
            assert!(Endpoint::parse(bad, &o).is_err(), "{bad}");
        }
        let a = parse("https://acct.blob.core.windows.net/cont/t", &o);
        assert!(a.may_authorise(&a.object_url("_delta_log/x.json")));
        // found by reading the fuzz target's report: Debug printed the SAS
        assert!(!format!("{a:?}").contains("secret"), "{a:?}");
        assert!(!a.may_authorise("https://evil.example/cont/t/_delta_log/x.json"));
        assert!(!a.may_authorise("http://acct.blob.core.windows.net/cont/t"));
        let s = parse("s3://bkt/t", &o);
        assert!(s.may_authorise(&s.object_url("_delta_log/x.json")));
        assert!(!s.may_authorise("https://s3.us-east-1.amazonaws.com.evil.example/bkt/t"));
        // plain hosting never gets a credential
        let h = parse("https://acct.example/t", &o);
        assert!(!h.may_authorise(&h.object_url("_delta_log/x.json")));
        // endpoints typed beside the URL are URLs too
        let bad_endpoint = BrowserOptions {
            s3_endpoint: Some("http://127.0.0.1:5000/?x=1".into()),
            ..Default::default()
        };
        assert!(Endpoint::parse("s3://bkt/t", &bad_endpoint).is_err());
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
