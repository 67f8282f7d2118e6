//! Row filters (`--filter`, `filter=`, a query's `WHERE`): `predicate::Predicate::parse`,
//! then a scan of a small table with the filter, with and without pruning by partition
//! values, file statistics, row-group statistics and the page index. Pruning is
//! documented to never change results, so both scans must return the same rows.
#![no_main]

use arrow_array::RecordBatch;
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::ScanOptions;
use deltalens_fuzz::{block_on, table};

fn scan(p: &Predicate, prune: bool) -> Option<Result<Option<RecordBatch>, String>> {
    let (_, snapshot) = table::table();
    let options = ScanOptions {
        filter: Some(p.clone()),
        prune,
        batch_size: 3,
        ..ScanOptions::default()
    };
    let scan = snapshot.scan(options).ok()?;
    let mut batches = Vec::new();
    let run = block_on(scan.execute(&mut |b| {
        batches.push(b);
        Ok(true)
    }));
    Some(match run {
        Ok(_) => {
            let rows = arrow_select::concat::concat_batches(&scan.schema(), &batches)
                .expect("batches of one schema concatenate");
            Ok((rows.num_rows() > 0).then_some(rows))
        }
        Err(e) => Err(e.to_string()),
    })
}

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    let Ok(p) = Predicate::parse(text) else {
        return;
    };
    let _ = p.columns();
    let (Some(pruned), Some(full)) = (scan(&p, true), scan(&p, false)) else {
        return;
    };
    match (&pruned, &full) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "pruning changed the rows of {text:?}"),
        (Err(e), Ok(_)) => panic!("pruning made {text:?} fail: {e}"),
        // an error only when reading every row (or both) is not about pruning
        _ => {}
    }
    // the negation prunes soundly too
    let not = Predicate::Not(Box::new(p));
    if let (Some(Ok(a)), Some(Ok(b))) = (scan(&not, true), scan(&not, false)) {
        assert_eq!(a, b, "pruning changed the rows of NOT ({text:?})");
    }
});
