//! Just enough HTTP/1.1 for `deltalens serve`: reading one request head (bounded in size
//! and time), parsing it strictly, and writing answers (with a write timeout, so a client
//! that stops reading cannot hold a connection forever).

use std::io;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A request head larger than this is refused (the connection is closed).
const MAX_HEAD: usize = 64 * 1024;
/// A request head must arrive whole within this time (also the keep-alive idle time).
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Each write of an answer must complete within this time.
const WRITE_TIMEOUT: Duration = Duration::from_secs(30);

/// Reads the next request head (up to and including the blank line) from `stream`,
/// keeping any bytes after it in `buf` for the next request. `None` when the client
/// closed, stalled for [`READ_TIMEOUT`] or sent more than [`MAX_HEAD`] bytes.
pub async fn read_head(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<String> {
    let end = tokio::time::timeout(READ_TIMEOUT, head_end(stream, buf))
        .await
        .ok()??;
    let head = String::from_utf8_lossy(&buf[..end]).into_owned();
    buf.drain(..end);
    Some(head)
}

/// Reads until `buf` holds a blank line; the index just past it.
async fn head_end(stream: &mut TcpStream, buf: &mut Vec<u8>) -> Option<usize> {
    loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            return Some(i + 4);
        }
        if buf.len() > MAX_HEAD {
            return None;
        }
        let mut chunk = [0u8; 4096];
        match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(chunk.get(..n)?),
        }
    }
}

/// A parsed request head.
#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The request target as sent (origin-form `/path?query` for valid requests).
    pub target: String,
    /// `HTTP/1.1` (else `HTTP/1.0`).
    pub http11: bool,
    headers: Vec<(String, String)>,
}

impl Request {
    /// Parses `METHOD SP target SP HTTP/1.x` and `name: value` lines; `None` for anything
    /// malformed (another version, spaces in the target or before a colon, folded lines).
    pub fn parse(head: &str) -> Option<Request> {
        let mut lines = head.trim_end_matches("\r\n").split("\r\n");
        let mut first = lines.next()?.split(' ');
        let (method, target, version) = (first.next()?, first.next()?, first.next()?);
        let http11 = match version {
            "HTTP/1.1" => true,
            "HTTP/1.0" => false,
            _ => return None,
        };
        let valid_method = !method.is_empty() && method.bytes().all(|b| b.is_ascii_uppercase());
        if first.next().is_some() || !valid_method || target.is_empty() {
            return None;
        }
        let headers = lines.map(header_line).collect::<Option<Vec<_>>>()?;
        Some(Request {
            method: method.to_string(),
            target: target.to_string(),
            http11,
            headers,
        })
    }

    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every value of header `name` (case-insensitive).
    pub fn all<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.headers
            .iter()
            .filter(move |(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The path of the target, percent-decoded, without the query.
    pub fn path(&self) -> String {
        percent_decode(self.target.split('?').next().unwrap_or(""))
    }

    /// Whether the client asked to close after this answer (`Connection: close`, or an
    /// HTTP/1.0 request without `Connection: keep-alive`).
    pub fn wants_close(&self) -> bool {
        let has = |token: &str| {
            self.all("connection")
                .flat_map(|v| v.split(','))
                .any(|t| t.trim().eq_ignore_ascii_case(token))
        };
        has("close") || (!self.http11 && !has("keep-alive"))
    }

    /// Whether a body follows the head (never read here, so the connection must close).
    pub fn has_body(&self) -> bool {
        self.header("transfer-encoding").is_some()
            || self.all("content-length").any(|v| v.trim() != "0")
    }
}

/// `name: value` with a token name (no whitespace before the colon); value trimmed.
fn header_line(line: &str) -> Option<(String, String)> {
    let (name, value) = line.split_once(':')?;
    let token = |b: u8| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b);
    if name.is_empty() || !name.bytes().all(token) {
        return None;
    }
    Some((
        name.to_string(),
        value.trim_matches([' ', '\t']).to_string(),
    ))
}

/// Decodes `%XX` escapes (invalid ones stay as they are); invalid UTF-8 becomes U+FFFD.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        let hex = b
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok());
        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
            Some(v) if c == b'%' => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The status line and headers of an answer.
pub struct Answer {
    status: &'static str,
    headers: Vec<(&'static str, String)>,
    /// `Content-Security-Policy: sandbox` too (the bytes must never run as a page).
    sandbox: bool,
}

impl Answer {
    /// An answer with `status` (`"200 OK"`) and the headers every answer carries, built
    /// here only, so that successes, 404s, errors and refusals all look alike to another
    /// site: `nosniff` (browsers use the declared type, never a guessed one),
    /// `Cross-Origin-Resource-Policy: same-origin` (no other site may embed an answer, so
    /// none can tell an existing file from a missing one by whether it loads), and no
    /// framing (`X-Frame-Options`, and `frame-ancestors` in the CSP [`Answer::head`] adds).
    pub fn new(status: &'static str) -> Answer {
        Answer {
            status,
            headers: vec![
                ("X-Content-Type-Options", "nosniff".into()),
                ("Cross-Origin-Resource-Policy", "same-origin".into()),
                ("X-Frame-Options", "DENY".into()),
            ],
            sandbox: false,
        }
    }

    /// Adds `sandbox` to the answer's CSP: should a browser render it anyway, it runs no
    /// script on this origin.
    pub fn sandboxed(mut self) -> Answer {
        self.sandbox = true;
        self
    }

    pub fn header(mut self, name: &'static str, value: impl Into<String>) -> Answer {
        self.headers.push((name, value.into()));
        self
    }

    pub fn headers(mut self, more: Vec<(&'static str, String)>) -> Answer {
        self.headers.extend(more);
        self
    }

    /// Adds `Connection: close` when the connection will not be kept.
    pub fn closing(self, close: bool) -> Answer {
        if close {
            self.header("Connection", "close")
        } else {
            self
        }
    }

    /// The head bytes, declaring a body of `len` bytes.
    pub fn head(&self, len: u64) -> Vec<u8> {
        let mut h = format!("HTTP/1.1 {}\r\n", self.status);
        for (k, v) in &self.headers {
            h.push_str(&format!("{k}: {v}\r\n"));
        }
        let csp = if self.sandbox {
            "sandbox; frame-ancestors 'none'"
        } else {
            "frame-ancestors 'none'"
        };
        h.push_str(&format!("Content-Security-Policy: {csp}\r\n"));
        h.push_str(&format!("Content-Length: {len}\r\n\r\n"));
        h.into_bytes()
    }

    /// Sends the head and a small `body` (only the head when `head_only`).
    pub async fn send(
        self,
        stream: &mut TcpStream,
        body: &[u8],
        head_only: bool,
    ) -> io::Result<()> {
        let mut bytes = self.head(body.len() as u64);
        if !head_only {
            bytes.extend_from_slice(body);
        }
        write(stream, &bytes).await
    }
}

/// Writes all of `bytes`, failing if the client does not take them within [`WRITE_TIMEOUT`].
pub async fn write(stream: &mut TcpStream, bytes: &[u8]) -> io::Result<()> {
    tokio::time::timeout(WRITE_TIMEOUT, stream.write_all(bytes))
        .await
        .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "client stopped reading"))?
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("a%20b%3D"), "a b=");
        assert_eq!(percent_decode("%2e%2E"), "..");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
        assert_eq!(percent_decode("%+f%-1"), "%+f%-1");
        assert_eq!(percent_decode("%ff"), "\u{fffd}");
        assert_eq!(percent_decode("é%C3%A9"), "éé");
    }

    #[test]
    fn request_heads() {
        let r = Request::parse("GET /a%20b?x=1 HTTP/1.1\r\nHost: h:1\r\nRange:bytes=0-1\r\n\r\n")
            .unwrap();
        assert_eq!(r.method, "GET");
        assert_eq!(r.path(), "/a b");
        assert_eq!(r.header("host"), Some("h:1"));
        assert_eq!(r.header("RANGE"), Some("bytes=0-1"));
        assert!(!r.wants_close() && !r.has_body());
        let r = Request::parse("GET / HTTP/1.0\r\n\r\n").unwrap();
        assert!(r.wants_close());
        let r = Request::parse("GET / HTTP/1.1\r\nConnection: keep-alive, Close\r\n\r\n");
        assert!(r.unwrap().wants_close());
        let r = Request::parse("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n").unwrap();
        assert!(r.has_body());
        for bad in [
            "GET / HTTP/2\r\n\r\n",
            "GET /  HTTP/1.1\r\n\r\n",
            "GET / x HTTP/1.1\r\n\r\n",
            "get / HTTP/1.1\r\n\r\n",
            "GET / HTTP/1.1\r\nHost : h\r\n\r\n",
            "GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n",
            "GET / HTTP/1.1\r\nno colon\r\n\r\n",
            "\r\n\r\n",
        ] {
            assert!(Request::parse(bad).is_none(), "{bad:?}");
        }
    }
}
