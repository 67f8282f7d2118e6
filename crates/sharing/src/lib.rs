//! Delta Sharing, as deltalens reads it (the recipient's side of delta-io/delta-sharing's
//! PROTOCOL.md): a profile file ([`Profile`]: a bearer token, or OAuth client credentials
//! exchanged for one), a table named `<profile>#<share>.<schema>.<table>` ([`ShareName`]),
//! the REST requests ([`Request`], built only from the profile's endpoint, so the token
//! goes nowhere else) and their answers read with bounds: listing pages ([`Page`]), a
//! table's version, its protocol, metadata and files in either response format
//! ([`TableAnswer`], pre-signed URLs checked), and directory-access credentials.
//!
//! Pure, as `deltalens-catalog` is: the caller sends the requests (an HTTP client natively,
//! `fetch` in a tab or a worker) and owns the clock.

#![warn(missing_docs, unreachable_pub)]

mod answer;
mod credentials;
mod error;
mod line;
mod name;
mod oauth;
mod profile;
mod request;
mod server;
mod table;

pub use answer::{
    MAX_ANSWER_BYTES, MAX_ITEMS, MAX_PAGES, Page, SharedItem, check_status, table_version,
};
pub use credentials::temporary_credentials;
pub use error::SharingError;
pub use name::{MAX_NAME_CHARS, ShareName};
pub use oauth::OAuthToken;
pub use profile::{Auth, MAX_PROFILE_BYTES, Profile};
pub use request::{Query, Request, ResponseFormat};
pub use server::Server;
pub use table::{FileKind, MAX_FILES, MAX_LINE_BYTES, SharedFile, TableAnswer, TableReader};
