//! Our own fixtures (written by deltalake with tests/fixtures/make_fixtures.py) against
//! deltalake's recorded answers: versions, files, rows, sizes, schema, partitioning,
//! history, protocol and properties.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // tests may

use deltalens_core::{Error, VersionSpec};
use deltalens_tests::{FIXTURES, fixtures_dir, open_local, runtime};
use serde_json::Value;

fn expected(name: &str) -> Value {
    let p = fixtures_dir().join("expected").join(format!("{name}.json"));
    deltalens_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

#[test]
fn fixtures_match_deltalake() {
    let rt = runtime();
    let mut checks = 0;
    for name in FIXTURES {
        let exp = expected(name);
        let table = open_local(&fixtures_dir().join(name));
        let latest = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
        assert_eq!(
            Some(latest.version),
            exp["latest_version"].as_u64(),
            "{name}"
        );
        let p = &exp["protocol"];
        assert_eq!(
            latest.protocol.min_reader_version as i64,
            p["min_reader_version"].as_i64().unwrap()
        );
        assert_eq!(
            latest.protocol.min_writer_version as i64,
            p["min_writer_version"].as_i64().unwrap()
        );
        let props: serde_json::Map<String, Value> = latest
            .properties()
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        assert_eq!(Value::Object(props), exp["properties"], "{name} properties");
        checks += 3;
        for (v, e) in exp["versions"].as_object().unwrap() {
            let v: u64 = v.parse().unwrap();
            let snap = rt.block_on(table.snapshot(VersionSpec::Version(v)));
            if e.get("error").is_some() {
                assert!(snap.is_err(), "{name} v{v} should not be readable");
                checks += 1;
                continue;
            }
            let snap = snap.unwrap_or_else(|err| panic!("{name} v{v}: {err}"));
            assert_eq!(
                snap.num_files() as u64,
                e["files"].as_u64().unwrap(),
                "{name} v{v} files"
            );
            assert_eq!(
                snap.size_bytes().unwrap(),
                e["size_bytes"].as_i64().unwrap(),
                "{name} v{v} size"
            );
            assert_eq!(
                snap.num_rows().unwrap(),
                e["rows"].as_i64(),
                "{name} v{v} rows"
            );
            let fields: Vec<Value> = snap
                .schema
                .fields()
                .iter()
                .map(|f| {
                    serde_json::json!({"name": f.name, "type": f.data_type.type_string(), "nullable": f.nullable})
                })
                .collect();
            assert_eq!(Value::Array(fields), e["fields"], "{name} v{v} schema");
            assert_eq!(
                serde_json::to_value(snap.partition_columns()).unwrap(),
                e["partition_columns"],
                "{name} v{v} partitioning"
            );
            checks += 5;
        }
        let history = rt.block_on(table.history(None)).unwrap();
        let want = exp["history"].as_array().unwrap();
        assert_eq!(history.len(), want.len(), "{name} history length");
        for (h, w) in history.iter().zip(want) {
            assert_eq!(
                Some(h.version),
                w["version"].as_u64(),
                "{name} history order"
            );
            assert_eq!(
                h.operation.as_deref(),
                w["operation"].as_str(),
                "{name} v{}",
                h.version
            );
            assert_eq!(
                h.timestamp,
                w["timestamp"].as_i64(),
                "{name} v{}",
                h.version
            );
            checks += 3;
        }
    }
    eprintln!(
        "fixtures: {} tables, {checks} checks against deltalake",
        FIXTURES.len()
    );
}

#[test]
fn vacuumed_log_reports_valid_range() {
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("overwrite_vacuum"));
    let err = rt
        .block_on(table.snapshot(VersionSpec::Version(1)))
        .unwrap_err();
    assert!(
        matches!(
            err,
            Error::VersionOutOfRange {
                requested: 1,
                earliest: 5,
                latest: 6
            }
        ),
        "{err}"
    );
    assert!(err.to_string().contains("versions 5 to 6"), "{err}");
}

#[test]
fn column_mapping_partition_values_use_physical_names() {
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("column_mapping"));
    let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let mut parts: Vec<String> = snap
        .files
        .iter()
        .map(|f| {
            snap.partition_values_json(f).unwrap()["part"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    parts.sort();
    assert_eq!(parts, ["p1", "p1", "p2", "p2"]);
    let phys = snap.schema.fields()[0].physical_name().unwrap();
    assert!(phys.starts_with("col-"), "{phys}");
    let arrow = snap.schema.to_arrow().unwrap();
    assert!(arrow.field(0).metadata().contains_key("PARQUET:field_id"));
}

#[test]
fn partition_values_are_typed_and_null_partitions_read() {
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("partitioned"));
    // version 2: before the delete of the row with the null date
    let snap = rt
        .block_on(table.snapshot(VersionSpec::Version(2)))
        .unwrap();
    let values: Vec<Value> = snap
        .files
        .iter()
        .map(|f| Value::Object(snap.partition_values_json(f).unwrap()))
        .collect();
    assert!(
        values
            .iter()
            .any(|v| v["event_date"].is_null() && v["city"] == "100%"),
        "{values:?}"
    );
    assert!(values.iter().any(|v| v["city"] == "Zürich"));
    assert!(values.iter().any(|v| v["city"] == "a/b c"));
    // the empty string is a null partition value
    assert!(
        values
            .iter()
            .any(|v| v["event_date"] == "2024-01-03" && v["city"].is_null())
    );
}

#[test]
fn change_feed_is_refused_where_not_enabled() {
    use deltalens_core::changes::Changes;
    use deltalens_core::scan::ScanOptions;
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("partitioned"));
    let e = rt
        .block_on(async {
            let c = Changes::new(&table, 1, None, ScanOptions::default()).await?;
            c.execute(&mut |_| Ok(true)).await
        })
        .unwrap_err();
    assert!(matches!(e, Error::CdfNotEnabled { version: 1 }), "{e}");
    assert!(e.to_string().contains("not enabled at version 1"), "{e}");
}

#[test]
fn statistics_only_as_struct_are_read_from_the_checkpoint() {
    use deltalens_core::predicate::Predicate;
    use deltalens_core::scan::ScanOptions;
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("stats_struct"));
    let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    assert_eq!(snap.checkpoint_version, Some(2));
    assert_eq!(snap.num_rows().unwrap(), Some(30));
    let opts = ScanOptions {
        filter: Some(Predicate::parse("id >= 25").unwrap()),
        ..Default::default()
    };
    let scan = snap.scan(opts).unwrap();
    let mut rows = 0;
    let m = rt
        .block_on(scan.execute(&mut |b| {
            rows += b.num_rows();
            Ok(true)
        }))
        .unwrap();
    assert_eq!(rows, 5);
    assert_eq!(m.files_skipped, 2, "{m:?}");
}

#[test]
fn every_parquet_codec_reads() {
    use arrow_array::cast::AsArray;
    use deltalens_core::scan::ScanOptions;
    let rt = runtime();
    let table = open_local(&fixtures_dir().join("codecs"));
    let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
    let scan = snap.scan(ScanOptions::default()).unwrap();
    let mut seen = std::collections::BTreeMap::new();
    rt.block_on(scan.execute(&mut |b| {
        let codec = b.column(1).as_string::<i32>();
        for i in 0..b.num_rows() {
            *seen.entry(codec.value(i).to_string()).or_insert(0) += 1;
        }
        Ok(true)
    }))
    .unwrap();
    let want: std::collections::BTreeMap<String, i32> = [
        "BROTLI",
        "GZIP",
        "LZ4_RAW",
        "SNAPPY",
        "UNCOMPRESSED",
        "ZSTD",
    ]
    .iter()
    .map(|c| (c.to_string(), 100))
    .collect();
    assert_eq!(seen, want);
}
