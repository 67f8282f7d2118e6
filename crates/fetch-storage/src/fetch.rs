use bytes::Bytes;
use deltalens_storage::{ByteRange, ObjectMeta, Result, Storage, StorageError};
use js_sys::{Function, Promise, Reflect, Uint8Array};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Request, RequestInit, RequestMode, Response};

/// Characters kept as they are in URL paths.
const PATH: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'/')
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// A table served over HTTP(S), read with `fetch` and `Range` requests.
#[derive(Debug, Clone)]
pub struct FetchStorage {
    base: String,
}

impl FetchStorage {
    /// `base` is the table root URL (`https://host/path/table`).
    pub fn new(base: &str) -> Self {
        FetchStorage {
            base: base.trim_end_matches('/').to_string(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!(
            "{}/{}",
            self.base,
            utf8_percent_encode(path.trim_start_matches('/'), PATH)
        )
    }

    async fn fetch(&self, path: &str, method: &str, range: Option<&ByteRange>) -> Result<Response> {
        let fail = |message: String| StorageError::Backend {
            path: path.to_string(),
            operation: "fetch",
            message,
        };
        let init = RequestInit::new();
        init.set_method(method);
        init.set_mode(RequestMode::Cors);
        let url = self.url(path);
        let req = Request::new_with_str_and_init(&url, &init).map_err(|e| fail(js_text(&e)))?;
        if let Some(r) = range {
            req.headers()
                .set("Range", &r.to_string())
                .map_err(|e| fail(js_text(&e)))?;
        }
        let global = js_sys::global();
        let fetch: Function = Reflect::get(&global, &JsValue::from_str("fetch"))
            .and_then(|f| f.dyn_into::<Function>())
            .map_err(|e| fail(format!("no fetch in this environment: {}", js_text(&e))))?;
        let promise: Promise = fetch
            .call1(&global, &req)
            .and_then(|p| p.dyn_into::<Promise>())
            .map_err(|e| fail(js_text(&e)))?;
        let resp: Response = JsFuture::from(promise)
            .await
            .and_then(|r| r.dyn_into::<Response>())
            .map_err(|e| {
                fail(format!(
                    "{} (a network or CORS failure: the server must allow this origin, the Range header, and expose Content-Range, Content-Length and ETag)",
                    js_text(&e)
                ))
            })?;
        match resp.status() {
            200..=299 => Ok(resp),
            404 => Err(StorageError::NotFound {
                path: path.to_string(),
            }),
            401 | 403 => Err(StorageError::PermissionDenied {
                path: path.to_string(),
                operation: if method == "HEAD" { "head" } else { "get" },
                message: format!("HTTP {} from {url}", resp.status()),
            }),
            s => Err(fail(format!("HTTP {s} from {url}"))),
        }
    }

    async fn body(&self, path: &str, resp: &Response) -> Result<Bytes> {
        let buf = resp.array_buffer().map_err(|e| StorageError::Backend {
            path: path.to_string(),
            operation: "get",
            message: js_text(&e),
        })?;
        let buf = JsFuture::from(buf)
            .await
            .map_err(|e| StorageError::Backend {
                path: path.to_string(),
                operation: "get",
                message: js_text(&e),
            })?;
        Ok(Bytes::from(Uint8Array::new(&buf).to_vec()))
    }
}

fn js_text(v: &JsValue) -> String {
    v.as_string()
        .or_else(|| js_sys::JSON::stringify(v).ok().and_then(|s| s.as_string()))
        .unwrap_or_else(|| format!("{v:?}"))
}

#[async_trait::async_trait(?Send)]
impl Storage for FetchStorage {
    async fn list(&self, prefix: &str, _start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        Err(StorageError::ListingUnsupported {
            path: prefix.to_string(),
            message: "plain HTTP hosting has no listing".into(),
        })
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        let resp = self.fetch(path, "GET", Some(&range)).await?;
        let data = self.body(path, &resp).await?;
        if resp.status() == 206 {
            return Ok(data);
        }
        // the server ignored Range and sent the whole object: still correct, but slower
        range.slice(path, &data)
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        let resp = self.fetch(path, "GET", None).await?;
        self.body(path, &resp).await
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        let resp = self.fetch(path, "HEAD", None).await?;
        let header = |h: &str| resp.headers().get(h).ok().flatten();
        let size = header("content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let last_modified_ms = header("last-modified")
            .map(|v| js_sys::Date::parse(&v))
            .filter(|t| t.is_finite())
            .map(|t| t as i64);
        Ok(ObjectMeta {
            path: path.to_string(),
            size,
            last_modified_ms,
        })
    }
}
