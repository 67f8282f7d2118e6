//! HTTP byte ranges (RFC 9110 §14): the server's reading of a `Range` request header and
//! the client's reading of a `Content-Range` response header.
//!
//! Both functions are pure, total and allocation-free: any input string, however long or
//! malformed, gives an answer without panicking or overflowing (numbers too large for a
//! `u64` saturate where RFC 9110 makes them meaningful and are refused elsewhere).

/// What a server should do with a `Range` header for an object of a known size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeAnswer {
    /// Ignore the header and send the whole object (200).
    Whole,
    /// Send bytes `start..end` (206); `end` is exclusive and `start < end <= size`.
    Partial {
        /// First byte to send.
        start: u64,
        /// One past the last byte to send.
        end: u64,
    },
    /// No byte of the object is in the range (416 with `Content-Range: bytes */size`).
    Unsatisfiable,
}

/// A parsed `Content-Range: bytes start-end/size` response header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ContentRange {
    /// First byte sent.
    pub start: u64,
    /// Last byte sent (inclusive, `>= start`).
    pub end_inclusive: u64,
    /// The whole object's length, when the server said (`*` means unknown).
    pub size: Option<u64>,
}

/// Reads a `Range` header value against an object of `size` bytes (RFC 9110 §14.2).
///
/// Only the `bytes` unit (any case) with exactly one range is honoured; anything else —
/// another unit, a syntax error, a reversed `first-last`, several ranges — is ignored
/// (`Whole`), as the RFC allows. `first-` and `first-last` are satisfiable when `first`
/// is below `size` (`last` is clamped to the end); a suffix `-n` when `n > 0` (the last
/// `n` bytes, or all of them). An empty object cannot be sent in part: a non-zero suffix
/// gives `Whole`. Numbers too large for a `u64` saturate, which keeps their meaning.
pub fn parse_range(header: &str, size: u64) -> RangeAnswer {
    let Some((unit, set)) = trim_ows(header).split_once('=') else {
        return RangeAnswer::Whole;
    };
    if !unit.eq_ignore_ascii_case("bytes") {
        return RangeAnswer::Whole;
    }
    // a list: empty elements are ignored, optional whitespace around each (RFC 9110 §5.6.1)
    let mut specs = set.split(',').map(trim_ows).filter(|s| !s.is_empty());
    match (specs.next(), specs.next()) {
        (Some(spec), None) => range_spec(spec, size).unwrap_or(RangeAnswer::Whole),
        _ => RangeAnswer::Whole,
    }
}

/// Reads a `Range` header value before the object's size is known (a relay passes the
/// range on to the store): the one range asked for, or `None` to send the whole object —
/// under the same rules as [`parse_range`] (one `bytes` range; anything else ignored; an
/// empty suffix `-0` is sent whole too).
pub fn requested_range(header: &str) -> Option<crate::ByteRange> {
    let (unit, set) = trim_ows(header).split_once('=')?;
    if !unit.eq_ignore_ascii_case("bytes") {
        return None;
    }
    let mut specs = set.split(',').map(trim_ows).filter(|s| !s.is_empty());
    let (Some(spec), None) = (specs.next(), specs.next()) else {
        return None;
    };
    let (first, last) = spec.split_once('-')?;
    if first.is_empty() {
        return match saturating_digits(last)? {
            0 => None,
            n => Some(crate::ByteRange::Suffix(n)),
        };
    }
    let start = saturating_digits(first)?;
    match last {
        "" => Some(crate::ByteRange::From(start)),
        l => {
            let l = saturating_digits(l)?;
            (l >= start).then(|| crate::ByteRange::Bounded(start..l.saturating_add(1)))
        }
    }
}

/// One `first-[last]` or `-suffix` range spec; `None` when it is invalid.
fn range_spec(spec: &str, size: u64) -> Option<RangeAnswer> {
    let (first, last) = spec.split_once('-')?;
    if first.is_empty() {
        return Some(suffix(saturating_digits(last)?, size));
    }
    let start = saturating_digits(first)?;
    let last = match last {
        "" => None,
        l => Some(saturating_digits(l)?),
    };
    if last.is_some_and(|l| l < start) {
        return None; // reversed: invalid, so ignored
    }
    if start >= size {
        return Some(RangeAnswer::Unsatisfiable);
    }
    let end = last.map_or(size, |l| l.saturating_add(1).min(size));
    Some(RangeAnswer::Partial { start, end })
}

/// The last `len` bytes of a `size`-byte object.
fn suffix(len: u64, size: u64) -> RangeAnswer {
    match (len, size) {
        (0, _) => RangeAnswer::Unsatisfiable,
        (_, 0) => RangeAnswer::Whole,
        _ => RangeAnswer::Partial {
            start: size.saturating_sub(len),
            end: size,
        },
    }
}

/// Reads a `Content-Range` header value of a 206 answer (RFC 9110 §14.4):
/// `bytes first-last/size` or `bytes first-last/*`, unit in any case.
///
/// `None` for anything else, including the 416 form `bytes */size`, `last < first`,
/// `last >= size`, and numbers that do not fit a `u64` (a client cannot check a range it
/// cannot represent).
pub fn parse_content_range(value: &str) -> Option<ContentRange> {
    let (unit, resp) = trim_ows(value).split_once(' ')?;
    if !unit.eq_ignore_ascii_case("bytes") {
        return None;
    }
    let (range, size) = resp.split_once('/')?;
    let (first, last) = range.split_once('-')?;
    let start = exact_digits(first)?;
    let end_inclusive = exact_digits(last)?;
    let size = match size {
        "*" => None,
        s => Some(exact_digits(s)?),
    };
    let fits = size.is_none_or(|s| end_inclusive < s);
    (start <= end_inclusive && fits).then_some(ContentRange {
        start,
        end_inclusive,
        size,
    })
}

/// `s` without leading and trailing optional whitespace (spaces and tabs).
fn trim_ows(s: &str) -> &str {
    s.trim_matches([' ', '\t'])
}

/// `1*DIGIT` as a number, saturating at `u64::MAX`; `None` if empty or not all digits.
fn saturating_digits(s: &str) -> Option<u64> {
    digits(s, |n, d| Some(n.saturating_mul(10).saturating_add(d)))
}

/// `1*DIGIT` as a number; `None` if empty, not all digits, or above `u64::MAX`.
fn exact_digits(s: &str) -> Option<u64> {
    digits(s, |n, d| n.checked_mul(10)?.checked_add(d))
}

/// Folds the ASCII digits of a non-empty `s` with `step`; `None` on any other character.
fn digits(s: &str, step: impl Fn(u64, u64) -> Option<u64>) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    s.bytes().try_fold(0u64, |n, b| {
        b.is_ascii_digit()
            .then(|| step(n, u64::from(b - b'0')))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requested_ranges_before_the_size_is_known() {
        use crate::ByteRange as B;
        assert_eq!(requested_range("bytes=0-9"), Some(B::Bounded(0..10)));
        assert_eq!(requested_range("BYTES = 5-"), None);
        assert_eq!(requested_range(" bytes=5-"), Some(B::From(5)));
        assert_eq!(requested_range("bytes=-8"), Some(B::Suffix(8)));
        for ignored in [
            "bytes=-0",
            "bytes=9-1",
            "bytes=0-1,3-4",
            "items=0-1",
            "bytes=x-1",
            "",
        ] {
            assert_eq!(requested_range(ignored), None, "{ignored}");
        }
        assert_eq!(
            requested_range("bytes=0-99999999999999999999999"),
            Some(B::Bounded(0..u64::MAX))
        );
        // the same answer as parse_range once the size is known
        for h in ["bytes=0-9", "bytes=5-", "bytes=-8", "bytes=3-3"] {
            let r = requested_range(h).unwrap().resolve(20).unwrap();
            assert_eq!(
                parse_range(h, 20),
                RangeAnswer::Partial {
                    start: r.start,
                    end: r.end
                }
            );
        }
    }
    use RangeAnswer::{Partial, Unsatisfiable, Whole};

    fn p(start: u64, end: u64) -> RangeAnswer {
        Partial { start, end }
    }

    #[test]
    fn int_ranges() {
        assert_eq!(parse_range("bytes=0-9", 100), p(0, 10));
        assert_eq!(parse_range("bytes=0-0", 100), p(0, 1));
        assert_eq!(parse_range("bytes=90-", 100), p(90, 100));
        assert_eq!(parse_range("bytes=95-200", 100), p(95, 100));
        assert_eq!(parse_range("bytes=99-99", 100), p(99, 100));
        assert_eq!(parse_range("bytes=5-5", 100), p(5, 6));
    }

    #[test]
    fn suffix_ranges() {
        assert_eq!(parse_range("bytes=-5", 100), p(95, 100));
        assert_eq!(parse_range("bytes=-100", 100), p(0, 100));
        assert_eq!(parse_range("bytes=-500", 100), p(0, 100));
        assert_eq!(parse_range("bytes=-0", 100), Unsatisfiable);
        // an empty object has no byte to send and no Content-Range to describe it
        assert_eq!(parse_range("bytes=-5", 0), Whole);
        assert_eq!(parse_range("bytes=-0", 0), Unsatisfiable);
    }

    #[test]
    fn unsatisfiable() {
        assert_eq!(parse_range("bytes=100-", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=100-200", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=0-", 0), Unsatisfiable);
        assert_eq!(parse_range("bytes=0-0", 0), Unsatisfiable);
    }

    #[test]
    fn ignored_headers_give_the_whole_object() {
        for h in [
            "items=0-1",
            "bytes 0-1",
            "bytes=",
            "bytes=-",
            "bytes=5-1",
            "bytes=0-1,5-6",
            "bytes=0-1, 5-6",
            "bytes=a-1",
            "bytes=0-b",
            "bytes=+1-2",
            "bytes=1-+2",
            "bytes=-+2",
            "bytes=0x1-2",
            "bytes=1 -2",
            "bytes=1--2",
            "bytes==1-2",
            "bytes=1-2-3",
            "bytes = 0-1",
            "=0-1",
            "",
            ",",
            "bytes=,",
            "bytes=١-٢",
        ] {
            assert_eq!(parse_range(h, 100), Whole, "{h:?}");
        }
    }

    #[test]
    fn lenient_where_rfc_9110_allows() {
        // unit names compare case-insensitively; empty list elements are ignored; OWS
        assert_eq!(parse_range("Bytes=0-1", 100), p(0, 2));
        assert_eq!(parse_range("BYTES=0-1", 100), p(0, 2));
        assert_eq!(parse_range("bytes=0-1,", 100), p(0, 2));
        assert_eq!(parse_range("bytes=, 0-1 ,", 100), p(0, 2));
        assert_eq!(parse_range("  bytes=0-1\t", 100), p(0, 2));
    }

    #[test]
    fn huge_numbers_neither_overflow_nor_panic() {
        let max = u64::MAX;
        assert_eq!(parse_range(&format!("bytes=0-{max}"), 100), p(0, 100));
        assert_eq!(parse_range(&format!("bytes={max}-"), 100), Unsatisfiable);
        assert_eq!(
            parse_range(&format!("bytes={max}-{max}"), max),
            Unsatisfiable
        );
        assert_eq!(parse_range(&format!("bytes=0-{max}"), max), p(0, max));
        assert_eq!(parse_range(&format!("bytes=-{max}"), max), p(0, max));
        let big = "123456789012345678901234567890";
        assert_eq!(parse_range(&format!("bytes=0-{big}"), 100), p(0, 100));
        assert_eq!(parse_range(&format!("bytes={big}-"), 100), Unsatisfiable);
        assert_eq!(parse_range(&format!("bytes=-{big}"), 100), p(0, 100));
        assert_eq!(
            parse_range(&format!("bytes={big}-{big}"), max),
            Unsatisfiable
        );
        // reversed even when both saturate differently
        assert_eq!(parse_range(&format!("bytes={big}-5"), 100), Whole);
        let long = "9".repeat(100_000);
        assert_eq!(parse_range(&format!("bytes=1-{long}"), 100), p(1, 100));
    }

    /// Every short string over a range-ish alphabet: no panic, and the answer's invariants.
    #[test]
    fn invariants_on_all_short_inputs() {
        let alphabet = ['0', '1', '9', '-', ',', '=', ' ', '/', '*', 'x'];
        let mut tails = vec![String::new()];
        for _ in 0..5 {
            let mut next = Vec::new();
            for t in &tails {
                for c in alphabet {
                    next.push(format!("{t}{c}"));
                }
            }
            for t in &next {
                for size in [0, 1, 10, 100, u64::MAX] {
                    if let Partial { start, end } = parse_range(&format!("bytes={t}"), size) {
                        assert!(start < end && end <= size, "{t:?} {size}");
                    }
                }
                if let Some(c) = parse_content_range(&format!("bytes {t}")) {
                    assert!(c.start <= c.end_inclusive, "{t:?}");
                    assert!(c.size.is_none_or(|s| c.end_inclusive < s), "{t:?}");
                }
            }
            tails = next;
        }
    }

    #[test]
    fn content_ranges() {
        let cr = |start, end_inclusive, size| {
            Some(ContentRange {
                start,
                end_inclusive,
                size,
            })
        };
        assert_eq!(parse_content_range("bytes 0-9/100"), cr(0, 9, Some(100)));
        assert_eq!(
            parse_content_range("bytes 99-99/100"),
            cr(99, 99, Some(100))
        );
        assert_eq!(parse_content_range("bytes 0-9/*"), cr(0, 9, None));
        assert_eq!(parse_content_range("Bytes 5-5/6"), cr(5, 5, Some(6)));
        assert_eq!(parse_content_range(" bytes 0-0/1 "), cr(0, 0, Some(1)));
        let max = u64::MAX;
        assert_eq!(
            parse_content_range(&format!("bytes 0-{}/{max}", max - 1)),
            cr(0, max - 1, Some(max))
        );
    }

    #[test]
    fn invalid_content_ranges() {
        let max = u64::MAX;
        let big = "123456789012345678901234567890";
        for v in [
            "",
            "bytes",
            "bytes */100",
            "bytes 0-9",
            "bytes 0-9/",
            "bytes 9-0/100",
            "bytes 0-100/100",
            "bytes 0-9/5",
            "bytes=0-9/100",
            "items 0-9/100",
            "bytes  0-9/100",
            "bytes 0 - 9/100",
            "bytes -9/100",
            "bytes 0-/100",
            "bytes +0-9/100",
            "bytes 0-+9/100",
            "bytes 0-9/+100",
            "bytes 0-9/100/100",
            "bytes 0-9-10/100",
            &format!("bytes 0-{big}/*"),
            &format!("bytes 0-9/{big}"),
            &format!("bytes {big}-{big}/{big}"),
            &format!("bytes 0-{max}/{max}"),
        ] {
            assert_eq!(parse_content_range(v), None, "{v:?}");
        }
    }
}
