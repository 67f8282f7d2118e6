//! The Delta table schema (PROTOCOL.md "Schema Serialization Format") and its Arrow form.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use arrow_schema::{DataType as ArrowType, Field, Fields, Schema, TimeUnit};
use serde::de::{self, Deserializer, MapAccess, Visitor};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Field metadata key of the column-mapping physical name.
pub const PHYSICAL_NAME_KEY: &str = "delta.columnMapping.physicalName";
/// Field metadata key of the column-mapping field id.
pub const FIELD_ID_KEY: &str = "delta.columnMapping.id";
/// Arrow field metadata key the parquet crate uses for field ids.
pub const PARQUET_FIELD_ID_KEY: &str = "PARQUET:field_id";

/// A struct type: the table schema itself, or a nested struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructType {
    /// Always `struct`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The struct's fields, in schema order.
    pub fields: Vec<StructField>,
}

/// One field of a struct.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StructField {
    /// The field's logical name.
    pub name: String,
    /// The field's type.
    #[serde(rename = "type")]
    pub data_type: DataType,
    /// Whether the field can hold nulls (`true` when absent).
    #[serde(default = "yes")]
    pub nullable: bool,
    /// Field metadata: column mapping (`delta.columnMapping.*`), `comment`, …
    #[serde(default)]
    pub metadata: serde_json::Map<String, serde_json::Value>,
}

fn yes() -> bool {
    true
}

/// An array type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ArrayType {
    /// Always `array`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The elements' type.
    pub element_type: DataType,
    /// Whether elements can be null (`true` when absent).
    #[serde(default = "yes")]
    pub contains_null: bool,
}

/// A map type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MapType {
    /// Always `map`.
    #[serde(rename = "type")]
    pub type_name: String,
    /// The keys' type.
    pub key_type: DataType,
    /// The values' type.
    pub value_type: DataType,
    /// Whether values can be null (`true` when absent).
    #[serde(default = "yes")]
    pub value_contains_null: bool,
}

/// A Delta data type.
///
/// Written untagged (a type name, or an object whose `type` says which); read by hand
/// rather than as a serde `untagged` enum, whose buffered content would read a struct
/// from a JSON array.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum DataType {
    /// A primitive type by name: `long`, `string`, `decimal(10,2)`, `timestamp_ntz`, …
    Primitive(String),
    /// A nested struct.
    Struct(Box<StructType>),
    /// An array.
    Array(Box<ArrayType>),
    /// A map.
    Map(Box<MapType>),
}

impl<'de> Deserialize<'de> for DataType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<DataType, D::Error> {
        d.deserialize_any(DataTypeVisitor)
    }
}

struct DataTypeVisitor;

impl<'de> Visitor<'de> for DataTypeVisitor {
    type Value = DataType;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(
            "a Delta type: a type name, or an object whose \"type\" is struct, array or map",
        )
    }

    fn visit_str<E: de::Error>(self, v: &str) -> std::result::Result<DataType, E> {
        Ok(DataType::Primitive(v.to_owned()))
    }

    fn visit_string<E: de::Error>(self, v: String) -> std::result::Result<DataType, E> {
        Ok(DataType::Primitive(v))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> std::result::Result<DataType, A::Error> {
        NestedType::deserialize(de::value::MapAccessDeserializer::new(map))?.into_type()
    }
}

/// The keys of a nested type's object, any of them absent; which are required depends on
/// its `type` (PROTOCOL.md "Struct Type", "Array Type", "Map Type").
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct NestedType {
    #[serde(rename = "type")]
    type_name: String,
    fields: Option<Vec<StructField>>,
    element_type: Option<DataType>,
    contains_null: Option<bool>,
    key_type: Option<DataType>,
    value_type: Option<DataType>,
    value_contains_null: Option<bool>,
}

impl NestedType {
    fn into_type<E: de::Error>(self) -> std::result::Result<DataType, E> {
        let NestedType {
            type_name,
            fields,
            element_type,
            contains_null,
            key_type,
            value_type,
            value_contains_null,
        } = self;
        Ok(match type_name.as_str() {
            "struct" => DataType::Struct(Box::new(StructType {
                fields: need(fields, "fields")?,
                type_name,
            })),
            "array" => DataType::Array(Box::new(ArrayType {
                element_type: need(element_type, "elementType")?,
                contains_null: contains_null.unwrap_or(true),
                type_name,
            })),
            "map" => DataType::Map(Box::new(MapType {
                key_type: need(key_type, "keyType")?,
                value_type: need(value_type, "valueType")?,
                value_contains_null: value_contains_null.unwrap_or(true),
                type_name,
            })),
            other => {
                return Err(E::custom(format!(
                    "a nested type's \"type\" is {other:?}: expected struct, array or map"
                )));
            }
        })
    }
}

/// `value`, or the error that `key` is missing.
fn need<T, E: de::Error>(value: Option<T>, key: &'static str) -> std::result::Result<T, E> {
    value.ok_or_else(|| E::missing_field(key))
}

impl DataType {
    /// The compact type string, e.g. `decimal(10,2)` or `array<struct<a:integer>>`.
    pub fn type_string(&self) -> String {
        match self {
            DataType::Primitive(p) => p.clone(),
            DataType::Struct(s) => format!(
                "struct<{}>",
                s.fields
                    .iter()
                    .map(|f| format!("{}:{}", f.name, f.data_type.type_string()))
                    .collect::<Vec<_>>()
                    .join(",")
            ),
            DataType::Array(a) => format!("array<{}>", a.element_type.type_string()),
            DataType::Map(m) => format!(
                "map<{},{}>",
                m.key_type.type_string(),
                m.value_type.type_string()
            ),
        }
    }
}

impl StructField {
    /// The column-mapping physical name, when the table uses column mapping.
    pub fn physical_name(&self) -> Option<&str> {
        self.metadata
            .get(PHYSICAL_NAME_KEY)
            .and_then(|v| v.as_str())
    }

    /// The column-mapping field id.
    pub fn field_id(&self) -> Option<i64> {
        self.metadata.get(FIELD_ID_KEY).and_then(|v| v.as_i64())
    }

    /// The field's comment, when it has one.
    pub fn comment(&self) -> Option<&str> {
        self.metadata.get("comment").and_then(|v| v.as_str())
    }
}

/// The table schema: parsed from `metaData.schemaString`.
#[derive(Debug, Clone, PartialEq)]
pub struct TableSchema {
    /// The top-level struct: the table's columns.
    pub root: StructType,
    /// The schema JSON exactly as written (field and key order preserved).
    pub raw: serde_json::Value,
    /// The top-level columns by name, built once: a scan looks up every column, and a
    /// search of tens of thousands of columns for each made the scan quadratic.
    names: NameIndex,
}

/// Positions of the top-level columns by name: exact, and ASCII-case-folded (the first
/// column of each folded name).
#[derive(Clone, Default, PartialEq)]
struct NameIndex {
    exact: HashMap<String, usize>,
    folded: HashMap<String, usize>,
    /// The number of columns indexed.
    len: usize,
}

impl NameIndex {
    fn of(fields: &[StructField]) -> NameIndex {
        let mut index = NameIndex {
            len: fields.len(),
            ..NameIndex::default()
        };
        for (i, f) in fields.iter().enumerate() {
            index.exact.entry(f.name.clone()).or_insert(i);
            index.folded.entry(f.name.to_ascii_lowercase()).or_insert(i);
        }
        index
    }
}

impl std::fmt::Debug for NameIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "NameIndex({} columns)", self.len)
    }
}

/// The number of fields of `fields` at every depth (a struct inside an array or a map
/// counted as well): the schema's columns, as [`crate::limits::MAX_SCHEMA_COLUMNS`]
/// counts them.
fn column_count(fields: &[StructField]) -> u64 {
    fn of_type(t: &DataType) -> u64 {
        match t {
            DataType::Primitive(_) => 0,
            DataType::Struct(s) => column_count(&s.fields),
            DataType::Array(a) => of_type(&a.element_type),
            DataType::Map(m) => of_type(&m.key_type).saturating_add(of_type(&m.value_type)),
        }
    }
    fields
        .iter()
        .map(|f| of_type(&f.data_type).saturating_add(1))
        .fold(0, u64::saturating_add)
}

impl TableSchema {
    /// Parse `metaData.schemaString`. A schema of more columns than
    /// [`crate::limits::MAX_SCHEMA_COLUMNS`] is refused before anything is made of it.
    pub fn parse(schema_string: &str) -> Result<TableSchema> {
        let raw: serde_json::Value =
            deltalens_json::from_str(schema_string).map_err(|e| Error::InvalidSchema {
                message: format!("schemaString is not JSON: {e}"),
            })?;
        let root: StructType =
            deltalens_json::from_value(raw.clone()).map_err(|e| Error::InvalidSchema {
                message: format!("schemaString is not a Delta struct type: {e}"),
            })?;
        if root.type_name != "struct" {
            return Err(Error::InvalidSchema {
                message: format!(
                    "the schema's type is {:?}, expected \"struct\"",
                    root.type_name
                ),
            });
        }
        crate::limits::check(
            "MAX_SCHEMA_COLUMNS",
            "the number of columns of the table schema (nested fields counted)",
            column_count(&root.fields),
            crate::limits::MAX_SCHEMA_COLUMNS,
            "metaData.schemaString",
        )?;
        // Validate every type once so later conversions cannot fail on bad input.
        to_arrow_fields(&root)?;
        let names = NameIndex::of(&root.fields);
        Ok(TableSchema { root, raw, names })
    }

    /// The table's top-level columns, in schema order.
    pub fn fields(&self) -> &[StructField] {
        &self.root.fields
    }

    /// The position among [`Self::fields`] of the column named `name` exactly, in constant
    /// time.
    pub fn index_of_exact(&self, name: &str) -> Option<usize> {
        let fields = &self.root.fields;
        match self.names.exact.get(name) {
            Some(&i) if fields.get(i).is_some_and(|f| f.name == name) => Some(i),
            None if self.names.len == fields.len() => None,
            // `root` was changed after parsing: search it
            _ => fields.iter().position(|f| f.name == name),
        }
    }

    /// The position among [`Self::fields`] of the column named `name`: exactly, else the
    /// first whose name equals it ignoring ASCII case; in constant time.
    pub fn index_of(&self, name: &str) -> Option<usize> {
        let fields = &self.root.fields;
        self.index_of_exact(name).or_else(|| {
            match self.names.folded.get(&name.to_ascii_lowercase()) {
                Some(&i)
                    if fields
                        .get(i)
                        .is_some_and(|f| f.name.eq_ignore_ascii_case(name)) =>
                {
                    Some(i)
                }
                None if self.names.len == fields.len() => None,
                _ => fields
                    .iter()
                    .position(|f| f.name.eq_ignore_ascii_case(name)),
            }
        })
    }

    /// The schema as Arrow, with logical names; column-mapping physical names and field
    /// ids are kept as field metadata (`delta.columnMapping.physicalName`, `PARQUET:field_id`).
    pub fn to_arrow(&self) -> Result<Schema> {
        Ok(Schema::new(to_arrow_fields(&self.root)?))
    }
}

fn to_arrow_fields(s: &StructType) -> Result<Fields> {
    s.fields
        .iter()
        .map(to_arrow_field)
        .collect::<Result<Vec<Field>>>()
        .map(Fields::from)
}

fn to_arrow_field(f: &StructField) -> Result<Field> {
    let mut md = HashMap::new();
    if let Some(p) = f.physical_name() {
        md.insert(PHYSICAL_NAME_KEY.to_string(), p.to_string());
    }
    if let Some(id) = f.field_id() {
        md.insert(PARQUET_FIELD_ID_KEY.to_string(), id.to_string());
    }
    if let Some(c) = f.comment() {
        md.insert("comment".to_string(), c.to_string());
    }
    Ok(Field::new(&f.name, to_arrow_type(&f.data_type)?, f.nullable).with_metadata(md))
}

/// Convert a Delta type to its Arrow type.
pub fn to_arrow_type(t: &DataType) -> Result<ArrowType> {
    Ok(match t {
        DataType::Primitive(p) => primitive_to_arrow(p)?,
        DataType::Struct(s) => ArrowType::Struct(to_arrow_fields(s)?),
        DataType::Array(a) => ArrowType::List(Arc::new(Field::new(
            "element",
            to_arrow_type(&a.element_type)?,
            a.contains_null,
        ))),
        DataType::Map(m) => ArrowType::Map(
            Arc::new(Field::new(
                "key_value",
                ArrowType::Struct(Fields::from(vec![
                    Field::new("key", to_arrow_type(&m.key_type)?, false),
                    Field::new(
                        "value",
                        to_arrow_type(&m.value_type)?,
                        m.value_contains_null,
                    ),
                ])),
                false,
            )),
            false,
        ),
    })
}

fn primitive_to_arrow(p: &str) -> Result<ArrowType> {
    Ok(match p {
        "string" => ArrowType::Utf8,
        "long" => ArrowType::Int64,
        "integer" => ArrowType::Int32,
        "short" => ArrowType::Int16,
        "byte" => ArrowType::Int8,
        "float" => ArrowType::Float32,
        "double" => ArrowType::Float64,
        "boolean" => ArrowType::Boolean,
        "binary" => ArrowType::Binary,
        "date" => ArrowType::Date32,
        "timestamp" => ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        "timestamp_ntz" => ArrowType::Timestamp(TimeUnit::Microsecond, None),
        "void" => ArrowType::Null,
        "variant" => ArrowType::Struct(Fields::from(vec![
            Field::new("value", ArrowType::Binary, false),
            Field::new("metadata", ArrowType::Binary, false),
        ])),
        other => {
            if let Some((p, s)) = parse_decimal(other) {
                ArrowType::Decimal128(p, s)
            } else {
                return Err(Error::InvalidSchema {
                    message: format!("unknown Delta type {other:?}"),
                });
            }
        }
    })
}

fn parse_decimal(s: &str) -> Option<(u8, i8)> {
    let inner = s.strip_prefix("decimal(")?.strip_suffix(')')?;
    let (p, sc) = inner.split_once(',')?;
    let p: u8 = p.trim().parse().ok()?;
    let sc: i8 = sc.trim().parse().ok()?;
    (1..=38).contains(&p).then_some(())?;
    (0..=p as i8).contains(&sc).then_some((p, sc))
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    const SCHEMA: &str = r#"{"type":"struct","fields":[
      {"name":"id","type":"long","nullable":false,"metadata":{"delta.columnMapping.id":1,"delta.columnMapping.physicalName":"col-1","comment":"key"}},
      {"name":"price","type":"decimal(10,2)","nullable":true,"metadata":{}},
      {"name":"ts","type":"timestamp","nullable":true,"metadata":{}},
      {"name":"ntz","type":"timestamp_ntz","nullable":true,"metadata":{}},
      {"name":"s","type":{"type":"struct","fields":[{"name":"a","type":"integer","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}},
      {"name":"arr","type":{"type":"array","elementType":{"type":"struct","fields":[{"name":"b","type":"byte","nullable":true,"metadata":{}}]},"containsNull":false},"nullable":true,"metadata":{}},
      {"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"double","containsNull":true},"valueContainsNull":true},"nullable":true,"metadata":{}},
      {"name":"v","type":"variant","nullable":true,"metadata":{}}
    ]}"#;

    /// A schema whose struct, field or nested type is a JSON array is refused: serde's
    /// derive (and an untagged enum's buffered content) would read each as a struct.
    #[wasm_bindgen_test(unsupported = test)]
    fn an_array_is_never_a_type() {
        for text in [
            r#"["struct",[]]"#,
            r#"{"type":"struct","fields":[["a","long",true,{}]]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":["struct",[]]}]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":["array","long",true]}]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":["map","string","long",true]}]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":{"type":"array","elementType":["struct",[]]}}]}"#,
        ] {
            assert!(TableSchema::parse(text).is_err(), "{text}");
        }
        let nested = r#"{"type":"struct","fields":[{"name":"a","type":{"type":"map","keyType":"string",
            "valueType":{"type":"array","elementType":{"type":"struct","fields":[{"name":"b","type":"long"}]},"containsNull":false}}}]}"#;
        let s = TableSchema::parse(nested).unwrap();
        assert_eq!(
            s.fields()[0].data_type.type_string(),
            "map<string,array<struct<b:long>>>"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn type_strings() {
        let s = TableSchema::parse(SCHEMA).unwrap();
        let t: Vec<_> = s
            .fields()
            .iter()
            .map(|f| f.data_type.type_string())
            .collect();
        assert_eq!(
            t,
            [
                "long",
                "decimal(10,2)",
                "timestamp",
                "timestamp_ntz",
                "struct<a:integer>",
                "array<struct<b:byte>>",
                "map<string,array<double>>",
                "variant"
            ]
        );
        assert_eq!(s.fields()[0].physical_name(), Some("col-1"));
        assert_eq!(s.fields()[0].field_id(), Some(1));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn arrow_conversion() {
        let s = TableSchema::parse(SCHEMA).unwrap().to_arrow().unwrap();
        let id = s.field(0);
        assert_eq!(id.data_type(), &ArrowType::Int64);
        assert!(!id.is_nullable());
        assert_eq!(id.metadata()[PARQUET_FIELD_ID_KEY], "1");
        assert_eq!(id.metadata()[PHYSICAL_NAME_KEY], "col-1");
        assert_eq!(s.field(1).data_type(), &ArrowType::Decimal128(10, 2));
        assert_eq!(
            s.field(2).data_type(),
            &ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
        );
        assert_eq!(
            s.field(3).data_type(),
            &ArrowType::Timestamp(TimeUnit::Microsecond, None)
        );
        let ArrowType::List(el) = s.field(5).data_type() else {
            panic!("list")
        };
        assert!(!el.is_nullable());
        assert!(matches!(s.field(6).data_type(), ArrowType::Map(_, false)));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn columns_are_counted_at_every_depth_and_found_by_name() {
        let s = TableSchema::parse(SCHEMA).unwrap();
        // 8 top-level columns, s.a and arr's b
        assert_eq!(column_count(s.fields()), 10);
        assert_eq!(s.index_of("price"), Some(1));
        assert_eq!(s.index_of("PRICE"), Some(1));
        assert_eq!(s.index_of_exact("PRICE"), None);
        assert_eq!(s.index_of("nope"), None);
        // one struct column of MAX_SCHEMA_COLUMNS fields is one column too many
        let max = crate::limits::MAX_SCHEMA_COLUMNS;
        let fields: Vec<String> = (0..max)
            .map(|i| {
                format!(r#"{{"name":"f{i}","type":"integer","nullable":true,"metadata":{{}}}}"#)
            })
            .collect();
        let wide = format!(
            r#"{{"type":"struct","fields":[{{"name":"s","type":{{"type":"struct","fields":[{}]}},"nullable":true,"metadata":{{}}}}]}}"#,
            fields.join(",")
        );
        let e = TableSchema::parse(&wide).unwrap_err();
        assert!(
            matches!(e, Error::LimitExceeded { limit: "MAX_SCHEMA_COLUMNS", value, .. } if value == max + 1),
            "{e}"
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn invalid_schemas_are_errors() {
        for bad in [
            "not json",
            r#"{"type":"struct","fields":[{"name":"a","type":"uint128","nullable":true,"metadata":{}}]}"#,
            r#"{"type":"struct","fields":[{"name":"a","type":"decimal(40,2)","nullable":true,"metadata":{}}]}"#,
            r#"{"type":"array","fields":[]}"#,
        ] {
            assert!(
                matches!(TableSchema::parse(bad), Err(Error::InvalidSchema { .. })),
                "{bad}"
            );
        }
    }
}
