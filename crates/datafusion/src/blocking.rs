//! Running deltalens' futures where DataFusion wants `Send` ones, on threads of their own.
//!
//! deltalens' core futures are not `Send` (they hold `&mut dyn FnMut` sinks across
//! awaits, so that the same code runs in a browser); DataFusion's async traits need
//! `Send` futures. Such work is made and driven on a thread of its own through the
//! current runtime's handle (its I/O stays on the runtime), not on the runtime's
//! blocking pool: a scan waits there for its consumer, and a pool full of waiting scans
//! starves the local store, whose file reads need that pool too (a join deadlocked so on
//! the CLI's runtime of 4 blocking threads).

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::{Error, Result};

/// The most of these threads alive at once in this process: a plan (a union of many
/// scans, each of up to 4,096 splits, shipped by a scheduler) cannot start more.
pub const MAX_THREADS: usize = 1024;

static LIVE: AtomicUsize = AtomicUsize::new(0);

/// One live thread of those `live` counts, counted until it ends (or is never started).
struct Live(&'static AtomicUsize);

impl Drop for Live {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Start `f` with the current Tokio runtime's handle on a new thread named `name`;
/// refused when [`MAX_THREADS`] are running.
pub(crate) fn spawn<F>(name: &str, f: F) -> Result<()>
where
    F: FnOnce(tokio::runtime::Handle) + Send + 'static,
{
    spawn_counted(name, f, &LIVE, MAX_THREADS)
}

/// [`spawn`], counting the threads in `live`, at most `max` at once.
fn spawn_counted<F>(name: &str, f: F, live: &'static AtomicUsize, max: usize) -> Result<()>
where
    F: FnOnce(tokio::runtime::Handle) + Send + 'static,
{
    let handle = tokio::runtime::Handle::try_current().map_err(|e| {
        Error::Internal(format!("reading a Delta table needs a Tokio runtime: {e}"))
    })?;
    let running = live.fetch_add(1, Ordering::Relaxed);
    let counted = Live(live);
    if running >= max {
        return Err(Error::InvalidArgument(format!(
            "{max} Delta reads are running in this process, the most at once: run fewer partitions (target_partitions) or fewer queries at a time"
        )));
    }
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || {
            let _counted = counted;
            f(handle)
        })
        .map(|_| ())
        .map_err(|e| Error::Internal(format!("cannot start a thread for {name}: {e}")))
}

/// Run the future `make` returns on a thread of its own and await its result.
pub(crate) async fn off_task<T, F, Fut>(make: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce() -> Fut + Send + 'static,
    Fut: Future<Output = Result<T>>,
{
    let (tx, rx) = tokio::sync::oneshot::channel();
    spawn("deltalens-log", move |handle| {
        let _ = tx.send(handle.block_on(make()));
    })?;
    rx.await.map_err(|_| {
        Error::Internal("a Delta table read stopped before it answered (its thread died)".into())
    })?
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)] // tests may
    use super::*;
    use std::time::Duration;

    #[test]
    fn no_more_than_the_limit_of_threads_run_at_once() {
        // a counter and a limit of its own (4), not the process' (other tests read)
        static COUNT: AtomicUsize = AtomicUsize::new(0);
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .build()
            .unwrap();
        let _enter = rt.enter();
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let wait = std::sync::Arc::new(std::sync::Mutex::new(wait));
        let (done_tx, done) = std::sync::mpsc::channel::<()>();
        let start = || {
            let (wait, done_tx) = (wait.clone(), done_tx.clone());
            spawn_counted(
                "test-waits",
                move |_| {
                    let _ = wait.lock().map(|w| w.recv());
                    let _ = done_tx.send(());
                },
                &COUNT,
                4,
            )
        };
        for _ in 0..4 {
            start().unwrap();
        }
        let e = start().unwrap_err().to_string();
        assert!(e.contains("4 Delta reads are running"), "{e}");
        assert_eq!(
            COUNT.load(Ordering::Relaxed),
            4,
            "a refused thread is not counted"
        );
        // as threads end, others start
        release.send(()).unwrap();
        done.recv_timeout(Duration::from_secs(30)).unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while COUNT.load(Ordering::Relaxed) >= 4 && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        start().unwrap();
        for _ in 0..4 {
            release.send(()).unwrap();
            done.recv_timeout(Duration::from_secs(30)).unwrap();
        }
    }
}
