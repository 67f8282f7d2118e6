//! Column mapping (PROTOCOL.md "Column Mapping"): find the Parquet column that holds a
//! logical field (by field id, physical name or name) and convert what a data file holds
//! into the table's logical Arrow type — renaming nested fields, filling columns missing
//! from older files with nulls and widening types (type widening, INT96 timestamps).

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::{
    Array, ArrayRef, LargeListArray, ListArray, MapArray, StructArray, new_null_array,
};
use arrow_buffer::OffsetBuffer;
use arrow_schema::{DataType as ArrowType, Field, Fields};

use crate::actions::Metadata;
use crate::error::{Error, Result};
use crate::schema::{DataType, PARQUET_FIELD_ID_KEY, StructField};
use crate::type_widening::widen;

/// The table's column mapping mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnMappingMode {
    /// No column mapping: Parquet columns carry the logical names.
    None,
    /// `name`: columns are found by their `delta.columnMapping.physicalName`.
    Name,
    /// `id`: columns are found by their Parquet field id (`delta.columnMapping.id`).
    Id,
}

impl ColumnMappingMode {
    /// The mode `delta.columnMapping.mode` sets ([`ColumnMappingMode::None`] when unset or
    /// unknown).
    pub fn of(metadata: &Metadata) -> Self {
        match metadata.property("delta.columnMapping.mode") {
            Some("name") => ColumnMappingMode::Name,
            Some("id") => ColumnMappingMode::Id,
            _ => ColumnMappingMode::None,
        }
    }
}

/// The index among `fields` (a Parquet file's fields at one level) of the field holding
/// the logical `field`.
pub fn find_physical(
    fields: &Fields,
    field: &StructField,
    mode: ColumnMappingMode,
) -> Option<usize> {
    let by_name = |name: &str| fields.iter().position(|f| f.name() == name);
    match mode {
        ColumnMappingMode::Id => match field.field_id() {
            Some(id) => {
                let id = id.to_string();
                fields
                    .iter()
                    .position(|f| f.metadata().get(PARQUET_FIELD_ID_KEY) == Some(&id))
                    .or_else(|| field.physical_name().and_then(by_name))
            }
            None => by_name(&field.name),
        },
        ColumnMappingMode::Name => field
            .physical_name()
            .and_then(by_name)
            .or_else(|| by_name(&field.name)),
        ColumnMappingMode::None => by_name(&field.name).or_else(|| {
            fields
                .iter()
                .position(|f| f.name().eq_ignore_ascii_case(&field.name))
        }),
    }
}

/// The fields of one level of a Parquet file's schema, indexed to find the field holding
/// each logical field as [`find_physical`] does, in constant time: finding every column
/// of a wide table costs one pass over the file's fields, not one pass per column.
pub struct PhysicalIndex<'a> {
    fields: &'a Fields,
    mode: ColumnMappingMode,
    /// Position of the first field of each name.
    by_name: HashMap<&'a str, usize>,
    /// Position of the first field of each field id (id mapping only).
    by_id: HashMap<&'a str, usize>,
    /// Position of the first field of each ASCII-case-folded name (no mapping only), made
    /// at the first name that is not found as written.
    by_folded: OnceCell<HashMap<String, usize>>,
}

impl<'a> PhysicalIndex<'a> {
    /// Index `fields` for finding the columns of a table in `mode`.
    pub fn new(fields: &'a Fields, mode: ColumnMappingMode) -> Self {
        let mut by_name = HashMap::with_capacity(fields.len());
        let mut by_id = HashMap::new();
        for (i, f) in fields.iter().enumerate() {
            by_name.entry(f.name().as_str()).or_insert(i);
            if mode == ColumnMappingMode::Id
                && let Some(id) = f.metadata().get(PARQUET_FIELD_ID_KEY)
            {
                by_id.entry(id.as_str()).or_insert(i);
            }
        }
        PhysicalIndex {
            fields,
            mode,
            by_name,
            by_id,
            by_folded: OnceCell::new(),
        }
    }

    /// The index among the fields of the one holding the logical `field`
    /// ([`find_physical`]'s answer).
    pub fn find(&self, field: &StructField) -> Option<usize> {
        let by_name = |name: &str| self.by_name.get(name).copied();
        match self.mode {
            ColumnMappingMode::Id => match field.field_id() {
                Some(id) => self
                    .by_id
                    .get(id.to_string().as_str())
                    .copied()
                    .or_else(|| field.physical_name().and_then(by_name)),
                None => by_name(&field.name),
            },
            ColumnMappingMode::Name => field
                .physical_name()
                .and_then(by_name)
                .or_else(|| by_name(&field.name)),
            ColumnMappingMode::None => by_name(&field.name).or_else(|| {
                let folded = self.by_folded.get_or_init(|| {
                    let mut m = HashMap::with_capacity(self.fields.len());
                    for (i, f) in self.fields.iter().enumerate() {
                        m.entry(f.name().to_ascii_lowercase()).or_insert(i);
                    }
                    m
                });
                folded.get(&field.name.to_ascii_lowercase()).copied()
            }),
        }
    }
}

fn err(path: &str, message: String) -> Error {
    Error::DataFile {
        path: path.to_string(),
        message,
    }
}

/// Convert `array` (as read from a data file) to the logical type `target` of the Delta
/// type `ty`.
pub fn conform(
    path: &str,
    array: &ArrayRef,
    ty: &DataType,
    target: &ArrowType,
    mode: ColumnMappingMode,
) -> Result<ArrayRef> {
    match (ty, target) {
        (DataType::Struct(st), ArrowType::Struct(target_fields)) => {
            let src = array.as_struct_opt().ok_or_else(|| {
                err(
                    path,
                    format!("expected a struct, found {}", array.data_type()),
                )
            })?;
            let src_fields = PhysicalIndex::new(src.fields(), mode);
            let children = st
                .fields
                .iter()
                .zip(target_fields.iter())
                .map(|(f, tf)| match src_fields.find(f) {
                    Some(i) => conform(path, src.column(i), &f.data_type, tf.data_type(), mode),
                    None => Ok(new_null_array(tf.data_type(), src.len())),
                })
                .collect::<Result<Vec<_>>>()?;
            let out = StructArray::try_new(target_fields.clone(), children, src.nulls().cloned())
                .map_err(|e| err(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        (DataType::Array(at), ArrowType::List(target_el)) => {
            let src = match array.data_type() {
                ArrowType::List(_) => array.as_list::<i32>().clone(),
                ArrowType::LargeList(_) => small_list(array.as_list::<i64>())
                    .ok_or_else(|| err(path, "a list of over 2^31 values".into()))?,
                other => return Err(err(path, format!("expected a list, found {other}"))),
            };
            let values = conform(
                path,
                src.values(),
                &at.element_type,
                target_el.data_type(),
                mode,
            )?;
            let out = ListArray::try_new(
                target_el.clone(),
                src.offsets().clone(),
                values,
                src.nulls().cloned(),
            )
            .map_err(|e| err(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        (DataType::Map(mt), ArrowType::Map(entries_field, sorted)) => {
            let src = array
                .as_map_opt()
                .ok_or_else(|| err(path, format!("expected a map, found {}", array.data_type())))?;
            let ArrowType::Struct(kv) = entries_field.data_type() else {
                return Err(err(path, "map entries are not a struct".into()));
            };
            let (Some(kf), Some(vf)) = (kv.first(), kv.get(1)) else {
                return Err(err(path, "map entries lack key or value".into()));
            };
            let keys = conform(path, src.keys(), &mt.key_type, kf.data_type(), mode)?;
            let values = conform(path, src.values(), &mt.value_type, vf.data_type(), mode)?;
            let entries = StructArray::try_new(kv.clone(), vec![keys, values], None)
                .map_err(|e| err(path, e.to_string()))?;
            let out = MapArray::try_new(
                entries_field.clone(),
                src.offsets().clone(),
                entries,
                src.nulls().cloned(),
                *sorted,
            )
            .map_err(|e| err(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        (DataType::Primitive(p), ArrowType::Struct(target_fields)) if p == "variant" => {
            let src = array.as_struct_opt().ok_or_else(|| {
                err(
                    path,
                    format!("expected a variant struct, found {}", array.data_type()),
                )
            })?;
            let children = target_fields
                .iter()
                .map(|tf| match src.column_by_name(tf.name()) {
                    Some(c) => widen(c, tf.data_type()).map_err(|e| err(path, e)),
                    None => Ok(new_null_array(tf.data_type(), src.len())),
                })
                .collect::<Result<Vec<_>>>()?;
            let out = StructArray::try_new(target_fields.clone(), children, src.nulls().cloned())
                .map_err(|e| err(path, e.to_string()))?;
            Ok(Arc::new(out))
        }
        _ => widen(array, target)
            .map_err(|e| err(path, format!("cannot read it as {}: {e}", ty.type_string()))),
    }
}

/// A large list (64-bit offsets) as a list, its values kept: `None` past 2^31 values.
fn small_list(src: &LargeListArray) -> Option<ListArray> {
    let offsets = src
        .offsets()
        .iter()
        .map(|o| i32::try_from(*o).ok())
        .collect::<Option<Vec<i32>>>()?;
    let field = Arc::new(Field::new_list_field(src.value_type(), true));
    ListArray::try_new(
        field,
        OffsetBuffer::new(offsets.into()),
        src.values().clone(),
        src.nulls().cloned(),
    )
    .ok()
}

/// `f` with every nullability relaxed (map keys excepted): data files may hold nulls in
/// fields a later schema declares non-null, and columns missing from older files read as
/// nulls.
pub fn relaxed(f: &Field) -> Field {
    Field::new(f.name(), relaxed_type(f.data_type()), true).with_metadata(f.metadata().clone())
}

fn relaxed_type(t: &ArrowType) -> ArrowType {
    match t {
        ArrowType::Struct(fs) => ArrowType::Struct(fs.iter().map(|f| relaxed(f)).collect()),
        ArrowType::List(el) => ArrowType::List(Arc::new(relaxed(el))),
        ArrowType::Map(entries, sorted) => {
            let inner = match entries.data_type() {
                ArrowType::Struct(kv) if kv.len() == 2 => {
                    ArrowType::Struct(Fields::from(vec![kv[0].as_ref().clone(), relaxed(&kv[1])]))
                }
                other => other.clone(),
            };
            ArrowType::Map(Arc::new(Field::new(entries.name(), inner, false)), *sorted)
        }
        other => other.clone(),
    }
}
