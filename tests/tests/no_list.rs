//! No-LIST discovery gives the same answers as listing: every conformance table and
//! fixture opened through a store that refuses LIST (as plain HTTPS hosting does).

use std::sync::Arc;

use bytes::Bytes;
use deltalens_core::{Table, VersionSpec};
use deltalens_object_store::ObjectStoreStorage;
use deltalens_storage::{ByteRange, ObjectMeta, Storage, StorageError};
use deltalens_tests::{FIXTURES, conformance_dir, fixtures_dir, runtime};

#[derive(Debug)]
/// A store that refuses LIST; with `.1` set its requests count as budgeted (an edge
/// worker's), so discovery probes few commit names at a time.
struct NoList(ObjectStoreStorage, bool);

#[async_trait::async_trait]
impl Storage for NoList {
    async fn list(&self, prefix: &str, _: Option<&str>) -> Result<Vec<ObjectMeta>, StorageError> {
        Err(StorageError::ListingUnsupported {
            path: prefix.to_string(),
            message: "405 Method Not Allowed".into(),
        })
    }
    async fn get_range(&self, path: &str, range: ByteRange) -> Result<Bytes, StorageError> {
        self.0.get_range(path, range).await
    }
    async fn get(&self, path: &str) -> Result<Bytes, StorageError> {
        self.0.get(path).await
    }
    async fn head(&self, path: &str) -> Result<ObjectMeta, StorageError> {
        self.0.head(path).await
    }
    fn requests_are_budgeted(&self) -> bool {
        self.1
    }
}

fn summary(s: &deltalens_core::Snapshot) -> (u64, Vec<String>, String, String) {
    let mut files: Vec<String> = s
        .files
        .iter()
        .map(|f| {
            format!(
                "{}#{:?}",
                f.path,
                f.deletion_vector.as_ref().map(|d| d.unique_id())
            )
        })
        .collect();
    files.sort();
    (
        s.version,
        files,
        format!("{:?}", s.protocol),
        format!("{:?}", s.metadata),
    )
}

#[test]
fn discovery_without_listing_matches_listing() {
    let rt = runtime();
    let mut tables = Vec::new();
    if let Some(dir) = conformance_dir() {
        for e in std::fs::read_dir(dir.join("tables")).unwrap() {
            tables.push(e.unwrap().path());
        }
    }
    for f in FIXTURES {
        tables.push(fixtures_dir().join(f));
    }
    tables.sort();
    let (mut same, mut versions_checked) = (0, 0);
    let mut problems = Vec::new();
    for path in tables {
        let loc = path.to_string_lossy().to_string();
        let listed = Table::new(Arc::new(ObjectStoreStorage::open(&loc, &[]).unwrap()), &loc);
        let probed = Table::new(
            Arc::new(NoList(ObjectStoreStorage::open(&loc, &[]).unwrap(), false)),
            &loc,
        );
        let a = rt.block_on(listed.snapshot(VersionSpec::Latest));
        let b = rt.block_on(probed.snapshot(VersionSpec::Latest));
        match (&a, &b) {
            (Ok(a), Ok(b)) if summary(a) == summary(b) => same += 1,
            (Err(_), Err(_)) => same += 1, // refused either way
            _ => {
                problems.push(format!(
                    "{loc}: listing {:?} vs probing {:?}",
                    a.as_ref().map(summary),
                    b.as_ref().map(summary)
                ));
                continue;
            }
        }
        let Ok(a) = a else { continue };
        // time travel to every older version the listing can read
        for v in 0..a.version {
            let x = rt.block_on(listed.snapshot(VersionSpec::Version(v)));
            let Ok(x) = x else { continue };
            versions_checked += 1;
            match rt.block_on(probed.snapshot(VersionSpec::Version(v))) {
                Ok(y) if summary(&x) == summary(&y) => {}
                Ok(y) => problems.push(format!(
                    "{loc} v{v}: {} vs {} files",
                    x.num_files(),
                    y.num_files()
                )),
                Err(e) => problems.push(format!("{loc} v{v}: probing failed: {e}")),
            }
        }
    }
    eprintln!(
        "no-list: {same} tables agree at their latest version, {versions_checked} older versions checked; {} problems",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Budgeted requests (an edge worker's): discovery probes 2, 2, 4, 4, … commit names
/// instead of 16 at once — the same snapshots, fewer requests.
#[test]
fn budgeted_discovery_makes_fewer_requests() {
    let rt = runtime();
    let (mut fewer, mut total_many, mut total_few) = (0, 0, 0);
    for f in FIXTURES {
        let loc = fixtures_dir().join(f).to_string_lossy().to_string();
        let counted = |few| {
            Arc::new(deltalens_storage::CountingStorage::new(NoList(
                ObjectStoreStorage::open(&loc, &[]).unwrap(),
                few,
            )))
        };
        let (many, few) = (counted(false), counted(true));
        let a = rt
            .block_on(Table::new(many.clone(), &loc).snapshot(VersionSpec::Latest))
            .unwrap();
        let b = rt
            .block_on(Table::new(few.clone(), &loc).snapshot(VersionSpec::Latest))
            .unwrap();
        assert_eq!(summary(&a), summary(&b), "{loc}");
        let (m, n) = (many.stats().requests, few.stats().requests);
        assert!(n <= m, "{loc}: {n} budgeted requests vs {m}");
        fewer += usize::from(n < m);
        total_many += m;
        total_few += n;
    }
    eprintln!(
        "budgeted discovery: {total_few} requests vs {total_many} over {} fixtures ({fewer} with fewer)",
        FIXTURES.len()
    );
    assert!(fewer > FIXTURES.len() / 2);
}

/// History and the change feed without listing equal the listed ones: a commit whose log
/// records no time is dated by its file's modification time, which a store that cannot
/// list still gives on HEAD (it was the epoch in the change feed, null in the history).
#[test]
fn history_and_changes_without_listing_match_listing() {
    use deltalens_core::changes::Changes;
    use deltalens_core::scan::ScanOptions;

    let rt = runtime();
    let mut tables = Vec::new();
    if let Some(dir) = conformance_dir() {
        for e in std::fs::read_dir(dir.join("tables")).unwrap() {
            tables.push(e.unwrap().path());
        }
    }
    for f in FIXTURES {
        tables.push(fixtures_dir().join(f));
    }
    tables.sort();
    let changes = |table: &Table| -> Result<String, String> {
        rt.block_on(async {
            let c = Changes::new(table, 0, None, ScanOptions::default())
                .await
                .map_err(|e| e.to_string())?;
            let mut batches = Vec::new();
            c.execute(&mut |b| {
                batches.push(b);
                Ok(true)
            })
            .await
            .map_err(|e| e.to_string())?;
            // commit times as numbers (formatting the UTC zone needs chrono-tz)
            let plain = batches
                .iter()
                .map(|b| {
                    let cols = b.columns().iter().map(|c| match c.data_type() {
                        arrow_schema::DataType::Timestamp(_, Some(_)) => {
                            arrow_cast::cast(c, &arrow_schema::DataType::Int64).unwrap()
                        }
                        _ => c.clone(),
                    });
                    let schema = b.schema();
                    let names = schema.fields().iter().map(|f| f.name().clone());
                    arrow_array::RecordBatch::try_from_iter(names.zip(cols).collect::<Vec<_>>())
                        .unwrap()
                })
                .collect::<Vec<_>>();
            let text = arrow_cast::pretty::pretty_format_batches(&plain)
                .map_err(|e| e.to_string())?
                .to_string();
            let mut lines: Vec<&str> = text.lines().collect();
            lines.sort_unstable();
            Ok(lines.join("\n"))
        })
    };
    let (mut histories, mut feeds) = (0, 0);
    let mut problems = Vec::new();
    for path in tables {
        let loc = path.to_string_lossy().to_string();
        let listed = Table::new(Arc::new(ObjectStoreStorage::open(&loc, &[]).unwrap()), &loc);
        let probed = Table::new(
            Arc::new(NoList(ObjectStoreStorage::open(&loc, &[]).unwrap(), false)),
            &loc,
        );
        let Ok(a) = rt.block_on(listed.history(None)) else {
            continue;
        };
        match rt.block_on(probed.history(None)) {
            Ok(b) => {
                // every version, also those at or before a checkpoint when commit 0 is
                // gone (found by a binary search for the earliest commit left)
                let mut missing = Vec::new();
                let mut differ = false;
                for x in &a {
                    match b.iter().find(|y| y.version == x.version) {
                        Some(y) if y == x => {}
                        Some(y) => {
                            differ = true;
                            problems.push(format!("{loc}: history differs: {x:?} vs {y:?}"));
                        }
                        None => missing.push(x.version),
                    }
                }
                if b.iter().any(|y| !a.iter().any(|x| x.version == y.version)) {
                    differ = true;
                    problems.push(format!("{loc}: history without listing has other versions"));
                }
                if !missing.is_empty() {
                    differ = true;
                    problems.push(format!(
                        "{loc}: history without listing leaves out versions {missing:?}"
                    ));
                }
                histories += usize::from(!differ);
            }
            Err(e) => problems.push(format!("{loc}: history without listing failed: {e}")),
        }
        // (tables without CDF from version 0, or that cannot be read, have no feed)
        let Ok(a) = changes(&listed) else { continue };
        match changes(&probed) {
            Ok(b) if a == b => feeds += 1,
            Ok(b) => {
                let diff = a.lines().zip(b.lines()).find(|(x, y)| x != y);
                problems.push(format!("{loc}: changes differ: {diff:?}"));
            }
            Err(e) => problems.push(format!("{loc}: changes without listing failed: {e}")),
        }
    }
    eprintln!(
        "no-list: {histories} histories and {feeds} change feeds equal the listed ones; {} problems",
        problems.len()
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
