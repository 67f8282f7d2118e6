//! A request to a sharing server or its token endpoint, as [`crate::Server`] and
//! [`crate::Profile::oauth_token`] build it: the caller sends it.

use std::fmt;

/// One HTTP request to send (`Debug` hides the headers: one is the token).
#[derive(Clone, PartialEq, Eq)]
pub struct Request {
    /// `GET` or `POST`.
    pub method: &'static str,
    /// The full URL.
    pub url: String,
    /// Headers, `authorization` among them.
    pub headers: Vec<(String, String)>,
    /// The body of a `POST` (JSON, or a form for the OAuth token).
    pub body: Option<String>,
    /// What is asked, for messages (`table sales.retail.orders`).
    pub what: String,
}

impl fmt::Debug for Request {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Request")
            .field("method", &self.method)
            .field("url", &self.url)
            .field("what", &self.what)
            .finish()
    }
}

/// The format file actions are answered in (the `delta-sharing-capabilities` header).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResponseFormat {
    /// The protocol's own wrappers (`file` with `url`): tables without reader features.
    Parquet,
    /// Delta actions wrapped (`deltaSingleAction`): deletion vectors and column mapping
    /// read exactly.
    Delta,
}

impl ResponseFormat {
    /// The capabilities header's value asking for this format.
    pub(crate) fn capabilities(self) -> &'static str {
        match self {
            ResponseFormat::Parquet => "responseformat=parquet",
            ResponseFormat::Delta => {
                "responseformat=delta;readerfeatures=deletionvectors,columnmapping,timestampntz,v2checkpoint,vacuumprotocolcheck,typewidening"
            }
        }
    }
}

/// What a query asks for besides the table (PROTOCOL.md "Read Data from a Table").
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Query {
    /// The snapshot at this version.
    pub version: Option<u64>,
    /// The snapshot at this time (PROTOCOL.md "Timestamp Format").
    pub timestamp: Option<String>,
    /// At most about this many rows are needed (a hint).
    pub limit_hint: Option<u64>,
    /// A JSON predicate the server may skip files with (a hint: rows are filtered again).
    pub json_predicate_hints: Option<String>,
    /// The files added from this version on (with `ending_version`: up to it).
    pub starting_version: Option<u64>,
    /// The last version of a `starting_version` query.
    pub ending_version: Option<u64>,
}
