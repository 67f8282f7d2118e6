//! An R2 bucket binding as a [`Storage`]: `r2://<BINDING>/path/to/table`. Ranged gets map
//! to R2 ranges (a suffix read also returns the object's size: one call), listing pages
//! with the cursor.

use bytes::Bytes;
use std::sync::Arc;

use deltalens_storage::{
    BudgetMeter, ByteRange, ListPages, ObjectMeta, Result, Storage, StorageError,
};
use worker::{Bucket, Range};

pub struct R2Storage {
    bucket: Bucket,
    binding: String,
    /// Key prefix of the table root, ending in `/` (or empty).
    prefix: String,
    /// The request budget each listing page after the first is charged on before it is
    /// fetched.
    meter: Option<Arc<BudgetMeter>>,
}

impl std::fmt::Debug for R2Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "R2Storage(r2://{}/{})", self.binding, self.prefix)
    }
}

impl R2Storage {
    pub fn new(bucket: Bucket, binding: &str, path: &str) -> Self {
        R2Storage {
            bucket,
            binding: binding.to_string(),
            prefix: if path.is_empty() {
                String::new()
            } else {
                format!("{path}/")
            },
            meter: None,
        }
    }

    /// Charge each listing page after the first on `meter` (the
    /// [`BudgetMeter::backend_meter`] of the budget above) before fetching it.
    pub fn with_meter(mut self, meter: Arc<BudgetMeter>) -> Self {
        self.meter = Some(meter);
        self
    }

    fn key(&self, path: &str) -> String {
        format!("{}{path}", self.prefix)
    }

    fn fail(&self, operation: &'static str, path: &str, e: worker::Error) -> StorageError {
        StorageError::Backend {
            path: format!("r2://{}/{}", self.binding, self.key(path)),
            operation,
            message: e.to_string(),
        }
    }

    fn meta(&self, o: &worker::Object) -> ObjectMeta {
        let key = o.key();
        ObjectMeta {
            path: key.strip_prefix(&self.prefix).unwrap_or(&key).to_string(),
            size: o.size(),
            last_modified_ms: Some(o.uploaded().as_millis() as i64),
        }
    }

    async fn read(&self, path: &str, range: Option<Range>) -> Result<(Bytes, u64)> {
        let mut get = self.bucket.get(self.key(path));
        if let Some(r) = range {
            get = get.range(r);
        }
        let Some(object) = get.execute().await.map_err(|e| self.fail("get", path, e))? else {
            return Err(StorageError::NotFound {
                path: path.to_string(),
            });
        };
        let size = object.size();
        let body = match object.body() {
            Some(b) => b.bytes().await.map_err(|e| self.fail("get", path, e))?,
            None => Vec::new(),
        };
        Ok((Bytes::from(body), size))
    }
}

#[async_trait::async_trait(?Send)]
impl Storage for R2Storage {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        let mut out = Vec::new();
        let mut cursor: Option<String> = None;
        let mut pages = ListPages::new(prefix, self.meter.as_ref());
        loop {
            pages.before_page(cursor.as_deref())?;
            let mut l = self.bucket.list().prefix(self.key(prefix));
            if let Some(s) = start_after {
                l = l.start_after(self.key(s));
            }
            if let Some(c) = cursor.take() {
                l = l.cursor(c);
            }
            let page = l
                .execute()
                .await
                .map_err(|e| self.fail("list", prefix, e))?;
            out.extend(page.objects().iter().map(|o| self.meta(o)));
            match page.cursor() {
                Some(c) if page.truncated() => cursor = Some(c),
                _ => break,
            }
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(out)
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        let r = match &range {
            ByteRange::Bounded(r) if r.end <= r.start => return Ok(Bytes::new()),
            ByteRange::Bounded(r) => Range::OffsetWithLength {
                offset: r.start,
                length: r.end - r.start,
            },
            ByteRange::From(o) => Range::OffsetToEnd { offset: *o },
            ByteRange::Suffix(n) => Range::Suffix { suffix: *n },
        };
        let (data, size) = self.read(path, Some(r)).await?;
        // R2 clamps ranges past the end; the trait's contract is an error when the start
        // is beyond it
        if range.resolve(size).is_none() {
            return Err(StorageError::InvalidRange {
                path: path.to_string(),
                range,
                size,
            });
        }
        Ok(data)
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        Ok(self.read(path, None).await?.0)
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        match self
            .bucket
            .head(self.key(path))
            .await
            .map_err(|e| self.fail("head", path, e))?
        {
            Some(o) => Ok(self.meta(&o)),
            None => Err(StorageError::NotFound {
                path: path.to_string(),
            }),
        }
    }

    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        self.read(path, Some(Range::Suffix { suffix: n })).await
    }
}
