//! `add.partitionValues` strings read with their Delta types:
//! `partition_values::partition_value_json`, `partition_array` and `parse_timestamp_us`.
//! The first byte picks the type, the rest is the value.
#![no_main]

use deltalens_core::partition_values::{parse_timestamp_us, partition_array, partition_value_json};
use deltalens_core::schema::{DataType, to_arrow_type};

const TYPES: &[&str] = &[
    "string",
    "binary",
    "byte",
    "short",
    "integer",
    "long",
    "float",
    "double",
    "boolean",
    "date",
    "timestamp",
    "timestamp_ntz",
    "decimal(10,2)",
    "decimal(38,18)",
    "decimal(5,0)",
    "decimal(38,0)",
];

deltalens_fuzz::target!(|data| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Some(raw) = deltalens_fuzz::text(rest) else {
        return;
    };
    let _ = parse_timestamp_us(raw);
    let ty = DataType::Primitive(TYPES[pick as usize % TYPES.len()].to_string());
    let arrow = to_arrow_type(&ty).expect("a known type");
    let json = partition_value_json("c", Some(raw), &ty);
    if let Ok(v) = &json {
        if raw.is_empty() {
            assert!(v.is_null(), "the empty string is null");
        }
    }
    for n in [1usize, 3] {
        if let Ok(a) = partition_array("c", Some(raw), &ty, &arrow, n) {
            assert_eq!(a.len(), n);
            assert_eq!(a.data_type(), &arrow, "typed as the table declares it");
        }
    }
});
