//! The storage seam of deltalens.
//!
//! The Delta core reaches a table's files only through [`Storage`]: a small async
//! trait with four operations (list, ranged get, whole get, head). Paths are
//! relative to the table root and use `/` as separator (`_delta_log/00000000000000000000.json`).
//!
//! The trait's futures are `Send` on native targets and `?Send` on wasm32, where
//! browser futures cannot cross threads.
//!
//! This crate also holds the backends and decorators that need no runtime, shared by
//! native and wasm32 builds: [`MemoryStorage`] for tests, [`CountingStorage`] (every
//! request and the bytes it returned), [`CachingStorage`] (immutable log and data bytes
//! for the session, memory-bounded) and [`RetryStorage`] (backoff on transient errors,
//! with the caller's timer).

#![warn(missing_docs, unreachable_pub)]

mod budget;
mod caching;
mod counting;
mod error;
pub mod http_range;
mod list_pages;
mod memory;
pub mod relay;
mod retry;
pub mod table_url;

use std::fmt::Debug;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

pub use budget::{BudgetKind, BudgetMeter, BudgetStorage, Budgets};
pub use caching::{CachingStorage, SharedCache};
pub use counting::{Clock, CountingStorage, RequestKind, RequestRecord, RequestStats, round_trips};
pub use error::StorageError;
pub use list_pages::{ListPages, MAX_LIST_PAGES};
pub use memory::MemoryStorage;
pub use retry::{MaybeSendFuture, RetryPolicy, RetryStorage, is_transient};
pub use table_url::{Store, TableUrl, UrlError};

/// Result type of storage operations.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// One object found by [`Storage::list`] or [`Storage::head`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// Path relative to the table root, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
    /// Last modification time, milliseconds since the Unix epoch, when the store reports one.
    pub last_modified_ms: Option<i64>,
}

/// The byte range of a ranged get.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ByteRange {
    /// Bytes `start..end` (end exclusive).
    Bounded(Range<u64>),
    /// Everything from this offset to the end.
    From(u64),
    /// The last `n` bytes (the whole object when it is shorter).
    Suffix(u64),
}

impl ByteRange {
    /// Resolve to absolute offsets for an object of `size` bytes, or `None` if the range
    /// starts beyond the end of the object.
    pub fn resolve(&self, size: u64) -> Option<Range<u64>> {
        match self {
            ByteRange::Bounded(r) if r.start <= r.end && r.start <= size => {
                Some(r.start..r.end.min(size))
            }
            ByteRange::Bounded(_) => None,
            ByteRange::From(start) if *start <= size => Some(*start..size),
            ByteRange::From(_) => None,
            ByteRange::Suffix(n) => Some(size.saturating_sub(*n)..size),
        }
    }
}

impl ByteRange {
    /// This range of `whole`, the complete object at `path`.
    pub fn slice(&self, path: &str, whole: &Bytes) -> Result<Bytes> {
        let size = whole.len() as u64;
        let r = self
            .resolve(size)
            .ok_or_else(|| StorageError::InvalidRange {
                path: path.to_string(),
                range: self.clone(),
                size,
            })?;
        Ok(whole.slice(r.start as usize..r.end as usize))
    }
}

impl ByteRange {
    /// Check a 206 answer to this range: its `Content-Range` header (when the store
    /// exposes it) must name exactly the bytes asked for, and the body must be as long as
    /// that range. Returns the object's size when the header gave it. A mismatch (a
    /// proxy or server answering another range) is [`StorageError::InvalidResponse`]:
    /// such bytes are never used as data.
    pub fn check_partial(
        &self,
        path: &str,
        content_range: Option<&str>,
        body_len: u64,
    ) -> Result<Option<u64>> {
        let bad = |message: String| StorageError::InvalidResponse {
            path: path.to_string(),
            operation: "get",
            message,
        };
        let Some(header) = content_range else {
            // not exposed (CORS): at least the length must fit the request
            let fits = match self {
                ByteRange::Bounded(r) => body_len <= r.end.saturating_sub(r.start),
                ByteRange::Suffix(n) => body_len <= *n,
                ByteRange::From(_) => true,
            };
            return match fits {
                true => Ok(None),
                false => Err(bad(format!("{body_len} bytes came back for {self}"))),
            };
        };
        let cr = http_range::parse_content_range(header)
            .ok_or_else(|| bad(format!("Content-Range {header:?} cannot be read")))?;
        let Some(sent) = (cr.end_inclusive - cr.start).checked_add(1) else {
            return Err(bad(format!(
                "Content-Range {header:?} spans more than 2^64 bytes"
            )));
        };
        if sent != body_len {
            return Err(bad(format!(
                "Content-Range {header:?} announces {sent} bytes, the body has {body_len}"
            )));
        }
        let expected = match cr.size {
            Some(size) => self.resolve(size),
            None => match self {
                ByteRange::Bounded(r) => Some(
                    r.start
                        ..r.start
                            .saturating_add(sent.min(r.end.saturating_sub(r.start))),
                ),
                ByteRange::From(s) => Some(*s..s.saturating_add(sent)),
                ByteRange::Suffix(_) => None,
            },
        };
        match expected {
            Some(r) if r.start == cr.start && r.end.saturating_sub(r.start) == sent => Ok(cr.size),
            // a suffix without the size: only the length can be checked
            None if cr.size.is_none() && matches!(self, ByteRange::Suffix(n) if sent <= *n) => {
                Ok(None)
            }
            _ => Err(bad(format!(
                "asked for {self}, the answer is Content-Range {header:?}"
            ))),
        }
    }
}

impl std::fmt::Display for ByteRange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ByteRange::Bounded(r) => write!(f, "bytes={}-{}", r.start, r.end.saturating_sub(1)),
            ByteRange::From(s) => write!(f, "bytes={s}-"),
            ByteRange::Suffix(n) => write!(f, "bytes=-{n}"),
        }
    }
}

/// Async access to the files of one table.
///
/// Implementations must return [`Storage::list`] results sorted by path
/// (lexicographic byte order), as Delta's zero-padded file names rely on it.
#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
pub trait Storage: Debug + MaybeSendSync {
    /// Objects whose path starts with `prefix` and sorts strictly after `start_after`
    /// (when given), in lexicographic order. Listing is recursive.
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>>;

    /// The bytes of `range` of the object at `path`.
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes>;

    /// The whole object at `path`.
    async fn get(&self, path: &str) -> Result<Bytes>;

    /// Size and modification time of the object at `path`.
    async fn head(&self, path: &str) -> Result<ObjectMeta>;

    /// The last `n` bytes of the object at `path` (all of it when shorter) and the object's
    /// size. Backends that learn the size from the ranged response (`Content-Range`) answer
    /// in one request; the default asks `head` first.
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        let meta = self.head(path).await?;
        let data = self.get_range(path, ByteRange::Suffix(n)).await?;
        Ok((data, meta.size))
    }

    /// Whether [`Storage::list`] can work here at all (false for plain HTTP hosting, where
    /// callers find files by name instead of trying a listing first).
    fn can_list(&self) -> bool {
        true
    }

    /// True when every request counts against a budget (an edge worker's subrequests):
    /// callers then trade round trips for fewer requests (probing a few commit names at a
    /// time instead of a large parallel batch).
    fn requests_are_budgeted(&self) -> bool {
        false
    }
}

/// `Send + Sync` on native targets; nothing on wasm32.
#[cfg(not(target_arch = "wasm32"))]
pub trait MaybeSendSync: Send + Sync {}
#[cfg(not(target_arch = "wasm32"))]
impl<T: Send + Sync + ?Sized> MaybeSendSync for T {}
/// `Send + Sync` on native targets; nothing on wasm32.
#[cfg(target_arch = "wasm32")]
pub trait MaybeSendSync {}
#[cfg(target_arch = "wasm32")]
impl<T: ?Sized> MaybeSendSync for T {}

/// A shared, type-erased storage handle.
pub type DynStorage = Arc<dyn Storage>;

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl<S: Storage + ?Sized> Storage for Arc<S> {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        (**self).list(prefix, start_after).await
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        (**self).get_range(path, range).await
    }
    async fn get(&self, path: &str) -> Result<Bytes> {
        (**self).get(path).await
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        (**self).head(path).await
    }
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        (**self).get_tail(path, n).await
    }
    fn can_list(&self) -> bool {
        (**self).can_list()
    }
    fn requests_are_budgeted(&self) -> bool {
        (**self).requests_are_budgeted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn byte_range_resolution() {
        assert_eq!(ByteRange::Bounded(2..5).resolve(10), Some(2..5));
        assert_eq!(ByteRange::Bounded(8..50).resolve(10), Some(8..10));
        assert_eq!(ByteRange::Bounded(11..12).resolve(10), None);
        assert_eq!(ByteRange::From(4).resolve(10), Some(4..10));
        assert_eq!(ByteRange::Suffix(3).resolve(10), Some(7..10));
        assert_eq!(ByteRange::Suffix(30).resolve(10), Some(0..10));
        assert_eq!(ByteRange::Suffix(3).to_string(), "bytes=-3");
        assert_eq!(ByteRange::Bounded(0..10).to_string(), "bytes=0-9");
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn partial_answers_are_checked() {
        let b = ByteRange::Bounded(10..20);
        assert_eq!(
            b.check_partial("p", Some("bytes 10-19/100"), 10).unwrap(),
            Some(100)
        );
        assert_eq!(
            b.check_partial("p", Some("bytes 10-14/15"), 5).unwrap(),
            Some(15)
        );
        assert_eq!(
            b.check_partial("p", Some("bytes 10-19/*"), 10).unwrap(),
            None
        );
        assert_eq!(b.check_partial("p", None, 10).unwrap(), None);
        // another range, a lying length, garbage, a body longer than asked
        for (cr, len) in [
            (Some("bytes 0-9/100"), 10),
            (Some("bytes 11-20/100"), 10),
            (Some("bytes 10-19/100"), 9),
            (Some("bytes 10-29/100"), 20),
            (Some("bytes 10-19/15"), 10),
            (Some("items 10-19/100"), 10),
            (Some("bytes */100"), 10),
            (None, 11),
        ] {
            let e = b.check_partial("p", cr, len).unwrap_err();
            assert!(
                matches!(e, StorageError::InvalidResponse { .. }),
                "{cr:?} {len}"
            );
        }
        let s = ByteRange::Suffix(8);
        assert_eq!(
            s.check_partial("p", Some("bytes 92-99/100"), 8).unwrap(),
            Some(100)
        );
        assert_eq!(
            s.check_partial("p", Some("bytes 0-4/5"), 5).unwrap(),
            Some(5)
        );
        assert!(s.check_partial("p", Some("bytes 0-7/100"), 8).is_err());
        assert!(s.check_partial("p", None, 9).is_err());
        // found by fuzzing: the whole u64 range overflowed the length
        assert!(
            ByteRange::From(0)
                .check_partial("p", Some("bytes 0-18446744073709551615/*"), 16)
                .is_err()
        );
        let f = ByteRange::From(90);
        assert_eq!(
            f.check_partial("p", Some("bytes 90-99/100"), 10).unwrap(),
            Some(100)
        );
        assert!(f.check_partial("p", Some("bytes 80-99/100"), 20).is_err());
    }
}

// unit tests also run in headless Chromium (scripts/browser-test)
#[cfg(all(test, target_arch = "wasm32"))]
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);
