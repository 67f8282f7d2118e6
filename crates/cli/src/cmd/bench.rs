//! `deltalens bench`: open the latest version and scan every row, N times,
//! single-threaded (the same work the browser benchmark does); each run and the median.

use deltalens_core::VersionSpec;
use serde_json::{Value, json};

use crate::args::{TableArgs, positive};
use crate::error::CliError;
use crate::output::Doc;
use crate::table::{Opened, with_table};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(flatten)]
    pub table: TableArgs,
    /// How many runs.
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = positive)]
    pub runs: usize,
}

pub async fn run(args: Args) -> Result<Doc, CliError> {
    let t = &args.table;
    with_table(&t.location, &t.options, t.io(), async |o| {
        bench(o, args.runs, t.json).await
    })
    .await
}

/// One benchmark run: open the latest snapshot and scan every row (all columns).
async fn bench_once(t: &Opened) -> Result<(f64, f64, u64, u64), CliError> {
    t.counter.reset();
    let start = std::time::Instant::now();
    let snap = t.table.snapshot(VersionSpec::Latest).await?;
    let opened = start.elapsed().as_secs_f64();
    let scan = snap.scan(deltalens_core::scan::ScanOptions::default())?;
    let mut rows = 0u64;
    // eight interleaved shares on this one thread, as the browser benchmark does
    scan.execute_interleaved(8, &mut |b| {
        rows += b.num_rows() as u64;
        Ok(true)
    })
    .await?;
    let total = start.elapsed().as_secs_f64();
    Ok((opened, total, rows, t.counter.stats().bytes))
}

/// `deltalens bench`: `runs` timed runs of [`bench_once`] and their median.
async fn bench(t: &Opened, runs: usize, json: bool) -> Result<Doc, CliError> {
    let mut out = Vec::with_capacity(runs);
    bench_once(t).await?; // warm-up, as the browser benchmark does
    for _ in 0..runs {
        out.push(bench_once(t).await?);
    }
    let mut totals: Vec<f64> = out.iter().map(|r| r.1).collect();
    totals.sort_by(f64::total_cmp);
    let median = totals.get(totals.len() / 2).copied().unwrap_or(0.0);
    let rows = out.first().map_or(0, |r| r.2);
    let bytes = out.first().map_or(0, |r| r.3);
    if json {
        let runs: Vec<Value> = out
            .iter()
            .map(|(o, t, _, _)| json!({"open_s": o, "total_s": t}))
            .collect();
        return Ok(Doc::Json(format!(
            "{}\n",
            json!({"rows": rows, "bytes": bytes, "median_s": median, "runs": runs})
        )));
    }
    let mut s = String::new();
    for (i, (o, t, _, _)) in out.iter().enumerate() {
        s.push_str(&format!(
            "run {}: open {:.3} s, open+scan {:.3} s\n",
            i + 1,
            o,
            t
        ));
    }
    s.push_str(&format!(
        "median {median:.3} s: {rows} rows, {bytes} bytes, {:.1} M rows/s\n",
        rows as f64 / median.max(1e-9) / 1e6
    ));
    Ok(Doc::Text(s))
}
