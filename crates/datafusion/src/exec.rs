//! `DeltaScanExec`: the physical plan node that reads a Delta table's rows, one output
//! partition per split of a plan (or one for a change feed). Each partition runs
//! deltalens' scan on a blocking thread of the runtime, handing batches to DataFusion
//! through a bounded channel (2 batches): a slow consumer slows the scan, and a consumer
//! that stops (a satisfied `LIMIT`) stops it.

use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::TaskContext;
use datafusion::physical_expr::{EquivalenceProperties, PhysicalExpr};
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    ChildrenPropertiesMode, DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning,
    PlanProperties, ReplaceChildrenOptions, SendableRecordBatchStream,
};
use deltalens_core::Split;
use deltalens_core::changes::Changes;
use deltalens_core::scan::ScanOptions;

use crate::blocking::spawn;
use crate::bridge::batch_to_datafusion;
use crate::error::Error;
use crate::location::{Location, Opened};

/// What a scan node reads.
#[derive(Debug, Clone)]
pub enum Source {
    /// The splits of a plan: output partition `i` reads split `i`.
    Splits(Vec<Split>),
    /// The change rows of versions `from..=to` (`to`: the latest), as `table_changes`.
    Changes {
        /// First version.
        from: u64,
        /// Last version (inclusive), or the latest.
        to: Option<u64>,
    },
}

/// Reads a Delta table's rows (see the module documentation).
#[derive(Debug)]
pub struct DeltaScanExec {
    pub(crate) opened: Option<Opened>,
    pub(crate) location: Option<Location>,
    pub(crate) source: Source,
    pub(crate) options: ScanOptions,
    pub(crate) schema: SchemaRef,
    properties: Arc<PlanProperties>,
}

impl DeltaScanExec {
    /// A node reading `source` of the table `opened` (here) or `location` (opened where
    /// the node runs: a shipped plan), with `options` (columns, filter, limit, budgets),
    /// producing batches of `schema`.
    pub fn new(
        opened: Option<Opened>,
        location: Option<Location>,
        source: Source,
        options: ScanOptions,
        schema: SchemaRef,
    ) -> Self {
        let partitions = match &source {
            Source::Splits(s) => s.len().max(1),
            Source::Changes { .. } => 1,
        };
        let properties = PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(partitions),
            EmissionType::Incremental,
            Boundedness::Bounded,
        );
        DeltaScanExec {
            opened,
            location,
            source,
            options,
            schema,
            properties: Arc::new(properties),
        }
    }

    /// The splits this node reads (none for a change feed).
    pub fn splits(&self) -> &[Split] {
        match &self.source {
            Source::Splits(s) => s,
            Source::Changes { .. } => &[],
        }
    }

    /// The table's location, if the node can be shipped to another process.
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }
}

impl DisplayAs for DeltaScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "DeltaScanExec: ")?;
        match &self.source {
            Source::Splits(s) => {
                let files: usize = s.iter().map(|s| s.files.len()).sum();
                let version = s.first().map(|s| s.version.to_string());
                write!(
                    f,
                    "version={}, splits={}, files={files}",
                    version.as_deref().unwrap_or("-"),
                    s.len()
                )?;
            }
            Source::Changes { from, to } => {
                let to = to.map(|v| v.to_string());
                write!(f, "changes={from}..={}", to.as_deref().unwrap_or("latest"))?;
            }
        }
        if let Some(filter) = &self.options.filter {
            write!(f, ", filter={filter}")?;
        }
        if let Some(limit) = self.options.limit {
            write!(f, ", limit={limit}")?;
        }
        Ok(())
    }
}

type Batches = tokio::sync::mpsc::Sender<DfResult<datafusion::arrow::array::RecordBatch>>;

/// `scan` until it is done or the consumer of `tx` is gone (a `LIMIT` met, a query
/// cancelled or failed elsewhere): a selective filter may read a split for long between
/// two batches, and the consumer's going stops it then, not at the next batch.
async fn until_consumer_gone(
    tx: &Batches,
    scan: impl Future<Output = DfResult<()>>,
) -> DfResult<()> {
    let gone = tx.closed();
    futures::pin_mut!(gone, scan);
    match futures::future::select(scan, gone).await {
        futures::future::Either::Left((result, _)) => result,
        futures::future::Either::Right(((), _)) => Ok(()),
    }
}

async fn read(
    opened: Option<Opened>,
    location: Option<Location>,
    work: Option<Source>,
    options: ScanOptions,
    schema: SchemaRef,
    tx: Batches,
) -> DfResult<()> {
    {
        let opened = match (opened, location) {
            (Some(o), _) => o,
            (None, Some(l)) => l.open().await?,
            (None, None) => {
                return Err(DataFusionError::Internal(
                    "a Delta scan with neither a table nor a location".into(),
                ));
            }
        };
        let mut failed: Option<Error> = None;
        let mut sink = |b: RecordBatch| -> deltalens_core::Result<bool> {
            match batch_to_datafusion(&b, &schema) {
                // unconstrained: the send runs inside the scan's poll, outside Tokio's
                // task budget (a spent budget would make the send wait forever)
                Ok(out) => Ok(futures::executor::block_on(tokio::task::unconstrained(
                    tx.send(Ok(out)),
                ))
                .is_ok()),
                Err(e) => {
                    failed = Some(e);
                    Ok(false)
                }
            }
        };
        let table = opened.table.clone();
        match work {
            None => {}
            Some(Source::Splits(s)) => {
                for split in s {
                    split
                        .execute(table.clone(), options.clone(), &mut sink)
                        .await
                        .map_err(Error::from)?;
                }
            }
            Some(Source::Changes { from, to }) => {
                Changes::new(&table, from, to, options.clone())
                    .await
                    .map_err(Error::from)?
                    .execute(&mut sink)
                    .await
                    .map_err(Error::from)?;
            }
        }
        drop(opened);
        match failed {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}

impl ExecutionPlan for DeltaScanExec {
    fn name(&self) -> &str {
        "DeltaScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![]
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }

    fn replace_children(
        self: Arc<Self>,
        _children: Vec<Arc<dyn ExecutionPlan>>,
        _options: ReplaceChildrenOptions,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        Ok(self)
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> DfResult<SendableRecordBatchStream> {
        let work = match &self.source {
            Source::Splits(s) if s.is_empty() && partition == 0 => None,
            Source::Splits(s) => Some(Source::Splits(vec![s.get(partition).cloned().ok_or_else(
                || {
                    DataFusionError::Internal(format!(
                        "DeltaScanExec has {} partitions, not {}",
                        s.len(),
                        partition + 1
                    ))
                },
            )?])),
            changes @ Source::Changes { .. } if partition == 0 => Some(changes.clone()),
            Source::Changes { .. } => {
                return Err(DataFusionError::Internal(format!(
                    "a change feed has 1 partition, not {}",
                    partition + 1
                )));
            }
        };
        let (tx, rx) = tokio::sync::mpsc::channel(2);
        let (opened, location) = (self.opened.clone(), self.location.clone());
        let (options, schema) = (self.options.clone(), Arc::clone(&self.schema));
        // the scan's future is not Send (its sink is borrowed across awaits): it is made
        // and driven on a thread of its own (see crate::blocking)
        spawn("deltalens-scan", move |handle| {
            let consumer = tx.clone();
            // a panic must not end the stream as if the scan were done
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let scan = read(opened, location, work, options, schema, tx);
                handle.block_on(until_consumer_gone(&consumer, scan))
            }))
            .unwrap_or_else(|_| {
                Err(DataFusionError::Internal(
                    "a Delta scan thread panicked".into(),
                ))
            });
            if let Err(e) = result {
                let _ = futures::executor::block_on(consumer.send(Err(e)));
            }
        })?;
        let batches =
            futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|b| (b, rx)) });
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            Arc::clone(&self.schema),
            batches,
        )))
    }
}
