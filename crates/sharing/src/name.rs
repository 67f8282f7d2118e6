//! Names in a share, as the delta-sharing connectors write a table:
//! `<profile file>#<share>.<schema>.<table>` (PROTOCOL.md "Names": at most 255 characters,
//! no space, `/`, control character or DEL; names are case-insensitive). deltalens also
//! takes `<profile>#<share>` and `<profile>#<share>.<schema>`, and the profile alone, to
//! browse what the share holds.

use crate::error::SharingError;

/// The most characters of one name (PROTOCOL.md "Names").
pub const MAX_NAME_CHARS: usize = 255;

/// A profile and, after `#`, what in it is named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareName {
    /// The profile file (a path), as written before `#`.
    pub profile: String,
    /// The share, if named.
    pub share: Option<String>,
    /// The schema, if named (then the share is too).
    pub schema: Option<String>,
    /// The table, if named (then the schema is too).
    pub table: Option<String>,
}

impl ShareName {
    /// Reads `<profile>[#<share>[.<schema>[.<table>]]]`. The profile is what comes before
    /// the last `#`; the names split at `.` (as the connectors split them: a share, schema
    /// or table name never holds one here).
    pub fn parse(given: &str) -> Result<ShareName, SharingError> {
        let bad = |why: &str| SharingError::BadName {
            name: given.to_string(),
            why: why.to_string(),
        };
        let (profile, names) = match given.rfind('#') {
            Some(i) => (&given[..i], Some(&given[i + 1..])),
            None => (given, None),
        };
        if profile.trim().is_empty() {
            return Err(bad("no profile file before #"));
        }
        let mut out = ShareName {
            profile: profile.to_string(),
            share: None,
            schema: None,
            table: None,
        };
        let Some(names) = names else {
            return Ok(out);
        };
        let parts: Vec<&str> = names.split('.').collect();
        if parts.len() > 3 {
            return Err(bad("more than three names after #"));
        }
        for p in &parts {
            check_name(p).map_err(|why| bad(&why))?;
        }
        let mut it = parts.into_iter().map(str::to_string);
        out.share = it.next();
        out.schema = it.next();
        out.table = it.next();
        Ok(out)
    }

    /// `share.schema.table` (as far as named), for messages.
    pub fn dotted(&self) -> String {
        [&self.share, &self.schema, &self.table]
            .into_iter()
            .flatten()
            .cloned()
            .collect::<Vec<_>>()
            .join(".")
    }
}

/// Whether `name` is a name the protocol allows (checked, so that a name from a link or a
/// server cannot reshape a request path).
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("an empty name".into());
    }
    if name == "." || name == ".." {
        return Err(format!("the name {name:?}, a path segment"));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "a name of more than {MAX_NAME_CHARS} characters (MAX_NAME_CHARS)"
        ));
    }
    if let Some(c) = name
        .chars()
        .find(|c| *c == ' ' || *c == '/' || c.is_control())
    {
        return Err(format!("a name holding {c:?}, which names may not hold"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_is_profile_hash_share_schema_table() {
        let n = ShareName::parse("/home/me/config.share#sales.retail.orders").unwrap();
        assert_eq!(n.profile, "/home/me/config.share");
        assert_eq!(
            (n.share.as_deref(), n.schema.as_deref(), n.table.as_deref()),
            (Some("sales"), Some("retail"), Some("orders"))
        );
        assert_eq!(n.dotted(), "sales.retail.orders");
        // the profile's own path may hold a '#': the last one separates
        let n = ShareName::parse("dir#1/config.share#s.sc").unwrap();
        assert_eq!((n.profile.as_str(), n.table), ("dir#1/config.share", None));
        let n = ShareName::parse("config.share").unwrap();
        assert_eq!((n.share, n.schema), (None, None));
    }

    #[test]
    fn names_the_protocol_forbids_are_refused() {
        for (given, why) in [
            ("#s.sc.t", "no profile"),
            ("p#s.sc.t.x", "more than three"),
            ("p#s..t", "empty name"),
            ("p#s.sc/x.t", "'/'"),
            ("p#s.s c.t", "' '"),
            ("p#s.sc.t\u{7f}", "'\\u{7f}'"),
            ("p#s.sc.t\n", "'\\n'"),
            ("p#", "empty name"),
        ] {
            let e = ShareName::parse(given).unwrap_err().to_string();
            assert!(e.contains(why), "{given:?}: {e}");
        }
        let long = format!("p#{}.sc.t", "x".repeat(256));
        assert!(
            ShareName::parse(&long)
                .unwrap_err()
                .to_string()
                .contains("MAX_NAME_CHARS")
        );
        assert!(ShareName::parse(&format!("p#{}.sc.t", "é".repeat(255))).is_ok());
    }
}
