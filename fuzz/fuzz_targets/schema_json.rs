//! `metaData.schemaString`: `schema::TableSchema::parse`, the Arrow conversion it promises
//! cannot fail afterwards, type strings and the serde round trip of the parsed schema.
#![no_main]

use deltalens_core::schema::{StructField, TableSchema};

fn visit(fields: &[StructField]) {
    for f in fields {
        let _ = f.data_type.type_string();
        let _ = f.physical_name();
        let _ = f.field_id();
        let _ = f.comment();
    }
}

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    let Ok(schema) = TableSchema::parse(text) else {
        return;
    };
    // "Validate every type once so later conversions cannot fail on bad input."
    let arrow = schema
        .to_arrow()
        .expect("a parsed schema converts to Arrow");
    assert_eq!(arrow.fields().len(), schema.fields().len());
    visit(schema.fields());
    // what was parsed, written back, parses to the same schema
    let json = serde_json::to_string(&schema.root).expect("a schema serialises");
    let again = TableSchema::parse(&json).unwrap_or_else(|e| panic!("{json} does not parse: {e}"));
    assert_eq!(again.root, schema.root, "round trip through {json}");
});
