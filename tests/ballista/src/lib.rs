//! Ballista's codecs with deltalens': Ballista plans hold its own nodes (shuffle writers
//! and readers) beside the Delta scans and tables, so each codec here tags what it wrote
//! (`D` deltalens, `B` Ballista) and hands each node to the codec that knows it.

use std::sync::Arc;

use ballista_core::serde::{BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::TableProvider;
use datafusion::common::{DataFusionError, Result, TableReference};
use datafusion::datasource::file_format::FileFormatFactory;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Extension, LogicalPlan};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::logical_plan::LogicalExtensionCodec;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use deltalens_datafusion::codec::{DeltaCodec, DeltaLogicalCodec};
use deltalens_datafusion::{ChangesProvider, DeltaTableProvider, delta_scan};

fn untagged() -> DataFusionError {
    DataFusionError::Internal("a plan node without its codec's tag (D or B)".into())
}

/// Physical plans: Delta scans by [`DeltaCodec`], the rest by Ballista's codec.
#[derive(Debug, Default)]
pub struct PhysicalCodec {
    delta: DeltaCodec,
    ballista: BallistaPhysicalExtensionCodec,
}

impl PhysicalExtensionCodec for PhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match buf.split_first() {
            Some((b'D', rest)) => self.delta.try_decode(rest, inputs, ctx, converter),
            Some((b'B', rest)) => self.ballista.try_decode(rest, inputs, ctx, converter),
            _ => Err(untagged()),
        }
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        if delta_scan(node.as_ref()).is_some() {
            buf.push(b'D');
            self.delta.try_encode(node, buf, converter)
        } else {
            buf.push(b'B');
            self.ballista.try_encode(node, buf, converter)
        }
    }
}

/// Logical plans: Delta tables by [`DeltaLogicalCodec`], the rest by Ballista's codec.
#[derive(Debug, Default)]
pub struct LogicalCodec {
    delta: DeltaLogicalCodec,
    ballista: BallistaLogicalExtensionCodec,
}

impl LogicalExtensionCodec for LogicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[LogicalPlan],
        ctx: &TaskContext,
    ) -> Result<Extension> {
        self.ballista.try_decode(buf, inputs, ctx)
    }

    fn try_encode(&self, node: &Extension, buf: &mut Vec<u8>) -> Result<()> {
        self.ballista.try_encode(node, buf)
    }

    fn try_decode_table_provider(
        &self,
        buf: &[u8],
        table_ref: &TableReference,
        schema: SchemaRef,
        ctx: &TaskContext,
    ) -> Result<Arc<dyn TableProvider>> {
        match buf.split_first() {
            Some((b'D', rest)) => self
                .delta
                .try_decode_table_provider(rest, table_ref, schema, ctx),
            Some((b'B', rest)) => self
                .ballista
                .try_decode_table_provider(rest, table_ref, schema, ctx),
            _ => Err(untagged()),
        }
    }

    fn try_encode_table_provider(
        &self,
        table_ref: &TableReference,
        node: Arc<dyn TableProvider>,
        buf: &mut Vec<u8>,
    ) -> Result<()> {
        if node.downcast_ref::<DeltaTableProvider>().is_some()
            || node.downcast_ref::<ChangesProvider>().is_some()
        {
            buf.push(b'D');
            self.delta.try_encode_table_provider(table_ref, node, buf)
        } else {
            buf.push(b'B');
            self.ballista
                .try_encode_table_provider(table_ref, node, buf)
        }
    }

    fn try_decode_file_format(
        &self,
        buf: &[u8],
        ctx: &TaskContext,
    ) -> Result<Arc<dyn FileFormatFactory>> {
        self.ballista.try_decode_file_format(buf, ctx)
    }

    fn try_encode_file_format(
        &self,
        buf: &mut Vec<u8>,
        node: Arc<dyn FileFormatFactory>,
    ) -> Result<()> {
        self.ballista.try_encode_file_format(buf, node)
    }
}
