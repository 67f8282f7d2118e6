//! What `deltalens serve` serves: table files (from directories, or the demo table
//! embedded in the binary) and the explorer (embedded, or `--app-dir`).
//!
//! Looking a file up costs a `stat`, never a read: size and ETag come from the metadata,
//! and bodies are sent from an open file in chunks, only the requested range.

use std::collections::BTreeMap;
use std::fs::{File, Metadata};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use tokio::net::TcpStream;

use super::http;
use crate::error::CliError;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded.rs"));
}

/// Bytes read from disk and written to the client at a time.
const CHUNK: usize = 256 * 1024;

/// A file in the binary, with its ETag computed once.
struct Embedded {
    data: &'static [u8],
    etag: String,
}

impl Embedded {
    fn new(data: &'static [u8]) -> Embedded {
        let etag = format!("\"{:x}-{:x}\"", data.len(), crc32fast::hash(data));
        Embedded { data, etag }
    }

    fn found(&self, kind: Kind) -> Found {
        Found {
            body: Body::Static(self.data),
            size: self.data.len() as u64,
            etag: self.etag.clone(),
            kind,
        }
    }
}

fn embed(list: &[(&'static str, &'static [u8])]) -> BTreeMap<&'static str, Embedded> {
    list.iter().map(|&(p, d)| (p, Embedded::new(d))).collect()
}

/// Where a table's files come from.
enum Source {
    /// A directory (canonical path).
    Dir(PathBuf),
    /// The bundled demo table, from the binary.
    Embedded(BTreeMap<&'static str, Embedded>),
}

/// What a found file is, which decides its headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A table's file: always `application/octet-stream`, sandboxed.
    Table,
    /// A file of the explorer, with its own type.
    App(&'static str),
}

/// Where a found file's bytes are.
pub enum Body {
    Static(&'static [u8]),
    File(File),
}

/// A file ready to send.
pub struct Found {
    pub body: Body,
    pub size: u64,
    pub etag: String,
    pub kind: Kind,
}

/// Every file the server can answer with.
pub struct Files {
    tables: BTreeMap<String, Source>,
    app: BTreeMap<&'static str, Embedded>,
    app_dir: Option<PathBuf>,
    no_app: Embedded,
}

impl Files {
    /// The given table directories (each must hold `_delta_log/`; names are the directory
    /// names, made unique with `_`), or the embedded demo table when there are none.
    pub fn new(dirs: &[PathBuf], app_dir: Option<&Path>) -> Result<Files, CliError> {
        Self::with(dirs, true, app_dir)
    }

    /// The explorer only (the tables are relayed).
    pub fn without_tables(app_dir: Option<&Path>) -> Result<Files, CliError> {
        Self::with(&[], false, app_dir)
    }

    fn with(dirs: &[PathBuf], demo: bool, app_dir: Option<&Path>) -> Result<Files, CliError> {
        let mut tables = BTreeMap::new();
        for t in dirs {
            let root = t.canonicalize().map_err(|source| CliError::ServeTable {
                path: t.clone(),
                source,
            })?;
            if !root.join("_delta_log").is_dir() {
                return Err(CliError::NotATable { path: t.clone() });
            }
            let mut name = table_name(&root);
            while tables.contains_key(&name) {
                name.push('_');
            }
            tables.insert(name, Source::Dir(root));
        }
        if tables.is_empty() && demo {
            tables.insert("demo".into(), Source::Embedded(embed(embedded::DEMO)));
        }
        let app_dir = app_dir
            .map(|d| {
                d.canonicalize().map_err(|source| CliError::ServeApp {
                    path: d.to_path_buf(),
                    source,
                })
            })
            .transpose()?;
        Ok(Files {
            tables,
            app: embed(embedded::APP),
            app_dir,
            no_app: Embedded::new(NO_APP_PAGE),
        })
    }

    pub fn table_names(&self) -> impl Iterator<Item = &String> {
        self.tables.keys()
    }

    pub fn has_app(&self) -> bool {
        !self.app.is_empty() || self.app_dir.is_some()
    }

    /// The file for a decoded request path (`/tables/<name>/<file>` or the explorer's),
    /// opened and stat'ed; blocking. Client-side routes (no `.` in the path) get the
    /// explorer's index page.
    pub fn find(&self, path: &str) -> Option<Found> {
        let path = path.strip_prefix('/')?;
        if let Some(rest) = path.strip_prefix("tables/") {
            let (name, file) = rest.split_once('/')?;
            return self.table_file(name, file);
        }
        let file = if path.is_empty() { "index.html" } else { path };
        match self.app_file(file) {
            Some(f) => Some(f),
            None if !path.contains('.') => self
                .app_file("index.html")
                .or_else(|| Some(self.no_app.found(Kind::App(mime("index.html"))))),
            None => None,
        }
    }

    fn table_file(&self, name: &str, file: &str) -> Option<Found> {
        let file = relative(file)?;
        match self.tables.get(name)? {
            Source::Embedded(files) => Some(files.get(file)?.found(Kind::Table)),
            Source::Dir(root) => open_inside(root, file, Kind::Table),
        }
    }

    fn app_file(&self, path: &str) -> Option<Found> {
        let path = relative(path)?;
        let kind = Kind::App(mime(path));
        match &self.app_dir {
            Some(dir) => open_inside(dir, path, kind),
            None => Some(self.app.get(path)?.found(kind)),
        }
    }
}

const NO_APP_PAGE: &[u8] = b"<!DOCTYPE html><title>deltalens</title><p>This deltalens binary was \
built without the explorer. Build it with <code>scripts/build-web</code> (cargo + wasm-bindgen, \
then cargo build), or pass <code>--app-dir dist</code>. The tables are served under /tables/.</p>";

fn table_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "table".into())
}

/// `path` if it is a plain relative path: no empty, `.` or `..` component, no backslash
/// or NUL (so joining it to a root cannot leave the root, before symlinks).
fn relative(path: &str) -> Option<&str> {
    let plain = |c: &str| !c.is_empty() && c != "." && c != "..";
    let ok = path.split('/').all(plain) && !path.contains(['\\', '\0']);
    ok.then_some(path)
}

/// Why a local file is not served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refused {
    /// Nothing there (or it cannot be resolved), or a directory: not a file of the table.
    Missing,
    /// Not a plain relative path, or its real path (links resolved) lies outside the root.
    Outside,
    /// Not a regular file: a FIFO (opening one waits for a writer), a socket or a device.
    NotAFile,
}

/// The one rule for the local files every `serve` path reads (`/tables/`, `--app-dir`,
/// the relay's `file://` tables): `rel` is a plain relative path, and `root/rel`, every
/// link resolved, is a regular file still inside `root` (canonical). Its real path and
/// metadata, learnt without opening it; blocking.
pub fn local_file(root: &Path, rel: &str) -> Result<(PathBuf, Metadata), Refused> {
    use deltalens_object_store::LocalRefused;
    let rel = relative(rel).ok_or(Refused::Outside)?;
    deltalens_object_store::file_inside(root, &root.join(rel)).map_err(|r| match r {
        LocalRefused::Outside => Refused::Outside,
        LocalRefused::NotAFile => Refused::NotAFile,
        LocalRefused::Missing
        | LocalRefused::Unresolvable(_)
        | LocalRefused::NoMetadata(..)
        | LocalRefused::Directory => Refused::Missing,
    })
}

/// Opens `root/rel` if [`local_file`] allows it, and only the file it checked (one
/// swapped in since is refused).
fn open_inside(root: &Path, rel: &str, kind: Kind) -> Option<Found> {
    let (real, checked) = local_file(root, rel).ok()?;
    let file = File::open(&real).ok()?;
    let meta = file.metadata().ok()?;
    if !meta.is_file() || !deltalens_object_store::same_file(&checked, &meta) {
        return None;
    }
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    Some(Found {
        size: meta.len(),
        etag: format!("\"{:x}-{mtime:x}\"", meta.len()),
        body: Body::File(file),
        kind,
    })
}

/// The type of an explorer file, by extension.
fn mime(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" => "text/javascript",
        "wasm" => "application/wasm",
        "css" => "text/css",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        _ => "application/octet-stream",
    }
}

/// Sends bytes `start..end` of `body`: a slice of an embedded file, or read from the
/// file in [`CHUNK`]s (so memory stays flat whatever the size). A file that shrank under
/// us fails with `UnexpectedEof`, and the connection closes (the length was promised).
pub async fn send(stream: &mut TcpStream, body: Body, start: u64, end: u64) -> io::Result<()> {
    match body {
        Body::Static(data) => {
            let range = usize::try_from(start).ok().zip(usize::try_from(end).ok());
            let part = range
                .and_then(|(s, e)| data.get(s..e))
                .ok_or(io::ErrorKind::InvalidInput)?;
            http::write(stream, part).await
        }
        Body::File(file) => send_file(stream, file, start, end).await,
    }
}

async fn send_file(stream: &mut TcpStream, file: File, start: u64, end: u64) -> io::Result<()> {
    let mut state = (file, Vec::new());
    let mut pos = start;
    while pos < end {
        let want = usize::try_from(end - pos).map_or(CHUNK, |n| n.min(CHUNK));
        let seek = (pos == start).then_some(start);
        let (file, buf) = state;
        state = tokio::task::spawn_blocking(move || read_chunk(file, buf, seek, want))
            .await
            .map_err(io::Error::other)??;
        http::write(stream, &state.1).await?;
        pos += want as u64;
    }
    Ok(())
}

/// Reads exactly `want` bytes into `buf` (after seeking to `seek`, if given); blocking.
fn read_chunk(
    mut file: File,
    mut buf: Vec<u8>,
    seek: Option<u64>,
    want: usize,
) -> io::Result<(File, Vec<u8>)> {
    if let Some(at) = seek {
        file.seek(SeekFrom::Start(at))?;
    }
    buf.resize(want, 0);
    file.read_exact(&mut buf)?;
    Ok((file, buf))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn relative_paths() {
        for ok in ["a", "a/b.json", "_delta_log/00.json", "a..b", ".hidden"] {
            assert_eq!(relative(ok), Some(ok));
        }
        for no in [
            "", "/a", "a/", "a//b", "..", "a/../b", "./a", "a\\..\\b", "a\0b",
        ] {
            assert_eq!(relative(no), None, "{no:?}");
        }
    }

    #[cfg(unix)]
    #[test]
    fn one_rule_for_local_files() {
        let base = std::env::temp_dir().join(format!("deltalens-local-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("t");
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(root.join("d/f.json"), "{}").unwrap();
        std::fs::write(base.join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(base.join("secret"), root.join("out")).unwrap();
        std::os::unix::fs::symlink(root.join("d/f.json"), root.join("in")).unwrap();
        let root = root.canonicalize().unwrap();
        assert!(local_file(&root, "d/f.json").is_ok());
        assert!(local_file(&root, "in").is_ok());
        assert_eq!(local_file(&root, "out").unwrap_err(), Refused::Outside);
        assert_eq!(
            local_file(&root, "../secret").unwrap_err(),
            Refused::Outside
        );
        assert_eq!(local_file(&root, "d").unwrap_err(), Refused::Missing);
        assert_eq!(local_file(&root, "nope").unwrap_err(), Refused::Missing);
        let _ = std::fs::remove_dir_all(&base);
    }

    #[test]
    fn types() {
        assert_eq!(mime("index.html"), "text/html; charset=utf-8");
        assert_eq!(mime("x.wasm"), "application/wasm");
        assert_eq!(mime("noext"), "application/octet-stream");
    }
}
