//! Arrow data across the two Arrow versions: deltalens reads into arrow 60, DataFusion 55
//! computes on arrow 59. Schemas and batches cross as Arrow IPC streams (the format both
//! versions speak), written by one version and read by the other: a copy of the buffers,
//! no `unsafe`.

use std::io::Cursor;
use std::sync::Arc;

use arrow_array::RecordBatch;
use datafusion::arrow::array::{RecordBatch as DfBatch, RecordBatchOptions};
use datafusion::arrow::datatypes::{Schema as DfSchema, SchemaRef as DfSchemaRef};

use crate::error::{Error, Result};

fn to_ipc(schema: &arrow_schema::Schema, batch: Option<&RecordBatch>) -> Result<Vec<u8>> {
    let mut buf = Vec::new();
    let mut w =
        arrow_ipc::writer::StreamWriter::try_new(&mut buf, schema).map_err(Error::Encode)?;
    if let Some(b) = batch {
        w.write(b).map_err(Error::Encode)?;
    }
    w.finish().map_err(Error::Encode)?;
    drop(w);
    Ok(buf)
}

fn df_reader(
    buf: Vec<u8>,
) -> Result<datafusion::arrow::ipc::reader::StreamReader<Cursor<Vec<u8>>>> {
    datafusion::arrow::ipc::reader::StreamReader::try_new(Cursor::new(buf), None)
        .map_err(Error::Decode)
}

/// A deltalens schema as DataFusion's.
pub fn schema_to_datafusion(schema: &arrow_schema::Schema) -> Result<DfSchemaRef> {
    Ok(df_reader(to_ipc(schema, None)?)?.schema())
}

/// A DataFusion schema as deltalens'.
pub fn schema_from_datafusion(schema: &DfSchema) -> Result<arrow_schema::SchemaRef> {
    let mut buf = Vec::new();
    let mut w = datafusion::arrow::ipc::writer::StreamWriter::try_new(&mut buf, schema)
        .map_err(Error::Decode)?;
    w.finish().map_err(Error::Decode)?;
    drop(w);
    let r =
        arrow_ipc::reader::StreamReader::try_new(Cursor::new(buf), None).map_err(Error::Encode)?;
    Ok(r.schema())
}

/// A deltalens batch as a DataFusion batch of `schema`: its columns named in `schema`, by
/// name, in `schema`'s order (no columns: the row count alone, for `COUNT(*)`).
pub fn batch_to_datafusion(batch: &RecordBatch, schema: &DfSchemaRef) -> Result<DfBatch> {
    if schema.fields().is_empty() {
        let options = RecordBatchOptions::new().with_row_count(Some(batch.num_rows()));
        return DfBatch::try_new_with_options(Arc::clone(schema), vec![], &options)
            .map_err(Error::Decode);
    }
    let indices = schema
        .fields()
        .iter()
        .map(|f| {
            batch.schema().index_of(f.name()).map_err(|_| {
                Error::InvalidArgument(format!(
                    "the scan returned no column {:?} (it returned {:?})",
                    f.name(),
                    batch
                        .schema()
                        .fields()
                        .iter()
                        .map(|f| f.name().as_str())
                        .collect::<Vec<_>>()
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let batch = batch.project(&indices).map_err(Error::Encode)?;
    let mut reader = df_reader(to_ipc(batch.schema().as_ref(), Some(&batch))?)?;
    let read = match reader.next() {
        Some(b) => b.map_err(Error::Decode)?,
        None => {
            return Err(Error::InvalidArgument(
                "an IPC stream without its batch".into(),
            ));
        }
    };
    DfBatch::try_new(Arc::clone(schema), read.columns().to_vec()).map_err(Error::Decode)
}

/// A DataFusion batch as deltalens' (for output formats and tests).
pub fn batch_from_datafusion(batch: &DfBatch) -> Result<RecordBatch> {
    let mut buf = Vec::new();
    let mut w = datafusion::arrow::ipc::writer::StreamWriter::try_new(&mut buf, &batch.schema())
        .map_err(Error::Decode)?;
    w.write(batch).map_err(Error::Decode)?;
    w.finish().map_err(Error::Decode)?;
    drop(w);
    let mut r =
        arrow_ipc::reader::StreamReader::try_new(Cursor::new(buf), None).map_err(Error::Encode)?;
    match r.next() {
        Some(b) => b.map_err(Error::Encode),
        None => Err(Error::InvalidArgument(
            "an IPC stream without its batch".into(),
        )),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use arrow_array::{ArrayRef, Int64Array, StringArray};

    #[test]
    fn batches_cross_both_ways_unchanged() {
        let b = RecordBatch::try_from_iter([
            (
                "a",
                Arc::new(Int64Array::from(vec![Some(1), None, Some(3)])) as ArrayRef,
            ),
            (
                "b",
                Arc::new(StringArray::from(vec!["x", "y", "z"])) as ArrayRef,
            ),
        ])
        .unwrap();
        let df = schema_to_datafusion(&b.schema()).unwrap();
        let there = batch_to_datafusion(&b, &df).unwrap();
        assert_eq!(there.num_rows(), 3);
        assert_eq!(batch_from_datafusion(&there).unwrap(), b);
        // a projection by name, in the schema's order, and none at all (row count only)
        let only_b = Arc::new(df.project(&[1]).unwrap());
        assert_eq!(batch_to_datafusion(&b, &only_b).unwrap().num_columns(), 1);
        let none = Arc::new(df.project(&[]).unwrap());
        assert_eq!(batch_to_datafusion(&b, &none).unwrap().num_rows(), 3);
        assert_eq!(schema_from_datafusion(&df).unwrap(), b.schema());
    }
}
