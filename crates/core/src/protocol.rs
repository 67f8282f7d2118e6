//! The reader side of protocol evolution: which tables deltalens may read.

use crate::actions::Protocol;
use crate::error::{Error, Result};

/// Reader features deltalens implements (PROTOCOL.md "Table Features").
pub const SUPPORTED_READER_FEATURES: &[&str] = &[
    "columnMapping",
    "deletionVectors",
    "timestampNtz",
    "typeWidening",
    "typeWidening-preview",
    "v2Checkpoint",
    "vacuumProtocolCheck",
    "variantType",
    "variantType-preview",
];

/// Highest reader version deltalens implements.
pub const MAX_READER_VERSION: i32 = 3;

/// Refuse a table deltalens cannot read correctly.
pub fn check_readable(p: &Protocol) -> Result<()> {
    if p.min_reader_version > MAX_READER_VERSION {
        return Err(Error::UnsupportedReaderVersion {
            version: p.min_reader_version,
        });
    }
    if p.min_reader_version < 1 {
        return Err(Error::InvalidProtocol {
            message: format!(
                "minReaderVersion is {}, it must be at least 1",
                p.min_reader_version
            ),
        });
    }
    match (&p.reader_features, p.min_reader_version) {
        (Some(features), 3) => {
            if let Some(f) = features
                .iter()
                .find(|f| !SUPPORTED_READER_FEATURES.contains(&f.as_str()))
            {
                return Err(Error::UnsupportedFeature { feature: f.clone() });
            }
        }
        (None, 3) => {
            return Err(Error::InvalidProtocol {
                message: "minReaderVersion is 3 but readerFeatures is missing".into(),
            });
        }
        (Some(features), v) if !features.is_empty() => {
            return Err(Error::InvalidProtocol {
                message: format!(
                    "readerFeatures {features:?} are only allowed with minReaderVersion 3, found {v}"
                ),
            });
        }
        _ => {}
    }
    Ok(())
}

/// True when the table has the reader/writer feature `name` (reader version 3 / writer 7
/// tables list features explicitly).
pub fn has_feature(p: &Protocol, name: &str) -> bool {
    let listed = |f: &Option<Vec<String>>| f.as_ref().is_some_and(|v| v.iter().any(|x| x == name));
    listed(&p.reader_features) || listed(&p.writer_features)
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn proto(r: i32, features: Option<&[&str]>) -> Protocol {
        Protocol {
            min_reader_version: r,
            min_writer_version: 7,
            reader_features: features.map(|f| f.iter().map(|s| s.to_string()).collect()),
            writer_features: None,
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn accepts_supported_versions_and_features() {
        check_readable(&proto(1, None)).unwrap();
        check_readable(&proto(2, None)).unwrap();
        check_readable(&proto(1, Some(&[]))).unwrap();
        check_readable(&proto(3, Some(SUPPORTED_READER_FEATURES))).unwrap();
        check_readable(&proto(3, Some(&[]))).unwrap();
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn refuses_unknown_features_and_versions() {
        let e =
            check_readable(&proto(3, Some(&["deletionVectors", "catalogManaged"]))).unwrap_err();
        assert!(e.to_string().contains("'catalogManaged'"), "{e}");
        let e = check_readable(&proto(4, None)).unwrap_err();
        assert!(e.to_string().contains("reader version 4"), "{e}");
        let e = check_readable(&proto(99, Some(&[]))).unwrap_err();
        assert!(matches!(e, Error::UnsupportedReaderVersion { version: 99 }));
        assert!(matches!(
            check_readable(&proto(2, Some(&["columnMapping"]))),
            Err(Error::InvalidProtocol { .. })
        ));
        assert!(matches!(
            check_readable(&proto(3, None)),
            Err(Error::InvalidProtocol { .. })
        ));
        assert!(matches!(
            check_readable(&proto(0, None)),
            Err(Error::InvalidProtocol { .. })
        ));
    }
}
