//! Deletion vectors (PROTOCOL.md "Deletion Vectors"): inline (Z85), relative (`u`, a
//! UUID under the table root) and absolute (`p`) storage, RoaringTreemap portable format,
//! with size and CRC-32 checks.

use deltalens_storage::{ByteRange, Storage};
use roaring::RoaringTreemap;

use crate::actions::DeletionVectorDescriptor;
use crate::error::{Error, Result};

/// Magic number that starts every serialized deletion vector bitmap (little endian).
const MAGIC: u32 = 1681511377;

fn dv_error(dv: &DeletionVectorDescriptor, message: impl Into<String>) -> Error {
    Error::DeletionVector {
        descriptor: format!("{}:{}", dv.storage_type, dv.path_or_inline_dv),
        message: message.into(),
    }
}

/// Where an on-disk deletion vector lives, relative to the table root.
pub fn dv_file_path(dv: &DeletionVectorDescriptor, table_location: &str) -> Result<String> {
    match dv.storage_type.as_str() {
        "u" => {
            let s = &dv.path_or_inline_dv;
            if s.len() < 20 {
                return Err(dv_error(
                    dv,
                    "pathOrInlineDv is shorter than a Z85 UUID (20 characters)",
                ));
            }
            // the UUID is the last 20 characters, all ASCII in Z85: anything else is no
            // UUID (and must not split a multi-byte character)
            let Some((prefix, encoded)) = s
                .split_at_checked(s.len() - 20)
                .filter(|(_, e)| e.is_ascii())
            else {
                return Err(dv_error(dv, "pathOrInlineDv does not end in a Z85 UUID"));
            };
            let bytes =
                z85::decode(encoded).map_err(|e| dv_error(dv, format!("bad Z85 UUID: {e}")))?;
            let uuid =
                format_uuid(&bytes).ok_or_else(|| dv_error(dv, "the UUID is not 16 bytes"))?;
            let path = if prefix.is_empty() {
                format!("deletion_vector_{uuid}.bin")
            } else {
                format!("{prefix}/deletion_vector_{uuid}.bin")
            };
            // the prefix is stored as is (not URL-encoded); refuse it if either form
            // would climb out of the table
            crate::table_path::check(&path).map_err(|m| dv_error(dv, m))?;
            crate::table_path::decode_checked(&path).map_err(|m| dv_error(dv, m))?;
            Ok(path)
        }
        "p" => {
            let rel =
                relative_to_table(&dv.path_or_inline_dv, table_location).ok_or_else(|| {
                    dv_error(
                        dv,
                        format!("absolute path is outside the table at {table_location}"),
                    )
                })?;
            crate::table_path::check(&rel).map_err(|m| dv_error(dv, m))?;
            Ok(rel)
        }
        other => Err(dv_error(
            dv,
            format!("storage type {other:?} is not on disk"),
        )),
    }
}

fn format_uuid(b: &[u8]) -> Option<String> {
    if b.len() != 16 {
        return None;
    }
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Some(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    ))
}

/// `abs` relative to the table root `location` (URL or local path), when it is inside it.
pub fn relative_to_table(abs: &str, location: &str) -> Option<String> {
    let norm = |s: &str| -> String {
        let s = s.strip_prefix("file://").unwrap_or(s);
        let s = s.strip_prefix("file:").unwrap_or(s);
        percent_encoding::percent_decode_str(s)
            .decode_utf8_lossy()
            .trim_end_matches('/')
            .to_string()
    };
    let (a, root) = (norm(abs), norm(location));
    let root = std::path::absolute(&root)
        .ok()
        .filter(|_| !root.contains("://"))
        .map(|p| p.to_string_lossy().to_string())
        .unwrap_or(root);
    a.strip_prefix(&root)
        .and_then(|r| r.strip_prefix('/'))
        .map(str::to_string)
}

fn parse_bitmap(dv: &DeletionVectorDescriptor, data: &[u8]) -> Result<RoaringTreemap> {
    if data.len() < 4 {
        return Err(dv_error(dv, "bitmap is shorter than its magic number"));
    }
    let magic = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
    if magic != MAGIC {
        return Err(dv_error(
            dv,
            format!("bad magic number {magic}, expected {MAGIC}"),
        ));
    }
    let bitmap = RoaringTreemap::deserialize_from(&data[4..])
        .map_err(|e| dv_error(dv, format!("bad RoaringTreemap: {e}")))?;
    if bitmap.len() != dv.cardinality as u64 {
        return Err(dv_error(
            dv,
            format!(
                "holds {} rows but the descriptor says cardinality {}",
                bitmap.len(),
                dv.cardinality
            ),
        ));
    }
    Ok(bitmap)
}

/// Load the set of deleted row indexes described by `dv`.
pub async fn load_deletion_vector<S: Storage + ?Sized>(
    storage: &S,
    dv: &DeletionVectorDescriptor,
    table_location: &str,
) -> Result<RoaringTreemap> {
    if dv.storage_type == "i" {
        let data = z85::decode(&dv.path_or_inline_dv)
            .map_err(|e| dv_error(dv, format!("bad inline Z85 data: {e}")))?;
        return parse_bitmap(dv, &data);
    }
    let path = dv_file_path(dv, table_location)?;
    let offset = dv.offset.unwrap_or(0).max(0) as u64;
    let size = dv.size_in_bytes.max(0) as u64;
    // 4-byte big-endian length, the bitmap, 4-byte big-endian CRC-32 of the bitmap
    let block = storage
        .get_range(&path, ByteRange::Bounded(offset..offset + 4 + size + 4))
        .await?;
    if block.len() as u64 != size + 8 {
        return Err(dv_error(
            dv,
            format!("{path}: short read of {} bytes", block.len()),
        ));
    }
    let len = u32::from_be_bytes([block[0], block[1], block[2], block[3]]) as u64;
    if len != size {
        return Err(dv_error(
            dv,
            format!("{path}: stored size {len} != sizeInBytes {size}"),
        ));
    }
    let data = &block[4..4 + size as usize];
    let crc_at = 4 + size as usize;
    let crc = u32::from_be_bytes([
        block[crc_at],
        block[crc_at + 1],
        block[crc_at + 2],
        block[crc_at + 3],
    ]);
    let actual = crc32fast::hash(data);
    if crc != actual {
        return Err(dv_error(
            dv,
            format!("{path}: checksum {actual:08x} != stored {crc:08x}"),
        ));
    }
    parse_bitmap(dv, data)
}

/// The rows `dv` deletes; none without a deletion vector.
pub async fn deleted_rows<S: Storage + ?Sized>(
    storage: &S,
    dv: Option<&DeletionVectorDescriptor>,
    table_location: &str,
) -> Result<RoaringTreemap> {
    match dv {
        Some(d) => load_deletion_vector(storage, d, table_location).await,
        None => Ok(RoaringTreemap::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use deltalens_storage::MemoryStorage;
    use futures::executor::block_on;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn desc(
        t: &str,
        p: &str,
        offset: Option<i32>,
        size: i32,
        card: i64,
    ) -> DeletionVectorDescriptor {
        DeletionVectorDescriptor {
            storage_type: t.into(),
            path_or_inline_dv: p.into(),
            offset,
            size_in_bytes: size,
            cardinality: card,
            max_row_index: None,
        }
    }

    fn serialized(rows: &[u64]) -> Vec<u8> {
        let mut bm = RoaringTreemap::new();
        for r in rows {
            bm.insert(*r);
        }
        let mut out = MAGIC.to_le_bytes().to_vec();
        bm.serialize_into(&mut out).unwrap();
        out
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn relative_uuid_paths() {
        // the PROTOCOL.md example
        let d = desc("u", "ab^-aqEH.-t@S}K{vb[*k^", Some(4), 40, 6);
        assert_eq!(
            dv_file_path(&d, "s3://b/t").unwrap(),
            "ab/deletion_vector_d2c639aa-8816-431a-aaf6-d3fe2512ff61.bin"
        );
        assert!(dv_file_path(&desc("u", "short", None, 1, 1), "t").is_err());
        // found by fuzzing: a multi-byte character across the UUID split panicked
        assert!(dv_file_path(&desc("u", "xé-aqEH.-t@S}K{vb[*k^", None, 1, 1), "t").is_err());
        assert_eq!(
            relative_to_table("s3://b/t/dv/x.bin", "s3://b/t/").as_deref(),
            Some("dv/x.bin")
        );
        assert_eq!(relative_to_table("s3://other/x.bin", "s3://b/t"), None);
        // a crafted prefix or absolute path cannot leave the table
        let uuid = "^-aqEH.-t@S}K{vb[*k^";
        for prefix in ["../", "a/../../", "%2e%2e/", "/", "a\\..\\"] {
            let d = desc("u", &format!("{prefix}{uuid}"), Some(4), 40, 6);
            assert!(dv_file_path(&d, "s3://b/t").is_err(), "{prefix}");
        }
        for p in ["s3://b/t/../other/x.bin", "s3://b/t/a/%2e%2e/%2e%2e/x.bin"] {
            assert!(
                dv_file_path(&desc("p", p, Some(4), 40, 6), "s3://b/t").is_err(),
                "{p}"
            );
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn inline_and_file_vectors_with_checks() {
        let data = serialized(&[1, 3, 5_000_000_000]);
        let inline = desc("i", &z85::encode(&data), None, data.len() as i32, 3);
        let bm = block_on(load_deletion_vector(&MemoryStorage::new(), &inline, "t")).unwrap();
        assert_eq!(bm.iter().collect::<Vec<_>>(), [1, 3, 5_000_000_000]);

        let mem = MemoryStorage::new();
        let mut file = vec![1u8]; // format version byte before the first vector
        let offset = file.len() as i32;
        file.extend((data.len() as u32).to_be_bytes());
        file.extend(&data);
        file.extend(crc32fast::hash(&data).to_be_bytes());
        let d = desc(
            "u",
            "ab^-aqEH.-t@S}K{vb[*k^",
            Some(offset),
            data.len() as i32,
            3,
        );
        let path = dv_file_path(&d, "t").unwrap();
        mem.put(&path, file.clone(), 0);
        let bm = block_on(load_deletion_vector(&mem, &d, "t")).unwrap();
        assert_eq!(bm.len(), 3);

        // wrong cardinality, corrupted checksum, bad magic
        let wrong = desc(
            "u",
            "ab^-aqEH.-t@S}K{vb[*k^",
            Some(offset),
            data.len() as i32,
            4,
        );
        assert!(
            block_on(load_deletion_vector(&mem, &wrong, "t"))
                .unwrap_err()
                .to_string()
                .contains("cardinality 4")
        );
        let mut bad = file.clone();
        let n = bad.len();
        bad[n - 1] ^= 0xff;
        mem.put(&path, bad, 0);
        assert!(
            block_on(load_deletion_vector(&mem, &d, "t"))
                .unwrap_err()
                .to_string()
                .contains("checksum")
        );
        let junk = desc("i", &z85::encode([0u8; 8]), None, 8, 0);
        assert!(
            block_on(load_deletion_vector(&mem, &junk, "t"))
                .unwrap_err()
                .to_string()
                .contains("magic")
        );
    }
}
