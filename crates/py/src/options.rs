//! The keyword arguments Python passes, checked and turned into the API's parameters
//! (`version=3` → `("version", "3")`), and the storage options of `open`.

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::error::option;

/// A call's parameters in the API's names, values as in a URL's query.
pub(crate) type Params = Vec<(String, String)>;

/// Adds `name=value` when a value was given.
pub(crate) fn push(params: &mut Params, name: &str, value: Option<String>) {
    if let Some(v) = value {
        params.push((name.to_string(), v));
    }
}

/// A point in time: an ISO 8601 string as it is, or a `datetime` with a time zone (a
/// naive one is refused: its zone would be a guess).
pub(crate) fn time(py: Python<'_>, name: &str, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    if v.hasattr("isoformat")? && v.hasattr("utcoffset")? {
        if v.call_method0("utcoffset")?.is_none() {
            return Err(option(
                py,
                name,
                "a datetime without a time zone: give it one (tzinfo=datetime.timezone.utc)",
            ));
        }
        return v.call_method0("isoformat")?.extract::<String>();
    }
    Err(option(
        py,
        name,
        "not a string (ISO 8601) or a datetime with a time zone",
    ))
}

/// Column names: a list (or tuple) of strings, or one string of names separated by commas.
pub(crate) fn columns(py: Python<'_>, v: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_cow()?.into_owned());
    }
    let names: Vec<String> = v.extract().map_err(|_| {
        option(
            py,
            "columns",
            "not a list of column names or a string of names separated by commas",
        )
    })?;
    if let Some(bad) = names.iter().find(|n| n.contains(',')) {
        return Err(option(
            py,
            "columns",
            &format!(
                "{bad:?}: a name with a comma cannot be selected by name; use query() with the name quoted"
            ),
        ));
    }
    Ok(names.join(","))
}

/// The storage options of `open`: a dict of string keys (object_store's, as deltalake
/// and the CLI's `-o` take them: `aws_region`, `aws_endpoint`, `azure_storage_sas_key`,
/// …) to strings; `True`/`False` and ints are written as strings.
pub(crate) fn storage(
    py: Python<'_>,
    v: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    let Some(dict) = v else { return Ok(out) };
    for (k, v) in dict.iter() {
        let key: String = k
            .extract()
            .map_err(|_| option(py, "storage_options", "a key that is not a string"))?;
        let value = if let Ok(b) = v.extract::<bool>() {
            b.to_string()
        } else if let Ok(s) = v.cast::<PyString>() {
            s.to_cow()?.into_owned()
        } else if let Ok(i) = v.extract::<i64>() {
            i.to_string()
        } else {
            return Err(option(
                py,
                "storage_options",
                &format!("{key}: not a string, bool or int"),
            ));
        };
        out.push((key, value));
    }
    Ok(out)
}
