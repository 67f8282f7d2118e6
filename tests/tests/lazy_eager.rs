//! The lazy paths equal the eager one on every table and version of the conformance
//! corpus and the fixtures: a version read without its files
//! (`Table::version_info`) says what the snapshot says, and its streamed files and
//! totals are the snapshot's files and totals.

use deltalens_core::file_totals::FileTotals;
use deltalens_core::{Table, VersionSpec};
use deltalens_tests::{FIXTURES, conformance_dir, fixtures_dir, open_local, runtime};

/// Compare every version of `table`; returns the versions compared.
async fn compare(name: &str, table: &Table, problems: &mut Vec<String>) -> u64 {
    let latest = match table.snapshot(VersionSpec::Latest).await {
        Ok(s) => s.version,
        Err(e) => {
            if table.version_info(VersionSpec::Latest).await.is_ok() {
                problems.push(format!(
                    "{name}: the snapshot is refused ({e}), the lazy read is not"
                ));
            }
            return 0;
        }
    };
    let mut compared = 0;
    for v in 0..=latest {
        let spec = VersionSpec::Version(v);
        let (eager, lazy) = (table.snapshot(spec).await, table.version_info(spec).await);
        let (s, i) = match (eager, lazy) {
            (Ok(s), Ok(i)) => (s, i),
            (Err(_), Err(_)) => continue, // e.g. a version before the earliest checkpoint
            (e, l) => {
                problems.push(format!(
                    "{name} v{v}: eager {:?} but lazy {:?}",
                    e.map(|s| s.version),
                    l.map(|i| i.version)
                ));
                continue;
            }
        };
        compared += 1;
        let at = format!("{name} v{v}");
        if (
            i.version,
            &i.protocol,
            &i.metadata,
            &i.commit_info,
            i.checkpoint_version,
        ) != (
            s.version,
            &s.protocol,
            &s.metadata,
            &s.commit_info,
            s.checkpoint_version,
        ) {
            problems.push(format!("{at}: the version read without files differs"));
        }
        let mut streamed = Vec::new();
        if let Err(e) = i
            .for_each_file(&mut |f| {
                streamed.push(f);
                Ok(true)
            })
            .await
        {
            problems.push(format!("{at}: streaming the files failed: {e}"));
            continue;
        }
        let in_stream_order = streamed.clone();
        streamed.sort_by(|a, b| a.path.cmp(&b.path));
        if streamed != s.files {
            problems.push(format!(
                "{at}: {} streamed files, {} in the snapshot (or they differ)",
                streamed.len(),
                s.files.len()
            ));
        }
        match i.file_totals(&mut |_| true).await {
            Ok(t) if t == FileTotals::of(&s.files) => {}
            other => problems.push(format!("{at}: streamed totals {other:?}")),
        }
        // pages of the stream: a window in the middle, and past the end
        let (offset, limit) = (in_stream_order.len() / 3, 2);
        match i.files_page(offset, Some(limit)).await {
            Ok(page)
                if page[..]
                    == in_stream_order[offset..(offset + limit).min(in_stream_order.len())] => {}
            other => problems.push(format!(
                "{at}: page {offset}+{limit}: {:?}",
                other.map(|p| p.len())
            )),
        }
        match i.files_page(in_stream_order.len() + 1, None).await {
            Ok(p) if p.is_empty() => {}
            other => problems.push(format!(
                "{at}: a page past the end: {:?}",
                other.map(|p| p.len())
            )),
        }
    }
    compared
}

#[test]
fn lazy_reads_equal_the_snapshot_on_every_version() {
    let rt = runtime();
    let mut tables: Vec<(String, Table)> = FIXTURES
        .iter()
        .map(|n| (n.to_string(), open_local(&fixtures_dir().join(n))))
        .collect();
    match conformance_dir() {
        Some(dir) => {
            let listed: serde_json::Value = deltalens_json::from_slice(
                &std::fs::read(dir.join("tables.json")).expect("tables.json"),
            )
            .expect("tables.json is JSON");
            for t in listed.as_array().expect("a list of tables") {
                let name = t["name"].as_str().expect("a name");
                tables.push((name.to_string(), open_local(&dir.join("tables").join(name))));
            }
        }
        None => eprintln!("conformance corpus not found: fixtures only"),
    }
    let mut problems = Vec::new();
    let mut versions = 0;
    for (name, table) in &tables {
        versions += rt.block_on(compare(name, table, &mut problems));
    }
    eprintln!(
        "lazy = eager: {} tables, {versions} versions compared, {} problems",
        tables.len(),
        problems.len()
    );
    assert!(versions > 100, "only {versions} versions compared");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
