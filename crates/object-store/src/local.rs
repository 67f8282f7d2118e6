//! Local tables: `object_store`'s [`LocalFileSystem`] under the one rule for local files
//! (as `deltalens serve` applies it): a table's file is read only when its real path,
//! every link resolved, is a regular file inside the table's directory (canonical).
//!
//! `LocalFileSystem` lists by walking with links followed: a `_delta_log/usr -> /usr`
//! link walked all of `/usr`, and any link loop failed the listing (the table could not
//! be read). Here the walk follows no link: a link to a file inside the table is listed
//! (with its target's size), any other link is left out, and no linked directory is
//! entered. A read of a path leading outside the table, or to a FIFO, socket or device,
//! is refused. The store is read-only.

use std::fs::Metadata;
use std::ops::Range;
use std::path::{Path as FsPath, PathBuf};

use bytes::Bytes;
use chrono::{DateTime, Utc};
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::local::LocalFileSystem;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult, Result,
};

const STORE: &str = "local table";

/// A local table directory's files (see the module's documentation).
#[derive(Debug)]
pub(crate) struct LocalTable {
    /// The table's directory, canonical.
    root: PathBuf,
    /// `root` as an object path (how `LocalFileSystem` names it).
    root_path: Path,
    inner: LocalFileSystem,
}

impl std::fmt::Display for LocalTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LocalTable({})", self.root.display())
    }
}

fn generic(message: String) -> object_store::Error {
    object_store::Error::Generic {
        store: STORE,
        source: message.into(),
    }
}

fn not_found(location: &Path, why: String) -> object_store::Error {
    object_store::Error::NotFound {
        path: location.to_string(),
        source: why.into(),
    }
}

/// Why [`file_inside`] refuses a path.
#[derive(Debug)]
pub enum Refused {
    /// Nothing there (or a link to nothing).
    Missing,
    /// The path cannot be resolved for another reason.
    Unresolvable(std::io::Error),
    /// Its real path's metadata cannot be read.
    NoMetadata(std::path::PathBuf, std::io::Error),
    /// Its real path (links resolved) lies outside the root.
    Outside,
    /// A directory, not a file.
    Directory,
    /// Not a regular file: a FIFO (opening one waits for a writer), a socket or a device.
    NotAFile,
}

/// The one rule for local files, in every path that reads them (this store's local tables,
/// `deltalens serve`'s `/tables/`, `--app-dir` and relay): `path`, every link resolved, is
/// a regular file inside `root` (canonical). Its real path and metadata, learnt without
/// opening it; blocking.
pub fn file_inside(
    root: &FsPath,
    path: &FsPath,
) -> std::result::Result<(std::path::PathBuf, Metadata), Refused> {
    let real = path.canonicalize().map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Refused::Missing,
        _ => Refused::Unresolvable(e),
    })?;
    if !real.starts_with(root) {
        return Err(Refused::Outside);
    }
    let meta = match std::fs::symlink_metadata(&real) {
        Ok(m) => m,
        Err(e) => return Err(Refused::NoMetadata(real, e)),
    };
    let kind = meta.file_type();
    if kind.is_dir() {
        return Err(Refused::Directory);
    }
    if !kind.is_file() {
        return Err(Refused::NotAFile);
    }
    Ok((real, meta))
}

/// Whether two metadata are of the same file (device and inode; elsewhere, the check
/// before opening is all there is): a file swapped in after [`file_inside`] is refused.
#[cfg(unix)]
pub fn same_file(a: &Metadata, b: &Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    (a.dev(), a.ino()) == (b.dev(), b.ino())
}

/// Whether two metadata are of the same file (device and inode; elsewhere, the check
/// before opening is all there is).
#[cfg(not(unix))]
pub fn same_file(_: &Metadata, _: &Metadata) -> bool {
    true
}

/// `f` off the async threads when there is a Tokio runtime (a local file system can
/// block), inline otherwise.
async fn blocking<T, F>(f: F) -> Result<T>
where
    F: FnOnce() -> Result<T> + Send + 'static,
    T: Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(f)
            .await
            .map_err(|e| generic(format!("the file system task failed: {e}; try again")))?,
        Err(_) => f(),
    }
}

/// A name of the multipart uploads `LocalFileSystem` stages (`name#123`), which it
/// neither lists nor reads.
fn is_staged_upload(location: &Path) -> bool {
    location.filename().is_some_and(|name| {
        name.split_once('#')
            .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// The same ETag `LocalFileSystem` gives a file.
fn e_tag(meta: &Metadata) -> String {
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(meta);
    #[cfg(not(unix))]
    let inode = 0u64;
    let mtime = meta
        .modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .unwrap_or_default()
        .as_micros();
    format!("\"{inode:x}-{mtime:x}-{:x}\"", meta.len())
}

fn object_meta(location: Path, meta: &Metadata) -> ObjectMeta {
    let last_modified = meta
        .modified()
        .map(DateTime::<Utc>::from)
        .unwrap_or_default();
    ObjectMeta {
        location,
        last_modified,
        size: meta.len(),
        e_tag: Some(e_tag(meta)),
        version: None,
    }
}

/// What one walk of a directory found.
#[derive(Default)]
struct Walked {
    /// The files, links to files inside the table included.
    files: Vec<ObjectMeta>,
    /// The directories (not links to one), for a walk one level deep.
    dirs: Vec<Path>,
}

impl LocalTable {
    /// The table at `dir`, which must exist.
    pub(crate) fn new(dir: &FsPath) -> Result<Self> {
        let inner = LocalFileSystem::new_with_prefix(dir)?;
        let root = std::fs::canonicalize(dir).map_err(|e| {
            generic(format!(
                "cannot resolve the table directory {}: {e}",
                dir.display()
            ))
        })?;
        let root_path = Path::from_absolute_path(&root)?;
        Ok(LocalTable {
            root,
            root_path,
            inner,
        })
    }

    /// The object path of `real`, a path inside the root; `None` for a name an object
    /// path cannot hold.
    fn location_of(root_path: &Path, real: &FsPath) -> Option<Path> {
        let absolute = Path::from_absolute_path(real).ok()?;
        let parts: Vec<_> = absolute.prefix_match(root_path)?.collect();
        Some(Path::from_iter(parts))
    }

    fn outside(&self, location: &Path) -> object_store::Error {
        object_store::Error::PermissionDenied {
            path: location.to_string(),
            source: format!(
                "{location} leads outside the table directory {} (a symbolic link to something \
                 elsewhere), and a local table's files are read only inside its directory; \
                 copy the file into the table, or open the table at a directory that holds it",
                self.root.display()
            )
            .into(),
        }
    }

    /// The metadata of `location`'s file (at `fs_path`) if the rule for local files lets
    /// it be read, blocking.
    fn check(
        root: &FsPath,
        fs_path: &FsPath,
        location: &Path,
    ) -> std::result::Result<Metadata, CheckError> {
        let refused = |r: Refused| match r {
            Refused::Missing => CheckError::Store(not_found(
                location,
                format!("no file {} (or a link to nothing)", fs_path.display()),
            )),
            Refused::Unresolvable(e) => CheckError::Store(generic(format!(
                "cannot resolve {} (the file of {location}): {e}",
                fs_path.display()
            ))),
            Refused::NoMetadata(real, e) => CheckError::Store(generic(format!(
                "cannot read the metadata of {}: {e}",
                real.display()
            ))),
            Refused::Outside => CheckError::Outside,
            Refused::Directory => CheckError::Store(not_found(
                location,
                format!("{} is a directory, not a file", fs_path.display()),
            )),
            Refused::NotAFile => CheckError::Store(object_store::Error::PermissionDenied {
                path: location.to_string(),
                source: format!(
                    "{location} is not a regular file but a FIFO, socket or device (reading a \
                     FIFO would wait for a writer), and a local table's files are read only \
                     when they are regular files; replace it with the file it should be"
                )
                .into(),
            }),
        };
        file_inside(root, fs_path)
            .map(|(_, meta)| meta)
            .map_err(refused)
    }

    /// [`LocalTable::check`] off the async threads.
    async fn checked(&self, location: &Path) -> Result<Metadata> {
        let fs_path = self.inner.path_to_filesystem(location)?;
        let (root, loc) = (self.root.clone(), location.clone());
        let checked = blocking(move || Ok(Self::check(&root, &fs_path, &loc))).await?;
        match checked {
            Ok(meta) => Ok(meta),
            Err(CheckError::Outside) => Err(self.outside(location)),
            Err(CheckError::Store(e)) => Err(e),
        }
    }

    /// The files under `prefix` (the directory it names; the table for none), one level
    /// deep or all; no link followed (see the module's documentation). Blocking.
    fn walk(
        root: &FsPath,
        root_path: &Path,
        start: Option<PathBuf>,
        prefix: &Path,
        one_level: bool,
    ) -> Result<Walked> {
        let mut out = Walked::default();
        let start = match start {
            None => root.to_path_buf(),
            // walked by its own name (inside the root), so that the files are named
            // under `prefix` even when it is a link to a directory of the table
            Some(dir) => match dir.canonicalize() {
                Ok(real) if real.starts_with(root) => dir,
                Ok(_) => {
                    return Err(object_store::Error::PermissionDenied {
                        path: prefix.to_string(),
                        source: format!(
                            "the directory {prefix} leads outside the table directory {} (a \
                             symbolic link to a directory elsewhere), and a local table's files \
                             are listed only inside its directory; copy the directory into the \
                             table",
                            root.display()
                        )
                        .into(),
                    });
                }
                // nothing there, or not a directory: nothing listed
                Err(_) => return Ok(out),
            },
        };
        if !start.is_dir() {
            return Ok(out);
        }
        let mut walk = walkdir::WalkDir::new(&start)
            .min_depth(1)
            .follow_links(false);
        if one_level {
            walk = walk.max_depth(1);
        }
        for entry in walk {
            let entry = match entry {
                Ok(entry) => entry,
                // removed while walked
                Err(e)
                    if e.io_error().map(std::io::Error::kind)
                        == Some(std::io::ErrorKind::NotFound) =>
                {
                    continue;
                }
                Err(e) => {
                    return Err(generic(format!(
                        "cannot list {}: {e}",
                        e.path().unwrap_or(&start).display()
                    )));
                }
            };
            let Some(location) = Self::location_of(root_path, entry.path()) else {
                continue;
            };
            let kind = entry.file_type();
            let meta = if kind.is_dir() {
                if one_level {
                    out.dirs.push(location);
                }
                continue;
            } else if kind.is_file() {
                entry.metadata().ok()
            } else if kind.is_symlink() {
                // a link to a regular file inside the table; no other link
                match entry.path().canonicalize() {
                    Ok(real) if real.starts_with(root) => {
                        std::fs::metadata(&real).ok().filter(Metadata::is_file)
                    }
                    _ => None,
                }
            } else {
                // a FIFO, socket or device
                None
            };
            if let Some(meta) = meta
                && !is_staged_upload(&location)
            {
                out.files.push(object_meta(location, &meta));
            }
        }
        Ok(out)
    }

    /// [`LocalTable::walk`] of `prefix`, to run off the async threads.
    fn walk_job(
        &self,
        prefix: Option<&Path>,
        one_level: bool,
    ) -> impl FnOnce() -> Result<Walked> + Send + 'static {
        let prefix = prefix.cloned().unwrap_or_default();
        let start = match prefix.parts().next() {
            None => Ok(None),
            Some(_) => self.inner.path_to_filesystem(&prefix).map(Some),
        };
        let (root, root_path) = (self.root.clone(), self.root_path.clone());
        move || Self::walk(&root, &root_path, start?, &prefix, one_level)
    }

    fn read_only(what: &str) -> object_store::Error {
        object_store::Error::NotSupported {
            source: format!("{what}: deltalens reads local tables, it does not write them").into(),
        }
    }
}

/// Why a read is refused before it opens the file.
enum CheckError {
    /// The path leads outside the table.
    Outside,
    /// Anything else, as the store's error.
    Store(object_store::Error),
}

#[async_trait::async_trait]
impl ObjectStore for LocalTable {
    async fn put_opts(&self, _: &Path, _: PutPayload, _: PutOptions) -> Result<PutResult> {
        Err(Self::read_only("put"))
    }

    async fn put_multipart_opts(
        &self,
        _: &Path,
        _: PutMultipartOptions,
    ) -> Result<Box<dyn MultipartUpload>> {
        Err(Self::read_only("multipart put"))
    }

    async fn get_opts(&self, location: &Path, options: GetOptions) -> Result<GetResult> {
        let checked = self.checked(location).await?;
        let got = self.inner.get_opts(location, options).await?;
        // the file opened must be the one checked (not one swapped in since)
        if let GetResultPayload::File(file, _) = &got.payload {
            let opened = file
                .metadata()
                .map_err(|e| generic(format!("cannot read the metadata of {location}: {e}")))?;
            if !same_file(&checked, &opened) {
                return Err(generic(format!(
                    "{location} changed while it was opened (another file took its place); \
                     try again"
                )));
            }
        }
        Ok(got)
    }

    async fn get_ranges(&self, location: &Path, ranges: &[Range<u64>]) -> Result<Vec<Bytes>> {
        let mut out = Vec::with_capacity(ranges.len());
        for r in ranges {
            let options = GetOptions::new().with_range(Some(r.clone()));
            out.push(self.get_opts(location, options).await?.bytes().await?);
        }
        Ok(out)
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, Result<Path>>,
    ) -> BoxStream<'static, Result<Path>> {
        locations
            .map(|l| l.and_then(|_| Err(Self::read_only("delete"))))
            .boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, Result<ObjectMeta>> {
        // the walk runs when the stream is first polled
        futures::stream::once(blocking(self.walk_job(prefix, false)))
            .map(|walked| match walked {
                Ok(w) => futures::stream::iter(w.files.into_iter().map(Ok)).boxed(),
                Err(e) => futures::stream::once(async move { Err(e) }).boxed(),
            })
            .flatten()
            .boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> Result<ListResult> {
        let walked = blocking(self.walk_job(prefix, true)).await?;
        Ok(ListResult {
            common_prefixes: walked.dirs,
            objects: walked.files,
            extensions: Default::default(),
        })
    }

    async fn copy_opts(&self, _: &Path, _: &Path, _: CopyOptions) -> Result<()> {
        Err(Self::read_only("copy"))
    }
}
