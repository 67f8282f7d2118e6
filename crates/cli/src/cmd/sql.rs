//! `deltalens sql "…"`: full DataFusion SQL over Delta tables, natively — joins, window
//! functions, CTEs, several statements separated by `;` (the last one's rows are
//! printed). Tables: a location as a table name (`FROM 's3://bucket/t'`, `FROM './t@v3'`
//! for version 3), `CREATE EXTERNAL TABLE t STORED AS DELTA LOCATION '…' OPTIONS
//! ('version' '3')` (or `'timestamp' '…'`), and `table_changes('…', from[, to])`.

use deltalens_datafusion::datafusion::error::DataFusionError;
use deltalens_datafusion::datafusion::execution::context::SQLOptions;
use deltalens_datafusion::datafusion::prelude::SessionConfig;
use deltalens_datafusion::datafusion::sql::parser::DFParser;
use deltalens_datafusion::{bridge, context_with_memory_limit};
use deltalens_present::Format;
use futures::StreamExt;

use crate::args::parse_kv;
use crate::error::CliError;
use crate::output::Output;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The statements (`;` between them); the last one's rows are printed.
    #[arg(value_name = "SQL")]
    pub sql: String,
    /// Storage option KEY=VALUE for every table (as for the other commands).
    #[arg(short = 'o', long = "option", value_name = "KEY=VALUE", value_parser = parse_kv)]
    pub options: Vec<(String, String)>,
    /// Output format. Through a pipe or to --output every format is the exact data; on a
    /// terminal, characters a terminal would act on or that draw nothing (controls, ESC,
    /// bidi and zero-width characters) are escaped: as \uXXXX in JSON (the same values),
    /// visibly as \x1b or \u{202e} in CSV and TSV (a view, not the bytes: pipe for those).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Partitions DataFusion runs in parallel (each scan plans this many splits).
    #[arg(long, default_value_t = default_partitions())]
    pub partitions: usize,
    /// The memory sorts, joins and aggregates may hold, in bytes (over it, the query
    /// fails with an error naming the limit).
    #[arg(long, default_value_t = 4 << 30)]
    pub max_memory: usize,
}

fn default_partitions() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

pub async fn run(args: Args, out: &Output) -> Result<(), CliError> {
    out.check_rows(args.format, None)?;
    if args.partitions == 0 || args.partitions > 1024 {
        return Err(CliError::Argument {
            expected: "--partitions from 1 to 1024",
            given: args.partitions.to_string(),
        });
    }
    let statements = DFParser::parse_sql(&args.sql).map_err(CliError::from)?;
    if statements.is_empty() {
        return Err(CliError::Argument {
            expected: "at least one SQL statement",
            given: args.sql,
        });
    }
    let config = SessionConfig::new().with_target_partitions(args.partitions);
    let ctx = context_with_memory_limit(config, args.max_memory, &args.options)?;
    // read-only, within the limits given here: no INSERT or COPY (DML), no SET (which
    // could lift --partitions or --max-memory); CREATE EXTERNAL TABLE and views are
    // this session's own
    let allowed = SQLOptions::new()
        .with_allow_dml(false)
        .with_allow_statements(false);
    let last = statements.len() - 1;
    for (i, statement) in statements.into_iter().enumerate() {
        let plan = ctx.state().statement_to_plan(statement).await?;
        allowed.verify_plan(&plan)?;
        let df = ctx.execute_logical_plan(plan).await?;
        if i < last {
            // an earlier statement's rows are not printed: drained, never held
            let mut rows = df.execute_stream().await?;
            while let Some(batch) = rows.next().await {
                batch?;
            }
            continue;
        }
        let schema = bridge::schema_from_datafusion(df.schema().as_arrow())?;
        let mut stream = df.execute_stream().await?;
        let mut w = out.rows(args.format, None, &schema)?;
        while let Some(batch) = stream.next().await {
            w.write(&bridge::batch_from_datafusion(&batch?)?)?;
        }
        w.finish()?;
    }
    Ok(())
}

impl From<DataFusionError> for CliError {
    fn from(e: DataFusionError) -> Self {
        CliError::Sql(Box::new(e))
    }
}

impl From<deltalens_datafusion::Error> for CliError {
    fn from(e: deltalens_datafusion::Error) -> Self {
        CliError::Sql(Box::new(e.into()))
    }
}
