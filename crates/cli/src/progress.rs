//! Progress on stderr for long commands (indicatif): a bar with bytes, rate and ETA when
//! the total is known (`scan`), a counter (`info` counting files), or the requests and
//! bytes read so far for any other command that opens a table. Drawn only when stdout and
//! stderr are both terminals (a progress line never mixes into piped output or a log),
//! never with `--quiet`, and cleared when the command ends.

use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use deltalens_storage::{CountingStorage, DynStorage};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// Whether progress may be drawn: not `quiet`, stdout and stderr terminals.
pub fn enabled(quiet: bool) -> bool {
    !quiet && std::io::stdout().is_terminal() && std::io::stderr().is_terminal()
}

fn style(template: &str) -> ProgressStyle {
    ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_spinner())
}

/// A progress line, or nothing when progress is off.
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// A bar over `total` bytes: bytes read, rate, ETA, and a message.
    pub fn bytes(total: u64, quiet: bool) -> Progress {
        Progress(enabled(quiet).then(|| {
            let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
            bar.set_style(style(
                "{spinner} {msg} [{bar:24}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
            ));
            bar
        }))
    }

    /// A counter of `what` (`files counted`), with its rate.
    pub fn counter(what: &'static str, quiet: bool) -> Progress {
        Progress(enabled(quiet).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(style(&format!(
                "{{spinner}} {{human_pos}} {what} ({{per_sec}})"
            )));
            bar
        }))
    }

    /// Move to `n` (bytes or items).
    pub fn set(&self, n: u64) {
        if let Some(b) = &self.0 {
            b.set_position(n);
        }
    }

    /// Replace the message.
    pub fn message(&self, m: String) {
        if let Some(b) = &self.0 {
            b.set_message(m);
        }
    }

    /// Run `f` (which writes to the terminal) with the line hidden.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        match &self.0 {
            Some(b) => b.suspend(f),
            None => f(),
        }
    }

    /// Erase the line.
    pub fn clear(&self) {
        if let Some(b) = &self.0 {
            b.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
}

/// The requests and bytes a command has read so far, redrawn from the request counter
/// by a thread of its own until dropped.
pub struct Watch {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watch {
    /// Watch `counter` (nothing when progress is off).
    pub fn start(counter: Arc<CountingStorage<DynStorage>>, quiet: bool) -> Watch {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = enabled(quiet).then(|| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
                bar.set_style(style("{spinner} read {msg}: {bytes} ({bytes_per_sec})"));
                while !stop.load(Ordering::Relaxed) {
                    let s = counter.stats();
                    bar.set_message(format!("{} requests", s.requests));
                    bar.set_position(s.bytes);
                    std::thread::sleep(Duration::from_millis(100));
                }
                bar.finish_and_clear();
            })
        });
        Watch { stop, thread }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
