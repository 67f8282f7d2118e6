//! A deletion vector descriptor (`add.deletionVector`) as JSON: where it points
//! (`deletion_vector::dv_file_path`, `relative_to_table`) and reading it
//! (`load_deletion_vector`, inline or from a store holding a valid empty vector at the
//! resolved path).
#![no_main]

use deltalens_core::actions::DeletionVectorDescriptor;
use deltalens_core::deletion_vector::{dv_file_path, load_deletion_vector, relative_to_table};
use deltalens_fuzz::{block_on, memory_table};

const MAGIC: u32 = 1681511377;
const LOCATIONS: [&str; 3] = [
    "s3://fuzz-bucket/table",
    "/tmp/fuzz/table",
    "file:///tmp/fuzz/table",
];

/// A `.bin` file holding one empty vector at offset 1.
fn empty_vector_file() -> Vec<u8> {
    let mut bitmap = MAGIC.to_le_bytes().to_vec();
    roaring::RoaringTreemap::new()
        .serialize_into(&mut bitmap)
        .expect("serialise");
    let mut file = vec![1u8];
    file.extend((bitmap.len() as u32).to_be_bytes());
    file.extend(&bitmap);
    file.extend(crc32fast::hash(&bitmap).to_be_bytes());
    file
}

deltalens_fuzz::target!(|data| {
    let Ok(dv) = deltalens_json::from_slice::<DeletionVectorDescriptor>(data) else {
        return;
    };
    let _ = dv.unique_id();
    let file = empty_vector_file();
    for location in LOCATIONS {
        let _ = relative_to_table(&dv.path_or_inline_dv, location);
        let path = dv_file_path(&dv, location);
        let files: Vec<(&str, &[u8])> = match &path {
            Ok(p) => {
                // the path stays inside the table
                assert!(
                    !p.is_empty() && !p.starts_with('/'),
                    "{p:?} is not relative"
                );
                assert!(!p.contains('\\'), "{p:?} has a backslash");
                for form in [p.clone(), deltalens_fuzz::percent_decode(p)] {
                    assert!(
                        !form
                            .split('/')
                            .any(|s| s == ".." || s == "." || s.is_empty()),
                        "{p:?} leaves the table or is not a plain path"
                    );
                }
                vec![(p.as_str(), file.as_slice())]
            }
            Err(_) => Vec::new(),
        };
        let (_, storage) = memory_table(&files);
        let _ = block_on(load_deletion_vector(storage.as_ref(), &dv, location));
    }
});
