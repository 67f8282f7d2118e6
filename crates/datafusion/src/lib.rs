//! deltalens tables in [DataFusion](https://datafusion.apache.org): full SQL (joins,
//! window functions, CTEs) over Delta tables read by deltalens, natively.
//!
//! - [`DeltaTableProvider`]: one version of a table as a `TableProvider`; its scans plan
//!   deltalens splits (one per target partition), push projections, limits and filters
//!   (to partition-value and statistics pruning) down, and honour deletion vectors and
//!   column mapping;
//! - [`TableChangesFunction`]: `table_changes(location, from [, to])`;
//! - [`DeltaTableFactory`] and [`DeltaUrlTables`]: `CREATE EXTERNAL TABLE ... STORED AS
//!   DELTA ... OPTIONS ('version' '3')` and `FROM 's3://bucket/t@v3'`;
//! - [`codec::DeltaCodec`] and [`codec::DeltaLogicalCodec`]: extension codecs, so
//!   physical plans with Delta scans ship to other processes (Ballista executors) that
//!   read the splits themselves, and logical plans with Delta tables to a scheduler;
//! - [`context`]: a `SessionContext` with all of the above.
//!
//! DataFusion 55 is built on arrow 59, deltalens on arrow 60: data crosses in [`bridge`].
//! Native only (not in the explorer's or the worker's wasm).

mod blocking;
pub mod bridge;
mod changes;
pub mod codec;
mod error;
mod factory;
mod filter;
mod location;
mod provider;
mod source;

use std::sync::Arc;

pub use changes::{ChangesProvider, TableChangesFunction};
pub use datafusion;
pub use datafusion_proto;
pub use error::{Error, Result};
pub use factory::{DeltaTableFactory, DeltaUrlTables};
pub use location::{Location, Opened};
pub use provider::DeltaTableProvider;
pub use source::{DeltaScan, DeltaSource, Work, delta_scan, scan_exec};

use datafusion::catalog::{DynamicFileCatalog, UrlTableFactory};
use datafusion::execution::SessionStateBuilder;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::prelude::{SessionConfig, SessionContext};

/// A session that knows Delta tables: `CREATE EXTERNAL TABLE ... STORED AS DELTA`,
/// locations as table names, and `table_changes`, each opening tables with the store
/// `options`.
pub fn context(config: SessionConfig, options: &[(String, String)]) -> SessionContext {
    context_in(SessionStateBuilder::new().with_config(config), options)
}

/// [`context`], with DataFusion's memory pool limited to `max_memory` bytes: sorts, joins
/// and aggregates that need more fail with an error naming the limit (or spill, where
/// DataFusion can).
pub fn context_with_memory_limit(
    config: SessionConfig,
    max_memory: usize,
    options: &[(String, String)],
) -> Result<SessionContext> {
    let runtime = RuntimeEnvBuilder::new()
        .with_memory_limit(max_memory, 1.0)
        .build_arc()
        .map_err(|e| Error::InvalidArgument(format!("memory limit {max_memory}: {e}")))?;
    Ok(context_in(
        SessionStateBuilder::new()
            .with_config(config)
            .with_runtime_env(runtime),
        options,
    ))
}

fn context_in(builder: SessionStateBuilder, options: &[(String, String)]) -> SessionContext {
    let mut state = builder.with_default_features().build();
    state.table_factories_mut().insert(
        "DELTA".into(),
        Arc::new(DeltaTableFactory {
            options: options.to_vec(),
        }),
    );
    state.register_udtf(
        "table_changes",
        Arc::new(TableChangesFunction {
            options: options.to_vec(),
        }),
    );
    let urls: Arc<dyn UrlTableFactory> = Arc::new(DeltaUrlTables {
        options: options.to_vec(),
    });
    let catalogs = Arc::new(DynamicFileCatalog::new(
        Arc::clone(state.catalog_list()),
        urls,
    ));
    SessionStateBuilder::new_from_existing(state)
        .with_catalog_list(catalogs)
        .build()
        .into()
}
