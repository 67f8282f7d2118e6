//! The cross-crate tests, one module per file beside this one, linked into one test
//! binary: each file was a binary of its own (67–200 MB, each linking DataFusion), and
//! linking them one by one was minutes of every CI run. Run one file's tests with
//! `cargo test -p deltalens-tests --test integration conformance::` (the module path is
//! the file's name).
//!
//! Three files stay binaries of their own (tests/Cargo.toml): `dictionary_amplification`
//! counts every allocation with its own global allocator and changes process-wide limits,
//! and `worker` and `js_package` are run by `scripts/worker-test` and `scripts/js-test`
//! once their builds exist.

mod byte_accounting;
mod conformance;
mod conformance_data;
mod datafusion_sql;
mod decoded_bytes;
mod differential;
mod fan_out;
mod fixtures;
mod hostile_logs;
mod interleaved;
mod lazy_eager;
mod no_list;
mod parquet_output;
mod partial_merge;
mod pruning;
mod resume;
mod round_trips;
mod splits;
