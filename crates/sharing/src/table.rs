//! A table's answer (PROTOCOL.md "Read Data from a Table", "Read Change Data Feed",
//! "Query Table Metadata"): newline-delimited JSON, the protocol, then the metadata, then
//! files, in the parquet format (the protocol's `file`/`add`/`cdf`/`remove` wrappers, each
//! with a pre-signed `url`) or the delta format (Delta actions in `deltaSingleAction`, the
//! pre-signed URL as their `path`). Read line by line, with bounds; every pre-signed URL
//! (and deletion vector) must be `https://` (or `http://` to this machine) without user
//! info: it is fetched as it is, never with the profile's token.

use serde_json::Value;

use crate::error::SharingError;
use crate::profile::is_loopback;
use crate::request::ResponseFormat;

/// The most bytes of one line (a table's metadata with its schema, a file with its
/// statistics).
pub const MAX_LINE_BYTES: usize = 16 * 1024 * 1024;

/// The most bytes of a file's id.
const MAX_ID_BYTES: usize = 4096;

/// The most files of one answer.
pub const MAX_FILES: usize = 1_000_000;

/// What a file line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A file of the snapshot (parquet format `file`, delta format `add` of a snapshot).
    File,
    /// A file added at `version` (a changes or `startingVersion` query).
    Add,
    /// A file removed at `version`.
    Remove,
    /// A change data file of `version`.
    Cdc,
}

/// A data file of the answer.
#[derive(Debug, Clone, PartialEq)]
pub struct SharedFile {
    /// What it is.
    pub kind: FileKind,
    /// The server's id for it (stable across answers, unlike the URL).
    pub id: String,
    /// The pre-signed URL (checked).
    pub url: String,
    /// Its size in bytes.
    pub size: u64,
    /// Its partition values (an object of strings or nulls).
    pub partition_values: Value,
    /// Its statistics (Delta's `stats` JSON), if given.
    pub stats: Option<String>,
    /// The version it belongs to (changes), if given.
    pub version: Option<u64>,
    /// That version's commit time (ms), if given.
    pub timestamp: Option<i64>,
    /// When the URL expires (ms since the epoch), if the server says.
    pub expiration_ms: Option<i64>,
    /// The delta format's action as the server wrote it (its `path` is `url`).
    pub delta_action: Option<Value>,
}

/// A table's answer, read.
#[derive(Debug, Clone, PartialEq)]
pub struct TableAnswer {
    /// The format the lines were in.
    pub format: ResponseFormat,
    /// The protocol (the delta format's `deltaProtocol`; the parquet format's object).
    pub protocol: Value,
    /// The metadata (the delta format's `deltaMetadata`; the parquet format's object).
    pub metadata: Value,
    /// The version the server gives the metadata line (changes: the version that set it).
    pub metadata_version: Option<u64>,
    /// The files.
    pub files: Vec<SharedFile>,
    /// Metadata lines after the first (a change within a range of versions), each with
    /// the version the server gives it.
    pub later_metadata: Vec<(Option<u64>, Value)>,
}

/// Reads a table's answer line by line (the caller may feed a streamed body).
#[derive(Debug)]
pub struct TableReader {
    endpoint: String,
    what: String,
    format: Option<ResponseFormat>,
    protocol: Option<Value>,
    metadata: Option<Value>,
    metadata_version: Option<u64>,
    later_metadata: Vec<(Option<u64>, Value)>,
    files: Vec<SharedFile>,
    line: usize,
    /// Whether pre-signed URLs may be plain http to this machine: only when the server
    /// itself is on this machine (a test), never from a server elsewhere.
    loopback_http: bool,
}

impl TableAnswer {
    /// Reads a whole body.
    pub fn parse(endpoint: &str, what: &str, body: &[u8]) -> Result<TableAnswer, SharingError> {
        let mut r = TableReader::new(endpoint, what);
        for line in body.split(|b| *b == b'\n') {
            r.line(line)?;
        }
        r.finish()
    }
}

impl TableReader {
    /// A reader of the answer to `what`, sent to `endpoint`.
    pub fn new(endpoint: &str, what: &str) -> TableReader {
        let loopback_http = url::Url::parse(endpoint).is_ok_and(|u| is_loopback(&u));
        TableReader {
            loopback_http,
            endpoint: endpoint.to_string(),
            what: what.to_string(),
            format: None,
            protocol: None,
            metadata: None,
            metadata_version: None,
            later_metadata: Vec::new(),
            files: Vec::new(),
            line: 0,
        }
    }

    fn invalid(&self, why: String) -> SharingError {
        SharingError::InvalidAnswer {
            endpoint: self.endpoint.clone(),
            what: self.what.clone(),
            why: format!("line {}: {why}", self.line),
        }
    }

    fn limit(&self, limit: &'static str, value: usize, max: usize) -> SharingError {
        SharingError::LimitExceeded {
            endpoint: self.endpoint.clone(),
            what: self.what.clone(),
            limit,
            value: value as u64,
            max: max as u64,
        }
    }

    /// Reads one line (without its newline; blank lines are skipped).
    pub fn line(&mut self, line: &[u8]) -> Result<(), SharingError> {
        self.line += 1;
        if line.len() > MAX_LINE_BYTES {
            return Err(self.limit("MAX_LINE_BYTES", line.len(), MAX_LINE_BYTES));
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            return Ok(());
        }
        // (only the fields deltalens reads are kept: crate::line)
        let Some((key, body)) = crate::line::read(line).map_err(|why| self.invalid(why))? else {
            // the end of an answer that says so (includeEndStreamAction), and actions of
            // later protocol versions: nothing deltalens reads
            return Ok(());
        };
        match key {
            "protocol" => self.protocol_line(&body),
            "metaData" => self.metadata_line(&body),
            _ => self.file_line(key, &body),
        }
    }

    fn protocol_line(&mut self, body: &Value) -> Result<(), SharingError> {
        if self.protocol.is_some() {
            return Err(self.invalid("a second protocol".into()));
        }
        let (format, protocol) = match body.get("deltaProtocol") {
            Some(p) => (ResponseFormat::Delta, p.clone()),
            None => (ResponseFormat::Parquet, body.clone()),
        };
        if !protocol.is_object() {
            return Err(self.invalid("a protocol that is not an object".into()));
        }
        // the parquet format describes tables of reader version 1 only (PROTOCOL.md
        // "Protocol": a client refuses a version it does not support)
        let reader = protocol.get("minReaderVersion").and_then(Value::as_u64);
        if format == ResponseFormat::Parquet && reader != Some(1) {
            return Err(self.invalid(format!(
                "a parquet-format answer for reader version {reader:?}: ask for the delta format"
            )));
        }
        self.format = Some(format);
        self.protocol = Some(protocol);
        Ok(())
    }

    fn metadata_line(&mut self, body: &Value) -> Result<(), SharingError> {
        let format = self
            .format
            .ok_or_else(|| self.invalid("metadata before the protocol".into()))?;
        let metadata = match format {
            ResponseFormat::Delta => body.get("deltaMetadata").cloned().ok_or_else(|| {
                self.invalid("delta format metadata without deltaMetadata".into())
            })?,
            ResponseFormat::Parquet => body.clone(),
        };
        if format == ResponseFormat::Parquet
            && metadata
                .pointer("/configuration/delta.columnMapping.mode")
                .and_then(Value::as_str)
                .is_some_and(|m| m != "none")
        {
            return Err(self.invalid(
                "a parquet-format answer for a table with column mapping: ask for the delta format"
                    .into(),
            ));
        }
        if !metadata.is_object() {
            return Err(self.invalid("metadata that is not an object".into()));
        }
        if self.metadata.is_none() {
            self.metadata_version = self.version(body.get("version"))?;
            self.metadata = Some(metadata);
        } else if self.later_metadata.len() < MAX_FILES {
            let version = self.version(body.get("version"))?;
            self.later_metadata.push((version, metadata));
        } else {
            return Err(self.limit("MAX_FILES", self.later_metadata.len() + 1, MAX_FILES));
        }
        Ok(())
    }

    fn file_line(&mut self, key: &str, body: &Value) -> Result<(), SharingError> {
        let format = self
            .format
            .ok_or_else(|| self.invalid("a file before the protocol".into()))?;
        if self.metadata.is_none() {
            return Err(self.invalid("a file before the metadata".into()));
        }
        if self.files.len() >= MAX_FILES {
            return Err(self.limit("MAX_FILES", self.files.len() + 1, MAX_FILES));
        }
        let file = match format {
            ResponseFormat::Parquet => self.parquet_file(key, body)?,
            ResponseFormat::Delta if key == "file" => self.delta_file(body)?,
            ResponseFormat::Delta => {
                return Err(
                    self.invalid(format!("a parquet-format {key:?} in a delta-format answer"))
                );
            }
        };
        self.files.push(file);
        Ok(())
    }

    fn parquet_file(&self, key: &str, f: &Value) -> Result<SharedFile, SharingError> {
        let kind = match key {
            "file" => FileKind::File,
            "add" => FileKind::Add,
            "remove" => FileKind::Remove,
            _ => FileKind::Cdc,
        };
        if f.get("deletionVectorDescriptor").is_some() {
            return Err(self.invalid(
                "a file with a deletion vector in the parquet format (it cannot be applied): ask for the delta format".into(),
            ));
        }
        let url = self.url(f.get("url"), "url")?;
        Ok(SharedFile {
            kind,
            id: self.text(f, "id")?,
            url,
            size: self.size(f.get("size"))?,
            partition_values: self.partition_values(f.get("partitionValues"))?,
            stats: f.get("stats").and_then(|s| s.as_str()).map(str::to_string),
            version: self.version(f.get("version"))?,
            timestamp: f.get("timestamp").and_then(Value::as_i64),
            expiration_ms: f.get("expirationTimestamp").and_then(Value::as_i64),
            delta_action: None,
        })
    }

    fn delta_file(&self, f: &Value) -> Result<SharedFile, SharingError> {
        let single = f
            .get("deltaSingleAction")
            .and_then(Value::as_object)
            .ok_or_else(|| self.invalid("a delta-format file without deltaSingleAction".into()))?;
        let (kind, action) = match (single.get("add"), single.get("remove"), single.get("cdc")) {
            (Some(a), None, None) => (FileKind::Add, a),
            (None, Some(r), None) => (FileKind::Remove, r),
            (None, None, Some(c)) => (FileKind::Cdc, c),
            _ => {
                return Err(
                    self.invalid("a deltaSingleAction that is not one add, remove or cdc".into())
                );
            }
        };
        let url = self.url(action.get("path"), "path")?;
        if let Some(dv) = action.get("deletionVector").filter(|dv| !dv.is_null()) {
            match dv.get("storageType").and_then(Value::as_str) {
                Some("i") => {}
                Some("p") => {
                    self.url(dv.get("pathOrInlineDv"), "deletionVector.pathOrInlineDv")?;
                }
                other => {
                    return Err(self.invalid(format!(
                        "a deletion vector of storage type {other:?}: a share answers inline ('i') or pre-signed ('p') ones"
                    )));
                }
            }
        }
        Ok(SharedFile {
            // a snapshot's adds are its files; a range's are additions
            kind,
            id: self.text(f, "id")?,
            url,
            size: self.size(action.get("size"))?,
            partition_values: self.partition_values(action.get("partitionValues"))?,
            stats: action
                .get("stats")
                .and_then(|s| s.as_str())
                .map(str::to_string),
            version: self.version(f.get("version"))?,
            timestamp: f.get("timestamp").and_then(Value::as_i64),
            expiration_ms: f.get("expirationTimestamp").and_then(Value::as_i64),
            delta_action: Some(Value::Object(single.clone())),
        })
    }

    fn text(&self, f: &Value, k: &str) -> Result<String, SharingError> {
        f.get(k)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty() && s.len() <= MAX_ID_BYTES)
            .map(str::to_string)
            .ok_or_else(|| {
                self.invalid(format!("a file without {k} (of 1 to {MAX_ID_BYTES} bytes)"))
            })
    }

    fn size(&self, v: Option<&Value>) -> Result<u64, SharingError> {
        v.and_then(Value::as_u64)
            .filter(|s| *s <= i64::MAX as u64)
            .ok_or_else(|| self.invalid("a file without a size of 0 or more bytes".into()))
    }

    fn version(&self, v: Option<&Value>) -> Result<Option<u64>, SharingError> {
        match v {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v
                .as_u64()
                .filter(|v| *v <= i64::MAX as u64)
                .map(Some)
                .ok_or_else(|| self.invalid(format!("a version of {v}, not a version"))),
        }
    }

    fn partition_values(&self, v: Option<&Value>) -> Result<Value, SharingError> {
        match v {
            None | Some(Value::Null) => Ok(Value::Object(Default::default())),
            Some(Value::Object(o)) if o.values().all(|x| x.is_string() || x.is_null()) => {
                Ok(Value::Object(o.clone()))
            }
            Some(_) => Err(self.invalid("partition values that are not strings or nulls".into())),
        }
    }

    /// The pre-signed URL `v` (the field `what`), checked.
    fn url(&self, v: Option<&Value>, what: &str) -> Result<String, SharingError> {
        let text = v
            .and_then(Value::as_str)
            .ok_or_else(|| self.invalid(format!("a file without {what}")))?;
        check_file_url(text, self.loopback_http)
            .map_err(|why| self.invalid(format!("{what}: {why}")))?;
        Ok(text.to_string())
    }

    /// The answer, once every line was read.
    pub fn finish(self) -> Result<TableAnswer, SharingError> {
        let (Some(format), Some(protocol), Some(metadata)) =
            (self.format, self.protocol.clone(), self.metadata.clone())
        else {
            return Err(self.invalid("the answer ended before its protocol and metadata".into()));
        };
        Ok(TableAnswer {
            format,
            protocol,
            metadata,
            metadata_version: self.metadata_version,
            files: self.files,
            later_metadata: self.later_metadata,
        })
    }
}

/// A pre-signed URL deltalens fetches: `https://` (or, when `loopback_http`, `http://` to
/// this machine), with a host and no user info.
pub(crate) fn check_file_url(text: &str, loopback_http: bool) -> Result<(), String> {
    let u = url::Url::parse(text).map_err(|e| format!("not a URL ({e})"))?;
    match u.scheme() {
        "https" => {}
        "http" if loopback_http && is_loopback(&u) => {}
        s => return Err(format!("a {s}: URL; pre-signed URLs must be https")),
    }
    if u.host_str().unwrap_or("").is_empty() {
        return Err("a URL without a host".into());
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err("a URL with user info".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROTOCOL: &str = r#"{"protocol":{"minReaderVersion":1}}"#;
    const METADATA: &str = r#"{"metaData":{"id":"m","format":{"provider":"parquet"},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":["d"],"version":3}}"#;

    fn parse(lines: &[&str]) -> Result<TableAnswer, SharingError> {
        TableAnswer::parse("https://h/ds", "table s.sc.t", lines.join("\n").as_bytes())
    }

    fn parse_local(lines: &[&str]) -> Result<TableAnswer, SharingError> {
        TableAnswer::parse(
            "http://127.0.0.1:8/ds",
            "table s.sc.t",
            lines.join("\n").as_bytes(),
        )
    }

    #[test]
    fn the_parquet_format_is_read() {
        let a = parse_local(&[
            PROTOCOL,
            METADATA,
            r#"{"file":{"url":"https://b.s3.amazonaws.com/t/part-0.parquet?X-Amz-Signature=x","id":"f1","partitionValues":{"d":"2024-01-01"},"size":573,"stats":"{\"numRecords\":1}","expirationTimestamp":1700000000000}}"#,
            r#"{"file":{"url":"http://127.0.0.1:9/part-1.parquet","id":"f2","partitionValues":{"d":null},"size":0}}"#,
            "",
        ])
        .unwrap();
        assert_eq!(a.format, ResponseFormat::Parquet);
        assert_eq!(a.metadata["version"], 3);
        assert_eq!(a.files.len(), 2);
        assert_eq!(a.files[0].kind, FileKind::File);
        assert_eq!(a.files[0].expiration_ms, Some(1_700_000_000_000));
        assert_eq!(a.files[1].partition_values["d"], Value::Null);
    }

    #[test]
    fn the_delta_format_is_read() {
        let a = parse(&[
            r#"{"protocol":{"deltaProtocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors","columnMapping"]}}}"#,
            r#"{"metaData":{"deltaMetadata":{"id":"m","format":{"provider":"parquet"},"schemaString":"{}","partitionColumns":[],"configuration":{"delta.columnMapping.mode":"name"}},"version":5}}"#,
            r#"{"file":{"id":"f1","deltaSingleAction":{"add":{"path":"https://acct.blob.core.windows.net/c/t/p.parquet?sig=x","partitionValues":{},"size":10,"modificationTime":0,"dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"wi5b=000010000siXQKl0rr91000f$","offset":1,"sizeInBytes":36,"cardinality":2}}},"version":5,"timestamp":1,"expirationTimestamp":2}}"#,
            r#"{"endStreamAction":{"refreshToken":"r"}}"#,
        ])
        .unwrap();
        assert_eq!(a.format, ResponseFormat::Delta);
        assert_eq!(a.protocol["minReaderVersion"], 3);
        assert_eq!(
            a.metadata["configuration"]["delta.columnMapping.mode"],
            "name"
        );
        let f = &a.files[0];
        assert_eq!((f.kind, f.size, f.version), (FileKind::Add, 10, Some(5)));
        assert_eq!(
            f.delta_action.as_ref().unwrap()["add"]["deletionVector"]["cardinality"],
            2
        );
    }

    #[test]
    fn a_hostile_answer_is_refused() {
        let file = |url: &str| format!(r#"{{"file":{{"url":"{url}","id":"f","size":1}}}}"#);
        for (lines, why) in [
            (vec![METADATA.to_string()], "before the protocol"),
            (vec![PROTOCOL.into(), file("https://h/x")], "before the metadata"),
            (vec![PROTOCOL.into(), METADATA.into(), file("http://attacker.example/x")], "must be https"),
            (vec![PROTOCOL.into(), METADATA.into(), file("file:///etc/passwd")], "must be https"),
            (vec![PROTOCOL.into(), METADATA.into(), file("https://user:pw@h/x")], "user info"),
            (vec![PROTOCOL.into(), METADATA.into(), r#"{"file":{"url":"https://h/x","id":"f","size":-1}}"#.into()], "size"),
            (vec![PROTOCOL.into(), METADATA.into(), r#"{"file":{"url":"https://h/x","size":1}}"#.into()], "without id"),
            (vec![PROTOCOL.into(), METADATA.into(), r#"{"file":{"url":"https://h/x","id":"f","size":1,"partitionValues":{"d":1}}}"#.into()], "expected a string"),
            (vec![PROTOCOL.into(), METADATA.into(), r#"{"file":{"url":"https://h/x","id":"f","size":1,"deletionVectorDescriptor":{}}}"#.into()], "deletion vector"),
            (vec![PROTOCOL.into(), PROTOCOL.into()], "second protocol"),
            (vec![PROTOCOL.into()], "ended before"),
            (vec!["[1]".into()], "not an action"),
            (vec![
                r#"{"protocol":{"deltaProtocol":{"minReaderVersion":1}}}"#.into(),
                r#"{"metaData":{"deltaMetadata":{"id":"m"}}}"#.into(),
                r#"{"file":{"id":"f","deltaSingleAction":{"add":{"path":"https://h/x","size":1,"deletionVector":{"storageType":"u","pathOrInlineDv":"ab","sizeInBytes":1,"cardinality":1}}}}}"#.into(),
            ], "storage type Some(\"u\")"),
            (vec![
                r#"{"protocol":{"deltaProtocol":{"minReaderVersion":1}}}"#.into(),
                r#"{"metaData":{"deltaMetadata":{"id":"m"}}}"#.into(),
                r#"{"file":{"id":"f","deltaSingleAction":{"add":{"path":"https://h/x","size":1,"deletionVector":{"storageType":"p","pathOrInlineDv":"s3://b/dv.bin","sizeInBytes":1,"cardinality":1}}}}}"#.into(),
            ], "pathOrInlineDv"),
        ] {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            let e = parse(&lines).unwrap_err().to_string();
            assert!(e.contains(why), "{lines:?}: {e}");
        }
        // a server elsewhere may not point at this machine over plain http
        let e = TableAnswer::parse(
            "https://h/ds",
            "t",
            [PROTOCOL, METADATA, &file("http://127.0.0.1:9/x")]
                .join("\n")
                .as_bytes(),
        )
        .unwrap_err();
        assert!(e.to_string().contains("must be https"), "{e}");
        for (lines, why) in [
            (
                vec![r#"{"protocol":{"minReaderVersion":2}}"#],
                "reader version Some(2)",
            ),
            (
                vec![
                    PROTOCOL,
                    r#"{"metaData":{"id":"m","configuration":{"delta.columnMapping.mode":"name"}}}"#,
                ],
                "column mapping",
            ),
            (
                vec![
                    PROTOCOL,
                    METADATA,
                    r#"{"remove":{"url":"https://h/x","id":"f","size":1},"file":{"url":"https://h/x","id":"f","size":1}}"#,
                ],
                "more than one action",
            ),
        ] {
            let e = parse(&lines).unwrap_err().to_string();
            assert!(e.contains(why), "{lines:?}: {e}");
        }
        // a null deletion vector is none
        let a = parse(&[
            r#"{"protocol":{"deltaProtocol":{"minReaderVersion":1}}}"#,
            r#"{"metaData":{"deltaMetadata":{"id":"m"}}}"#,
            r#"{"file":{"id":"f","deltaSingleAction":{"add":{"path":"https://h/x","size":1,"deletionVector":null}}}}"#,
        ])
        .unwrap();
        assert_eq!(a.files.len(), 1);
        let long = format!("{{\"x\":\"{}\"}}", "a".repeat(MAX_LINE_BYTES));
        let e = parse(&[PROTOCOL, &long]).unwrap_err().to_string();
        assert!(e.contains("MAX_LINE_BYTES"), "{e}");
    }
}
