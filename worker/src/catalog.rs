//! `uc://catalog.schema.table` on the worker: the table resolved with Unity Catalog and
//! read with the credentials it vends for it (the catalog endpoint and token are the
//! Worker's `UC_ENDPOINT`/`UC_TOKEN` or `DATABRICKS_HOST`/`DATABRICKS_TOKEN`). Resolutions
//! and credentials are kept per isolate and vended again before they expire, so most
//! requests ask the catalog nothing.

use std::cell::RefCell;

use deltalens_catalog::{
    CatalogConfig, CatalogError, MAX_ANSWER_BYTES, Request as UcRequest, TableInfo, Vended,
    VendedKind,
};
use deltalens_fetch_storage::BrowserOptions;
use deltalens_storage::{Store, TableUrl};
use worker::{Env, Fetch, Method, RequestInit};

use crate::config::Config;
use crate::errors::ErrorResponse;
use crate::storage::{Opened, open_with};
use deltalens_api::{Failure, catalog_failure};

/// Tables whose credentials an isolate keeps.
const KEPT: usize = 16;

thread_local! {
    /// (name, table, credentials, vended at ms), least recently used first.
    static VENDED: RefCell<Vec<(String, TableInfo, Vended, i64)>> = const { RefCell::new(Vec::new()) };
}

/// Opens `url` for one request: a catalog name through the catalog, anything else as is.
pub async fn open(url: &str, env: &Env, config: &Config) -> Result<Opened, ErrorResponse> {
    let name = match TableUrl::parse(url).map(|t| t.store) {
        Ok(Store::UnityCatalog { name }) => name,
        _ => return crate::storage::open(url, env, config),
    };
    if name.len() < 3 {
        return Err(ErrorResponse::new(
            Failure::InvalidTableUrl,
            format!("{url} is a catalog or schema, not a table: give uc://catalog.schema.table"),
        ));
    }
    let full = name.join(".");
    let (table, vended) = credentials(&full, env).await.map_err(catalog_error)?;
    let mut options = with_vended(&config.storage, &vended).map_err(catalog_error)?;
    if let Some(endpoint) = &table.s3_endpoint {
        // an R2 location: its account's S3 endpoint, region auto
        options.s3_endpoint = Some(endpoint.clone());
        options.s3_region = Some("auto".into());
    }
    open_with(&table.storage_location, env, config, &options)
}

/// The table and credentials for `full`, from this isolate's memory while fresh.
async fn credentials(full: &str, env: &Env) -> Result<(TableInfo, Vended), CatalogError> {
    let now = js_sys::Date::now() as i64;
    let kept = VENDED.with(|v| {
        v.borrow()
            .iter()
            .find(|(n, _, c, at)| n == full && !c.stale(*at, now))
            .map(|(_, t, c, _)| (t.clone(), c.clone()))
    });
    if let Some(k) = kept {
        return Ok(k);
    }
    let config = catalog_config(env)?;
    let req = config.get_table(full);
    let (status, body) = send(&config, &req).await?;
    let table = TableInfo::parse(&config, &req, full, status, &body)?;
    let req = config.read_credentials(&table.table_id, full);
    let (status, body) = send(&config, &req).await?;
    let vended = Vended::parse(&config, &req, &table, status, &body)?;
    VENDED.with(|v| {
        let mut v = v.borrow_mut();
        v.retain(|(n, ..)| n != full);
        if v.len() >= KEPT {
            v.remove(0);
        }
        v.push((full.to_string(), table.clone(), vended.clone(), now));
    });
    Ok((table, vended))
}

fn catalog_config(env: &Env) -> Result<CatalogConfig, CatalogError> {
    let get = |k: &str| {
        env.secret(k)
            .map(|s| s.to_string())
            .or_else(|_| env.var(k).map(|v| v.to_string()))
            .ok()
    };
    CatalogConfig::from_sources(&[], get)
}

/// `/v1/catalog?name=uc://catalog[.schema]` on the worker: what the catalog or schema
/// holds, as relay entries (the name must be allowed).
pub async fn browse(
    name: &str,
    env: &Env,
    config: &Config,
) -> Result<Vec<deltalens_storage::relay::CatalogEntry>, ErrorResponse> {
    config.allowlist.check(name)?;
    let parts = match TableUrl::parse(name).map(|t| t.store) {
        Ok(Store::UnityCatalog { name }) if name.len() < 3 => name,
        _ => {
            return Err(ErrorResponse::new(
                Failure::InvalidParameter,
                format!("{name} is not uc://catalog or uc://catalog.schema"),
            ));
        }
    };
    let uc = catalog_config(env).map_err(catalog_error)?;
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..deltalens_catalog::MAX_PAGES {
        let req = uc.list(&parts, token.as_deref());
        let (status, body) = send(&uc, &req).await.map_err(catalog_error)?;
        let page = deltalens_catalog::ListPage::parse(&uc, &req, &parts, status, &body)
            .map_err(catalog_error)?;
        out.extend(page.entries.into_iter().map(|e| {
            deltalens_storage::relay::CatalogEntry {
                name: format!("uc://{}", e.full_name),
                kind: match e.kind {
                    deltalens_catalog::EntryKind::Catalog => "catalog",
                    deltalens_catalog::EntryKind::Schema => "schema",
                    deltalens_catalog::EntryKind::Table => "table",
                }
                .into(),
                table_type: e.table_type,
                format: e.format,
                comment: e.comment,
            }
        }));
        match page.next_page_token {
            Some(t) if Some(&t) != token.as_ref() => token = Some(t),
            _ => break,
        }
    }
    Ok(out)
}

/// Sends a catalog request with the Workers runtime's fetch.
async fn send(config: &CatalogConfig, req: &UcRequest) -> Result<(u16, Vec<u8>), CatalogError> {
    let unreachable = |e: worker::Error| CatalogError::Unreachable {
        endpoint: config.endpoint.clone(),
        what: req.what.clone(),
        message: e.to_string(),
    };
    let headers = worker::Headers::new();
    for (k, v) in &req.headers {
        headers.set(k, v).map_err(unreachable)?;
    }
    let mut init = RequestInit::new();
    init.with_method(if req.method == "POST" {
        Method::Post
    } else {
        Method::Get
    })
    .with_headers(headers)
    // the token must not follow a redirect
    .with_redirect(worker::RequestRedirect::Manual);
    if let Some(b) = &req.body {
        init.with_body(Some(worker::wasm_bindgen::JsValue::from_str(b)));
    }
    let request = worker::Request::new_with_init(&req.url, &init).map_err(unreachable)?;
    let mut resp = Fetch::Request(request).send().await.map_err(unreachable)?;
    let announced = resp
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|v| v.parse::<usize>().ok());
    if announced.is_some_and(|n| n > MAX_ANSWER_BYTES) {
        return Err(CatalogError::InvalidResponse {
            endpoint: config.endpoint.clone(),
            what: req.what.clone(),
            why: "longer than 4 MiB".into(),
        });
    }
    let body = resp.bytes().await.map_err(unreachable)?;
    Ok((resp.status_code(), body))
}

/// The worker's storage options with the vended credential in place of its own.
fn with_vended(base: &BrowserOptions, v: &Vended) -> Result<BrowserOptions, CatalogError> {
    let mut o = base.clone();
    o.s3_access_key_id = None;
    o.s3_secret_access_key = None;
    o.s3_session_token = None;
    o.azure_sas = None;
    match &v.kind {
        VendedKind::Aws {
            access_key_id,
            secret_access_key,
            session_token,
        } => {
            o.s3_access_key_id = Some(access_key_id.clone());
            o.s3_secret_access_key = Some(secret_access_key.clone());
            o.s3_session_token = session_token.clone();
        }
        VendedKind::AzureSas(sas) => o.azure_sas = Some(sas.clone()),
        VendedKind::None => {}
        VendedKind::GcpToken(_) => {
            return Err(CatalogError::NoCredential {
                name: String::new(),
                why: "the worker reads GCS with public access only; read this table with the CLI or `deltalens serve`".into(),
            });
        }
    }
    Ok(o)
}

fn catalog_error(e: CatalogError) -> ErrorResponse {
    ErrorResponse::new(catalog_failure(&e), e.to_string())
}
