//! `uc://catalog` and `uc://catalog.schema`: what is inside, a page at a time.

use crate::config::CatalogConfig;
use crate::error::CatalogError;
use crate::request::Request;
use crate::table::{invalid_answer, json_answer};

/// The most pages one listing follows (100 entries each).
pub const MAX_PAGES: usize = 100;

/// What an entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A catalog.
    Catalog,
    /// A schema.
    Schema,
    /// A table or view.
    Table,
}

/// One catalog, schema or table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CatalogEntry {
    /// Its full name (`main`, `main.sales`, `main.sales.orders`).
    pub full_name: String,
    /// What it is.
    pub kind: EntryKind,
    /// A table's type (`MANAGED`, `EXTERNAL`, `VIEW`…).
    pub table_type: Option<String>,
    /// A table's format (`DELTA`, `PARQUET`…).
    pub format: Option<String>,
    /// The comment, if any.
    pub comment: Option<String>,
}

/// One page of a listing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ListPage {
    /// The entries.
    pub entries: Vec<CatalogEntry>,
    /// The next page's token.
    pub next_page_token: Option<String>,
}

impl ListPage {
    /// Read the answer to [`CatalogConfig::list`] for `parent` (`[]`, `[catalog]` or
    /// `[catalog, schema]`).
    pub fn parse(
        config: &CatalogConfig,
        req: &Request,
        parent: &[String],
        status: u16,
        body: &[u8],
    ) -> Result<ListPage, CatalogError> {
        let parent_name = parent.join(".");
        let v = json_answer(config, req, &parent_name, status, body)?;
        let invalid = |why: &str| invalid_answer(config, req, why);
        let (key, kind) = match parent.len() {
            0 => ("catalogs", EntryKind::Catalog),
            1 => ("schemas", EntryKind::Schema),
            _ => ("tables", EntryKind::Table),
        };
        let items = match v.get(key) {
            None | Some(serde_json::Value::Null) => Vec::new(),
            Some(a) => a
                .as_array()
                .ok_or_else(|| invalid(&format!("{key} is not a list")))?
                .clone(),
        };
        let mut entries = Vec::with_capacity(items.len());
        for item in &items {
            let text = |k: &str| item.get(k).and_then(|x| x.as_str()).map(str::to_string);
            let name = text("name").ok_or_else(|| invalid("an entry has no name"))?;
            let full_name = if parent.is_empty() {
                name
            } else {
                format!("{parent_name}.{name}")
            };
            entries.push(CatalogEntry {
                full_name,
                kind,
                table_type: text("table_type"),
                format: text("data_source_format"),
                comment: text("comment"),
            });
        }
        let next_page_token = v
            .get("next_page_token")
            .and_then(|t| t.as_str())
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        Ok(ListPage {
            entries,
            next_page_token,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_get_full_names() {
        let c = CatalogConfig {
            endpoint: "https://h".into(),
            token: "t".into(),
        };
        let parent = vec!["main".to_string(), "sales".to_string()];
        let r = c.list(&parent, None);
        let p = ListPage::parse(
            &c,
            &r,
            &parent,
            200,
            br#"{"tables":[{"name":"orders","table_type":"MANAGED","data_source_format":"DELTA"}],"next_page_token":"orders"}"#,
        )
        .unwrap();
        assert_eq!(p.entries[0].full_name, "main.sales.orders");
        assert_eq!(p.entries[0].format.as_deref(), Some("DELTA"));
        assert_eq!(p.next_page_token.as_deref(), Some("orders"));
        let empty = ListPage::parse(&c, &r, &parent, 200, b"{}").unwrap();
        assert!(empty.entries.is_empty() && empty.next_page_token.is_none());
        let e = ListPage::parse(
            &c,
            &r,
            &parent,
            404,
            br#"{"error_code":"SCHEMA_NOT_FOUND","message":"x"}"#,
        );
        assert!(matches!(e, Err(CatalogError::NotFound { .. })));
    }
}
