//! AWS Signature Version 4 for S3 requests made from the browser (the user's access key
//! and secret never leave the tab). Pure, so it is checked natively against AWS's
//! published examples.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};

use crate::location::S3Credentials;

/// SHA-256 of the empty payload (GET, HEAD).
pub const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn hmac(key: &[u8], data: &str) -> Vec<u8> {
    // HMAC accepts keys of any length, so this cannot fail
    match Hmac::<Sha256>::new_from_slice(key) {
        Ok(mut m) => {
            m.update(data.as_bytes());
            m.finalize().into_bytes().to_vec()
        }
        Err(_) => Vec::new(),
    }
}

/// One request to sign. `url` is the full URL as it will be fetched (path and query
/// already percent-encoded); `headers` are further headers to sign (e.g. `range`).
#[derive(Debug)]
pub struct SignRequest<'a> {
    /// HTTP method (`GET`, `HEAD`).
    pub method: &'a str,
    /// The full URL, percent-encoded.
    pub url: &'a str,
    /// Further headers to sign, lower-case names (e.g. `range`).
    pub headers: &'a [(&'a str, String)],
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
    /// The region to sign for (`us-east-1`, `auto` for R2).
    pub region: &'a str,
}

/// The headers to add to the request: `x-amz-date`, `x-amz-content-sha256`,
/// `x-amz-security-token` (with a session token) and `authorization`.
pub fn sign(req: &SignRequest<'_>, creds: &S3Credentials) -> Vec<(String, String)> {
    let after_scheme = req.url.split_once("://").map_or(req.url, |(_, r)| r);
    let (host, path_query) = match after_scheme.find('/') {
        Some(i) => (&after_scheme[..i], &after_scheme[i..]),
        None => (after_scheme, "/"),
    };
    let (path, query) = path_query.split_once('?').unwrap_or((path_query, ""));
    let mut params: Vec<(&str, &str)> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .collect();
    params.sort();
    let canonical_query: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();

    let mut headers: Vec<(String, String)> = vec![
        ("host".into(), host.to_string()),
        ("x-amz-content-sha256".into(), EMPTY_SHA256.into()),
        ("x-amz-date".into(), req.amz_date.to_string()),
    ];
    if let Some(t) = &creds.session_token {
        headers.push(("x-amz-security-token".into(), t.clone()));
    }
    for (k, v) in req.headers {
        headers.push((k.to_ascii_lowercase(), v.trim().to_string()));
    }
    headers.sort();
    let signed: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
    let signed = signed.join(";");
    let canonical_headers: String = headers.iter().map(|(k, v)| format!("{k}:{v}\n")).collect();
    let canonical = format!(
        "{}\n{}\n{}\n{}\n{}\n{}",
        req.method,
        path,
        canonical_query.join("&"),
        canonical_headers,
        signed,
        EMPTY_SHA256
    );
    let date = req.amz_date.get(..8).unwrap_or(req.amz_date);
    let scope = format!("{date}/{}/s3/aws4_request", req.region);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{scope}\n{}",
        req.amz_date,
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let k = hmac(format!("AWS4{}", creds.secret_access_key).as_bytes(), date);
    let k = hmac(&k, req.region);
    let k = hmac(&k, "s3");
    let k = hmac(&k, "aws4_request");
    let signature = hex(&hmac(&k, &to_sign));
    let mut out: Vec<(String, String)> = headers
        .into_iter()
        .filter(|(k, _)| k.starts_with("x-amz-"))
        .collect();
    out.push((
        "authorization".into(),
        format!(
            "AWS4-HMAC-SHA256 Credential={}/{scope}, SignedHeaders={signed}, Signature={signature}",
            creds.access_key_id
        ),
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn example_creds() -> S3Credentials {
        // the example key pair of AWS's "Signature Calculations for the Authorization
        // Header" documentation
        S3Credentials {
            access_key_id: "AKIAIOSFODNN7EXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            session_token: None,
        }
    }

    fn signature(headers: &[(String, String)]) -> String {
        let auth = &headers
            .iter()
            .find(|(k, _)| k == "authorization")
            .unwrap()
            .1;
        auth.rsplit("Signature=").next().unwrap().to_string()
    }

    #[test]
    fn aws_example_get_object_with_range() {
        let h = sign(
            &SignRequest {
                method: "GET",
                url: "https://examplebucket.s3.amazonaws.com/test.txt",
                headers: &[("Range", "bytes=0-9".into())],
                amz_date: "20130524T000000Z",
                region: "us-east-1",
            },
            &example_creds(),
        );
        assert_eq!(
            signature(&h),
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
        let auth = &h.iter().find(|(k, _)| k == "authorization").unwrap().1;
        assert!(auth.contains(
            "Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date"
        ));
    }

    #[test]
    fn aws_example_list_objects() {
        let h = sign(
            &SignRequest {
                method: "GET",
                url: "https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J",
                headers: &[],
                amz_date: "20130524T000000Z",
                region: "us-east-1",
            },
            &example_creds(),
        );
        assert_eq!(
            signature(&h),
            "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7"
        );
    }

    #[test]
    fn session_tokens_are_sent_and_signed() {
        let mut c = example_creds();
        c.session_token = Some("tok".into());
        let h = sign(
            &SignRequest {
                method: "HEAD",
                url: "http://127.0.0.1:5000/b/k",
                headers: &[],
                amz_date: "20260101T000000Z",
                region: "auto",
            },
            &c,
        );
        assert!(h.contains(&("x-amz-security-token".into(), "tok".into())));
        assert!(h.iter().any(|(k, v)| k == "authorization"
            && v.contains("host;x-amz-content-sha256;x-amz-date;x-amz-security-token")));
    }
}
