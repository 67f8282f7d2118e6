//! `deltalens serve`: the explorer (embedded in the binary) plus local tables under
//! `/tables/<dir name>/`, over HTTP/1.1 with Range and HEAD — what the browser's
//! fetch-based storage needs. Read-only; binds where told (127.0.0.1 by default).
//!
//! The rules, against other websites in the same browser:
//! - no CORS unless `--cors-origin` names an origin (the explorer served here is
//!   same-origin), and then only for that origin;
//! - the Host header must name this server (a loopback name or the bound address, with
//!   the bound port), else 421: a DNS-rebinding page cannot read the tables;
//! - table files are inert bytes: `application/octet-stream`, `nosniff`, `CSP: sandbox`
//!   (a table holding `x.html` cannot run script on the explorer's origin).
//!
//! And against one request costing much: HEAD and ranges read only what they send, bodies
//! stream in chunks, heads are bounded in size and time, connections in number.

mod files;
mod http;
mod policy;
mod relay;

use std::io;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use deltalens_storage::http_range::{RangeAnswer, parse_range};
use tokio::net::{TcpListener, TcpStream};

use crate::args::positive;
use crate::error::CliError;
use files::{Found, Kind};
use http::{Answer, Request};
use policy::{Policy, Refusal};

use policy::parse_origin;

/// At the connection limit, how often the accept loop looks for a free slot.
const SLOT_POLL: Duration = Duration::from_millis(10);

// What `serve` was asked for (the subcommand's help text is its variant's in main.rs).
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Tables to serve: local directories, or URLs to relay (s3://, abfss://, az://,
    /// gs://, https://) read with the environment's credentials (AWS_*, AWS_PROFILE,
    /// AZURE_*, GOOGLE_*) and the --option values.
    #[arg(value_name = "TABLE")]
    pub tables: Vec<String>,
    /// Store option KEY=VALUE for the relayed tables (e.g. aws_endpoint=http://127.0.0.1:9000).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE", value_parser = crate::args::parse_kv)]
    pub options: Vec<(String, String)>,
    /// Address to bind.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Serve the explorer from this directory (trunk's dist/) instead of the copy
    /// embedded in the binary.
    #[arg(long, value_name = "DIR")]
    pub app_dir: Option<PathBuf>,
    /// Let pages from this origin (e.g. https://explorer.example) read the tables
    /// with CORS; repeatable. Without it only the explorer served here can.
    #[arg(long = "cors-origin", value_name = "ORIGIN", value_parser = parse_origin)]
    pub cors_origins: Vec<String>,
    /// Most connections open at once; more wait until one closes.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = positive)]
    pub max_connections: usize,
    /// Stop after this many seconds (for tests).
    #[arg(long, hide = true, value_name = "SECS")]
    pub stop_after: Option<u64>,
}

struct Site {
    files: files::Files,
    relay: relay::Relay,
    policy: Policy,
}

/// Serves one connection: request after request until the client closes, stalls, sends
/// something malformed or asks to close.
async fn handle(site: Arc<Site>, mut stream: TcpStream) -> io::Result<()> {
    let mut buf = Vec::with_capacity(4096);
    while let Some(head) = http::read_head(&mut stream, &mut buf).await {
        if !serve_request(&site, &mut stream, &head).await? {
            break;
        }
    }
    Ok(())
}

/// Answers one request head; whether the connection stays open for another.
async fn serve_request(site: &Arc<Site>, stream: &mut TcpStream, head: &str) -> io::Result<bool> {
    let Some(req) = Request::parse(head) else {
        return refuse(stream, "400 Bad Request", "malformed request", false).await;
    };
    let head_only = req.method == "HEAD";
    match site.policy.refuse(&req) {
        Some(Refusal::BadRequest(why)) => {
            return refuse(stream, "400 Bad Request", why, head_only).await;
        }
        Some(Refusal::Misdirected) => {
            let why = format!(
                "this server answers requests for Host {} only",
                site.policy.accepted()
            );
            return refuse(stream, "421 Misdirected Request", &why, head_only).await;
        }
        None => {}
    }
    // a request body is never read, so nothing after it can be trusted to be a request
    let close = req.wants_close() || req.has_body();
    let cors = site.policy.cors(req.header("origin"));
    let answer = match req.method.as_str() {
        "GET" | "HEAD" => {
            if !site.relay.answer(stream, &req, cors.clone(), close).await? {
                serve_file(site, stream, &req, cors, close).await?;
            }
            return Ok(!close);
        }
        "OPTIONS" => match site.policy.preflight(&req) {
            Some(allow) => Answer::new("204 No Content").headers(allow),
            None => not_allowed(cors),
        },
        _ => not_allowed(cors),
    };
    answer.closing(close).send(stream, b"", false).await?;
    Ok(!close)
}

/// 405: this server only reads (`OPTIONS` only as a CORS preflight from a configured
/// origin; otherwise it is a method like any other it does not have).
fn not_allowed(cors: Vec<(&'static str, String)>) -> Answer {
    Answer::new("405 Method Not Allowed")
        .header("Allow", "GET, HEAD")
        .headers(cors)
}

/// A refusal with a one-line explanation; the connection then closes.
async fn refuse(
    stream: &mut TcpStream,
    status: &'static str,
    why: &str,
    head_only: bool,
) -> io::Result<bool> {
    Answer::new(status)
        .header("Content-Type", "text/plain; charset=utf-8")
        .closing(true)
        .send(stream, format!("{why}\n").as_bytes(), head_only)
        .await?;
    Ok(false)
}

/// GET or HEAD of a file: looked up with a `stat` (off the async threads), then the
/// whole file, the requested range, or 416; HEAD sends the head only.
async fn serve_file(
    site: &Arc<Site>,
    stream: &mut TcpStream,
    req: &Request,
    cors: Vec<(&'static str, String)>,
    close: bool,
) -> io::Result<()> {
    let head_only = req.method == "HEAD";
    let (lookup, path) = (Arc::clone(site), req.path());
    let found = tokio::task::spawn_blocking(move || lookup.files.find(&path))
        .await
        .ok()
        .flatten();
    let Some(found) = found else {
        return Answer::new("404 Not Found")
            .header("Content-Type", "text/plain; charset=utf-8")
            .headers(cors)
            .closing(close)
            .send(stream, b"not found\n", head_only)
            .await;
    };
    let size = found.size;
    let (status, start, end) = match requested_range(req, &found) {
        RangeAnswer::Whole => ("200 OK", 0, size),
        RangeAnswer::Partial { start, end } => ("206 Partial Content", start, end),
        RangeAnswer::Unsatisfiable => {
            return Answer::new("416 Range Not Satisfiable")
                .header("Content-Range", format!("bytes */{size}"))
                .headers(cors)
                .closing(close)
                .send(stream, b"", head_only)
                .await;
        }
    };
    let mut answer = file_answer(status, &found).headers(cors).closing(close);
    if status.starts_with("206") {
        let range = format!("bytes {start}-{}/{size}", end.saturating_sub(1));
        answer = answer.header("Content-Range", range);
    }
    http::write(stream, &answer.head(end - start)).await?;
    if head_only {
        return Ok(());
    }
    files::send(stream, found.body, start, end).await
}

/// The range to send: only GET has ranges (RFC 9110 §14.2), and an `If-Range` that is
/// not this file's ETag means the client's copy changed, so it gets the whole file.
fn requested_range(req: &Request, found: &Found) -> RangeAnswer {
    let current = req.header("if-range").is_none_or(|v| v == found.etag);
    match req.header("range") {
        Some(range) if req.method == "GET" && current => parse_range(range, found.size),
        _ => RangeAnswer::Whole,
    }
}

/// Headers of a file answer. Table files are data, whatever their name: never rendered
/// (`octet-stream`, and `sandbox` should a browser render one anyway), never embedded by
/// another site (`Cross-Origin-Resource-Policy`, which CORS reads are not subject to).
fn file_answer(status: &'static str, found: &Found) -> Answer {
    let answer = Answer::new(status)
        .header("Accept-Ranges", "bytes")
        .header("ETag", found.etag.clone())
        .header("Cache-Control", "no-cache");
    match found.kind {
        Kind::Table => answer
            .header("Content-Type", "application/octet-stream")
            .header("Content-Security-Policy", "sandbox")
            .header("Cross-Origin-Resource-Policy", "same-origin"),
        Kind::App(ty) => answer.header("Content-Type", ty),
    }
}

/// One open connection's claim on the limit; released when dropped.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(open: &Arc<AtomicUsize>) -> Slot {
        open.fetch_add(1, Ordering::AcqRel);
        Slot(Arc::clone(open))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Accepts connections, at most `max` open at once: at the limit it stops accepting
/// (new ones wait in the kernel's backlog) until one closes, so a flood cannot exhaust
/// file descriptors. Only this loop takes slots, so the check cannot race.
async fn accept_loop(listener: TcpListener, site: Arc<Site>, max: usize) {
    let open = Arc::new(AtomicUsize::new(0));
    loop {
        if open.load(Ordering::Acquire) >= max {
            tokio::time::sleep(SLOT_POLL).await;
            continue;
        }
        let Ok((stream, _)) = listener.accept().await else {
            // out of fds or similar: back off instead of spinning
            tokio::time::sleep(SLOT_POLL).await;
            continue;
        };
        let _ = stream.set_nodelay(true);
        let slot = Slot::take(&open);
        let site = Arc::clone(&site);
        tokio::spawn(async move {
            let _slot = slot;
            let _ = handle(site, stream).await;
        });
    }
}

/// The explorer's link to a relayed table: the table through this server (`via=/`, the
/// page's own origin).
fn relay_link(base: &str, table: &str) -> String {
    let q: String = url::form_urlencoded::Serializer::new(String::new())
        .append_pair("table", table)
        .append_pair("via", "/")
        .finish();
    format!("{base}/?{q}")
}

/// Prints where the explorer and each table are; the link to open (the only table's, or
/// the explorer's).
fn announce(site: &Site, addr: SocketAddr) -> String {
    let base = format!("http://{addr}");
    println!("deltalens: serving the explorer at {base}/");
    if !site.files.has_app() {
        println!(
            "  (this binary has no embedded explorer: run scripts/build-web, or pass --app-dir)"
        );
    }
    let names: Vec<&String> = site.files.table_names().collect();
    for n in &names {
        println!("  table {n}: {base}/?table={base}/tables/{n}");
    }
    let relayed: Vec<&str> = site.relay.names().collect();
    for t in &relayed {
        println!("  table {t} (relayed): {}", relay_link(&base, t));
    }
    let link = match (names.as_slice(), relayed.as_slice()) {
        ([only], []) => Some(format!("{base}/?table={base}/tables/{only}")),
        ([], [only]) => Some(relay_link(&base, only)),
        _ => None,
    };
    // the last line: the one table, or the landing view that lists them all
    let open = link.unwrap_or(format!("{base}/"));
    println!("open {open}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    open
}

/// `deltalens open`: serve, then open the system browser on the table (or say where to).
pub async fn run_open(args: Args) -> Result<String, CliError> {
    serve(args, true).await
}

/// Run the server until stopped (or for `stop_after` seconds).
pub async fn run(args: Args) -> Result<String, CliError> {
    serve(args, false).await
}

async fn serve(args: Args, open_browser: bool) -> Result<String, CliError> {
    let (urls, dirs): (Vec<String>, Vec<String>) =
        args.tables.into_iter().partition(|t| relay::is_url(t));
    let dirs: Vec<PathBuf> = dirs.into_iter().map(PathBuf::from).collect();
    let relay = relay::Relay::open(&urls, &args.options).await?;
    // the bundled demo table when nothing at all is given
    let files = if dirs.is_empty() && !urls.is_empty() {
        files::Files::without_tables(args.app_dir.as_deref())?
    } else {
        files::Files::new(&dirs, args.app_dir.as_deref())?
    };
    let relay = relay.with_served(files.table_names().cloned());
    let listener = TcpListener::bind((args.host.as_str(), args.port))
        .await
        .map_err(|source| CliError::Listen {
            host: args.host.clone(),
            port: args.port,
            source,
        })?;
    let addr = listener.local_addr().map_err(CliError::LocalAddr)?;
    let policy = Policy::new(addr, &args.host, args.cors_origins);
    let site = Arc::new(Site {
        files,
        relay,
        policy,
    });
    let link = announce(&site, addr);
    if open_browser {
        if crate::browser::open(&link) {
            println!("opened the explorer in your browser");
        } else {
            println!("no browser to open here: open {link} yourself");
        }
        use std::io::Write;
        let _ = std::io::stdout().flush();
    }
    let accept = accept_loop(listener, site, args.max_connections.max(1));
    match args.stop_after {
        Some(s) => {
            let _ = tokio::time::timeout(Duration::from_secs(s), accept).await;
        }
        None => accept.await,
    }
    Ok(String::new())
}
