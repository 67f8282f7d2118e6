//! The HTTP API's requests, independent of any HTTP library:
//!
//! - `GET /v1/info|schema|history|files?table=URL[&version=N|&timestamp=T]` (`history`
//!   takes `limit`; `files` takes `limit` and `offset`: a page in log order, streamed);
//! - `GET /v1/health?table=URL[&version=N|&timestamp=T][&now=T]`: the table health report
//!   (`deltalens health --json`); ages and the tombstone retention window are measured
//!   from the server's clock, or from `now` (a timestamp) for a report that does not change;
//!   `&series=N`: instead, the health at N versions spread over the newest commits
//!   (`deltalens health --series N --json`, at most 32);
//! - `GET /v1/scan?table=URL[&version|timestamp][&columns=a,b][&filter=EXPR][&limit=N][&format=]`;
//! - `GET /v1/changes?table=URL&from=V[&to=V][&columns][&filter][&limit][&format]` (`from`
//!   and `to` are versions or timestamps, as `table_changes`);
//! - `POST /v1/query` with the SQL as the body (or `{"sql": …, "format": …}`), `format`
//!   also as a parameter.
//!
//! Unknown parameters are refused, so a typo does not silently read the whole table.

use deltalens_core::VersionSpec;
use deltalens_core::predicate::Predicate;
use deltalens_core::time_travel::parse_timestamp;

use deltalens_present::Format;

use crate::error::{ApiError, Result};
use crate::sql::{Bound, Item, Query, Source, parse_sql};

/// The row formats the API serves (the aligned text table and Parquet are the CLI's and
/// the explorer's).
pub const SERVED_FORMATS: [Format; 4] = [Format::Json, Format::Jsonl, Format::Csv, Format::Arrow];

/// The row format named by a `format` parameter.
pub fn parse_format(name: &str) -> Result<Format> {
    Format::from_name(name)
        .filter(|f| SERVED_FORMATS.contains(f))
        .ok_or_else(|| {
            ApiError::param(
                "format",
                format!("{name:?} is not one of json, jsonl, csv, arrow"),
            )
        })
}

/// One API request.
#[derive(Debug, Clone, PartialEq)]
pub enum ApiRequest {
    /// `GET /v1/info`: the table overview.
    Info {
        /// The table URL.
        table: String,
        /// The version to read (latest by default).
        at: VersionSpec,
    },
    /// `GET /v1/health`: the table health report.
    Health {
        /// The table URL.
        table: String,
        /// The version to read (latest by default).
        at: VersionSpec,
        /// The time to measure from, in ms since the epoch; `None`: the server's clock.
        now_ms: Option<i64>,
        /// `Some(n)`: the health at `n` versions over history instead.
        series: Option<usize>,
    },
    /// `GET /v1/schema`: the schema rows.
    Schema {
        /// The table URL.
        table: String,
        /// The version to read (latest by default).
        at: VersionSpec,
    },
    /// `GET /v1/history`: the commit history, newest first.
    History {
        /// The table URL.
        table: String,
        /// The most commits to return; `None` for all.
        limit: Option<usize>,
    },
    /// `GET /v1/files`: the active files in log order (the checkpoint's, then the newer
    /// commits'), streamed; `limit` and `offset` choose a page (a million-file table fits
    /// a worker's memory), and a response holds at most the rows budget's files.
    Files {
        /// The table URL.
        table: String,
        /// The version to read (latest by default).
        at: VersionSpec,
        /// The most files to return (a page); `None` for all.
        limit: Option<usize>,
        /// Files of the log order to skip first.
        offset: Option<usize>,
    },
    /// `GET /v1/diff`: what changed between versions `from` and `to` (files, schema,
    /// protocol, properties, rows), as `deltalens diff --json`.
    Diff {
        /// The table URL.
        table: String,
        /// The older version.
        from: u64,
        /// The newer version.
        to: u64,
        /// Only these columns of the changed rows; all when `None`.
        columns: Option<Vec<String>>,
        /// The most changed rows to return.
        limit: Option<usize>,
    },
    /// Rows: `GET /v1/scan`, `GET /v1/changes` or a SQL query.
    Rows {
        /// The query to run.
        query: Box<Query>,
        /// The output format of the rows.
        format: Format,
    },
    /// `POST /v1/partial`: one split of a fanned-out query, answered as its partial
    /// state (Arrow IPC) for the coordinator that sent it.
    Partial {
        /// The query (its table URL is checked against the allowlist like any other).
        query: Box<Query>,
        /// The split to read: its files are resolved inside that table.
        split: Box<deltalens_core::Split>,
    },
}

impl ApiRequest {
    /// The table URL the request reads (to check against the allowlist first).
    pub fn table(&self) -> &str {
        match self {
            ApiRequest::Info { table, .. }
            | ApiRequest::Health { table, .. }
            | ApiRequest::Schema { table, .. }
            | ApiRequest::History { table, .. }
            | ApiRequest::Files { table, .. }
            | ApiRequest::Diff { table, .. } => table,
            ApiRequest::Rows { query, .. } | ApiRequest::Partial { query, .. } => {
                query.source.url()
            }
        }
    }
}

struct Params<'a> {
    list: &'a [(String, String)],
}

impl<'a> Params<'a> {
    fn get(&self, name: &str) -> Option<&'a str> {
        self.list
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    fn only(&self, allowed: &[&str]) -> Result<()> {
        match self
            .list
            .iter()
            .find(|(k, _)| !allowed.contains(&k.as_str()))
        {
            Some((k, _)) => Err(ApiError::param(
                k,
                format!("unknown parameter; this route takes {}", allowed.join(", ")),
            )),
            None => Ok(()),
        }
    }

    fn table(&self) -> Result<String> {
        match self.get("table") {
            Some(t) if !t.is_empty() => Ok(t.to_string()),
            _ => Err(ApiError::param(
                "table",
                "missing: pass the table URL as ?table=",
            )),
        }
    }

    fn usize(&self, name: &str) -> Result<Option<usize>> {
        self.get(name)
            .map(|v| {
                v.parse()
                    .map_err(|_| ApiError::param(name, format!("{v:?} is not a count")))
            })
            .transpose()
    }

    fn at(&self) -> Result<VersionSpec> {
        match (self.get("version"), self.get("timestamp")) {
            (Some(_), Some(_)) => Err(ApiError::param(
                "version",
                "give either version or timestamp, not both",
            )),
            (Some(v), None) => v
                .parse()
                .map(VersionSpec::Version)
                .map_err(|_| ApiError::param("version", format!("{v:?} is not a version number"))),
            (None, Some(t)) => Ok(VersionSpec::Timestamp(parse_timestamp(t)?)),
            (None, None) => Ok(VersionSpec::Latest),
        }
    }

    fn bound(&self, name: &str) -> Result<Option<Bound>> {
        self.get(name)
            .map(|v| match v.parse() {
                Ok(n) => Ok(Bound::Version(n)),
                Err(_) => parse_timestamp(v)
                    .map(Bound::Timestamp)
                    .map_err(|e| ApiError::param(name, e.to_string())),
            })
            .transpose()
    }

    fn columns(&self) -> Result<Option<Vec<String>>> {
        let Some(c) = self.get("columns") else {
            return Ok(None);
        };
        let cols: Vec<String> = c
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        if cols.is_empty() {
            return Err(ApiError::param(
                "columns",
                "empty: name at least one column",
            ));
        }
        Ok(Some(cols))
    }

    fn filter(&self) -> Result<Option<Predicate>> {
        self.get("filter")
            .filter(|f| !f.trim().is_empty())
            .map(|f| Predicate::parse(f).map_err(|e| ApiError::param("filter", e.to_string())))
            .transpose()
    }

    fn format(&self) -> Result<Format> {
        self.get("format").map_or(Ok(Format::Json), parse_format)
    }
}

const AT: [&str; 3] = ["table", "version", "timestamp"];

/// The parameters naming a table and its version ([`AT`]), and `extra`.
fn with<'s>(extra: &[&'s str]) -> Vec<&'s str> {
    AT.iter().chain(extra).copied().collect()
}

/// A `GET` of `path` (`/v1/…`) with its decoded query parameters.
pub fn parse_get(path: &str, params: &[(String, String)]) -> Result<ApiRequest> {
    let p = Params { list: params };
    Ok(match path.trim_end_matches('/') {
        route @ ("/v1/info" | "/v1/schema") => {
            p.only(&AT)?;
            let (table, at) = (p.table()?, p.at()?);
            match route {
                "/v1/info" => ApiRequest::Info { table, at },
                _ => ApiRequest::Schema { table, at },
            }
        }
        "/v1/health" => {
            p.only(&with(&["now", "series"]))?;
            ApiRequest::Health {
                series: p.usize("series")?,
                table: p.table()?,
                at: p.at()?,
                now_ms: p
                    .get("now")
                    .map(|t| parse_timestamp(t).map_err(|e| ApiError::param("now", e.to_string())))
                    .transpose()?,
            }
        }
        "/v1/files" => {
            p.only(&with(&["limit", "offset"]))?;
            ApiRequest::Files {
                table: p.table()?,
                at: p.at()?,
                limit: p.usize("limit")?,
                offset: p.usize("offset")?,
            }
        }
        "/v1/diff" => diff(&p)?,
        "/v1/history" => {
            p.only(&["table", "limit"])?;
            ApiRequest::History {
                table: p.table()?,
                limit: p.usize("limit")?,
            }
        }
        "/v1/scan" => scan(&p)?,
        "/v1/changes" => changes(&p)?,
        other => {
            return Err(ApiError::param(
                "path",
                format!(
                    "{other} is not a route: GET /v1/info, /v1/health, /v1/schema, /v1/history, /v1/files, /v1/diff, /v1/scan, /v1/changes, POST /v1/query"
                ),
            ));
        }
    })
}

/// `GET /v1/diff`: the files added and removed between two versions.
fn diff(p: &Params<'_>) -> Result<ApiRequest> {
    p.only(&["table", "from", "to", "columns", "limit"])?;
    let version = |name: &str| -> Result<u64> {
        let v = p
            .get(name)
            .ok_or_else(|| ApiError::param(name, "missing: the version to compare (a number)"))?;
        v.parse()
            .map_err(|_| ApiError::param(name, format!("{v:?} is not a version")))
    };
    Ok(ApiRequest::Diff {
        table: p.table()?,
        from: version("from")?,
        to: version("to")?,
        columns: p.columns()?,
        limit: p.usize("limit")?,
    })
}

/// `GET /v1/scan`: rows of one version.
fn scan(p: &Params<'_>) -> Result<ApiRequest> {
    p.only(&with(&["columns", "filter", "limit", "format"]))?;
    let items = match p.columns()? {
        None => vec![Item::Star],
        Some(cols) => cols
            .into_iter()
            .map(|name| Item::Column { name, alias: None })
            .collect(),
    };
    let source = Source::Table {
        url: p.table()?,
        at: p.at()?,
    };
    rows(p, source, items)
}

/// The rows of `source` a `GET` asks for: `items`, then its `filter`, `limit` and `format`.
fn rows(p: &Params<'_>, source: Source, items: Vec<Item>) -> Result<ApiRequest> {
    Ok(ApiRequest::Rows {
        query: Box::new(Query {
            source,
            items,
            filter: p.filter()?,
            group_by: Vec::new(),
            order_by: Vec::new(),
            limit: p.usize("limit")?,
        }),
        format: p.format()?,
    })
}

/// `GET /v1/changes`: the change data feed of a range of versions, as the CLI's `changes`.
fn changes(p: &Params<'_>) -> Result<ApiRequest> {
    p.only(&[
        "table", "from", "to", "columns", "filter", "limit", "format",
    ])?;
    let from = p.bound("from")?.ok_or_else(|| {
        ApiError::param(
            "from",
            "missing: the first version (or timestamp) of the range",
        )
    })?;
    // as the CLI: the chosen columns, then the change columns
    let items = match p.columns()? {
        None => vec![Item::Star],
        Some(mut cols) => {
            for c in deltalens_core::changes::change_fields()
                .iter()
                .map(|f| f.name().clone())
            {
                if !cols.contains(&c) {
                    cols.push(c);
                }
            }
            cols.into_iter()
                .map(|name| Item::Column { name, alias: None })
                .collect()
        }
    };
    let source = Source::Changes {
        url: p.table()?,
        from,
        to: p.bound("to")?,
    };
    rows(p, source, items)
}

/// `POST /v1/partial`: the body is `{"sql": …, "split": …}`, a split of a plan of the
/// query's table (`deltalens plan --json`'s `splits` element). Only table scans split.
pub fn parse_partial(body: &[u8]) -> Result<ApiRequest> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Body {
        sql: Option<String>,
        /// A `GET /v1/scan`'s parameters (its format and budgets are the coordinator's).
        scan: Option<Vec<(String, String)>>,
        split: deltalens_core::Split,
    }
    let b: Body = deltalens_json::from_slice(body).map_err(|e| {
        ApiError::param(
            "body",
            format!("not a split request ({e}): send {{\"sql\": …, \"split\": …}} or {{\"scan\": [[name, value], …], \"split\": …}}"),
        )
    })?;
    let query = match (b.sql, b.scan) {
        (Some(sql), None) => parse_sql(&sql)?,
        (None, Some(params)) => match parse_get("/v1/scan", &params)? {
            ApiRequest::Rows { query, .. } => *query,
            _ => return Err(ApiError::param("scan", "not a scan's parameters")),
        },
        _ => {
            return Err(ApiError::param(
                "body",
                "a split request holds either \"sql\" or \"scan\"",
            ));
        }
    };
    if !matches!(query.source, Source::Table { .. }) {
        return Err(ApiError::unsupported(
            "a split of table_changes",
            "split table scans only",
        ));
    }
    Ok(ApiRequest::Partial {
        query: Box::new(query),
        split: Box::new(b.split),
    })
}

/// The parameters of a `GET /v1/scan` as a split request's `scan` (see [`parse_partial`]):
/// all but the output format and the budgets, which stay the coordinator's.
pub fn scan_for_splits(params: &[(String, String)]) -> Vec<(String, String)> {
    params
        .iter()
        .filter(|(k, _)| k != "format" && !k.starts_with("budget_"))
        .cloned()
        .collect()
}

/// `POST /v1/query`: the body is the SQL text, or a JSON object `{"sql": …, "format": …}`.
pub fn parse_query(body: &str, params: &[(String, String)]) -> Result<ApiRequest> {
    let p = Params { list: params };
    p.only(&["format"])?;
    let mut format = p.format()?;
    let trimmed = body.trim_start();
    let sql = if trimmed.starts_with('{') {
        let v: serde_json::Value = deltalens_json::from_str(trimmed)
            .map_err(|e| ApiError::param("body", format!("not valid JSON: {e}")))?;
        if let Some(f) = v.get("format").and_then(|f| f.as_str()) {
            format = parse_format(f)?;
        }
        v.get("sql")
            .and_then(|s| s.as_str())
            .ok_or_else(|| ApiError::param("sql", "missing: the body's JSON needs \"sql\""))?
            .to_string()
    } else {
        body.to_string()
    };
    if sql.trim().is_empty() {
        return Err(ApiError::param("sql", "empty: send a SELECT as the body"));
    }
    Ok(ApiRequest::Rows {
        query: Box::new(parse_sql(&sql)?),
        format,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn diff_takes_two_versions() {
        let r = parse_get(
            "/v1/diff",
            &params(&[
                ("table", "s3://b/t"),
                ("from", "1"),
                ("to", "4"),
                ("columns", "a,b"),
                ("limit", "7"),
            ]),
        )
        .unwrap();
        assert_eq!(
            r,
            ApiRequest::Diff {
                table: "s3://b/t".into(),
                from: 1,
                to: 4,
                columns: Some(vec!["a".into(), "b".into()]),
                limit: Some(7),
            }
        );
        for (bad, names) in [
            (vec![("table", "s3://b/t"), ("to", "4")], "from"),
            (
                vec![("table", "s3://b/t"), ("from", "x"), ("to", "4")],
                "from",
            ),
            (
                vec![("table", "s3://b/t"), ("from", "1"), ("to", "-4")],
                "to",
            ),
            (
                vec![
                    ("table", "s3://b/t"),
                    ("from", "1"),
                    ("to", "4"),
                    ("version", "2"),
                ],
                "version",
            ),
        ] {
            let e = parse_get("/v1/diff", &params(&bad)).unwrap_err();
            assert_eq!(e.code(), "invalid_parameter");
            assert!(e.to_string().contains(names), "{e}");
        }
    }

    #[test]
    fn routes() {
        let r = parse_get(
            "/v1/info",
            &params(&[("table", "s3://b/t"), ("version", "3")]),
        )
        .unwrap();
        assert_eq!(
            r,
            ApiRequest::Info {
                table: "s3://b/t".into(),
                at: VersionSpec::Version(3)
            }
        );
        let r = parse_get(
            "/v1/health",
            &params(&[("table", "s3://b/t"), ("version", "3")]),
        )
        .unwrap();
        assert_eq!(
            r,
            ApiRequest::Health {
                table: "s3://b/t".into(),
                at: VersionSpec::Version(3),
                now_ms: None,
                series: None,
            }
        );
        assert_eq!(r.table(), "s3://b/t");
        let r = parse_get(
            "/v1/health/",
            &params(&[
                ("table", "s3://b/t"),
                ("timestamp", "2024-01-01"),
                ("now", "2024-01-02"),
                ("series", "4"),
            ]),
        )
        .unwrap();
        assert_eq!(
            r,
            ApiRequest::Health {
                table: "s3://b/t".into(),
                at: VersionSpec::Timestamp(1_704_067_200_000),
                now_ms: Some(1_704_153_600_000),
                series: Some(4),
            }
        );
        let r = parse_get(
            "/v1/scan",
            &params(&[
                ("table", "s3://b/t"),
                ("columns", "a, b"),
                ("filter", "a > 1"),
                ("limit", "10"),
                ("format", "csv"),
            ]),
        )
        .unwrap();
        let ApiRequest::Rows { query, format } = r else {
            panic!()
        };
        assert_eq!(format, Format::Csv);
        assert_eq!(query.items.len(), 2);
        assert_eq!(query.limit, Some(10));
        let r = parse_get(
            "/v1/changes",
            &params(&[
                ("table", "t://x/y"),
                ("from", "1"),
                ("to", "2024-01-01"),
                ("columns", "id"),
            ]),
        )
        .unwrap();
        let ApiRequest::Rows { query, .. } = r else {
            panic!()
        };
        assert_eq!(query.items.len(), 4);
        assert!(matches!(
            query.source,
            Source::Changes {
                from: Bound::Version(1),
                to: Some(Bound::Timestamp(_)),
                ..
            }
        ));
    }

    #[test]
    fn bad_requests_name_the_parameter() {
        let name = |r: Result<ApiRequest>| match r {
            Err(ApiError::InvalidParameter { parameter, .. }) => parameter,
            other => panic!("{other:?}"),
        };
        assert_eq!(name(parse_get("/v1/info", &params(&[]))), "table");
        assert_eq!(
            name(parse_get(
                "/v1/scan",
                &params(&[("table", "x"), ("limt", "1")])
            )),
            "limt"
        );
        assert_eq!(
            name(parse_get(
                "/v1/scan",
                &params(&[("table", "x"), ("limit", "-1")])
            )),
            "limit"
        );
        assert_eq!(
            name(parse_get(
                "/v1/scan",
                &params(&[("table", "x"), ("format", "xml")])
            )),
            "format"
        );
        assert_eq!(
            name(parse_get(
                "/v1/scan",
                &params(&[("table", "x"), ("filter", "a >")])
            )),
            "filter"
        );
        assert_eq!(
            name(parse_get(
                "/v1/info",
                &params(&[
                    ("table", "x"),
                    ("version", "1"),
                    ("timestamp", "2024-01-01")
                ])
            )),
            "version"
        );
        assert_eq!(
            name(parse_get("/v1/changes", &params(&[("table", "x")]))),
            "from"
        );
        assert_eq!(name(parse_get("/v2/nothing", &params(&[]))), "path");
        assert_eq!(name(parse_get("/v1/health", &params(&[]))), "table");
        for (bad, param) in [("now", "now"), ("limit", "limit"), ("version", "version")] {
            assert_eq!(
                name(parse_get(
                    "/v1/health",
                    &params(&[("table", "x"), (bad, "yesterday-ish")])
                )),
                param
            );
        }
        assert_eq!(name(parse_query("  ", &[])), "sql");
        assert_eq!(name(parse_query("{\"sq\": 1}", &[])), "sql");
        let r = parse_query(
            "{\"sql\": \"SELECT * FROM 'r2://T/x' LIMIT 1\", \"format\": \"jsonl\"}",
            &[],
        )
        .unwrap();
        assert!(matches!(
            r,
            ApiRequest::Rows {
                format: Format::Jsonl,
                ..
            }
        ));
        assert_eq!(r.table(), "r2://T/x");
    }
}
