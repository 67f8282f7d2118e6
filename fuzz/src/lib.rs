//! Helpers shared by the fuzz targets (see `fuzz/README.md`).

use std::cell::RefCell;
use std::sync::Arc;

use deltalens_storage::{DynStorage, MemoryStorage};

pub use futures::executor::block_on;

/// The location tables are opened at in the targets (only used in messages and to resolve
/// absolute paths).
pub const LOCATION: &str = "s3://fuzz-bucket/table";

/// An in-memory table holding `files` (path relative to the table root, bytes).
pub fn memory_table(files: &[(&str, &[u8])]) -> (Arc<MemoryStorage>, DynStorage) {
    let mem = Arc::new(MemoryStorage::new());
    for (path, data) in files {
        mem.put(path, data.to_vec(), 1_600_000_000_000);
    }
    let dyn_storage: DynStorage = mem.clone();
    (mem, dyn_storage)
}

/// Paths returned either as a plain `Vec` or as a `Result` of one (an API that gains a
/// limit check keeps compiling here).
pub trait IntoPaths {
    fn into_paths(self) -> Option<Vec<String>>;
}

impl IntoPaths for Vec<String> {
    fn into_paths(self) -> Option<Vec<String>> {
        Some(self)
    }
}

impl<E> IntoPaths for Result<Vec<String>, E> {
    fn into_paths(self) -> Option<Vec<String>> {
        self.ok()
    }
}

/// The input as UTF-8, or `None`.
pub fn text(data: &[u8]) -> Option<&str> {
    std::str::from_utf8(data).ok()
}

/// Split `data` at the first `sep` byte: (before, after); all of it and an empty tail
/// when there is none.
pub fn split_once(data: &[u8], sep: u8) -> (&[u8], &[u8]) {
    match data.iter().position(|b| *b == sep) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

pub mod table;

/// `%XX` escapes decoded (invalid ones kept as they are; bytes that are not UTF-8 replaced):
/// an oracle written independently of the percent-decoding the code under test uses.
pub fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Define a fuzz target whose body runs under [`run`] (see there):
/// `deltalens_fuzz::target!(|data| { ... });`
#[macro_export]
macro_rules! target {
    (|$data:ident| $body:block) => {
        libfuzzer_sys::fuzz_target!(init: $crate::init(), |$data: &[u8]| {
            $crate::run(|| $body)
        });
    };
}

thread_local! {
    /// The last panic's message and backtrace, captured but not symbolized: symbolizing
    /// reads the binary's debug info (a 170 MB fuzz binary), which only a panic that
    /// reaches the target needs, not the ones the code catches.
    static LAST_PANIC: RefCell<Option<(String, std::backtrace::Backtrace)>> =
        const { RefCell::new(None) };
}

/// libfuzzer-sys aborts on every panic, also on one the code under test catches: every
/// panic is a finding, as on wasm32 (the explorer, the worker), where a panic aborts the
/// module although the core catches the parquet crate's panics natively. With
/// `FUZZ_STRICT_PANICS=0` a panic only records its message and backtrace here, and [`run`]
/// aborts, printing them, when a panic reaches the target (the native build's view).
pub fn init() {
    if std::env::var_os("FUZZ_STRICT_PANICS").is_none_or(|v| v != "0") {
        return;
    }
    std::panic::set_hook(Box::new(|info| {
        let backtrace = std::backtrace::Backtrace::force_capture();
        let thread = std::thread::current();
        let name = thread.name().unwrap_or("<unnamed>");
        LAST_PANIC.with(|p| {
            *p.borrow_mut() = Some((format!("thread '{name}' {info}"), backtrace));
        });
    }));
}

/// Run one input; a panic that is not caught on the way is printed and aborts the
/// process (libFuzzer then writes the input as a crash).
pub fn run(body: impl FnOnce()) {
    if std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).is_err() {
        match LAST_PANIC.with(|p| p.borrow_mut().take()) {
            Some((message, backtrace)) => eprintln!("{message}\nstack backtrace:\n{backtrace}"),
            None => eprintln!("panic"),
        }
        std::process::abort();
    }
}
