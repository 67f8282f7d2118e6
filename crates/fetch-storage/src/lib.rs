//! deltalens storage over the browser's `fetch` (wasm32 only): any server that honours
//! `Range` — static hosting, public buckets addressed by URL. Listing is not possible
//! over plain HTTP, so the core finds versions by name (no-LIST discovery).

#[cfg(target_arch = "wasm32")]
mod fetch;

#[cfg(target_arch = "wasm32")]
pub use fetch::FetchStorage;
