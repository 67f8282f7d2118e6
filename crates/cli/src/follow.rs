//! `--follow` for `history` and `changes`: after the commits there are, keep polling the
//! log for new ones at an interval (Flink's `updateCheckIntervalMillis`) and print them as
//! they land, until Ctrl-C, SIGTERM, or the reader of stdout closes its pipe.
//!
//! A poll is one listing of `_delta_log/` from the first version not seen yet ([`Tail`]);
//! only what lands is read. A poll that fails for a reason that may pass (a storage
//! error, a timeout) is tried again later, waiting twice as long each time up to
//! [`MAX_BACKOFF`]; any other failure ends the command with its error. Stopping never
//! cuts a document short: the batch being written is finished, then the document (a JSON
//! array's bracket, a Parquet footer), and the exit status is 0.

use std::time::{Duration, Instant};

use std::collections::BTreeMap;

use deltalens_core::Table;
use deltalens_core::log::{Discover, LOG_DIR, LogListing, commit_path, find_log};

use crate::args::TableArgs;
use crate::error::CliError;
use crate::output::Output;
use crate::table::IoReport;
use deltalens_present::text::terminal_safe;

/// The shortest interval accepted (a poll is a few requests to the store).
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// The longest interval accepted.
pub const MAX_INTERVAL: Duration = Duration::from_secs(24 * 3600);
/// The longest wait between polls after failures.
pub const MAX_BACKOFF: Duration = Duration::from_secs(300);
/// How often a wait looks at Ctrl-C and at stdout's reader.
const TICK: Duration = Duration::from_millis(100);

/// `--follow` and `--interval`, for commands that can follow a table.
#[derive(clap::Args, Debug, Clone)]
pub struct FollowArgs {
    /// Keep running: print new commits (changes: their rows) as they land, polling the
    /// log every --interval; Ctrl-C, the reader closing the pipe, or (changes) --limit
    /// rows stop it cleanly.
    #[arg(long)]
    pub follow: bool,
    /// How often --follow polls for new commits: 500ms, 5s, 2m, 1h (a bare number is
    /// seconds; 100ms to 24h).
    #[arg(long, value_name = "DURATION", default_value = "5s", value_parser = parse_interval,
          requires = "follow")]
    pub interval: Duration,
}

/// A duration as `--interval` takes it: `<n>ms`, `<n>s`, `<n>m`, `<n>h`, or `<n>`
/// (seconds), between [`MIN_INTERVAL`] and [`MAX_INTERVAL`].
pub fn parse_interval(s: &str) -> Result<Duration, String> {
    let t = s.trim();
    let (digits, unit_ms) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1000)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60_000)
    } else if let Some(n) = t.strip_suffix('h') {
        (n, 3_600_000)
    } else {
        (t, 1000)
    };
    let n: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("expected a duration such as 500ms, 5s, 2m or 1h, got {s:?}"))?;
    let d = n
        .checked_mul(unit_ms)
        .map(Duration::from_millis)
        .unwrap_or(Duration::MAX);
    if d < MIN_INTERVAL || d > MAX_INTERVAL {
        return Err(format!(
            "the interval must be between {} ms and {} h, got {s:?}",
            MIN_INTERVAL.as_millis(),
            MAX_INTERVAL.as_secs() / 3600
        ));
    }
    Ok(d)
}

/// The wait before the next poll: the interval, or after `failures` failed polls in a
/// row twice the last wait, at most [`MAX_BACKOFF`] (or the interval, if longer).
pub fn next_wait(interval: Duration, failures: u32) -> Duration {
    let cap = MAX_BACKOFF.max(interval);
    let factor = 1u32.checked_shl(failures.min(31)).unwrap_or(u32::MAX);
    interval.saturating_mul(factor).min(cap)
}

/// Whether a failed poll is worth trying again: the store failed or timed out. A table
/// that is gone, unreadable, or no longer allowed ends the command.
pub fn is_transient(e: &CliError) -> bool {
    matches!(e.code().as_str(), "storage_failed" | "storage_timed_out")
}

/// Whether following should end: set by Ctrl-C or SIGTERM (a second one ends the process
/// at once, exit status 130), or found when the reader of stdout has gone.
#[derive(Clone)]
pub struct Stop {
    /// Stdout, whose reader is watched (not when the rows go to `--output FILE`).
    stdout: Option<Output>,
}

impl Stop {
    /// Catch Ctrl-C and SIGTERM from now on (on Unix; elsewhere Ctrl-C ends the process
    /// as before), and watch the reader of `stdout` when given.
    pub fn on_signals(stdout: Option<Output>) -> Stop {
        signals::catch();
        Stop { stdout }
    }

    /// Whether to stop now.
    pub fn requested(&self) -> bool {
        signals::caught() || self.stdout.is_some_and(|o| o.stdout_reader_gone())
    }

    /// Wait `d`; `true` when asked to stop meanwhile.
    pub async fn sleep(&self, d: Duration) -> bool {
        let end = Instant::now() + d;
        loop {
            if self.requested() {
                return true;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            tokio::time::sleep(left.min(TICK)).await;
        }
    }
}

/// SIGINT and SIGTERM counted instead of ending the process (a second one ends it, exit
/// status 130). A handler only counts: nothing else is safe in one.
#[cfg(unix)]
mod signals {
    use std::sync::atomic::{AtomicU32, Ordering};

    static CAUGHT: AtomicU32 = AtomicU32::new(0);

    extern "C" fn on_signal(_: libc::c_int) {
        if CAUGHT.fetch_add(1, Ordering::SeqCst) >= 1 {
            // SAFETY: _exit is async-signal-safe; the second signal ends the process now.
            #[allow(unsafe_code)]
            unsafe {
                libc::_exit(130)
            }
        }
    }

    /// Count SIGINT and SIGTERM from now on.
    pub fn catch() {
        let handler: extern "C" fn(libc::c_int) = on_signal;
        for sig in [libc::SIGINT, libc::SIGTERM] {
            // SAFETY: a zeroed sigaction is valid (no flags, empty mask once emptied); the
            // handler only touches an atomic and calls _exit, both async-signal-safe.
            #[allow(unsafe_code)]
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = handler as libc::sighandler_t;
                action.sa_flags = libc::SA_RESTART;
                libc::sigemptyset(&mut action.sa_mask);
                libc::sigaction(sig, &action, std::ptr::null_mut());
            }
        }
    }

    /// Whether a signal was caught.
    pub fn caught() -> bool {
        CAUGHT.load(Ordering::SeqCst) > 0
    }
}

#[cfg(not(unix))]
mod signals {
    pub fn catch() {}
    pub fn caught() -> bool {
        false
    }
}

/// Commits one poll hands on at most (the rest come with the next poll).
pub const MAX_COMMITS_PER_POLL: usize = 1000;
/// Polls in a row that may find a version missing while later ones are listed (a store
/// that shows a new file late) before that is an error.
pub const GAP_POLLS: u32 = 3;

/// The end of the log being followed: the first version not handed on yet.
#[derive(Debug, Clone)]
pub struct Tail {
    /// The first version not handed on yet.
    pub next: u64,
    /// Polls in a row that found `next` missing while later versions were listed.
    gap_polls: u32,
    /// Polls that may still find a gap before it is an error (none for the first poll:
    /// what is there already must be whole).
    patience: u32,
}

impl Tail {
    /// Follow from version `next` on.
    pub fn from(next: u64) -> Tail {
        Tail {
            next,
            gap_polls: 0,
            patience: 0,
        }
    }

    /// Let [`GAP_POLLS`] polls find a version missing before it is an error, from the
    /// first poll on (after what was printed already).
    pub fn patient(mut self) -> Tail {
        self.patience = GAP_POLLS;
        self
    }

    /// The commits from `next` on that the log holds now, consecutive, at most
    /// [`MAX_COMMITS_PER_POLL`]: a listing holding only them (empty: nothing new). Call
    /// [`Tail::handed_on`] once they are printed: until then, polls find them again.
    pub async fn poll(&mut self, table: &Table) -> Result<LogListing, CliError> {
        let mut listing = self.list(table).await?;
        let found = std::mem::take(&mut listing.commits);
        let mut run = BTreeMap::new();
        for (v, f) in found.range(self.next..) {
            if *v != self.next + run.len() as u64 || run.len() == MAX_COMMITS_PER_POLL {
                break;
            }
            run.insert(*v, f.clone());
        }
        let missing = self.next + run.len() as u64;
        let later = found.range(missing..).next().map(|(v, _)| *v);
        match later {
            Some(target) if run.len() < MAX_COMMITS_PER_POLL && target > missing => {
                self.gap_polls += 1;
                if self.gap_polls > self.patience {
                    return Err(deltalens_core::Error::MissingVersion {
                        version: missing,
                        target,
                    }
                    .into());
                }
            }
            _ => self.gap_polls = 0,
        }
        self.patience = GAP_POLLS;
        listing.commits = run;
        listing.checkpoints.clear();
        Ok(listing)
    }

    /// The commits up to `version` were handed on: the next poll starts after it.
    pub fn handed_on(&mut self, version: u64) {
        self.next = self.next.max(version.saturating_add(1));
    }

    /// The log from `next` on: one listing from there; a store that cannot list is
    /// probed by name for its newest version (the whole log when that skips `next`).
    async fn list(&self, table: &Table) -> Result<LogListing, CliError> {
        let storage = table.storage().as_ref();
        if storage.can_list() {
            let start = self.next.checked_sub(1).map(commit_path);
            match storage.list(LOG_DIR, start.as_deref()).await {
                Ok(objects) => return Ok(LogListing::from_objects(objects, true)),
                Err(e) if e.is_listing_refused() => {}
                Err(e) => return Err(e.into()),
            }
        }
        let latest = find_log(storage, table.location(), Discover::Latest).await?;
        let newer = latest
            .commits
            .keys()
            .next_back()
            .is_some_and(|v| *v >= self.next);
        if newer && !latest.commits.contains_key(&self.next) {
            return Ok(table.listing().await?);
        }
        Ok(latest)
    }
}

/// The newest commit of the table.
pub async fn newest_commit(table: &Table) -> Result<u64, CliError> {
    let listing = find_log(table.storage().as_ref(), table.location(), Discover::Latest).await?;
    match listing.commits.keys().next_back() {
        Some(v) => Ok(*v),
        None => Ok(listing.segment(None, table.location())?.version),
    }
}

/// What to report about requests while following: no progress line (following has no
/// end to measure it against; rows and warnings share the terminal), and no log per
/// request (it is printed when a command ends, and would grow while it follows).
pub fn io_report(args: &FollowArgs, table: &TableArgs) -> Result<IoReport, CliError> {
    let mut io = table.io();
    if args.follow {
        if io.log {
            return Err(CliError::Argument {
                expected: "-v or --io-stats with --follow (the log per request of -vv is printed when a command ends)",
                given: "-vv".into(),
            });
        }
        io.watch = false;
    }
    Ok(io)
}

/// Whether following goes on after a poll.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polled {
    /// Keep polling.
    More,
    /// Done (a row limit reached): end cleanly.
    Done,
}

/// A poll that failed, and whether polling may go on after it.
pub struct Failed {
    pub error: CliError,
    /// Nothing of the poll's answer was printed and the failure may pass.
    pub may_retry: bool,
}

impl From<CliError> for Failed {
    fn from(error: CliError) -> Failed {
        Failed {
            may_retry: is_transient(&error),
            error,
        }
    }
}

/// Call `poll` every `interval` until `stop` says or `poll` is done, backing off after
/// failures that may pass (each reported on stderr) and ending at any other.
pub async fn poll_until_stopped(
    stop: &Stop,
    interval: Duration,
    mut poll: impl AsyncFnMut() -> Result<Polled, Failed>,
) -> Result<(), CliError> {
    let mut failures = 0u32;
    loop {
        if stop.sleep(next_wait(interval, failures)).await {
            return Ok(());
        }
        match poll().await {
            Ok(Polled::More) => failures = 0,
            Ok(Polled::Done) => return Ok(()),
            Err(Failed {
                error,
                may_retry: true,
            }) => {
                failures = failures.saturating_add(1);
                let wait = next_wait(interval, failures);
                eprintln!(
                    "warning: {} (polling again in {:.1} s)",
                    terminal_safe(&error.to_string(), false),
                    wait.as_secs_f64()
                );
            }
            Err(Failed { error, .. }) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalens_storage::MemoryStorage;
    use std::sync::Arc;

    /// A table whose log holds commits `versions` (bodies do not matter to a poll).
    fn log(versions: impl IntoIterator<Item = u64>) -> (Arc<MemoryStorage>, Table) {
        let mem = Arc::new(MemoryStorage::new());
        for v in versions {
            mem.put(&commit_path(v), "{}\n".to_string(), 0);
        }
        (mem.clone(), Table::new(mem, "memory://t"))
    }

    fn versions(l: &LogListing) -> Vec<u64> {
        l.commits.keys().copied().collect()
    }

    #[tokio::test]
    async fn a_poll_hands_on_the_consecutive_commits_from_the_next_version() {
        let (mem, table) = log(0..4);
        mem.put(
            "_delta_log/00000000000000000002.checkpoint.parquet",
            "x".to_string(),
            0,
        );
        let mut tail = Tail::from(1);
        assert_eq!(versions(&tail.poll(&table).await.unwrap()), [1, 2, 3]);
        // not handed on: found again
        assert_eq!(versions(&tail.poll(&table).await.unwrap()), [1, 2, 3]);
        tail.handed_on(3);
        assert!(tail.poll(&table).await.unwrap().commits.is_empty());
        mem.put(&commit_path(4), "{}\n".to_string(), 0);
        assert_eq!(versions(&tail.poll(&table).await.unwrap()), [4]);
        // a version handed on already is never handed on again
        tail.handed_on(4);
        tail.handed_on(2);
        assert_eq!(tail.next, 5);
    }

    #[tokio::test]
    async fn a_missing_version_is_waited_for_a_few_polls_then_named() {
        let (mem, table) = log([0, 1, 2, 4, 5]);
        // the first poll of a strict tail: what is there must be whole
        let e = Tail::from(0).poll(&table).await.unwrap_err();
        assert!(e.to_string().contains('3'), "{e}");
        let mut tail = Tail::from(0).patient();
        assert_eq!(versions(&tail.poll(&table).await.unwrap()), [0, 1, 2]);
        tail.handed_on(2);
        // 3 may still show up: GAP_POLLS polls in a row find nothing
        for _ in 1..GAP_POLLS {
            assert!(tail.poll(&table).await.unwrap().commits.is_empty());
        }
        let e = tail.poll(&table).await.unwrap_err();
        assert!(
            matches!(
                e,
                CliError::Core(deltalens_core::Error::MissingVersion {
                    version: 3,
                    target: 4
                })
            ),
            "{e}"
        );
        // once it is there, the run goes on
        mem.put(&commit_path(3), "{}\n".to_string(), 0);
        assert_eq!(versions(&tail.poll(&table).await.unwrap()), [3, 4, 5]);
    }

    #[tokio::test]
    async fn a_poll_hands_on_a_bounded_run() {
        let n = MAX_COMMITS_PER_POLL as u64 + 5;
        let (_, table) = log(0..n);
        let mut tail = Tail::from(0);
        let first = versions(&tail.poll(&table).await.unwrap());
        assert_eq!(first.len(), MAX_COMMITS_PER_POLL);
        tail.handed_on(*first.last().unwrap());
        let rest = versions(&tail.poll(&table).await.unwrap());
        assert_eq!(rest, (MAX_COMMITS_PER_POLL as u64..n).collect::<Vec<_>>());
    }

    #[test]
    fn intervals_parse_with_their_unit_and_within_bounds() {
        let ms = |s| parse_interval(s).map(|d| d.as_millis());
        assert_eq!(ms("500ms"), Ok(500));
        assert_eq!(ms("5s"), Ok(5000));
        assert_eq!(ms("5"), Ok(5000));
        assert_eq!(ms(" 2m "), Ok(120_000));
        assert_eq!(ms("1h"), Ok(3_600_000));
        assert_eq!(ms("24h"), Ok(86_400_000));
        for bad in [
            "",
            "s",
            "-1s",
            "1.5s",
            "5x",
            "99ms",
            "0",
            "25h",
            "99999999999999999999h",
        ] {
            assert!(parse_interval(bad).is_err(), "{bad:?}");
        }
        assert!(
            parse_interval("99ms")
                .unwrap_err()
                .contains("between 100 ms and 24 h"),
        );
    }

    #[test]
    fn failures_double_the_wait_up_to_the_cap() {
        let s = Duration::from_secs;
        let waits: Vec<u64> = (0..12).map(|f| next_wait(s(5), f).as_secs()).collect();
        assert_eq!(
            waits,
            [5, 10, 20, 40, 80, 160, 300, 300, 300, 300, 300, 300]
        );
        // an interval longer than the cap is never shortened
        assert_eq!(next_wait(s(3600), 0), s(3600));
        assert_eq!(next_wait(s(3600), 5), s(3600));
        assert_eq!(next_wait(s(1), u32::MAX), MAX_BACKOFF);
    }

    #[test]
    fn only_failures_that_may_pass_are_retried() {
        use deltalens_storage::StorageError;
        let storage = CliError::Storage;
        let timed_out = storage(StorageError::TimedOut {
            path: "p".into(),
            operation: "get",
            message: "m".into(),
        });
        assert!(is_transient(&timed_out));
        let denied = storage(StorageError::PermissionDenied {
            path: "p".into(),
            operation: "get",
            message: "m".into(),
        });
        assert!(!is_transient(&denied));
        let bad = CliError::Argument {
            expected: "x",
            given: "y".into(),
        };
        assert!(!is_transient(&bad));
    }
}
