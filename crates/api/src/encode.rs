//! Rows as JSON (an array of objects, nulls explicit), JSON lines, CSV (header line) or an
//! Arrow IPC stream — the same writers and settings as the CLI's `--format`.

use std::sync::Arc;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{DataType, Field, Schema, SchemaRef};

use crate::error::{ApiError, Result};
use crate::request::Format;

fn utc_type(t: &DataType) -> Option<DataType> {
    match t {
        DataType::Timestamp(unit, Some(tz)) if tz.as_ref() == "UTC" || tz.as_ref() == "Etc/UTC" => {
            Some(DataType::Timestamp(*unit, Some("+00:00".into())))
        }
        _ => None,
    }
}

/// Delta's timestamps are `Timestamp(µs, "UTC")`; writing them as text needs a time-zone
/// database for the name "UTC", which the wasm builds leave out (it is large). The same
/// instants labelled with the offset `+00:00` print identically (`…Z`) without it.
fn utc_as_offset(batch: &RecordBatch) -> Result<RecordBatch> {
    if !batch
        .schema()
        .fields()
        .iter()
        .any(|f| utc_type(f.data_type()).is_some())
    {
        return Ok(batch.clone());
    }
    let mut fields = Vec::new();
    let mut arrays: Vec<ArrayRef> = Vec::new();
    for (f, a) in batch.schema().fields().iter().zip(batch.columns()) {
        match utc_type(f.data_type()) {
            Some(t) => {
                let data = a
                    .to_data()
                    .into_builder()
                    .data_type(t.clone())
                    .build()
                    .map_err(|e| ApiError::compute(f.name().clone(), e))?;
                arrays.push(arrow_array::make_array(data));
                fields.push(Field::new(f.name(), t, f.is_nullable()));
            }
            None => {
                arrays.push(a.clone());
                fields.push(f.as_ref().clone());
            }
        }
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)
        .map_err(|e| ApiError::compute("timestamps", e))
}

/// Encode `batches` (of `schema`) as `format`.
pub fn encode(format: Format, schema: &SchemaRef, batches: &[RecordBatch]) -> Result<Vec<u8>> {
    let err = |e: &dyn std::fmt::Display| ApiError::Encode {
        format: format.name(),
        message: e.to_string(),
    };
    if format == Format::Csv
        && let Some(f) = schema.fields().iter().find(|f| f.data_type().is_nested())
    {
        return Err(ApiError::InvalidParameter {
            parameter: "format".into(),
            message: format!(
                "CSV cannot hold the nested column `{}` ({}); choose json, jsonl or arrow, or select other columns",
                f.name(),
                f.data_type()
            ),
        });
    }
    let text = |batches: &[RecordBatch]| -> Result<Vec<RecordBatch>> {
        batches.iter().map(utc_as_offset).collect()
    };
    let converted;
    let batches = if format == Format::Arrow {
        batches
    } else {
        converted = text(batches)?;
        &converted[..]
    };
    let mut out = Vec::new();
    match format {
        Format::Json => {
            let mut w = arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow_json::writer::JsonArray>(&mut out);
            for b in batches {
                w.write(b).map_err(|e| err(&e))?;
            }
            w.finish().map_err(|e| err(&e))?;
            drop(w);
            if out.is_empty() {
                out.extend_from_slice(b"[]");
            }
            out.push(b'\n');
        }
        Format::Jsonl => {
            let mut w = arrow_json::WriterBuilder::new()
                .with_explicit_nulls(true)
                .build::<_, arrow_json::writer::LineDelimited>(&mut out);
            for b in batches {
                w.write(b).map_err(|e| err(&e))?;
            }
            w.finish().map_err(|e| err(&e))?;
        }
        Format::Csv => {
            let mut w = arrow_csv::WriterBuilder::new()
                .with_header(true)
                .build(&mut out);
            if batches.iter().all(|b| b.num_rows() == 0) {
                // the header alone
                w.write(&utc_as_offset(&RecordBatch::new_empty(schema.clone()))?)
                    .map_err(|e| err(&e))?;
            }
            for b in batches.iter().filter(|b| b.num_rows() > 0) {
                w.write(b).map_err(|e| err(&e))?;
            }
        }
        Format::Arrow => {
            let mut w =
                arrow_ipc::writer::StreamWriter::try_new(&mut out, schema).map_err(|e| err(&e))?;
            for b in batches {
                w.write(b).map_err(|e| err(&e))?;
            }
            w.finish().map_err(|e| err(&e))?;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int32Array, StringArray};
    use arrow_schema::{DataType, Field, Schema};
    use std::sync::Arc;

    #[test]
    fn formats() {
        let schema = Arc::new(Schema::new(vec![
            Field::new("id", DataType::Int32, true),
            Field::new("s", DataType::Utf8, true),
        ]));
        let b = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(Int32Array::from(vec![Some(1), None])),
                Arc::new(StringArray::from(vec![Some("a,\"b"), None])),
            ],
        )
        .unwrap();
        let s =
            |f| String::from_utf8(encode(f, &schema, std::slice::from_ref(&b)).unwrap()).unwrap();
        assert_eq!(
            s(Format::Json),
            "[{\"id\":1,\"s\":\"a,\\\"b\"},{\"id\":null,\"s\":null}]\n"
        );
        assert_eq!(
            s(Format::Jsonl),
            "{\"id\":1,\"s\":\"a,\\\"b\"}\n{\"id\":null,\"s\":null}\n"
        );
        assert_eq!(s(Format::Csv), "id,s\n1,\"a,\"\"b\"\n,\n");
        let empty = |f| String::from_utf8(encode(f, &schema, &[]).unwrap()).unwrap();
        assert_eq!(empty(Format::Json), "[]\n");
        assert_eq!(empty(Format::Jsonl), "");
        assert_eq!(empty(Format::Csv), "id,s\n");
        let ts_schema = Arc::new(Schema::new(vec![Field::new(
            "t",
            DataType::Timestamp(arrow_schema::TimeUnit::Microsecond, Some("UTC".into())),
            true,
        )]));
        let ts = RecordBatch::try_new(
            ts_schema.clone(),
            vec![Arc::new(
                arrow_array::TimestampMicrosecondArray::from(vec![
                    Some(1_569_888_000_000_000),
                    None,
                ])
                .with_timezone("UTC"),
            )],
        )
        .unwrap();
        let out = encode(Format::Jsonl, &ts_schema, std::slice::from_ref(&ts)).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"t\":\"2019-10-01T00:00:00Z\"}\n{\"t\":null}\n"
        );
        let out = encode(Format::Csv, &ts_schema, &[ts]).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "t\n2019-10-01T00:00:00Z\n\"\"\n"
        );
        let ipc = encode(Format::Arrow, &schema, &[b]).unwrap();
        let r = arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(ipc), None).unwrap();
        let got: Vec<RecordBatch> = r.map(|b| b.unwrap()).collect();
        assert_eq!(got[0].num_rows(), 2);
    }
}
