//! `table_changes(location, from_version [, to_version])`: a table's change data feed as
//! a table (the rows with `_change_type`, `_commit_version` and `_commit_timestamp`), as
//! Trino's and Spark's `table_changes` give it. The range is checked and the schema read
//! when the query is planned.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableFunctionArgs, TableFunctionImpl};
use datafusion::common::ScalarValue;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::Expr;
use datafusion::physical_plan::ExecutionPlan;
use deltalens_core::changes::Changes;
use deltalens_core::scan::ScanOptions;

use crate::blocking::off_task;
use crate::bridge::schema_to_datafusion;
use crate::error::{Error, Result};
use crate::location::{Location, Opened};
use crate::provider::projected;
use crate::source::{Work, scan_exec};

/// The change rows of versions `from..=to` of a table.
#[derive(Debug)]
pub struct ChangesProvider {
    /// The open table (none in a provider decoded from a shipped plan: it is opened
    /// where the scan runs).
    opened: Option<Opened>,
    location: Location,
    from: u64,
    to: u64,
    schema: SchemaRef,
}

impl ChangesProvider {
    /// The changes of versions `from..=to` (`to`: the latest) of the table at `location`.
    pub async fn open(location: Location, from: u64, to: Option<u64>) -> Result<Self> {
        off_task(move || async move {
            let opened = location.open().await?;
            let changes = Changes::new(&opened.table, from, to, ScanOptions::default()).await?;
            let schema = changes.schema()?;
            Ok(ChangesProvider {
                to: changes.to,
                schema: schema_to_datafusion(&schema)?,
                opened: Some(opened),
                location,
                from,
            })
        })
        .await
    }
}

impl ChangesProvider {
    /// The changes of versions `from..=to` of the table at `location`, with the schema a
    /// shipped plan carries (`crate::codec::DeltaLogicalCodec`): opened where it is read.
    pub(crate) fn shipped(location: Location, from: u64, to: u64, schema: SchemaRef) -> Self {
        ChangesProvider {
            opened: None,
            location,
            from,
            to,
            schema,
        }
    }

    /// The table's location, the range's first and last versions.
    pub fn range(&self) -> (&Location, u64, u64) {
        (&self.location, self.from, self.to)
    }
}

#[async_trait]
impl TableProvider for ChangesProvider {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        _filters: &[Expr],
        _limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let projected = projected(&self.schema, projection)?;
        let options = ScanOptions {
            batch_size: state.config().batch_size().max(1),
            ..ScanOptions::default()
        };
        let work = vec![Work::Changes {
            from: self.from,
            to: Some(self.to),
        }];
        Ok(scan_exec(
            self.opened.clone(),
            Some(self.location.without_credentials()),
            work,
            options,
            projected,
        ))
    }
}

/// The `table_changes` table function (register it with
/// `SessionContext::register_udtf("table_changes", ...)`).
#[derive(Debug, Default)]
pub struct TableChangesFunction {
    /// Store options for the tables it opens.
    pub options: Vec<(String, String)>,
}

const USAGE: &str = "table_changes('table location', from_version [, to_version])";

fn version(e: &Expr, which: &str) -> Result<u64> {
    let bad = || {
        Error::InvalidArgument(format!(
            "{USAGE}: the {which} must be a version number (0 or more), not {e}"
        ))
    };
    match e {
        Expr::Literal(v, _) => match v {
            ScalarValue::Int64(Some(n)) => u64::try_from(*n).map_err(|_| bad()),
            ScalarValue::UInt64(Some(n)) => Ok(*n),
            ScalarValue::Int32(Some(n)) => u64::try_from(*n).map_err(|_| bad()),
            _ => Err(bad()),
        },
        _ => Err(bad()),
    }
}

/// Run `f` to completion from DataFusion's synchronous planning (a table function is
/// called while a query is planned): on a multi-threaded Tokio runtime only, whose other
/// workers keep running meanwhile.
fn block_on<F: Future>(f: F) -> Result<F::Output> {
    use tokio::runtime::{Handle, RuntimeFlavor};
    let handle = Handle::try_current()
        .map_err(|e| Error::Internal(format!("table_changes runs on a Tokio runtime: {e}")))?;
    if handle.runtime_flavor() != RuntimeFlavor::MultiThread {
        return Err(Error::InvalidArgument(
            "table_changes reads the log while the query is planned: run DataFusion on a multi-threaded Tokio runtime".into(),
        ));
    }
    Ok(tokio::task::block_in_place(|| handle.block_on(f)))
}

impl TableFunctionImpl for TableChangesFunction {
    fn call_with_args(&self, args: TableFunctionArgs) -> DfResult<Arc<dyn TableProvider>> {
        let exprs = args.exprs();
        let url = match exprs.first() {
            Some(Expr::Literal(
                ScalarValue::Utf8(Some(s))
                | ScalarValue::LargeUtf8(Some(s))
                | ScalarValue::Utf8View(Some(s)),
                _,
            )) => s.clone(),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "{USAGE}: the first argument is the table's location, in quotes"
                ))
                .into());
            }
        };
        if !(2..=3).contains(&exprs.len()) {
            return Err(Error::InvalidArgument(format!(
                "{USAGE}: {} arguments given",
                exprs.len()
            ))
            .into());
        }
        let from = version(&exprs[1], "start version")?;
        let to = exprs
            .get(2)
            .map(|e| version(e, "end version"))
            .transpose()?;
        let location = Location {
            url,
            options: self.options.clone(),
        };
        let provider = block_on(ChangesProvider::open(location, from, to))??;
        Ok(Arc::new(provider))
    }
}
