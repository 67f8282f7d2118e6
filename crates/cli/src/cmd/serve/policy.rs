//! Who may talk to `deltalens serve`: the Host check against DNS rebinding, CORS for the
//! origins named with `--cors-origin` (none by default: the explorer is same-origin), and
//! the token a server reachable from the network wants for its tables.

use std::net::{IpAddr, SocketAddr};

use super::http::{Request, percent_decode};
use crate::error::CliError;

/// Random bytes in a generated token (64 hex digits).
const TOKEN_BYTES: usize = 32;

/// A fresh random token (hex), from the system's random source.
pub fn new_token() -> Result<String, CliError> {
    let mut bytes = [0u8; TOKEN_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| CliError::Token(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Checks a `--token` value: 16 to 256 characters of `A-Z a-z 0-9 - . _ ~ + / =` (hex,
/// base64 and UUIDs fit), so it goes in a header, a cookie and a link as it is.
pub fn parse_token(s: &str) -> Result<String, CliError> {
    let t = s.trim();
    let ok = |b: u8| b.is_ascii_alphanumeric() || b"-._~+/=".contains(&b);
    if (16..=256).contains(&t.len()) && t.bytes().all(ok) {
        return Ok(t.to_string());
    }
    Err(CliError::Argument {
        expected: "a token of 16 to 256 characters among A-Z a-z 0-9 - . _ ~ + / = (or no \
                   --token: one is generated)",
        // a secret: not echoed
        given: format!("{} characters", t.chars().count()),
    })
}

/// Whether `a` and `b` are equal, in a time that depends on their length only (a wrong
/// token's answer must not tell how much of it was right).
fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// Checks `--cors-origin` values: `http(s)://host[:port]` (a trailing `/` is dropped,
/// the value lowercased, as browsers serialise origins). No path, no wildcard.
pub fn parse_origin(s: &str) -> Result<String, CliError> {
    let origin = s.trim().trim_end_matches('/').to_ascii_lowercase();
    let authority = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"))
        .unwrap_or("");
    let bad = |c: char| "/?#@*\\".contains(c) || c.is_whitespace() || c.is_control();
    if authority.is_empty() || authority.contains(bad) {
        return Err(CliError::Argument {
            expected: "an origin like https://explorer.example or http://localhost:3000",
            given: s.to_string(),
        });
    }
    Ok(origin)
}

/// The rules for one server.
pub struct Policy {
    port: u16,
    /// Lowercased host names and IP literals (IPv6 in brackets) this server answers to.
    names: Vec<String>,
    /// Bound to every interface: any IP literal is this server (an IP cannot be rebound).
    any_ip: bool,
    cors: Vec<String>,
    /// The token table and relay requests must bring (`None`: they need none).
    token: Option<String>,
}

/// What a request's credentials allow.
#[derive(Debug, PartialEq, Eq)]
pub enum Access {
    /// Answer it.
    Open,
    /// The printed link (`/?token=…`) with the right token: set it as a cookie and send
    /// the browser to `location`, the same link without the token.
    Login { location: String, cookie: String },
    /// 401: a table or relay request without the token, or a link with a wrong one.
    Refused,
}

/// Why a request is refused before it is looked at.
pub enum Refusal {
    /// 400: no or several Host headers on HTTP/1.1, or a target not of the form `/path`.
    BadRequest(&'static str),
    /// 421: the Host header names another server (a DNS rebinding page, for instance).
    Misdirected,
}

impl Policy {
    /// Rules for a server bound at `bound`, asked for with `--host host_arg`.
    pub fn new(bound: SocketAddr, host_arg: &str, cors: Vec<String>) -> Policy {
        let given = match host_arg.parse::<IpAddr>() {
            Ok(ip) => ip_name(ip),
            Err(_) => host_arg.to_ascii_lowercase(),
        };
        let mut names: Vec<String> = Vec::new();
        for n in [
            "localhost".into(),
            "127.0.0.1".into(),
            "[::1]".into(),
            ip_name(bound.ip()),
            given,
        ] {
            if !names.contains(&n) {
                names.push(n);
            }
        }
        Policy {
            port: bound.port(),
            names,
            any_ip: bound.ip().is_unspecified(),
            cors,
            token: None,
        }
    }

    /// Table and relay requests must bring `token` (when given).
    pub fn with_token(mut self, token: Option<String>) -> Policy {
        self.token = token;
        self
    }

    /// The cookie that carries the token (one per port: cookies are not kept per port).
    fn cookie_name(&self) -> String {
        format!("deltalens_token_{}", self.port)
    }

    /// Whether `req` may be answered. With a token, every `GET`/`HEAD` of a table file
    /// (`/tables/…`) or relay route (`/v1/…`) needs it, as `Authorization: Bearer <token>`
    /// (the explorer's relay token) or the cookie the printed link sets; the explorer's
    /// own files load without it. Other methods read nothing, so they are not asked (a
    /// CORS preflight carries no credentials).
    pub fn access(&self, req: &Request) -> Access {
        let Some(token) = &self.token else {
            return Access::Open;
        };
        if !matches!(req.method.as_str(), "GET" | "HEAD") {
            return Access::Open;
        }
        let (raw_path, query) = req.target.split_once('?').unwrap_or((&req.target, ""));
        let pairs: Vec<&str> = query.split('&').filter(|p| !p.is_empty()).collect();
        let is_token = |p: &str| p.split('=').next() == Some("token");
        if raw_path == "/"
            && let Some(given) = pairs.iter().find(|p| is_token(p))
        {
            let value = percent_decode(given.split_once('=').map_or("", |(_, v)| v));
            if !same(&value, token) {
                return Access::Refused;
            }
            let rest: Vec<&str> = pairs.iter().copied().filter(|p| !is_token(p)).collect();
            let location = match rest.as_slice() {
                [] => "/".to_string(),
                _ => format!("/?{}", rest.join("&")),
            };
            let name = self.cookie_name();
            let cookie = format!("{name}={token}; Path=/; HttpOnly; SameSite=Strict");
            return Access::Login { location, cookie };
        }
        let path = req.path();
        let guarded = path.starts_with("/tables") || path.starts_with("/v1");
        if guarded && !self.presented(req, token) {
            return Access::Refused;
        }
        Access::Open
    }

    /// Whether `req` brings `token`: as a Bearer credential or as this server's cookie.
    fn presented(&self, req: &Request, token: &str) -> bool {
        let bearer = req.all("authorization").any(|v| {
            v.split_once(' ').is_some_and(|(scheme, t)| {
                scheme.eq_ignore_ascii_case("bearer") && same(t.trim(), token)
            })
        });
        let name = self.cookie_name();
        let cookie = req
            .all("cookie")
            .flat_map(|v| v.split(';'))
            .filter_map(|c| c.trim().split_once('='))
            .any(|(k, v)| k == name && same(v, token));
        bearer || cookie
    }

    /// The Host names the server prints as accepted (for the 421 answer).
    pub fn accepted(&self) -> String {
        let port = self.port;
        let v: Vec<String> = self.names.iter().map(|n| format!("{n}:{port}")).collect();
        v.join(", ")
    }

    /// Refuses a request whose target or Host does not name this server. HTTP/1.1 needs
    /// exactly one Host; HTTP/1.0 may omit it (browsers always send it). Host must be one
    /// of the accepted names with this server's port (80 when omitted).
    pub fn refuse(&self, req: &Request) -> Option<Refusal> {
        if !req.target.starts_with('/') {
            return Some(Refusal::BadRequest("the request target must be a /path"));
        }
        let mut hosts = req.all("host");
        match (hosts.next(), hosts.next()) {
            (Some(_), Some(_)) => Some(Refusal::BadRequest("several Host headers")),
            (None, _) if req.http11 => Some(Refusal::BadRequest("no Host header")),
            (None, _) => None,
            (Some(h), None) => (!self.host_ok(h)).then_some(Refusal::Misdirected),
        }
    }

    /// Whether `host` (`name[:port]`) is this server.
    fn host_ok(&self, host: &str) -> bool {
        let Some((name, port)) = split_host(&host.to_ascii_lowercase()) else {
            return false;
        };
        port == self.port && (self.names.contains(&name) || (self.any_ip && is_ip(&name)))
    }

    /// Headers for a request with this `Origin`: `Vary: Origin` whenever CORS is on (the
    /// answer depends on it), and the allow/expose pair only for a configured origin.
    pub fn cors(&self, origin: Option<&str>) -> Vec<(&'static str, String)> {
        if self.cors.is_empty() {
            return Vec::new();
        }
        let mut h = vec![("Vary", "Origin".to_string())];
        if let Some(o) = origin.filter(|o| self.cors.iter().any(|c| c == o)) {
            h.push(("Access-Control-Allow-Origin", o.to_string()));
            h.push((
                "Access-Control-Expose-Headers",
                "Content-Range, Content-Length, ETag, Accept-Ranges".into(),
            ));
        }
        h
    }

    /// The answer headers to a CORS preflight (`OPTIONS` with `Origin` and
    /// `Access-Control-Request-Method: GET|HEAD`) from a configured origin; `None`
    /// otherwise (then `OPTIONS` is just another method this server does not have).
    pub fn preflight(&self, req: &Request) -> Option<Vec<(&'static str, String)>> {
        let origin = req.header("origin")?;
        let method = req.header("access-control-request-method")?;
        if !self.cors.iter().any(|c| c == origin) || !matches!(method, "GET" | "HEAD") {
            return None;
        }
        Some(vec![
            ("Vary", "Origin".into()),
            ("Access-Control-Allow-Origin", origin.to_string()),
            ("Access-Control-Allow-Methods", "GET, HEAD".into()),
            (
                "Access-Control-Allow-Headers",
                match self.token {
                    Some(_) => "Range, Authorization",
                    None => "Range",
                }
                .into(),
            ),
            ("Access-Control-Max-Age", "600".into()),
        ])
    }
}

/// How an IP appears in a Host header.
fn ip_name(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => v4.to_string(),
        IpAddr::V6(v6) => format!("[{v6}]"),
    }
}

/// An IPv4 literal or a bracketed IPv6 literal.
fn is_ip(name: &str) -> bool {
    let inner = name
        .strip_prefix('[')
        .and_then(|n| n.strip_suffix(']'))
        .unwrap_or(name);
    inner
        .parse::<IpAddr>()
        .is_ok_and(|ip| ip.is_ipv4() == (inner == name))
}

/// `name[:port]` (name possibly `[v6]`) into the name and the port (80 when absent).
fn split_host(host: &str) -> Option<(String, u16)> {
    let (name, port) = match host.strip_prefix('[') {
        Some(rest) => {
            let (inner, after) = rest.split_once(']')?;
            let port = match after {
                "" => None,
                a => Some(a.strip_prefix(':')?),
            };
            (format!("[{inner}]"), port)
        }
        None => match host.split_once(':') {
            Some((name, port)) => (name.to_string(), Some(port)),
            None => (host.to_string(), None),
        },
    };
    let port = match port {
        None => 80,
        Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => p.parse().ok()?,
        Some(_) => return None,
    };
    (!name.is_empty() && name != "[]").then_some((name, port))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    fn req(head: &str) -> Request {
        Request::parse(&format!("GET / HTTP/1.1\r\n{head}\r\n")).unwrap()
    }

    #[test]
    fn hosts() {
        let p = Policy::new("127.0.0.1:8080".parse().unwrap(), "127.0.0.1", vec![]);
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST:8080",
            "[::1]:8080",
        ] {
            assert!(p.host_ok(ok), "{ok}");
        }
        for no in [
            "evil.example:8080",
            "127.0.0.1",
            "127.0.0.1:80",
            "127.0.0.1:8081",
            "127.0.0.1:+8080",
            "127.0.0.1:8080:8080",
            "[::1]8080",
            ":8080",
            "",
            "10.0.0.1:8080",
        ] {
            assert!(!p.host_ok(no), "{no}");
        }
        let any = Policy::new("0.0.0.0:80".parse().unwrap(), "0.0.0.0", vec![]);
        for ok in [
            "10.0.0.1",
            "10.0.0.1:80",
            "[fe80::1]:80",
            "0.0.0.0",
            "localhost",
        ] {
            assert!(any.host_ok(ok), "{ok}");
        }
        for no in ["evil.example", "10.0.0.1:81", "fe80::1", "[10.0.0.1]"] {
            assert!(!any.host_ok(no), "{no}");
        }
        let named = Policy::new("127.0.0.1:8080".parse().unwrap(), "MyBox.lan", vec![]);
        assert!(named.host_ok("mybox.lan:8080"));
    }

    #[test]
    fn refusals() {
        let p = Policy::new("127.0.0.1:8080".parse().unwrap(), "127.0.0.1", vec![]);
        assert!(p.refuse(&req("Host: localhost:8080\r\n")).is_none());
        assert!(matches!(
            p.refuse(&req("Host: evil.example:8080\r\n")),
            Some(Refusal::Misdirected)
        ));
        assert!(matches!(p.refuse(&req("")), Some(Refusal::BadRequest(_))));
        let two = req("Host: localhost:8080\r\nHost: localhost:8080\r\n");
        assert!(matches!(p.refuse(&two), Some(Refusal::BadRequest(_))));
        let old = Request::parse("GET / HTTP/1.0\r\n\r\n").unwrap();
        assert!(p.refuse(&old).is_none());
    }

    #[test]
    fn tokens() {
        let tok = "0123456789abcdef0123456789abcdef";
        let p = Policy::new("0.0.0.0:8080".parse().unwrap(), "0.0.0.0", vec![])
            .with_token(Some(tok.into()));
        let get = |target: &str, head: &str| {
            Request::parse(&format!("GET {target} HTTP/1.1\r\n{head}\r\n")).unwrap()
        };
        let bearer = format!("Authorization: Bearer {tok}\r\n");
        let cookie = format!("Cookie: a=b; deltalens_token_8080={tok}\r\n");
        for path in [
            "/tables/t/x.json",
            "/v1/object?table=s3://b/t&path=x",
            "/v1/tables",
        ] {
            assert_eq!(p.access(&get(path, "")), Access::Refused, "{path}");
            assert_eq!(p.access(&get(path, &bearer)), Access::Open, "{path}");
            assert_eq!(p.access(&get(path, &cookie)), Access::Open, "{path}");
            for wrong in [
                "Authorization: Bearer 0123456789abcdef0123456789abcdeX\r\n",
                "Authorization: Basic MDEyMzQ1Njc4OWFiY2RlZg==\r\n",
                "Cookie: deltalens_token_8081=0123456789abcdef0123456789abcdef\r\n",
            ] {
                assert_eq!(p.access(&get(path, wrong)), Access::Refused, "{wrong}");
            }
        }
        // the explorer's files, and what reads nothing, need none
        for path in ["/", "/index.html", "/app.wasm", "/some/route"] {
            assert_eq!(p.access(&get(path, "")), Access::Open, "{path}");
        }
        let options = Request::parse("OPTIONS /v1/tables HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(p.access(&options), Access::Open);
        // the printed link: a cookie, and the same link without the token
        let login = p.access(&get(&format!("/?token={tok}&table=x%2Fy&via=%2F"), ""));
        let Access::Login { location, cookie } = login else {
            panic!("{login:?}");
        };
        assert_eq!(location, "/?table=x%2Fy&via=%2F");
        assert!(cookie.starts_with(&format!("deltalens_token_8080={tok};")));
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"));
        let login = p.access(&get(&format!("/?token={tok}"), ""));
        assert!(matches!(login, Access::Login { location, .. } if location == "/"));
        assert_eq!(p.access(&get("/?token=nope&table=x", "")), Access::Refused);
        // no token: everything as before
        let open = Policy::new("127.0.0.1:8080".parse().unwrap(), "127.0.0.1", vec![]);
        assert_eq!(open.access(&get("/tables/t/x.json", "")), Access::Open);
        assert_eq!(open.access(&get("/?token=x", "")), Access::Open);
    }

    #[test]
    fn token_values() {
        let made = new_token().unwrap();
        assert_eq!(made.len(), 2 * TOKEN_BYTES);
        assert_ne!(made, new_token().unwrap());
        assert!(parse_token(&made).is_ok());
        for bad in ["short", "has space in it 123456", "a;b=c,d\"0123456789", ""] {
            assert!(parse_token(bad).is_err(), "{bad}");
        }
        let e = parse_token("secret;secret;secret").unwrap_err().to_string();
        assert!(!e.contains("secret"), "{e}");
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "abcd"));
    }

    #[test]
    fn origins() {
        assert_eq!(
            parse_origin("HTTPS://Good.Example/").unwrap(),
            "https://good.example"
        );
        assert_eq!(
            parse_origin("http://localhost:3000").unwrap(),
            "http://localhost:3000"
        );
        for bad in [
            "*",
            "",
            "good.example",
            "ftp://x",
            "https://",
            "https://a/b",
            "https://a b",
        ] {
            assert!(parse_origin(bad).is_err(), "{bad}");
        }
        let p = Policy::new(
            "127.0.0.1:8080".parse().unwrap(),
            "127.0.0.1",
            vec!["https://good.example".into()],
        );
        assert_eq!(p.cors(Some("https://good.example")).len(), 3);
        assert_eq!(p.cors(Some("https://evil.example")).len(), 1);
        assert_eq!(p.cors(None).len(), 1);
        let off = Policy::new("127.0.0.1:8080".parse().unwrap(), "127.0.0.1", vec![]);
        assert!(off.cors(Some("https://good.example")).is_empty());
    }
}
