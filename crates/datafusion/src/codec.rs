//! Extension codecs for `datafusion-proto`: [`DeltaCodec`] (physical) for Delta scans
//! (`crate::source`), so plans holding them ship to other processes (Ballista
//! executors, or anything that moves DataFusion plans as bytes), each task's splits
//! going with it; [`DeltaLogicalCodec`] for the table providers, so logical plans
//! ship too (a Ballista client sends its scheduler logical plans): a table travels as its
//! location (without credentials) and resolved version, a change feed as its location and
//! range, and is opened where it is scanned.
//!
//! A node travels as JSON: the table's location and store options *without credentials*
//! (the receiving process reads with its own, from its environment), the units of work
//! by output partition (splits with their files, protocol and metadata: nothing is read
//! from the log there; or a change feed's range), the columns, the
//! pushed filter as text, the limit and budgets, and the output schema (a schema message). The
//! receiver trusts its scheduler as it trusts any plan it is sent; the encoded form is
//! still checked (size, JSON shape, filter syntax, schema) and a split's protocol and
//! schema are checked when it runs.

use std::sync::Arc;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::TableReference;
use datafusion::datasource::physical_plan::FileGroup;
use datafusion::error::{DataFusionError, Result as DfResult};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::ScanOptions;
use prost::Message;
use serde::{Deserialize, Serialize};

use crate::changes::ChangesProvider;
use crate::error::Error;
use crate::location::Location;
use crate::provider::DeltaTableProvider;
use crate::source::{Work, delta_scan, scan_groups};

/// The largest encoded node accepted (a split names its files; a million-file table in
/// a few hundred splits stays far below this).
pub const MAX_ENCODED_BYTES: usize = 512 << 20;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
enum Encoded {
    Scan(Box<EncodedScan>),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EncodedScan {
    location: Location,
    /// The units of work, by output partition.
    groups: Vec<Vec<Work>>,
    /// DataFusion's limit on the rows the scan returns.
    fetch: Option<usize>,
    columns: Option<Vec<String>>,
    filter: Option<String>,
    limit: Option<usize>,
    batch_size: usize,
    prune: bool,
    max_decoded_bytes: Option<u64>,
    /// The output schema as datafusion-proto's schema message, in hex.
    schema: String,
}

/// Encodes and decodes Delta scans (see the module documentation).
#[derive(Debug, Default)]
pub struct DeltaCodec;

fn invalid(m: impl Into<String>) -> DataFusionError {
    Error::InvalidArgument(m.into()).into()
}

/// The most units of work (splits) one encoded scan may hold: each runs on a thread of
/// its own.
pub const MAX_ENCODED_SPLITS: usize = 4096;

/// The schema as datafusion-proto's message, in hex: decoded by prost and a fallible
/// conversion (an Arrow IPC schema from a hostile plan could make the IPC reader
/// allocate what its header claims, or panic on a malformed type).
fn schema_hex(schema: &SchemaRef) -> DfResult<String> {
    let message = datafusion_proto::protobuf::Schema::try_from(schema.as_ref())
        .map_err(|e| invalid(format!("encoding a Delta scan's schema: {e}")))?;
    Ok(message
        .encode_to_vec()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect())
}

fn schema_from_hex(hex: &str) -> DfResult<SchemaRef> {
    let bad = || invalid("an encoded Delta scan's schema is not a hex-encoded schema message");
    if !hex.len().is_multiple_of(2) {
        return Err(bad());
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| {
            hex.get(i..i + 2)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        })
        .collect::<Option<Vec<u8>>>()
        .ok_or_else(bad)?;
    let message =
        datafusion_proto::protobuf::Schema::decode(bytes.as_slice()).map_err(|_| bad())?;
    let schema = datafusion::arrow::datatypes::Schema::try_from(&message)
        .map_err(|e| invalid(format!("an encoded Delta scan's schema: {e}")))?;
    Ok(Arc::new(schema))
}

/// A change feed, as `table_changes` plans it, is the one unit of the one partition of its
/// scan, over a closed range: more (each replaying the log on a thread of its own) or an
/// open range is not a plan this crate made.
fn check_change_feed(groups: &[Vec<Work>]) -> DfResult<()> {
    let feeds: Vec<(u64, Option<u64>)> = groups
        .iter()
        .flatten()
        .filter_map(|w| match w {
            Work::Changes { from, to } => Some((*from, *to)),
            Work::Split(_) => None,
        })
        .collect();
    match feeds.as_slice() {
        [] => Ok(()),
        [(from, Some(to))] if from <= to && groups.len() == 1 && groups[0].len() == 1 => Ok(()),
        [(from, to)] => Err(invalid(format!(
            "an encoded Delta change feed of versions {from} to {} in a scan of {} units: a change feed is the one unit of its scan, over a closed range",
            to.map_or_else(|| "the latest".to_string(), |t| t.to_string()),
            groups.iter().map(Vec::len).sum::<usize>()
        ))),
        many => Err(invalid(format!(
            "an encoded Delta scan of {} change feeds: a change feed is the one unit of its scan",
            many.len()
        ))),
    }
}

impl PhysicalExtensionCodec for DeltaCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        _ctx: &TaskContext,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DfResult<Arc<dyn ExecutionPlan>> {
        if buf.len() > MAX_ENCODED_BYTES {
            return Err(invalid(format!(
                "an encoded Delta scan of {} bytes is over the limit of {MAX_ENCODED_BYTES} bytes",
                buf.len()
            )));
        }
        if !inputs.is_empty() {
            return Err(invalid("a Delta scan has no inputs"));
        }
        let Encoded::Scan(e) = deltalens_json::from_slice(buf)
            .map_err(|e| invalid(format!("not an encoded Delta scan: {e}")))?;
        e.location.check_shipped()?;
        let units: usize = e.groups.iter().map(Vec::len).sum();
        if units.max(e.groups.len()) > MAX_ENCODED_SPLITS {
            return Err(invalid(format!(
                "an encoded Delta scan of {units} splits in {} partitions is over the limit of {MAX_ENCODED_SPLITS}",
                e.groups.len()
            )));
        }
        check_change_feed(&e.groups)?;
        let filter = e
            .filter
            .as_deref()
            .map(Predicate::parse)
            .transpose()
            .map_err(Error::from)?;
        let options = ScanOptions {
            columns: e.columns,
            filter,
            limit: e.limit,
            batch_size: e.batch_size.max(1),
            prune: e.prune,
            max_decoded_bytes: e.max_decoded_bytes,
        };
        let schema = schema_from_hex(&e.schema)?;
        let groups = e
            .groups
            .into_iter()
            .map(|g| FileGroup::new(g.into_iter().map(Work::into_file).collect()))
            .collect();
        Ok(scan_groups(
            None,
            Some(e.location),
            groups,
            options,
            schema,
            e.fetch,
        ))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        _proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> DfResult<()> {
        let Some(scan) = delta_scan(node.as_ref()) else {
            return Err(invalid(format!(
                "DeltaCodec encodes Delta scans, not {}",
                node.name()
            )));
        };
        let Some(location) = scan.source.location() else {
            return Err(invalid(
                "this Delta scan's table was opened from a Table, not a location: open it with DeltaTableProvider::open to ship its plans",
            ));
        };
        let groups = scan
            .groups()
            .map(|g| {
                g.map(|w| {
                    w.cloned()
                        .ok_or_else(|| invalid("a file of a Delta scan carries no Delta work"))
                })
                .collect::<DfResult<Vec<Work>>>()
            })
            .collect::<DfResult<Vec<_>>>()?;
        let o = scan.source.options();
        let encoded = Encoded::Scan(Box::new(EncodedScan {
            location: location.without_credentials(),
            groups,
            fetch: scan.config.limit,
            columns: o.columns.clone(),
            filter: o.filter.as_ref().map(|f| f.to_string()),
            limit: o.limit,
            batch_size: o.batch_size,
            prune: o.prune,
            max_decoded_bytes: o.max_decoded_bytes,
            schema: schema_hex(scan.source.schema())?,
        }));
        serde_json::to_writer(buf, &encoded)
            .map_err(|e| invalid(format!("encoding a Delta scan: {e}")))
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
enum EncodedTable {
    Version {
        location: Location,
        version: u64,
    },
    Changes {
        location: Location,
        from: u64,
        to: u64,
    },
}

/// Encodes and decodes [`DeltaTableProvider`] and [`crate::ChangesProvider`] in logical
/// plans (see the module documentation).
#[derive(Debug, Default)]
pub struct DeltaLogicalCodec;

impl LogicalExtensionCodec for DeltaLogicalCodec {
    fn try_decode(
        &self,
        _buf: &[u8],
        _inputs: &[LogicalPlan],
        _ctx: &TaskContext,
    ) -> DfResult<Extension> {
        Err(invalid(
            "DeltaLogicalCodec has no logical plan nodes, only tables",
        ))
    }

    fn try_encode(&self, _node: &Extension, _buf: &mut Vec<u8>) -> DfResult<()> {
        Err(invalid(
            "DeltaLogicalCodec has no logical plan nodes, only tables",
        ))
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        _table_ref: &TableReference,
        schema: SchemaRef,
        _ctx: &TaskContext,
    ) -> DfResult<Arc<dyn TableProvider>> {
        if buf.len() > MAX_ENCODED_BYTES {
            return Err(invalid(format!(
                "an encoded Delta table of {} bytes is over the limit of {MAX_ENCODED_BYTES} bytes",
                buf.len()
            )));
        }
        let table: EncodedTable = deltalens_json::from_slice(buf)
            .map_err(|e| invalid(format!("not an encoded Delta table: {e}")))?;
        Ok(match table {
            EncodedTable::Version { location, version } => {
                location.check_shipped()?;
                Arc::new(DeltaTableProvider::shipped(location, version, schema))
            }
            EncodedTable::Changes { location, from, to } => {
                location.check_shipped()?;
                if from > to {
                    return Err(invalid(format!(
                        "an encoded Delta change feed from version {from} to {to}"
                    )));
                }
                Arc::new(ChangesProvider::shipped(location, from, to, schema))
            }
        })
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> DfResult<()> {
        let table = if let Some(t) = node.downcast_ref::<DeltaTableProvider>() {
            let Some(location) = t.location() else {
                return Err(invalid(format!(
                    "the Delta table {table_ref} was opened from a Table, not a location: open it with DeltaTableProvider::open to ship its plans"
                )));
            };
            EncodedTable::Version {
                location: location.without_credentials(),
                version: t.version(),
            }
        } else if let Some(c) = node.downcast_ref::<ChangesProvider>() {
            let (location, from, to) = c.range();
            EncodedTable::Changes {
                location: location.without_credentials(),
                from,
                to,
            }
        } else {
            return Err(invalid(format!(
                "DeltaLogicalCodec encodes Delta tables, not {table_ref}"
            )));
        };
        serde_json::to_writer(buf, &table)
            .map_err(|e| invalid(format!("encoding a Delta table: {e}")))
    }
}
