//! The options JavaScript passes, checked: those of `openTable` (the store's endpoint and
//! credentials, a relay, a `fetch` hook) and those of each call (the API's parameters).
//! An unknown option is an error naming it (a misspelt credential must not be ignored).

use deltalens_fetch_storage::BrowserOptions;
use js_sys::{Array, Date, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};

use crate::error::option;

/// What `openTable` was given besides the URL.
#[derive(Default)]
pub(crate) struct Open {
    /// The store's endpoint, credentials and relay.
    pub(crate) browser: BrowserOptions,
    /// Called instead of the global `fetch`.
    pub(crate) fetch: Option<Function>,
    /// A server runtime (no CORS mode); `None`: detected (Cloudflare Workers).
    pub(crate) server: Option<bool>,
    /// How long a request may wait for its answer's headers.
    pub(crate) timeout_ms: Option<u32>,
    /// Rows one call may return or hold (see [`MAX_ROWS`]).
    pub(crate) max_rows: Option<usize>,
    /// Bytes one call may decode (see [`MAX_DECODED_BYTES`]).
    pub(crate) max_decoded_bytes: Option<u64>,
}

/// Rows a call returns (and holds to group or sort) unless `maxRows` says otherwise: a
/// result is one buffer in the caller's memory, so a scan of a whole big table stops
/// with an error naming this limit instead of exhausting a tab or a worker.
pub(crate) const MAX_ROWS: usize = 100_000;
/// Bytes of column data a call decodes unless `maxDecodedBytes` says otherwise.
pub(crate) const MAX_DECODED_BYTES: u64 = 256 << 20;

const OPEN: &str = "s3Endpoint, s3Region, s3AccessKeyId, s3SecretAccessKey, s3SessionToken, \
    s3VirtualHosted, azureSas, azureEndpoint, azureAccount, relay, relayToken, fetch, server, \
    timeoutMs, maxRows, maxDecodedBytes";

/// The entries of an options object (none for `undefined` or `null`), skipping those
/// whose value is `undefined` or `null` (absent, as JavaScript callers write it).
///
/// Read by hand rather than by serde-wasm-bindgen's `from_value` into a derived struct:
/// that reads only a struct's own field names, so `deny_unknown_fields` never sees a
/// misspelt option (RReverser/serde-wasm-bindgen#39), and capturing the rest with
/// `#[serde(flatten)]` buffers values, which loses the `fetch` function; naming the
/// option in a type error needs serde_path_to_error besides. The struct, the list of
/// names and the range checks came out longer than this (tried for issue #32).
fn entries(v: &JsValue, what: &str) -> Result<Vec<(String, JsValue)>, JsValue> {
    if v.is_undefined() || v.is_null() {
        return Ok(Vec::new());
    }
    let obj = v
        .dyn_ref::<Object>()
        .filter(|_| !v.is_function() && !Array::is_array(v))
        .ok_or_else(|| option(what, "not an object of options"))?;
    let mut out = Vec::new();
    for key in Object::keys(obj).iter() {
        let name = key.as_string().unwrap_or_default();
        let value = Reflect::get(obj, &key).unwrap_or(JsValue::UNDEFINED);
        if !value.is_undefined() && !value.is_null() {
            out.push((name, value));
        }
    }
    Ok(out)
}

fn text(name: &str, v: &JsValue) -> Result<String, JsValue> {
    v.as_string().ok_or_else(|| option(name, "not a string"))
}

fn flag(name: &str, v: &JsValue) -> Result<bool, JsValue> {
    v.as_bool().ok_or_else(|| option(name, "not a boolean"))
}

/// A whole number from 1 to 2^53.
fn count(name: &str, v: &JsValue) -> Result<u64, JsValue> {
    v.as_f64()
        .filter(|n| n.fract() == 0.0 && *n >= 1.0 && *n <= 9_007_199_254_740_992.0)
        .map(|n| n as u64)
        .ok_or_else(|| option(name, "not a whole number from 1 to 2^53"))
}

/// The options of `openTable`.
pub(crate) fn open(v: &JsValue) -> Result<Open, JsValue> {
    let mut o = Open::default();
    let b = &mut o.browser;
    for (name, value) in entries(v, "options")? {
        let n = name.as_str();
        match n {
            "s3Endpoint" => b.s3_endpoint = Some(text(n, &value)?),
            "s3Region" => b.s3_region = Some(text(n, &value)?),
            "s3AccessKeyId" => b.s3_access_key_id = Some(text(n, &value)?),
            "s3SecretAccessKey" => b.s3_secret_access_key = Some(text(n, &value)?),
            "s3SessionToken" => b.s3_session_token = Some(text(n, &value)?),
            "s3VirtualHosted" => b.s3_virtual_hosted = flag(n, &value)?,
            "azureSas" => b.azure_sas = Some(text(n, &value)?),
            "azureEndpoint" => b.azure_endpoint = Some(text(n, &value)?),
            "azureAccount" => b.azure_account = Some(text(n, &value)?),
            "relay" => b.relay = Some(text(n, &value)?),
            "relayToken" => b.relay_token = Some(text(n, &value)?),
            "fetch" => {
                o.fetch = Some(
                    value
                        .dyn_into::<Function>()
                        .map_err(|_| option(n, "not a function"))?,
                )
            }
            "server" => o.server = Some(flag(n, &value)?),
            "timeoutMs" => {
                let ms = value
                    .as_f64()
                    .filter(|ms| ms.is_finite() && *ms >= 1.0 && *ms <= 600_000.0)
                    .ok_or_else(|| option(n, "not a number of milliseconds from 1 to 600000"))?;
                o.timeout_ms = Some(ms as u32);
            }
            "maxRows" => {
                o.max_rows = Some(usize::try_from(count(n, &value)?).unwrap_or(usize::MAX))
            }
            "maxDecodedBytes" => o.max_decoded_bytes = Some(count(n, &value)?),
            other => {
                return Err(option(
                    other,
                    &format!("not an option of openTable ({OPEN})"),
                ));
            }
        }
    }
    Ok(o)
}

/// The options of a call as the API's parameters: strings as they are, whole numbers
/// (and BigInts) in decimal, a `Date` as its ISO time, an array of strings joined by
/// commas (`columns`). `table` is the table's own: never an option.
pub(crate) fn params(v: &JsValue, call: &str) -> Result<Vec<(String, String)>, JsValue> {
    let mut out = Vec::new();
    for (name, value) in entries(v, call)? {
        if name == "table" {
            return Err(option(
                &name,
                "the table is the one opened; open another for it",
            ));
        }
        out.push((name.clone(), param(&name, &value)?));
    }
    Ok(out)
}

fn param(name: &str, v: &JsValue) -> Result<String, JsValue> {
    if let Some(s) = v.as_string() {
        return Ok(s);
    }
    if let Some(n) = v.as_f64() {
        // a whole number within 2^53 prints as one; anything else is refused by the API
        // with its own message (as in a URL)
        return Ok(if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
            format!("{}", n as i64)
        } else {
            n.to_string()
        });
    }
    if v.is_bigint() {
        return Ok(js_sys::BigInt::from(v.clone())
            .to_string(10)
            .map(String::from)
            .unwrap_or_default());
    }
    if let Some(d) = v.dyn_ref::<Date>() {
        if d.get_time().is_nan() {
            return Err(option(name, "an invalid Date"));
        }
        return Ok(String::from(d.to_iso_string()));
    }
    if Array::is_array(v) {
        let parts = Array::from(v)
            .iter()
            .map(|x| {
                x.as_string()
                    .ok_or_else(|| option(name, "an array of something else than strings"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        return Ok(parts.join(","));
    }
    Err(option(
        name,
        "not a string, number, Date or array of strings",
    ))
}
