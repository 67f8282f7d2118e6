//! `table.batches({…})`: a scan's rows one record batch at a time, for an async iterator
//! in JavaScript. The scan advances only while `next()` is awaited (it is polled there,
//! nowhere else), so a reader that stops reading stops the scan, and memory holds what
//! one step of the scan decoded, not the result.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll};

use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use deltalens_api::execute::{Limits, RowSink, execute_streaming};
use deltalens_api::sql::Query;
use deltalens_api::{ApiError, Format};
use js_sys::Uint8Array;
use wasm_bindgen::prelude::*;

use crate::error;

/// Batches handed over by the scan and not yet read.
#[derive(Default)]
struct Queue {
    schema: Option<SchemaRef>,
    batches: VecDeque<RecordBatch>,
}

/// The scan's sink: into the queue, in batches of at most `size` rows.
struct Push {
    queue: Rc<RefCell<Queue>>,
    size: Option<usize>,
}

impl RowSink for Push {
    fn schema(&mut self, schema: SchemaRef) -> bool {
        self.queue.borrow_mut().schema = Some(schema);
        true
    }
    fn batch(&mut self, batch: RecordBatch) -> bool {
        let mut q = self.queue.borrow_mut();
        match self.size {
            Some(size) if batch.num_rows() > size => {
                let mut at = 0;
                while at < batch.num_rows() {
                    let n = size.min(batch.num_rows() - at);
                    q.batches.push_back(batch.slice(at, n));
                    at += n;
                }
            }
            _ => q.batches.push_back(batch),
        }
        true
    }
}

type Scan = Pin<Box<dyn Future<Output = Result<u64, ApiError>>>>;

/// Record batches of a scan, each as Arrow IPC stream bytes (a schema and one batch:
/// `tableFromIPC(bytes)` reads it), read with `next()` until it gives `undefined`.
#[wasm_bindgen]
pub struct Batches {
    queue: Rc<RefCell<Queue>>,
    scan: Rc<RefCell<Option<Scan>>>,
}

impl Batches {
    /// The batches of `query` on `table`; nothing is read until `next()`.
    pub(crate) fn new(
        query: Query,
        table: deltalens_core::Table,
        limits: Limits,
        batch_size: Option<usize>,
    ) -> Batches {
        let queue = Rc::new(RefCell::new(Queue::default()));
        let mut sink = Push {
            queue: queue.clone(),
            size: batch_size,
        };
        let scan: Scan =
            Box::pin(async move { execute_streaming(&query, &table, limits, &mut sink).await });
        Batches {
            queue,
            scan: Rc::new(RefCell::new(Some(scan))),
        }
    }
}

/// Polls the scan until a batch is queued or the scan ends.
struct Step {
    queue: Rc<RefCell<Queue>>,
    scan: Rc<RefCell<Option<Scan>>>,
}

impl Future for Step {
    type Output = Result<(), ApiError>;
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut slot = self.scan.borrow_mut();
        let Some(scan) = slot.as_mut() else {
            return Poll::Ready(Ok(()));
        };
        match scan.as_mut().poll(cx) {
            Poll::Ready(done) => {
                *slot = None;
                Poll::Ready(done.map(|_| ()))
            }
            Poll::Pending if !self.queue.borrow().batches.is_empty() => Poll::Ready(Ok(())),
            Poll::Pending => Poll::Pending,
        }
    }
}

#[wasm_bindgen]
impl Batches {
    /// The next batch as Arrow IPC stream bytes, or `undefined` after the last.
    pub async fn next(&self) -> Result<JsValue, JsValue> {
        loop {
            let next = {
                let mut q = self.queue.borrow_mut();
                q.batches.pop_front().map(|b| (q.schema.clone(), b))
            };
            if let Some((schema, batch)) = next {
                let schema = schema.unwrap_or_else(|| batch.schema());
                let bytes = deltalens_present::rows::encode(Format::Arrow, &schema, &[batch])
                    .map_err(|e| error::js_error("encode_failed", &e.to_string()))?;
                return Ok(Uint8Array::from(bytes.as_slice()).into());
            }
            if self.scan.borrow().is_none() {
                return Ok(JsValue::UNDEFINED);
            }
            Step {
                queue: self.queue.clone(),
                scan: self.scan.clone(),
            }
            .await
            .map_err(|e| error::api(&e))?;
        }
    }

    /// Stop the scan (what `break` in a `for await` loop calls through the wrapper).
    pub fn stop(&self) {
        self.scan.borrow_mut().take();
        self.queue.borrow_mut().batches.clear();
    }
}
