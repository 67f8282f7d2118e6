use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;
use wasm_bindgen_test::wasm_bindgen_test;

use super::*;

#[derive(Debug, PartialEq, Deserialize)]
struct Pair {
    a: Option<i64>,
    b: Option<String>,
}

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Outer {
    pair: Option<Pair>,
    #[serde(default)]
    pairs: Vec<Pair>,
    #[serde(default)]
    by_name: BTreeMap<String, Pair>,
    wrapped: Option<Wrapped>,
    kind: Option<Kind>,
}

#[derive(Debug, PartialEq, Deserialize)]
struct Wrapped(Pair);

#[derive(Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Kind {
    Unit,
    Newtype(Pair),
    Tuple(i64, i64),
    Fields { a: i64 },
}

fn refused<T: DeserializeOwned + fmt::Debug>(text: &str) -> String {
    let by_str = from_str::<T>(text);
    let by_slice = from_slice::<T>(text.as_bytes());
    #[allow(clippy::disallowed_methods)] // the one place a Value is parsed to feed from_value
    let by_value = serde_json::from_str::<Value>(text).map(from_value::<T>);
    let message = match by_str {
        Ok(v) => panic!("{text} read as {v:?}"),
        Err(e) => e.to_string(),
    };
    assert!(by_slice.is_err(), "from_slice read {text}");
    assert!(!matches!(by_value, Ok(Ok(_))), "from_value read {text}");
    message
}

/// The finding (fuzz target commit_json): a JSON array of nulls read as a struct of
/// absent options. Refused, at the top and at every depth.
#[wasm_bindgen_test(unsupported = test)]
fn an_array_is_never_a_struct() {
    let m = refused::<Pair>("[null,null]");
    assert!(m.contains("expected struct Pair"), "{m}");
    assert!(refused::<Pair>("[1]").contains("sequence"));
    assert!(refused::<Pair>("[]").contains("sequence"));
    for text in [
        r#"{"pair":[1,"x"]}"#,
        r#"{"pairs":[{"a":1},[2,"y"]]}"#,
        r#"{"byName":{"k":[3]}}"#,
        r#"{"wrapped":[4,"z"]}"#,
        r#"{"kind":{"newtype":[5]}}"#,
        r#"{"kind":{"fields":[6]}}"#,
        r#"[null,[],{},null,null]"#,
    ] {
        let m = refused::<Outer>(text);
        assert!(m.contains("sequence"), "{text}: {m}");
    }
}

/// Objects read as before: unknown keys skipped, absent options `None`, every enum shape.
#[wasm_bindgen_test(unsupported = test)]
fn objects_read_as_serde_json_reads_them() {
    let text = r#"{"pair":{"a":1,"b":"x","future":[1,2]},"pairs":[{"a":2}],"byName":{"k":{"b":"y"}},
        "wrapped":{"a":3},"kind":{"fields":{"a":4}},"other":null}"#;
    let o: Outer = from_str(text).unwrap();
    assert_eq!(
        o.pair,
        Some(Pair {
            a: Some(1),
            b: Some("x".into())
        })
    );
    assert_eq!(
        o.pairs,
        vec![Pair {
            a: Some(2),
            b: None
        }]
    );
    assert_eq!(o.by_name["k"].b.as_deref(), Some("y"));
    assert_eq!(
        o.wrapped,
        Some(Wrapped(Pair {
            a: Some(3),
            b: None
        }))
    );
    assert_eq!(o.kind, Some(Kind::Fields { a: 4 }));
    for (text, kind) in [
        (r#""unit""#, Kind::Unit),
        (
            r#"{"newtype":{"a":5}}"#,
            Kind::Newtype(Pair {
                a: Some(5),
                b: None,
            }),
        ),
        (r#"{"tuple":[6,7]}"#, Kind::Tuple(6, 7)),
    ] {
        assert_eq!(from_str::<Kind>(text).unwrap(), kind, "{text}");
    }
    // tuples and sequences are arrays, as ever
    assert_eq!(
        from_str::<(i64, String)>(r#"[1,"a"]"#).unwrap(),
        (1, "a".into())
    );
    assert_eq!(
        from_slice::<Vec<Option<u8>>>(b"[1,null]").unwrap(),
        vec![Some(1), None]
    );
}

/// A `Value` comes out exactly as serde_json makes it: key order kept, numbers of any
/// precision kept as written, arrays where arrays are.
#[wasm_bindgen_test(unsupported = test)]
fn values_are_unchanged() {
    let text = r#"{"z":1,"a":[1e400,12345678901234567890123,-0.0,{"k":[null,true]}],"m":"\u00e9"}"#;
    let ours: Value = from_str(text).unwrap();
    #[allow(clippy::disallowed_methods)] // the oracle
    let theirs: Value = serde_json::from_str(text).unwrap();
    assert_eq!(ours, theirs);
    assert_eq!(ours.to_string(), theirs.to_string());
    assert_eq!(from_value::<Value>(theirs.clone()).unwrap(), theirs);
    let keys: Vec<&String> = ours.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["z", "a", "m"]);
}

/// What serde_json refuses stays refused: trailing characters, bad UTF-8, depth past its
/// recursion limit.
#[wasm_bindgen_test(unsupported = test)]
fn malformed_input_is_refused() {
    assert!(from_str::<Value>("{} x").is_err());
    assert!(from_str::<Pair>(r#"{"a":1}{"a":2}"#).is_err());
    assert!(from_slice::<Value>(b"\"\xff\"").is_err());
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    assert!(from_str::<Value>(&deep).is_err());
    assert!(from_str::<Value>(" {} \n").is_ok());
}
