//! Checkpoints: classic, multi-part and v2 (UUID-named JSON or Parquet, with sidecars).
//! Parquet checkpoints are read with column projection: only the action columns the
//! caller needs, never `stats_parsed` / `partitionValues_parsed`; tombstones only for
//! [`stream_checkpoint_removes`] (VACUUM's retention, the health report).

use arrow_array::cast::AsArray;
use arrow_array::{Array, ArrayRef, RecordBatch, StructArray};
use arrow_schema::DataType as ArrowType;
use deltalens_storage::{ObjectMeta, Storage};
use futures::{StreamExt, TryStreamExt};

use crate::actions::{
    Action, Add, DeletionVectorDescriptor, DomainMetadata, Format, Metadata, Protocol, Remove,
    Sidecar, StringMap, Txn, parse_actions,
};
use crate::checkpoint_columns::{EXCLUDE, HEAD};
use crate::error::{Error, Result};
use crate::limits;
use crate::limits::FETCH_CONCURRENCY;
use crate::log::SIDECAR_DIR;
use crate::parquet_read::{Columns, Preselect, read_parquet, stream_parquet};

/// Which actions to read from a checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointRead {
    /// Everything a snapshot needs: files, protocol, metadata, txn, domain metadata.
    Snapshot,
    /// Only protocol and metadata.
    ProtocolAndMetadata,
}

impl CheckpointRead {
    fn columns(self) -> Columns<'static> {
        match self {
            CheckpointRead::Snapshot => Columns {
                include: &[
                    &["add"],
                    &["metaData"],
                    &["protocol"],
                    &["txn"],
                    &["domainMetadata"],
                    &["sidecar"],
                    &["checkpointMetadata"],
                ],
                exclude: EXCLUDE,
            },
            CheckpointRead::ProtocolAndMetadata => HEAD,
        }
    }
}

/// The actions of a checkpoint: its `add`s apart (they are most of it), the rest in order.
#[derive(Debug, Default)]
pub struct CheckpointActions {
    /// The `add` actions, from the checkpoint's parts and sidecars.
    pub adds: Vec<Add>,
    /// Every other action (protocol, metadata, txn, sidecar, …), in file order.
    pub others: Vec<Action>,
}

impl CheckpointActions {
    fn push(&mut self, a: Action) {
        match a {
            Action::Add(add) => self.adds.push(add),
            other => self.others.push(other),
        }
    }

    fn extend(&mut self, more: CheckpointActions) {
        if self.adds.is_empty() {
            self.adds = more.adds;
        } else {
            self.adds.extend(more.adds);
        }
        self.others.extend(more.others);
    }
}

/// Read the actions of a checkpoint made of `parts` (one file, or every part of a
/// multi-part checkpoint), following v2 sidecars.
pub async fn read_checkpoint<S: Storage + ?Sized>(
    storage: &S,
    parts: &[ObjectMeta],
    what: CheckpointRead,
) -> Result<CheckpointActions> {
    let per_part: Vec<CheckpointActions> = futures::stream::iter(parts)
        .map(|p| read_one(storage, p, what))
        .buffered(FETCH_CONCURRENCY)
        .try_collect()
        .await?;
    let mut all = CheckpointActions::default();
    for p in per_part {
        all.extend(p);
    }
    let sidecars: Vec<Sidecar> = all
        .others
        .iter()
        .filter_map(|a| match a {
            Action::Sidecar(s) => Some(s.clone()),
            _ => None,
        })
        .collect();
    if what == CheckpointRead::Snapshot && !sidecars.is_empty() {
        check_sidecar_count(parts, sidecars.len())?;
        let files: Vec<CheckpointActions> = futures::stream::iter(&sidecars)
            .map(|s| read_sidecar(storage, s))
            .buffered(FETCH_CONCURRENCY)
            .try_collect()
            .await?;
        for f in files {
            all.extend(f);
        }
    }
    Ok(all)
}

/// Rows of a checkpoint fetched at a time when streaming its adds: about 8 MB of pages for
/// adds with JSON statistics. Within a window, batches are sized by the bytes they decode
/// ([`limits::BATCH_BYTES`]): a `stats` string stored once in a dictionary is copied into
/// every row it is decoded for.
pub const STREAM_WINDOW_ROWS: usize = 16 * 1024;

/// Stream the `add` actions of a checkpoint made of `parts` (then of its v2 sidecars) a
/// batch at a time to `on_adds`, which returns false to stop: memory follows the batch,
/// not the checkpoint. Checkpoint adds are reconciled among themselves already.
///
/// With `keep_partition`, a Parquet file's `add.partitionValues` column is read first and
/// only the adds whose partition values it keeps are decoded (others may still be handed
/// over: the caller filters again); pages holding none of them are never fetched.
pub async fn stream_checkpoint_adds<S: Storage + ?Sized>(
    storage: &S,
    parts: &[ObjectMeta],
    keep_partition: Option<&dyn Fn(&StringMap) -> bool>,
    on_adds: &mut dyn FnMut(Vec<Add>) -> Result<bool>,
) -> Result<()> {
    let mut sidecars = Vec::new();
    for part in parts {
        let file = StreamedFile {
            path: &part.path,
            size: part.size,
            top_level: true,
        };
        if !stream_file_adds(storage, file, keep_partition, &mut sidecars, on_adds).await? {
            return Ok(());
        }
    }
    if sidecars.is_empty() {
        return Ok(());
    }
    check_sidecar_count(parts, sidecars.len())?;
    let located: Vec<(String, u64)> = futures::stream::iter(&sidecars)
        .map(|s| locate_sidecar(storage, s))
        .buffered(FETCH_CONCURRENCY)
        .try_collect()
        .await?;
    // small sidecars are read whole, a few at once (in order); a large one streams when
    // its turn comes
    let ahead = futures::stream::iter(located)
        .map(|(path, size)| async move {
            if size > SIDECAR_READ_WHOLE_BYTES {
                return Ok(SidecarRead::Stream(path, size));
            }
            let mut adds = read_file_adds(storage, &path, size).await?;
            if let Some(keep) = keep_partition {
                adds.retain(|a| keep(&a.partition_values));
            }
            Ok::<_, Error>(SidecarRead::Whole(adds))
        })
        .buffered(SIDECAR_READ_AHEAD);
    let mut ahead = std::pin::pin!(ahead);
    while let Some(read) = ahead.try_next().await? {
        let go_on = match read {
            SidecarRead::Whole(adds) => on_adds(adds)?,
            SidecarRead::Stream(path, size) => {
                let file = StreamedFile {
                    path: &path,
                    size,
                    top_level: false,
                };
                stream_file_adds(storage, file, keep_partition, &mut Vec::new(), on_adds).await?
            }
        };
        if !go_on {
            return Ok(());
        }
    }
    Ok(())
}

/// The columns of a checkpoint's tombstones: what VACUUM's retention needs (path and
/// deletion vector for reconciliation, deletion time, size), never their statistics.
const REMOVE_COLUMNS: &[&[&str]] = &[
    &["remove", "path"],
    &["remove", "deletionTimestamp"],
    &["remove", "dataChange"],
    &["remove", "size"],
    &["remove", "deletionVector"],
];

/// Stream the `remove` actions (tombstones) of a checkpoint made of `parts` (then of its
/// v2 sidecars, which hold adds and removes) a batch at a time to `on_removes`, which
/// returns false to stop: memory follows the batch, not the checkpoint. Only the
/// tombstone columns are read (the adds' pages are never fetched from a Parquet file).
pub async fn stream_checkpoint_removes<S: Storage + ?Sized>(
    storage: &S,
    parts: &[ObjectMeta],
    on_removes: &mut dyn FnMut(Vec<Remove>) -> Result<bool>,
) -> Result<()> {
    let mut sidecars = Vec::new();
    for part in parts {
        if !stream_file_removes(
            storage,
            &part.path,
            part.size,
            true,
            &mut sidecars,
            on_removes,
        )
        .await?
        {
            return Ok(());
        }
    }
    if sidecars.is_empty() {
        return Ok(());
    }
    check_sidecar_count(parts, sidecars.len())?;
    for s in &sidecars {
        let (path, size) = locate_sidecar(storage, s).await?;
        if !stream_file_removes(storage, &path, size, false, &mut Vec::new(), on_removes).await? {
            return Ok(());
        }
    }
    Ok(())
}

/// The removes of one checkpoint file to `on_removes` (and, for a top-level file, its
/// sidecar actions into `sidecars`); false when `on_removes` asked to stop.
async fn stream_file_removes<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    size: u64,
    top_level: bool,
    sidecars: &mut Vec<Sidecar>,
    on_removes: &mut dyn FnMut(Vec<Remove>) -> Result<bool>,
) -> Result<bool> {
    if path.ends_with(".json") {
        let data = storage.get(path).await?;
        let mut removes = Vec::new();
        for a in parse_actions(path, &data)? {
            match a {
                Action::Remove(r) => removes.push(r),
                Action::Sidecar(s) if top_level => sidecars.push(s),
                _ => {}
            }
        }
        return on_removes(removes);
    }
    let with_sidecars: Vec<&[&str]> = REMOVE_COLUMNS
        .iter()
        .copied()
        .chain(top_level.then_some(&["sidecar"][..]))
        .collect();
    let columns = Columns {
        include: &with_sidecars,
        exclude: EXCLUDE,
    };
    let mut go_on = true;
    stream_parquet(
        storage,
        path,
        size,
        columns,
        STREAM_WINDOW_ROWS,
        None,
        &mut |b| {
            let mut removes = Vec::new();
            removes_from_batch(path, &b, &mut removes)?;
            let mut others = CheckpointActions::default();
            // the batch holds removes and sidecars only: the sidecars come out as actions
            actions_from_batch(path, &b, &mut others)?;
            sidecars.extend(others.others.into_iter().filter_map(|a| match a {
                Action::Sidecar(s) => Some(s),
                _ => None,
            }));
            go_on = on_removes(removes)?;
            Ok(go_on)
        },
    )
    .await?;
    Ok(go_on)
}

/// Sidecars at most this large are read whole when streaming a checkpoint's adds, up to
/// [`SIDECAR_READ_AHEAD`] at once (so memory holds a few of them); larger ones stream.
pub const SIDECAR_READ_WHOLE_BYTES: u64 = 4 << 20;

/// Small sidecars read at once ahead of the one being handed over.
pub const SIDECAR_READ_AHEAD: usize = 4;

/// A sidecar's adds as the stream hands them over.
enum SidecarRead {
    /// Read whole.
    Whole(Vec<Add>),
    /// Too large to read whole: streamed in its turn (path, size).
    Stream(String, u64),
}

/// One file of a checkpoint being streamed.
#[derive(Clone, Copy)]
struct StreamedFile<'a> {
    path: &'a str,
    size: u64,
    /// A part (which may name sidecars), not a sidecar.
    top_level: bool,
}

/// The adds of one checkpoint file to `on_adds` (and, for a top-level file, its sidecar
/// actions into `sidecars`); false when `on_adds` asked to stop.
async fn stream_file_adds<S: Storage + ?Sized>(
    storage: &S,
    file: StreamedFile<'_>,
    keep_partition: Option<&dyn Fn(&StringMap) -> bool>,
    sidecars: &mut Vec<Sidecar>,
    on_adds: &mut dyn FnMut(Vec<Add>) -> Result<bool>,
) -> Result<bool> {
    let path = file.path;
    let split = |actions: CheckpointActions, sidecars: &mut Vec<Sidecar>| {
        sidecars.extend(actions.others.into_iter().filter_map(|a| match a {
            Action::Sidecar(s) => Some(s),
            _ => None,
        }));
        actions.adds
    };
    if path.ends_with(".json") {
        let data = storage.get(path).await?;
        let mut actions = CheckpointActions::default();
        for a in parse_actions(path, &data)? {
            actions.push(a);
        }
        return on_adds(split(actions, sidecars));
    }
    let columns = Columns {
        include: if file.top_level {
            &[&["add"], &["sidecar"]]
        } else {
            &[&["add"]]
        },
        exclude: EXCLUDE,
    };
    let mut keep_rows = |b: &RecordBatch, out: &mut Vec<bool>| {
        if let Some(keep) = keep_partition {
            rows_to_decode(b, keep, out);
        }
        Ok(())
    };
    let preselect = keep_partition.map(|_| Preselect {
        columns: Columns {
            include: &[&["add", "partitionValues"], &["sidecar", "path"]],
            exclude: EXCLUDE,
        },
        keep: &mut keep_rows,
    });
    let mut go_on = true;
    stream_parquet(
        storage,
        path,
        file.size,
        columns,
        STREAM_WINDOW_ROWS,
        preselect,
        &mut |b| {
            let mut actions = CheckpointActions::default();
            actions_from_batch(path, &b, &mut actions)?;
            go_on = on_adds(split(actions, sidecars))?;
            Ok(go_on)
        },
    )
    .await?;
    Ok(go_on)
}

/// For each row of `b` (a checkpoint's `add.partitionValues` and `sidecar.path`), whether
/// to decode it: a sidecar, or an add whose partition values `keep` keeps.
fn rows_to_decode(b: &RecordBatch, keep: &dyn Fn(&StringMap) -> bool, out: &mut Vec<bool>) {
    let add = ActionColumn::of(b, "add");
    let sidecar = ActionColumn::of(b, "sidecar");
    for i in 0..b.num_rows() {
        let is_sidecar = sidecar.as_ref().is_some_and(|s| s.valid(i));
        let kept_add = add.as_ref().is_some_and(|a| {
            a.valid(i) && keep(&map_at(a.field("partitionValues"), i).unwrap_or_default())
        });
        out.push(is_sidecar || kept_add);
    }
}

async fn read_one<S: Storage + ?Sized>(
    storage: &S,
    file: &ObjectMeta,
    what: CheckpointRead,
) -> Result<CheckpointActions> {
    let mut out = CheckpointActions::default();
    if file.path.ends_with(".json") {
        let data = storage.get(&file.path).await?;
        for a in parse_actions(&file.path, &data)? {
            out.push(a);
        }
        return Ok(out);
    }
    read_parquet(storage, &file.path, file.size, what.columns(), &mut |b| {
        actions_from_batch(&file.path, b, &mut out)
    })
    .await?;
    Ok(out)
}

/// At most [`limits::MAX_SIDECARS`] sidecars for the checkpoint made of `parts`.
fn check_sidecar_count(parts: &[ObjectMeta], n: usize) -> Result<()> {
    let first = parts.first().map_or("", |p| p.path.as_str());
    limits::check(
        "MAX_SIDECARS",
        "the number of sidecar files",
        n as u64,
        limits::MAX_SIDECARS,
        first,
    )
}

/// A sidecar's path under `_delta_log/_sidecars/` and its size (asked of the store when
/// the action does not give it).
async fn locate_sidecar<S: Storage + ?Sized>(
    storage: &S,
    sidecar: &Sidecar,
) -> Result<(String, u64)> {
    let path = sidecar_path(&sidecar.path)?;
    let size = if sidecar.size_in_bytes > 0 {
        sidecar.size_in_bytes as u64
    } else {
        storage.head(&path).await?.size
    };
    Ok((path, size))
}

async fn read_sidecar<S: Storage + ?Sized>(
    storage: &S,
    sidecar: &Sidecar,
) -> Result<CheckpointActions> {
    let (path, size) = locate_sidecar(storage, sidecar).await?;
    Ok(CheckpointActions {
        adds: read_file_adds(storage, &path, size).await?,
        others: Vec::new(),
    })
}

/// The adds of the Parquet sidecar at `path`, read whole.
async fn read_file_adds<S: Storage + ?Sized>(
    storage: &S,
    path: &str,
    size: u64,
) -> Result<Vec<Add>> {
    let columns = Columns {
        include: &[&["add"]],
        exclude: EXCLUDE,
    };
    let mut out = CheckpointActions::default();
    read_parquet(storage, path, size, columns, &mut |b| {
        actions_from_batch(path, b, &mut out)
    })
    .await?;
    Ok(out.adds)
}

/// Where a sidecar lives: its name under `_delta_log/_sidecars/`.
fn sidecar_path(path: &str) -> Result<String> {
    if path.contains("://") {
        return Err(Error::InvalidLog {
            path: path.to_string(),
            message: "sidecar paths outside the table's _delta_log/_sidecars are not supported"
                .into(),
        });
    }
    let name = path.rsplit('/').next().unwrap_or(path);
    let decoded = crate::table_path::decode_checked(name).map_err(|message| Error::InvalidLog {
        path: path.to_string(),
        message: format!("sidecar path refused: {message}"),
    })?;
    Ok(format!("{SIDECAR_DIR}{decoded}"))
}

fn str_at(a: Option<&ArrayRef>, i: usize) -> Option<String> {
    let a = a?;
    if a.is_null(i) {
        return None;
    }
    match a.data_type() {
        ArrowType::Utf8 => Some(a.as_string::<i32>().value(i).to_string()),
        ArrowType::LargeUtf8 => Some(a.as_string::<i64>().value(i).to_string()),
        ArrowType::Utf8View => Some(a.as_string_view().value(i).to_string()),
        _ => None,
    }
}

fn i64_at(a: Option<&ArrayRef>, i: usize) -> Option<i64> {
    use arrow_array::types::{Int16Type, Int32Type, Int64Type};
    let a = a?;
    if a.is_null(i) {
        return None;
    }
    match a.data_type() {
        ArrowType::Int64 => Some(a.as_primitive::<Int64Type>().value(i)),
        ArrowType::Int32 => Some(a.as_primitive::<Int32Type>().value(i) as i64),
        ArrowType::Int16 => Some(a.as_primitive::<Int16Type>().value(i) as i64),
        _ => None,
    }
}

fn bool_at(a: Option<&ArrayRef>, i: usize) -> Option<bool> {
    let a = a?;
    if a.is_null(i) {
        return None;
    }
    match a.data_type() {
        ArrowType::Boolean => Some(a.as_boolean().value(i)),
        _ => None,
    }
}

fn map_at(a: Option<&ArrayRef>, i: usize) -> Option<StringMap> {
    let a = a?;
    if a.is_null(i) {
        return None;
    }
    let m = a.as_map_opt()?;
    // index the whole key/value children by offsets: slicing per row would allocate
    let offsets = m.value_offsets();
    let (start, end) = (offsets[i] as usize, offsets[i + 1] as usize);
    let (keys, values) = (m.keys(), m.values());
    Some(
        (start..end)
            .filter_map(|j| Some((str_at(Some(keys), j)?, str_at(Some(values), j))))
            .collect(),
    )
}

fn str_list_at(a: Option<&ArrayRef>, i: usize) -> Option<Vec<String>> {
    let a = a?;
    if a.is_null(i) {
        return None;
    }
    let values = match a.data_type() {
        ArrowType::List(_) => a.as_list::<i32>().value(i),
        ArrowType::LargeList(_) => a.as_list::<i64>().value(i),
        _ => return None,
    };
    Some(
        (0..values.len())
            .filter_map(|j| str_at(Some(&values), j))
            .collect(),
    )
}

/// One action's struct column of a checkpoint batch (`add`, `metaData`, …): its fields
/// by name and the validity of its rows.
struct ActionColumn<'a> {
    array: &'a StructArray,
}

impl<'a> ActionColumn<'a> {
    fn of(batch: &'a RecordBatch, name: &str) -> Option<ActionColumn<'a>> {
        batch
            .column_by_name(name)
            .and_then(|c| c.as_struct_opt())
            .map(|array| ActionColumn { array })
    }
    fn struct_field(&self, name: &str) -> Option<ActionColumn<'a>> {
        self.array
            .column_by_name(name)
            .and_then(|c| c.as_struct_opt())
            .map(|array| ActionColumn { array })
    }
    fn field(&self, name: &str) -> Option<&'a ArrayRef> {
        self.array.column_by_name(name)
    }
    fn valid(&self, i: usize) -> bool {
        self.array.is_valid(i)
    }
}

fn required<T>(v: Option<T>, path: &str, row: usize, what: &str) -> Result<T> {
    v.ok_or_else(|| Error::InvalidAction {
        path: path.to_string(),
        line: row + 1,
        message: format!("checkpoint row is missing {what}"),
    })
}

fn dv_at(c: Option<ActionColumn<'_>>, i: usize) -> Option<DeletionVectorDescriptor> {
    let c = c?;
    if !c.valid(i) {
        return None;
    }
    Some(DeletionVectorDescriptor {
        storage_type: str_at(c.field("storageType"), i)?,
        path_or_inline_dv: str_at(c.field("pathOrInlineDv"), i)?,
        offset: i64_at(c.field("offset"), i).map(|o| o as i32),
        size_in_bytes: i64_at(c.field("sizeInBytes"), i)? as i32,
        cardinality: i64_at(c.field("cardinality"), i)?,
        max_row_index: i64_at(c.field("maxRowIndex"), i),
    })
}

/// `stats_parsed` rows as the JSON statistics strings of `add.stats`.
fn stats_json_lines(path: &str, sp: &StructArray) -> Result<(StructArray, Vec<String>)> {
    let schema = std::sync::Arc::new(arrow_schema::Schema::new(sp.fields().clone()));
    let batch =
        RecordBatch::try_new(schema, sp.columns().to_vec()).map_err(|e| Error::parquet(path, e))?;
    let mut w = arrow_json::LineDelimitedWriter::new(Vec::new());
    w.write(&batch).map_err(|e| Error::parquet(path, e))?;
    w.finish().map_err(|e| Error::parquet(path, e))?;
    let text = String::from_utf8(w.into_inner()).map_err(|e| Error::parquet(path, e))?;
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    if lines.len() != sp.len() {
        return Err(Error::parquet(
            path,
            "stats_parsed rows do not match the add rows",
        ));
    }
    Ok((sp.clone(), lines))
}

/// The tombstones (`remove` rows) of a checkpoint (or sidecar) batch.
fn removes_from_batch(path: &str, b: &RecordBatch, out: &mut Vec<Remove>) -> Result<()> {
    let Some(rm) = ActionColumn::of(b, "remove") else {
        return Ok(());
    };
    let dv = rm.struct_field("deletionVector");
    for i in (0..b.num_rows()).filter(|i| rm.valid(*i)) {
        out.push(Remove {
            path: required(str_at(rm.field("path"), i), path, i, "remove.path")?,
            deletion_timestamp: i64_at(rm.field("deletionTimestamp"), i),
            data_change: bool_at(rm.field("dataChange"), i).unwrap_or_default(),
            partition_values: None,
            size: i64_at(rm.field("size"), i),
            stats: None,
            deletion_vector: dv_at(dv.as_ref().map(|d| ActionColumn { array: d.array }), i),
        });
    }
    Ok(())
}

/// Convert the rows of a checkpoint (or sidecar) batch to actions.
fn actions_from_batch(path: &str, b: &RecordBatch, out: &mut CheckpointActions) -> Result<()> {
    let n = b.num_rows();
    if let Some(add) = ActionColumn::of(b, "add") {
        let dv = add.struct_field("deletionVector");
        let parsed_stats = match add.struct_field("stats_parsed") {
            Some(sp) if add.field("stats").is_none() => Some(stats_json_lines(path, sp.array)?),
            _ => None,
        };
        for i in (0..n).filter(|i| add.valid(*i)) {
            let a = Add {
                path: required(str_at(add.field("path"), i), path, i, "add.path")?,
                partition_values: map_at(add.field("partitionValues"), i).unwrap_or_default(),
                size: required(i64_at(add.field("size"), i), path, i, "add.size")?,
                modification_time: i64_at(add.field("modificationTime"), i).unwrap_or_default(),
                data_change: bool_at(add.field("dataChange"), i).unwrap_or_default(),
                stats: str_at(add.field("stats"), i).or_else(|| {
                    parsed_stats
                        .as_ref()
                        .and_then(|(valid, lines)| valid.is_valid(i).then(|| lines[i].clone()))
                }),
                tags: map_at(add.field("tags"), i),
                deletion_vector: dv_at(dv.as_ref().map(|d| ActionColumn { array: d.array }), i),
                base_row_id: i64_at(add.field("baseRowId"), i),
                default_row_commit_version: i64_at(add.field("defaultRowCommitVersion"), i),
                clustering_provider: str_at(add.field("clusteringProvider"), i),
            };
            if let Some(message) = a.deletion_vector_error() {
                return Err(Error::InvalidAction {
                    path: path.to_string(),
                    line: i + 1,
                    message,
                });
            }
            out.adds.push(a);
        }
    }
    if let Some(md) = ActionColumn::of(b, "metaData") {
        let format = md.struct_field("format");
        for i in (0..n).filter(|i| md.valid(*i)) {
            out.push(Action::Metadata(Metadata {
                id: required(str_at(md.field("id"), i), path, i, "metaData.id")?,
                name: str_at(md.field("name"), i),
                description: str_at(md.field("description"), i),
                format: Format {
                    provider: format
                        .as_ref()
                        .and_then(|f| str_at(f.field("provider"), i))
                        .unwrap_or_else(|| "parquet".into()),
                    options: format
                        .as_ref()
                        .and_then(|f| map_at(f.field("options"), i))
                        .unwrap_or_default(),
                },
                schema_string: required(
                    str_at(md.field("schemaString"), i),
                    path,
                    i,
                    "metaData.schemaString",
                )?,
                partition_columns: str_list_at(md.field("partitionColumns"), i).unwrap_or_default(),
                configuration: map_at(md.field("configuration"), i).unwrap_or_default(),
                created_time: i64_at(md.field("createdTime"), i),
            }));
        }
    }
    if let Some(p) = ActionColumn::of(b, "protocol") {
        for i in (0..n).filter(|i| p.valid(*i)) {
            out.push(Action::Protocol(Protocol {
                min_reader_version: required(
                    i64_at(p.field("minReaderVersion"), i),
                    path,
                    i,
                    "protocol.minReaderVersion",
                )? as i32,
                min_writer_version: i64_at(p.field("minWriterVersion"), i).unwrap_or(1) as i32,
                reader_features: str_list_at(p.field("readerFeatures"), i),
                writer_features: str_list_at(p.field("writerFeatures"), i),
            }));
        }
    }
    if let Some(t) = ActionColumn::of(b, "txn") {
        for i in (0..n).filter(|i| t.valid(*i)) {
            out.push(Action::Txn(Txn {
                app_id: required(str_at(t.field("appId"), i), path, i, "txn.appId")?,
                version: required(i64_at(t.field("version"), i), path, i, "txn.version")?,
                last_updated: i64_at(t.field("lastUpdated"), i),
            }));
        }
    }
    if let Some(d) = ActionColumn::of(b, "domainMetadata") {
        for i in (0..n).filter(|i| d.valid(*i)) {
            out.push(Action::DomainMetadata(DomainMetadata {
                domain: required(
                    str_at(d.field("domain"), i),
                    path,
                    i,
                    "domainMetadata.domain",
                )?,
                configuration: str_at(d.field("configuration"), i).unwrap_or_default(),
                removed: bool_at(d.field("removed"), i).unwrap_or_default(),
            }));
        }
    }
    if let Some(s) = ActionColumn::of(b, "sidecar") {
        for i in (0..n).filter(|i| s.valid(*i)) {
            out.push(Action::Sidecar(Sidecar {
                path: required(str_at(s.field("path"), i), path, i, "sidecar.path")?,
                size_in_bytes: i64_at(s.field("sizeInBytes"), i).unwrap_or_default(),
                modification_time: i64_at(s.field("modificationTime"), i).unwrap_or_default(),
            }));
        }
    }
    if let Some(c) = ActionColumn::of(b, "checkpointMetadata") {
        for i in (0..n).filter(|i| c.valid(*i)) {
            out.push(Action::CheckpointMetadata {
                version: i64_at(c.field("version"), i).unwrap_or_default(),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    #[wasm_bindgen_test(unsupported = test)]
    fn sidecar_paths_resolve_under_sidecars_dir() {
        assert_eq!(
            sidecar_path("abc.parquet").unwrap(),
            "_delta_log/_sidecars/abc.parquet"
        );
        assert_eq!(
            sidecar_path("_sidecars/abc.parquet").unwrap(),
            "_delta_log/_sidecars/abc.parquet"
        );
        assert!(sidecar_path("s3://b/t/_delta_log/_sidecars/abc.parquet").is_err());
        // a hostile log cannot climb out of _sidecars/ (fetch would normalise `..`)
        for bad in [
            "..",
            "_sidecars/..",
            "%2e%2e",
            "_sidecars/%2E%2E",
            "a%2f..%2f..%2fx",
            "",
        ] {
            assert!(sidecar_path(bad).is_err(), "{bad}");
        }
    }
}
