//! `deltalens.open(url, …)` → a [`Table`] whose methods answer as the worker's routes do:
//! documents as dicts and lists, rows as [`Rows`].

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use deltalens_api::execute::Limits;
use deltalens_api::request::{parse_get, parse_query};
use deltalens_api::sql::{Bound as SqlBound, Source};
use deltalens_api::{ApiRequest, respond};
use deltalens_core::VersionSpec;
use deltalens_object_store::{ObjectStoreStorage, SharedTable, Vending};
use deltalens_storage::{CachingStorage, DynStorage};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::document::to_python;
use crate::error;
use crate::options::{self, Params, push};
use crate::rows::{self, Rows};
use crate::runtime;

/// Bytes of objects kept between calls on one table (the log's tail, checkpoint parts).
const CACHE_BYTES: usize = 32 * 1024 * 1024;

/// Rows held at once to sort in `query()`, and groups held to aggregate, unless
/// `max_buffered_rows` says otherwise (scans stream and hold none).
const MAX_BUFFERED_ROWS: usize = 10_000_000;

/// A Delta table opened for reading (nothing is read until a method asks).
#[pyclass(module = "deltalens", frozen)]
pub(crate) struct Table {
    url: String,
    table: deltalens_core::Table,
    limits: Limits,
    /// A Unity Catalog table's credentials, renewed while the table is open.
    _vending: Option<Arc<Vending>>,
    /// The shared table, when the URL names one: its server says which version a
    /// timestamp reads (its log, with the commit times, is not shared).
    shared: Option<Arc<SharedTable>>,
}

/// Open the Delta table at `url`: a local path, `s3://bucket/path`, `az://…`,
/// `abfss://…`, `gs://…`, `https://…`, a Unity Catalog name `uc://catalog.schema.table`,
/// or a Delta Sharing table `<profile file>#share.schema.table` (as the delta-sharing
/// connectors name it).
/// `storage_options` are object_store's keys, as deltalake and `deltalens -o` take them
/// (`AWS_*`, `AZURE_*`, `GOOGLE_*` variables are read too). `max_rows` bounds the rows a
/// call returns (none by default: scans stream), `max_buffered_rows` the rows a query
/// holds to group or sort (10,000,000), `max_decoded_bytes` the column data a call
/// decodes (none).
#[pyfunction]
#[pyo3(signature = (url, *, storage_options = None, max_rows = None, max_buffered_rows = None, max_decoded_bytes = None))]
pub(crate) fn open(
    py: Python<'_>,
    url: std::path::PathBuf,
    storage_options: Option<&Bound<'_, PyDict>>,
    max_rows: Option<usize>,
    max_buffered_rows: Option<usize>,
    max_decoded_bytes: Option<u64>,
) -> PyResult<Table> {
    let options = options::storage(py, storage_options)?;
    // a str or an os.PathLike (pathlib.Path), as deltalake and pyarrow take
    let url = url.to_string_lossy();
    let url = match url.trim() {
        "/" => "/".to_string(),
        u => u.trim_end_matches('/').to_string(),
    };
    let location = url.clone();
    // a shared table (<profile file>#share.schema.table) or a table location
    let opened = runtime::block_on(py, move || async move {
        match deltalens_object_store::open_shared(&location).await {
            Some(shared) => Ok(shared.map(|t| {
                let t = Arc::new(t);
                (t.clone() as DynStorage, None, Some(t))
            })),
            None => ObjectStoreStorage::open_resolved(&location, &options)
                .await
                .map(|(s, v)| Ok((Arc::new(s) as DynStorage, v, None))),
        }
    })?;
    let (store, vending, shared) = opened
        .map_err(|e| error::storage(py, &e))?
        .map_err(|e| error::error(py, e.code(), &e.to_string()))?;
    let storage = Arc::new(CachingStorage::new(store, CACHE_BYTES));
    Ok(Table {
        table: deltalens_core::Table::new(storage, &url),
        url,
        limits: Limits {
            max_rows,
            max_rows_buffered: Some(max_buffered_rows.unwrap_or(MAX_BUFFERED_ROWS)),
            max_decoded_bytes,
        },
        _vending: vending,
        shared,
    })
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0)
}

/// `version` and `timestamp` (at most one).
fn at(
    py: Python<'_>,
    version: Option<u64>,
    timestamp: Option<&Bound<'_, PyAny>>,
) -> PyResult<Params> {
    let mut p = Params::new();
    push(&mut p, "version", version.map(|v| v.to_string()));
    push(
        &mut p,
        "timestamp",
        timestamp
            .map(|t| options::time(py, "timestamp", t))
            .transpose()?,
    );
    Ok(p)
}

impl Table {
    fn request(&self, py: Python<'_>, route: &str, params: Params) -> PyResult<ApiRequest> {
        let mut params = self.shared_versions(py, params)?;
        params.push(("table".into(), self.url.clone()));
        parse_get(route, &params).map_err(|e| error::api(py, &e))
    }

    /// `params` with a shared table's timestamps turned into versions by its server
    /// (`timestamp`; the `from`/`to` of changes): its log, with the commit times, is not
    /// shared. Other tables' parameters are unchanged (the core reads their commit times).
    fn shared_versions(&self, py: Python<'_>, params: Params) -> PyResult<Params> {
        let Some(shared) = &self.shared else {
            return Ok(params);
        };
        if params.iter().any(|(k, _)| k == "version") {
            // both given: the request's own check refuses them
            return Ok(params);
        }
        let mut out = Params::with_capacity(params.len());
        for (k, v) in params {
            let is_version = !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit());
            let (name, first_after) = match k.as_str() {
                "timestamp" => ("version", false),
                "from" if !is_version => ("from", true),
                "to" if !is_version => ("to", false),
                _ => {
                    out.push((k, v));
                    continue;
                }
            };
            let ts = deltalens_core::time_travel::parse_timestamp(&v)
                .map_err(|e| error::option(py, &k, &e.to_string()))?;
            let s = shared.clone();
            let version = runtime::block_on(py, move || async move {
                if first_after {
                    s.first_version_at_or_after(ts).await
                } else {
                    s.version_at_timestamp(ts).await
                }
            })?
            .map_err(|e| error::error(py, e.code(), &e.to_string()))?;
            out.push((name.to_string(), version.to_string()));
        }
        Ok(out)
    }

    /// A query of a shared table with its timestamps (`TIMESTAMP AS OF`, `table_changes`
    /// bounds) turned into versions by the server, as [`Self::shared_versions`] does.
    fn shared_query(&self, py: Python<'_>, mut api: ApiRequest) -> PyResult<ApiRequest> {
        let (Some(shared), ApiRequest::Rows { query, .. }) = (&self.shared, &mut api) else {
            return Ok(api);
        };
        let s = shared.clone();
        let mut source = query.source.clone();
        let resolved = runtime::block_on(py, move || async move {
            let at = |e: deltalens_object_store::SharingError| (e.code(), e.to_string());
            match &mut source {
                Source::Table { at: spec, .. } => {
                    if let VersionSpec::Timestamp(ts) = *spec {
                        *spec = VersionSpec::Version(s.version_at_timestamp(ts).await.map_err(at)?);
                    }
                }
                Source::Changes { from, to, .. } => {
                    if let SqlBound::Timestamp(ts) = *from {
                        *from =
                            SqlBound::Version(s.first_version_at_or_after(ts).await.map_err(at)?);
                    }
                    if let Some(SqlBound::Timestamp(ts)) = *to {
                        *to = Some(SqlBound::Version(
                            s.version_at_timestamp(ts).await.map_err(at)?,
                        ));
                    }
                }
            }
            Ok(source)
        })?
        .map_err(|(code, message)| error::error(py, code, &message))?;
        query.source = resolved;
        Ok(api)
    }

    /// A document route's answer as Python values.
    fn document(&self, py: Python<'_>, route: &str, params: Params) -> PyResult<Py<PyAny>> {
        let api = self.request(py, route, params)?;
        let (table, limits) = (self.table.clone(), self.limits);
        let answer = runtime::block_on(py, move || async move {
            respond(api, &table, limits, now_ms()).await
        })?
        .map_err(|e| error::api(py, &e))?;
        let doc: serde_json::Value = deltalens_json::from_slice(&answer.body).map_err(|e| {
            error::error(
                py,
                "encode_failed",
                &format!("a document that is not JSON: {e}"),
            )
        })?;
        to_python(py, &doc)
    }

    /// A rows route's answer with `columns`, `filter` and `limit` besides `params`.
    fn rows_of(
        &self,
        py: Python<'_>,
        route: &str,
        mut params: Params,
        columns: Option<&Bound<'_, PyAny>>,
        filter: Option<String>,
        limit: Option<usize>,
    ) -> PyResult<Rows> {
        push(
            &mut params,
            "columns",
            columns.map(|c| options::columns(py, c)).transpose()?,
        );
        push(&mut params, "filter", filter);
        push(&mut params, "limit", limit.map(|l| l.to_string()));
        push(&mut params, "format", Some("arrow".into()));
        let api = self.request(py, route, params)?;
        self.rows(py, api)
    }

    /// A rows route's answer, streaming.
    fn rows(&self, py: Python<'_>, api: ApiRequest) -> PyResult<Rows> {
        match api {
            ApiRequest::Rows { query, .. } => {
                rows::start(py, *query, self.table.clone(), self.limits)
            }
            _ => Err(error::error(py, "internal", "not a request for rows")),
        }
    }
}

#[pymethods]
impl Table {
    /// The table's URL as opened.
    #[getter]
    fn url(&self) -> String {
        self.url.clone()
    }

    /// The latest version's number (the log is listed, no file is counted).
    fn version(&self, py: Python<'_>) -> PyResult<u64> {
        let table = self.table.clone();
        runtime::block_on(py, move || async move {
            table
                .version_info(deltalens_core::VersionSpec::Latest)
                .await
                .map(|v| v.version)
        })?
        .map_err(|e| error::api(py, &e.into()))
    }

    /// The overview (`deltalens info --json`): version, timestamp, files, size, rows,
    /// partitions, protocol, properties, …
    #[pyo3(signature = (*, version = None, timestamp = None))]
    fn info(
        &self,
        py: Python<'_>,
        version: Option<u64>,
        timestamp: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        self.document(py, "/v1/info", at(py, version, timestamp)?)
    }

    /// The table health report (`deltalens health --json`); `now` is the time ages are
    /// measured from, `series` the number of versions over history to report on.
    #[pyo3(signature = (*, version = None, timestamp = None, now = None, series = None))]
    fn health(
        &self,
        py: Python<'_>,
        version: Option<u64>,
        timestamp: Option<&Bound<'_, PyAny>>,
        now: Option<&Bound<'_, PyAny>>,
        series: Option<usize>,
    ) -> PyResult<Py<PyAny>> {
        let mut p = at(py, version, timestamp)?;
        push(
            &mut p,
            "now",
            now.map(|t| options::time(py, "now", t)).transpose()?,
        );
        push(&mut p, "series", series.map(|s| s.to_string()));
        self.document(py, "/v1/health", p)
    }

    /// The schema's columns (`deltalens schema --json`).
    #[pyo3(signature = (*, version = None, timestamp = None))]
    fn schema(
        &self,
        py: Python<'_>,
        version: Option<u64>,
        timestamp: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        self.document(py, "/v1/schema", at(py, version, timestamp)?)
    }

    /// The commits, newest first (`deltalens history --json`; Trino's `$history`).
    #[pyo3(signature = (*, limit = None))]
    fn history(&self, py: Python<'_>, limit: Option<usize>) -> PyResult<Py<PyAny>> {
        let mut p = Params::new();
        push(&mut p, "limit", limit.map(|l| l.to_string()));
        self.document(py, "/v1/history", p)
    }

    /// The active files in log order (`deltalens files --json`), a page of them with
    /// `limit` and `offset`.
    #[pyo3(signature = (*, version = None, timestamp = None, limit = None, offset = None))]
    fn files(
        &self,
        py: Python<'_>,
        version: Option<u64>,
        timestamp: Option<&Bound<'_, PyAny>>,
        limit: Option<usize>,
        offset: Option<usize>,
    ) -> PyResult<Py<PyAny>> {
        let mut p = at(py, version, timestamp)?;
        push(&mut p, "limit", limit.map(|l| l.to_string()));
        push(&mut p, "offset", offset.map(|o| o.to_string()));
        self.document(py, "/v1/files", p)
    }

    /// What changed between versions `start` and `end` (`deltalens diff --json`): files
    /// added and removed, deletion vectors, schema, partition columns, protocol and
    /// properties, rows inserted and deleted, and the changed rows (`columns`, `limit`).
    #[pyo3(signature = (start, end, *, columns = None, limit = None))]
    fn diff(
        &self,
        py: Python<'_>,
        start: u64,
        end: u64,
        columns: Option<&Bound<'_, PyAny>>,
        limit: Option<usize>,
    ) -> PyResult<Py<PyAny>> {
        let mut p = vec![
            ("from".to_string(), start.to_string()),
            ("to".to_string(), end.to_string()),
        ];
        push(
            &mut p,
            "columns",
            columns.map(|c| options::columns(py, c)).transpose()?,
        );
        push(&mut p, "limit", limit.map(|l| l.to_string()));
        self.document(py, "/v1/diff", p)
    }

    /// The rows of a version (the latest, or `version` / `timestamp`: Spark's `VERSION AS
    /// OF` / `TIMESTAMP AS OF`), `columns` of them, those matching `filter` (a SQL
    /// condition: `"amount > 100 AND region = 'eu'"`), at most `limit`.
    #[pyo3(signature = (*, version = None, timestamp = None, columns = None, filter = None, limit = None))]
    fn scan(
        &self,
        py: Python<'_>,
        version: Option<u64>,
        timestamp: Option<&Bound<'_, PyAny>>,
        columns: Option<&Bound<'_, PyAny>>,
        filter: Option<String>,
        limit: Option<usize>,
    ) -> PyResult<Rows> {
        let p = at(py, version, timestamp)?;
        self.rows_of(py, "/v1/scan", p, columns, filter, limit)
    }

    /// The change data feed (Trino's `table_changes`, deltalake's `load_cdf`) from
    /// `starting_version` (or `starting_timestamp`) to `ending_version` (or
    /// `ending_timestamp`; the latest by default), with `_change_type`,
    /// `_commit_version` and `_commit_timestamp`.
    #[pyo3(signature = (*, starting_version = None, ending_version = None, starting_timestamp = None, ending_timestamp = None, columns = None, filter = None, limit = None))]
    #[allow(clippy::too_many_arguments)]
    fn changes(
        &self,
        py: Python<'_>,
        starting_version: Option<u64>,
        ending_version: Option<u64>,
        starting_timestamp: Option<&Bound<'_, PyAny>>,
        ending_timestamp: Option<&Bound<'_, PyAny>>,
        columns: Option<&Bound<'_, PyAny>>,
        filter: Option<String>,
        limit: Option<usize>,
    ) -> PyResult<Rows> {
        let bound = |name: &str,
                     v: Option<u64>,
                     t: Option<&Bound<'_, PyAny>>|
         -> PyResult<Option<String>> {
            match (v, t) {
                (Some(_), Some(_)) => Err(error::option(
                    py,
                    name,
                    "a version and a timestamp: give one of them",
                )),
                (Some(v), None) => Ok(Some(v.to_string())),
                (None, Some(t)) => options::time(py, name, t).map(Some),
                (None, None) => Ok(None),
            }
        };
        let mut p = Params::new();
        let from = bound("starting_version", starting_version, starting_timestamp)?;
        if from.is_none() {
            return Err(error::option(
                py,
                "starting_version",
                "missing: the first version (or starting_timestamp) of the range",
            ));
        }
        push(&mut p, "from", from);
        push(
            &mut p,
            "to",
            bound("ending_version", ending_version, ending_timestamp)?,
        );
        self.rows_of(py, "/v1/changes", p, columns, filter, limit)
    }

    /// Run a query of the SQL subset (`SELECT … FROM '<url>' [VERSION AS OF n] [WHERE …]
    /// [GROUP BY …] [ORDER BY …] [LIMIT n]`, or `FROM table_changes('<url>', from, to)`)
    /// on this table: the URL the SQL names must be the one opened, so SQL from someone
    /// else cannot send this table's credentials to another table or host.
    fn query(&self, py: Python<'_>, sql: &str) -> PyResult<Rows> {
        let params = vec![("format".to_string(), "arrow".to_string())];
        let api = parse_query(sql, &params).map_err(|e| error::api(py, &e))?;
        let named = api.table().trim().trim_end_matches('/');
        if named != self.url {
            return Err(error::error(
                py,
                "table_not_allowed",
                &format!(
                    "the query reads {named}, not the table opened ({}): open that table and query it there",
                    self.url
                ),
            ));
        }
        let api = self.shared_query(py, api)?;
        self.rows(py, api)
    }

    fn __repr__(&self) -> String {
        format!("<deltalens.Table {}>", self.url)
    }
}
