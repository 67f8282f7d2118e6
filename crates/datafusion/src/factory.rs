//! Naming Delta tables in SQL:
//!
//! - `CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION 's3://bucket/t' OPTIONS ('version'
//!   '3')` (or `'timestamp' '2024-01-01T00:00:00Z'`; other options are store options such
//!   as `'aws_endpoint' '...'`): time travel as Spark's `VERSION AS OF` and `TIMESTAMP AS
//!   OF`, with the columns read from the log;
//! - `SELECT ... FROM 's3://bucket/t'` or `FROM './local/t@v3'`: a location used as a
//!   table name (a name with `/` or `:`), optionally with Spark's `@v<version>` suffix.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::catalog::{Session, TableProviderFactory, UrlTableFactory};
use datafusion::datasource::TableProvider;
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::CreateExternalTable;
use deltalens_core::VersionSpec;
use deltalens_core::time_travel::parse_timestamp;

use crate::error::{Error, Result};
use crate::location::{Location, chooses_host};
use crate::provider::DeltaTableProvider;
use deltalens_object_store::is_credential_option;

/// Makes tables for `CREATE EXTERNAL TABLE ... STORED AS DELTA` (register it under
/// "DELTA" in the session's table factories).
#[derive(Debug, Default)]
pub struct DeltaTableFactory {
    /// Store options for every table it opens (a statement's options come after them).
    pub options: Vec<(String, String)>,
}

/// The version a table's options ask for, and the options left (store options).
fn version_of(options: &[(String, String)]) -> Result<(VersionSpec, Vec<(String, String)>)> {
    let mut spec = VersionSpec::Latest;
    let mut rest = Vec::new();
    for (k, v) in options {
        let k = k.strip_prefix("format.").unwrap_or(k);
        let asked = match k.to_ascii_lowercase().as_str() {
            "version" => VersionSpec::Version(v.trim().parse().map_err(|_| {
                Error::InvalidArgument(format!(
                    "the option 'version' is {v:?}: a table version is a number (0 or more)"
                ))
            })?),
            "timestamp" => VersionSpec::Timestamp(parse_timestamp(v)?),
            _ => {
                rest.push((k.to_string(), v.clone()));
                continue;
            }
        };
        if spec != VersionSpec::Latest {
            return Err(Error::InvalidArgument(
                "give one of the options 'version' and 'timestamp', once".into(),
            ));
        }
        spec = asked;
    }
    Ok((spec, rest))
}

#[async_trait]
impl TableProviderFactory for DeltaTableFactory {
    async fn create(
        &self,
        _state: &dyn Session,
        cmd: &CreateExternalTable,
    ) -> DfResult<Arc<dyn TableProvider>> {
        let [url] = cmd.locations.as_slice() else {
            return Err(Error::InvalidArgument(format!(
                "a Delta table has one LOCATION, not {}",
                cmd.locations.len()
            ))
            .into());
        };
        if !cmd.schema.fields().is_empty() || !cmd.table_partition_cols.is_empty() {
            return Err(Error::InvalidArgument(
                "a Delta table's columns and partition columns come from its log: leave them out of CREATE EXTERNAL TABLE".into(),
            )
            .into());
        }
        let mut given: Vec<(String, String)> = cmd
            .options
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        given.sort();
        let (spec, store) = version_of(&given)?;
        // the session's credentials (-o) go only where the session's options say: a
        // statement may not point them at another host
        let credentials = self.options.iter().any(|(k, _)| is_credential_option(k));
        if let Some((k, _)) = store.iter().find(|(k, _)| credentials && chooses_host(k)) {
            return Err(Error::InvalidArgument(format!(
                "the statement sets {k:?} while the session holds credentials: give endpoints with the credentials (-o), not in a statement"
            ))
            .into());
        }
        let mut options = self.options.clone();
        options.extend(store);
        let location = Location {
            url: url.clone(),
            options,
        };
        Ok(Arc::new(DeltaTableProvider::open(location, spec).await?))
    }
}

/// Opens a location used as a table name (see the module documentation).
#[derive(Debug, Default)]
pub struct DeltaUrlTables {
    /// Store options for every table it opens.
    pub options: Vec<(String, String)>,
}

/// A table name's location and version: `path@v3` is version 3 of `path`.
fn name_version(name: &str) -> (&str, VersionSpec) {
    if let Some((path, v)) = name.rsplit_once("@v")
        && !v.is_empty()
        && v.bytes().all(|b| b.is_ascii_digit())
        && let Ok(v) = v.parse()
    {
        return (path, VersionSpec::Version(v));
    }
    (name, VersionSpec::Latest)
}

#[async_trait]
impl UrlTableFactory for DeltaUrlTables {
    async fn try_new(&self, name: &str) -> DfResult<Option<Arc<dyn TableProvider>>> {
        // a path, a URL, or a shared table (<profile file>#share.schema.table)
        if !name.contains('/') && !name.contains(':') && !name.contains('#') {
            return Ok(None);
        }
        let (url, spec) = name_version(name);
        let location = Location {
            url: url.to_string(),
            options: self.options.clone(),
        };
        Ok(Some(Arc::new(
            DeltaTableProvider::open(location, spec).await?,
        )))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn names_and_options_say_the_version() {
        assert_eq!(
            name_version("s3://b/t@v12"),
            ("s3://b/t", VersionSpec::Version(12))
        );
        assert_eq!(name_version("./t@vx"), ("./t@vx", VersionSpec::Latest));
        assert_eq!(name_version("./a@b/t"), ("./a@b/t", VersionSpec::Latest));
        let o = |k: &str, v: &str| (k.to_string(), v.to_string());
        let (spec, rest) = version_of(&[o("version", "3"), o("aws_endpoint", "e")]).unwrap();
        assert_eq!(spec, VersionSpec::Version(3));
        assert_eq!(rest, vec![o("aws_endpoint", "e")]);
        assert!(version_of(&[o("version", "-1")]).is_err());
        assert!(version_of(&[o("version", "1"), o("timestamp", "2024-01-01")]).is_err());
        assert!(matches!(
            version_of(&[o("timestamp", "2024-01-01T00:00:00Z")])
                .unwrap()
                .0,
            VersionSpec::Timestamp(_)
        ));
    }
}
