//! An inline deletion vector (`storageType` `i`): the input is the serialised bitmap
//! (magic number + RoaringTreemap portable format), Z85-encoded into a descriptor and read
//! with `deletion_vector::load_deletion_vector`.
#![no_main]

use deltalens_core::actions::DeletionVectorDescriptor;
use deltalens_core::deletion_vector::load_deletion_vector;
use deltalens_fuzz::{LOCATION, block_on};
use deltalens_storage::MemoryStorage;
use roaring::RoaringTreemap;

const MAGIC: u32 = 1681511377;

/// The bitmap the protocol says `data` holds.
fn reference(data: &[u8]) -> Option<RoaringTreemap> {
    let magic = u32::from_le_bytes(data.get(..4)?.try_into().ok()?);
    (magic == MAGIC).then_some(())?;
    RoaringTreemap::deserialize_from(&data[4..]).ok()
}

deltalens_fuzz::target!(|data| {
    let encoded = z85::encode(data);
    if z85::decode(&encoded).ok().as_deref() != Some(data) {
        return; // not the reader's business
    }
    let expected = reference(data);
    let cardinality = expected.as_ref().map_or(0, |b| b.len() as i64);
    let dv = DeletionVectorDescriptor {
        storage_type: "i".into(),
        path_or_inline_dv: encoded,
        offset: None,
        size_in_bytes: data.len() as i32,
        cardinality,
        max_row_index: None,
    };
    let got = block_on(load_deletion_vector(&MemoryStorage::new(), &dv, LOCATION));
    match (&got, &expected) {
        (Ok(g), Some(e)) => assert_eq!(g, e),
        (Err(_), None) => {}
        _ => panic!("reader {got:?}, protocol {expected:?}"),
    }
    // a wrong cardinality is refused
    if let Some(e) = &expected {
        let wrong = DeletionVectorDescriptor {
            cardinality: e.len() as i64 + 1,
            ..dv
        };
        assert!(
            block_on(load_deletion_vector(
                &MemoryStorage::new(),
                &wrong,
                LOCATION
            ))
            .is_err()
        );
    }
});
