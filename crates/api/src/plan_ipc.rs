//! A scan plan as Arrow IPC: a row per file, with its split, so that any Arrow engine
//! (pyarrow, DuckDB, Polars, DataFusion) can read the plan as a table of scan tasks —
//! the shape of delta-kernel-rs' scan files. Columns: `split_id`, `split_bytes`,
//! `split_estimated_rows`, `path`, `size`, `modification_time`, `partition_values`
//! (map), `stats` (the file's JSON statistics), `deletion_vector_cardinality`, and `add`:
//! the file's whole `add` action as JSON, from which [`plan_from_ipc`] rebuilds the plan
//! exactly. The plan's version, protocol, metadata and totals are the schema's metadata
//! (`deltalens.plan`, JSON).

use std::sync::Arc;

use arrow_array::builder::{Int64Builder, MapBuilder, StringBuilder, UInt32Builder, UInt64Builder};
use arrow_array::cast::AsArray;
use arrow_array::types::{UInt32Type, UInt64Type};
use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, Field, Schema};
use deltalens_core::actions::{Add, Metadata, Protocol};
use deltalens_core::{ScanPlan, Split};
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, Result};

const PLAN_KEY: &str = "deltalens.plan";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Head {
    version: u64,
    files: usize,
    bytes: u64,
    target_bytes: u64,
    splits: usize,
    /// Every split's (none for a plan without files).
    protocol: Option<Protocol>,
    metadata: Option<Metadata>,
}

fn json<T: Serialize>(v: &T) -> Result<String> {
    serde_json::to_string(v).map_err(|e| bad(e.to_string()))
}

fn encode(e: ArrowError) -> ApiError {
    ApiError::Encode {
        format: "arrow",
        message: e.to_string(),
    }
}

fn bad(m: impl Into<String>) -> ApiError {
    ApiError::param("plan", m.into())
}

/// The plan as an Arrow IPC stream (see the module documentation).
pub fn plan_to_ipc(plan: &ScanPlan) -> Result<Vec<u8>> {
    let first = plan.splits.first();
    let head = Head {
        version: plan.version,
        files: plan.files,
        bytes: plan.bytes,
        target_bytes: plan.target_bytes,
        splits: plan.splits.len(),
        protocol: first.map(|s| s.protocol.clone()),
        metadata: first.map(|s| s.metadata.clone()),
    };
    let (mut id, mut sb, mut se) = (
        UInt32Builder::new(),
        UInt64Builder::new(),
        UInt64Builder::new(),
    );
    let (mut path, mut stats, mut add) = (
        StringBuilder::new(),
        StringBuilder::new(),
        StringBuilder::new(),
    );
    let (mut size, mut mtime, mut dv) = (
        Int64Builder::new(),
        Int64Builder::new(),
        Int64Builder::new(),
    );
    let mut pv = MapBuilder::new(None, StringBuilder::new(), StringBuilder::new());
    for s in &plan.splits {
        let sid = u32::try_from(s.id).map_err(|_| bad(format!("split id {} too large", s.id)))?;
        for f in &s.files {
            id.append_value(sid);
            sb.append_value(s.bytes);
            se.append_option(s.estimated_rows);
            path.append_value(&f.path);
            size.append_value(f.size);
            mtime.append_value(f.modification_time);
            for (k, v) in f.partition_values.iter() {
                pv.keys().append_value(k);
                pv.values().append_option(v.as_deref());
            }
            pv.append(true).map_err(encode)?;
            stats.append_option(f.stats.as_deref());
            dv.append_option(f.deletion_vector.as_ref().map(|d| d.cardinality));
            add.append_value(json(f)?);
        }
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(id.finish()),
        Arc::new(sb.finish()),
        Arc::new(se.finish()),
        Arc::new(path.finish()),
        Arc::new(size.finish()),
        Arc::new(mtime.finish()),
        Arc::new(pv.finish()),
        Arc::new(stats.finish()),
        Arc::new(dv.finish()),
        Arc::new(add.finish()),
    ];
    let fields: Vec<Field> = columns
        .iter()
        .zip([
            "split_id",
            "split_bytes",
            "split_estimated_rows",
            "path",
            "size",
            "modification_time",
            "partition_values",
            "stats",
            "deletion_vector_cardinality",
            "add",
        ])
        .map(|(c, name)| {
            let nullable = matches!(
                name,
                "split_estimated_rows" | "stats" | "deletion_vector_cardinality"
            );
            Field::new(name, c.data_type().clone(), nullable)
        })
        .collect();
    let schema = Arc::new(
        Schema::new(fields).with_metadata(std::collections::HashMap::from([(
            PLAN_KEY.to_string(),
            json(&head)?,
        )])),
    );
    let batch = RecordBatch::try_new(Arc::clone(&schema), columns).map_err(encode)?;
    let mut out = Vec::new();
    let mut w = arrow_ipc::writer::StreamWriter::try_new(&mut out, &schema).map_err(encode)?;
    w.write(&batch).map_err(encode)?;
    w.finish().map_err(encode)?;
    drop(w);
    Ok(out)
}

/// A plan read back from [`plan_to_ipc`]'s stream, exactly; at most `max_files` files.
/// For this process' own plans: the Arrow IPC reader trusts the sizes in its input.
pub fn plan_from_ipc(bytes: &[u8], max_files: usize) -> Result<ScanPlan> {
    let reader = arrow_ipc::reader::StreamReader::try_new(bytes, None)
        .map_err(|e| bad(format!("not an Arrow IPC stream: {e}")))?;
    let head: Head = reader
        .schema()
        .metadata()
        .get(PLAN_KEY)
        .ok_or_else(|| bad(format!("no {PLAN_KEY} in the stream's schema")))
        .and_then(|t| deltalens_json::from_str(t).map_err(|e| bad(e.to_string())))?;
    if head.splits > max_files.max(1) {
        return Err(bad(format!(
            "{} splits for at most {max_files} files",
            head.splits
        )));
    }
    let mut splits: Vec<Split> = Vec::new();
    if head.splits > 0 {
        let (Some(protocol), Some(metadata)) = (&head.protocol, &head.metadata) else {
            return Err(bad("a plan with splits but no protocol or metadata"));
        };
        splits = (0..head.splits)
            .map(|id| Split {
                id,
                version: head.version,
                protocol: protocol.clone(),
                metadata: metadata.clone(),
                files: Vec::new(),
                bytes: 0,
                estimated_rows: None,
            })
            .collect();
    }
    let mut files = 0usize;
    for batch in reader {
        let b = batch.map_err(|e| bad(e.to_string()))?;
        files = files.saturating_add(b.num_rows());
        if files > max_files {
            return Err(bad(format!("more than {max_files} files (the limit)")));
        }
        let col = |name: &str| {
            b.column_by_name(name)
                .ok_or_else(|| bad(format!("no column {name}")))
        };
        let (id, sb, se, add) = (
            col("split_id")?,
            col("split_bytes")?,
            col("split_estimated_rows")?,
            col("add")?,
        );
        let typed = || bad("a column of the wrong type");
        let id = id.as_primitive_opt::<UInt32Type>().ok_or_else(typed)?;
        let sb = sb.as_primitive_opt::<UInt64Type>().ok_or_else(typed)?;
        let se = se.as_primitive_opt::<UInt64Type>().ok_or_else(typed)?;
        let add = add.as_string_opt::<i32>().ok_or_else(typed)?;
        for r in 0..b.num_rows() {
            let split = splits.get_mut(id.value(r) as usize).ok_or_else(|| {
                bad(format!(
                    "split id {} beyond the plan's {}",
                    id.value(r),
                    head.splits
                ))
            })?;
            let file: Add =
                deltalens_json::from_str(add.value(r)).map_err(|e| bad(e.to_string()))?;
            split.bytes = sb.value(r);
            split.estimated_rows = se.is_valid(r).then(|| se.value(r));
            split.files.push(file);
        }
    }
    if files != head.files {
        return Err(bad(format!("{files} files, the plan says {}", head.files)));
    }
    Ok(ScanPlan {
        version: head.version,
        files: head.files,
        bytes: head.bytes,
        target_bytes: head.target_bytes,
        splits,
    })
}
