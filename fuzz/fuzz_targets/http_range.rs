//! HTTP byte ranges (storage `http_range`): `parse_range` (a `Range` request header read by
//! `deltalens serve` against an object size) and `parse_content_range` (a 206 answer's
//! `Content-Range` read by clients). The first 8 bytes are the size (little endian), the
//! rest the header value; the value is also read against a few fixed sizes.
//! Checked: a partial answer lies within the object (`start < end <= size`), agrees with
//! `ByteRange::resolve`, and the `Range` and `Content-Range` that `ByteRange` and a server
//! would write for it read back to the same range.
#![no_main]

use deltalens_storage::ByteRange;
use deltalens_storage::http_range::{ContentRange, RangeAnswer, parse_content_range, parse_range};

fn check_range(header: &str, size: u64) {
    let RangeAnswer::Partial { start, end } = parse_range(header, size) else {
        return;
    };
    assert!(
        start < end && end <= size,
        "{header:?} on {size} bytes gave {start}..{end}"
    );
    // what the client's ByteRange writes for it reads back the same
    let bounded = ByteRange::Bounded(start..end);
    assert_eq!(bounded.resolve(size), Some(start..end));
    let again = parse_range(&bounded.to_string(), size);
    assert_eq!(again, RangeAnswer::Partial { start, end }, "{bounded}");
    // the Content-Range a server answers with reads back the same
    let cr = format!("bytes {start}-{}/{size}", end - 1);
    assert_eq!(
        parse_content_range(&cr),
        Some(ContentRange {
            start,
            end_inclusive: end - 1,
            size: Some(size)
        }),
        "{cr}"
    );
}

fn check_content_range(value: &str) {
    let Some(cr) = parse_content_range(value) else {
        return;
    };
    assert!(cr.start <= cr.end_inclusive, "{value:?}");
    if let Some(size) = cr.size {
        assert!(cr.end_inclusive < size, "{value:?}");
        let written = format!("bytes {}-{}/{size}", cr.start, cr.end_inclusive);
        assert_eq!(parse_content_range(&written), Some(cr));
        // the Range header asking for exactly this is answered with it
        let asked = format!("bytes={}-{}", cr.start, cr.end_inclusive);
        assert_eq!(
            parse_range(&asked, size),
            RangeAnswer::Partial {
                start: cr.start,
                end: cr.end_inclusive + 1
            },
            "{asked} on {size}"
        );
    }
}

/// A 206 answer's `Content-Range` and body length checked against the range asked for
/// (`ByteRange::check_partial`, the client side of a ranged read).
fn check_answer(range: &ByteRange, header: &str, body_len: u64) {
    let Ok(size) = range.check_partial("f", Some(header), body_len) else {
        return;
    };
    let cr = parse_content_range(header).expect("an accepted Content-Range reads");
    assert_eq!(size, cr.size);
    let sent = (cr.end_inclusive - cr.start).checked_add(1);
    assert_eq!(
        sent,
        Some(body_len),
        "{header:?} accepted for {body_len} bytes"
    );
    if let Some(s) = cr.size {
        assert_eq!(
            range.resolve(s),
            Some(cr.start..cr.end_inclusive + 1),
            "{header:?} accepted for {range}"
        );
    }
    let _ = range.check_partial("f", None, body_len);
}

deltalens_fuzz::target!(|data| {
    let (size, rest) = if data.len() >= 8 {
        let mut b = [0u8; 8];
        b.copy_from_slice(&data[..8]);
        (u64::from_le_bytes(b), &data[8..])
    } else {
        (0, data)
    };
    let text = String::from_utf8_lossy(rest);
    for s in [size, 0, 1, 100, 1 << 32, u64::MAX - 1, u64::MAX] {
        check_range(&text, s);
    }
    check_content_range(&text);
    // the client's check of an answer to a range it could ask for (offsets of files below
    // 2^40 bytes; the answer's header is anything)
    let a = size & 0xffff_ffff;
    let b = size >> 32;
    let len = u64::from(size.count_ones()) * 1000 + (size & 0xff);
    for range in [
        ByteRange::Bounded(a.min(b)..a.max(b)),
        ByteRange::From(a),
        ByteRange::Suffix(b),
        ByteRange::Bounded(0..1 << 40),
        ByteRange::From(1 << 40),
    ] {
        for body_len in [len, 0, 1, u64::MAX] {
            check_answer(&range, &text, body_len);
        }
        if let Some(cr) = parse_content_range(&text) {
            if let Some(n) = (cr.end_inclusive - cr.start).checked_add(1) {
                check_answer(&range, &text, n);
            }
        }
    }
    // ByteRange's own forms resolve inside the object
    for r in [
        ByteRange::Bounded(size / 3..size / 2),
        ByteRange::From(size / 2),
        ByteRange::Suffix(size / 5),
    ] {
        for s in [size, 0, 1, 100] {
            if let Some(x) = r.resolve(s) {
                assert!(x.start <= x.end && x.end <= s, "{r:?} on {s}: {x:?}");
            }
        }
    }
});
