//! Bytes fetched while the log segment was being resolved — checkpoint tails read to
//! confirm `_last_checkpoint`, commit bodies read while probing for the latest version —
//! handed to replay so that no byte is fetched twice and opening a table costs as few
//! round trips as possible.

use std::collections::BTreeMap;

use bytes::Bytes;
use deltalens_storage::{ByteRange, ObjectMeta, Result, Storage};

#[derive(Debug, Clone)]
struct Piece {
    /// The object's size.
    size: u64,
    /// Where `data` starts in the object (0 for a whole object).
    start: u64,
    data: Bytes,
}

/// Whole objects and object tails already in memory, by path, and other ranges of them.
#[derive(Debug, Clone, Default)]
pub struct Prefetched {
    pieces: BTreeMap<String, Piece>,
    /// Ranges of objects besides their piece: (start, bytes).
    ranges: BTreeMap<String, Vec<(u64, Bytes)>>,
}

impl Prefetched {
    /// Keep a whole object.
    pub fn insert_whole(&mut self, path: &str, data: Bytes) {
        let size = data.len() as u64;
        self.pieces.insert(
            path.to_string(),
            Piece {
                size,
                start: 0,
                data,
            },
        );
    }

    /// Keep the last `data.len()` bytes of an object of `size` bytes.
    pub fn insert_tail(&mut self, path: &str, size: u64, data: Bytes) {
        let start = size.saturating_sub(data.len() as u64);
        self.pieces
            .insert(path.to_string(), Piece { size, start, data });
    }

    /// Keep `data`, the bytes of an object from `start` on.
    pub fn insert_range(&mut self, path: &str, start: u64, data: Bytes) {
        self.ranges
            .entry(path.to_string())
            .or_default()
            .push((start, data));
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.pieces.is_empty() && self.ranges.is_empty()
    }

    /// How many objects (whole or tails) are held.
    pub fn len(&self) -> usize {
        self.pieces.len()
    }

    /// Add everything `other` holds.
    pub fn extend(&mut self, other: Prefetched) {
        self.pieces.extend(other.pieces);
        for (path, ranges) in other.ranges {
            self.ranges.entry(path).or_default().extend(ranges);
        }
    }

    fn range(&self, path: &str, range: &ByteRange) -> Option<Bytes> {
        self.in_piece(path, range)
            .or_else(|| self.in_ranges(path, range))
    }

    fn in_piece(&self, path: &str, range: &ByteRange) -> Option<Bytes> {
        let p = self.pieces.get(path)?;
        let r = range.resolve(p.size)?;
        if r.start < p.start {
            return None;
        }
        let (a, b) = ((r.start - p.start) as usize, (r.end - p.start) as usize);
        Some(p.data.slice(a..b))
    }

    fn in_ranges(&self, path: &str, range: &ByteRange) -> Option<Bytes> {
        let ByteRange::Bounded(r) = range else {
            return None;
        };
        self.ranges.get(path)?.iter().find_map(|(start, data)| {
            let end = start.checked_add(data.len() as u64)?;
            (*start <= r.start && r.end <= end && r.start <= r.end)
                .then(|| data.slice((r.start - start) as usize..(r.end - start) as usize))
        })
    }

    fn whole(&self, path: &str) -> Option<Bytes> {
        let p = self.pieces.get(path)?;
        (p.start == 0).then(|| p.data.clone())
    }
}

/// `inner`, answering from `pre` where it can.
#[derive(Debug)]
pub(crate) struct WithPrefetched<'a, S: ?Sized> {
    pub inner: &'a S,
    pub pre: &'a Prefetched,
}

#[cfg_attr(not(target_arch = "wasm32"), async_trait::async_trait)]
#[cfg_attr(target_arch = "wasm32", async_trait::async_trait(?Send))]
impl<S: Storage + ?Sized> Storage for WithPrefetched<'_, S> {
    async fn list(&self, prefix: &str, start_after: Option<&str>) -> Result<Vec<ObjectMeta>> {
        self.inner.list(prefix, start_after).await
    }

    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes> {
        match self.pre.range(path, &range) {
            Some(d) => Ok(d),
            None => self.inner.get_range(path, range).await,
        }
    }

    async fn get(&self, path: &str) -> Result<Bytes> {
        match self.pre.whole(path) {
            Some(d) => Ok(d),
            None => self.inner.get(path).await,
        }
    }

    async fn head(&self, path: &str) -> Result<ObjectMeta> {
        self.inner.head(path).await
    }

    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64)> {
        match self.pre.pieces.get(path) {
            Some(p) if p.size - p.start >= n.min(p.size) => {
                let d = self.pre.range(path, &ByteRange::Suffix(n));
                match d {
                    Some(d) => Ok((d, p.size)),
                    None => self.inner.get_tail(path, n).await,
                }
            }
            _ => self.inner.get_tail(path, n).await,
        }
    }

    fn can_list(&self) -> bool {
        self.inner.can_list()
    }

    fn requests_are_budgeted(&self) -> bool {
        self.inner.requests_are_budgeted()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalens_storage::{CountingStorage, MemoryStorage};
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn serves_what_it_holds_and_forwards_the_rest() {
        let mem = MemoryStorage::new();
        mem.put("a", "0123456789", 0);
        mem.put("b", "abcdef", 0);
        let counted = CountingStorage::new(mem);
        let mut pre = Prefetched::default();
        pre.insert_tail("a", 10, Bytes::from_static(b"6789"));
        pre.insert_whole("b", Bytes::from_static(b"abcdef"));
        let s = WithPrefetched {
            inner: &counted,
            pre: &pre,
        };
        let got = |r| block_on(s.get_range("a", r)).unwrap();
        assert_eq!(got(ByteRange::Suffix(3)), "789");
        assert_eq!(got(ByteRange::Bounded(6..8)), "67");
        assert_eq!(block_on(s.get("b")).unwrap(), "abcdef");
        assert_eq!(block_on(s.get_tail("a", 2)).unwrap().1, 10);
        assert_eq!(counted.stats().requests, 0);
        // outside the tail, or the whole of a file only partly held: fetched
        assert_eq!(got(ByteRange::Bounded(0..2)), "01");
        assert_eq!(block_on(s.get("a")).unwrap(), "0123456789");
        assert_eq!(counted.stats().requests, 2);
        // a range held apart from the tail
        let mut pre = Prefetched::default();
        pre.insert_tail("a", 10, Bytes::from_static(b"89"));
        pre.insert_range("a", 2, Bytes::from_static(b"2345"));
        let s = WithPrefetched {
            inner: &counted,
            pre: &pre,
        };
        let got = |r| block_on(s.get_range("a", r)).unwrap();
        assert_eq!(got(ByteRange::Bounded(3..5)), "34");
        assert_eq!(got(ByteRange::Bounded(2..6)), "2345");
        assert_eq!(got(ByteRange::Bounded(8..10)), "89");
        assert_eq!(counted.stats().requests, 2);
        // partly outside what is held: fetched
        assert_eq!(got(ByteRange::Bounded(1..4)), "123");
        assert_eq!(got(ByteRange::Bounded(5..9)), "5678");
        assert_eq!(counted.stats().requests, 4);
    }
}
