//! The catalog requests deltalens makes, built from the configured endpoint (so the token
//! goes nowhere else).

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};

use crate::config::CatalogConfig;

/// The API's path under the endpoint.
const API: &str = "/api/2.1/unity-catalog";

/// Results per listing page asked for (the API's maximum for these lists).
pub(crate) const PAGE_SIZE: u32 = 100;

/// One HTTP request to send to the catalog.
#[derive(Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The full URL.
    pub url: String,
    /// Headers, `Authorization` among them.
    pub headers: Vec<(String, String)>,
    /// The JSON body of a `POST`.
    pub body: Option<String>,
    /// What is asked, for messages (`table main.sales.orders`).
    pub what: String,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("what", &self.what)
            .finish()
    }
}

/// Kept as they are: the characters of catalog names and the URL-unreserved ones.
const KEEP: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'.')
    .remove(b'-')
    .remove(b'_')
    .remove(b'~');

fn enc(s: &str) -> String {
    utf8_percent_encode(s, KEEP).to_string()
}

impl CatalogConfig {
    fn request(&self, method: &'static str, path_and_query: String, what: String) -> Request {
        let mut headers = vec![
            (
                "authorization".to_string(),
                format!("Bearer {}", self.token),
            ),
            ("accept".to_string(), "application/json".to_string()),
        ];
        if method == "POST" {
            headers.push(("content-type".into(), "application/json".into()));
        }
        Request {
            method,
            url: format!("{}{API}{path_and_query}", self.endpoint),
            headers,
            body: None,
            what,
        }
    }

    /// `GET /tables/{full_name}`.
    pub fn get_table(&self, full_name: &str) -> Request {
        self.request(
            "GET",
            format!("/tables/{}", enc(full_name)),
            format!("table {full_name}"),
        )
    }

    /// `POST /temporary-table-credentials` for reading the table `table_id`.
    pub fn read_credentials(&self, table_id: &str, full_name: &str) -> Request {
        let mut r = self.request(
            "POST",
            "/temporary-table-credentials".into(),
            format!("read credentials for {full_name}"),
        );
        r.body = Some(serde_json::json!({ "table_id": table_id, "operation": "READ" }).to_string());
        r
    }

    /// A page of the catalogs, schemas of `name[0]`, or tables of `name[0].name[1]`.
    pub fn list(&self, name: &[String], page_token: Option<&str>) -> Request {
        let mut q = format!("?max_results={PAGE_SIZE}");
        let (path, what) = match name {
            [] => ("/catalogs", "catalogs".to_string()),
            [c] => {
                q.push_str(&format!("&catalog_name={}", enc(c)));
                ("/schemas", format!("schemas of {c}"))
            }
            [c, s, ..] => {
                q.push_str(&format!("&catalog_name={}&schema_name={}", enc(c), enc(s)));
                ("/tables", format!("tables of {c}.{s}"))
            }
        };
        if let Some(t) = page_token {
            q.push_str(&format!("&page_token={}", enc(t)));
        }
        self.request("GET", format!("{path}{q}"), what)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> CatalogConfig {
        CatalogConfig {
            endpoint: "https://uc.example".into(),
            token: "secret".into(),
        }
    }

    #[test]
    fn requests_go_to_the_endpoint_with_the_token() {
        let r = config().get_table("main.sales.orders");
        assert_eq!(
            r.url,
            "https://uc.example/api/2.1/unity-catalog/tables/main.sales.orders"
        );
        assert!(
            r.headers
                .contains(&("authorization".into(), "Bearer secret".into()))
        );
        assert!(!format!("{r:?}").contains("secret"));
        let r = config().read_credentials("id-1", "main.sales.orders");
        assert_eq!(r.method, "POST");
        let body: serde_json::Value = deltalens_json::from_str(r.body.as_deref().unwrap()).unwrap();
        assert_eq!(body["operation"], "READ");
        assert_eq!(body["table_id"], "id-1");
        let l = config().list(&["main".into(), "sales".into()], Some("t&x"));
        assert_eq!(
            l.url,
            "https://uc.example/api/2.1/unity-catalog/tables?max_results=100&catalog_name=main&schema_name=sales&page_token=t%26x"
        );
    }
}
