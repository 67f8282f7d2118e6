//! `deltalens serve` over raw HTTP/1.1: CORS only for configured origins, the Host check
//! (DNS rebinding), inert table files, HEAD and Range without reading whole files, and the
//! refusals (methods, path traversal). Each test starts its own server on 127.0.0.1 with a
//! free port and kills it at the end.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const LOG0: &str = "_delta_log/00000000000000000000.json";
const GIB: u64 = 1 << 30;

/// A running `deltalens serve`, killed when dropped.
struct Server {
    child: Child,
    port: u16,
}

impl Server {
    fn start(args: &[&str]) -> Server {
        Server::start_printing(args).0
    }

    /// Starts the server; with the lines it printed, up to its last (`open <link>`).
    fn start_printing(args: &[&str]) -> (Server, Vec<String>) {
        let mut child = Command::new(env!("CARGO_BIN_EXE_deltalens"))
            .args(["serve", "--port", "0", "--stop-after", "300"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start deltalens serve");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut lines = Vec::new();
        let mut port = None;
        for _ in 0..100 {
            let mut line = String::new();
            if out.read_line(&mut line).expect("read stdout") == 0 {
                break;
            }
            if let Some(rest) = line.split("serving the explorer at http://").nth(1) {
                let authority = rest.trim().trim_end_matches('/');
                port = authority.rsplit(':').next().and_then(|p| p.parse().ok());
            }
            let last = line.starts_with("open ");
            lines.push(line);
            if let (true, Some(port)) = (last, port) {
                // keep draining stdout so the server never blocks on a full pipe
                std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
                return (Server { child, port }, lines);
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        panic!("deltalens serve printed no address and link: {lines:?}");
    }

    fn host(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn connect(&self) -> TcpStream {
        let s = TcpStream::connect(("127.0.0.1", self.port)).expect("connect");
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        s
    }

    /// `method path` on a new connection, with `Host: 127.0.0.1:<port>` and `headers`.
    fn request(&self, method: &str, path: &str, headers: &[(&str, &str)]) -> Response {
        let host = self.host();
        let mut all = vec![("Host", host.as_str())];
        all.extend_from_slice(headers);
        self.raw(method, &request(method, path, &all))
    }

    fn get(&self, path: &str, headers: &[(&str, &str)]) -> Response {
        self.request("GET", path, headers)
    }

    /// Sends `raw` on a new connection and reads one answer to `method`.
    fn raw(&self, method: &str, raw: &str) -> Response {
        let mut s = self.connect();
        s.write_all(raw.as_bytes()).unwrap();
        read_response(&mut BufReader::new(s), method == "HEAD")
    }

    /// The server's peak resident memory (VmHWM), in bytes.
    #[cfg(target_os = "linux")]
    fn peak_rss(&self) -> u64 {
        let status = fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
        let kib: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
        kib * 1024
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn request(method: &str, path: &str, headers: &[(&str, &str)]) -> String {
    let mut r = format!("{method} {path} HTTP/1.1\r\n");
    for (k, v) in headers {
        r.push_str(&format!("{k}: {v}\r\n"));
    }
    r.push_str("\r\n");
    r
}

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl std::fmt::Debug for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let body = String::from_utf8_lossy(&self.body[..self.body.len().min(200)]);
        write!(
            f,
            "{} {:?} ({} body bytes: {body:?})",
            self.status,
            self.headers,
            self.body.len()
        )
    }
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn has_cors(&self) -> bool {
        self.headers
            .iter()
            .any(|(k, _)| k.to_ascii_lowercase().starts_with("access-control-"))
    }

    fn len(&self) -> u64 {
        self.header("content-length").unwrap().parse().unwrap()
    }
}

fn read_head(r: &mut impl BufRead) -> (u16, Vec<(String, String)>) {
    let mut line = String::new();
    r.read_line(&mut line).unwrap();
    let status = line
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("status line {line:?}"));
    let mut headers = Vec::new();
    for _ in 0..200 {
        line.clear();
        r.read_line(&mut line).unwrap();
        let l = line.trim_end();
        if l.is_empty() {
            return (status, headers);
        }
        let (k, v) = l.split_once(':').unwrap();
        headers.push((k.trim().to_string(), v.trim().to_string()));
    }
    panic!("endless response head");
}

/// One response; the body by Content-Length (none for HEAD, 204 and 304).
fn read_response(r: &mut impl BufRead, head: bool) -> Response {
    let (status, headers) = read_head(r);
    let mut resp = Response {
        status,
        headers,
        body: Vec::new(),
    };
    if !head && status != 204 && status != 304 {
        let n = resp.len();
        r.take(n).read_to_end(&mut resp.body).unwrap();
        assert_eq!(resp.body.len() as u64, n, "short body");
    }
    resp
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for e in fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            fs::copy(e.path(), target).unwrap();
        }
    }
}

/// A scratch copy of the `xss` fixture, served as table `xss`; removed when dropped.
struct TempTable {
    base: PathBuf,
}

impl TempTable {
    fn new(test: &str) -> TempTable {
        let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("serve-{}-{test}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        copy_dir(&fixture("xss"), &base.join("xss"));
        TempTable { base }
    }

    fn dir(&self) -> PathBuf {
        self.base.join("xss")
    }

    fn arg(&self) -> String {
        self.dir().to_string_lossy().into_owned()
    }

    /// A sparse file of `size` bytes in the table directory (no disk used).
    fn sparse(&self, name: &str, size: u64) {
        File::create(self.dir().join(name))
            .unwrap()
            .set_len(size)
            .unwrap();
    }
}

impl Drop for TempTable {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.base);
    }
}

fn log0() -> Vec<u8> {
    fs::read(fixture("xss").join(LOG0)).unwrap()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn no_cors_headers_by_default() {
    let t = TempTable::new("no_cors");
    let srv = Server::start(&[&t.arg()]);
    let evil = [("Origin", "https://evil.example")];
    for path in ["/", &format!("/tables/xss/{LOG0}"), "/tables/xss/nothing"] {
        let r = srv.get(path, &evil);
        assert!(!r.has_cors(), "{path}: {:?}", r.headers);
    }
    let preflight = [
        ("Origin", "https://evil.example"),
        ("Access-Control-Request-Method", "GET"),
        ("Access-Control-Request-Headers", "range"),
    ];
    let r = srv.request("OPTIONS", &format!("/tables/xss/{LOG0}"), &preflight);
    assert_eq!(r.status, 405, "{r:?}");
    assert!(!r.has_cors(), "{:?}", r.headers);
}

#[test]
fn cors_only_for_configured_origins() {
    let t = TempTable::new("cors");
    let srv = Server::start(&[
        "--cors-origin",
        "https://good.example",
        "--cors-origin",
        "http://localhost:3000",
        &t.arg(),
    ]);
    let path = format!("/tables/xss/{LOG0}");
    for origin in ["https://good.example", "http://localhost:3000"] {
        let r = srv.get(&path, &[("Origin", origin), ("Range", "bytes=0-3")]);
        assert_eq!(r.status, 206);
        assert_eq!(r.header("access-control-allow-origin"), Some(origin));
        assert!(r.header("vary").unwrap().contains("Origin"), "{r:?}");
        let exposed = r.header("access-control-expose-headers").unwrap();
        for h in ["Content-Range", "Content-Length", "ETag"] {
            assert!(exposed.contains(h), "{exposed}");
        }
    }
    for origin in [
        "https://evil.example",
        "https://good.example.evil.example",
        "http://good.example",
        "null",
    ] {
        let r = srv.get(&path, &[("Origin", origin)]);
        assert_eq!(r.status, 200);
        assert!(!r.has_cors(), "{origin}: {:?}", r.headers);
        assert!(r.header("vary").unwrap().contains("Origin"), "{r:?}");
    }
    let preflight = |origin| {
        srv.request(
            "OPTIONS",
            &path,
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "GET"),
                ("Access-Control-Request-Headers", "range"),
            ],
        )
    };
    let ok = preflight("https://good.example");
    assert_eq!(ok.status, 204, "{ok:?}");
    assert_eq!(
        ok.header("access-control-allow-origin"),
        Some("https://good.example")
    );
    assert!(
        ok.header("access-control-allow-methods")
            .unwrap()
            .contains("GET")
    );
    let allowed = ok.header("access-control-allow-headers").unwrap();
    assert!(allowed.to_ascii_lowercase().contains("range"), "{allowed}");
    assert!(ok.header("vary").unwrap().contains("Origin"));
    let no = preflight("https://evil.example");
    assert_eq!(no.status, 405, "{no:?}");
    assert!(!no.has_cors(), "{:?}", no.headers);
}

#[test]
fn bad_cors_origins_are_refused_at_start() {
    for origin in ["*", "good.example", "https://good.example/path", ""] {
        let out = Command::new(env!("CARGO_BIN_EXE_deltalens"))
            .args(["serve", "--port", "0", "--stop-after", "1"])
            .args(["--cors-origin", origin])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{origin:?}: {out:?}");
    }
}

#[test]
fn host_header_must_name_this_server() {
    let t = TempTable::new("host");
    let srv = Server::start(&[&t.arg()]);
    let port = srv.port;
    let path = format!("/tables/xss/{LOG0}");
    let file = log0();
    for host in [
        "evil.example".to_string(),
        format!("evil.example:{port}"),
        format!("127.0.0.1:{}", port.wrapping_add(1)),
        "127.0.0.1".to_string(),
        format!("localhost.evil.example:{port}"),
        format!("127.0.0.1:{port}@evil.example"),
        format!("127.0.0.1.nip.io:{port}"),
        format!("{port}"),
    ] {
        for method in ["GET", "HEAD"] {
            let r = srv.raw(method, &request(method, &path, &[("Host", &host)]));
            assert_eq!(r.status, 421, "{host}: {r:?}");
            assert!(!contains(&r.body, &file[..40]), "{host}: file leaked");
            assert!(r.len() < 400, "{host}: {r:?}");
            assert!(!r.has_cors());
        }
    }
    for host in [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("LocalHost:{port}"),
        format!("[::1]:{port}"),
    ] {
        let r = srv.raw("GET", &request("GET", &path, &[("Host", &host)]));
        assert_eq!(r.status, 200, "{host}");
        assert_eq!(r.body, file);
    }
    // HTTP/1.1 needs exactly one Host
    let r = srv.raw("GET", &request("GET", &path, &[]));
    assert_eq!(r.status, 400, "{r:?}");
    let h = srv.host();
    let r = srv.raw("GET", &request("GET", &path, &[("Host", &h), ("Host", &h)]));
    assert_eq!(r.status, 400, "{r:?}");
    // an absolute-form target would name another authority than Host
    let r = srv.raw(
        "GET",
        &request(
            "GET",
            &format!("http://evil.example{path}"),
            &[("Host", &h)],
        ),
    );
    assert_eq!(r.status, 400, "{r:?}");
}

#[test]
fn table_files_are_inert_bytes() {
    let t = TempTable::new("inert");
    fs::write(
        t.dir().join("x.html"),
        "<script>alert(document.cookie)</script>",
    )
    .unwrap();
    fs::write(t.dir().join("x.svg"), "<svg onload=alert(1)/>").unwrap();
    let srv = Server::start(&[&t.arg()]);
    for file in ["x.html", "x.svg", LOG0] {
        for range in [None, Some("bytes=0-3")] {
            let headers: Vec<_> = range.map(|r| ("Range", r)).into_iter().collect();
            let r = srv.get(&format!("/tables/xss/{file}"), &headers);
            assert!(r.status == 200 || r.status == 206, "{file}: {r:?}");
            assert_eq!(
                r.header("content-type"),
                Some("application/octet-stream"),
                "{file}"
            );
            assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
            let csp = r.header("content-security-policy").unwrap();
            assert!(csp.starts_with("sandbox;"), "{csp}");
        }
    }
    // the explorer keeps its types, and nosniff too
    let r = srv.get("/", &[]);
    assert_eq!(r.status, 200);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    let r = srv.get("/tables/xss/nothing", &[]);
    assert_eq!(r.status, 404);
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
}

#[test]
fn explorer_files_keep_their_types() {
    let t = TempTable::new("app");
    let app = t.base.join("dist");
    fs::create_dir_all(&app).unwrap();
    fs::write(app.join("index.html"), "<!DOCTYPE html><title>app</title>").unwrap();
    fs::write(app.join("app.js"), "console.log(1)").unwrap();
    fs::write(app.join("app.wasm"), b"\0asm").unwrap();
    fs::write(t.base.join("secret.txt"), "root:x:0:0").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(t.base.join("secret.txt"), app.join("link.js")).unwrap();
    let dist = app.to_string_lossy().into_owned();
    let srv = Server::start(&["--app-dir", &dist, &t.arg()]);
    for (path, ty) in [
        ("/", "text/html; charset=utf-8"),
        ("/app.js", "text/javascript"),
        ("/app.wasm", "application/wasm"),
        // client-side routes get the index page
        ("/some/route", "text/html; charset=utf-8"),
    ] {
        let r = srv.get(path, &[]);
        assert_eq!(r.status, 200, "{path}");
        assert_eq!(r.header("content-type"), Some(ty), "{path}");
        assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
        // not sandboxed (only never framed)
        assert_eq!(
            r.header("content-security-policy"),
            Some("frame-ancestors 'none'"),
            "{path}"
        );
    }
    for path in [
        "/missing.js",
        "/link.js",
        "/../secret.txt",
        "/%2e%2e/secret.txt",
    ] {
        let r = srv.get(path, &[]);
        assert_eq!(r.status, 404, "{path}");
        assert!(!contains(&r.body, b"root:"), "{path}");
    }
}

#[test]
fn head_gives_the_length_without_a_body() {
    let t = TempTable::new("head");
    t.sparse("big.bin", 2 * GIB);
    let srv = Server::start(&[&t.arg()]);
    let mut conn = BufReader::new(srv.connect());
    let host = srv.host();
    for (file, size) in [(LOG0, log0().len() as u64), ("big.bin", 2 * GIB)] {
        let path = format!("/tables/xss/{file}");
        let started = Instant::now();
        // HEAD then GET on one kept-alive connection: the GET's answer must come next
        let both = request("HEAD", &path, &[("Host", &host)])
            + &request("GET", &path, &[("Host", &host), ("Range", "bytes=0-0")]);
        conn.get_mut().write_all(both.as_bytes()).unwrap();
        let head = read_response(&mut conn, true);
        assert_eq!(head.status, 200, "{head:?}");
        assert_eq!(head.len(), size);
        assert_eq!(head.header("accept-ranges"), Some("bytes"));
        assert!(head.header("etag").is_some());
        let get = read_response(&mut conn, false);
        assert_eq!(get.status, 206, "{get:?}");
        assert_eq!(get.body.len(), 1);
        println!(
            "HEAD + 1-byte GET of {file} ({size} bytes): {:?}",
            started.elapsed()
        );
    }
    // neither read the 2 GiB file
    #[cfg(target_os = "linux")]
    {
        let peak = srv.peak_rss();
        println!("server peak RSS: {:.1} MB", peak as f64 / 1e6);
        assert!(peak < 200_000_000, "server peak RSS {peak} bytes");
    }
}

/// A 1-byte range of a 2 GiB file reads one byte: fast, and the server stays small.
#[test]
fn one_byte_of_a_2_gib_file() {
    let t = TempTable::new("one_byte");
    t.sparse("big.bin", 2 * GIB);
    let srv = Server::start(&[&t.arg()]);
    let started = Instant::now();
    let r = srv.get(
        "/tables/xss/big.bin",
        &[("Range", "bytes=1073741824-1073741824")],
    );
    let took = started.elapsed();
    assert_eq!(r.status, 206, "{r:?}");
    assert_eq!(r.body, [0]);
    assert_eq!(
        r.header("content-range"),
        Some("bytes 1073741824-1073741824/2147483648")
    );
    println!("1-byte range of 2 GiB: {took:?}");
    #[cfg(target_os = "linux")]
    {
        let peak = srv.peak_rss();
        println!("server peak RSS: {:.1} MB", peak as f64 / 1e6);
        assert!(peak < 200_000_000, "server peak RSS {peak} bytes");
    }
    assert!(took < Duration::from_secs(2), "{took:?}");
}

/// A whole GET of a large file is streamed, never held in memory at once.
#[test]
fn whole_large_file_is_streamed() {
    let t = TempTable::new("stream");
    let size = GIB / 2;
    t.sparse("big.bin", size);
    let srv = Server::start(&[&t.arg()]);
    let mut conn = BufReader::new(srv.connect());
    let host = srv.host();
    let started = Instant::now();
    let req = request("GET", "/tables/xss/big.bin", &[("Host", &host)]);
    conn.get_mut().write_all(req.as_bytes()).unwrap();
    let (status, headers) = read_head(&mut conn);
    assert_eq!(status, 200);
    let len = headers
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        .map(|(_, v)| v.parse::<u64>().unwrap());
    assert_eq!(len, Some(size));
    let got = std::io::copy(&mut (&mut conn).take(size), &mut std::io::sink()).unwrap();
    assert_eq!(got, size);
    println!("GET of {size} bytes: {:?}", started.elapsed());
    #[cfg(target_os = "linux")]
    {
        let peak = srv.peak_rss();
        println!("server peak RSS: {:.1} MB", peak as f64 / 1e6);
        assert!(peak < 200_000_000, "server peak RSS {peak} bytes");
    }
}

#[test]
fn ranges_follow_rfc_9110() {
    let t = TempTable::new("ranges");
    let srv = Server::start(&[&t.arg()]);
    let path = format!("/tables/xss/{LOG0}");
    let file = log0();
    let size = file.len();
    for ignored in [
        "bytes=0-1,5-6",
        "bytes=5-1",
        "items=0-1",
        "bytes=x-1",
        "bytes=-",
    ] {
        let r = srv.get(&path, &[("Range", ignored)]);
        assert_eq!(r.status, 200, "{ignored}");
        assert_eq!(r.body, file, "{ignored}");
        assert_eq!(r.header("content-range"), None);
    }
    let r = srv.get(&path, &[("Range", "bytes=2-5")]);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &file[2..6]);
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 2-5/{size}").as_str())
    );
    let r = srv.get(&path, &[("Range", "bytes=-3")]);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &file[size - 3..]);
    let r = srv.get(&path, &[("Range", "bytes=10-99999999999999999999999")]);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, &file[10..]);
    for unsatisfiable in [format!("bytes={size}-"), "bytes=-0".to_string()] {
        let r = srv.get(&path, &[("Range", &unsatisfiable)]);
        assert_eq!(r.status, 416, "{unsatisfiable}");
        assert_eq!(
            r.header("content-range"),
            Some(format!("bytes */{size}").as_str())
        );
        assert!(r.body.is_empty());
    }
    // If-Range with another validator: the whole (changed) object
    let r = srv.get(&path, &[("Range", "bytes=0-0"), ("If-Range", "\"other\"")]);
    assert_eq!(r.status, 200);
    let etag = r.header("etag").unwrap().to_string();
    let r = srv.get(&path, &[("Range", "bytes=0-0"), ("If-Range", &etag)]);
    assert_eq!(r.status, 206);
}

#[test]
fn the_embedded_demo_table_is_served_too() {
    let srv = Server::start(&[]);
    let r = srv.get(&format!("/tables/demo/{LOG0}"), &[("Range", "bytes=0-0")]);
    assert_eq!(r.status, 206, "{r:?}");
    assert_eq!(r.body, b"{");
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    assert_eq!(
        r.header("content-security-policy"),
        Some("sandbox; frame-ancestors 'none'")
    );
    let r = srv.request("HEAD", &format!("/tables/demo/{LOG0}"), &[]);
    assert_eq!(r.status, 200);
    assert!(r.len() > 0);
    // listed for the explorer's landing view: served locally, nothing relayed
    let r = srv.get("/v1/tables", &[]);
    assert_eq!(r.status, 200);
    let doc: serde_json::Value = deltalens_json::from_slice(&r.body).unwrap();
    assert_eq!(doc, serde_json::json!({"tables": [], "served": ["demo"]}));
}

#[test]
fn only_get_and_head() {
    let t = TempTable::new("methods");
    let srv = Server::start(&[&t.arg()]);
    for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE", "CONNECT"] {
        let r = srv.request(
            method,
            &format!("/tables/xss/{LOG0}"),
            &[("Content-Length", "0")],
        );
        assert_eq!(r.status, 405, "{method}");
        assert!(r.header("allow").unwrap().contains("GET"));
        // the worker's answer: a JSON error document with the status table's code
        assert_eq!(error_code(&r), "method_not_allowed", "{method}");
    }
}

/// The code of a JSON error document (`{"error": {"code", "message"}}`), as the worker
/// answers its failures.
fn error_code(r: &Response) -> String {
    assert_eq!(r.header("content-type"), Some("application/json"), "{r:?}");
    let doc: serde_json::Value = deltalens_json::from_slice(&r.body).unwrap();
    assert!(
        doc["error"]["message"]
            .as_str()
            .is_some_and(|m| !m.is_empty()),
        "{doc}"
    );
    doc["error"]["code"].as_str().unwrap().to_string()
}

#[test]
fn no_way_out_of_the_table_directory() {
    let t = TempTable::new("traversal");
    fs::write(t.base.join("secret.txt"), "root:x:0:0").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(t.base.join("secret.txt"), t.dir().join("link.txt")).unwrap();
    let srv = Server::start(&[&t.arg()]);
    for path in [
        "/tables/xss/../secret.txt",
        "/tables/xss/_delta_log/../../secret.txt",
        "/tables/xss/%2e%2e/secret.txt",
        "/tables/xss/%2E%2E/secret.txt",
        "/tables/xss/%2e%2e%2fsecret.txt",
        "/tables/xss/_delta_log/..%2f..%2fsecret.txt",
        "/tables/xss/link.txt",
        "/tables/xss/%2fetc%2fpasswd",
        "/tables/xss//etc/passwd",
        "/tables/xss/_delta_log",
        "/tables/xss/_delta_log/",
        "/tables/xss/",
        "/tables/..%2fxss/_delta_log/00000000000000000000.json",
        "/../../../../etc/passwd",
        "/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
    ] {
        let r = srv.get(path, &[]);
        assert_eq!(r.status, 404, "{path}: {r:?}");
        assert!(!contains(&r.body, b"root:"), "{path}");
    }
}

#[test]
fn connections_are_bounded() {
    let t = TempTable::new("bounded");
    let srv = Server::start(&["--max-connections", "2", &t.arg()]);
    let host = srv.host();
    let req = request("GET", &format!("/tables/xss/{LOG0}"), &[("Host", &host)]);
    // two kept-alive connections take both slots
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut c = BufReader::new(srv.connect());
        c.get_mut().write_all(req.as_bytes()).unwrap();
        assert_eq!(read_response(&mut c, false).status, 200);
        held.push(c);
    }
    // a third waits in the backlog ...
    let mut third = srv.connect();
    third.write_all(req.as_bytes()).unwrap();
    third
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut byte = [0u8; 1];
    assert!(
        third.read(&mut byte).is_err(),
        "a third connection was served"
    );
    // ... until one closes
    drop(held.pop());
    third
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let r = read_response(&mut BufReader::new(third), false);
    assert_eq!(r.status, 200);
}

/// `/v1/object?…` for the relayed table `table`.
fn relay_object(table: &str, path: &str) -> String {
    let q: String = url_encode(&[("table", table), ("path", path)]);
    format!("/v1/object?{q}")
}

fn url_encode(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| {
            let enc: String = v
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect();
            format!("{k}={enc}")
        })
        .collect::<Vec<_>>()
        .join("&")
}

#[test]
fn the_relay_reads_only_the_tables_it_was_given() {
    let dir = fs::canonicalize(fixture("demo")).unwrap();
    let table = format!("file://{}", dir.display());
    let s = Server::start(&[&table]);
    let whole = fs::read(dir.join(LOG0)).unwrap();

    // listed in path order, paged
    let r = s.get(
        &format!(
            "/v1/list?{}",
            url_encode(&[("table", &table), ("prefix", "_delta_log/")])
        ),
        &[],
    );
    assert_eq!(r.status, 200, "{r:?}");
    let doc: serde_json::Value = deltalens_json::from_slice(&r.body).unwrap();
    let paths: Vec<&str> = doc["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.windows(2).all(|w| w[0] < w[1]) && paths.contains(&LOG0),
        "{paths:?}"
    );
    assert!(doc["next_start_after"].is_null());
    let r = s.get("/v1/tables", &[]);
    assert!(String::from_utf8_lossy(&r.body).contains(&table));

    // ranges as a store answers them
    let obj = relay_object(&table, LOG0);
    let r = s.get(&obj, &[]);
    assert_eq!((r.status, &r.body), (200, &whole));
    assert!(r.header("etag").is_some() && r.header("last-modified").is_some());
    assert_eq!(r.header("content-type"), Some("application/octet-stream"));
    assert!(!r.has_cors());
    let r = s.get(&obj, &[("Range", "bytes=-10")]);
    assert_eq!(r.status, 206);
    assert_eq!(r.body, whole[whole.len() - 10..]);
    let n = whole.len();
    assert_eq!(
        r.header("content-range").unwrap(),
        format!("bytes {}-{}/{n}", n - 10, n - 1)
    );
    let r = s.get(&obj, &[("Range", "bytes=5-9")]);
    assert_eq!((r.status, &r.body[..]), (206, &whole[5..10]));
    let r = s.get(&obj, &[("Range", &format!("bytes={n}-"))]);
    assert_eq!(r.status, 416, "{r:?}");
    assert_eq!(r.header("content-range").unwrap(), format!("bytes */{n}"));
    let r = s.request("HEAD", &obj, &[]);
    assert_eq!((r.status, r.len()), (200, n as u64));

    // nothing outside the table, no other table, no writes
    for path in [
        "../demo/_delta_log/00000000000000000000.json",
        "/etc/passwd",
        "a//b",
    ] {
        let r = s.get(&relay_object(&table, path), &[]);
        assert_eq!(r.status, 400, "{path}: {r:?}");
    }
    let other = format!(
        "file://{}",
        fs::canonicalize(fixture("xss")).unwrap().display()
    );
    let r = s.get(&relay_object(&other, LOG0), &[]);
    assert_eq!(r.status, 403, "{r:?}");
    assert!(String::from_utf8_lossy(&r.body).contains("does not relay"));
    let r = s.get(&relay_object(&table, "_delta_log/nope.json"), &[]);
    assert_eq!(r.status, 404);
    let r = s.request("PUT", &obj, &[("Content-Length", "0")]);
    assert_eq!(r.status, 405);
    // and the Host check holds on the relay too
    let r = s.get(&obj, &[]);
    assert_eq!(r.status, 200);
    let raw = request("GET", &obj, &[("Host", "evil.example")]);
    assert_eq!(s.raw("GET", &raw).status, 421);
}

#[test]
fn open_starts_the_browser_on_the_table() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("deltalens-open-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let seen = dir.join("url");
    let browser = dir.join("browser.sh");
    fs::write(
        &browser,
        format!("#!/bin/sh\necho \"$1\" > '{}'\n", seen.display()),
    )
    .unwrap();
    fs::set_permissions(&browser, fs::Permissions::from_mode(0o755)).unwrap();
    // BROWSER is a ':'-list of commands: the first does not exist, the second runs
    let out = Command::new(env!("CARGO_BIN_EXE_deltalens"))
        .args(["open", "--port", "0", "--stop-after", "2"])
        .arg(fixture("demo"))
        .env(
            "BROWSER",
            format!("/nonexistent/browser:{}", browser.display()),
        )
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("opened the explorer"), "{stdout}");
    for _ in 0..50 {
        if seen.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let url = fs::read_to_string(&seen).unwrap();
    let url = url.trim_end();
    // the table's URL percent-encoded as the query value it is
    assert!(
        url.starts_with("http://127.0.0.1:")
            && url.contains("/?table=http%3A%2F%2F127.0.0.1%3A")
            && url.ends_with("%2Ftables%2Fdemo"),
        "{url}"
    );
    // no browser at all: the link is printed
    let out = Command::new(env!("CARGO_BIN_EXE_deltalens"))
        .args(["open", "--port", "0", "--stop-after", "1"])
        .arg(fixture("demo"))
        .env("BROWSER", "/nonexistent/browser")
        .env("PATH", "/nonexistent")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("no browser to open here: open http://127.0.0.1:"),
        "{stdout}"
    );
    fs::remove_dir_all(&dir).unwrap();
}

/// `file://<canonical dir>`: the table directory relayed as a URL.
fn file_url(dir: &Path) -> String {
    format!("file://{}", fs::canonicalize(dir).unwrap().display())
}

/// `method path` with a short read timeout: an answer that does not come within `within`
/// fails the test instead of hanging it.
fn request_within(srv: &Server, method: &str, path: &str, within: Duration) -> Response {
    let mut s = srv.connect();
    s.set_read_timeout(Some(within)).unwrap();
    let host = srv.host();
    s.write_all(request(method, path, &[("Host", &host)]).as_bytes())
        .unwrap();
    read_response(&mut BufReader::new(s), method == "HEAD")
}

/// Audit #31, 5: a FIFO in a table directory is refused at once, through /tables/ and
/// through the relay (opening it would wait for a writer, holding a connection slot).
#[cfg(unix)]
#[test]
fn a_fifo_in_a_table_is_refused_at_once() {
    let t = TempTable::new("fifo");
    let made = Command::new("mkfifo")
        .arg(t.dir().join("fifo.json"))
        .status()
        .unwrap();
    assert!(made.success());
    let relayed = file_url(&t.dir());
    let srv = Server::start(&["--max-connections", "2", &t.arg(), &relayed]);
    let relay_path = relay_object(&relayed, "fifo.json");
    for path in ["/tables/xss/fifo.json", relay_path.as_str()] {
        for method in ["GET", "HEAD"] {
            let started = Instant::now();
            let r = request_within(&srv, method, path, Duration::from_secs(5));
            assert!((400..500).contains(&r.status), "{method} {path}: {r:?}");
            assert!(started.elapsed() < Duration::from_secs(5));
        }
    }
    // no slot is left taken
    let r = request_within(
        &srv,
        "GET",
        &format!("/tables/xss/{LOG0}"),
        Duration::from_secs(5),
    );
    assert_eq!(r.status, 200);
}

/// Audit #31, 6: one rule for local files on every path: a link may point anywhere
/// inside the table, nowhere outside it (a file or a directory), for /tables/, the
/// relay's reads and its listings alike.
#[cfg(unix)]
#[test]
fn links_out_of_a_table_are_refused_on_every_path() {
    use std::os::unix::fs::symlink;
    let t = TempTable::new("links");
    fs::write(t.base.join("secret.txt"), "root:x:0:0").unwrap();
    fs::create_dir_all(t.base.join("outside")).unwrap();
    fs::write(t.base.join("outside/secret.json"), "root:x:0:0").unwrap();
    symlink(t.base.join("secret.txt"), t.dir().join("link.txt")).unwrap();
    symlink(t.base.join("outside"), t.dir().join("_delta_log/out")).unwrap();
    symlink(t.dir().join(LOG0), t.dir().join("alias.json")).unwrap();
    let relayed = file_url(&t.dir());
    let srv = Server::start(&[&t.arg(), &relayed]);
    for path in ["link.txt", "_delta_log/out/secret.json"] {
        let r = srv.get(&format!("/tables/xss/{path}"), &[]);
        assert_eq!(r.status, 404, "/tables/ {path}: {r:?}");
        assert!(!contains(&r.body, b"root:"), "{path}");
        for method in ["GET", "HEAD"] {
            let r = srv.request(method, &relay_object(&relayed, path), &[]);
            assert_eq!(r.status, 403, "relay {method} {path}: {r:?}");
            assert!(!contains(&r.body, b"root:"), "{path}");
        }
    }
    // a link inside the table is a file of the table
    assert_eq!(srv.get("/tables/xss/alias.json", &[]).body, log0());
    assert_eq!(
        srv.get(&relay_object(&relayed, "alias.json"), &[]).body,
        log0()
    );
    // and a listing shows nothing that lies outside
    for prefix in ["", "_delta_log/"] {
        let q = url_encode(&[("table", &relayed), ("prefix", prefix)]);
        let r = srv.get(&format!("/v1/list?{q}"), &[]);
        assert_eq!(r.status, 200, "{r:?}");
        let listed = String::from_utf8_lossy(&r.body);
        assert!(listed.contains(LOG0), "{listed}");
        assert!(
            !listed.contains("secret") && !listed.contains("link.txt"),
            "{prefix:?}: {listed}"
        );
    }
}

/// Audit #31, 8: every answer — success, 404, error, refusal — carries the same
/// `Cross-Origin-Resource-Policy` (else another site tells existing files from missing
/// ones), and none may be framed.
#[test]
fn every_answer_has_corp_and_none_can_be_framed() {
    let t = TempTable::new("corp");
    let srv = Server::start(&[&t.arg()]);
    let log = format!("/tables/xss/{LOG0}");
    let answers = [
        (200, srv.get(&log, &[])),
        (200, srv.get("/", &[])),
        (404, srv.get("/tables/xss/nothing", &[])),
        (404, srv.get("/missing.js", &[])),
        (416, srv.get(&log, &[("Range", "bytes=99999999-")])),
        (405, srv.request("DELETE", &log, &[("Content-Length", "0")])),
        (403, srv.get(&relay_object("s3://elsewhere/t", "x"), &[])),
        (
            421,
            srv.raw("GET", &request("GET", "/", &[("Host", "evil.example")])),
        ),
        (400, srv.raw("GET", &request("GET", "/", &[]))),
    ];
    for (status, r) in &answers {
        assert_eq!(r.status, *status, "{r:?}");
        assert_eq!(
            r.header("cross-origin-resource-policy"),
            Some("same-origin"),
            "{r:?}"
        );
        assert_eq!(r.header("x-frame-options"), Some("DENY"), "{r:?}");
        let csp = r.header("content-security-policy").unwrap_or_default();
        assert!(csp.contains("frame-ancestors 'none'"), "{r:?}");
    }
}

/// Audit #31, 12: a table directory's name reaches the terminal escaped, and the printed
/// links carry it percent-encoded (and still lead to the table).
#[cfg(unix)]
#[test]
fn names_print_escaped_and_links_encoded() {
    let t = TempTable::new("names");
    let odd = t.base.join("red\u{1b}[31m&x");
    copy_dir(&t.dir(), &odd);
    let (srv, lines) = Server::start_printing(&[odd.to_str().unwrap()]);
    let out = lines.concat();
    assert!(!out.contains('\u{1b}'), "{out:?}");
    assert!(out.contains("table red\\x1b[31m&x: "), "{out}");
    let port = srv.port;
    let link = format!(
        "http://127.0.0.1:{port}/?table=http%3A%2F%2F127.0.0.1%3A{port}%2Ftables%2Fred%251B%255B31m%2526x"
    );
    assert!(
        lines.iter().any(|l| l.trim_end() == format!("open {link}")),
        "{out}"
    );
    // what the link names is the table
    let r = srv.get(&format!("/tables/red%1B%5B31m%26x/{LOG0}"), &[]);
    assert_eq!((r.status, r.body), (200, log0()));
}

/// Audit #31, 14: bound to a non-loopback address, the server wants its token (printed
/// once, generated) for every table and relay request; the page itself loads. The token
/// comes as `Authorization: Bearer` (the explorer's relay token) or as the cookie the
/// printed link sets.
#[test]
fn a_non_loopback_bind_needs_the_token() {
    let t = TempTable::new("token");
    let relayed = file_url(&t.dir());
    let (srv, lines) = Server::start_printing(&["--host", "0.0.0.0", &t.arg(), &relayed]);
    let token = lines
        .iter()
        .find_map(|l| l.trim().strip_prefix("token: "))
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no token printed: {lines:?}"))
        .to_string();
    assert!(token.len() >= 32, "{token}");
    let open = lines.last().unwrap();
    assert!(open.contains(&format!("token={token}")), "{open}");
    let bearer = format!("Bearer {token}");
    let tables = format!("/tables/xss/{LOG0}");
    let relay_read = relay_object(&relayed, LOG0);
    for path in [tables.as_str(), relay_read.as_str(), "/v1/tables"] {
        let r = srv.get(path, &[]);
        assert_eq!(r.status, 401, "{path}: {r:?}");
        assert!(r.header("www-authenticate").is_some(), "{r:?}");
        assert_eq!(error_code(&r), "unauthorized", "{path}");
        assert!(!contains(&r.body, &log0()[..40]));
        for wrong in ["Bearer nope", &format!("Bearer {token}x"), "Basic eDp5"] {
            let r = srv.get(path, &[("Authorization", wrong)]);
            assert_eq!(r.status, 401, "{path} {wrong}: {r:?}");
        }
        let r = srv.get(path, &[("Authorization", &bearer)]);
        assert_eq!(r.status, 200, "{path}: {r:?}");
    }
    assert_eq!(
        srv.get(&relay_read, &[("Authorization", &bearer)]).body,
        log0()
    );
    // the page loads without it
    assert_eq!(srv.get("/", &[]).status, 200);
    // the printed link: the token becomes a cookie, and the page's address loses it
    let r = srv.get(&format!("/?token={token}&table=t"), &[]);
    assert_eq!(r.status, 303, "{r:?}");
    assert_eq!(r.header("location"), Some("/?table=t"));
    let set = r.header("set-cookie").unwrap();
    assert!(
        set.contains("HttpOnly") && set.contains("SameSite=Strict"),
        "{set}"
    );
    let cookie = set.split(';').next().unwrap();
    let r = srv.get(&tables, &[("Cookie", cookie)]);
    assert_eq!((r.status, r.body), (200, log0()));
    let r = srv.get("/?token=nope&table=t", &[]);
    assert_eq!(r.status, 401, "{r:?}");
    assert!(r.header("set-cookie").is_none());
}
