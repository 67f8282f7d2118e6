//! Which tables a deployment may read: a list of URL prefixes (`DELTALENS_ALLOWED_TABLES`,
//! comma-separated). A table is allowed when its URL starts with a prefix at a path
//! boundary (`https://h/tables` allows `https://h/tables/x`, not `https://h/tables2` nor
//! `https://h/tables@evil`), and has no `.`/`..` segments, backslashes, control
//! characters or user info that could make a server reach elsewhere. The check runs before
//! any request is made, so the worker cannot be used to reach arbitrary hosts. An empty
//! list allows nothing.

use crate::error::{QueryError, Result};

/// The allowed table URL prefixes.
#[derive(Debug, Clone, Default)]
pub struct Allowlist {
    prefixes: Vec<String>,
}

impl Allowlist {
    /// Parse a comma-separated list (blanks ignored).
    pub fn parse(list: &str) -> Self {
        Allowlist {
            prefixes: list
                .split(',')
                .map(str::trim)
                .filter(|p| !p.is_empty())
                .map(str::to_string)
                .collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.prefixes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.prefixes.is_empty()
    }

    /// Allow `url` or refuse it with [`QueryError::Forbidden`].
    pub fn check(&self, url: &str) -> Result<()> {
        let forbidden = || QueryError::Forbidden {
            table: url.to_string(),
            allowed: self.prefixes.len(),
        };
        if !well_formed(url) {
            return Err(forbidden());
        }
        let url = url.trim_end_matches('/');
        let ok = self.prefixes.iter().any(|p| {
            let p = p.trim_end_matches('/');
            url == p
                || url
                    .strip_prefix(p)
                    .is_some_and(|rest| rest.starts_with('/') || rest.starts_with('?'))
        });
        if ok { Ok(()) } else { Err(forbidden()) }
    }
}

fn well_formed(url: &str) -> bool {
    if url
        .chars()
        .any(|c| c.is_control() || c == '\\' || c.is_whitespace())
    {
        return false;
    }
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    if authority.contains('@') && !authority.contains(".dfs.core.windows.net") {
        return false;
    }
    let decoded = percent_encoding::percent_decode_str(path).decode_utf8_lossy();
    !decoded
        .split(['/', '?', '#'])
        .any(|seg| seg == "." || seg == "..")
        && !path.contains('#')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_at_path_boundaries() {
        let a = Allowlist::parse(
            " https://h.example/tables/ , s3://bucket/delta,r2://TABLES ,abfss://c@acct.dfs.core.windows.net/t",
        );
        assert_eq!(a.len(), 4);
        for ok in [
            "https://h.example/tables/t1",
            "https://h.example/tables",
            "s3://bucket/delta/sales/",
            "r2://TABLES/demo",
            "abfss://c@acct.dfs.core.windows.net/t/x",
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
            "file:///etc/passwd",
            "/etc/passwd",
            "",
        ] {
            assert!(
                matches!(a.check(bad), Err(QueryError::Forbidden { .. })),
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
