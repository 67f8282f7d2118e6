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

impl FromIterator<(String, Option<String>)> for StringMap {
    fn from_iter<I: IntoIterator<Item = (String, Option<String>)>>(iter: I) -> Self {
        let mut m = StringMap::new();
        for (k, v) in iter {
            m.insert(k, v);
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
        let mut m = StringMap(Vec::with_capacity(access.size_hint().unwrap_or(0)));
        while let Some((k, v)) = access.next_entry::<String, Option<String>>()? {
            m.insert(k, v);
        }
        Ok(m)
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

    #[wasm_bindgen_test(unsupported = test)]
    fn json_round_trip_keeps_order_and_nulls() {
        let m: StringMap = serde_json::from_str(r#"{"b":"1","a":null,"b":"2"}"#).unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(m.get("b"), Some(&Some("2".to_string())));
        assert_eq!(m.get("a"), Some(&None));
        assert_eq!(m.get("c"), None);
        assert_eq!(serde_json::to_string(&m).unwrap(), r#"{"b":"2","a":null}"#);
        assert!(serde_json::from_str::<StringMap>("[1]").is_err());
    }
}
