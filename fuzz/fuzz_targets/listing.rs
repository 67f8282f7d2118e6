//! Listing responses read by the browser and worker backends (fetch-storage `listing`):
//! S3 ListObjectsV2 XML, Azure List Blobs XML and the GCS JSON API. The first byte picks
//! the parser (0: S3, 1: Azure, 2: GCS), the rest is the response body.
#![no_main]

use deltalens_fetch_storage::listing::{parse_azure, parse_gcs, parse_s3};

deltalens_fuzz::target!(|data| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Some(body) = deltalens_fuzz::text(rest) else {
        return;
    };
    let page = match pick % 3 {
        0 => parse_s3(body),
        1 => parse_azure(body),
        _ => match parse_gcs(body) {
            Some(p) => p,
            None => return,
        },
    };
    for o in &page.objects {
        let _ = (o.key.len(), o.size, o.last_modified_ms);
    }
});
