//! `DeltaTableProvider`: one version of a Delta table as a DataFusion table. The log is
//! read once, when the provider is made; each scan plans splits of the files its filters
//! can match (partition values and file statistics), one per target partition, and reads
//! only the projected columns. Deletion vectors, column mapping and type widening are
//! deltalens' scan's.

use std::sync::Arc;

use async_trait::async_trait;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::Session;
use datafusion::datasource::{TableProvider, TableType};
use datafusion::error::Result as DfResult;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_plan::ExecutionPlan;
use deltalens_core::scan::ScanOptions;
use deltalens_core::{PlanOptions, Table, VersionInfo, VersionSpec};

use crate::blocking::off_task;
use crate::bridge::schema_to_datafusion;
use crate::error::Result;
use crate::filter;
use crate::location::{Location, Opened};
use crate::source::{Work, scan_exec};

/// The most splits a scan plans (one thread reads each), whatever the session's target
/// partitions.
pub const MAX_SPLITS: usize = 256;

/// One version of a Delta table, for DataFusion (see the module documentation).
#[derive(Debug)]
pub struct DeltaTableProvider {
    /// The table and its version's log, read when the provider is made, or on its first
    /// scan for a provider decoded from a shipped logical plan.
    loaded: tokio::sync::OnceCell<Loaded>,
    location: Option<Location>,
    version: u64,
    schema: SchemaRef,
    /// A budget for each split's decoding (`ScanOptions::max_decoded_bytes`).
    max_decoded_bytes: Option<u64>,
}

#[derive(Debug, Clone)]
struct Loaded {
    info: VersionInfo,
    opened: Opened,
}

/// `schema` cut to `projection` (a scan's output schema).
pub(crate) fn projected(
    schema: &SchemaRef,
    projection: Option<&Vec<usize>>,
) -> DfResult<SchemaRef> {
    Ok(match projection {
        Some(p) => Arc::new(schema.project(p)?),
        None => Arc::clone(schema),
    })
}

impl DeltaTableProvider {
    /// The version `version` of `table` (its log is read now).
    pub async fn try_new(table: Table, version: VersionSpec) -> Result<Self> {
        Self::make(
            Opened {
                table,
                vending: None,
                shared: None,
            },
            None,
            version,
        )
        .await
    }

    /// The version `version` of the table at `location`. Plans of this provider can be
    /// shipped to other processes (`crate::codec`): they carry the location, without
    /// credentials.
    pub async fn open(location: Location, version: VersionSpec) -> Result<Self> {
        let l = location.clone();
        let opened = off_task(move || async move { l.open().await }).await?;
        Self::make(opened, Some(location), version).await
    }

    async fn make(
        opened: Opened,
        location: Option<Location>,
        version: VersionSpec,
    ) -> Result<Self> {
        let table = opened.table.clone();
        let shared = opened.shared.clone();
        let info = off_task(move || async move {
            let version = match (version, shared) {
                (VersionSpec::Timestamp(ts), Some(s)) => {
                    VersionSpec::Version(s.version_at_timestamp(ts).await?)
                }
                (v, _) => v,
            };
            Ok(table.version_info(version).await?)
        })
        .await?;
        let schema = schema_to_datafusion(&info.schema.to_arrow()?)?;
        Ok(DeltaTableProvider {
            version: info.version,
            loaded: tokio::sync::OnceCell::new_with(Some(Loaded { info, opened })),
            location,
            schema,
            max_decoded_bytes: None,
        })
    }

    /// Version `version` of the table at `location`, with the schema a shipped plan
    /// carries: nothing is read until the first scan (`crate::codec::DeltaLogicalCodec`).
    pub(crate) fn shipped(location: Location, version: u64, schema: SchemaRef) -> Self {
        DeltaTableProvider {
            loaded: tokio::sync::OnceCell::new(),
            location: Some(location),
            version,
            schema,
            max_decoded_bytes: None,
        }
    }

    /// The table's location, if it was opened from one (plans can then be shipped).
    pub fn location(&self) -> Option<&Location> {
        self.location.as_ref()
    }

    async fn loaded(&self) -> Result<&Loaded> {
        self.loaded
            .get_or_try_init(|| async {
                let Some(location) = self.location.clone() else {
                    return Err(crate::Error::InvalidArgument(
                        "a Delta table provider with neither a table nor a location".into(),
                    ));
                };
                let version = self.version;
                off_task(move || async move {
                    let opened = location.open().await?;
                    let info = opened
                        .table
                        .version_info(VersionSpec::Version(version))
                        .await?;
                    Ok(Loaded { info, opened })
                })
                .await
            })
            .await
    }

    /// Limit the bytes each split may decode (Parquet pages into Arrow arrays).
    pub fn with_max_decoded_bytes(mut self, bytes: Option<u64>) -> Self {
        self.max_decoded_bytes = bytes;
        self
    }

    /// The table version this provider reads.
    pub fn version(&self) -> u64 {
        self.version
    }
}

#[async_trait]
impl TableProvider for DeltaTableProvider {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> DfResult<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| match filter::pushable(f) {
                Some(_) => TableProviderFilterPushDown::Inexact,
                None => TableProviderFilterPushDown::Unsupported,
            })
            .collect())
    }

    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        let projected = projected(&self.schema, projection)?;
        let mut columns: Vec<String> = projected
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect();
        if columns.is_empty() {
            // no column wanted (COUNT(*)): read the first one for its row count
            if let Some(first) = self.schema.fields().first() {
                columns.push(first.name().clone());
            }
        }
        let options = ScanOptions {
            columns: Some(columns),
            filter: filter::conjunction(filters),
            // DataFusion applies inexact filters above the scan: a limit goes below them
            // only when there are none
            limit: limit.filter(|_| filters.is_empty()),
            batch_size: state.config().batch_size().max(1),
            max_decoded_bytes: self.max_decoded_bytes,
            ..ScanOptions::default()
        };
        let plan_options = PlanOptions {
            // each split is read on a thread of its own: `SET target_partitions` is bounded
            splits: Some(state.config().target_partitions().clamp(1, MAX_SPLITS)),
            ..PlanOptions::default()
        };
        let loaded = self.loaded().await?;
        let (info, scan) = (loaded.info.clone(), options.clone());
        let plan =
            off_task(move || async move { Ok(info.plan(&scan, &plan_options).await?) }).await?;
        let work = plan
            .splits
            .into_iter()
            .map(|s| Work::Split(Box::new(s)))
            .collect();
        Ok(scan_exec(
            Some(loaded.opened.clone()),
            self.location.as_ref().map(Location::without_credentials),
            work,
            options,
            projected,
        ))
    }
}
