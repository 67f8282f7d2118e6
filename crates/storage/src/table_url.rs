//! Where a table lives, parsed once: the one parser of table URLs for every backend (the
//! CLI's object_store backend, the browser's and the worker's fetch backend, the worker's
//! R2 binding), the worker's allowlist and the attachment of credentials.
//!
//! Every URL is parsed with [`url::Url`] and then checked against the rules of its store,
//! so that nothing typed into the URL can move a request (and the credential attached to
//! it) to another host: no user info (except abfss' `container@account`), no query, no
//! fragment, no `.`/`..` segment (also percent-encoded), no backslash or control character,
//! no `;` path parameter (Tomcat reads `..;` as `..`) except in a local path;
//! Azure accounts are `[a-z0-9]{3,24}`, containers `[a-z0-9-]{3,63}`, buckets and
//! bindings only letters, digits and `.-_`.

use std::fmt;

use percent_encoding::percent_decode_str;
use url::Url;

/// The store a table URL names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Store {
    /// A local directory (`file://`).
    File,
    /// S3 or an S3-compatible store (`s3://`, `s3a://`).
    S3 {
        /// The bucket.
        bucket: String,
    },
    /// Azure Blob Storage / ADLS Gen2: `abfss://container@account.dfs.core.windows.net`,
    /// `https://account.blob.core.windows.net/container`, or `az://container` (account
    /// from the options: `None` here).
    Azure {
        /// The storage account; `None` for `az://`, where the options give it.
        account: Option<String>,
        /// The container.
        container: String,
    },
    /// Google Cloud Storage (`gs://`, `gcs://`).
    Gcs {
        /// The bucket.
        bucket: String,
    },
    /// A Cloudflare R2 bucket binding of a worker (`r2://BINDING`).
    R2 {
        /// The worker's binding name.
        binding: String,
    },
    /// A Unity Catalog name (`uc://catalog[.schema[.table]]`): a table is resolved to its
    /// storage location by the catalog; a catalog or schema is listed.
    UnityCatalog {
        /// The one to three parts of the name: catalog, schema, table.
        name: Vec<String>,
    },
    /// Any other `http(s)://` server: `origin` is `scheme://host[:port]`.
    Http {
        /// `scheme://host[:port]`.
        origin: String,
    },
}

/// A parsed, checked table URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableUrl {
    /// The scheme as written (`s3a`, `abfss`, `https`, ...), lowercase.
    pub scheme: String,
    /// The store, with its bucket, container or host.
    pub store: Store,
    /// The table root inside the store, percent-decoded, without leading or trailing `/`
    /// (for [`Store::Http`], the URL path; for [`Store::File`], the absolute path).
    pub key: String,
}

/// Why a table URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot open table URL '{url}': {message}")]
pub struct UrlError {
    /// The URL as given.
    pub url: String,
    /// Why it was refused: the rule the URL breaks.
    pub message: String,
}

const FORMS: &str = "use s3://bucket/path, abfss://container@account.dfs.core.windows.net/path, az://container/path, gs://bucket/path, https://host/path, r2://BINDING/path or uc://catalog.schema.table";

/// The longest part of a Unity Catalog name.
const MAX_UC_PART: usize = 255;

/// One part of a Unity Catalog name: 1 to 255 letters, digits, `_` or `-` (a name needing
/// backquotes is not supported).
fn is_uc_part(s: &str) -> bool {
    (1..=MAX_UC_PART).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

fn refuse(url: &str, message: impl Into<String>) -> UrlError {
    UrlError {
        url: shown(url),
        message: message.into(),
    }
}

/// `url` as an error may show it: without its query or fragment (a SAS token, a signed
/// URL's signature) and without a user and password before the host.
fn shown(url: &str) -> String {
    let (mut out, cut) = match url.find(['?', '#']) {
        Some(i) => (url[..i].to_string(), true),
        None => (url.to_string(), false),
    };
    if let Some(scheme_end) = out.find("://") {
        let rest = &out[scheme_end + 3..];
        let authority_end = rest.find('/').unwrap_or(rest.len());
        if let Some(at) = rest[..authority_end].rfind('@') {
            out = format!("{}…@{}", &out[..scheme_end + 3], &rest[at + 1..]);
        }
    }
    if cut {
        out.push_str("?…");
    }
    out
}

/// `[a-z0-9]{3,24}`: an Azure storage account name (it becomes a host name).
pub fn is_azure_account(s: &str) -> bool {
    (3..=24).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

fn is_azure_container(s: &str) -> bool {
    (3..=63).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
}

/// A bucket (S3, GCS) or binding name: 1 to 255 of letters, digits, `.`, `-`, `_`,
/// neither starting nor ending with `.` (it may become part of a host name).
fn is_bucket(s: &str) -> bool {
    (1..=255).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
        && !s.starts_with('.')
        && !s.ends_with('.')
        && !s.contains("..")
}

/// The decoded key of `path` (`/a/b%20c/` → `a/b c`), each segment checked.
fn key_of(url: &str, path: &str) -> Result<String, UrlError> {
    let decoded = decode(url, path)?;
    let trimmed = decoded.trim_matches('/');
    check_segments(url, trimmed)?;
    Ok(trimmed.to_string())
}

fn decode<'a>(url: &str, path: &'a str) -> Result<std::borrow::Cow<'a, str>, UrlError> {
    percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| refuse(url, "the path is not UTF-8 once percent-decoded"))
}

/// Why a `;` in a path is refused.
const PATH_PARAMETER: &str = "the path holds a ';' (also as '%3B'): servers such as Tomcat read what follows it as a path parameter and drop it, so '..;' climbs out of the table; table paths sent to a server may not hold ';' (rename the directory, or read it as a local path)";

/// Whether `path` (percent-encoded or not) holds a `;`: a path parameter to servers that
/// read them (`/tables/..;/secret` is `/secret` to Tomcat).
fn has_path_parameter(path: &str) -> bool {
    path.contains(';') || percent_decode_str(path).any(|b| b == b';')
}

/// Every `/`-separated segment of the decoded `key` is a name: not empty, `.` or `..`,
/// without backslash or control character (an empty key is the store's root).
fn check_segments(url: &str, key: &str) -> Result<(), UrlError> {
    if key.is_empty() {
        return Ok(());
    }
    for segment in key.split('/') {
        match segment {
            "." | ".." => return Err(refuse(url, "the path has a '.' or '..' segment")),
            "" => return Err(refuse(url, "the path has an empty segment ('//' or '%2F')")),
            s if s.contains('\\') || s.chars().any(char::is_control) => {
                return Err(refuse(
                    url,
                    "the path holds a backslash or a control character",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

impl TableUrl {
    /// Parse and check `input` (see the module documentation for the rules).
    pub fn parse(input: &str) -> Result<TableUrl, UrlError> {
        let text = input.trim();
        if text.chars().any(|c| c.is_control() || c == '\\') {
            return Err(refuse(text, "it holds a backslash or a control character"));
        }
        // `..` anywhere in the path is refused before url::Url can resolve it away
        if let Some((_, rest)) = text.split_once("://") {
            let path = rest.split_once('/').map_or("", |(_, p)| p);
            let decoded = percent_decode_str(path).decode_utf8_lossy();
            if decoded
                .split(['/', '?', '#'])
                .any(|s| s == ".." || s == ".")
            {
                return Err(refuse(text, "the path has a '.' or '..' segment"));
            }
        }
        let url = Url::parse(text).map_err(|e| refuse(text, format!("{e}; {FORMS}")))?;
        if url.query().is_some() {
            return Err(refuse(
                text,
                "table URLs carry no query: give a SAS token or keys as options, not in the URL",
            ));
        }
        if url.fragment().is_some() {
            return Err(refuse(text, "table URLs carry no fragment ('#')"));
        }
        if !url.password().unwrap_or("").is_empty() {
            return Err(refuse(text, "table URLs carry no password"));
        }
        let scheme = url.scheme().to_ascii_lowercase();
        if scheme != "file" && has_path_parameter(url.path()) {
            return Err(refuse(text, PATH_PARAMETER));
        }
        let store = match scheme.as_str() {
            "s3" | "s3a" => Store::S3 {
                bucket: Self::bucket(text, &url)?,
            },
            "gs" | "gcs" => Store::Gcs {
                bucket: Self::bucket(text, &url)?,
            },
            "r2" => Store::R2 {
                binding: Self::bucket(text, &url)?,
            },
            "az" | "azure" => {
                let container = Self::bucket(text, &url)?;
                Self::azure(text, None, container)?
            }
            "abfss" | "abfs" => {
                let host = Self::host(text, &url)?;
                let container = url.username().to_string();
                let account = host.strip_suffix(".dfs.core.windows.net").ok_or_else(|| {
                    refuse(
                        text,
                        "abfss URLs name the container and account as container@account.dfs.core.windows.net",
                    )
                })?;
                if url.port().is_some() {
                    return Err(refuse(text, "abfss URLs take no port"));
                }
                Self::azure(text, Some(account.to_string()), container)?
            }
            "https" | "http" => return Self::http(text, &url, scheme),
            "uc" => return Self::unity_catalog(text, &url),
            "file" => {
                if url
                    .host_str()
                    .is_some_and(|h| !h.is_empty() && h != "localhost")
                {
                    return Err(refuse(text, "file URLs name no host"));
                }
                return Ok(TableUrl {
                    scheme,
                    store: Store::File,
                    key: format!("/{}", key_of(text, url.path())?),
                });
            }
            other => {
                return Err(refuse(
                    text,
                    format!("the scheme {other}:// is not supported; {FORMS}"),
                ));
            }
        };
        if !url.username().is_empty() && !matches!(scheme.as_str(), "abfss" | "abfs") {
            return Err(refuse(text, "table URLs carry no user name ('user@')"));
        }
        Ok(TableUrl {
            key: key_of(text, url.path())?,
            scheme,
            store,
        })
    }

    fn host(text: &str, url: &Url) -> Result<String, UrlError> {
        url.host_str()
            .filter(|h| !h.is_empty())
            .map(str::to_ascii_lowercase)
            .ok_or_else(|| refuse(text, format!("it names no bucket or host; {FORMS}")))
    }

    fn bucket(text: &str, url: &Url) -> Result<String, UrlError> {
        if url.port().is_some() {
            return Err(refuse(text, "bucket URLs take no port"));
        }
        let b = url.host_str().unwrap_or("");
        if !is_bucket(b) {
            return Err(refuse(
                text,
                format!(
                    "{b:?} is not a bucket, container or binding name (letters, digits, '.', '-', '_')"
                ),
            ));
        }
        Ok(b.to_string())
    }

    fn azure(text: &str, account: Option<String>, container: String) -> Result<Store, UrlError> {
        if let Some(a) = &account
            && !is_azure_account(a)
        {
            return Err(refuse(
                text,
                format!(
                    "{a:?} is not an Azure storage account name (3 to 24 lowercase letters and digits)"
                ),
            ));
        }
        if !is_azure_container(&container) {
            return Err(refuse(
                text,
                format!(
                    "{container:?} is not an Azure container name (3 to 63 lowercase letters, digits and '-')"
                ),
            ));
        }
        Ok(Store::Azure { account, container })
    }

    fn unity_catalog(text: &str, url: &Url) -> Result<TableUrl, UrlError> {
        if !url.username().is_empty() || url.port().is_some() || !url.path().is_empty() {
            return Err(refuse(
                text,
                "Unity Catalog names are uc://catalog, uc://catalog.schema or uc://catalog.schema.table: no user, port or path",
            ));
        }
        let host = url.host_str().unwrap_or("");
        let name: Vec<String> = host.split('.').map(str::to_string).collect();
        if name.len() > 3 || !name.iter().all(|p| is_uc_part(p)) {
            return Err(refuse(
                text,
                format!(
                    "{host:?} is not a Unity Catalog name: one to three parts (catalog.schema.table) of letters, digits, '_' and '-'"
                ),
            ));
        }
        Ok(TableUrl {
            scheme: "uc".into(),
            store: Store::UnityCatalog { name },
            key: String::new(),
        })
    }

    fn http(text: &str, url: &Url, scheme: String) -> Result<TableUrl, UrlError> {
        if !url.username().is_empty() {
            return Err(refuse(text, "table URLs carry no user name ('user@')"));
        }
        let host = Self::host(text, url)?;
        for suffix in [".blob.core.windows.net", ".dfs.core.windows.net"] {
            if let Some(account) = host.strip_suffix(suffix) {
                if scheme != "https" || url.port().is_some() {
                    return Err(refuse(text, "Azure URLs are https:// without a port"));
                }
                let path = url.path().trim_start_matches('/');
                let (container, rest) = path.split_once('/').unwrap_or((path, ""));
                let store = Self::azure(text, Some(account.to_string()), container.to_string())?;
                return Ok(TableUrl {
                    scheme,
                    store,
                    key: key_of(text, rest)?,
                });
            }
        }
        let origin = match url.port() {
            Some(p) => format!("{scheme}://{}:{p}", url.host_str().unwrap_or(&host)),
            None => format!("{scheme}://{}", url.host_str().unwrap_or(&host)),
        };
        // kept percent-encoded (the server's path as typed), so its decoded form is checked
        // as it is, untrimmed: `/%2F/t` would otherwise keep an empty segment
        let key = url.path().trim_matches('/');
        check_segments(text, &decode(text, key)?)?;
        Ok(TableUrl {
            scheme,
            store: Store::Http { origin },
            key: key.to_string(),
        })
    }

    /// One spelling per table root (`s3a://` as `s3://`, Azure forms as
    /// `az://account/container/key`), for comparing locations.
    pub fn canonical(&self) -> String {
        let key = |prefix: String| {
            if self.key.is_empty() {
                prefix
            } else {
                format!("{prefix}/{}", self.key)
            }
        };
        match &self.store {
            Store::File => format!("file://{}", self.key),
            Store::S3 { bucket } => key(format!("s3://{bucket}")),
            Store::Gcs { bucket } => key(format!("gs://{bucket}")),
            Store::R2 { binding } => key(format!("r2://{binding}")),
            Store::Azure { account, container } => key(format!(
                "az://{}/{container}",
                account.as_deref().unwrap_or("")
            )),
            Store::Http { origin } => key(origin.clone()),
            Store::UnityCatalog { name } => format!("uc://{}", name.join(".")),
        }
    }

    /// Whether `self` is `root` or lies under it (at a path-segment boundary). A key
    /// holding a path parameter (`;`, which [`TableUrl::parse`] refuses for every store
    /// but local files) lies within nothing, as a `TableUrl` may be built by hand.
    pub fn is_within(&self, root: &TableUrl) -> bool {
        if [self, root]
            .iter()
            .any(|t| t.store != Store::File && has_path_parameter(&t.key))
        {
            return false;
        }
        // a catalog name lies within its catalog and schema (`uc://main` holds
        // `uc://main.sales.orders`), part by part
        if let (Store::UnityCatalog { name: me }, Store::UnityCatalog { name: root }) =
            (&self.store, &root.store)
        {
            return me.len() >= root.len() && me[..root.len()] == root[..];
        }
        let (me, root) = (self.canonical(), root.canonical());
        me == root
            || me
                .strip_prefix(&root)
                .is_some_and(|rest| rest.starts_with('/') || root.ends_with('/'))
    }
}

impl fmt::Display for TableUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_refused_url_is_shown_without_its_secrets() {
        let e = TableUrl::parse("ftp://user:pa55word@host/t?sv=2024&sig=S3CRET#frag").unwrap_err();
        let text = e.to_string();
        assert!(
            !text.contains("S3CRET") && !text.contains("pa55word"),
            "{text}"
        );
        assert!(text.contains("ftp://…@host/t?…"), "{text}");
        assert_eq!(shown("https://h/t"), "https://h/t");
        assert_eq!(shown("https://h/a@b/t?x"), "https://h/a@b/t?…");
    }

    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn ok(s: &str) -> TableUrl {
        TableUrl::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn unity_catalog_names() {
        let t = ok("uc://main.sales.orders");
        assert_eq!(
            t.store,
            Store::UnityCatalog {
                name: vec!["main".into(), "sales".into(), "orders".into()]
            }
        );
        assert_eq!(t.canonical(), "uc://main.sales.orders");
        assert_eq!(ok("uc://main").canonical(), "uc://main");
        assert!(t.is_within(&ok("uc://main")) && t.is_within(&ok("uc://main.sales")));
        assert!(!t.is_within(&ok("uc://main.sale")) && !t.is_within(&ok("uc://mai")));
        assert!(!ok("uc://main").is_within(&t) && !t.is_within(&ok("s3://main")));
        assert_eq!(ok("uc://main.sales_2-x").canonical(), "uc://main.sales_2-x");
        for bad in [
            "uc://a.b.c.d",
            "uc://a..b",
            "uc://a.b/c",
            "uc://u@a.b.c",
            "uc://a.b.c:80",
            "uc://a.b.c?x=1",
            "uc://",
            "uc://a%2Fb.c",
        ] {
            assert!(TableUrl::parse(bad).is_err(), "{bad}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn forms() {
        let s = ok("s3a://bkt/path/to/t/");
        assert_eq!(
            s.store,
            Store::S3 {
                bucket: "bkt".into()
            }
        );
        assert_eq!(s.key, "path/to/t");
        assert_eq!(ok("s3://bkt/a b").key, "a b");
        assert_eq!(ok("s3://bkt/a%20b").key, "a b");
        assert_eq!(ok("s3://bkt").key, "");
        let a = ok("abfss://cont@acct.dfs.core.windows.net/dir/t");
        let b = ok("https://acct.blob.core.windows.net/cont/dir/t");
        assert_eq!(a.store, b.store);
        assert_eq!(a.key, "dir/t");
        assert_eq!(a.canonical(), "az://acct/cont/dir/t");
        assert_eq!(
            ok("az://cont/t").store,
            Store::Azure {
                account: None,
                container: "cont".into()
            }
        );
        assert_eq!(ok("gs://b/t").canonical(), "gs://b/t");
        assert_eq!(ok("r2://TABLES/demo").canonical(), "r2://TABLES/demo");
        let h = ok("https://Example.com:8443/tables/t%20x/");
        assert_eq!(
            h.store,
            Store::Http {
                origin: "https://example.com:8443".into()
            }
        );
        assert_eq!(h.key, "tables/t%20x");
        assert_eq!(
            ok("http://127.0.0.1:9000/t").canonical(),
            "http://127.0.0.1:9000/t"
        );
        assert_eq!(ok("file:///tmp/t/").key, "/tmp/t");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn credential_stealing_forms_are_refused() {
        for bad in [
            // the SAS leak: the text before the first '/' ends with the Azure suffix
            "https://evil.example?.blob.core.windows.net/c/t",
            "https://evil.example#.blob.core.windows.net/c/t",
            "https://evil.example/.blob.core.windows.net/c/t/..",
            "https://evil.example\\.blob.core.windows.net/c/t",
            "https://user@acct.blob.core.windows.net/cont/t",
            "https://acct.blob.core.windows.net:444/cont/t",
            "http://acct.blob.core.windows.net/cont/t",
            "https://evil.com%2f.blob.core.windows.net/cont/t",
            "https://ACCOUNT_X.blob.core.windows.net/cont/t",
            "https://a.blob.core.windows.net/cont/t",
            "https://acct.evil.blob.core.windows.net/cont/t",
            "abfss://cont@evil.example/t",
            "abfss://cont@acct.dfs.core.windows.net.evil.example/t",
            "abfss://cont@acct.dfs.core.windows.net:8080/t",
            "abfss://c@acct.dfs.core.windows.net/t",
            "abfss://cont:pw@acct.dfs.core.windows.net/t",
            "s3://bucket.evil.com:443/t",
            "s3://user@bucket/t",
            "s3://bu/cket/t?x=1",
            "s3://bkt/t#frag",
            "s3://bkt/a/../b",
            "s3://bkt/a/%2e%2e/b",
            "https://h.example/tables/../secret",
            "https://h.example/tables/%2E%2E/secret",
            "https://h.example/t?sig=1",
            "s3://bkt/a//b",
            // found by fuzzing: an encoded '/' at either end of an HTTP path left an empty
            // segment in the (still encoded) key
            "https://h.example/%2F/t",
            "https://h.example/t/%2f",
            "https://h.example/t%2F",
            "gs://../x",
            "r2://A B/x",
            "ftp://h/t",
            "not a url",
            "",
        ] {
            assert!(TableUrl::parse(bad).is_err(), "{bad} was accepted");
        }
        assert!(
            TableUrl::parse("https://evil.example?.blob.core.windows.net/c/t")
                .unwrap_err()
                .to_string()
                .contains("query")
        );
    }

    /// Audit #31 item 9: Tomcat-style path parameters (`..;` is `..` to Tomcat, which
    /// drops what follows a `;` in each segment) are refused wherever the path goes to a
    /// server, and containment refuses them even in a `TableUrl` built by hand.
    #[wasm_bindgen_test(unsupported = test)]
    fn path_parameters_are_refused() {
        for bad in [
            "https://h/tables/..;/secret",
            "https://h/tables/%2e%2e;/secret",
            "https://h/tables/t;jsessionid=x",
            "https://h/tables/t%3Bjsessionid=x",
            "http://127.0.0.1:8080/tables/..;/x",
            "s3://bkt/tables/..;/secret",
            "gs://bkt/t;x",
            "abfss://cont@acct.dfs.core.windows.net/t/..;/x",
            "https://acct.blob.core.windows.net/cont/t;x",
            "az://cont/t;x",
            "r2://TABLES/t;x",
        ] {
            let e = TableUrl::parse(bad).err();
            assert!(
                e.as_ref().is_some_and(|e| e.message.contains("';'")),
                "{bad} was accepted or refused for another reason: {e:?}"
            );
        }
        // a local directory's name may hold ';' (it never reaches a server)
        assert_eq!(ok("file:///tmp/a;b").key, "/tmp/a;b");
        let root = ok("https://h/tables");
        for key in [
            "tables/..;/secret",
            "tables/%2e%2e;/secret",
            "tables/t;jsessionid=x",
        ] {
            let forged = TableUrl {
                key: key.into(),
                ..root.clone()
            };
            assert!(!forged.is_within(&root), "{key} is within {root}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn within() {
        let root = ok("https://h.example/tables");
        assert!(ok("https://h.example/tables/t1").is_within(&root));
        assert!(ok("https://h.example/tables/").is_within(&root));
        assert!(!ok("https://h.example/tables2/t").is_within(&root));
        assert!(!ok("http://h.example/tables/t").is_within(&root));
        assert!(!ok("https://h.example.evil.com/tables/t").is_within(&root));
        let az = ok("abfss://cont@acct.dfs.core.windows.net/t");
        assert!(ok("https://acct.blob.core.windows.net/cont/t/x").is_within(&az));
        assert!(!ok("https://acct2.blob.core.windows.net/cont/t/x").is_within(&az));
        assert!(ok("s3a://b/delta/x").is_within(&ok("s3://b/delta")));
        // found by fuzzing: nothing was within the file system's root
        assert!(ok("file:///tt").is_within(&ok("file:///")));
    }
}
