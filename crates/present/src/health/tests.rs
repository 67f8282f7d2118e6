//! Each finding on small constructed inputs: empty tables, no partitions, no statistics,
//! hostile retention strings and sizes.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use super::*;
use deltalens_core::HistoryEntry;
use serde_json::json;

const DAY: i64 = 24 * 3_600_000;
const NOW: i64 = 1_700_000_000_000;

fn metadata(partition_columns: &[&str], config: serde_json::Value) -> Metadata {
    deltalens_json::from_value(json!({
        "id": "t", "format": {"provider": "parquet", "options": {}},
        "schemaString": "{\"type\":\"struct\",\"fields\":[]}",
        "partitionColumns": partition_columns, "configuration": config,
    }))
    .unwrap()
}

fn add(size: i64, rows: Option<i64>, dv: Option<i64>) -> Add {
    let mut a: Add = deltalens_json::from_value(json!({
        "path": "p", "partitionValues": {}, "size": size, "modificationTime": 0,
        "dataChange": true,
    }))
    .unwrap();
    a.stats = rows.map(|n| format!("{{\"numRecords\":{n}}}"));
    a.deletion_vector = dv.map(|c| {
        deltalens_json::from_value(json!({
            "storageType": "u", "pathOrInlineDv": "x", "sizeInBytes": 1, "cardinality": c,
        }))
        .unwrap()
    });
    a
}

fn remove(size: Option<i64>, at: Option<i64>) -> Remove {
    Remove {
        path: "r".into(),
        deletion_timestamp: at,
        data_change: true,
        partition_values: None,
        size,
        stats: None,
        deletion_vector: None,
    }
}

fn entry(version: u64, op: &str, ts: i64) -> HistoryEntry {
    HistoryEntry {
        version,
        timestamp: Some(ts),
        user_id: None,
        user_name: None,
        operation: Some(op.into()),
        operation_parameters: None,
        cluster_id: None,
        read_version: None,
        isolation_level: None,
        is_blind_append: None,
        operation_metrics: None,
        in_commit_timestamp: None,
        engine_info: None,
    }
}

/// The report of `files` (unpartitioned) at `version`.
fn report(md: &Metadata, version: u64, cp: Option<u64>, files: &[Add]) -> Health {
    let mut t = HealthTally::new(md, NOW);
    for f in files {
        t.file(f, None);
    }
    build(md, version, cp, t, &[])
}

fn build(
    md: &Metadata,
    version: u64,
    cp: Option<u64>,
    t: HealthTally,
    history: &[HistoryEntry],
) -> Health {
    let facts = VersionFacts {
        location: "mem://t",
        version,
        metadata: md,
        checkpoint_version: cp,
    };
    Health::build(facts, t, history, NOW)
}

fn finding<'a>(h: &'a Health, id: &str) -> &'a Finding {
    h.findings.iter().find(|f| f.id == id).unwrap()
}

#[test]
fn an_empty_table_is_healthy_and_says_so() {
    let md = metadata(&[], json!({}));
    let h = report(&md, 0, None, &[]);
    assert_eq!(h.files, FileFigures::default());
    assert!(
        h.size_histogram
            .iter()
            .all(|b| b.files == 0 && b.bytes == 0)
    );
    assert_eq!(h.size_histogram.len(), 7);
    assert_eq!(finding(&h, "small_files").summary, "no active files");
    assert_eq!(finding(&h, "small_files").severity, Severity::Ok);
    assert_eq!(finding(&h, "partition_skew").summary, "not partitioned");
    assert!(h.partitions.is_none());
    assert_eq!(finding(&h, "deletion_vectors").severity, Severity::Ok);
    assert_eq!(finding(&h, "files_without_stats").severity, Severity::Ok);
    assert_eq!(finding(&h, "checkpoint").severity, Severity::Ok);
    assert_eq!(h.checkpoint.commits_since, 1);
    assert_eq!(finding(&h, "tombstones").severity, Severity::Ok);
    assert!(h.warnings.is_empty());
    // every finding has its sentences
    assert_eq!(h.findings.len(), 7);
    for f in &h.findings {
        assert!(!f.meaning.is_empty() && !f.remedy.is_empty(), "{}", f.id);
    }
}

#[test]
fn many_small_files_warn_few_inform() {
    let md = metadata(&[], json!({}));
    let small: Vec<Add> = (0..150).map(|_| add(MIB, Some(1), None)).collect();
    let h = report(&md, 1, None, &small);
    let f = finding(&h, "small_files");
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(f.summary, "150 of 150 files (100.0%) are under 32 MiB");
    assert_eq!(h.files.files_under_32_mib, 150);
    assert_eq!(h.files.bytes_under_32_mib, 150 * MIB as u64);
    let h = report(&md, 1, None, &small[..50]);
    assert_eq!(finding(&h, "small_files").severity, Severity::Info);
    // half small, half large: not more than half
    let mut mixed: Vec<Add> = (0..100).map(|_| add(200 * MIB, Some(1), None)).collect();
    mixed.extend(small[..100].iter().cloned());
    let h = report(&md, 1, None, &mixed);
    assert_eq!(finding(&h, "small_files").severity, Severity::Ok);
    assert_eq!(h.files.files_under_128_mib, 100);
}

#[test]
fn the_histogram_buckets_sizes_at_their_bounds() {
    let md = metadata(&[], json!({}));
    let sizes = [
        0,
        MIB - 1,
        MIB,
        8 * MIB,
        32 * MIB - 1,
        32 * MIB,
        128 * MIB,
        512 * MIB,
        1024 * MIB,
        i64::MAX,
    ];
    let files: Vec<Add> = sizes.iter().map(|s| add(*s, Some(1), None)).collect();
    let h = report(&md, 1, None, &files);
    let counts: Vec<u64> = h.size_histogram.iter().map(|b| b.files).collect();
    assert_eq!(counts, [2, 1, 2, 1, 1, 1, 2]);
    assert_eq!(h.size_histogram[1].bytes, MIB as u64);
    assert_eq!(h.size_histogram[0].max_bytes, Some(MIB as u64));
    assert_eq!(h.size_histogram[6].max_bytes, None);
    assert_eq!(h.files.files_under_32_mib, 5);
    assert_eq!(h.files.files_under_128_mib, 6);
}

#[test]
fn hostile_sizes_are_clamped_and_reported_never_wrapped() {
    let md = metadata(&[], json!({}));
    let files = [
        add(-5, Some(-3), Some(-1)),
        add(i64::MAX, Some(i64::MAX), None),
        add(i64::MAX, Some(i64::MAX), None),
        add(i64::MAX, Some(1), None),
    ];
    let h = report(&md, 1, None, &files);
    assert_eq!(h.files.files, 4);
    assert_eq!(h.files.bytes, u64::MAX, "saturated, not wrapped");
    assert_eq!(
        h.size_histogram[0].files, 1,
        "a negative size counts as 0 bytes"
    );
    let w = h.warnings.join("\n");
    assert!(w.contains("1 negative file sizes"), "{w}");
    // a negative row count is no count (core's num_records), and a log with a negative
    // deletion vector cardinality is refused when it is read: neither reaches the tally
    assert!(!w.contains("negative row counts"), "{w}");
    assert!(w.contains("passes 64 bits"), "{w}");
    // the text renders without panicking on the extremes
    assert!(h.text().contains("warning: "));
}

#[test]
fn partition_skew_compares_the_largest_with_the_median() {
    let md = metadata(&["d"], json!({}));
    let mut t = HealthTally::new(&md, NOW);
    let part = |v: &str| {
        let mut m = serde_json::Map::new();
        m.insert("d".into(), json!(v));
        m
    };
    // a: 100 MiB in two files; b and c: 10 MiB each; c has a file without statistics
    t.file(&add(60 * MIB, Some(6), Some(1)), Some(&part("a")));
    t.file(&add(40 * MIB, Some(4), None), Some(&part("a")));
    t.file(&add(10 * MIB, Some(1), None), Some(&part("b")));
    t.file(&add(10 * MIB, None, None), Some(&part("c")));
    let h = build(&md, 3, None, t, &[]);
    let p = h.partitions.as_ref().unwrap();
    assert_eq!(p.partitions, 3);
    assert_eq!(p.largest_bytes, 100 * MIB as u64);
    assert_eq!(p.median_bytes, 10 * MIB as u64);
    assert_eq!(p.largest_to_median, Some(10.0));
    assert_eq!(p.largest_share, Some(100.0 / 120.0));
    assert_eq!(p.top[0].partition, "d=a");
    assert_eq!(p.top[0].files, 2);
    assert_eq!(
        p.top[0].rows,
        Some(9),
        "statistics minus the deletion vector"
    );
    assert_eq!(p.top[2].rows, None, "a file without statistics");
    assert!(p.other.is_none());
    assert_eq!(finding(&h, "partition_skew").severity, Severity::Warn);

    // past TOP_PARTITIONS, the rest is one "other" slice; even counts take the mean
    let mut t = HealthTally::new(&md, NOW);
    for i in 0..12 {
        t.file(&add(i + 1, Some(1), None), Some(&part(&format!("p{i:02}"))));
    }
    let h = build(&md, 3, None, t, &[]);
    let p = h.partitions.as_ref().unwrap();
    assert_eq!(p.top.len(), TOP_PARTITIONS);
    assert_eq!(p.top[0].partition, "d=p11");
    let other = p.other.as_ref().unwrap();
    assert_eq!(
        (other.partitions, other.bytes, other.rows),
        (2, 1 + 2, Some(2))
    );
    assert_eq!(other.partition, "other (2 partitions)");
    assert_eq!(p.median_bytes, 6, "(6 + 7) / 2");
    assert_eq!(finding(&h, "partition_skew").severity, Severity::Ok);
}

#[test]
fn deletion_vectors_report_the_hidden_share() {
    let md = metadata(&[], json!({}));
    let h = report(
        &md,
        1,
        None,
        &[add(1, Some(50), Some(20)), add(1, Some(50), None)],
    );
    assert_eq!(h.files.files_with_deletion_vectors, 1);
    assert_eq!(h.files.rows_hidden_by_deletion_vectors, 20);
    assert_eq!(h.files.records, 100);
    let f = finding(&h, "deletion_vectors");
    assert_eq!(f.severity, Severity::Warn);
    assert!(
        f.summary.contains("20 rows (20.0% of the rows)"),
        "{}",
        f.summary
    );
    assert!(f.remedy.contains("REORG TABLE"));
    let h = report(&md, 1, None, &[add(1, Some(100), Some(5))]);
    assert_eq!(finding(&h, "deletion_vectors").severity, Severity::Info);
}

#[test]
fn files_without_statistics_are_counted() {
    let md = metadata(&[], json!({}));
    let h = report(&md, 1, None, &[add(1, None, None), add(1, Some(2), None)]);
    assert_eq!(h.files.files_without_stats, 1);
    assert_eq!(h.files.records, 2);
    let f = finding(&h, "files_without_stats");
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(
        f.summary,
        "1 of 2 files (50.0%) have no row count in their statistics"
    );
    assert!(f.remedy.contains("delta.dataSkippingNumIndexedCols"));
    let few: Vec<Add> = (0..20)
        .map(|i| add(1, (i > 0).then_some(1), None))
        .collect();
    let h = report(&md, 1, None, &few);
    assert_eq!(finding(&h, "files_without_stats").severity, Severity::Info);
}

#[test]
fn the_checkpoint_finding_counts_the_commits_to_replay() {
    let md = metadata(&[], json!({"delta.checkpointInterval": "10"}));
    let h = report(&md, 150, None, &[]);
    let f = finding(&h, "checkpoint");
    assert_eq!(f.severity, Severity::Warn);
    assert_eq!(
        f.summary,
        "no checkpoint: opening the table replays 151 commits"
    );
    let history = [entry(140, "WRITE", NOW - 2 * DAY)];
    let h = build(&md, 150, Some(140), HealthTally::new(&md, NOW), &history);
    assert_eq!(h.checkpoint.commits_since, 10);
    assert_eq!(h.checkpoint.interval.as_deref(), Some("10"));
    let w = h.checkpoint.written.as_ref().unwrap();
    assert_eq!((w.version, w.age_ms), (140, Some(2 * DAY)));
    assert_eq!(finding(&h, "checkpoint").severity, Severity::Ok);
    let h = build(&md, 300, Some(140), HealthTally::new(&md, NOW), &[]);
    assert_eq!(finding(&h, "checkpoint").severity, Severity::Warn);
    assert!(h.checkpoint.written.is_none());
}

#[test]
fn maintenance_is_read_from_the_history_at_or_before_the_version() {
    let md = metadata(&[], json!({}));
    let history = [
        entry(20, "OPTIMIZE", NOW),
        entry(9, "VACUUM END", NOW - 3 * DAY),
        entry(8, "VACUUM START", NOW - 3 * DAY - 1000),
        entry(6, "optimize", NOW - 5 * DAY),
        entry(5, "OPTIMIZE", NOW - 6 * DAY),
        entry(4, "WRITE", NOW - 7 * DAY),
    ];
    let h = build(&md, 10, None, HealthTally::new(&md, NOW), &history);
    let m = &h.maintenance;
    assert_eq!(m.commits_read, 5, "version 20 is after the version");
    assert_eq!(m.oldest_version_read, Some(4));
    let o = m.last_optimize.as_ref().unwrap();
    assert_eq!((o.version, o.age_ms), (6, Some(5 * DAY)));
    assert_eq!(m.last_vacuum_end.as_ref().unwrap().version, 9);
    assert_eq!(
        m.last_vacuum_start.as_ref().unwrap().age_ms,
        Some(3 * DAY + 1000)
    );
    assert_eq!(finding(&h, "maintenance").severity, Severity::Ok);
    let h = build(&md, 10, None, HealthTally::new(&md, NOW), &history[5..]);
    let f = finding(&h, "maintenance");
    assert_eq!(f.severity, Severity::Info);
    assert!(
        f.summary.contains("OPTIMIZE: not in the last 1 commits"),
        "{}",
        f.summary
    );
}

#[test]
fn tombstones_within_the_retention_are_what_vacuum_keeps() {
    let md = metadata(
        &[],
        json!({"delta.deletedFileRetentionDuration": "interval 1 day"}),
    );
    let mut t = HealthTally::new(&md, NOW);
    t.tombstone(&remove(Some(100), Some(NOW - 3_600_000))); // within
    t.tombstone(&remove(Some(10), Some(NOW - DAY))); // exactly a day: expired
    t.tombstone(&remove(Some(1), Some(NOW - 2 * DAY))); // expired
    t.tombstone(&remove(None, Some(NOW))); // within, no size
    t.tombstone(&remove(Some(-7), None)); // no time, hostile size
    t.tombstone(&remove(Some(1), Some(i64::MAX))); // hostile time: within, no wrap
    t.tombstone(&remove(Some(1), Some(i64::MIN)));
    let h = build(&md, 1, None, t, &[]);
    let tb = &h.tombstones;
    assert_eq!(tb.retention_ms, Some(DAY));
    assert_eq!(tb.tombstones, 7);
    assert_eq!(tb.bytes, 100 + 10 + 1 + 1 + 1);
    assert_eq!(tb.within_retention, Some(3));
    assert_eq!(tb.within_retention_bytes, Some(101));
    assert_eq!((tb.without_size, tb.without_timestamp), (1, 1));
    assert_eq!(finding(&h, "tombstones").severity, Severity::Info);
    assert!(h.warnings.join(" ").contains("negative tombstone sizes"));

    // the default retention is a week
    let md = metadata(&[], json!({}));
    let mut t = HealthTally::new(&md, NOW);
    t.tombstone(&remove(Some(1), Some(NOW - 6 * DAY)));
    let h = build(&md, 1, None, t, &[]);
    assert_eq!(h.tombstones.retention, "interval 1 week");
    assert_eq!(h.tombstones.within_retention, Some(1));
}

#[test]
fn a_hostile_retention_string_is_unknown_not_a_panic() {
    for bad in [
        "interval 5 fortnights",
        "interval -1 days",
        "interval 99999999999999999 weeks",
        "",
        "DROP TABLE",
    ] {
        let md = metadata(&[], json!({"delta.deletedFileRetentionDuration": bad}));
        let mut t = HealthTally::new(&md, NOW);
        t.tombstone(&remove(Some(1), Some(NOW)));
        let h = build(&md, 1, None, t, &[]);
        assert_eq!(h.tombstones.retention_ms, None, "{bad}");
        assert_eq!(h.tombstones.within_retention, None, "{bad}");
        let e = h.tombstones.retention_error.as_deref().unwrap();
        assert!(e.contains("delta.deletedFileRetentionDuration"), "{e}");
        let f = finding(&h, "tombstones");
        assert_eq!(f.severity, Severity::Warn, "{bad}");
        assert!(f.summary.contains("unknown within"), "{}", f.summary);
    }
}

#[test]
fn the_text_shows_each_finding_with_meaning_and_remedy() {
    let md = metadata(&["d"], json!({}));
    let mut t = HealthTally::new(&md, NOW);
    let mut m = serde_json::Map::new();
    m.insert("d".into(), json!(null));
    t.file(&add(MIB, Some(1), None), Some(&m));
    let h = build(&md, 1, None, t, &[]);
    let text = h.text();
    for needle in [
        "table health of mem://t at version 1",
        "small files",
        "partition skew",
        "what it means",
        "usual remedy",
        "file sizes:",
        "largest partitions:",
        "d=null",
        "1–8 MiB",
    ] {
        assert!(text.contains(needle), "{needle}: {text}");
    }
}

#[test]
fn the_json_shape_is_stable() {
    let md = metadata(&[], json!({}));
    let h = report(&md, 1, None, &[add(1, Some(1), None)]);
    let v = serde_json::to_value(&h).unwrap();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "checkpoint",
            "files",
            "findings",
            "location",
            "maintenance",
            "now_ms",
            "partitions",
            "size_histogram",
            "tombstones",
            "version",
            "warnings"
        ]
    );
    let f = &v["findings"][0];
    assert_eq!(f["id"], "small_files");
    assert_eq!(f["severity"], "info");
    assert!(f["figures"][0]["label"].is_string());
}
