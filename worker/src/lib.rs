//! deltalens as a Cloudflare Worker: HTTP queries on Delta tables at the edge.
//!
//! Thin by design: [`routes`] parses the request into a [`deltalens_api::ApiRequest`],
//! checks the bearer token and the table allowlist (before any subrequest), opens the
//! table through a per-request storage stack ([`storage`]), calls the core and serializes.
//! Errors become JSON `{"error": {"code", "message"}}` with an HTTP status in one place
//! ([`errors`]). Configuration comes from the Worker's vars and secrets ([`config`]).
//! The same worker relays table bytes to explorer tabs ([`relay`]) and resolves Unity
//! Catalog names ([`catalog`]).
#![cfg(target_arch = "wasm32")]

mod catalog;
mod config;
mod errors;
mod fanout;
mod pinned;
mod r2;
mod relay;
mod routes;
mod storage;

use worker::{Context, Env, Request, Response, event};

#[event(fetch)]
async fn fetch(req: Request, env: Env, _ctx: Context) -> worker::Result<Response> {
    routes::handle(req, env).await
}
