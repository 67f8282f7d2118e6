//! Which tables a deployment may read: a list of table URL prefixes
//! (`DELTALENS_ALLOWED_TABLES`, comma-separated). A table is allowed when it lies at or
//! under a prefix, compared at a path-segment boundary after both are parsed by the one
//! table URL parser every backend uses ([`TableUrl`]): `https://h/tables` allows
//! `https://h/tables/x`, not `https://h/tables2` nor `https://h/tables@evil`, and nothing
//! with `.`/`..` segments, `;` path parameters (`..;` is `..` to Tomcat), backslashes,
//! control characters, user info, a query or a fragment parses at all. The check runs
//! before any request is made, so the worker cannot be used to reach arbitrary hosts. An
//! empty list allows nothing.

use deltalens_storage::TableUrl;

use crate::error::{ApiError, Result};

/// The allowed table URL prefixes.
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    prefixes: Vec<TableUrl>,
    /// The prefixes as configured.
    texts: Vec<String>,
    /// Entries that are not table URLs (they allow nothing).
    invalid: Vec<String>,
}

impl Allowlist {
    /// Parse a comma-separated list (blanks ignored; entries that are not table URLs are
    /// kept aside in [`Self::invalid`] and allow nothing).
    pub fn parse(list: &str) -> Self {
        let mut a = Allowlist::default();
        for p in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match TableUrl::parse(p) {
                Ok(t) => {
                    a.prefixes.push(t);
                    a.texts.push(p.trim_end_matches('/').to_string());
                }
                Err(_) => a.invalid.push(p.to_string()),
            }
        }
        a
    }

    /// How many prefixes allow something.
    pub fn len(&self) -> usize {
        self.prefixes.len()
    }

    /// The allowed prefixes as configured (what a relay lists as its tables).
    pub fn prefixes(&self) -> &[String] {
        &self.texts
    }

    /// True when nothing is allowed.
    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// Entries of the list that are not table URLs.
    pub fn invalid(&self) -> &[String] {
        &self.invalid
    }

    /// Allow `url` or refuse it with [`ApiError::Forbidden`].
    pub fn check(&self, url: &str) -> Result<()> {
        let forbidden = || ApiError::Forbidden {
            table: url.to_string(),
            allowed: self.prefixes.len(),
        };
        let table = TableUrl::parse(url).map_err(|_| forbidden())?;
        if self.prefixes.iter().any(|p| table.is_within(p)) {
            Ok(())
        } else {
            Err(forbidden())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_at_path_boundaries() {
        let a = Allowlist::parse(
            " https://h.example/tables/ , s3://bucket/delta,r2://TABLES ,abfss://cont@acct.dfs.core.windows.net/t",
        );
        assert_eq!(a.len(), 4);
        assert!(a.invalid().is_empty());
        // the same table however it is spelled
        assert!(
            a.check("https://acct.blob.core.windows.net/cont/t/x")
                .is_ok()
        );
        assert!(a.check("s3a://bucket/delta/x").is_ok());
        for ok in [
            "https://h.example/tables/t1",
            "https://h.example/tables",
            "s3://bucket/delta/sales/",
            "r2://TABLES/demo",
            "abfss://cont@acct.dfs.core.windows.net/t/x",
        ] {
            assert!(a.check(ok).is_ok(), "{ok}");
        }
        for bad in [
            "https://h.example/tables2/t",
            "https://h.example/tablesx",
            "https://h.example.evil.com/tables/t",
            "https://h.example/tables/../secret",
            "https://h.example/tables/%2e%2e/secret",
            "https://h.example/tables/./t",
            "https://h.example@evil.com/tables/t",
            "http://h.example/tables/t",
            "s3://bucket/deltalake",
            "s3://other/delta",
            "r2://OTHER/demo",
            "https://h.example/tables/t\\..\\x",
            "https://h.example/tables/t#frag",
            "https://h.example/tables/t?x=1",
            "https://h.example/tables/t/%2E%2E/%2e%2e/secret",
            // Tomcat-style path parameters (`..;` is `..` there): audit #31 item 9
            "https://h.example/tables/..;/secret",
            "https://h.example/tables/%2e%2e;/secret",
            "https://h.example/tables/t;jsessionid=x",
            "abfss://cont@acct.dfs.core.windows.net/t2",
            "abfss://other@acct.dfs.core.windows.net/t/x",
            "file:///etc/passwd",
            "/etc/passwd",
            "",
        ] {
            assert!(
                matches!(a.check(bad), Err(ApiError::Forbidden { .. })),
                "{bad}"
            );
        }
        assert!(
            Allowlist::parse("")
                .check("https://h.example/tables/t")
                .is_err()
        );
    }
}
