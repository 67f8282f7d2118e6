// deltalens patch 23: a ceiling on the decompressed page bytes one reader holds at once,
// across all its columns (see vendor/README.md).

//! A ceiling on the bytes of decompressed pages (and decoded dictionaries) that the
//! column readers of one reader hold at the same time.
//!
//! Each column of a row group keeps its current page while a batch is decoded: a page is
//! bounded by [`crate::file::serialized_reader::max_uncompressed_page_size`], but a page of
//! zeros claiming 256 MiB compresses to a few kilobytes, so fifty such columns in a small
//! file would hold gigabytes. Within [`within`], every page is charged to a [`PageLedger`]
//! before it is decompressed (its claimed size) and released when its buffer is dropped;
//! a dictionary's decoded copy is charged while its column reader keeps it. A page that
//! would pass the ledger's ceiling is an error that starts with [`PAGES_OVER_BUDGET`].

use std::cell::RefCell;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use crate::errors::{ParquetError, Result};

/// The text an error over a [`PageLedger`]'s ceiling starts with, followed by
/// `<bytes that would be held> > <ceiling>`.
pub const PAGES_OVER_BUDGET: &str = "the decompressed pages held at once would pass the limit: ";

/// The page bytes one reader holds, and its ceiling.
#[derive(Debug)]
pub struct PageLedger {
    held: AtomicUsize,
    max: usize,
}

impl PageLedger {
    /// A ledger of nothing held, refusing what would pass `max` bytes.
    pub fn new(max: usize) -> Arc<Self> {
        Arc::new(Self {
            held: AtomicUsize::new(0),
            max,
        })
    }

    /// The bytes held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Relaxed)
    }

    fn take(self: &Arc<Self>, bytes: usize) -> Result<Lease> {
        let mut held = self.held.load(Ordering::Relaxed);
        loop {
            let after = held.saturating_add(bytes);
            if after > self.max {
                return Err(ParquetError::General(format!(
                    "{PAGES_OVER_BUDGET}{after} > {}",
                    self.max
                )));
            }
            match self.held.compare_exchange_weak(
                held,
                after,
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(Lease(Some((self.clone(), bytes)))),
                Err(now) => held = now,
            }
        }
    }
}

thread_local! {
    /// The ledger pages read on this thread are charged to (`None`: no ceiling).
    static CURRENT: RefCell<Option<Arc<PageLedger>>> = const { RefCell::new(None) };
}

/// Restores the enclosing ledger (also when `step` unwinds).
struct Restore(Option<Arc<PageLedger>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let outer = self.0.take();
        CURRENT.with(|c| *c.borrow_mut() = outer);
    }
}

/// Runs `step` with every page decompressed on this thread charged to `ledger` (decoding
/// is synchronous: nothing else runs on it meanwhile). The charges outlive `step`: they
/// are released as the pages are dropped.
pub fn within<T>(ledger: &Arc<PageLedger>, step: impl FnOnce() -> T) -> T {
    let _restore = Restore(CURRENT.with(|c| c.borrow_mut().replace(ledger.clone())));
    step()
}

/// Bytes charged to a ledger until this is dropped (nothing outside [`within`]).
#[derive(Debug, Default)]
pub(crate) struct Lease(Option<(Arc<PageLedger>, usize)>);

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some((ledger, bytes)) = self.0.take() {
            ledger.held.fetch_sub(bytes, Ordering::Relaxed);
        }
    }
}

/// Charges `bytes` to the current ledger, before they are allocated: an error, and nothing
/// charged, when they would pass its ceiling.
pub(crate) fn lease(bytes: usize) -> Result<Lease> {
    match CURRENT.with(|c| c.borrow().clone()) {
        Some(ledger) => ledger.take(bytes),
        None => Ok(Lease::default()),
    }
}

/// A decompressed page's buffer, charged to a ledger while it lives.
pub(crate) struct LeasedBuffer {
    pub(crate) data: Vec<u8>,
    pub(crate) _lease: Lease,
}

impl AsRef<[u8]> for LeasedBuffer {
    fn as_ref(&self) -> &[u8] {
        &self.data
    }
}

