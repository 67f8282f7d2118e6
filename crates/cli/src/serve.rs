//! `deltalens serve`: the explorer (embedded in the binary) plus local tables under
//! `/tables/<dir name>/`, over HTTP/1.1 with Range, HEAD and CORS — what the browser's
//! fetch-based storage needs. Read-only; binds where told (127.0.0.1 by default).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// Where a table's files come from.
enum Source {
    Dir(PathBuf),
    /// The bundled demo table, from the binary.
    Embedded(BTreeMap<&'static str, &'static [u8]>),
}

struct Site {
    tables: BTreeMap<String, Source>,
    app: BTreeMap<&'static str, &'static [u8]>,
    app_dir: Option<PathBuf>,
}

/// What `serve` was asked for.
pub struct ServeArgs {
    pub tables: Vec<PathBuf>,
    pub host: String,
    pub port: u16,
    pub app_dir: Option<PathBuf>,
    pub stop_after: Option<u64>,
}

fn mime(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript",
        "wasm" => "application/wasm",
        "css" => "text/css",
        "json" | "crc" => "application/json",
        "svg" => "image/svg+xml",
        _ => "application/octet-stream",
    }
}

/// A parsed `Range: bytes=...` header against a `size`-byte object.
fn range(header: &str, size: u64) -> Option<(u64, u64)> {
    let spec = header.trim().strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None; // multiple ranges: answer with the whole object
    }
    let (a, b) = spec.split_once('-')?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: u64 = n.parse().ok()?;
            (size.saturating_sub(n), size)
        }
        (a, "") => (a.parse().ok()?, size),
        (a, b) => (
            a.parse().ok()?,
            b.parse::<u64>().ok()?.saturating_add(1).min(size),
        ),
    };
    (start < end && start < size).then_some((start, end))
}

impl Site {
    fn table_file(&self, name: &str, rest: &str) -> Option<Vec<u8>> {
        if rest.split('/').any(|c| c == "..") {
            return None;
        }
        match self.tables.get(name)? {
            Source::Embedded(files) => files.get(rest).map(|d| d.to_vec()),
            Source::Dir(root) => {
                let p = root.join(rest);
                let real = p.canonicalize().ok()?;
                if !real.starts_with(root) || !real.is_file() {
                    return None;
                }
                std::fs::read(real).ok()
            }
        }
    }

    fn app_file(&self, path: &str) -> Option<Vec<u8>> {
        let path = if path.is_empty() { "index.html" } else { path };
        if let Some(dir) = &self.app_dir {
            if path.split('/').any(|c| c == "..") {
                return None;
            }
            return std::fs::read(dir.join(path)).ok();
        }
        self.app.get(path).map(|d| d.to_vec())
    }

    fn no_app_page() -> Vec<u8> {
        b"<!DOCTYPE html><title>deltalens</title><p>This deltalens binary was built without \
          the explorer. Build it with <code>scripts/build-web</code> (trunk build --release, \
          then cargo build), or pass <code>--app-dir dist</code>. The tables are served under \
          /tables/.</p>"
            .to_vec()
    }
}

fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) =
                u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or(""), 16)
        {
            out.push(v);
            i += 3;
            continue;
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

async fn respond(
    stream: &mut TcpStream,
    status: &str,
    headers: &[(&str, String)],
    body: &[u8],
    head_only: bool,
) -> std::io::Result<()> {
    let mut h = format!("HTTP/1.1 {status}\r\n");
    for (k, v) in headers {
        h.push_str(&format!("{k}: {v}\r\n"));
    }
    h.push_str("Access-Control-Allow-Origin: *\r\n");
    h.push_str("Access-Control-Allow-Methods: GET, HEAD, OPTIONS\r\n");
    h.push_str("Access-Control-Allow-Headers: Range\r\n");
    h.push_str(
        "Access-Control-Expose-Headers: Content-Range, Content-Length, ETag, Accept-Ranges\r\n",
    );
    h.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
    stream.write_all(h.as_bytes()).await?;
    if !head_only {
        stream.write_all(body).await?;
    }
    Ok(())
}

async fn handle(site: Arc<Site>, mut stream: TcpStream) -> std::io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    loop {
        // one request head (no bodies: GET, HEAD and OPTIONS only)
        let end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            if buf.len() > 64 * 1024 {
                return Ok(());
            }
            let mut chunk = [0u8; 4096];
            let n = match tokio::time::timeout(Duration::from_secs(30), stream.read(&mut chunk))
                .await
            {
                Ok(Ok(n)) => n,
                _ => return Ok(()),
            };
            if n == 0 {
                return Ok(());
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..end]).into_owned();
        buf.drain(..end);
        let mut lines = head.split("\r\n");
        let mut first = lines.next().unwrap_or("").split(' ');
        let (method, target) = (first.next().unwrap_or(""), first.next().unwrap_or("/"));
        let hdr = |name: &str| {
            head.split("\r\n").skip(1).find_map(|l| {
                let (k, v) = l.split_once(':')?;
                k.trim()
                    .eq_ignore_ascii_case(name)
                    .then(|| v.trim().to_string())
            })
        };
        let path = percent_decode(target.split('?').next().unwrap_or("/"));
        let path = path.trim_start_matches('/');
        if method == "OPTIONS" {
            respond(&mut stream, "204 No Content", &[], b"", true).await?;
            continue;
        }
        if method != "GET" && method != "HEAD" {
            respond(
                &mut stream,
                "405 Method Not Allowed",
                &[("Allow", "GET, HEAD, OPTIONS".into())],
                b"read-only",
                false,
            )
            .await?;
            continue;
        }
        let head_only = method == "HEAD";
        let (data, ty) = if let Some(rest) = path.strip_prefix("tables/") {
            let (name, file) = rest.split_once('/').unwrap_or((rest, ""));
            (site.table_file(name, file), mime(file))
        } else {
            match site.app_file(path) {
                Some(d) => (
                    Some(d),
                    mime(if path.is_empty() { "index.html" } else { path }),
                ),
                // client-side routes and a missing app both get the index page
                None if !path.contains('.') => (
                    Some(
                        site.app_file("index.html")
                            .unwrap_or_else(Site::no_app_page),
                    ),
                    mime("index.html"),
                ),
                None => (None, ""),
            }
        };
        let Some(data) = data else {
            respond(
                &mut stream,
                "404 Not Found",
                &[("Content-Type", "text/plain".into())],
                b"not found",
                head_only,
            )
            .await?;
            continue;
        };
        let size = data.len() as u64;
        let etag = format!("\"{size:x}-{:x}\"", crc32fast::hash(&data));
        match hdr("range").map(|r| range(&r, size)) {
            Some(Some((a, b))) => {
                let headers = [
                    ("Content-Type", ty.to_string()),
                    ("Content-Range", format!("bytes {a}-{}/{size}", b - 1)),
                    ("Accept-Ranges", "bytes".into()),
                    ("ETag", etag),
                ];
                respond(
                    &mut stream,
                    "206 Partial Content",
                    &headers,
                    &data[a as usize..b as usize],
                    head_only,
                )
                .await?;
            }
            Some(None) if size > 0 => {
                let headers = [("Content-Range", format!("bytes */{size}"))];
                respond(
                    &mut stream,
                    "416 Range Not Satisfiable",
                    &headers,
                    b"",
                    head_only,
                )
                .await?;
            }
            _ => {
                let headers = [
                    ("Content-Type", ty.to_string()),
                    ("Accept-Ranges", "bytes".into()),
                    ("ETag", etag),
                    ("Cache-Control", "no-cache".into()),
                ];
                respond(&mut stream, "200 OK", &headers, &data, head_only).await?;
            }
        }
    }
}

fn table_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "table".into())
}

/// Run the server until stopped (or for `stop_after` seconds).
pub async fn serve(args: ServeArgs) -> Result<String, String> {
    let mut tables = BTreeMap::new();
    for t in &args.tables {
        let root = t
            .canonicalize()
            .map_err(|e| format!("cannot serve {}: {e}", t.display()))?;
        if !root.join("_delta_log").is_dir() {
            return Err(format!(
                "{} is not a Delta table (no _delta_log/ in it)",
                t.display()
            ));
        }
        let mut name = table_name(&root);
        while tables.contains_key(&name) {
            name.push('_');
        }
        tables.insert(name, Source::Dir(root));
    }
    if tables.is_empty() {
        tables.insert(
            "demo".to_string(),
            Source::Embedded(embedded::DEMO.iter().copied().collect()),
        );
    }
    let site = Arc::new(Site {
        tables,
        app: embedded::APP.iter().copied().collect(),
        app_dir: args.app_dir.clone(),
    });
    let listener = TcpListener::bind((args.host.as_str(), args.port))
        .await
        .map_err(|e| format!("cannot listen on {}:{}: {e}", args.host, args.port))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let base = format!("http://{addr}");
    println!("deltalens: serving the explorer at {base}/");
    if site.app.is_empty() && site.app_dir.is_none() {
        println!(
            "  (this binary has no embedded explorer: run scripts/build-web, or pass --app-dir)"
        );
    }
    let names: Vec<&String> = site.tables.keys().collect();
    for n in &names {
        println!("  table {n}: {base}/?table={base}/tables/{n}");
    }
    if let [only] = names.as_slice() {
        println!("open {base}/?table={base}/tables/{only}");
    }
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let accept = async {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                continue;
            };
            let site = Arc::clone(&site);
            tokio::spawn(async move {
                let _ = handle(site, stream).await;
            });
        }
    };
    match args.stop_after {
        Some(s) => {
            let _ = tokio::time::timeout(Duration::from_secs(s), accept).await;
        }
        None => accept.await,
    }
    Ok(String::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(range("bytes=0-9", 100), Some((0, 10)));
        assert_eq!(range("bytes=90-", 100), Some((90, 100)));
        assert_eq!(range("bytes=-5", 100), Some((95, 100)));
        assert_eq!(range("bytes=-500", 100), Some((0, 100)));
        assert_eq!(range("bytes=95-200", 100), Some((95, 100)));
        assert_eq!(range("bytes=100-", 100), None);
        assert_eq!(range("items=0-1", 100), None);
        assert_eq!(percent_decode("a%20b%3D"), "a b=");
    }
}
