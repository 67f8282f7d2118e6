//! Reading the server's JSON answers: error documents (`{"errorCode", "message"}`),
//! listing pages (`items`, `nextPageToken`) and the `Delta-Table-Version` header, each
//! bounded.

use crate::error::SharingError;
use crate::name::check_name;

/// The most bytes of a JSON answer read (a listing page, a token, credentials).
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;

/// The most pages of one listing followed (a server handing out page tokens forever).
pub const MAX_PAGES: usize = 1000;

/// The most characters of a server's message kept for an error.
const MAX_MESSAGE_CHARS: usize = 1000;

/// The error an answer of `status` to `what` (sent to `endpoint`) is.
pub(crate) fn answer_error(endpoint: &str, what: &str, status: u16, body: &[u8]) -> SharingError {
    let text = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
    let doc: Option<serde_json::Value> = deltalens_json::from_str(&text).ok();
    let field = |k: &str| {
        doc.as_ref()
            .and_then(|d| d.get(k))
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let message = field("message")
        .or_else(|| field("error_description"))
        .or_else(|| field("error"))
        .unwrap_or_else(|| text.trim().to_string());
    let message = match field("errorCode") {
        Some(code) if !message.contains(&code) => format!("{code}: {message}"),
        _ => message,
    };
    let message: String = message
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_MESSAGE_CHARS)
        .collect();
    let (endpoint, what) = (endpoint.to_string(), what.to_string());
    match status {
        401 | 403 => SharingError::Denied {
            endpoint,
            what,
            status,
            message,
        },
        404 => SharingError::NotFound {
            endpoint,
            what,
            message,
        },
        _ => SharingError::Server {
            endpoint,
            what,
            status,
            message,
        },
    }
}

/// `Ok` for a 2xx `status`; else the error the answer's document describes.
pub fn check_status(
    endpoint: &str,
    what: &str,
    status: u16,
    body: &[u8],
) -> Result<(), SharingError> {
    if (200..300).contains(&status) {
        Ok(())
    } else {
        Err(answer_error(endpoint, what, status, body))
    }
}

/// The JSON document of a 2xx answer, at most [`MAX_ANSWER_BYTES`].
pub(crate) fn json_answer(
    endpoint: &str,
    what: &str,
    body: &[u8],
) -> Result<serde_json::Value, SharingError> {
    if body.len() > MAX_ANSWER_BYTES {
        return Err(SharingError::LimitExceeded {
            endpoint: endpoint.to_string(),
            what: what.to_string(),
            limit: "MAX_ANSWER_BYTES",
            value: body.len() as u64,
            max: MAX_ANSWER_BYTES as u64,
        });
    }
    deltalens_json::from_slice(body).map_err(|e| SharingError::InvalidAnswer {
        endpoint: endpoint.to_string(),
        what: what.to_string(),
        why: format!("not JSON ({e})"),
    })
}

/// A share, schema or table in a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedItem {
    /// Its name.
    pub name: String,
    /// The share it is in (schemas and tables).
    pub share: Option<String>,
    /// The schema it is in (tables).
    pub schema: Option<String>,
    /// The server's id, if it gives one.
    pub id: Option<String>,
    /// The table's storage location, if the server says (directory access).
    pub location: Option<String>,
    /// How the table may be read (`url`, `dir`); empty when the server does not say
    /// (then: `url` only).
    pub access_modes: Vec<String>,
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Page {
    /// The items on it.
    pub items: Vec<SharedItem>,
    /// The token of the next page, if there is one.
    pub next_page_token: Option<String>,
}

/// The most items of one listing kept (over all its pages).
pub const MAX_ITEMS: usize = 100_000;

/// The most characters of an item's id or location kept.
const MAX_FIELD_CHARS: usize = 4096;

/// A listing page as the protocol writes it (fields deltalens does not read are skipped as
/// they are read).
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct PageDoc {
    items: Option<Vec<ItemDoc>>,
    next_page_token: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct ItemDoc {
    name: Option<String>,
    share: Option<String>,
    schema: Option<String>,
    id: Option<String>,
    location: Option<String>,
    access_modes: Option<Vec<String>>,
}

impl Page {
    /// Reads the answer (`status`, `body`) to a listing request about `what` sent to
    /// `endpoint`. An item whose name the protocol forbids is an invalid answer: names
    /// from a server are put in later requests' paths and shown.
    pub fn parse(
        endpoint: &str,
        what: &str,
        status: u16,
        body: &[u8],
    ) -> Result<Page, SharingError> {
        if !(200..300).contains(&status) {
            return Err(answer_error(endpoint, what, status, body));
        }
        if body.len() > MAX_ANSWER_BYTES {
            return Err(SharingError::LimitExceeded {
                endpoint: endpoint.to_string(),
                what: what.to_string(),
                limit: "MAX_ANSWER_BYTES",
                value: body.len() as u64,
                max: MAX_ANSWER_BYTES as u64,
            });
        }
        let invalid = |why: String| SharingError::InvalidAnswer {
            endpoint: endpoint.to_string(),
            what: what.to_string(),
            why,
        };
        let doc: PageDoc = deltalens_json::from_slice(body)
            .map_err(|e| invalid(format!("not a listing page ({e})")))?;
        let items = doc.items.unwrap_or_default();
        if items.len() > MAX_ITEMS {
            return Err(SharingError::LimitExceeded {
                endpoint: endpoint.to_string(),
                what: what.to_string(),
                limit: "MAX_ITEMS",
                value: items.len() as u64,
                max: MAX_ITEMS as u64,
            });
        }
        let items = items
            .into_iter()
            .map(|item| read_item(item).map_err(&invalid))
            .collect::<Result<_, _>>()?;
        let next_page_token = doc
            .next_page_token
            .filter(|t| !t.is_empty() && t.len() <= MAX_FIELD_CHARS);
        Ok(Page {
            items,
            next_page_token,
        })
    }
}

fn read_item(item: ItemDoc) -> Result<SharedItem, String> {
    let name = item.name.ok_or("an item without a name")?;
    for n in [Some(&name), item.share.as_ref(), item.schema.as_ref()]
        .into_iter()
        .flatten()
    {
        check_name(n).map_err(|why| format!("item {n:?}: {why}"))?;
    }
    let short = |v: Option<String>| v.filter(|s| s.chars().count() <= MAX_FIELD_CHARS);
    let access_modes = item
        .access_modes
        .unwrap_or_default()
        .into_iter()
        .filter(|m| m.len() <= 16)
        .take(8)
        .collect();
    Ok(SharedItem {
        share: item.share,
        schema: item.schema,
        id: short(item.id),
        location: short(item.location),
        access_modes,
        name,
    })
}

/// The table version of an answer's `Delta-Table-Version` header (`None`: no header).
pub fn table_version(
    endpoint: &str,
    what: &str,
    header: Option<&str>,
) -> Result<u64, SharingError> {
    let invalid = |why: String| SharingError::InvalidAnswer {
        endpoint: endpoint.to_string(),
        what: what.to_string(),
        why,
    };
    let h = header.ok_or_else(|| invalid("no Delta-Table-Version header".into()))?;
    h.trim()
        .parse::<u64>()
        .ok()
        .filter(|v| *v <= i64::MAX as u64)
        .ok_or_else(|| invalid(format!("a Delta-Table-Version of {h:?}, not a version")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_lists_items_and_the_next_token() {
        let p = Page::parse(
            "https://h/ds",
            "the shares",
            200,
            br#"{"items":[{"name":"sales","id":"1"},{"name":"t","schema":"sc","share":"sales","accessModes":["url","dir"],"location":"s3://b/t"}],"nextPageToken":"abc"}"#,
        )
        .unwrap();
        assert_eq!(p.items.len(), 2);
        assert_eq!(p.items[1].access_modes, ["url", "dir"]);
        assert_eq!(p.items[1].location.as_deref(), Some("s3://b/t"));
        assert_eq!(p.next_page_token.as_deref(), Some("abc"));
        // items missing and an empty token: an empty last page, as the protocol allows
        for body in [
            r#"{}"#,
            r#"{"items":[],"nextPageToken":""}"#,
            r#"{"items":null}"#,
        ] {
            let p = Page::parse("e", "w", 200, body.as_bytes()).unwrap();
            assert_eq!((p.items.len(), p.next_page_token), (0, None));
        }
    }

    #[test]
    fn a_hostile_page_is_refused() {
        for (body, why) in [
            (r#"{"items":[{"name":"../../x"}]}"#, "'/'"),
            (r#"{"items":[{"name":".."}]}"#, "a path segment"),
            (r#"{"items":[{"name":"t","schema":"."}]}"#, "a path segment"),
            (r#"{"items":[{"id":"1"}]}"#, "without a name"),
            (r#"{"items":{"name":"x"}}"#, "not a listing page"),
            ("not json", "not a listing page"),
        ] {
            let e = Page::parse("e", "the shares", 200, body.as_bytes()).unwrap_err();
            assert!(e.to_string().contains(why), "{body}: {e}");
        }
        let huge = vec![b' '; MAX_ANSWER_BYTES + 1];
        let e = Page::parse("e", "the shares", 200, &huge).unwrap_err();
        assert!(e.to_string().contains("MAX_ANSWER_BYTES"), "{e}");
    }

    #[test]
    fn error_answers_keep_the_server_message() {
        let e = Page::parse(
            "https://h/ds",
            "share s",
            404,
            br#"{"errorCode":"RESOURCE_DOES_NOT_EXIST","message":"share s not found"}"#,
        )
        .unwrap_err();
        assert!(matches!(e, SharingError::NotFound { .. }));
        assert!(
            e.to_string()
                .contains("RESOURCE_DOES_NOT_EXIST: share s not found"),
            "{e}"
        );
        let e = Page::parse("https://h/ds", "share s", 403, b"forbidden\x1b[31m").unwrap_err();
        assert!(matches!(e, SharingError::Denied { status: 403, .. }));
        assert!(!e.to_string().contains('\x1b'), "{e}");
        let e = Page::parse("https://h/ds", "share s", 500, &vec![b'x'; 100_000]).unwrap_err();
        assert!(e.to_string().len() < 2000);
    }

    #[test]
    fn the_version_header_is_a_version() {
        assert_eq!(table_version("e", "t", Some(" 42 ")).unwrap(), 42);
        for h in [None, Some("-1"), Some("x"), Some("9223372036854775808")] {
            assert!(table_version("e", "t", h).is_err(), "{h:?}");
        }
    }
}
