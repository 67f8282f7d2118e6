//! Limits a log cannot push a reader past. Counts taken from the log or from a server
//! (checkpoint parts, versions, sidecars) are checked against these before any request or
//! allocation sized by them, and a breach is [`crate::Error::LimitExceeded`] naming the
//! limit and the file.

/// Parts of one multi-part checkpoint. Delta Spark writes one part per
/// `spark.databricks.delta.checkpoint.partSize` actions: unset by default today (one
/// file), 5,000,000 in older releases — 1,000 parts is 5 G actions, far past any real
/// table. Each part costs a request: a 37-byte `_last_checkpoint` claiming 10,000 parts
/// cost 10,033 requests when this was 10,000.
pub const MAX_CHECKPOINT_PARTS: u64 = 1_000;

/// Sidecar files of one v2 checkpoint.
pub const MAX_SIDECARS: u64 = 100_000;

/// Versions one discovery without listing may find or assume (probing commit names, or
/// assuming the commits before a checkpoint exist): a host that answers every name would
/// otherwise be probed forever.
pub const MAX_UNLISTED_VERSIONS: u64 = 1_000_000;

/// Columns of a table schema, nested fields counted (a flat schema's columns; a struct
/// column counts itself and each of its fields, at every depth). No Delta writer sets a
/// limit, but tables of more than 10,000 columns are rare (BigQuery refuses them): 65,536
/// is far past real tables. Checked when `metaData.schemaString` is parsed, before any
/// work sized by the schema: a scan's work grows with the number of columns (a
/// 200,000-column schema did not scan in a minute while lookups were quadratic).
pub const MAX_SCHEMA_COLUMNS: u64 = 65_536;

/// Nesting depth of a data file's Parquet schema, checked by the decoder before it builds
/// anything recursively (vendor patch 26: 100,000 nested groups in an 800 KB footer
/// overflowed a thread's stack). A Delta schema nests far less.
pub const MAX_SCHEMA_DEPTH: u64 = parquet::schema::types::MAX_SCHEMA_DEPTH as u64;

/// Path elements of a data file's leaf columns together (each leaf's path names every
/// group above it), checked before the paths are built (vendor patch 26: 200,000 leaves
/// under 100 groups made 20 million strings from a 1.6 MB footer).
pub const MAX_SCHEMA_PATH_ELEMENTS: u64 = parquet::schema::types::MAX_SCHEMA_PATH_ELEMENTS as u64;

/// Bytes of one partition value: it is copied into every row of a file's batches, so a
/// 1 MB value would make 8 GB of one 8,192-row batch (real values are names, dates and
/// numbers).
pub const MAX_PARTITION_VALUE_BYTES: u64 = 64 << 10;

/// Bytes of one Parquet footer (metadata and page indexes) — checkpoints of millions of
/// files have footers of a few MB.
pub const MAX_FOOTER_BYTES: u64 = 256 << 20;

/// Bytes of one FIXED_LEN_BYTE_ARRAY value a Parquet file may declare. Delta's fixed-length
/// values are decimals (16 bytes at most), UUIDs (16) and intervals (12); a width is a
/// file's claim, and the decoder reserves a batch's rows × width and pads each null to a
/// whole width, so a footer declaring a 1 GiB width in a 200-byte file asked for 8 TiB.
pub const MAX_FIXED_LEN_BYTES: u64 = 1 << 10;

/// Bytes of column data one request of the Parquet decoder may ask for (one row group's
/// projected column chunks when the file has no page locations, else a window's pages): a
/// crafted footer must not size a read. Real checkpoints reach a few hundred MB in one row
/// group (a million adds with statistics: 243 MB).
pub const MAX_COLUMN_FETCH_BYTES: u64 = 1 << 30;

/// Bytes one Parquet page may claim uncompressed, checked before the page is
/// decompressed (writers cut pages at about 1 MiB; a larger page holds a single large
/// value). A header claiming 2 GiB otherwise has the codec allocate 2 GiB. This is the
/// default; [`set_max_page_bytes`] lowers it for a process with little memory (the worker).
pub const MAX_PAGE_BYTES: u64 =
    parquet::file::serialized_reader::DEFAULT_MAX_UNCOMPRESSED_PAGE_SIZE as u64;

/// Sets the page-size limit ([`MAX_PAGE_BYTES`] by default) for the whole process: the
/// Parquet decoder checks every page against it.
pub fn set_max_page_bytes(bytes: u64) {
    parquet::file::serialized_reader::set_max_uncompressed_page_size(
        usize::try_from(bytes).unwrap_or(usize::MAX),
    );
}

/// The page-size limit in force ([`set_max_page_bytes`]).
pub fn max_page_bytes() -> u64 {
    parquet::file::serialized_reader::max_uncompressed_page_size() as u64
}

/// Bytes of decompressed pages and decoded dictionaries the columns of one row group may
/// hold at once (each column keeps its current page, and its dictionary, while a batch is
/// decoded), charged before a page is decompressed (parquet's `page_budget`, vendor patch
/// 23). Writers cut pages at about 1 MiB, so a row group of 500 columns holds about
/// 500 MiB; a page of zeros claiming [`MAX_PAGE_BYTES`] compresses to kilobytes, so
/// without this fifty such columns in a small file would hold gigabytes. This is the
/// default; [`set_max_held_page_bytes`] lowers it for a process with little memory (the
/// worker).
pub const MAX_HELD_PAGE_BYTES: u64 = 512 << 20;

static HELD_PAGE_BYTES: Setting = Setting::new(MAX_HELD_PAGE_BYTES);

/// Sets the held-pages limit ([`MAX_HELD_PAGE_BYTES`] by default) for the whole process.
pub fn set_max_held_page_bytes(bytes: u64) {
    HELD_PAGE_BYTES.set(bytes);
}

/// The held-pages limit in force ([`set_max_held_page_bytes`]).
pub fn max_held_page_bytes() -> u64 {
    HELD_PAGE_BYTES.get()
}

/// Levels and values the decoding of one data file may skip within pages (rows a
/// resumed scan, the page index or a limit leaves out), charged before they are walked
/// (vendor patches 23 and 26: per file, so that many row groups each skipping just under
/// a per-batch ceiling cannot add up). A whole page skipped costs nothing, but a page of
/// a few bytes may claim 2^31 run-length encoded levels, and walking them takes a second
/// or two. Real pages hold 20,000 rows or about 1 MiB (writers' defaults), so a file
/// skips within at most a few pages per column and row group; 2^28 levels is a second or
/// so of work.
pub const MAX_SKIPPED_LEVELS: u64 = 1 << 28;

static SKIPPED_LEVELS: Setting = Setting::new(MAX_SKIPPED_LEVELS);

/// Sets the skipped-levels limit ([`MAX_SKIPPED_LEVELS`] by default) for the whole process.
pub fn set_max_skipped_levels(levels: u64) {
    SKIPPED_LEVELS.set(levels);
}

/// The skipped-levels limit in force ([`set_max_skipped_levels`]).
pub fn max_skipped_levels() -> u64 {
    SKIPPED_LEVELS.get()
}

/// A limit a process may lower for itself (the worker, a test), read by every decode.
struct Setting(std::sync::atomic::AtomicU64);

impl Setting {
    const fn new(default: u64) -> Setting {
        Setting(std::sync::atomic::AtomicU64::new(default))
    }

    fn get(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::Relaxed)
    }

    fn set(&self, value: u64) {
        self.0.store(value, std::sync::atomic::Ordering::Relaxed)
    }
}

/// Bytes one decoded batch aims at (its Arrow arrays as allocated): checkpoints, sidecars
/// and data files are decoded in batches whose row count is sized by the bytes per row of
/// the batches before (the first batch of a file is one row), never more rows than asked
/// for. A dictionary-encoded string column materializes its value once per row: 8,192 rows
/// of one 100 KB value are 800 MB in one batch of a file of a few kilobytes. Not an error:
/// a single row larger than this is one batch, up to [`BATCH_VALUE_BYTES`]. Scans also count every batch against their
/// decoded-bytes budget ([`crate::scan::ScanOptions::max_decoded_bytes`]).
pub const BATCH_BYTES: u64 = 32 << 20;

/// String and binary bytes one decoded batch may copy into its arrays, counted by the
/// decoder as it copies them (parquet's `decode_budget`, vendor patch 19): a batch sized
/// by the rows before it ([`BATCH_BYTES`]) whose rows grow eight-fold part-way (a
/// dictionary value of "a" for 50,000 rows, then one of 1 MB) is refused before it is
/// whole and decoded again in smaller batches. A batch of one row may hold a value as
/// large as a page ([`max_page_bytes`]); a single row over both is an error.
pub const BATCH_VALUE_BYTES: u64 = 2 * BATCH_BYTES;

/// How many files (log files, checkpoint parts, sidecars, coalesced ranges) are fetched
/// at once.
pub const FETCH_CONCURRENCY: usize = 32;

/// The highest version Delta can write (versions are signed 64-bit in the protocol).
pub const MAX_VERSION: u64 = i64::MAX as u64;

/// `Err(LimitExceeded)` when `value > max`.
pub(crate) fn check(
    limit: &'static str,
    what: &'static str,
    value: u64,
    max: u64,
    path: &str,
) -> crate::Result<()> {
    if value > max {
        return Err(crate::Error::LimitExceeded {
            limit,
            what,
            value,
            max,
            path: path.to_string(),
        });
    }
    Ok(())
}
