//! Local tables and symbolic links (audit #31 item 6): the one rule for local files —
//! a table's files are read only inside its directory after every link is resolved —
//! holds for listings and reads alike. A link out of `_delta_log` is not walked, a link
//! loop does not make the table unreadable, a file linked from outside is refused.
#![cfg(unix)]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use deltalens_core::{Table, VersionSpec};
use deltalens_object_store::{ObjectStoreStorage, ReadError};
use deltalens_storage::{ByteRange, Storage, StorageError};

/// A scratch directory, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir =
            std::env::temp_dir().join(format!("deltalens-links-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn demo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/demo")
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

fn open(dir: &Path) -> ObjectStoreStorage {
    ObjectStoreStorage::open(dir.to_str().unwrap(), &[]).unwrap()
}

/// A `_delta_log/usr -> /usr` link: the listing does not walk `/usr`.
#[tokio::test]
async fn listing_does_not_follow_a_link_out_of_the_table() {
    let t = Scratch::new("usr");
    std::fs::create_dir_all(t.0.join("_delta_log")).unwrap();
    std::fs::write(t.0.join("_delta_log/00000000000000000000.json"), "{}\n").unwrap();
    symlink("/usr", t.0.join("_delta_log/usr")).unwrap();
    let s = open(&t.0);
    let started = Instant::now();
    let listed = tokio::time::timeout(Duration::from_secs(60), s.list("_delta_log/", None))
        .await
        .expect("the listing of _delta_log did not finish within 60 s")
        .unwrap();
    let names: Vec<&str> = listed.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(
        names,
        ["_delta_log/00000000000000000000.json"],
        "listed in {:?}",
        started.elapsed()
    );
    // the relay's page of a listing too
    let page = s.list_page("_delta_log/", None, 100).await.unwrap();
    assert_eq!(page.len(), 1, "{page:?}");
}

/// A link loop (`_delta_log/loop -> ..`) leaves the table readable.
#[tokio::test]
async fn a_link_loop_leaves_the_table_readable() {
    let t = Scratch::new("loop");
    let root = t.0.join("demo");
    copy_dir(&demo(), &root);
    symlink("..", root.join("_delta_log/loop")).unwrap();
    let s = open(&root);
    let table = Table::new(Arc::new(s), root.to_str().unwrap());
    let snapshot = table
        .snapshot(VersionSpec::Latest)
        .await
        .unwrap_or_else(|e| panic!("the demo table with a link loop: {e}"));
    assert_eq!(snapshot.version, 6);
    let listing = table.listing().await.unwrap();
    assert!(!format!("{listing:?}").contains("loop"), "{listing:?}");
}

fn refused(e: &StorageError) {
    let text = e.to_string();
    assert!(
        matches!(e, StorageError::PermissionDenied { .. }) && text.contains("outside the table"),
        "not the refusal of a file outside the table: {text}"
    );
}

/// A data file linked to a file outside the table is refused by every read; one linked
/// to a file inside the table is read.
#[tokio::test]
async fn a_file_linked_from_outside_the_table_is_refused() {
    let t = Scratch::new("outside");
    let root = t.0.join("table");
    std::fs::create_dir_all(root.join("_delta_log")).unwrap();
    std::fs::create_dir_all(root.join("data")).unwrap();
    std::fs::write(t.0.join("secret"), "outside the table").unwrap();
    std::fs::write(root.join("data/real.parquet"), "inside the table").unwrap();
    symlink(t.0.join("secret"), root.join("data/part-0.parquet")).unwrap();
    symlink("real.parquet", root.join("data/alias.parquet")).unwrap();
    let s = open(&root);
    let p = "data/part-0.parquet";
    refused(&s.get(p).await.unwrap_err());
    refused(&s.get_range(p, ByteRange::Bounded(0..4)).await.unwrap_err());
    refused(&s.get_tail(p, 4).await.unwrap_err());
    refused(&s.head(p).await.unwrap_err());
    refused(&s.head_object(p).await.unwrap_err());
    match s.read_object(p, None).await {
        Err(ReadError::Storage(e)) => refused(&e),
        other => panic!("read_object of a file outside the table: {other:?}"),
    }
    // nor is it listed
    let listed = s.list("data/", None).await.unwrap();
    let names: Vec<&str> = listed.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(names, ["data/alias.parquet", "data/real.parquet"]);
    // a link that stays inside the table is read
    assert_eq!(
        s.get("data/alias.parquet").await.unwrap(),
        "inside the table"
    );
    assert_eq!(s.head("data/alias.parquet").await.unwrap().size, 16);
}

/// A FIFO in the table is refused at once (opening one waits for a writer).
#[tokio::test]
async fn a_fifo_is_refused_not_waited_on() {
    let t = Scratch::new("fifo");
    std::fs::create_dir_all(t.0.join("_delta_log")).unwrap();
    let fifo = t.0.join("_delta_log/_last_checkpoint");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        eprintln!("no mkfifo here; skipped");
        return;
    }
    let s = open(&t.0);
    let got = tokio::time::timeout(
        Duration::from_secs(10),
        s.get("_delta_log/_last_checkpoint"),
    )
    .await;
    if got.is_err() {
        // release the blocked open before failing, so the runtime can shut down
        let _ = std::fs::OpenOptions::new().write(true).open(&fifo);
        panic!("reading a FIFO waited for a writer");
    }
    let e = got.unwrap().unwrap_err();
    assert!(
        matches!(e, StorageError::PermissionDenied { .. }) && e.to_string().contains("FIFO"),
        "{e}"
    );
}

/// `_delta_log` itself a link: to a directory of the table, it is listed and read under
/// its own name; to a directory elsewhere, its listing and its files are refused.
#[tokio::test]
async fn a_linked_log_directory_is_read_only_inside_the_table() {
    let t = Scratch::new("logdir");
    let (inside, outside) = (t.0.join("inside"), t.0.join("outside"));
    for root in [&inside, &outside] {
        std::fs::create_dir_all(root.join(".log")).unwrap();
        std::fs::write(root.join(".log/00000000000000000000.json"), "{}\n").unwrap();
    }
    symlink(".log", inside.join("_delta_log")).unwrap();
    symlink(outside.join(".log"), t.0.join("elsewhere")).unwrap();
    let table = t.0.join("table");
    std::fs::create_dir_all(&table).unwrap();
    symlink(t.0.join("elsewhere"), table.join("_delta_log")).unwrap();

    let s = open(&inside);
    let listed = s.list("_delta_log/", None).await.unwrap();
    let names: Vec<&str> = listed.iter().map(|m| m.path.as_str()).collect();
    assert_eq!(names, ["_delta_log/00000000000000000000.json"]);
    let commit = "_delta_log/00000000000000000000.json";
    assert_eq!(s.get(commit).await.unwrap(), "{}\n");

    let s = open(&table);
    let e = s.list("_delta_log/", None).await.unwrap_err();
    assert!(
        e.is_listing_refused() && e.to_string().contains("outside the table"),
        "{e}"
    );
    refused(&s.get(commit).await.unwrap_err());
}
