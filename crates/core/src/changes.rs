//! Change data feed (Trino's `table_changes`, Spark's `table_changes`): the rows each
//! commit inserted, deleted or updated, from `cdc` files when a commit has them and
//! otherwise from its `add`s (inserts) and `remove`s (deletes), including rows a grown
//! deletion vector newly deleted. Adds `_change_type`, `_commit_version`,
//! `_commit_timestamp` to the table's columns.

use std::sync::Arc;

use arrow_array::{ArrayRef, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray};
use arrow_schema::{DataType as ArrowType, Field, SchemaRef, TimeUnit};

use crate::actions::{Action, Metadata, parse_actions};
use crate::deletion_vector::deleted_rows;
use crate::error::{Error, Result};
use crate::log::{LogListing, read_files};
use crate::metadata::load_protocol_and_metadata;
use crate::protocol::check_readable;
use crate::scan::{FileRead, RowMask, ScanMetrics, ScanOptions};
use crate::schema::{DataType, StructField};
use crate::snapshot::Snapshot;
use crate::table::Table;

/// Name of the change type column.
pub const CHANGE_TYPE: &str = "_change_type";
/// Name of the commit version column.
pub const COMMIT_VERSION: &str = "_commit_version";
/// Name of the commit timestamp column.
pub const COMMIT_TIMESTAMP: &str = "_commit_timestamp";

fn cdf_enabled(md: &Metadata) -> bool {
    md.property("delta.enableChangeDataFeed")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The change rows of versions `from..=to` (inclusive, as `table_changes`).
pub struct Changes {
    /// The snapshot at the end of the range: its schema shapes the rows.
    pub snapshot: Snapshot,
    /// First version of the range.
    pub from: u64,
    /// Last version of the range (inclusive).
    pub to: u64,
    options: ScanOptions,
    /// The log as listed when the range was planned (read again by `execute`).
    listing: LogListing,
}

impl Changes {
    /// Plan the change feed between two versions; `to` defaults to the latest.
    pub async fn new(
        table: &Table,
        from: u64,
        to: Option<u64>,
        options: ScanOptions,
    ) -> Result<Changes> {
        let listing = table.listing().await?;
        let latest = listing.segment(None, table.location())?.version;
        let to = to.unwrap_or(latest);
        if from > to {
            return Err(Error::InvalidArgument {
                message: format!("the start version {from} is after the end version {to}"),
            });
        }
        let snapshot = Snapshot::load(table, &listing.segment(Some(to), table.location())?).await?;
        if let Some(missing) = (from..=to).find(|v| !listing.commits.contains_key(v)) {
            return Err(Error::MissingVersion {
                version: missing,
                target: to,
            });
        }
        Ok(Changes {
            snapshot,
            from,
            to,
            options,
            listing,
        })
    }

    /// The schema of the change rows.
    pub fn schema(&self) -> Result<SchemaRef> {
        let scan = self.snapshot.scan(self.options.clone())?;
        Ok(scan.schema_with(change_fields()))
    }

    /// Run: hand each batch to `sink` (false stops).
    pub async fn execute(
        &self,
        sink: &mut dyn FnMut(RecordBatch) -> Result<bool>,
    ) -> Result<ScanMetrics> {
        let storage = self.snapshot.table().storage().as_ref();
        let mut metadata = self.metadata_before().await?;
        let files: Vec<_> = (self.from..=self.to)
            .filter_map(|v| self.listing.commits.get(&v))
            .collect();
        let data = read_files(storage, files.iter().map(|f| f.path())).await?;
        let plain = self.snapshot.scan(self.options.clone())?;
        let with_type = self.snapshot.scan(self.options.clone())?.with_extra_field(
            change_type_field(),
            Field::new(CHANGE_TYPE, ArrowType::Utf8, true),
        );
        let mut out = ChangeRows {
            schema: self.schema()?,
            limit: self.options.limit,
            returned: 0,
            sink,
        };
        let mut m = ScanMetrics::default();
        for (f, d) in files.iter().zip(data) {
            let actions = parse_actions(f.path(), &d)?;
            let commit_ts = apply_commit(&actions, &mut metadata)?;
            if !metadata.as_ref().is_some_and(cdf_enabled) {
                return Err(Error::CdfNotEnabled { version: f.version });
            }
            let stamp = Stamp {
                version: f.version,
                ts_us: commit_time_ms(storage, f, commit_ts)
                    .await?
                    .map(|ms| ms * 1000),
                path: f.path(),
            };
            // a commit with cdc files: their rows, with their own `_change_type`
            let (scan, reads) = if actions.iter().any(|a| matches!(a, Action::Cdc(_))) {
                (&with_type, cdc_reads(&actions))
            } else {
                (&plain, self.data_change_reads(f.path(), &actions).await?)
            };
            for (read, change) in &reads {
                let mut sub = ScanMetrics::default();
                let go = scan
                    .read_file(read, None, &mut sub, &mut |b| out.emit(b, *change, &stamp))
                    .await?;
                m.files_read += sub.files_read;
                if !go {
                    m.rows_returned = out.returned;
                    return Ok(m);
                }
            }
        }
        m.rows_returned = out.returned;
        Ok(m)
    }

    /// The metadata in effect before the range starts (none from version 0).
    async fn metadata_before(&self) -> Result<Option<Metadata>> {
        if self.from == 0 {
            return Ok(None);
        }
        let table = self.snapshot.table();
        let seg = self
            .listing
            .segment(Some(self.from - 1), table.location())?;
        Ok(Some(
            load_protocol_and_metadata(table.storage().as_ref(), &seg)
                .await?
                .1,
        ))
    }

    /// The files a commit without cdc files changed, with the change of their rows: an
    /// added file's rows are inserts, a removed file's deletes; a file removed and added
    /// again with another deletion vector changed only the rows the vectors differ in.
    async fn data_change_reads<'a>(
        &self,
        commit: &str,
        actions: &'a [Action],
    ) -> Result<Vec<(FileRead<'a>, Option<&'static str>)>> {
        let table = self.snapshot.table();
        let (storage, location) = (table.storage().as_ref(), table.location());
        let removes: Vec<_> = actions
            .iter()
            .filter_map(|a| match a {
                Action::Remove(r) if r.data_change => Some(r),
                _ => None,
            })
            .collect();
        let mut paired = std::collections::HashSet::new();
        let mut reads = Vec::new();
        for a in actions {
            let Action::Add(add) = a else { continue };
            if !add.data_change {
                continue;
            }
            let new_dv = deleted_rows(storage, add.deletion_vector.as_ref(), location).await?;
            let read = |rows| file_read(&add.path, add.size, &add.partition_values, rows);
            match removes.iter().find(|r| r.path == add.path) {
                Some(r) => {
                    // the same file with another deletion vector: only the difference changed
                    paired.insert(r.path.as_str());
                    let old_dv =
                        deleted_rows(storage, r.deletion_vector.as_ref(), location).await?;
                    let newly_deleted = &new_dv - &old_dv;
                    let restored = &old_dv - &new_dv;
                    if !newly_deleted.is_empty() {
                        reads.push((read(RowMask::Only(newly_deleted)), Some("delete")));
                    }
                    if !restored.is_empty() {
                        reads.push((read(RowMask::Only(restored)), Some("insert")));
                    }
                }
                None => reads.push((read(RowMask::without(new_dv)), Some("insert"))),
            }
        }
        for r in &removes {
            if paired.contains(r.path.as_str()) {
                continue;
            }
            let size = r.size.ok_or_else(|| Error::InvalidLog {
                path: commit.to_string(),
                message: format!(
                    "remove of {} has no size; cannot read its rows for change data",
                    r.path
                ),
            })?;
            let pv = r.partition_values.as_ref().unwrap_or(&EMPTY);
            let dv = deleted_rows(storage, r.deletion_vector.as_ref(), location).await?;
            reads.push((
                file_read(&r.path, size, pv, RowMask::without(dv)),
                Some("delete"),
            ));
        }
        Ok(reads)
    }
}

/// The `_change_type` column cdc files hold.
fn change_type_field() -> StructField {
    StructField {
        name: CHANGE_TYPE.into(),
        data_type: DataType::Primitive("string".into()),
        nullable: true,
        metadata: Default::default(),
    }
}

/// A commit's metadata and protocol take effect (an unreadable protocol is an error);
/// returns its commit time (in-commit timestamp, else `commitInfo.timestamp`), in ms.
fn apply_commit(actions: &[Action], metadata: &mut Option<Metadata>) -> Result<Option<i64>> {
    let mut commit_ts = None;
    for a in actions {
        match a {
            Action::Metadata(md) => *metadata = Some(md.clone()),
            Action::Protocol(p) => check_readable(p)?,
            Action::CommitInfo(ci) => {
                commit_ts = ci
                    .get("inCommitTimestamp")
                    .and_then(|t| t.as_i64())
                    .or_else(|| ci.get("timestamp").and_then(|t| t.as_i64()));
            }
            _ => {}
        }
    }
    Ok(commit_ts)
}

/// When a commit was made, in ms: the time its log records, or else its file's
/// modification time — which a log found without listing does not carry: the store gives
/// it on HEAD (and a store that gives none leaves it null, not the epoch).
async fn commit_time_ms(
    storage: &dyn deltalens_storage::Storage,
    file: &crate::log::LogFile,
    recorded: Option<i64>,
) -> Result<Option<i64>> {
    Ok(match (recorded, file.meta.last_modified_ms) {
        (None, None) => storage.head(file.path()).await?.last_modified_ms,
        (recorded, known) => recorded.or(known),
    })
}

/// The cdc files of a commit (their rows carry their own `_change_type`).
fn cdc_reads(actions: &[Action]) -> Vec<(FileRead<'_>, Option<&'static str>)> {
    actions
        .iter()
        .filter_map(|a| match a {
            Action::Cdc(c) => Some((
                file_read(&c.path, c.size, &c.partition_values, RowMask::All),
                None,
            )),
            _ => None,
        })
        .collect()
}

/// The commit a change row comes from.
struct Stamp<'a> {
    version: u64,
    ts_us: Option<i64>,
    /// The commit file (for messages).
    path: &'a str,
}

/// The change rows handed out so far, against the limit.
struct ChangeRows<'s> {
    schema: SchemaRef,
    limit: Option<usize>,
    returned: usize,
    sink: &'s mut dyn FnMut(RecordBatch) -> Result<bool>,
}

impl ChangeRows<'_> {
    /// `batch` with its change type (unless it has its own), version and time, up to the
    /// limit, into the sink; false to stop.
    fn emit(
        &mut self,
        batch: RecordBatch,
        change: Option<&'static str>,
        stamp: &Stamp<'_>,
    ) -> Result<bool> {
        let batch = match self.limit {
            Some(l) if self.returned + batch.num_rows() > l => batch.slice(0, l - self.returned),
            _ => batch,
        };
        let n = batch.num_rows();
        self.returned += n;
        let mut cols: Vec<ArrayRef> = batch.columns().to_vec();
        if let Some(c) = change {
            cols.push(Arc::new(StringArray::from(vec![c; n])));
        }
        cols.push(Arc::new(Int64Array::from(vec![stamp.version as i64; n])));
        cols.push(Arc::new(
            TimestampMicrosecondArray::from(vec![stamp.ts_us; n]).with_timezone("UTC"),
        ));
        let out = RecordBatch::try_new(self.schema.clone(), cols).map_err(|e| Error::DataFile {
            path: stamp.path.to_string(),
            message: e.to_string(),
        })?;
        Ok((self.sink)(out)? && self.limit.is_none_or(|l| self.returned < l))
    }
}

static EMPTY: crate::actions::StringMap = crate::actions::StringMap::new_const();

fn file_read<'f>(
    path: &'f str,
    size: i64,
    pv: &'f crate::actions::StringMap,
    rows: RowMask,
) -> FileRead<'f> {
    FileRead {
        path,
        size,
        partition_values: pv,
        rows,
    }
}

/// The three columns change rows add.
pub fn change_fields() -> Vec<Field> {
    vec![
        Field::new(CHANGE_TYPE, ArrowType::Utf8, true),
        Field::new(COMMIT_VERSION, ArrowType::Int64, true),
        Field::new(
            COMMIT_TIMESTAMP,
            ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
    ]
}
