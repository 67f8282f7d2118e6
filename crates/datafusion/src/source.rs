//! A Delta scan as DataFusion's file scan: a `DataSourceExec` over a `FileScanConfig`
//! whose file groups are the plan's splits (one `PartitionedFile` per split, carrying
//! it as a [`Work`] extension) and whose [`DeltaSource`] reads each through deltalens.
//! Output partition `i` reads file group `i`, and only it (no work stealing between
//! partitions, no repartitioning of files).
//!
//! Why a file scan rather than a plan node of our own: engines that distribute
//! DataFusion plans narrow a stage's file scans to the partitions a task runs (Ballista's
//! scheduler keeps only the task's file groups), and know nothing of other leaves, whose
//! every task would read all partitions from the first. A Delta scan so narrowed reads
//! only its task's splits.
//!
//! Each unit of work runs deltalens' scan on a thread of its own (see
//! `crate::blocking`), handing batches to DataFusion through a bounded channel (2
//! batches): a slow consumer slows the scan, and a consumer that stops (a satisfied
//! `LIMIT`) stops it. Deletion vectors, column mapping, partition values and type
//! widening are deltalens' scan's: the file scan's table schema is the scan's output
//! schema, with no partition columns of DataFusion's. The object store DataFusion hands
//! the source is not used: deltalens reads through the table's own storage.

use std::fmt;
use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::tree_node::TreeNodeRecursion;
use datafusion::datasource::listing::PartitionedFile;
use datafusion::datasource::physical_plan::{
    FileGroup, FileOpenFuture, FileOpener, FileScanConfig, FileScanConfigBuilder, FileSource,
};
use datafusion::datasource::source::DataSourceExec;
use datafusion::datasource::table_schema::TableSchema;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::object_store::ObjectStoreUrl;
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use datafusion::physical_plan::{DisplayFormatType, ExecutionPlan, Partitioning};
use deltalens_core::Split;
use deltalens_core::changes::Changes;
use deltalens_core::scan::ScanOptions;
use futures::StreamExt;
use serde::{Deserialize, Serialize};

use crate::blocking::spawn;
use crate::bridge::batch_to_datafusion;
use crate::error::Error;
use crate::location::{Location, Opened};

/// A unit of a Delta scan's work: what one `PartitionedFile` of the file scan reads.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub enum Work {
    /// One split of a plan.
    Split(Box<Split>),
    /// The change rows of versions `from..=to` (`to`: the latest), as `table_changes`.
    Changes {
        /// First version.
        from: u64,
        /// Last version (inclusive), or the latest.
        to: Option<u64>,
    },
}

impl Work {
    /// The name the unit is shown by in plans (DataFusion shows a file scan's files).
    fn name(&self) -> String {
        match self {
            Work::Split(s) => format!("delta-v{}-split-{}", s.version, s.id),
            Work::Changes { from, to } => match to {
                Some(to) => format!("delta-changes-{from}-{to}"),
                None => format!("delta-changes-{from}-latest"),
            },
        }
    }

    /// The unit as the file of a file scan.
    pub(crate) fn into_file(self) -> PartitionedFile {
        PartitionedFile::new(self.name(), self.bytes()).with_extension(self)
    }

    fn bytes(&self) -> u64 {
        match self {
            Work::Split(s) => s.bytes,
            Work::Changes { .. } => 0,
        }
    }
}

/// Reads [`Work`] units of one Delta table (see the module documentation).
#[derive(Debug, Clone)]
pub struct DeltaSource {
    opened: Option<Opened>,
    location: Option<Location>,
    options: ScanOptions,
    schema: SchemaRef,
    table_schema: TableSchema,
    metrics: ExecutionPlanMetricsSet,
}

impl DeltaSource {
    /// The table's location, if the scan can be shipped to another process.
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    /// The scan's options (columns, filter, limit, budgets).
    pub fn options(&self) -> &ScanOptions {
        &self.options
    }

    /// The scan's output schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }
}

/// A Delta scan reading `work`, one output partition per unit, of the table `opened`
/// (here) or `location` (opened where the scan runs: a shipped plan), with `options`,
/// producing batches of `schema`, at most the options' limit of rows (DataFusion's
/// fetch). No work gives one empty partition.
pub fn scan_exec(
    opened: Option<Opened>,
    location: Option<Location>,
    work: Vec<Work>,
    options: ScanOptions,
    schema: SchemaRef,
) -> Arc<DataSourceExec> {
    let groups = work
        .into_iter()
        .map(|w| FileGroup::new(vec![w.into_file()]));
    let fetch = options.limit;
    scan_groups(opened, location, groups.collect(), options, schema, fetch)
}

/// A Delta scan over `groups` (their files carry [`Work`]), with `fetch`: DataFusion's
/// limit on the rows it returns.
pub(crate) fn scan_groups(
    opened: Option<Opened>,
    location: Option<Location>,
    mut groups: Vec<FileGroup>,
    options: ScanOptions,
    schema: SchemaRef,
    fetch: Option<usize>,
) -> Arc<DataSourceExec> {
    if groups.is_empty() {
        groups.push(FileGroup::new(Vec::new()));
    }
    let source = DeltaSource {
        opened,
        location,
        table_schema: TableSchema::from(Arc::clone(&schema)),
        schema,
        options,
        metrics: ExecutionPlanMetricsSet::new(),
    };
    // declared, so that partition `i` reads group `i` and nothing else: DataFusion lets
    // the partitions of an undeclared file scan take each other's files (work stealing),
    // which an engine running each partition in a process of its own cannot allow, and
    // which leaves a plan executed twice with nothing to read the second time
    let partitioning = Partitioning::UnknownPartitioning(groups.len());
    let config = FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), Arc::new(source))
        .with_file_groups(groups)
        .with_output_partitioning(Some(partitioning))
        .with_limit(fetch)
        .build();
    DataSourceExec::from_data_source(config)
}

/// A Delta scan as DataFusion sees it (see [`delta_scan`]).
#[derive(Debug, Clone, Copy)]
pub struct DeltaScan<'a> {
    /// The file scan: its file groups are the output partitions.
    pub config: &'a FileScanConfig,
    /// What reads each unit.
    pub source: &'a DeltaSource,
}

impl DeltaScan<'_> {
    /// The units of work, by output partition.
    pub fn groups(&self) -> impl Iterator<Item = impl Iterator<Item = Option<&Work>>> {
        self.config
            .file_groups
            .iter()
            .map(|g| g.iter().map(|f| f.extension::<Work>()))
    }

    /// The splits the scan reads (none for a change feed).
    pub fn splits(&self) -> Vec<&Split> {
        self.groups()
            .flatten()
            .filter_map(|w| match w {
                Some(Work::Split(s)) => Some(s.as_ref()),
                _ => None,
            })
            .collect()
    }
}

/// `plan` as a Delta scan, if it is one.
pub fn delta_scan(plan: &dyn ExecutionPlan) -> Option<DeltaScan<'_>> {
    let exec = plan.downcast_ref::<DataSourceExec>()?;
    let data: &dyn std::any::Any = exec.data_source().as_ref();
    let config = data.downcast_ref::<FileScanConfig>()?;
    let source: &dyn std::any::Any = config.file_source().as_ref();
    let source = source.downcast_ref::<DeltaSource>()?;
    Some(DeltaScan { config, source })
}

impl FileSource for DeltaSource {
    fn create_file_opener(
        &self,
        _object_store: Arc<dyn datafusion::object_store::ObjectStore>,
        _base_config: &FileScanConfig,
        _partition: usize,
    ) -> DfResult<Arc<dyn FileOpener>> {
        Ok(Arc::new(self.clone()))
    }

    fn table_schema(&self) -> &TableSchema {
        &self.table_schema
    }

    fn with_batch_size(&self, batch_size: usize) -> Arc<dyn FileSource> {
        let mut source = self.clone();
        source.options.batch_size = batch_size.max(1);
        Arc::new(source)
    }

    fn metrics(&self) -> &ExecutionPlanMetricsSet {
        &self.metrics
    }

    fn file_type(&self) -> &str {
        "delta"
    }

    fn fmt_extra(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        if let Some(filter) = &self.options.filter {
            write!(f, ", delta_filter={filter}")?;
        }
        if let Some(limit) = self.options.limit {
            write!(f, ", delta_limit={limit}")?;
        }
        Ok(())
    }

    /// A split is read whole: DataFusion must not cut it into byte ranges.
    fn supports_repartitioning(&self) -> bool {
        false
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> DfResult<TreeNodeRecursion>,
    ) -> DfResult<TreeNodeRecursion> {
        Ok(TreeNodeRecursion::Continue)
    }
}

impl FileOpener for DeltaSource {
    fn open(&self, file: PartitionedFile) -> DfResult<FileOpenFuture> {
        let work = file.extension::<Work>().cloned().ok_or_else(|| {
            DataFusionError::Internal(format!(
                "the file {} of a Delta scan carries no Delta work",
                file.object_meta.location
            ))
        })?;
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
        Ok(Box::pin(futures::future::ready(Ok(batches.boxed()))))
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
    work: Work,
    options: ScanOptions,
    schema: SchemaRef,
    tx: Batches,
) -> DfResult<()> {
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
            // unconstrained: the send runs inside the scan's poll, outside Tokio's task
            // budget (a spent budget would make the send wait forever)
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
        Work::Split(split) => {
            split
                .execute(table, options, &mut sink)
                .await
                .map_err(Error::from)?;
        }
        Work::Changes { from, to } => {
            Changes::new(&table, from, to, options)
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
