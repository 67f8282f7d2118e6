//! `map[string, string]` of the Delta log (partition values, tags, configuration) as a
//! small vector of pairs: these maps hold a handful of entries, and a file list holds
//! one per file, so a tree map's node allocation per file would dominate memory.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// String keys to nullable string values, in log order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StringMap(Vec<(String, Option<String>)>);

impl StringMap {
    /// An empty map.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty map usable in constants.
    pub const fn new_const() -> Self {
        StringMap(Vec::new())
    }

    /// The value of `key`: `None` when absent, `Some(None)` when null.
    pub fn get(&self, key: &str) -> Option<&Option<String>> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Whether `key` is present (with a value or null).
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Set `key`, replacing an earlier value.
    pub fn insert(&mut self, key: String, value: Option<String>) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some((_, v)) => *v = value,
            None => self.0.push((key, value)),
        }
    }

    /// The entries in log order; a null value is `None`.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &Option<String>)> {
        self.0.iter().map(|(k, v)| (k, v))
    }

    /// The number of keys.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the map has no keys.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Maps up to this size are built by a linear search per key; larger ones through an
/// index, so that a log's map of a million keys costs a million steps, not 10^12.
const LINEAR_UP_TO: usize = 32;

impl FromIterator<(String, Option<String>)> for StringMap {
    /// The map of `iter`'s pairs: each key once, where it first appears, with the value it
    /// last had.
    fn from_iter<I: IntoIterator<Item = (String, Option<String>)>>(iter: I) -> Self {
        let mut m = StringMap::new();
        let mut index: Option<std::collections::HashMap<String, usize>> = None;
        for (k, v) in iter {
            if index.is_none() && m.0.len() >= LINEAR_UP_TO {
                index = Some(
                    m.0.iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.clone(), i))
                        .collect(),
                );
            }
            match &mut index {
                None => m.insert(k, v),
                Some(index) => match index.get(&k) {
                    Some(&i) => {
                        if let Some(slot) = m.0.get_mut(i) {
                            slot.1 = v;
                        }
                    }
                    None => {
                        index.insert(k.clone(), m.0.len());
                        m.0.push((k, v));
                    }
                },
            }
        }
        m
    }
}

impl Serialize for StringMap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

struct StringMapVisitor;

impl<'de> Visitor<'de> for StringMapVisitor {
    type Value = StringMap;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a map of strings to strings or nulls")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut access: A) -> Result<StringMap, A::Error> {
        // (the size hint is the input's, not trusted: at most a small capacity up front)
        let mut pairs = Vec::with_capacity(access.size_hint().unwrap_or(0).min(LINEAR_UP_TO));
        while let Some(pair) = access.next_entry::<String, Option<String>>()? {
            pairs.push(pair);
        }
        Ok(pairs.into_iter().collect())
    }
}

impl<'de> Deserialize<'de> for StringMap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<StringMap, D::Error> {
        d.deserialize_map(StringMapVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    /// A map of many keys (a hostile log's configuration) with repeats: each key once in
    /// first-appearance order, with its last value, built through the index (a linear
    /// search per key did not finish 200,000 keys in 10 minutes in a debug build; this
    /// takes under a second).
    #[wasm_bindgen_test(unsupported = test)]
    fn large_maps_keep_first_order_and_last_values() {
        let mut json = String::from("{");
        for i in 0..200_000 {
            json.push_str(&format!("\"k{i}\":\"a{i}\","));
        }
        json.push_str("\"k7\":null,\"k40\":\"again\",\"k0\":\"last\"}");
        let m: StringMap = deltalens_json::from_str(&json).unwrap();
        assert_eq!(m.len(), 200_000);
        assert_eq!(m.get("k0"), Some(&Some("last".to_string())));
        assert_eq!(m.get("k7"), Some(&None));
        assert_eq!(m.get("k40"), Some(&Some("again".to_string())));
        assert_eq!(m.get("k199999"), Some(&Some("a199999".to_string())));
        let keys: Vec<&String> = m.iter().map(|(k, _)| k).take(3).collect();
        assert_eq!(keys, ["k0", "k1", "k2"]);
        // small maps the same way
        let small: StringMap = deltalens_json::from_str(r#"{"a":"1","b":null,"a":"2"}"#).unwrap();
        assert_eq!(small.iter().collect::<Vec<_>>().len(), 2);
        assert_eq!(small.get("a"), Some(&Some("2".to_string())));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn json_round_trip_keeps_order_and_nulls() {
        let m: StringMap = deltalens_json::from_str(r#"{"b":"1","a":null,"b":"2"}"#).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m.get("b"), Some(&Some("2".to_string())));
        assert_eq!(m.get("a"), Some(&None));
        assert_eq!(m.get("c"), None);
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"b":"2","a":null}"#);
        assert!(deltalens_json::from_str::<StringMap>("[1]").is_err());
    }
}
