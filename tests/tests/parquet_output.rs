//! Parquet written by deltalens (`--format parquet`, the explorer's download; its bit
//! packing is vendor patch 11's single loop) reads back equal to the rows written, for
//! every fixture (in batches of 37 rows: many small runs of bit-packed values and levels).

use deltalens_core::VersionSpec;
use deltalens_core::scan::ScanOptions;
use deltalens_present::{Format, encode};
use deltalens_tests::canonical::canonical_lines;
use deltalens_tests::{FIXTURES, fixtures_dir, open_local, runtime};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

#[test]
fn parquet_output_reads_back_equal() {
    let rt = runtime();
    let mut rows = 0;
    for name in FIXTURES {
        let table = open_local(&fixtures_dir().join(name));
        let snap = rt.block_on(table.snapshot(VersionSpec::Latest)).unwrap();
        let scan = snap
            .scan(ScanOptions {
                batch_size: 37,
                ..Default::default()
            })
            .unwrap();
        let mut batches = Vec::new();
        rt.block_on(scan.execute(&mut |b| {
            batches.push(b);
            Ok(true)
        }))
        .unwrap();
        let schema = scan.schema();
        let bytes = encode(Format::Parquet, &schema, &batches).unwrap();
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes::Bytes::from(bytes))
            .unwrap()
            .build()
            .unwrap();
        let back: Vec<_> = reader.map(|b| b.unwrap()).collect();
        let fields = snap.schema.fields();
        let (got, want) = (
            canonical_lines(&back, fields),
            canonical_lines(&batches, fields),
        );
        assert_eq!(got.len(), want.len(), "{name}");
        assert!(got == want, "{name}: the Parquet read back differs");
        rows += want.len();
    }
    println!(
        "{rows} rows of {} fixtures written as Parquet read back equal",
        FIXTURES.len()
    );
}
