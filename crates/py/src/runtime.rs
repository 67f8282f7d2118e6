//! The one tokio runtime the module's calls run on (object_store's HTTP client needs
//! one), and waiting for a call with the GIL released and Ctrl-C still heard.

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use pyo3::prelude::*;
use tokio::runtime::Runtime;

use crate::error;

/// The runtime and the process it was made in: a child made by `fork` (multiprocessing
/// on Linux) inherits the runtime but not its threads, so it makes its own.
static RUNTIME: Mutex<Option<(u32, &'static Runtime)>> = Mutex::new(None);

/// The runtime, made on first use in this process: two worker threads (reads are I/O;
/// decoding runs on the thread that polls the scan).
pub(crate) fn runtime(py: Python<'_>) -> PyResult<&'static Runtime> {
    let failed = |e: String| error::error(py, "runtime_failed", &format!("no async runtime: {e}"));
    let mut current = RUNTIME.lock().map_err(|e| failed(e.to_string()))?;
    let pid = std::process::id();
    if let Some((made_in, rt)) = *current
        && made_in == pid
    {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("deltalens")
        .enable_all()
        .build()
        .map_err(|e| failed(e.to_string()))?;
    // kept for the process's life (an inherited one is left alone: its threads are gone)
    let rt: &'static Runtime = Box::leak(Box::new(rt));
    *current = Some((pid, rt));
    Ok(rt)
}

/// How often a waiting call checks for a signal (Ctrl-C raises `KeyboardInterrupt`).
pub(crate) const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Run the future `work()` makes to its end with the GIL released; a signal (Ctrl-C)
/// stops waiting for it and raises in Python (the work is dropped: deltalens writes
/// nothing, so nothing is left half done). The future is made and polled on this thread
/// (the core's futures are not `Send`); `work` itself must be.
pub(crate) fn block_on<W, F>(py: Python<'_>, work: W) -> PyResult<F::Output>
where
    W: FnOnce() -> F + Send,
    F: Future,
    F::Output: Send,
{
    let rt = runtime(py)?;
    py.detach(|| {
        rt.block_on(async {
            let mut work = std::pin::pin!(work());
            loop {
                tokio::select! {
                    out = &mut work => return Ok(out),
                    _ = tokio::time::sleep(SIGNAL_CHECK) => {
                        Python::attach(|py| py.check_signals())?;
                    }
                }
            }
        })
    })
}
