//! A query's rows as Python gets them: [`Rows`], filled batch by batch by the scan on the
//! runtime's threads through a channel of two batches (the scan waits while the reader
//! does not read; dropping the reader stops it). It is an Arrow stream by the PyCapsule
//! interface (`__arrow_c_stream__`, `__arrow_c_schema__`), so pyarrow, polars and DuckDB
//! read it without a copy; `to_arrow()`, `to_polars()` and iteration (pyarrow record
//! batches) raise `DeltaLensError` for an error on the way.

use std::sync::Mutex;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use arrow_array::ffi::FFI_ArrowSchema;
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchIterator, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use deltalens_api::execute::{Limits, RowSink, execute_streaming};
use deltalens_api::sql::Query;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::error;
use crate::runtime::{self, SIGNAL_CHECK};

/// What the scan sends: the schema first, then batches, then the end or the error that
/// ended it (a channel closed without either is an error: the scan died).
enum Msg {
    Schema(SchemaRef),
    Batch(RecordBatch),
    End,
    Error { code: String, message: String },
}

/// The error of a scan that ended without saying so (it panicked).
fn died() -> Msg {
    Msg::Error {
        code: "internal".into(),
        message:
            "the scan stopped without finishing (a bug: please report it with the table's log)"
                .into(),
    }
}

/// Batches the channel holds before the scan waits for the reader.
const CHANNEL_BATCHES: usize = 2;

/// The scan's end of the channel.
struct Sender(SyncSender<Msg>);

impl Sender {
    /// Send, waiting for room (the scan's own thread waits); `false` when the reader is
    /// gone.
    fn send(&self, m: Msg) -> bool {
        self.0.send(m).is_ok()
    }
}

impl RowSink for Sender {
    fn schema(&mut self, schema: SchemaRef) -> bool {
        self.send(Msg::Schema(schema))
    }
    fn batch(&mut self, batch: RecordBatch) -> bool {
        self.send(Msg::Batch(batch))
    }
}

/// The reader's end, shareable with the thread that waits on it while the GIL is
/// released.
struct Chan(Mutex<Receiver<Msg>>);

impl Chan {
    fn into_inner(self) -> Option<Receiver<Msg>> {
        self.0.into_inner().ok()
    }
}

/// Rows of a scan, a change feed or a query: an Arrow stream, read once.
#[pyclass(module = "deltalens", frozen)]
pub(crate) struct Rows {
    schema: SchemaRef,
    state: Mutex<State>,
    /// Dropped with the rows: the scan stops at its next await.
    _cancel: tokio::sync::oneshot::Sender<()>,
}

/// Where a [`Rows`] stands.
enum State {
    /// Rows to read.
    Open(Chan),
    /// Handed over (`__arrow_c_stream__`) or read to the end.
    Taken,
    /// Ended by this error (raised again on every read).
    Failed { code: String, message: String },
}

/// Runs `query` on the runtime and returns its rows once the schema is known (an error
/// before the first row — a missing column, a bad filter, no such version — is raised
/// here).
pub(crate) fn start(
    py: Python<'_>,
    query: Query,
    table: deltalens_core::Table,
    limits: Limits,
) -> PyResult<Rows> {
    let rt = runtime::runtime(py)?;
    let (tx, rx) = sync_channel(CHANNEL_BATCHES);
    let (cancel, cancelled) = tokio::sync::oneshot::channel::<()>();
    // a thread of its own: the scan's future is not `Send` (it is polled where it was
    // made), and it waits on the channel when the reader does not read
    std::thread::Builder::new()
        .name("deltalens-scan".into())
        .spawn(move || {
            let mut sink = Sender(tx);
            let run = std::panic::AssertUnwindSafe(|| {
                rt.block_on(async {
                    tokio::select! {
                        done = execute_streaming(&query, &table, limits, &mut sink) => Some(done),
                        // the rows were dropped (or Ctrl-C before they existed): stop
                        _ = cancelled => None,
                    }
                })
            });
            let end = match std::panic::catch_unwind(run) {
                Ok(Some(Ok(_))) => Msg::End,
                Ok(Some(Err(e))) => Msg::Error {
                    code: e.code(),
                    message: e.to_string(),
                },
                Ok(None) => return,
                Err(_) => died(),
            };
            sink.send(end);
        })
        .map_err(|e| {
            error::error(
                py,
                "runtime_failed",
                &format!("no thread for the scan: {e}"),
            )
        })?;
    let rx = Chan(Mutex::new(rx));
    match recv(py, &rx)? {
        Msg::Schema(schema) => Ok(Rows {
            schema,
            state: Mutex::new(State::Open(rx)),
            _cancel: cancel,
        }),
        Msg::Error { code, message } => Err(error::error(py, &code, &message)),
        Msg::Batch(_) | Msg::End => Err(error::error(
            py,
            "internal",
            "the query ended without a schema",
        )),
    }
}

/// The next message, waiting with the GIL released (Ctrl-C heard); a channel closed
/// without an end is the error of a scan that died.
fn recv(py: Python<'_>, rx: &Chan) -> PyResult<Msg> {
    use std::sync::mpsc::RecvTimeoutError;
    loop {
        let got = py.detach(|| match rx.0.lock() {
            Ok(rx) => rx.recv_timeout(SIGNAL_CHECK),
            Err(_) => Err(RecvTimeoutError::Disconnected),
        });
        match got {
            Ok(m) => return Ok(m),
            Err(RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(RecvTimeoutError::Disconnected) => return Ok(died()),
        }
    }
}

/// The rest of a stream for an Arrow consumer: batches until the end; an error ends it
/// with the error's code and message.
struct Reader {
    schema: SchemaRef,
    rx: Receiver<Msg>,
    done: bool,
}

impl Iterator for Reader {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        use std::sync::mpsc::RecvTimeoutError;
        let error = |m: String| Some(Err(ArrowError::ExternalError(m.into())));
        if self.done {
            return None;
        }
        loop {
            let m = match self.rx.recv_timeout(SIGNAL_CHECK) {
                Ok(m) => m,
                Err(RecvTimeoutError::Disconnected) => died(),
                // Ctrl-C while pyarrow, polars or DuckDB wait here (heard on the main
                // thread only, as Python does)
                Err(RecvTimeoutError::Timeout) => match Python::attach(|py| py.check_signals()) {
                    Ok(()) => continue,
                    Err(_) => return error("interrupted".into()),
                },
            };
            return match m {
                Msg::Batch(b) => Some(Ok(b)),
                Msg::Schema(_) => continue,
                Msg::End => {
                    self.done = true;
                    None
                }
                Msg::Error { code, message } => {
                    self.done = true;
                    error(format!("{code}: {message}"))
                }
            };
        }
    }
}

impl RecordBatchReader for Reader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Rows {
    /// The channel, for a reader that reads to the end (the rows become `Taken`).
    fn take(&self, py: Python<'_>) -> PyResult<Chan> {
        let mut state = self.state.try_lock().map_err(|_| busy(py))?;
        match std::mem::replace(&mut *state, State::Taken) {
            State::Open(rx) => Ok(rx),
            State::Taken => Err(consumed(py)),
            State::Failed { code, message } => {
                let e = error::error(py, &code, &message);
                *state = State::Failed { code, message };
                Err(e)
            }
        }
    }

    /// Every remaining batch, or the error that ended the stream.
    fn collect(&self, py: Python<'_>) -> PyResult<Vec<RecordBatch>> {
        let rx = self.take(py)?;
        let mut out = Vec::new();
        loop {
            match recv(py, &rx) {
                Ok(Msg::Batch(b)) => out.push(b),
                Ok(Msg::Schema(_)) => {}
                Ok(Msg::End) => return Ok(out),
                Ok(Msg::Error { code, message }) => return Err(self.fail(py, code, message)),
                // Ctrl-C: the rows are left unread (`Taken`), the scan stops when they go
                Err(e) => return Err(e),
            }
        }
    }

    /// Remember the error that ended the rows and raise it.
    fn fail(&self, py: Python<'_>, code: String, message: String) -> PyErr {
        let e = error::error(py, &code, &message);
        if let Ok(mut state) = self.state.try_lock() {
            *state = State::Failed { code, message };
        }
        e
    }
}

fn busy(py: Python<'_>) -> PyErr {
    error::error(
        py,
        "rows_busy",
        "these rows are being read by another thread",
    )
}

fn consumed(py: Python<'_>) -> PyErr {
    error::error(
        py,
        "rows_consumed",
        "these rows were read already (a stream is read once): call scan() again",
    )
}

fn stream_capsule<'py>(
    py: Python<'py>,
    reader: Box<dyn RecordBatchReader + Send>,
) -> PyResult<Bound<'py, PyCapsule>> {
    let stream = FFI_ArrowArrayStream::new(reader);
    PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
}

fn pyarrow(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    py.import("pyarrow").map_err(|_| {
        error::error(
            py,
            "missing_dependency",
            "pyarrow is not installed: pip install pyarrow (or read the rows with any library that takes an Arrow stream)",
        )
    })
}

#[pymethods]
impl Rows {
    /// The remaining rows as an Arrow C stream (the PyCapsule interface), read once.
    /// `requested_schema` is not applied: the rows come in their own schema.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let rx = self
            .take(py)?
            .into_inner()
            .ok_or_else(|| error::error(py, "internal", "the rows' channel was poisoned"))?;
        stream_capsule(
            py,
            Box::new(Reader {
                schema: self.schema.clone(),
                rx,
                done: false,
            }),
        )
    }

    /// The rows' schema as an Arrow C schema (the PyCapsule interface).
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let schema = FFI_ArrowSchema::try_from(self.schema.as_ref())
            .map_err(|e| error::error(py, "encode_failed", &e.to_string()))?;
        PyCapsule::new_with_value(py, schema, c"arrow_schema")
    }

    /// The column names.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// Every row as a `pyarrow.Table` (needs pyarrow).
    fn to_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let pa = pyarrow(py)?;
        let batches = self.collect(py)?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), self.schema.clone());
        let holder = Stream {
            reader: Mutex::new(Some(Box::new(reader))),
        };
        pa.call_method1("table", (Bound::new(py, holder)?,))
    }

    /// Every row as a `polars.DataFrame` (needs polars and pyarrow).
    fn to_polars<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let table = self.to_arrow(py)?;
        py.import("polars")
            .map_err(|_| {
                error::error(
                    py,
                    "missing_dependency",
                    "polars is not installed: pip install polars",
                )
            })?
            .call_method1("from_arrow", (table,))
    }

    /// Batch by batch, as `pyarrow.RecordBatch`es (needs pyarrow).
    fn __iter__(slf: Bound<'_, Self>) -> Bound<'_, Self> {
        slf
    }

    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let pa = pyarrow(py)?;
        // (try_lock: a second thread reading the same rows must not wait for the lock
        // while it holds the GIL the first one needs to come back)
        let mut state = self.state.try_lock().map_err(|_| busy(py))?;
        let rx = match &*state {
            State::Open(rx) => rx,
            State::Taken => return Ok(None),
            State::Failed { code, message } => return Err(error::error(py, code, message)),
        };
        loop {
            match recv(py, rx)? {
                Msg::End => {
                    *state = State::Taken;
                    return Ok(None);
                }
                Msg::Schema(_) => {}
                Msg::Error { code, message } => {
                    let e = error::error(py, &code, &message);
                    *state = State::Failed { code, message };
                    return Err(e);
                }
                Msg::Batch(b) => {
                    drop(state);
                    let batch = Batch {
                        array: Mutex::new(Some(b)),
                    };
                    return Ok(Some(
                        pa.getattr("record_batch")?
                            .call1((Bound::new(py, batch)?,))?,
                    ));
                }
            }
        }
    }

    fn __repr__(&self) -> String {
        let cols: Vec<String> = self
            .schema
            .fields()
            .iter()
            .map(|f| format!("{}: {}", f.name(), f.data_type()))
            .collect();
        format!("<deltalens.Rows [{}]>", cols.join(", "))
    }
}

/// One batch handed to pyarrow by the PyCapsule interface (`pa.record_batch(obj)`).
#[pyclass(module = "deltalens", frozen)]
struct Batch {
    array: Mutex<Option<RecordBatch>>,
}

#[pymethods]
impl Batch {
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema;
        let batch = self
            .array
            .try_lock()
            .ok()
            .and_then(|mut b| b.take())
            .ok_or_else(|| consumed(py))?;
        let array = arrow_array::StructArray::from(batch);
        let data = arrow_array::Array::to_data(&array);
        let (array, schema) = arrow_array::ffi::to_ffi(&data)
            .map_err(|e| error::error(py, "encode_failed", &e.to_string()))?;
        Ok((
            PyCapsule::new_with_value(py, schema, c"arrow_schema")?,
            PyCapsule::new_with_value(py, array, c"arrow_array")?,
        ))
    }
}

/// Batches already read, handed to pyarrow as a stream (the PyCapsule interface).
#[pyclass(module = "deltalens", frozen)]
struct Stream {
    reader: Mutex<Option<Box<dyn RecordBatchReader + Send>>>,
}

#[pymethods]
impl Stream {
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = self
            .reader
            .lock()
            .ok()
            .and_then(|mut c| c.take())
            .ok_or_else(|| error::error(py, "rows_consumed", "this stream was read already"))?;
        stream_capsule(py, reader)
    }
}
