//! Directory access (PROTOCOL.md "Generate Temporary Table Credential"): read credentials
//! for a table's storage location, in Unity Catalog's models, so the table is then read
//! as any `s3://`, `abfss://` or `gs://` table with vended credentials is.

use deltalens_catalog::{Vended, VendedKind};

use crate::answer::{answer_error, json_answer};
use crate::error::SharingError;
use crate::request::Request;

/// The location and credentials of the answer (`status`, `body`) to
/// [`crate::Server::temporary_credentials`] (`req`).
pub fn temporary_credentials(
    req: &Request,
    status: u16,
    body: &[u8],
) -> Result<(String, Vended), SharingError> {
    if !(200..300).contains(&status) {
        return Err(answer_error(&req.url, &req.what, status, body));
    }
    let v = json_answer(&req.url, &req.what, body)?;
    let invalid = |why: &str| SharingError::InvalidAnswer {
        endpoint: req.url.clone(),
        what: req.what.clone(),
        why: why.to_string(),
    };
    let c = v
        .get("credentials")
        .ok_or_else(|| invalid("no credentials"))?;
    let text = |o: &str, k: &str| {
        c.get(o)
            .and_then(|x| x.get(k))
            .and_then(|x| x.as_str())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    let location = c
        .get("location")
        .and_then(|l| l.as_str())
        .filter(|l| !l.is_empty())
        .ok_or_else(|| invalid("credentials without a location"))?
        .to_string();
    let aws = || {
        Some(VendedKind::Aws {
            access_key_id: text("awsTempCredentials", "accessKeyId")?,
            secret_access_key: text("awsTempCredentials", "secretAccessKey")?,
            session_token: text("awsTempCredentials", "sessionToken"),
        })
    };
    let kinds = [
        c.get("awsTempCredentials").and(aws()),
        text("azureUserDelegationSas", "sasToken")
            .map(|s| VendedKind::AzureSas(s.trim_start_matches('?').to_string())),
        text("gcpOauthToken", "oauthToken").map(VendedKind::GcpToken),
    ];
    let mut found = kinds.into_iter().flatten();
    let kind = found
        .next()
        .ok_or_else(|| invalid("no awsTempCredentials, azureUserDelegationSas or gcpOauthToken"))?;
    if found.next().is_some() {
        return Err(invalid("more than one kind of credential"));
    }
    let expiration_ms = c.get("expirationTime").and_then(|e| e.as_i64());
    Ok((
        location,
        Vended {
            kind,
            expiration_ms,
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    fn req() -> Request {
        Profile::parse(
            "p",
            br#"{"shareCredentialsVersion":1,"endpoint":"https://h/ds","bearerToken":"t"}"#,
        )
        .unwrap()
        .server(None)
        .unwrap()
        .temporary_credentials("s", "sc", "t", None)
    }

    #[test]
    fn each_kind_of_credential_is_read() {
        let (loc, v) = temporary_credentials(
            &req(),
            200,
            br#"{"credentials":{"location":"s3://b/t","awsTempCredentials":{"accessKeyId":"AK","secretAccessKey":"SK","sessionToken":"ST"},"expirationTime":1700000000000}}"#,
        )
        .unwrap();
        assert_eq!(loc, "s3://b/t");
        assert_eq!(v.expiration_ms, Some(1_700_000_000_000));
        assert!(
            matches!(v.kind, VendedKind::Aws { ref session_token, .. } if session_token.as_deref() == Some("ST"))
        );
        let (_, v) = temporary_credentials(
            &req(),
            200,
            br#"{"credentials":{"location":"abfss://c@a.dfs.core.windows.net/t","azureUserDelegationSas":{"sasToken":"?sv=1&sig=x"},"expirationTime":1}}"#,
        )
        .unwrap();
        assert!(v.kind == VendedKind::AzureSas("sv=1&sig=x".into()));
        let (_, v) = temporary_credentials(
            &req(),
            200,
            br#"{"credentials":{"location":"gs://b/t","gcpOauthToken":{"oauthToken":"ya29"},"expirationTime":1}}"#,
        )
        .unwrap();
        assert!(v.kind == VendedKind::GcpToken("ya29".into()));
    }

    #[test]
    fn credentials_that_cannot_be_used_are_refused() {
        for (body, why) in [
            (r#"{}"#, "no credentials"),
            (
                r#"{"credentials":{"awsTempCredentials":{"accessKeyId":"a","secretAccessKey":"s"}}}"#,
                "without a location",
            ),
            (
                r#"{"credentials":{"location":"s3://b","awsTempCredentials":{"accessKeyId":"a"}}}"#,
                "no awsTempCredentials",
            ),
            (
                r#"{"credentials":{"location":"s3://b","gcpOauthToken":{"oauthToken":"x"},"azureUserDelegationSas":{"sasToken":"y"}}}"#,
                "more than one",
            ),
        ] {
            let e = temporary_credentials(&req(), 200, body.as_bytes()).unwrap_err();
            assert!(e.to_string().contains(why), "{body}: {e}");
        }
        let e = temporary_credentials(
            &req(),
            403,
            br#"{"errorCode":"PERMISSION_DENIED","message":"dir access not enabled"}"#,
        )
        .unwrap_err();
        assert!(e.to_string().contains("dir access not enabled"), "{e}");
    }
}
