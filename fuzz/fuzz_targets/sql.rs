//! The SQL subset (`deltalens query`, `POST /v1/query`): `deltalens_api::parse_sql` and
//! `request::parse_query` (plain SQL or a JSON body).
#![no_main]

use deltalens_api::request::parse_query;
use deltalens_api::{ApiRequest, Item, parse_sql};

deltalens_fuzz::target!(|data| {
    let Some(text) = deltalens_fuzz::text(data) else {
        return;
    };
    if let Ok(q) = parse_sql(text) {
        let _ = q.aggregates();
        let _ = q.source.url();
        for i in &q.items {
            let name = i.output_name();
            assert_eq!(name.is_none(), matches!(i, Item::Star));
        }
        if let Some(f) = &q.filter {
            let _ = f.columns();
        }
        // a query the API reads from a body is the same query (a body starting with `{`
        // is JSON there)
        if text.trim_start().starts_with('{') {
            return;
        }
        match parse_query(text, &[]) {
            Ok(ApiRequest::Rows { query, .. }) => assert_eq!(*query, q),
            other => panic!("parse_sql accepted {text:?}, parse_query answered {other:?}"),
        }
    } else if let Ok(r) = parse_query(text, &[]) {
        let _ = r.table();
    }
});
