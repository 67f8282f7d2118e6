//! Data skipping: whether a predicate could be true for any row of a file or row group,
//! from partition values, file statistics (`minValues` / `maxValues` / `nullCount`) and
//! Parquet row-group statistics. Unknown statistics always mean "could match", so
//! skipping never changes results.

use arrow_array::{Array, ArrayRef, Scalar};
use arrow_schema::DataType as ArrowType;
use parquet::arrow::arrow_reader::statistics::StatisticsConverter;
use parquet::file::metadata::ParquetMetaData;
use serde_json::Value;

use crate::actions::{Add, StringMap};
use crate::column_mapping::ColumnMappingMode;
use crate::partition_values::partition_array;
use crate::predicate::{CmpOp, Literal, Predicate, compare, literal_array};
use crate::schema::{DataType, StructField, to_arrow_type};

/// What is known about one column in a file or row group.
#[derive(Debug, Clone, Default)]
pub struct ColumnStats {
    /// A lower bound of the non-null values (one element).
    pub min: Option<ArrayRef>,
    /// An upper bound of the non-null values (one element).
    pub max: Option<ArrayRef>,
    /// Some value is null.
    pub any_null: Option<bool>,
    /// Every value is null.
    pub all_null: Option<bool>,
}

/// A source of column statistics.
pub trait StatsSource {
    /// The statistics of the column at `path` (logical names); `None` when unknown.
    fn column(&self, path: &[String]) -> Option<ColumnStats>;
}

/// The statistic's value when there is exactly one, not null.
fn known_value(a: &Option<ArrayRef>) -> Option<&ArrayRef> {
    a.as_ref().filter(|a| a.len() == 1 && a.is_valid(0))
}

/// Whether `a op lit` may hold: true, or unknown (null, or the types do not compare).
fn may_satisfy(a: &ArrayRef, op: CmpOp, lit: &ArrayRef) -> bool {
    match compare(a, op, &Scalar::new(lit.clone()), &[]) {
        Ok(r) => r.is_null(0) || r.value(0),
        Err(_) => true,
    }
}

/// Whether some row of a file with these statistics may satisfy `column op value`
/// (false only when the statistics prove that none does).
fn comparison_may_match(
    s: &dyn StatsSource,
    column: &[String],
    op: CmpOp,
    value: &Literal,
) -> bool {
    if *value == Literal::Null {
        return false; // a comparison with NULL is never true
    }
    let Some(st) = s.column(column) else {
        return true;
    };
    if st.all_null == Some(true) {
        return false;
    }
    let (min, max) = (known_value(&st.min), known_value(&st.max));
    let Some(ty) = min.or(max).map(|a| a.data_type().clone()) else {
        return true;
    };
    let Ok(lit) = literal_array(value, &ty, column) else {
        return true;
    };
    let lower = |op| min.is_none_or(|m| may_satisfy(m, op, &lit));
    let upper = |op| max.is_none_or(|m| may_satisfy(m, op, &lit));
    match op {
        // min <= lit <= max
        CmpOp::Eq => lower(CmpOp::LtEq) && upper(CmpOp::GtEq),
        // not (min == lit == max)
        CmpOp::NotEq => {
            !(min.is_some_and(|m| may_satisfy(m, CmpOp::Eq, &lit))
                && max.is_some_and(|m| may_satisfy(m, CmpOp::Eq, &lit)))
        }
        CmpOp::Lt => lower(CmpOp::Lt),
        CmpOp::LtEq => lower(CmpOp::LtEq),
        CmpOp::Gt => upper(CmpOp::Gt),
        CmpOp::GtEq => upper(CmpOp::GtEq),
    }
}

/// Whether `p` (negated when `negated`) could hold for some row described by `s`.
pub fn could_match(p: &Predicate, s: &dyn StatsSource, negated: bool) -> bool {
    match p {
        Predicate::Const(b) => *b != negated,
        Predicate::Cmp { column, op, value } => {
            let op = if negated { op.negate() } else { *op };
            comparison_may_match(s, column, op, value)
        }
        Predicate::IsNull { column, negated: n } => {
            let want_null = *n == negated;
            match s.column(column) {
                None => true,
                Some(st) if want_null => st.any_null != Some(false),
                Some(st) => st.all_null != Some(true),
            }
        }
        Predicate::In {
            column,
            values,
            negated: n,
        } => {
            if *n != negated {
                true
            } else {
                values
                    .iter()
                    .any(|v| comparison_may_match(s, column, CmpOp::Eq, v))
            }
        }
        Predicate::Between {
            column,
            low,
            high,
            negated: n,
        } => {
            if *n == negated {
                comparison_may_match(s, column, CmpOp::GtEq, low)
                    && comparison_may_match(s, column, CmpOp::LtEq, high)
            } else {
                comparison_may_match(s, column, CmpOp::Lt, low)
                    || comparison_may_match(s, column, CmpOp::Gt, high)
            }
        }
        Predicate::Like { .. } => true,
        Predicate::And(a, b) if !negated => could_match(a, s, false) && could_match(b, s, false),
        Predicate::And(a, b) => could_match(a, s, true) || could_match(b, s, true),
        Predicate::Or(a, b) if !negated => could_match(a, s, false) || could_match(b, s, false),
        Predicate::Or(a, b) => could_match(a, s, true) && could_match(b, s, true),
        Predicate::Not(a) => could_match(a, s, !negated),
    }
}

/// Find a (possibly nested) logical field by path, case-insensitively.
fn field_path<'a>(fields: &'a [StructField], path: &[String]) -> Option<Vec<&'a StructField>> {
    let (first, rest) = path.split_first()?;
    let f = fields
        .iter()
        .find(|f| &f.name == first)
        .or_else(|| fields.iter().find(|f| f.name.eq_ignore_ascii_case(first)))?;
    let mut out = vec![f];
    if !rest.is_empty() {
        let DataType::Struct(st) = &f.data_type else {
            return None;
        };
        out.extend(field_path(&st.fields, rest)?);
    }
    Some(out)
}

/// Statistics of one data file: its partition values and the `stats` of its `add`.
pub struct FileStats<'a> {
    /// The table's top-level fields.
    pub fields: &'a [StructField],
    /// The table's partition columns.
    pub partition_columns: &'a [String],
    /// The file's `add` action (partition values and `stats`).
    pub add: &'a Add,
    stats: Option<Value>,
}

impl<'a> FileStats<'a> {
    /// The statistics of `add`, its `stats` parsed once.
    pub fn new(fields: &'a [StructField], partition_columns: &'a [String], add: &'a Add) -> Self {
        FileStats {
            fields,
            partition_columns,
            add,
            stats: add.stats_json(),
        }
    }
}

fn stat_array(v: &Value, ty: &ArrowType, is_max: bool) -> Option<ArrayRef> {
    let lit = match v {
        Value::Number(n) => Literal::Number(n.to_string()),
        Value::String(s) => Literal::Str(s.clone()),
        Value::Bool(b) => Literal::Bool(*b),
        _ => return None,
    };
    let a = literal_array(&lit, ty, &[]).ok()?;
    match ty {
        // timestamp statistics are truncated to milliseconds: widen the upper bound by 999 µs
        // (Delta timestamps are microseconds; the time zone is kept)
        ArrowType::Timestamp(arrow_schema::TimeUnit::Microsecond, _) if is_max => {
            use arrow_array::cast::AsArray;
            use arrow_array::types::TimestampMicrosecondType as Micros;
            let ts = a.as_primitive_opt::<Micros>()?;
            let bumped = ts
                .unary::<_, Micros>(|us| us.saturating_add(999))
                .with_timezone_opt(ts.timezone());
            Some(std::sync::Arc::new(bumped))
        }
        _ => Some(a),
    }
}

/// Statistics known from a file's partition values alone (its `stats` unread): what a
/// checkpoint's `add.partitionValues` column tells before the rest of the add is decoded.
pub struct PartitionStats<'a> {
    /// The table's top-level fields.
    pub fields: &'a [StructField],
    /// The table's partition columns.
    pub partition_columns: &'a [String],
    /// The file's partition values (physical names under column mapping).
    pub values: &'a StringMap,
}

impl StatsSource for PartitionStats<'_> {
    fn column(&self, path: &[String]) -> Option<ColumnStats> {
        partition_column_stats(self.fields, self.partition_columns, self.values, path)?
    }
}

/// `Some` when `path` is a partition column: the statistics of its one value (`None`
/// inside when the value cannot be read as the column's type).
fn partition_column_stats(
    fields: &[StructField],
    partition_columns: &[String],
    values: &StringMap,
    path: &[String],
) -> Option<Option<ColumnStats>> {
    let chain = field_path(fields, path)?;
    let [top] = chain.as_slice() else {
        return None;
    };
    if !partition_columns.contains(&top.name) {
        return None;
    }
    let ty = to_arrow_type(&top.data_type).ok();
    let key = top.physical_name().unwrap_or(&top.name);
    let raw = values
        .get(key)
        .or_else(|| values.get(&top.name))
        .and_then(|v| v.as_deref());
    Some(ty.and_then(|ty| {
        let a = partition_array(&top.name, raw, &top.data_type, &ty, 1).ok()?;
        let null = a.is_null(0);
        Some(ColumnStats {
            min: Some(a.clone()),
            max: Some(a),
            any_null: Some(null),
            all_null: Some(null),
        })
    }))
}

impl StatsSource for FileStats<'_> {
    fn column(&self, path: &[String]) -> Option<ColumnStats> {
        let partition = partition_column_stats(
            self.fields,
            self.partition_columns,
            &self.add.partition_values,
            path,
        );
        if let Some(stats) = partition {
            return stats;
        }
        let chain = field_path(self.fields, path)?;
        let leaf = chain.last()?;
        let ty = to_arrow_type(&leaf.data_type).ok()?;
        if !matches!(leaf.data_type, DataType::Primitive(_)) {
            return None;
        }
        let stats = self.stats.as_ref()?;
        let lookup = |section: &str| -> Option<&Value> {
            let mut v = stats.get(section)?;
            for f in &chain {
                v = v.get(f.physical_name().unwrap_or(&f.name))?;
            }
            Some(v)
        };
        let rows = stats.get("numRecords").and_then(Value::as_i64);
        let nulls = lookup("nullCount").and_then(Value::as_i64);
        // after type widening, files written before hold bounds in the older type
        let widened = leaf.metadata.contains_key("delta.typeChanges");
        Some(ColumnStats {
            min: lookup("minValues")
                .filter(|_| !widened)
                .and_then(|v| stat_array(v, &ty, false)),
            max: lookup("maxValues")
                .filter(|_| !widened)
                .and_then(|v| stat_array(v, &ty, true)),
            any_null: nulls.map(|n| n > 0),
            all_null: nulls.zip(rows).map(|(n, r)| n == r),
        })
    }
}

/// Statistics of one row group, from the Parquet footer (top-level columns), with the
/// file's partition values.
pub struct RowGroupStats<'a> {
    /// The statistics of the file the row group belongs to.
    pub file: &'a FileStats<'a>,
    /// The file's Parquet footer.
    pub metadata: &'a ParquetMetaData,
    /// The file's own Arrow schema (physical names).
    pub file_schema: &'a arrow_schema::Schema,
    /// The table's column mapping mode, to find columns in the file.
    pub mode: ColumnMappingMode,
    /// The row group's index in the file.
    pub row_group: usize,
}

impl StatsSource for RowGroupStats<'_> {
    fn column(&self, path: &[String]) -> Option<ColumnStats> {
        let chain = field_path(self.file.fields, path)?;
        let top = *chain.first()?;
        if self.file.partition_columns.contains(&top.name) {
            return self.file.column(path);
        }
        if chain.len() != 1 || !matches!(top.data_type, DataType::Primitive(_)) {
            return None;
        }
        let ty = to_arrow_type(&top.data_type).ok()?;
        let idx = crate::column_mapping::find_physical(self.file_schema.fields(), top, self.mode)?;
        let name = self.file_schema.field(idx).name();
        let conv = StatisticsConverter::try_new(
            name,
            self.file_schema,
            self.metadata.file_metadata().schema_descr(),
        )
        .ok()?;
        let rg = std::iter::once(self.metadata.row_group(self.row_group));
        let cast = |a: ArrayRef| -> Option<ArrayRef> {
            if a.data_type() == &ty {
                return Some(a);
            }
            crate::column_mapping::conform("", &a, &top.data_type, &ty, self.mode).ok()
        };
        let min = conv.row_group_mins(rg.clone()).ok().and_then(cast);
        let max = conv.row_group_maxes(rg.clone()).ok().and_then(cast);
        let nulls = conv
            .row_group_null_counts(rg)
            .ok()
            .filter(|n| n.is_valid(0))
            .map(|n| n.value(0));
        let rows = self.metadata.row_group(self.row_group).num_rows() as u64;
        Some(ColumnStats {
            min,
            max,
            any_null: nulls.map(|n| n > 0),
            all_null: nulls.map(|n| n == rows),
        })
    }
}

/// The top-level `AND` conjuncts of a predicate.
fn conjuncts(p: &Predicate) -> Vec<&Predicate> {
    match p {
        Predicate::And(a, b) => {
            let mut v = conjuncts(a);
            v.extend(conjuncts(b));
            v
        }
        other => vec![other],
    }
}

/// One page's statistics for one column.
struct PageStats<'a> {
    column: &'a [String],
    stats: ColumnStats,
}

impl StatsSource for PageStats<'_> {
    fn column(&self, path: &[String]) -> Option<ColumnStats> {
        (path.len() == self.column.len()
            && path
                .iter()
                .zip(self.column)
                .all(|(a, b)| a.eq_ignore_ascii_case(b)))
        .then(|| self.stats.clone())
    }
}

/// The rows of row group `rg` that the page index (column index min/max/null counts and
/// offset index row counts) cannot rule out, for the conjuncts of `p` over one top-level
/// data column each; `None` when nothing can be said.
pub fn page_selection(
    p: &Predicate,
    rg: &RowGroupStats<'_>,
) -> Option<parquet::arrow::arrow_reader::RowSelection> {
    use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
    let page_index = rg.metadata.page_index()?;
    let mut result: Option<RowSelection> = None;
    for c in conjuncts(p) {
        let cols = c.columns();
        let Some(path) = cols.first() else { continue };
        if path.len() != 1 || cols.iter().any(|x| x != path) {
            continue;
        }
        let Some(chain) = field_path(rg.file.fields, path) else {
            continue;
        };
        let top = chain[0];
        if rg.file.partition_columns.contains(&top.name)
            || !matches!(top.data_type, DataType::Primitive(_))
        {
            continue;
        }
        let Ok(ty) = to_arrow_type(&top.data_type) else {
            continue;
        };
        let Some(idx) = crate::column_mapping::find_physical(rg.file_schema.fields(), top, rg.mode)
        else {
            continue;
        };
        let Ok(conv) = StatisticsConverter::try_new(
            rg.file_schema.field(idx).name(),
            rg.file_schema,
            rg.metadata.file_metadata().schema_descr(),
        ) else {
            continue;
        };
        let rows_in_group = rg.metadata.row_group(rg.row_group).num_rows();
        let column = conv.parquet_column_index();
        if !offset_index_is_sane(page_index.as_ref(), rows_in_group, rg.row_group, column) {
            continue;
        }
        let which = [rg.row_group];
        let pi = page_index.as_ref();
        let (Ok(mins), Ok(maxes), Ok(nulls), Ok(Some(rows))) = (
            conv.data_page_mins(pi, which.iter()),
            conv.data_page_maxes(pi, which.iter()),
            conv.data_page_null_counts(pi, which.iter()),
            conv.data_page_row_counts(pi, rg.metadata.row_groups(), which.iter()),
        ) else {
            continue;
        };
        let cast = |a: ArrayRef| -> Option<ArrayRef> {
            if a.data_type() == &ty {
                Some(a)
            } else {
                crate::column_mapping::conform("", &a, &top.data_type, &ty, rg.mode).ok()
            }
        };
        let (Some(mins), Some(maxes)) = (cast(mins), cast(maxes)) else {
            continue;
        };
        if mins.len() != rows.len() || maxes.len() != rows.len() {
            continue;
        }
        let mut selectors = Vec::with_capacity(rows.len());
        for j in 0..rows.len() {
            let n = rows.value(j) as usize;
            let nc = nulls.is_valid(j).then(|| nulls.value(j));
            let src = PageStats {
                column: path,
                stats: ColumnStats {
                    min: Some(mins.slice(j, 1)),
                    max: Some(maxes.slice(j, 1)),
                    any_null: nc.map(|x| x > 0),
                    all_null: nc.map(|x| x as usize == n),
                },
            };
            selectors.push(if could_match(c, &src, false) {
                RowSelector::select(n)
            } else {
                RowSelector::skip(n)
            });
        }
        let sel = RowSelection::from(selectors);
        result = Some(match result {
            Some(r) => r.intersection(&sel),
            None => sel,
        });
    }
    result
}

/// Whether the offset index of column `col` in row group `rg` describes pages that start
/// at row 0, in increasing order, inside the row group: the parquet crate's page row
/// counts subtract these without checks (a crafted index overflowed; found by fuzzing).
fn offset_index_is_sane(
    index: &dyn parquet::file::metadata::page_index::PageIndexProvider,
    rows: i64,
    rg: usize,
    col: Option<usize>,
) -> bool {
    let Some(col) = col else {
        return false;
    };
    let Some(pages) = index.offset_index(rg, col) else {
        return true; // no offset index for it: no row counts are computed from one
    };
    let mut previous = None;
    for p in pages.page_locations() {
        let first = p.first_row_index;
        let ordered = match previous {
            None => first == 0,
            Some(prev) => first > prev,
        };
        if !ordered || first >= rows.max(1) {
            return false;
        }
        previous = Some(first);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(ty: &str, max: &str) -> (Vec<StructField>, Add) {
        let fields: Vec<StructField> = deltalens_json::from_value(serde_json::json!([
            {"name": "ts", "type": ty, "nullable": true, "metadata": {}}
        ]))
        .unwrap();
        let stats = serde_json::json!({
            "numRecords": 2,
            "minValues": {"ts": "2024-01-01T00:00:00.000Z"},
            "maxValues": {"ts": max},
            "nullCount": {"ts": 0}
        });
        let add: Add = deltalens_json::from_value(serde_json::json!({
            "path": "a.parquet", "partitionValues": {}, "size": 1, "modificationTime": 0,
            "dataChange": true, "stats": stats.to_string()
        }))
        .unwrap();
        (fields, add)
    }

    // Writers truncate timestamp statistics to milliseconds, so a stored maximum of .123 stands
    // for any value up to .123999: such a file may match up to that bound, not past it.
    #[test]
    fn timestamp_max_statistics_are_widened_to_the_millisecond() {
        for (ty, max) in [
            ("timestamp", "2024-01-01T00:00:00.123Z"),
            ("timestamp_ntz", "2024-01-01T00:00:00.123"),
        ] {
            let (fields, add) = file(ty, max);
            let stats = FileStats::new(&fields, &[], &add);
            let may = |sql: &str| could_match(&Predicate::parse(sql).unwrap(), &stats, false);
            let at = |t: &str| {
                if ty == "timestamp" {
                    format!("TIMESTAMP '2024-01-01 00:00:00.{t}Z'")
                } else {
                    format!("TIMESTAMP_NTZ '2024-01-01 00:00:00.{t}'")
                }
            };
            for (t, expected) in [
                ("123", true),
                ("123456", true),
                ("123999", true),
                ("124", false),
            ] {
                assert_eq!(may(&format!("ts = {}", at(t))), expected, "{ty} ts = .{t}");
                assert_eq!(
                    may(&format!("ts >= {}", at(t))),
                    expected,
                    "{ty} ts >= .{t}"
                );
            }
            assert!(
                may(&format!("ts < {}", at("001"))),
                "{ty}: the minimum is not widened"
            );
        }
    }
}
