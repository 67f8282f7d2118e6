//! Fan-out: a query answered by many workers, one split of a plan each, and merged here
//! (the coordinator). The transport is the caller's — a Workers service binding, threads,
//! a cluster — given as a function from a split to its partial state
//! ([`crate::execute_partial`] where the split runs). Splits are asked a bounded number at
//! a time, in plan order; a split whose attempt fails for a reason another attempt can
//! cure (storage, network: a 5xx) is tried again up to [`FanOutOptions::attempts`] times;
//! a split that keeps failing fails the query with [`ApiError::SplitFailed`], naming it.

use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};

use deltalens_core::scan::ScanOptions;
use deltalens_core::{PlanOptions, ScanPlan, Split, Table};
use deltalens_present::{Format, encode};
use deltalens_storage::BudgetKind;
use futures::{StreamExt, TryStreamExt};

use crate::error::{ApiError, Result};
use crate::execute::{Limits, Output, merge_partials};
use crate::partial::Partial;
use crate::response::ApiResponse;
use crate::sql::{Query, Source};

/// How a fan-out runs. The defaults fit Cloudflare Workers' limits
/// (<https://developers.cloudflare.com/workers/platform/limits/>): a request may wait on
/// 6 outgoing connections at once, and send 50 subrequests on the Free plan (10,000 on
/// Paid) — a call through a service binding is one, and the coordinator's own reads of
/// the log count too, so 40 are left for the splits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FanOutOptions {
    /// Splits asked at once (each an open connection where the transport is HTTP).
    pub concurrency: usize,
    /// Attempts per split, the first included.
    pub attempts: u32,
    /// Sub-requests (attempts, retries included) the whole fan-out may send: a plan with
    /// more splits is refused before any is sent, and retries stop when they are spent
    /// (the `subrequests` budget, 413).
    pub max_requests: u32,
}

impl Default for FanOutOptions {
    fn default() -> Self {
        FanOutOptions {
            concurrency: 6,
            attempts: 3,
            max_requests: 40,
        }
    }
}

/// Whether another attempt may cure `e`: a transient storage failure (as the storage
/// layer retries them: network, 5xx, 429; not a stall, waited out once), or a worker that
/// failed (502–504 without a storage error underneath); not a budget, a bad query or a
/// table that cannot be read.
pub fn retryable(e: &ApiError) -> bool {
    if e.budget().is_some() {
        return false;
    }
    match e.storage() {
        Some(s) => deltalens_storage::is_transient(s),
        None => matches!(e.status(), 502..=504),
    }
}

/// `split` asked of `call` until it answers, or its `attempts` or the fan-out's
/// sub-requests (`sent` of `options.max_requests`) are spent.
async fn attempt<F, Fut>(
    split: &Split,
    splits: usize,
    options: &FanOutOptions,
    sent: &AtomicU32,
    call: &F,
) -> Result<Partial>
where
    F: Fn(&Split) -> Fut,
    Fut: Future<Output = Result<Partial>>,
{
    let attempts = options.attempts.max(1);
    let mut tried = 0;
    loop {
        let used = sent.fetch_add(1, Ordering::Relaxed).saturating_add(1);
        if used > options.max_requests {
            let e = BudgetKind::Subrequests.exceeded(
                u64::from(options.max_requests),
                u64::from(used),
                "the fan-out's calls to split workers (retries included)",
            );
            return Err(ApiError::SplitFailed {
                split: split.id,
                splits,
                attempts: tried,
                source: Box::new(ApiError::Core(e.into())),
            });
        }
        tried += 1;
        match call(split).await {
            Ok(p) => return Ok(p),
            Err(e) if tried < attempts && retryable(&e) => continue,
            Err(e) => {
                return Err(ApiError::SplitFailed {
                    split: split.id,
                    splits,
                    attempts: tried,
                    source: Box::new(e),
                });
            }
        }
    }
}

/// `query`'s answer from every split of `plan`, each answered by `call`, merged within
/// `max_rows`. An empty plan has nothing to fan out: answer it where the plan was made
/// ([`crate::execute_limited`] reads no data file then).
pub async fn fan_out<F, Fut>(
    query: &Query,
    plan: &ScanPlan,
    options: &FanOutOptions,
    max_rows: Option<usize>,
    call: F,
) -> Result<Output>
where
    F: Fn(&Split) -> Fut,
    Fut: Future<Output = Result<Partial>>,
{
    let n = plan.splits.len();
    if n == 0 {
        return Err(ApiError::compute("the fan-out", "the plan has no split"));
    }
    if u32::try_from(n).map_or(true, |n| n > options.max_requests) {
        return Err(ApiError::param(
            "splits",
            format!(
                "the plan has {n} splits, more than the {} sub-requests one query may send; plan larger splits (target bytes)",
                options.max_requests
            ),
        ));
    }
    let (call, sent) = (&call, &AtomicU32::new(0));
    let parts: Vec<Partial> = futures::stream::iter(
        plan.splits
            .iter()
            .map(|s| attempt(s, n, options, sent, call)),
    )
    .buffered(options.concurrency.max(1))
    .try_collect()
    .await?;
    merge_partials(query, &parts, plan.version, max_rows)
}

/// When a query is worth fanning out, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FanOutPolicy {
    /// Fan out only tables (their files left after the filter's pruning) of at least
    /// this many bytes.
    pub min_bytes: u64,
    /// Splits to cut the table into (workers asked).
    pub width: usize,
    /// How the fan-out runs.
    pub options: FanOutOptions,
}

impl FanOutPolicy {
    /// The budget parameters (`budget_bytes`, `budget_decoded_bytes`,
    /// `budget_rows_buffered`, `budget_subrequests`, `budget_ms`) to send with each split,
    /// so that the whole tree stays within what is `left` of the coordinator's budgets:
    /// bytes and rows shared out equally (at least 1 each), sub-requests too (possibly
    /// none: a split may still answer from its worker's cache), the wall time as given
    /// (the splits run at once: the caller gives what is left of its own, and its own
    /// clock ends the whole request).
    pub fn split_budgets(&self, left: &TreeBudgets) -> Vec<(&'static str, String)> {
        let width = self.width.max(1) as u64;
        let share = |n: u64| (n / width).max(1).to_string();
        let mut out = Vec::new();
        if let Some(b) = left.bytes {
            out.push(("budget_bytes", share(b)));
        }
        if let Some(b) = left.decoded_bytes {
            out.push(("budget_decoded_bytes", share(b)));
        }
        if let Some(r) = left.rows_buffered {
            out.push(("budget_rows_buffered", share(r as u64)));
        }
        if let Some(n) = left.subrequests {
            out.push(("budget_subrequests", (n / width).to_string()));
        }
        if let Some(ms) = left.millis {
            out.push(("budget_ms", (ms.max(1.0) as u64).to_string()));
        }
        out
    }
}

/// What is left of a coordinator's budgets for its splits to share (`None`: no limit to
/// share; each split's worker applies its own configured one).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TreeBudgets {
    /// Bytes read from storage.
    pub bytes: Option<u64>,
    /// Bytes decoded from Parquet pages.
    pub decoded_bytes: Option<u64>,
    /// Rows held at once.
    pub rows_buffered: Option<usize>,
    /// Storage requests.
    pub subrequests: Option<u64>,
    /// Wall time, in milliseconds.
    pub millis: Option<f64>,
}

/// `query` answered by fanning it out over `policy.width` splits of its table when the
/// files it reads hold at least `policy.min_bytes`, encoded in `format`; `None` when it
/// is not worth it (a smaller table, a change feed, fewer than 2 files) — answer it with
/// [`crate::respond`] then; otherwise the answer and the number of splits asked (fewer
/// than `width` when the table has fewer files). `limits.max_rows` holds for the merged
/// answer; each split's worker applies its own budgets.
pub async fn respond_fanned_out<F, Fut>(
    query: &Query,
    format: Format,
    table: &Table,
    limits: Limits,
    policy: &FanOutPolicy,
    call: F,
) -> Result<Option<(ApiResponse, usize)>>
where
    F: Fn(&Split) -> Fut,
    Fut: Future<Output = Result<Partial>>,
{
    let Source::Table { at, .. } = &query.source else {
        return Ok(None);
    };
    let info = table.version_info(*at).await?;
    let scan = ScanOptions {
        filter: query.filter.clone(),
        ..Default::default()
    };
    let cut = PlanOptions {
        splits: Some(policy.width.max(1)),
        ..Default::default()
    };
    let plan = info.plan(&scan, &cut).await?;
    if plan.bytes < policy.min_bytes || plan.splits.len() < 2 {
        return Ok(None);
    }
    let out = fan_out(query, &plan, &policy.options, limits.max_rows, call).await?;
    let answer = ApiResponse {
        content_type: format.content_type(),
        body: encode(format, &out.schema, &out.batches)?,
        version: out.version,
        rows: Some(out.num_rows()),
    };
    Ok(Some((answer, plan.splits.len())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_split_gets_a_share_of_the_budgets() {
        let p = FanOutPolicy {
            min_bytes: 1,
            width: 3,
            options: FanOutOptions::default(),
        };
        let left = TreeBudgets {
            bytes: Some(64 << 20),
            decoded_bytes: Some(300),
            rows_buffered: Some(2),
            subrequests: Some(10),
            millis: Some(20_000.0),
        };
        assert_eq!(
            p.split_budgets(&left),
            vec![
                ("budget_bytes", (22_369_621).to_string()),
                ("budget_decoded_bytes", "100".to_string()),
                ("budget_rows_buffered", "1".to_string()),
                ("budget_subrequests", "3".to_string()),
                ("budget_ms", "20000".to_string()),
            ]
        );
        // fewer sub-requests left than splits: none each (a split answers from its
        // worker's cache, or fails naming the budget), never more than the tree has
        let few = TreeBudgets {
            subrequests: Some(2),
            ..Default::default()
        };
        assert_eq!(
            p.split_budgets(&few),
            vec![("budget_subrequests", "0".to_string())]
        );
        assert!(p.split_budgets(&TreeBudgets::default()).is_empty());
    }
}
