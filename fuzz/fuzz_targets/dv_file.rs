//! A deletion vector file (`storageType` `u`): the input is the whole `.bin` file (a
//! format version byte, then per vector a big-endian length, the bitmap and its big-endian
//! CRC-32), read with `deletion_vector::load_deletion_vector` at offset 1 with the length
//! the file states, and at an offset and size taken from the input's last bytes.
#![no_main]

use deltalens_core::actions::DeletionVectorDescriptor;
use deltalens_core::deletion_vector::{dv_file_path, load_deletion_vector};
use deltalens_fuzz::{LOCATION, block_on, memory_table};
use roaring::RoaringTreemap;

const MAGIC: u32 = 1681511377;
/// The PROTOCOL.md example: prefix `ab`, then a Z85 UUID.
const UUID_PATH: &str = "ab^-aqEH.-t@S}K{vb[*k^";

/// What the protocol says the vector at `offset` of `size` bytes holds.
fn reference(file: &[u8], offset: usize, size: usize) -> Option<RoaringTreemap> {
    let block = file.get(offset..offset.checked_add(size)?.checked_add(8)?)?;
    let len = u32::from_be_bytes(block[..4].try_into().ok()?) as usize;
    (len == size).then_some(())?;
    let bitmap = &block[4..4 + size];
    let crc = u32::from_be_bytes(block[4 + size..].try_into().ok()?);
    (crc == crc32fast::hash(bitmap)).then_some(())?;
    let magic = u32::from_le_bytes(bitmap.get(..4)?.try_into().ok()?);
    (magic == MAGIC).then_some(())?;
    RoaringTreemap::deserialize_from(&bitmap[4..]).ok()
}

fn check(file: &[u8], offset: i32, size: i32) {
    let probe = DeletionVectorDescriptor {
        storage_type: "u".into(),
        path_or_inline_dv: UUID_PATH.into(),
        offset: Some(offset),
        size_in_bytes: size,
        cardinality: 0,
        max_row_index: None,
    };
    let path = dv_file_path(&probe, LOCATION).expect("the protocol's example path");
    let (_, storage) = memory_table(&[(path.as_str(), file)]);
    let expected = if offset >= 0 && size >= 0 {
        reference(file, offset as usize, size as usize)
    } else {
        None
    };
    let dv = DeletionVectorDescriptor {
        cardinality: expected.as_ref().map_or(0, |b| b.len() as i64),
        ..probe
    };
    let got = block_on(load_deletion_vector(storage.as_ref(), &dv, LOCATION));
    match (&got, &expected) {
        (Ok(g), Some(e)) => assert_eq!(g, e),
        (Err(_), None) => {}
        // negative offsets and sizes are read as 0 by the reader: no reference for those
        (Ok(_), None) if offset < 0 || size < 0 => {}
        _ => panic!("offset {offset} size {size}: reader {got:?}, protocol {expected:?}"),
    }
}

deltalens_fuzz::target!(|data| {
    let stated = data
        .get(1..5)
        .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as i32);
    check(data, 1, stated);
    if data.len() >= 8 {
        let tail = &data[data.len() - 8..];
        let offset = i32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let size = i32::from_le_bytes([tail[4], tail[5], tail[6], tail[7]]);
        check(data, offset, size);
    }
});
