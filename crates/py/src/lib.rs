//! deltalens for Python: the Delta Lake reader as a native module, `pip install deltalens`
//! (a wheel built by maturin: `scripts/build-py`).
//!
//! ```python
//! import deltalens
//! t = deltalens.open("s3://bucket/sales", storage_options={"aws_region": "eu-west-1"})
//! t.version(); t.history(limit=5)
//! pyarrow.table(t.scan(version=3, columns=["id", "amount"], filter="amount > 100"))
//! ```
//!
//! The calls are the worker's HTTP API as methods, as in the npm package: each turns its
//! keyword arguments into the API's parameters (`deltalens_api::request::parse_get`), so
//! a parameter is checked and means the same in `GET /v1/scan?…`, `deltalens scan …`,
//! `table.scan({…})` in JavaScript and `table.scan(…)` here. Documents come back as
//! dicts and lists; rows as [`rows::Rows`], an Arrow stream (the PyCapsule interface:
//! `pyarrow.table(rows)`, `polars.DataFrame(rows)`, DuckDB's `FROM rows`) that the scan
//! fills batch by batch as it reads.

#![warn(missing_docs, unreachable_pub)]

mod document;
mod error;
mod options;
mod rows;
mod runtime;
mod table;

use pyo3::prelude::*;

/// The module `deltalens`.
#[pymodule]
#[pyo3(name = "deltalens")]
fn deltalens_py(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("DeltaLensError", m.py().get_type::<error::DeltaLensError>())?;
    m.add_class::<table::Table>()?;
    m.add_class::<rows::Rows>()?;
    m.add_function(wrap_pyfunction!(table::open, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
