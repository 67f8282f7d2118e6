//! A table as the catalog describes it, checked: a Delta table (not a view, not another
//! format) with a storage location.

use deltalens_storage::TableUrl;

use crate::config::CatalogConfig;
use crate::error::CatalogError;
use crate::request::Request;

/// The longest answer read from the catalog.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;

/// What deltalens needs of a catalog table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableInfo {
    /// `catalog.schema.table`.
    pub full_name: String,
    /// The id credentials are vended for.
    pub table_id: String,
    /// Where the table's files are (`s3://…`, `abfss://…`, `gs://…`; an R2 location as
    /// `s3://bucket/path` with [`TableInfo::s3_endpoint`]).
    pub storage_location: String,
    /// The S3 endpoint of an R2 location (`https://<account>.r2.cloudflarestorage.com`).
    pub s3_endpoint: Option<String>,
}

/// An R2 location as Unity Catalog writes it, `r2://bucket@account.r2.cloudflarestorage.com/path`,
/// as an S3 URL and its endpoint.
fn r2_location(location: &str) -> Result<(String, String), String> {
    let u = url::Url::parse(location).map_err(|e| format!("not a URL ({e})"))?;
    let host = u.host_str().unwrap_or("");
    let account = host
        .strip_suffix(".r2.cloudflarestorage.com")
        .filter(|a| !a.is_empty() && a.len() <= 64 && a.bytes().all(|b| b.is_ascii_alphanumeric()))
        .ok_or("R2 locations are r2://bucket@<account>.r2.cloudflarestorage.com/path")?;
    let bucket = u.username();
    if u.port().is_some() || u.password().is_some() || u.query().is_some() || u.fragment().is_some()
    {
        return Err("an R2 location carries no port, password, query or fragment".into());
    }
    let s3 = format!("s3://{bucket}{}", u.path());
    TableUrl::parse(&s3).map_err(|e| e.message)?;
    Ok((s3, format!("https://{account}.r2.cloudflarestorage.com")))
}

/// The error of a non-2xx answer to `req`, in the API's `{"error_code","message"}` form.
pub(crate) fn answer_error(
    config: &CatalogConfig,
    req: &Request,
    name: &str,
    status: u16,
    body: &[u8],
) -> CatalogError {
    let v: serde_json::Value = deltalens_json::from_slice(body).unwrap_or_default();
    let code = v.get("error_code").and_then(|c| c.as_str()).unwrap_or("");
    let message = v
        .get("message")
        .and_then(|m| m.as_str())
        .map(str::to_string)
        .unwrap_or_else(|| String::from_utf8_lossy(&body[..body.len().min(300)]).into_owned());
    let message = if code.is_empty() {
        message
    } else {
        format!("{code}: {message}")
    };
    let endpoint = config.endpoint.clone();
    match status {
        401 => CatalogError::Unauthenticated { endpoint, message },
        403 => CatalogError::PermissionDenied {
            name: name.to_string(),
            message,
        },
        404 => CatalogError::NotFound {
            name: name.to_string(),
            endpoint,
            message,
        },
        _ if code.ends_with("NOT_FOUND") || code.ends_with("DOES_NOT_EXIST") => {
            CatalogError::NotFound {
                name: name.to_string(),
                endpoint,
                message,
            }
        }
        _ => CatalogError::Http {
            endpoint,
            what: req.what.clone(),
            status,
            message,
        },
    }
}

/// An answer that is not what the API specifies.
pub(crate) fn invalid_answer(config: &CatalogConfig, req: &Request, why: &str) -> CatalogError {
    CatalogError::InvalidResponse {
        endpoint: config.endpoint.clone(),
        what: req.what.clone(),
        why: why.to_string(),
    }
}

/// The JSON of a 2xx answer to `req` (about `name`), at most [`MAX_ANSWER_BYTES`]; the
/// catalog's error for any other status.
pub(crate) fn json_answer(
    config: &CatalogConfig,
    req: &Request,
    name: &str,
    status: u16,
    body: &[u8],
) -> Result<serde_json::Value, CatalogError> {
    if !(200..300).contains(&status) {
        return Err(answer_error(config, req, name, status, body));
    }
    if body.len() > MAX_ANSWER_BYTES {
        return Err(invalid_answer(config, req, "longer than 4 MiB"));
    }
    deltalens_json::from_slice(body)
        .map_err(|e| invalid_answer(config, req, &format!("not JSON ({e})")))
}

/// Table types that are views: no files of their own to read.
const VIEWS: [&str; 3] = ["VIEW", "MATERIALIZED_VIEW", "METRIC_VIEW"];

impl TableInfo {
    /// Read the answer to [`CatalogConfig::get_table`] for `full_name`.
    pub fn parse(
        config: &CatalogConfig,
        req: &Request,
        full_name: &str,
        status: u16,
        body: &[u8],
    ) -> Result<TableInfo, CatalogError> {
        let v = json_answer(config, req, full_name, status, body)?;
        let invalid = |why: &str| invalid_answer(config, req, why);
        let text = |k: &str| v.get(k).and_then(|x| x.as_str()).map(str::to_string);
        let kind = text("table_type").unwrap_or_default();
        if VIEWS.contains(&kind.to_ascii_uppercase().as_str()) {
            return Err(CatalogError::View {
                name: full_name.to_string(),
                kind,
            });
        }
        let format = text("data_source_format").unwrap_or_default();
        if !format.eq_ignore_ascii_case("DELTA") {
            return Err(CatalogError::NotDelta {
                name: full_name.to_string(),
                format: if format.is_empty() {
                    "format-less".into()
                } else {
                    format
                },
            });
        }
        let table_id = text("table_id")
            .filter(|t| !t.is_empty() && t.len() <= 128)
            .ok_or_else(|| invalid("no table_id"))?;
        let location = text("storage_location")
            .filter(|l| !l.is_empty())
            .ok_or_else(|| CatalogError::BadLocation {
                name: full_name.to_string(),
                location: String::new(),
                why: "the catalog gives no storage_location".into(),
            })?;
        let bad = |why: String| CatalogError::BadLocation {
            name: full_name.to_string(),
            location: location.clone(),
            why,
        };
        let (location, s3_endpoint) = if location.starts_with("r2://") {
            let (s3, endpoint) = r2_location(&location).map_err(bad)?;
            (s3, Some(endpoint))
        } else {
            (location.clone(), None)
        };
        // the location is checked like any table URL (it names where credentials go), as
        // it is kept and used: checking the text before its trailing `/` are trimmed let
        // `s3://l/. //` pass as the key `. ` and be kept as `s3://l/. `, which every
        // later parse (trimming blanks) read as `s3://l/.` and refused (found by fuzzing)
        let location = location.trim_end_matches('/').to_string();
        let parsed = TableUrl::parse(&location).map_err(|e| CatalogError::BadLocation {
            name: full_name.to_string(),
            location: location.clone(),
            why: e.message,
        })?;
        if matches!(
            parsed.store,
            deltalens_storage::Store::UnityCatalog { .. } | deltalens_storage::Store::R2 { .. }
        ) {
            return Err(CatalogError::BadLocation {
                name: full_name.to_string(),
                location,
                why: "not a storage URL".into(),
            });
        }
        Ok(TableInfo {
            full_name: full_name.to_string(),
            table_id,
            storage_location: location,
            s3_endpoint,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> CatalogConfig {
        CatalogConfig {
            endpoint: "http://127.0.0.1:1".into(),
            token: "t".into(),
        }
    }

    fn parse(status: u16, body: &str) -> Result<TableInfo, CatalogError> {
        let c = config();
        let r = c.get_table("m.s.t");
        TableInfo::parse(&c, &r, "m.s.t", status, body.as_bytes())
    }

    /// Fuzzing (relay target) found a location the check passed but whose kept form did
    /// not parse: `s3://l/. ///` was checked with its trailing `/` (key `. `) and kept
    /// without them (`s3://l/. `, which a parse trims to `s3://l/.`). What is kept is what
    /// was checked now: that location is refused, and any kept one parses.
    #[test]
    fn the_kept_location_is_the_checked_one() {
        for location in ["s3://l/. ///////////////", "s3://b/t. /", "s3://b/ /"] {
            let body = format!(
                r#"{{"table_type":"EXTERNAL","data_source_format":"DELTA","storage_location":"{location}","table_id":"a"}}"#
            );
            if let Ok(t) = parse(200, &body) {
                TableUrl::parse(&t.storage_location)
                    .unwrap_or_else(|e| panic!("{location} kept as {}: {e}", t.storage_location));
            }
        }
        assert!(parse(
            200,
            r#"{"table_type":"EXTERNAL","data_source_format":"DELTA","storage_location":"s3://l/. ///","table_id":"a"}"#
        )
        .is_err());
    }

    #[test]
    fn delta_tables_resolve_to_their_location() {
        let t = parse(
            200,
            r#"{"name":"t","table_type":"EXTERNAL","data_source_format":"DELTA","storage_location":"s3://b/x/","table_id":"abc"}"#,
        )
        .unwrap();
        assert_eq!(t.storage_location, "s3://b/x");
        assert_eq!(t.table_id, "abc");
    }

    #[test]
    fn r2_locations_become_s3_with_the_account_endpoint() {
        let t = parse(
            200,
            r#"{"table_type":"EXTERNAL","data_source_format":"DELTA","table_id":"a","storage_location":"r2://bkt@0123abcd.r2.cloudflarestorage.com/x/t"}"#,
        )
        .unwrap();
        assert_eq!(t.storage_location, "s3://bkt/x/t");
        assert_eq!(
            t.s3_endpoint.as_deref(),
            Some("https://0123abcd.r2.cloudflarestorage.com")
        );
        for bad in [
            "r2://bkt@evil.example/x",
            "r2://bkt@a.r2.cloudflarestorage.com.evil/x",
            "r2://bkt@a.r2.cloudflarestorage.com:444/x",
            "r2://bkt:pw@a.r2.cloudflarestorage.com/x",
        ] {
            let body = format!(
                r#"{{"table_type":"EXTERNAL","data_source_format":"DELTA","table_id":"a","storage_location":"{bad}"}}"#
            );
            assert!(parse(200, &body).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_catalog_answer_has_its_message() {
        let cases: [(u16, &str, &str); 8] = [
            (
                404,
                r#"{"error_code":"TABLE_NOT_FOUND","message":"Table not found: m.s.t"}"#,
                "was not found",
            ),
            (
                403,
                r#"{"error_code":"PERMISSION_DENIED","message":"no SELECT"}"#,
                "EXTERNAL USE SCHEMA",
            ),
            (
                401,
                r#"{"error_code":"UNAUTHENTICATED","message":"bad"}"#,
                "refused the token",
            ),
            (500, "oops", "HTTP 500"),
            (200, r#"{"table_type":"VIEW","table_id":"a"}"#, "is a view"),
            (
                200,
                r#"{"table_type":"EXTERNAL","data_source_format":"PARQUET","table_id":"a","storage_location":"s3://b/t"}"#,
                "PARQUET table, not Delta",
            ),
            (
                200,
                r#"{"table_type":"MANAGED","data_source_format":"DELTA","table_id":"a"}"#,
                "no storage_location",
            ),
            (
                200,
                r#"{"table_type":"MANAGED","data_source_format":"DELTA","table_id":"a","storage_location":"https://evil?.blob.core.windows.net/c"}"#,
                "cannot open",
            ),
        ];
        for (status, body, want) in cases {
            let e = parse(status, body).unwrap_err().to_string();
            assert!(e.contains(want), "{status} {body}: {e}");
        }
        assert!(matches!(
            parse(200, "not json"),
            Err(CatalogError::InvalidResponse { .. })
        ));
    }
}
