//! What a relay server (`deltalens serve`) needs beyond [`Storage`]: an object's metadata
//! with its ETag, a ranged read as a stream of chunks (a 250 MB checkpoint is not held in
//! memory to be forwarded), and one bounded page of a listing.

use std::ops::Range;

use bytes::Bytes;
use deltalens_storage::{ByteRange, ObjectMeta, Storage, StorageError};
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::{GetOptions, GetRange, ObjectStoreExt};

use crate::{Kind, ObjectStoreStorage, again, map_err};

/// An object as a relay answers for it.
pub struct ObjectRead {
    /// The object's size.
    pub size: u64,
    /// The store's ETag, when it gives one.
    pub etag: Option<String>,
    /// Last modification, milliseconds since the epoch.
    pub last_modified_ms: Option<i64>,
    /// The bytes of the object the body holds.
    pub range: Range<u64>,
    /// The bytes, in chunks (empty for a HEAD).
    pub body: BoxStream<'static, Result<Bytes, StorageError>>,
}

impl std::fmt::Debug for ObjectRead {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectRead")
            .field("size", &self.size)
            .field("etag", &self.etag)
            .field("range", &self.range)
            .finish()
    }
}

/// Why a relayed read failed: the range lies beyond the object (HTTP 416, with its size),
/// or the store's error.
#[derive(Debug)]
pub enum ReadError {
    /// The range starts at or beyond the end of an object of this size.
    Unsatisfiable(u64),
    /// The store's answer.
    Storage(StorageError),
}

impl From<StorageError> for ReadError {
    fn from(e: StorageError) -> Self {
        ReadError::Storage(e)
    }
}

/// Whether `r` starts at or after the end of an object of `size` bytes (HTTP's 416).
fn beyond(r: &ByteRange, size: u64) -> bool {
    match r {
        ByteRange::Bounded(r) => r.start >= size,
        ByteRange::From(o) => *o >= size,
        ByteRange::Suffix(_) => false,
    }
}

fn empty() -> BoxStream<'static, Result<Bytes, StorageError>> {
    futures::stream::empty().boxed()
}

impl ObjectStoreStorage {
    /// The metadata of `path` (a relayed HEAD).
    pub async fn head_object(&self, path: &str) -> Result<ObjectRead, StorageError> {
        let full = self.full(path)?;
        let m = again(|| self.store.head(&full))
            .await
            .map_err(|e| map_err(path, "head", e))?;
        Ok(ObjectRead {
            size: m.size,
            etag: m.e_tag.clone(),
            last_modified_ms: Some(m.last_modified.timestamp_millis()),
            range: 0..m.size,
            body: empty(),
        })
    }

    /// `range` of `path` (the whole object for `None`) as a stream.
    pub async fn read_object(
        &self,
        path: &str,
        range: Option<ByteRange>,
    ) -> Result<ObjectRead, ReadError> {
        if self.kind == Kind::NoListing {
            return self.read_buffered(path, range).await;
        }
        let range = match (range, self.kind) {
            // Azure has no suffix ranges: learn the size first
            (Some(ByteRange::Suffix(n)), Kind::NoSuffixRanges) => {
                let size = self.head_object(path).await?.size;
                Some(ByteRange::Bounded(size.saturating_sub(n)..size))
            }
            (r, _) => r,
        };
        let get_range = match &range {
            None => None,
            Some(ByteRange::Bounded(r)) if r.is_empty() => {
                return Err(ReadError::Unsatisfiable(self.head_object(path).await?.size));
            }
            Some(ByteRange::Bounded(r)) => Some(GetRange::Bounded(r.clone())),
            Some(ByteRange::From(o)) => Some(GetRange::Offset(*o)),
            Some(ByteRange::Suffix(n)) => Some(GetRange::Suffix(*n)),
        };
        let full = self.full(path)?;
        let got = again(|| {
            let opts = GetOptions {
                range: get_range.clone(),
                ..Default::default()
            };
            self.store.get_opts(&full, opts)
        })
        .await;
        let res = match got {
            Ok(res) => res,
            Err(e) => {
                let e = map_err(path, "get", e);
                // a range beyond the end is the client's mistake (416), not the store's
                if let Some(r) = &range
                    && !e.is_not_found()
                    && let Ok(head) = self.head_object(path).await
                    && beyond(r, head.size)
                {
                    return Err(ReadError::Unsatisfiable(head.size));
                }
                return Err(e.into());
            }
        };
        let owned = path.to_string();
        Ok(ObjectRead {
            size: res.meta.size,
            etag: res.meta.e_tag.clone(),
            last_modified_ms: Some(res.meta.last_modified.timestamp_millis()),
            range: res.range.clone(),
            body: res
                .into_stream()
                .map_err(move |e| map_err(&owned, "get", e))
                .boxed(),
        })
    }

    /// Plain HTTP(S) hosting: read through [`Storage`], which copes with servers that
    /// ignore `Range`, and send the bytes as one chunk.
    async fn read_buffered(
        &self,
        path: &str,
        range: Option<ByteRange>,
    ) -> Result<ObjectRead, ReadError> {
        let (data, size) = match range.clone() {
            None => {
                let d = self.get(path).await?;
                let n = d.len() as u64;
                (d, n)
            }
            Some(ByteRange::Suffix(n)) => self.get_tail(path, n).await?,
            Some(r) => {
                let size = self.head(path).await?.size;
                if beyond(&r, size) {
                    return Err(ReadError::Unsatisfiable(size));
                }
                (self.get_range(path, r).await?, size)
            }
        };
        let start = size - data.len() as u64;
        let start = match &range {
            Some(ByteRange::Bounded(r)) => r.start,
            Some(ByteRange::From(o)) => *o,
            _ => start,
        };
        Ok(ObjectRead {
            size,
            etag: None,
            last_modified_ms: None,
            range: start..start + data.len() as u64,
            body: futures::stream::once(async move { Ok(data) }).boxed(),
        })
    }

    /// At most `max` objects under `prefix` after `start_after`, in path order, and
    /// whether more follow: the listing stops once it has `max + 1`.
    pub async fn list_page(
        &self,
        prefix: &str,
        start_after: Option<&str>,
        max: usize,
    ) -> Result<Vec<ObjectMeta>, StorageError> {
        if self.kind == Kind::NoListing {
            return Err(StorageError::ListingUnsupported {
                path: prefix.to_string(),
                message: "plain HTTP(S) hosting has no listing".into(),
            });
        }
        // the store lists a "directory"; the prefix may end inside a name
        let dir_part = match prefix.rfind('/') {
            Some(i) => &prefix[..i],
            None => "",
        };
        let dir = self.full(dir_part)?;
        let after = start_after.map(|a| self.full(a)).transpose()?;
        let stream = match &after {
            Some(after) => self.store.list_with_offset(Some(&dir), after),
            None => self.store.list(Some(&dir)),
        };
        let matching = stream
            .map_err(|e| map_err(prefix, "list", e))
            .map_ok(|m| self.meta(m))
            .try_filter(|m| {
                let keep =
                    m.path.starts_with(prefix) && start_after.is_none_or(|a| m.path.as_str() > a);
                futures::future::ready(keep)
            });
        // object stores list in key order, so the first `max + 1` are the page; a local
        // directory lists in any order, so all of it is read and sorted
        let mut found: Vec<ObjectMeta> = if self.kind == Kind::Local {
            matching.try_collect().await?
        } else {
            matching.take(max.saturating_add(1)).try_collect().await?
        };
        found.sort_by(|a, b| a.path.cmp(&b.path));
        found.truncate(max.saturating_add(1));
        Ok(found)
    }
}
