//! The HTTP client of every store: object_store's client settings, except that a redirect
//! is never followed (object_store's reqwest client follows up to ten, to any host, with
//! a `Referer` naming the table's path). A `3xx` answer becomes an error naming where it
//! pointed, as the browser tab and the worker refuse them (`redirect: 'error'`/`'manual'`).
//!
//! object_store does not let a connector reuse its client builder, so the settings of
//! [`ClientOptions`] are applied here from their public values.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use deltalens_storage::StorageError;
use object_store::client::{
    DnsResolver, HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse,
    HttpService,
};
use object_store::{ClientConfigKey as Key, ClientOptions};

/// The [`HttpConnector`] of every store built here.
#[derive(Debug, Default)]
pub(crate) struct NoRedirects;

impl HttpConnector for NoRedirects {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        Ok(HttpClient::new(Refusing(client(options)?)))
    }
}

/// A client that answers a redirect with an error.
#[derive(Debug)]
struct Refusing(reqwest::Client);

#[async_trait::async_trait]
impl HttpService for Refusing {
    async fn call(&self, req: HttpRequest) -> Result<HttpResponse, HttpError> {
        let asked = req.uri().to_string();
        let operation = match req.method().as_str() {
            "GET" => "get",
            "HEAD" => "head",
            _ => "request",
        };
        let res = self.0.call(req).await?;
        let status = res.status();
        // 304 answers a conditional request; it moves nothing
        if !status.is_redirection() || status.as_u16() == 304 {
            return Ok(res);
        }
        let location = res
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|v| v.to_str().ok());
        let error = redirected(&asked, operation, status.as_u16(), location);
        // Decode: neither object_store nor `again` retries it
        Err(HttpError::new(HttpErrorKind::Decode, error))
    }
}

/// The error for a `status` redirect from `asked` to `location`: where it pointed (its
/// origin only: a signed URL's query is a secret).
fn redirected(
    asked: &str,
    operation: &'static str,
    status: u16,
    location: Option<&str>,
) -> StorageError {
    let asked = url::Url::parse(asked).ok();
    let origin = |u: &url::Url| match (u.host_str(), u.port()) {
        (Some(h), Some(p)) => format!("{}://{h}:{p}", u.scheme()),
        (Some(h), None) => format!("{}://{h}", u.scheme()),
        (None, _) => u.scheme().to_string(),
    };
    let from = asked.as_ref().map_or_else(|| "the store".into(), origin);
    let to = match (location, &asked) {
        (None, _) => "nowhere (no Location header)".to_string(),
        (Some(l), Some(base)) => base
            .join(l)
            .map_or_else(|_| format!("{l:?}"), |u| origin(&u)),
        (Some(l), None) => format!("{l:?}"),
    };
    StorageError::Http {
        path: asked
            .as_ref()
            .map_or_else(String::new, |u| u.path().to_string()),
        operation,
        status,
        message: format!(
            "{from} answered with a redirect to {to}, and redirects are not followed (one could carry the request and its credentials to another host); open the table at the URL it moved to (for a bucket, give its region or endpoint: -o aws_region=...)"
        ),
    }
}

/// The `Http` error [`Refusing`] put in `e`'s sources, if any.
pub(crate) fn redirect_in(e: &object_store::Error) -> Option<(u16, String)> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(s) = source {
        if let Some(StorageError::Http {
            status, message, ..
        }) = s.downcast_ref::<StorageError>()
        {
            return Some((*status, message.clone()));
        }
        source = s.source();
    }
    None
}

fn config_error(key: &str, value: &str, what: &str) -> object_store::Error {
    object_store::Error::Generic {
        store: "HTTP client",
        source: format!("the option {key} = {value:?} is not {what}").into(),
    }
}

fn flag(options: &ClientOptions, key: Key, name: &str) -> object_store::Result<bool> {
    match options.get_config_value(&key) {
        None => Ok(false),
        Some(v) => match v.to_ascii_lowercase().as_str() {
            "1" | "true" | "on" | "yes" | "y" => Ok(true),
            "0" | "false" | "off" | "no" | "n" => Ok(false),
            _ => Err(config_error(name, &v, "true or false")),
        },
    }
}

fn duration(
    options: &ClientOptions,
    key: Key,
    name: &str,
) -> object_store::Result<Option<Duration>> {
    options
        .get_config_value(&key)
        .map(|v| {
            parse_duration(&v).ok_or_else(|| {
                config_error(
                    name,
                    &v,
                    "a duration (a number and a unit: 5s, 500ms, 2min)",
                )
            })
        })
        .transpose()
}

fn number<T: std::str::FromStr>(
    options: &ClientOptions,
    key: Key,
    name: &str,
) -> object_store::Result<Option<T>> {
    options
        .get_config_value(&key)
        .map(|v| {
            v.trim()
                .parse()
                .map_err(|_| config_error(name, &v, "a whole number"))
        })
        .transpose()
}

/// A duration as object_store writes and reads them (humantime's form): numbers with
/// units, such as `5s`, `500ms`, `1m 30s` or `2min`.
fn parse_duration(text: &str) -> Option<Duration> {
    let mut total = Duration::ZERO;
    let mut rest = text.trim();
    if rest.is_empty() {
        return None;
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let n: u64 = rest[..digits].parse().ok()?;
        rest = rest[digits..].trim_start();
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c.is_whitespace())
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "ns" | "nsec" => Duration::from_nanos(n),
            "us" | "µs" | "usec" => Duration::from_micros(n),
            "ms" | "msec" => Duration::from_millis(n),
            "s" | "sec" | "secs" | "second" | "seconds" => Duration::from_secs(n),
            "m" | "min" | "mins" | "minute" | "minutes" => Duration::from_secs(n.checked_mul(60)?),
            "h" | "hr" | "hrs" | "hour" | "hours" => Duration::from_secs(n.checked_mul(3600)?),
            "d" | "day" | "days" => Duration::from_secs(n.checked_mul(86_400)?),
            _ => return None,
        };
        total = total.checked_add(unit)?;
        rest = rest[unit_len..].trim_start();
    }
    Some(total)
}

/// A [`DnsResolver`] given in the options, for reqwest.
struct Resolver(Arc<dyn DnsResolver>);

impl reqwest::dns::Resolve for Resolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let resolver = Arc::clone(&self.0);
        let host = name.as_str().to_string();
        Box::pin(async move {
            let ips = resolver.resolve(&host).await?;
            // the port is the URL's (reqwest replaces 0)
            let addrs: reqwest::dns::Addrs =
                Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

/// object_store's default `randomize_addresses`: a host's addresses in a different order
/// for each connection, so that connections spread over a store's servers.
#[derive(Default)]
struct Rotating(AtomicUsize);

impl reqwest::dns::Resolve for Rotating {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let turn = self.0.fetch_add(1, Ordering::Relaxed);
        let host = name.as_str().to_string();
        Box::pin(async move {
            let mut addrs: Vec<SocketAddr> =
                tokio::net::lookup_host((host.as_str(), 0)).await?.collect();
            let n = addrs.len().max(1);
            addrs.rotate_left(turn % n);
            let addrs: reqwest::dns::Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

/// The client object_store would build from `options` (same keys, same defaults), with
/// redirects and `Referer` off.
fn client(options: &ClientOptions) -> object_store::Result<reqwest::Client> {
    let build_error = |e: reqwest::Error| object_store::Error::Generic {
        store: "HTTP client",
        source: Box::new(e),
    };
    let mut b = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
        // compression would change Content-Length, which object_store reads as the size
        .no_gzip()
        .no_brotli()
        .no_zstd()
        .no_deflate()
        .user_agent(
            options
                .get_config_value(&Key::UserAgent)
                .unwrap_or_else(|| concat!("deltalens/", env!("CARGO_PKG_VERSION")).into()),
        );
    if let Some(headers) = options.get_default_headers() {
        b = b.default_headers(headers.clone());
    }
    if let Some(url) = options.get_config_value(&Key::ProxyUrl) {
        let mut proxy = reqwest::Proxy::all(&url).map_err(build_error)?;
        if let Some(pem) = options.get_config_value(&Key::ProxyCaCertificate) {
            let cert = reqwest::tls::Certificate::from_pem(pem.as_bytes()).map_err(build_error)?;
            b = b.tls_certs_merge(std::iter::once(cert));
        }
        if let Some(excludes) = options.get_config_value(&Key::ProxyExcludes) {
            proxy = proxy.no_proxy(reqwest::NoProxy::from_string(&excludes));
        }
        b = b.proxy(proxy);
    }
    if flag(
        options,
        Key::NoSystemCertificates,
        "disable_system_certificates",
    )? {
        b = b.tls_certs_only(std::iter::empty());
    }
    if let Some(t) = duration(options, Key::Timeout, "timeout")? {
        b = b.timeout(t);
    }
    if let Some(t) = duration(options, Key::ConnectTimeout, "connect_timeout")? {
        b = b.connect_timeout(t);
    }
    if let Some(t) = duration(options, Key::ReadTimeout, "read_timeout")? {
        b = b.read_timeout(t);
    }
    if let Some(t) = duration(options, Key::PoolIdleTimeout, "pool_idle_timeout")? {
        b = b.pool_idle_timeout(t);
    }
    if let Some(n) = number(options, Key::PoolMaxIdlePerHost, "pool_max_idle_per_host")? {
        b = b.pool_max_idle_per_host(n);
    }
    if let Some(t) = duration(
        options,
        Key::Http2KeepAliveInterval,
        "http2_keep_alive_interval",
    )? {
        b = b.http2_keep_alive_interval(t);
    }
    if let Some(t) = duration(
        options,
        Key::Http2KeepAliveTimeout,
        "http2_keep_alive_timeout",
    )? {
        b = b.http2_keep_alive_timeout(t);
    }
    if flag(
        options,
        Key::Http2KeepAliveWhileIdle,
        "http2_keep_alive_while_idle",
    )? {
        b = b.http2_keep_alive_while_idle(true);
    }
    if let Some(n) = number::<u32>(options, Key::Http2MaxFrameSize, "http2_max_frame_size")? {
        b = b.http2_max_frame_size(Some(n));
    }
    if flag(options, Key::Http1Only, "http1_only")? {
        b = b.http1_only();
    }
    if flag(options, Key::Http2Only, "http2_only")? {
        b = b.http2_prior_knowledge();
    }
    if flag(
        options,
        Key::AllowInvalidCertificates,
        "allow_invalid_certificates",
    )? {
        b = b.danger_accept_invalid_certs(true);
    }
    if let Some(resolver) = options.dns_resolver() {
        b = b.dns_resolver(Arc::new(Resolver(Arc::clone(resolver))));
    } else if flag(options, Key::RandomizeAddresses, "randomize_addresses")? {
        b = b.dns_resolver(Arc::new(Rotating::default()));
    }
    b.https_only(!flag(options, Key::AllowHttp, "allow_http")?)
        .build()
        .map_err(build_error)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_as_object_store_writes_them() {
        for (text, want) in [
            ("5s", Duration::from_secs(5)),
            ("500ms", Duration::from_millis(500)),
            ("1m 30s", Duration::from_secs(90)),
            ("2min", Duration::from_secs(120)),
            ("1h", Duration::from_secs(3600)),
            (" 10 s ", Duration::from_secs(10)),
        ] {
            assert_eq!(parse_duration(text), Some(want), "{text}");
        }
        for bad in ["", "5", "s", "5 parsecs", "-1s", "1.5s"] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_client_takes_the_options() {
        let opts = ClientOptions::new()
            .with_config(Key::ConnectTimeout, "2s")
            .with_config(Key::ProxyUrl, "http://127.0.0.1:3128");
        assert!(client(&opts).is_ok());
        let bad = ClientOptions::new().with_config(Key::ReadTimeout, "soon");
        let e = client(&bad).unwrap_err().to_string();
        assert!(e.contains("read_timeout") && e.contains("soon"), "{e}");
    }

    #[test]
    fn a_redirect_names_where_it_pointed_not_its_query() {
        let e = redirected(
            "https://h.example/tables/t/_delta_log/x.json",
            "get",
            302,
            Some("https://cdn.example:8443/x?sig=S3CRET"),
        )
        .to_string();
        assert!(
            e.contains("https://cdn.example:8443") && e.contains("redirects are not followed"),
            "{e}"
        );
        assert!(!e.contains("S3CRET"), "{e}");
        let e = redirected("https://h.example/t/x", "head", 301, Some("/elsewhere")).to_string();
        assert!(e.contains("to https://h.example,"), "{e}");
        let e = redirected("https://h.example/t/x", "get", 307, None).to_string();
        assert!(e.contains("no Location"), "{e}");
    }
}
