//! Listing responses of S3 (ListObjectsV2 XML), Azure (List Blobs XML) and GCS (JSON
//! API), parsed without an XML library (the elements needed are flat and few; every KB of
//! wasm counts). Pure, so it is tested natively.

use chrono::DateTime;

/// One listed object: its key in the bucket/container, size and modification time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    /// The object's full key in the bucket or container.
    pub key: String,
    /// The object's size in bytes.
    pub size: u64,
    /// Last modification, in milliseconds since the epoch; `None` when absent or
    /// unparsable.
    pub last_modified_ms: Option<i64>,
}

/// One page of a listing and the token for the next one.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Page {
    /// The objects of this page, in the store's (lexicographic) order.
    pub objects: Vec<Listed>,
    /// The continuation token of the next page; `None` on the last page.
    pub next: Option<String>,
}

/// The text of each `<tag>...</tag>` in `xml`, in order.
fn elements<'a>(xml: &'a str, tag: &str) -> Vec<&'a str> {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    let mut out = Vec::new();
    let mut rest = xml;
    while let Some(i) = rest.find(&open) {
        let after = &rest[i + open.len()..];
        let Some(j) = after.find(&close) else { break };
        out.push(&after[..j]);
        rest = &after[j + close.len()..];
    }
    out
}

fn element<'a>(xml: &'a str, tag: &str) -> Option<&'a str> {
    elements(xml, tag).into_iter().next()
}

/// Undo XML escaping.
fn unescape(s: &str) -> String {
    if !s.contains('&') {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('&') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        let Some(end) = tail.find(';') else {
            out.push_str(tail);
            return out;
        };
        let entity = &tail[1..end];
        let ch = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            e if e.starts_with("#x") => u32::from_str_radix(&e[2..], 16)
                .ok()
                .and_then(char::from_u32),
            e if e.starts_with('#') => e[1..].parse().ok().and_then(char::from_u32),
            _ => None,
        };
        match ch {
            Some(c) => out.push(c),
            None => out.push_str(&tail[..=end]),
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

/// A relay listing page as a store's page: keys are paths, the token is the last path.
pub fn parse_relay(text: &str, prefix: &str) -> Option<Page> {
    let page = deltalens_storage::relay::ListPage::parse(text, prefix)?;
    Some(Page {
        objects: page
            .objects
            .into_iter()
            .map(|o| Listed {
                key: o.path,
                size: o.size,
                last_modified_ms: o.last_modified_ms,
            })
            .collect(),
        next: page.next_start_after,
    })
}

/// An S3 ListObjectsV2 response.
pub fn parse_s3(xml: &str) -> Page {
    let objects = elements(xml, "Contents")
        .into_iter()
        .filter_map(|c| {
            Some(Listed {
                key: unescape(element(c, "Key")?),
                size: element(c, "Size")
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(0),
                last_modified_ms: element(c, "LastModified")
                    .and_then(|t| DateTime::parse_from_rfc3339(t.trim()).ok())
                    .map(|t| t.timestamp_millis()),
            })
        })
        .collect();
    let truncated = element(xml, "IsTruncated").is_some_and(|t| t.trim() == "true");
    let next = element(xml, "NextContinuationToken")
        .map(unescape)
        .filter(|_| truncated);
    Page { objects, next }
}

/// An Azure List Blobs response.
pub fn parse_azure(xml: &str) -> Page {
    let objects = elements(xml, "Blob")
        .into_iter()
        .filter_map(|b| {
            Some(Listed {
                key: unescape(element(b, "Name")?),
                size: element(b, "Content-Length")
                    .and_then(|s| s.trim().parse().ok())
                    .unwrap_or(0),
                last_modified_ms: element(b, "Last-Modified")
                    .and_then(|t| DateTime::parse_from_rfc2822(t.trim()).ok())
                    .map(|t| t.timestamp_millis()),
            })
        })
        .collect();
    let next = element(xml, "NextMarker")
        .map(unescape)
        .filter(|m| !m.trim().is_empty());
    Page { objects, next }
}

/// A GCS JSON API `objects.list` response; `None` when it is not one.
pub fn parse_gcs(json: &str) -> Option<Page> {
    let v: serde_json::Value = deltalens_json::from_str(json).ok()?;
    let objects = v
        .get("items")
        .and_then(|i| i.as_array())
        .map(|items| {
            items
                .iter()
                .filter_map(|o| {
                    Some(Listed {
                        key: o.get("name")?.as_str()?.to_string(),
                        size: o
                            .get("size")
                            .and_then(|s| s.as_str())
                            .and_then(|s| s.parse().ok())
                            .unwrap_or(0),
                        last_modified_ms: o
                            .get("updated")
                            .and_then(|t| t.as_str())
                            .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
                            .map(|t| t.timestamp_millis()),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let next = v
        .get("nextPageToken")
        .and_then(|t| t.as_str())
        .map(str::to_string);
    Some(Page { objects, next })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relay_pages_continue_after_their_last_path() {
        let p = parse_relay(
            r#"{"objects":[{"path":"_delta_log/0.json","size":3,"last_modified_ms":5}],"next_start_after":"_delta_log/0.json"}"#,
            "_delta_log/",
        )
        .unwrap();
        assert_eq!(p.objects[0].key, "_delta_log/0.json");
        assert_eq!(p.next.as_deref(), Some("_delta_log/0.json"));
        assert!(parse_relay(r#"{"objects":[{"path":"../x","size":3}]}"#, "").is_none());
    }

    #[test]
    fn s3_list_objects_v2() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name><Prefix>t/_delta_log/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>true</IsTruncated><Contents><Key>t/_delta_log/00000000000000000000.json</Key><LastModified>2026-01-02T03:04:05.000Z</LastModified><ETag>&quot;abc&quot;</ETag><Size>1234</Size><StorageClass>STANDARD</StorageClass></Contents><Contents><Key>t/a&amp;b.parquet</Key><LastModified>2026-01-02T03:04:06.000Z</LastModified><Size>5</Size></Contents><NextContinuationToken>tok&amp;1</NextContinuationToken></ListBucketResult>"#;
        let p = parse_s3(xml);
        assert_eq!(p.objects.len(), 2);
        assert_eq!(p.objects[0].key, "t/_delta_log/00000000000000000000.json");
        assert_eq!(p.objects[0].size, 1234);
        assert_eq!(p.objects[0].last_modified_ms, Some(1_767_323_045_000));
        assert_eq!(p.objects[1].key, "t/a&b.parquet");
        assert_eq!(p.next.as_deref(), Some("tok&1"));
        let last = xml.replace("<IsTruncated>true", "<IsTruncated>false");
        assert_eq!(parse_s3(&last).next, None);
    }

    #[test]
    fn azure_list_blobs() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?><EnumerationResults ServiceEndpoint="http://127.0.0.1:10000/devstoreaccount1" ContainerName="c"><Prefix>t/</Prefix><Blobs><Blob><Name>t/_delta_log/00000000000000000001.json</Name><Properties><Creation-Time>Fri, 02 Jan 2026 03:04:05 GMT</Creation-Time><Last-Modified>Fri, 02 Jan 2026 03:04:05 GMT</Last-Modified><Content-Length>77</Content-Length></Properties></Blob></Blobs><NextMarker /></EnumerationResults>"#;
        let p = parse_azure(xml);
        assert_eq!(p.objects.len(), 1);
        assert_eq!(p.objects[0].size, 77);
        assert_eq!(p.objects[0].last_modified_ms, Some(1_767_323_045_000));
        assert_eq!(p.next, None);
        let more = xml.replace("<NextMarker />", "<NextMarker>m2</NextMarker>");
        assert_eq!(parse_azure(&more).next.as_deref(), Some("m2"));
    }

    #[test]
    fn gcs_json() {
        let j = r#"{"kind":"storage#objects","nextPageToken":"n","items":[{"name":"t/x.json","size":"12","updated":"2026-01-02T03:04:05.000Z"}]}"#;
        let p = parse_gcs(j).unwrap();
        assert_eq!(p.objects[0].size, 12);
        assert_eq!(p.next.as_deref(), Some("n"));
        assert!(parse_gcs("<html>").is_none());
        assert_eq!(unescape("&#x41;&#66;&bogus;"), "AB&bogus;");
    }
}
