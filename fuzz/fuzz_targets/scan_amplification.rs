//! Decoded memory relative to input size (issue #31, item 2: amplification): the scans of
//! `scan_parquet` (the input as the one data file of a small table: every column, a
//! projection, filters with and without pruning) at the default batch size (8,192 rows,
//! so `parquet_read::BatchSizer` sizes the batches), with this binary's global allocator
//! counting the bytes held. The peak held above what was held before each scan must stay
//! under the ceiling the core is designed to hold for an input of `n` bytes:
//!
//! * `4 × BATCH_BYTES` (128 MiB): one decoded batch is about `limits::BATCH_BYTES` at most
//!   (sized by the bytes per row of the batch before; the first batch of a file is one
//!   row), and a scan holds it with its filtered, projected and conformed copies and the
//!   reader's growing buffers for it;
//! * `HELD_PAGE_BYTES` (32 MiB): the decompressed pages and dictionaries the projected
//!   columns' readers hold at once, which the core charges before each page is
//!   decompressed (`limits::MAX_HELD_PAGE_BYTES`, vendor patch 23), set here as a process
//!   with little memory does, with the page limit at `PAGE_BYTES` = 1 MiB (writers cut
//!   pages at about 1 MiB). Before patch 23 this term was two pages per leaf column of
//!   the input's footer: a file of many columns could hold that many pages;
//! * `1024 × n`: the input itself, the ranges fetched of it, and its footer and page
//!   indexes decoded into structs.
//!
//! The first allocation that would pass the ceiling is refused (printing what was held,
//! the ceiling and the input's size): a crash at once instead of touching the memory, or,
//! when the code handles the refusal, an assertion after the scan. Rows that grow part-way
//! through a file count too: the decoder refuses a batch whose string and binary values
//! pass `limits::BATCH_VALUE_BYTES` and decodes its rows again in smaller batches.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::Once;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use deltalens_core::Table;
use deltalens_core::limits::{BATCH_BYTES, set_max_held_page_bytes, set_max_page_bytes};
use deltalens_core::predicate::Predicate;
use deltalens_core::scan::ScanOptions;
use deltalens_fuzz::{LOCATION, block_on, memory_table, table};

/// The page limit this target sets (see above).
const PAGE_BYTES: u64 = 1 << 20;
/// The held-pages limit this target sets (see above).
const HELD_PAGE_BYTES: u64 = 32 << 20;
/// Bytes held per byte of input (see above).
const PER_INPUT_BYTE: u64 = 1024;
/// The scans' decoded-bytes budget. Decoding takes time in proportion to the bytes decoded
/// (about a second per GB on these machines, most of it the kernel handing out fresh pages
/// for each batch's buffers), and a kilobyte of dictionary-encoded input decodes to
/// gigabytes (`fuzz/regressions/scan_amplification/dictionary-value-grows-part-way-time`:
/// 20 GB): a front end reading strangers' tables bounds that time with this budget (the
/// worker: 256 MiB by default), which counts batches refused and decoded again too. The
/// target sets 64 MiB so that its four scans stay well within `-timeout=1` (with 256 MiB
/// they would decode 1 GB in all, legitimately); `-timeout=1` then finds work slow for
/// what it decodes.
const DECODED_BYTES: u64 = 64 << 20;

/// Counts the bytes allocated and not yet freed and their peak; while `LIMIT` is not 0,
/// refuses an allocation that would hold more than it.
struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
/// The most bytes asked to be held, refused allocations included.
static WANTED: AtomicUsize = AtomicUsize::new(0);
static LIMIT: AtomicUsize = AtomicUsize::new(0);
static REFUSED: AtomicBool = AtomicBool::new(false);
/// For the message of a refusal: the ceiling and the input's size.
static CEILING: AtomicUsize = AtomicUsize::new(0);
static INPUT: AtomicUsize = AtomicUsize::new(0);

/// Whether `more` bytes may be allocated (counting them when so).
fn grow(more: usize) -> bool {
    let now = CURRENT.load(Ordering::Relaxed).saturating_add(more);
    WANTED.fetch_max(now, Ordering::Relaxed);
    let limit = LIMIT.load(Ordering::Relaxed);
    if limit != 0 && now > limit {
        // refused once: what comes after (the abort's message and backtrace, or the code
        // going on after a handled refusal, which the assertion after the scan catches)
        // is not refused
        LIMIT.store(0, Ordering::Relaxed);
        if !REFUSED.swap(true, Ordering::Relaxed) {
            // formatted on the stack: nothing is allocated here
            let mut buf = [0u8; 256];
            let mut out = std::io::Cursor::new(&mut buf[..]);
            let _ = writeln!(
                out,
                "scan_amplification: refused {more} bytes: {} held above the scan's start, over the ceiling of {} bytes for an input of {} bytes",
                (now - more).saturating_sub(limit - CEILING.load(Ordering::Relaxed)),
                CEILING.load(Ordering::Relaxed),
                INPUT.load(Ordering::Relaxed),
            );
            let n = out.position() as usize;
            let _ = std::io::stderr().write_all(&buf[..n]);
        }
        return false;
    }
    let now = CURRENT.fetch_add(more, Ordering::Relaxed) + more;
    PEAK.fetch_max(now, Ordering::Relaxed);
    true
}

// SAFETY: every call is forwarded to the system allocator unchanged, or refused by
// returning null (which `GlobalAlloc` allows); only counters are updated besides.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !grow(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: the caller's contract is the system allocator's
        let p = unsafe { System.alloc(layout) };
        if p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !grow(layout.size()) {
            return std::ptr::null_mut();
        }
        // SAFETY: as above
        let p = unsafe { System.alloc_zeroed(layout) };
        if p.is_null() {
            CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above
        unsafe { System.dealloc(ptr, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old && !grow(new_size - old) {
            return std::ptr::null_mut();
        }
        // SAFETY: as above
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if p.is_null() {
            if new_size > old {
                CURRENT.fetch_sub(new_size - old, Ordering::Relaxed);
            }
        } else if new_size < old {
            CURRENT.fetch_sub(old - new_size, Ordering::Relaxed);
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

static INIT: Once = Once::new();

deltalens_fuzz::target!(|data| {
    INIT.call_once(|| {
        set_max_page_bytes(PAGE_BYTES);
        set_max_held_page_bytes(HELD_PAGE_BYTES);
    });
    let (_, fixed) = table::table();
    let mut snapshot = fixed.clone();
    for f in &mut snapshot.files {
        f.size = data.len() as i64;
        f.stats = None;
    }
    let (_, storage) = memory_table(&[(table::DATA_FILE, data)]);
    // the same version read through a store holding the input as its data file
    let snapshot = snapshot.with_table(Table::new(storage, LOCATION));
    let n = data.len() as u64;
    let ceiling = 4 * BATCH_BYTES + HELD_PAGE_BYTES + PER_INPUT_BYTE * n;
    let ceiling = usize::try_from(ceiling).unwrap_or(usize::MAX);
    let filters = [
        None,
        Some("id > 1 AND brand <> 'x'"),
        Some("ts < '2021-01-01T00:00:00Z' OR s.a IS NULL"),
        Some("dec >= 1.5 AND d BETWEEN '2020-01-01' AND '2022-01-01'"),
    ];
    for (i, f) in filters.iter().enumerate() {
        let options = ScanOptions {
            filter: f.map(|f| Predicate::parse(f).expect("a fixed filter")),
            prune: i % 2 == 1,
            columns: (i == 3)
                .then(|| vec!["brand".to_string(), "s".to_string(), "part".to_string()]),
            max_decoded_bytes: Some(DECODED_BYTES),
            ..ScanOptions::default()
        };
        let Ok(scan) = snapshot.scan(options) else {
            continue;
        };
        let schema = scan.schema();
        // counted from here: what this scan holds above what was held before it
        let base = CURRENT.load(Ordering::Relaxed);
        PEAK.store(base, Ordering::Relaxed);
        WANTED.store(base, Ordering::Relaxed);
        REFUSED.store(false, Ordering::Relaxed);
        CEILING.store(ceiling, Ordering::Relaxed);
        INPUT.store(data.len(), Ordering::Relaxed);
        LIMIT.store(base.saturating_add(ceiling), Ordering::Relaxed);
        let _ = block_on(scan.execute(&mut |b| {
            assert_eq!(
                b.schema(),
                schema,
                "a batch of another schema than the scan's"
            );
            Ok(true)
        }));
        LIMIT.store(0, Ordering::Relaxed);
        let peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
        let wanted = WANTED.load(Ordering::Relaxed).saturating_sub(base);
        assert!(
            wanted <= ceiling && !REFUSED.load(Ordering::Relaxed),
            "scan {i} of an input of {n} bytes asked to hold {wanted} bytes (held {peak}): over the ceiling of {ceiling} bytes"
        );
    }
});
