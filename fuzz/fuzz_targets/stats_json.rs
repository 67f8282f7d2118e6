//! `add.stats` (file statistics JSON): `actions::top_level_i64` / `Add::num_records`, and
//! data skipping from the statistics (`skipping::FileStats`, `skipping::could_match`) for a
//! fixed set of filters over the columns of every type.
#![no_main]

use std::sync::OnceLock;

use deltalens_core::actions::{Add, top_level_i64};
use deltalens_core::predicate::Predicate;
use deltalens_core::skipping::{FileStats, StatsSource, could_match};
use deltalens_fuzz::table;

const FILTERS: &[&str] = &[
    "id = 2",
    "id > 3 AND id < 10",
    "id <> 1",
    "id IN (1, 5, 9)",
    "id BETWEEN 2 AND 3",
    "id IS NULL",
    "price >= 12.5",
    "price < -1",
    "brand = 'nars'",
    "brand > 'M'",
    "brand LIKE 'n%'",
    "d >= '2021-01-01'",
    "ts < '2021-01-01T00:00:00Z'",
    "ts = '2021-01-02 12:00:00'",
    "ntz > '2020-06-01 00:00:00.5'",
    "flag",
    "flag = false",
    "flag IS NOT NULL",
    "dec > 1.5",
    "dec = -7.89",
    "s.a = 3",
    "s.a IS NULL",
    "part = 'p1'",
    "NOT (id = 2 OR brand IS NULL)",
    "id = NULL",
];

fn filters() -> &'static Vec<Predicate> {
    static F: OnceLock<Vec<Predicate>> = OnceLock::new();
    F.get_or_init(|| {
        FILTERS
            .iter()
            .map(|f| Predicate::parse(f).unwrap_or_else(|e| panic!("{f}: {e}")))
            .collect()
    })
}

deltalens_fuzz::target!(|data| {
    let Some(stats) = deltalens_fuzz::text(data) else {
        return;
    };
    check_top_level(stats);
    let (_, snapshot) = table::table();
    let Some(template) = snapshot.files.first() else {
        return;
    };
    let add = Add {
        stats: Some(stats.to_string()),
        ..template.clone()
    };
    let _ = add.num_records();
    let fs = FileStats::new(snapshot.schema.fields(), snapshot.partition_columns(), &add);
    for p in filters() {
        let _ = could_match(p, &fs, false);
        let _ = could_match(p, &fs, true);
    }
    for path in [&["id"][..], &["s", "a"], &["ts"], &["dec"], &["part"]] {
        let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
        let _ = fs.column(&path);
    }
});

/// `top_level_i64` agrees with a full parse where that is unambiguous: the text is a JSON
/// object without escapes that names `numRecords` once ("`None` when the key is absent,
/// not an integer, or the text is malformed").
fn check_top_level(stats: &str) {
    let got = top_level_i64(stats, "numRecords");
    if stats.contains('\\') || stats.matches("\"numRecords\"").count() != 1 {
        return;
    }
    let Ok(serde_json::Value::Object(doc)) = deltalens_json::from_str::<serde_json::Value>(stats)
    else {
        return;
    };
    let expected = doc.get("numRecords").and_then(serde_json::Value::as_i64);
    assert_eq!(got, expected, "numRecords of {stats}");
}
