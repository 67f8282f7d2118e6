//! Opening a checkpointed table costs at most 3 sequential round trips, with and without
//! listing: `_last_checkpoint`; then at once the checkpoint's tail and the listing (or a
//! batch of commits probed by name); then the checkpoint's remaining bytes and the
//! commits. Each request is delayed so that concurrency is real, and timed, so the
//! critical path is measured rather than assumed.

use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use deltalens_core::log::Hint;
use deltalens_core::{Table, VersionSpec};
use deltalens_object_store::ObjectStoreStorage;
use deltalens_storage::{ByteRange, CountingStorage, ObjectMeta, Storage, StorageError};
use deltalens_tests::{FIXTURES, conformance_dir, fixtures_dir, runtime};

/// A store `DELAY` away, optionally one that cannot list (plain HTTP hosting).
#[derive(Debug)]
struct Remote {
    inner: ObjectStoreStorage,
    lists: bool,
}

const DELAY: Duration = Duration::from_millis(4);

#[async_trait::async_trait]
impl Storage for Remote {
    async fn list(&self, prefix: &str, s: Option<&str>) -> Result<Vec<ObjectMeta>, StorageError> {
        tokio::time::sleep(DELAY).await;
        if !self.lists {
            return Err(StorageError::ListingUnsupported {
                path: prefix.to_string(),
                message: "plain HTTP".into(),
            });
        }
        self.inner.list(prefix, s).await
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes, StorageError> {
        tokio::time::sleep(DELAY).await;
        self.inner.get_range(path, range).await
    }
    async fn get(&self, path: &str) -> Result<Bytes, StorageError> {
        tokio::time::sleep(DELAY).await;
        self.inner.get(path).await
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta, StorageError> {
        tokio::time::sleep(DELAY).await;
        self.inner.head(path).await
    }
    async fn get_tail(&self, path: &str, n: u64) -> Result<(Bytes, u64), StorageError> {
        tokio::time::sleep(DELAY).await;
        self.inner.get_tail(path, n).await
    }
    fn can_list(&self) -> bool {
        self.lists
    }
}

fn now_ms() -> f64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64() * 1000.0
}

/// A table at `loc` read through [`Remote`] (listing when `lists`), its requests counted.
#[allow(clippy::unwrap_used)] // tests may
fn counted(loc: &str, lists: bool) -> (Table, Arc<CountingStorage<Remote>>) {
    let remote = Remote {
        inner: ObjectStoreStorage::open(loc, &[]).unwrap(),
        lists,
    };
    let counter = Arc::new(CountingStorage::with_clock(remote, now_ms));
    (Table::new(counter.clone(), loc), counter)
}

#[test]
fn opening_a_checkpointed_table_takes_at_most_three_round_trips() {
    let rt = runtime();
    let mut tables = Vec::new();
    if let Some(dir) = conformance_dir() {
        for e in std::fs::read_dir(dir.join("tables")).unwrap() {
            tables.push(e.unwrap().path());
        }
    } else {
        println!("SKIPPED (corpus): no conformance corpus; fixtures only");
    }
    for f in FIXTURES {
        tables.push(fixtures_dir().join(f));
    }
    tables.sort();
    let mut measured = 0;
    let mut worst = [0u64; 2];
    for path in tables {
        let Ok(hint) = std::fs::read(path.join("_delta_log/_last_checkpoint")) else {
            continue;
        };
        let Some(hint) = Hint::parse(&hint) else {
            continue;
        };
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let after = (hint.version + 1..)
            .take_while(|v| path.join(format!("_delta_log/{v:020}.json")).exists())
            .count();
        let has_sidecars = path.join("_delta_log/_sidecars").is_dir();
        let loc = path.to_string_lossy().to_string();
        for (i, lists) in [true, false].into_iter().enumerate() {
            let (table, counter) = counted(&loc, lists);
            let snap = match rt.block_on(table.snapshot(VersionSpec::Latest)) {
                Ok(s) => s,
                Err(e) => {
                    println!("{name}: not readable ({e})");
                    break;
                }
            };
            let s = counter.stats();
            let mode = if lists { "listing" } else { "no listing" };
            println!(
                "{name} v{} ({mode}): {} round trips, {} requests, {} bytes",
                snap.version, s.round_trips, s.requests, s.bytes
            );
            // sidecars are one more hop; more than a probe batch of commits after the
            // checkpoint is another
            let allowed = 3 + u64::from(has_sidecars) + u64::from(!lists && after >= 16);
            assert!(
                s.round_trips <= allowed,
                "{name} ({mode}): {} round trips, {allowed} allowed: {:#?}",
                s.round_trips,
                counter.records()
            );
            if !has_sidecars {
                worst[i] = worst[i].max(s.round_trips);
            }
            measured += 1;
            // the same version's files streamed (totals): no more round trips (sidecars
            // are read a few at once, not one after another)
            let (table, counter) = counted(&loc, lists);
            let totals = rt.block_on(async {
                let v = table.version_info(VersionSpec::Latest).await?;
                v.file_totals(&mut |_| true).await
            });
            let totals = totals.unwrap();
            assert_eq!(totals.files, snap.files.len() as u64, "{name}");
            let streamed = counter.stats();
            println!(
                "{name} v{} ({mode}), streamed: {} round trips, {} requests",
                snap.version, streamed.round_trips, streamed.requests
            );
            assert!(
                streamed.round_trips <= allowed,
                "{name} ({mode}), streamed: {} round trips, {allowed} allowed: {:#?}",
                streamed.round_trips,
                counter.records()
            );
        }
    }
    assert!(measured >= 4, "only {measured} checkpointed opens measured");
    println!(
        "{measured} opens of checkpointed tables; most round trips without sidecars: {} (listing), {} (no listing)",
        worst[0], worst[1]
    );
}

/// Streaming the files of a checkpoint with sidecars reads its sidecars a few at once,
/// as loading the snapshot does: no more round trips than the snapshot (every table of
/// the corpus with a `_sidecars` directory, every version with a checkpoint).
#[test]
fn streamed_sidecars_take_no_more_round_trips_than_the_snapshot() {
    let Some(dir) = conformance_dir() else {
        println!("SKIPPED (corpus): no conformance corpus");
        return;
    };
    let rt = runtime();
    let mut measured = 0;
    for e in std::fs::read_dir(dir.join("tables")).unwrap() {
        let path = e.unwrap().path();
        if !path.join("_delta_log/_sidecars").is_dir() {
            continue;
        }
        let loc = path.to_string_lossy().to_string();
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let open = || counted(&loc, true);
        let (table, _) = open();
        let Ok(latest) = rt.block_on(table.snapshot(VersionSpec::Latest)) else {
            continue;
        };
        for v in 0..=latest.version {
            let (table, eager) = open();
            let Ok(snap) = rt.block_on(table.snapshot(VersionSpec::Version(v))) else {
                continue;
            };
            let (table, streamed) = open();
            let totals = rt
                .block_on(async {
                    let info = table.version_info(VersionSpec::Version(v)).await?;
                    info.file_totals(&mut |_| true).await
                })
                .unwrap();
            assert_eq!(totals.files, snap.files.len() as u64, "{name} v{v}");
            let (e, s) = (eager.stats(), streamed.stats());
            println!(
                "{name} v{v}: snapshot {} round trips, streamed {}",
                e.round_trips, s.round_trips
            );
            assert!(
                s.round_trips <= e.round_trips + 1,
                "{name} v{v}: streamed {} round trips, snapshot {}: {:#?}",
                s.round_trips,
                e.round_trips,
                streamed.records()
            );
            measured += 1;
        }
    }
    assert!(
        measured >= 4,
        "only {measured} versions with sidecars measured"
    );
}
