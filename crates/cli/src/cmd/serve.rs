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
//!   (a table holding `x.html` cannot run script on the explorer's origin);
//! - every answer, errors and 404s too, carries `Cross-Origin-Resource-Policy:
//!   same-origin` and forbids framing (another site can neither embed a file, nor tell
//!   an existing one from a missing one, nor frame the explorer);
//! - local files are read only when, links resolved, they are regular files inside their
//!   table (one rule for `/tables/` and the relay's `file://` tables: [`files::local_file`]);
//! - bound to a non-loopback address, table and relay requests need a token (generated
//!   and printed unless given): anyone on the network could otherwise read the tables.
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

use deltalens_api::{Failure, error_document};
use deltalens_storage::http_range::{RangeAnswer, parse_range};
use tokio::net::{TcpListener, TcpStream};

use crate::args::positive;
use crate::error::CliError;
use files::{Found, Kind};
use http::{Answer, Request};
use policy::{Access, Policy, Refusal};

use policy::{parse_origin, parse_token};

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
    /// The token table and relay requests must bring (`Authorization: Bearer <token>`, or
    /// the cookie the printed link sets). Needed for a --host other than a loopback
    /// address, and generated (and printed) when not given; a token given here shows in
    /// the process list.
    #[arg(long, value_name = "TOKEN", value_parser = parse_token)]
    pub token: Option<String>,
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
    match site.policy.access(&req) {
        Access::Open => {}
        Access::Login { location, cookie } => {
            Answer::new("303 See Other")
                .header("Location", location)
                .header("Set-Cookie", cookie)
                .header("Cache-Control", "no-store")
                .header("Referrer-Policy", "no-referrer")
                .closing(close)
                .send(stream, b"", head_only)
                .await?;
            return Ok(!close);
        }
        Access::Refused => {
            let (answer, body) = failed(Failure::Unauthorized, NEEDS_TOKEN);
            answer
                .header("WWW-Authenticate", "Bearer realm=\"deltalens\"")
                .header("Cache-Control", "no-store")
                .closing(close)
                .send(stream, body.as_bytes(), head_only)
                .await?;
            return Ok(!close);
        }
    }
    let cors = site.policy.cors(req.header("origin"));
    let (answer, body) = match req.method.as_str() {
        "GET" | "HEAD" => {
            if !site.relay.answer(stream, &req, cors.clone(), close).await? {
                serve_file(site, stream, &req, cors, close).await?;
            }
            return Ok(!close);
        }
        "OPTIONS" => match site.policy.preflight(&req) {
            Some(allow) => (Answer::new("204 No Content").headers(allow), String::new()),
            None => not_allowed(cors),
        },
        _ => not_allowed(cors),
    };
    answer
        .closing(close)
        .send(stream, body.as_bytes(), false)
        .await?;
    Ok(!close)
}

/// The answer to `failure` as the worker and the relay routes give it: the status table's
/// status and a JSON error document (`{"error": {"code", "message"}}`).
fn failed(failure: Failure, why: &str) -> (Answer, String) {
    let answer = Answer::new(failure.status_line()).header("Content-Type", "application/json");
    (answer, error_document(failure.code(), why.trim_end()))
}

/// The text of a 401.
const NEEDS_TOKEN: &str = "this server's tables need its token (it was bound to an address \
other than loopback, or given --token): open a link `deltalens serve` printed (it sets the \
token as a cookie), or send `Authorization: Bearer <token>` (the explorer's \"relay token\" \
field)\n";

/// 405: this server only reads (`OPTIONS` only as a CORS preflight from a configured
/// origin; otherwise it is a method like any other it does not have).
fn not_allowed(cors: Vec<(&'static str, String)>) -> (Answer, String) {
    let (answer, body) = failed(
        Failure::MethodNotAllowed,
        "this server only reads: GET and HEAD (OPTIONS only as a CORS preflight from an origin given with --cors-origin)",
    );
    (answer.header("Allow", "GET, HEAD").headers(cors), body)
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
/// (`octet-stream`, and `sandbox` should a browser render one anyway); like every answer,
/// never embedded by another site ([`Answer::new`]).
fn file_answer(status: &'static str, found: &Found) -> Answer {
    let answer = Answer::new(status)
        .header("Accept-Ranges", "bytes")
        .header("ETag", found.etag.clone())
        .header("Cache-Control", "no-cache");
    match found.kind {
        Kind::Table => answer
            .header("Content-Type", "application/octet-stream")
            .sandboxed(),
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

/// `{base}/` with the query `pairs` (the token first, when the server needs one), every
/// value percent-encoded: the link holds whatever a name holds as data.
fn page_link(base: &str, token: Option<&str>, pairs: &[(&str, &str)]) -> String {
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    if let Some(t) = token {
        q.append_pair("token", t);
    }
    for (k, v) in pairs {
        q.append_pair(k, v);
    }
    let q = q.finish();
    if q.is_empty() {
        format!("{base}/")
    } else {
        format!("{base}/?{q}")
    }
}

/// The explorer's link to the local table `name` (served under `/tables/`).
fn table_link(base: &str, token: Option<&str>, name: &str) -> String {
    let table = format!("{base}/tables/{}", path_segment(name));
    page_link(base, token, &[("table", &table)])
}

/// The explorer's link to a relayed table: the table through this server (`via=/`, the
/// page's own origin).
fn relay_link(base: &str, token: Option<&str>, table: &str) -> String {
    page_link(base, token, &[("table", table), ("via", "/")])
}

/// `s` percent-encoded as one URL path segment (every byte but `A-Z a-z 0-9 - . _ ~`).
fn path_segment(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `s` safe to print: controls, ESC sequences, bidi overrides and the characters that
/// draw nothing escaped visibly (the one list: [`deltalens_present::text::needs_escape`]).
fn shown(s: &str) -> String {
    deltalens_present::text::terminal_safe(s, false).into_owned()
}

/// How the server was bound, for what it prints.
struct Bound {
    addr: SocketAddr,
    /// The token requests need, if any.
    token: Option<String>,
    /// Whether this server made the token up (then it is printed).
    generated: bool,
}

/// Prints where the explorer and each table are (names escaped, links encoded, with the
/// token when one is needed); the link to open (the only table's, or the explorer's).
fn announce(site: &Site, bound: &Bound) -> String {
    let base = format!("http://{}", bound.addr);
    let token = bound.token.as_deref();
    println!("deltalens: serving the explorer at {base}/");
    if !bound.addr.ip().is_loopback() {
        eprintln!(
            "deltalens: warning: {} is not a loopback address: anyone who can reach port {} \
             can ask this server for the tables it reads (with your credentials). Every \
             table and relay request needs the token; bind 127.0.0.1 (the default) to serve \
             this machine only.",
            bound.addr.ip(),
            bound.addr.port()
        );
    }
    if let (Some(t), true) = (token, bound.generated) {
        println!(
            "  token: {t} (send `Authorization: Bearer <token>`, or open one of the links below once)"
        );
    }
    if !site.files.has_app() {
        println!(
            "  (this binary has no embedded explorer: run scripts/build-web, or pass --app-dir)"
        );
    }
    let names: Vec<&String> = site.files.table_names().collect();
    for n in &names {
        println!("  table {}: {}", shown(n), table_link(&base, token, n));
    }
    let relayed: Vec<&str> = site.relay.names().collect();
    for t in &relayed {
        println!(
            "  table {} (relayed): {}",
            shown(t),
            relay_link(&base, token, t)
        );
    }
    let link = match (names.as_slice(), relayed.as_slice()) {
        ([only], []) => table_link(&base, token, only),
        ([], [only]) => relay_link(&base, token, only),
        // the landing view that lists them all
        _ => page_link(&base, token, &[]),
    };
    // the last line: the link to open
    println!("open {link}");
    use std::io::Write;
    let _ = std::io::stdout().flush();
    link
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
    // reachable from the network: the tables need a token
    let generated = args.token.is_none() && !addr.ip().is_loopback();
    let token = match args.token {
        Some(t) => Some(t),
        None if generated => Some(policy::new_token()?),
        None => None,
    };
    let policy = Policy::new(addr, &args.host, args.cors_origins).with_token(token.clone());
    let site = Arc::new(Site {
        files,
        relay,
        policy,
    });
    let bound = Bound {
        addr,
        token,
        generated,
    };
    let link = announce(&site, &bound);
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_links() {
        assert_eq!(shown("plain name"), "plain name");
        assert_eq!(
            shown("red\u{1b}[31m\u{202e}gpj.exe\u{200b}\u{feff}"),
            "red\\x1b[31m\\u{202e}gpj.exe\\u{200b}\\u{feff}"
        );
        assert_eq!(path_segment("a b&c/%é"), "a%20b%26c%2F%25%C3%A9");
        let base = "http://127.0.0.1:8080";
        assert_eq!(
            table_link(base, None, "a&b"),
            "http://127.0.0.1:8080/?table=http%3A%2F%2F127.0.0.1%3A8080%2Ftables%2Fa%2526b"
        );
        assert_eq!(
            relay_link(base, Some("t0k"), "s3://b/x&y"),
            "http://127.0.0.1:8080/?token=t0k&table=s3%3A%2F%2Fb%2Fx%26y&via=%2F"
        );
        assert_eq!(page_link(base, None, &[]), "http://127.0.0.1:8080/");
    }
}
