//! Rows loaded page by page for an on-screen grid (the explorer's Data tab): the batches
//! as they came, kept once; a window of them formatted as text cells on demand; column
//! statistics of the loaded rows kept up to date as pages arrive; an order by one column;
//! one row or cell as JSON.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, RecordBatch};
use arrow_ord::ord::make_comparator;
use arrow_schema::{ArrowError, Schema, SchemaRef, SortOptions};

use crate::cell::{text_cells, text_rows};
use crate::error::{PresentError, Result};
use crate::rows::{Format, encode};

/// The statistics of one column over the loaded rows.
#[derive(Clone, Debug, Default)]
pub struct ColumnStats {
    /// Null values.
    pub nulls: usize,
    /// The smallest and the largest non-null value, each as a one-row array; `None` when
    /// every value is null or the type has no order (maps, some nested types).
    pub min: Option<ArrayRef>,
    /// See `min`.
    pub max: Option<ArrayRef>,
    /// False once a value could not be compared: min and max are then unknown.
    pub ordered: bool,
}

/// Loaded rows: batches of one schema, in the order they came.
#[derive(Clone, Debug)]
pub struct Loaded {
    schema: SchemaRef,
    batches: Vec<RecordBatch>,
    /// Row number of each batch's first row.
    starts: Vec<usize>,
    rows: usize,
    stats: Vec<ColumnStats>,
    /// Which result these rows are (see [`Loaded::id`]).
    id: u64,
}

/// The id of the next [`Loaded::new`].
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

fn encode_err(source: ArrowError) -> PresentError {
    PresentError::Encode {
        format: "text",
        source,
    }
}

impl Loaded {
    /// No rows yet, of `schema`.
    pub fn new(schema: SchemaRef) -> Self {
        let stats = schema
            .fields()
            .iter()
            .map(|_| ColumnStats {
                ordered: true,
                ..Default::default()
            })
            .collect();
        Loaded {
            schema,
            batches: Vec::new(),
            starts: Vec::new(),
            rows: 0,
            stats,
            id: NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Which result these rows are: every [`Loaded::new`] takes a new one, and appending
    /// keeps it (a clone shares it). A row once loaded never changes under one id, so a
    /// grid may keep the cells it drew for as long as the id stays.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The schema of the rows.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Rows loaded.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// The batches, in the order they came.
    pub fn batches(&self) -> &[RecordBatch] {
        &self.batches
    }

    /// Statistics of each column over the loaded rows.
    pub fn stats(&self) -> &[ColumnStats] {
        &self.stats
    }

    /// Add a page's batch (of this schema; an empty one is ignored).
    pub fn append(&mut self, batch: RecordBatch) -> Result<()> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if batch.num_columns() != self.schema.fields().len() {
            return Err(encode_err(ArrowError::SchemaError(format!(
                "a batch of {} columns for a grid of {}",
                batch.num_columns(),
                self.schema.fields().len()
            ))));
        }
        for (s, col) in self.stats.iter_mut().zip(batch.columns()) {
            update(s, col);
        }
        self.starts.push(self.rows);
        self.rows += batch.num_rows();
        self.batches.push(batch);
        Ok(())
    }

    /// Where row `i` is: (batch, row in it).
    fn locate(&self, i: usize) -> Option<(usize, usize)> {
        if i >= self.rows {
            return None;
        }
        let b = self.starts.partition_point(|s| *s <= i).checked_sub(1)?;
        Some((b, i - self.starts[b]))
    }

    /// The rows `rows` (row numbers of the loaded rows, in display order) as one batch.
    fn pick(&self, rows: &[usize]) -> Result<RecordBatch> {
        // only the batches the rows are in: interleaving may set up every batch it is
        // given, and a grid holds hundreds of them
        let mut used: Vec<usize> = Vec::new();
        let mut at: Vec<(usize, usize)> = Vec::with_capacity(rows.len());
        for (b, r) in rows.iter().filter_map(|i| self.locate(*i)) {
            let k = match used.iter().position(|u| *u == b) {
                Some(k) => k,
                None => {
                    used.push(b);
                    used.len() - 1
                }
            };
            at.push((k, r));
        }
        let batches: Vec<&RecordBatch> = used.iter().filter_map(|b| self.batches.get(*b)).collect();
        if batches.is_empty() || at.is_empty() {
            return Ok(RecordBatch::new_empty(self.schema.clone()));
        }
        arrow_select::interleave::interleave_record_batch(&batches, &at).map_err(encode_err)
    }

    /// The rows `rows` as text cells (a null value as `null_cell`, nulls inside nested
    /// values as `null`), with the formatter of every other text output.
    pub fn text(&self, rows: &[usize], null_cell: &str) -> Result<Vec<Vec<String>>> {
        text_cells(&self.pick(rows)?, null_cell)
    }

    /// Row `i` as a JSON object (the CLI's `--format json` of that row).
    pub fn row_json(&self, i: usize) -> Result<serde_json::Value> {
        let row = self.pick(&[i])?;
        let bytes = encode(Format::Json, &self.schema, &[row])?;
        let v: serde_json::Value = deltalens_json::from_slice(&bytes)
            .map_err(|e| encode_err(ArrowError::JsonError(e.to_string())))?;
        match v {
            serde_json::Value::Array(mut a) if !a.is_empty() => Ok(a.swap_remove(0)),
            _ => Err(encode_err(ArrowError::JsonError(format!("no row {i}")))),
        }
    }

    /// The loaded rows' numbers ordered by `column` (nulls last; ties keep the loaded
    /// order).
    pub fn order_by(&self, column: usize, descending: bool) -> Result<Vec<usize>> {
        let arrays: Vec<&dyn Array> = self
            .batches
            .iter()
            .filter_map(|b| b.columns().get(column).map(|c| c.as_ref()))
            .collect();
        let mut order: Vec<usize> = (0..self.rows).collect();
        if arrays.is_empty() {
            return Ok(order);
        }
        let all = arrow_select::concat::concat(&arrays).map_err(encode_err)?;
        let cmp = make_comparator(
            all.as_ref(),
            all.as_ref(),
            SortOptions {
                descending,
                nulls_first: false,
            },
        )
        .map_err(encode_err)?;
        order.sort_by(|a, b| cmp(*a, *b));
        Ok(order)
    }

    /// A one-row value (as [`ColumnStats::min`] holds) of column `column` as text.
    pub fn value_text(&self, column: usize, value: &ArrayRef) -> Result<String> {
        let field =
            self.schema.fields().get(column).ok_or_else(|| {
                encode_err(ArrowError::SchemaError(format!("no column {column}")))
            })?;
        let one = RecordBatch::try_new(
            Arc::new(Schema::new(vec![field.as_ref().clone()])),
            vec![value.clone()],
        )
        .map_err(encode_err)?;
        Ok(text_rows(&one, "null")?
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or_default())
    }
}

/// Fold a batch's column into the statistics.
fn update(s: &mut ColumnStats, col: &ArrayRef) {
    s.nulls += col.null_count();
    if !s.ordered || col.null_count() == col.len() {
        return;
    }
    let asc = SortOptions {
        descending: false,
        nulls_first: false,
    };
    let Ok(within) = make_comparator(col.as_ref(), col.as_ref(), asc) else {
        s.ordered = false;
        s.min = None;
        s.max = None;
        return;
    };
    let valid: Vec<usize> = (0..col.len()).filter(|i| col.is_valid(*i)).collect();
    let (Some(lo), Some(hi)) = (
        valid.iter().copied().min_by(|a, b| within(*a, *b)),
        valid.iter().copied().max_by(|a, b| within(*a, *b)),
    ) else {
        return;
    };
    let lo = col.slice(lo, 1);
    let hi = col.slice(hi, 1);
    s.min = Some(match s.min.take() {
        Some(m) => smaller(m, lo, asc, true),
        None => lo,
    });
    s.max = Some(match s.max.take() {
        Some(m) => smaller(m, hi, asc, false),
        None => hi,
    });
}

/// The smaller (or, `want_min` false, the larger) of two one-row arrays.
fn smaller(a: ArrayRef, b: ArrayRef, asc: SortOptions, want_min: bool) -> ArrayRef {
    match make_comparator(a.as_ref(), b.as_ref(), asc) {
        Ok(c) => {
            let b_wins = match c(0, 0) {
                std::cmp::Ordering::Greater => want_min,
                std::cmp::Ordering::Less => !want_min,
                std::cmp::Ordering::Equal => false,
            };
            if b_wins { b } else { a }
        }
        Err(_) => a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{Int64Array, MapArray, StringArray};
    use arrow_schema::{DataType, Field};

    fn page(ids: Vec<Option<i64>>, names: Vec<Option<&str>>) -> RecordBatch {
        RecordBatch::try_new(
            Arc::new(Schema::new(vec![
                Field::new("id", DataType::Int64, true),
                Field::new("name", DataType::Utf8, true),
            ])),
            vec![
                Arc::new(Int64Array::from(ids)),
                Arc::new(StringArray::from(names)),
            ],
        )
        .unwrap()
    }

    fn loaded() -> Loaded {
        let a = page(
            vec![Some(3), None, Some(7)],
            vec![Some("c"), Some("a"), None],
        );
        let b = page(vec![Some(-2), Some(9)], vec![Some("zz"), Some("b")]);
        let mut l = Loaded::new(a.schema());
        l.append(a).unwrap();
        l.append(page(vec![], vec![])).unwrap();
        l.append(b).unwrap();
        l
    }

    #[test]
    fn windows_span_batches_in_any_order() {
        let l = loaded();
        assert_eq!(l.rows(), 5);
        assert_eq!(
            l.text(&[2, 3], "∅").unwrap(),
            vec![vec!["7", "∅"], vec!["-2", "zz"]]
        );
        assert_eq!(
            l.text(&[4, 0], "∅").unwrap(),
            vec![vec!["9", "b"], vec!["3", "c"]]
        );
        // rows past the end are left out, not a panic
        assert_eq!(l.text(&[5, 99], "∅").unwrap().len(), 0);
    }

    #[test]
    fn each_result_has_its_own_id_and_appending_keeps_it() {
        let a = page(vec![Some(1)], vec![Some("a")]);
        let mut first = Loaded::new(a.schema());
        let id = first.id();
        first.append(a.clone()).unwrap();
        assert_eq!(first.id(), id);
        assert_eq!(first.clone().id(), id);
        assert_ne!(Loaded::new(a.schema()).id(), id);
    }

    #[test]
    fn stats_of_the_loaded_rows() {
        let l = loaded();
        let s = &l.stats()[0];
        assert_eq!(s.nulls, 1);
        assert_eq!(l.value_text(0, s.min.as_ref().unwrap()).unwrap(), "-2");
        assert_eq!(l.value_text(0, s.max.as_ref().unwrap()).unwrap(), "9");
        let s = &l.stats()[1];
        assert_eq!(s.nulls, 1);
        assert_eq!(l.value_text(1, s.min.as_ref().unwrap()).unwrap(), "a");
        assert_eq!(l.value_text(1, s.max.as_ref().unwrap()).unwrap(), "zz");
    }

    #[test]
    fn order_by_a_column_nulls_last() {
        let l = loaded();
        assert_eq!(l.order_by(0, false).unwrap(), vec![3, 0, 2, 4, 1]);
        assert_eq!(l.order_by(0, true).unwrap(), vec![4, 2, 0, 3, 1]);
        assert_eq!(l.order_by(1, false).unwrap(), vec![1, 4, 0, 3, 2]);
        assert!(l.order_by(7, false).is_ok());
    }

    #[test]
    fn a_row_and_its_cells_as_json() {
        let l = loaded();
        assert_eq!(
            l.row_json(1).unwrap(),
            serde_json::json!({"id": null, "name": "a"})
        );
        assert_eq!(l.row_json(3).unwrap()["id"], serde_json::json!(-2));
        assert!(l.row_json(5).is_err());
    }

    #[test]
    fn a_type_without_order_has_no_range() {
        let values = Int64Array::from(vec![1]);
        let map = MapArray::new_from_strings(["k"].into_iter(), &values, &[0, 1]).unwrap();
        let schema = Arc::new(Schema::new(vec![Field::new(
            "m",
            map.data_type().clone(),
            true,
        )]));
        let b = RecordBatch::try_new(schema.clone(), vec![Arc::new(map)]).unwrap();
        let mut l = Loaded::new(schema);
        l.append(b).unwrap();
        // a range only where values compare; never a panic
        let s = &l.stats()[0];
        assert_eq!(s.min.is_some(), s.ordered, "{s:?}");
        assert_eq!(s.max.is_some(), s.ordered, "{s:?}");
        assert_eq!(l.text(&[0], "∅").unwrap(), vec![vec!["{k: 1}"]]);
    }

    #[test]
    fn a_batch_of_another_shape_is_refused() {
        let mut l = loaded();
        let other = RecordBatch::try_new(
            Arc::new(Schema::new(vec![Field::new("x", DataType::Int64, true)])),
            vec![Arc::new(Int64Array::from(vec![1]))],
        )
        .unwrap();
        assert!(l.append(other).is_err());
        assert_eq!(l.rows(), 5);
    }
}
