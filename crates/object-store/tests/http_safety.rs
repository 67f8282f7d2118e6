//! The native backend over plain HTTP(S) servers (audit #31): redirects are refused, not
//! followed (item 7), and plain `http://` is read without options on loopback hosts only
//! (item 15). The servers here bind 127.0.0.1, answer one request per connection and stop
//! themselves (when dropped, or after 30 s).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use deltalens_object_store::ObjectStoreStorage;
use deltalens_storage::{ByteRange, Storage};

/// What a test server answers: the status line's code and reason, headers, body.
struct Answer {
    status: &'static str,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

/// A request as the answer function sees it.
struct Asked {
    method: String,
    path: String,
    range: Option<String>,
}

type Answerer = dyn Fn(&Asked) -> Answer + Send + Sync;

/// A tiny HTTP/1.1 server on 127.0.0.1 counting the requests it received.
struct Server {
    addr: SocketAddr,
    hits: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Server {
    fn start(answer: impl Fn(&Asked) -> Answer + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let addr = listener.local_addr().unwrap();
        let (hits, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let answer: Arc<Answerer> = Arc::new(answer);
        let (h, s) = (Arc::clone(&hits), Arc::clone(&stop));
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(30);
            while !s.load(Ordering::SeqCst) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((conn, _)) => handle(conn, &*answer, &h),
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        Server {
            addr,
            hits,
            stop,
            thread: Some(thread),
        }
    }

    fn port(&self) -> u16 {
        self.addr.port()
    }

    fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Reads one request's head (at most 16 KiB, 5 s) and answers it, then closes.
fn handle(mut conn: TcpStream, answer: &Answerer, hits: &AtomicUsize) {
    let _ = conn.set_nonblocking(false);
    let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 16 * 1024 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
    }
    hits.fetch_add(1, Ordering::SeqCst);
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.split("\r\n");
    let mut first = lines.next().unwrap_or("").split(' ');
    let (method, path) = (
        first.next().unwrap_or("").to_string(),
        first.next().unwrap_or("").to_string(),
    );
    let range = lines
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("range"))
        .map(|(_, v)| v.trim().to_string());
    let asked = Asked {
        method,
        path,
        range,
    };
    let a = answer(&asked);
    let mut out = format!(
        "HTTP/1.1 {}\r\nContent-Length: {}\r\nConnection: close\r\n",
        a.status,
        a.body.len()
    );
    for (k, v) in &a.headers {
        out.push_str(&format!("{k}: {v}\r\n"));
    }
    out.push_str("\r\n");
    let mut bytes = out.into_bytes();
    if asked.method != "HEAD" {
        bytes.extend_from_slice(&a.body);
    }
    let _ = conn.write_all(&bytes);
}

fn plain(status: &'static str, body: &[u8]) -> Answer {
    Answer {
        status,
        headers: vec![(
            "Last-Modified".into(),
            "Wed, 21 Oct 2015 07:28:00 GMT".into(),
        )],
        body: body.to_vec(),
    }
}

/// The files under `root`, at `/tables/demo/...`, with `Range` (one range).
fn files(root: PathBuf) -> impl Fn(&Asked) -> Answer + Send + Sync {
    move |asked| {
        let Some(rel) = asked.path.strip_prefix("/tables/demo/") else {
            return plain("404 Not Found", b"");
        };
        let Ok(data) = std::fs::read(root.join(rel)) else {
            return plain("404 Not Found", b"");
        };
        let len = data.len();
        let Some(spec) = asked
            .range
            .as_deref()
            .and_then(|r| r.strip_prefix("bytes="))
        else {
            return plain("200 OK", &data);
        };
        let (a, b) = spec.split_once('-').unwrap_or((spec, ""));
        let (start, end) = match (a.parse::<usize>().ok(), b.parse::<usize>().ok()) {
            (Some(a), Some(b)) => (a, (b + 1).min(len)),
            (Some(a), None) => (a, len),
            (None, Some(n)) => (len.saturating_sub(n), len),
            (None, None) => return plain("416 Range Not Satisfiable", b""),
        };
        if start >= end {
            return plain("416 Range Not Satisfiable", b"");
        }
        let mut a = plain("206 Partial Content", &data[start..end]);
        a.headers.push((
            "Content-Range".into(),
            format!("bytes {start}-{}/{len}", end - 1),
        ));
        a
    }
}

fn demo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/demo")
}

fn allow_http() -> Vec<(String, String)> {
    vec![("allow_http".into(), "true".into())]
}

/// Item 7: a 302 to another host is an error naming that host; the other host is never
/// asked (object_store's reqwest client used to follow it, `Referer` and all).
#[tokio::test]
async fn redirects_to_another_host_are_refused_not_followed() {
    let target = Server::start(|_| plain("200 OK", b"secret"));
    let elsewhere = format!("http://127.0.0.1:{}", target.port());
    let to = elsewhere.clone();
    let redirector = Server::start(move |asked| Answer {
        status: "302 Found",
        headers: vec![("Location".into(), format!("{to}{}", asked.path))],
        body: Vec::new(),
    });
    let url = format!("http://127.0.0.1:{}/tables/demo", redirector.port());
    let s = ObjectStoreStorage::open(&url, &allow_http()).unwrap();
    let host = format!("127.0.0.1:{}", target.port());
    let refused = |e: String| {
        assert!(
            e.contains(&host) && e.contains("redirects are not followed"),
            "not the redirect's error: {e}"
        );
    };
    refused(
        s.get("_delta_log/_last_checkpoint")
            .await
            .unwrap_err()
            .to_string(),
    );
    refused(
        s.get_range("_delta_log/x.json", ByteRange::Bounded(0..10))
            .await
            .unwrap_err()
            .to_string(),
    );
    refused(
        s.head("_delta_log/_last_checkpoint")
            .await
            .unwrap_err()
            .to_string(),
    );
    // what the `serve` relay reads through
    match s.read_object("_delta_log/_last_checkpoint", None).await {
        Err(deltalens_object_store::ReadError::Storage(e)) => refused(e.to_string()),
        other => panic!("the relayed read was not refused: {other:?}"),
    }
    assert!(redirector.hits() >= 4, "{}", redirector.hits());
    assert_eq!(target.hits(), 0, "the redirect was followed to {elsewhere}");
}

/// Item 15: `deltalens info http://127.0.0.1:PORT/tables/demo` (the link `serve` prints)
/// reads without `-o allow_http=true`.
#[tokio::test]
async fn plain_http_to_loopback_needs_no_option() {
    let server = Server::start(files(demo()));
    let url = format!("http://127.0.0.1:{}/tables/demo", server.port());
    let s = ObjectStoreStorage::open(&url, &[]).unwrap();
    let want = std::fs::read(demo().join("_delta_log/_last_checkpoint")).unwrap();
    assert_eq!(s.get("_delta_log/_last_checkpoint").await.unwrap(), want);
    let log = std::fs::read(demo().join("_delta_log/00000000000000000000.json")).unwrap();
    assert_eq!(
        s.get_range(
            "_delta_log/00000000000000000000.json",
            ByteRange::Bounded(3..40)
        )
        .await
        .unwrap(),
        log[3..40]
    );
    assert_eq!(
        s.head("_delta_log/00000000000000000000.json")
            .await
            .unwrap()
            .size,
        log.len() as u64
    );
    assert!(
        s.get("_delta_log/nope.json")
            .await
            .unwrap_err()
            .is_not_found()
    );
    // an S3-compatible store on loopback (MinIO) too: its answers are the store's, not a
    // refusal of plain HTTP
    let s3 = ObjectStoreStorage::open(
        "s3://bkt/t",
        &[
            (
                "aws_endpoint".into(),
                format!("http://127.0.0.1:{}", server.port()),
            ),
            ("aws_region".into(), "us-east-1".into()),
            ("aws_skip_signature".into(), "true".into()),
        ],
    )
    .unwrap();
    assert!(s3.get("x").await.unwrap_err().is_not_found());
    for loopback in [
        "http://localhost:9/t",
        "http://[::1]:9/t",
        "http://127.1.2.3/t",
    ] {
        assert!(
            ObjectStoreStorage::open(loopback, &[]).is_ok(),
            "{loopback}"
        );
    }
}

/// Item 15: plain HTTP anywhere else is refused when opened (before any request), naming
/// the option that allows it.
#[test]
fn plain_http_elsewhere_is_refused_naming_allow_http() {
    for (url, opts) in [
        ("http://example.invalid/t", vec![]),
        ("http://127.0.0.1.nip.io/t", vec![]),
        ("http://10.0.0.1:8080/t", vec![]),
        (
            "s3://bkt/t",
            vec![
                (
                    "aws_endpoint".into(),
                    "http://minio.example.invalid:9000".into(),
                ),
                ("aws_region".into(), "us-east-1".into()),
            ],
        ),
    ] {
        let e = ObjectStoreStorage::open(url, &opts)
            .unwrap_err()
            .to_string();
        assert!(e.contains("-o allow_http=true"), "{url}: {e}");
        let mut allowed: Vec<(String, String)> = opts.clone();
        allowed.extend(allow_http());
        assert!(ObjectStoreStorage::open(url, &allowed).is_ok(), "{url}");
    }
}

/// Item 9 for the paths the core asks for: a dot or empty segment before a `;` (`..;` is
/// `..` to Tomcat, which drops a path parameter) is never sent to a server — refused
/// before any request, by every operation and store — while a `;` inside a name (a
/// partition value) is read, from a server and from a local table.
#[tokio::test]
async fn path_parameters_are_not_sent_to_a_server() {
    let server = Server::start(files(demo()));
    let http = ObjectStoreStorage::open(
        &format!("http://127.0.0.1:{}/tables/demo", server.port()),
        &[],
    )
    .unwrap();
    let s3 = ObjectStoreStorage::open(
        "s3://bkt/t",
        &[
            (
                "aws_endpoint".into(),
                format!("http://127.0.0.1:{}", server.port()),
            ),
            ("aws_region".into(), "us-east-1".into()),
            ("aws_skip_signature".into(), "true".into()),
        ],
    )
    .unwrap();
    let refused = |what: &str, e: String| {
        assert!(
            e.contains("';'") && e.contains("path parameter"),
            "{what} was not refused for its ';': {e}"
        );
    };
    for s in [&http, &s3] {
        for p in [
            "..;/..;/secret",
            "p=x/..;/..;/secret",
            "%2e%2e%3b/secret",
            ".;/x",
            ";x/y",
        ] {
            refused(p, s.get(p).await.unwrap_err().to_string());
            refused(
                p,
                s.get_range(p, ByteRange::Bounded(0..4))
                    .await
                    .unwrap_err()
                    .to_string(),
            );
            refused(p, s.get_tail(p, 4).await.unwrap_err().to_string());
            refused(p, s.head(p).await.unwrap_err().to_string());
            refused(p, s.head_object(p).await.unwrap_err().to_string());
            match s.read_object(p, None).await {
                Err(deltalens_object_store::ReadError::Storage(e)) => refused(p, e.to_string()),
                other => panic!("the relayed read of {p} was not refused: {other:?}"),
            }
        }
    }
    for p in ["..;/", ";a/"] {
        refused(p, s3.list(p, None).await.unwrap_err().to_string());
        refused(
            p,
            s3.list("_delta_log/", Some(p))
                .await
                .unwrap_err()
                .to_string(),
        );
        refused(p, s3.list_page(p, None, 10).await.unwrap_err().to_string());
    }
    assert_eq!(server.hits(), 0, "a path with ';' reached the server");
    // a ';' inside a name (a partition value: Spark does not escape it) is asked for
    for s in [&http, &s3] {
        let e = s.get("p=a;b/part-0.parquet").await.unwrap_err().to_string();
        assert!(!e.contains("path parameter"), "{e}");
    }
    assert!(
        server.hits() > 0,
        "a partition value with ';' was not asked for"
    );

    // a local table's name may hold one
    let dir = std::env::temp_dir().join(format!("deltalens-semicolon-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("p=a;b")).unwrap();
    std::fs::write(dir.join("p=a;b/part-0.parquet"), "local").unwrap();
    let local = ObjectStoreStorage::open(dir.to_str().unwrap(), &[]).unwrap();
    let read = local.get("p=a;b/part-0.parquet").await;
    let listed = local.list("p=a;b/", None).await;
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(read.unwrap(), "local");
    assert_eq!(listed.unwrap().len(), 1);
}
