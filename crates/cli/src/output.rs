//! Where rows go: the `--output` file or stdout (the formats are `deltalens_present`'s
//! [`RowWriter`](deltalens_present::RowWriter)).

use std::io::Write;
use std::path::Path;

use crate::error::CliError;

/// Where rows go: the `--output` file, or stdout.
pub fn destination(path: Option<&Path>) -> Result<Box<dyn Write + Send>, CliError> {
    Ok(match path {
        Some(p) => Box::new(std::io::BufWriter::new(std::fs::File::create(p).map_err(
            |source| CliError::CreateOutput {
                path: p.to_path_buf(),
                source,
            },
        )?)),
        None => Box::new(std::io::BufWriter::new(std::io::stdout())),
    })
}
