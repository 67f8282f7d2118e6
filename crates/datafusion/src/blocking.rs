//! Running deltalens' futures where DataFusion wants `Send` ones. deltalens' core futures
//! are not `Send` (they hold `&mut dyn FnMut` sinks across awaits, so that the same code
//! runs in a browser); DataFusion's async traits need `Send` futures. The work is made
//! and driven on a blocking thread of the current runtime, and its result awaited.

use crate::error::{Error, Result};

/// Run the future `make` returns on a blocking thread of the current Tokio runtime.
pub(crate) async fn off_task<T, F, Fut>(make: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<T>>,
{
    let handle = tokio::runtime::Handle::try_current().map_err(|e| {
        Error::InvalidArgument(format!("reading a Delta table needs a Tokio runtime: {e}"))
    })?;
    let on = handle.clone();
    handle
        .spawn_blocking(move || on.block_on(make()))
        .await
        .map_err(|e| Error::InvalidArgument(format!("a Delta table read stopped: {e}")))?
}
