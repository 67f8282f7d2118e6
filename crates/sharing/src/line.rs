//! One line of a table's answer read into the fields deltalens uses, and nothing else: a
//! field it does not know is skipped as it is read (never held, however large), so a line
//! costs what its known fields hold.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

type Strings = BTreeMap<String, Option<String>>;

/// A line: one action (unknown actions, such as `endStreamAction`, read as none).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line {
    protocol: Option<ProtocolLine>,
    meta_data: Option<MetadataLine>,
    file: Option<FileLine>,
    add: Option<FileLine>,
    cdf: Option<FileLine>,
    remove: Option<FileLine>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct Protocol {
    #[serde(skip_serializing_if = "Option::is_none")]
    min_reader_version: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_writer_version: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reader_features: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    writer_features: Option<Vec<String>>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct ProtocolLine {
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_protocol: Option<Protocol>,
    #[serde(skip_serializing_if = "Option::is_none")]
    min_reader_version: Option<i64>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct Format {
    provider: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<Strings>,
}

/// A table's metadata (both formats' fields: the parquet format's are the delta format's
/// less `createdTime`, plus `version`, `size` and `numFiles`).
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<Format>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_string: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition_columns: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    configuration: Option<Strings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    created_time: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i64>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct MetadataLine {
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_metadata: Option<Metadata>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    format: Option<Format>,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema_string: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition_columns: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    configuration: Option<Strings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i64>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct DeletionVector {
    storage_type: String,
    path_or_inline_dv: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    offset: Option<i64>,
    size_in_bytes: i64,
    cardinality: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_row_index: Option<i64>,
}

/// A Delta `add`, `remove` or `cdc` action, as the delta format wraps it.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct DeltaFile {
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition_values: Option<Strings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    modification_time: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_change: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tags: Option<Strings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deletion_vector: Option<DeletionVector>,
    #[serde(skip_serializing_if = "Option::is_none")]
    base_row_id: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    default_row_commit_version: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    clustering_provider: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    deletion_timestamp: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    extended_file_metadata: Option<bool>,
}

#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct DeltaSingleAction {
    #[serde(skip_serializing_if = "Option::is_none")]
    add: Option<DeltaFile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    remove: Option<DeltaFile>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cdc: Option<DeltaFile>,
}

/// A file line of either format.
#[derive(Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
struct FileLine {
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    partition_values: Option<Strings>,
    #[serde(skip_serializing_if = "Option::is_none")]
    size: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    version: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    timestamp: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    expiration_timestamp: Option<i64>,
    /// Only noted (the parquet format cannot carry a deletion vector deltalens applies).
    #[serde(skip_serializing)]
    deletion_vector_descriptor: Option<serde::de::IgnoredAny>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delta_single_action: Option<DeltaSingleAction>,
}

/// The action of `line` (its name and what deltalens reads of it), `None` for an action
/// it does not read; an error for a line that is not JSON, holds a known field of another
/// type than the protocol's, or holds more than one action.
pub(crate) fn read(line: &[u8]) -> Result<Option<(&'static str, Value)>, String> {
    let l: Line = deltalens_json::from_slice(line)
        .map_err(|e| format!("not an action deltalens reads ({e})"))?;
    let value = |v: Result<Value, serde_json::Error>| v.map_err(|e| e.to_string());
    let mut found: Vec<(&'static str, Value)> = Vec::new();
    if let Some(p) = l.protocol {
        found.push(("protocol", value(serde_json::to_value(p))?));
    }
    if let Some(m) = l.meta_data {
        found.push(("metaData", value(serde_json::to_value(m))?));
    }
    for (key, f) in [
        ("file", l.file),
        ("add", l.add),
        ("cdf", l.cdf),
        ("remove", l.remove),
    ] {
        if let Some(f) = f {
            let dv = f.deletion_vector_descriptor.is_some();
            let mut v = value(serde_json::to_value(f))?;
            if dv {
                v["deletionVectorDescriptor"] = Value::Object(Default::default());
            }
            found.push((key, v));
        }
    }
    if found.len() > 1 {
        return Err("a line of more than one action".into());
    }
    Ok(found.pop())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_deltalens_does_not_read_are_skipped() {
        let (key, v) = read(br#"{"file":{"id":"f","zz":[0,0,0,[1,{"a":2}]],"deltaSingleAction":{"add":{"path":"https://h/x","size":1,"junk":{"k":[1,2,3]},"stats":"{}"}}}}"#)
            .unwrap()
            .unwrap();
        assert_eq!(key, "file");
        assert_eq!(
            v,
            serde_json::json!({"id":"f","deltaSingleAction":{"add":{"path":"https://h/x","size":1,"stats":"{}"}}})
        );
        assert_eq!(
            read(br#"{"endStreamAction":{"refreshToken":"t"}}"#).unwrap(),
            None
        );
        for (line, why) in [
            (
                &br#"{"protocol":{"minReaderVersion":1},"file":{"id":"f"}}"#[..],
                "more than one action",
            ),
            (br#"{"file":{"id":"f","size":"1"}}"#, "not an action"),
            (br#"{"file":{"partitionValues":{"d":1}}}"#, "not an action"),
            (br#"[1]"#, "not an action"),
        ] {
            let e = read(line).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
