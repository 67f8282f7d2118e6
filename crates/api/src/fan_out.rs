//! Fan-out: a query answered by many workers, one split of a plan each, and merged here
//! (the coordinator). The transport is the caller's — a Workers service binding, threads,
//! a cluster — given as a function from a split to its partial state
//! ([`crate::execute_partial`] where the split runs). Splits are asked a bounded number at
//! a time, in plan order; a split whose attempt fails for a reason another attempt can
//! cure (storage, network: a 5xx) is tried again up to [`FanOutOptions::attempts`] times;
//! a split that keeps failing fails the query with [`ApiError::SplitFailed`], naming it.

use std::collections::BTreeSet;
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
    F: Fn(&Split, usize) -> Fut,
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
        match call(split, splits).await {
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
    F: Fn(&Split, usize) -> Fut,
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

/// What is left of a coordinator's budgets for its splits to share (`None`: no limit to
/// share; each split's worker applies its own configured one).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TreeBudgets {
    /// Bytes read from storage.
    pub bytes: Option<u64>,
    /// Bytes decoded from Parquet pages (each attempt's own bound).
    pub decoded_bytes: Option<u64>,
    /// Rows held at once (each attempt's own bound).
    pub rows_buffered: Option<usize>,
    /// Storage requests.
    pub subrequests: Option<u64>,
}

/// What one attempt of a split spent (its worker's `x-deltalens-bytes-read` and
/// `x-deltalens-subrequests`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Spent {
    /// Bytes read from storage.
    pub bytes: u64,
    /// Storage requests made.
    pub subrequests: u64,
}

impl Spent {
    /// This and `other` together (saturating).
    pub fn plus(self, other: Spent) -> Spent {
        Spent {
            bytes: self.bytes.saturating_add(other.bytes),
            subrequests: self.subrequests.saturating_add(other.subrequests),
        }
    }
}

/// A coordinator's account of the budgets its splits share, over every attempt, retries
/// included: bytes read and storage requests, which add up across the tree. Each split
/// is granted an equal share of what was left when the fan-out began (possibly none: a
/// split may still answer from its worker's cache), taken from the pool when an attempt
/// is sent; an attempt that reports what it spent gives the rest back, and one that does
/// not (its answer never came) keeps its whole grant. So a retry is paid for from the
/// same budget, and the tree spends no more than was left (bytes: as a single worker's
/// byte budget may be passed by the read in flight, by what its splits report beyond
/// their grants; that is taken from the pool). Decoded bytes and buffered rows bound each
/// attempt on its own: an equal share (at least 1) each time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitBudgets {
    share: TreeBudgets,
    bytes_left: Option<u64>,
    subrequests_left: Option<u64>,
    /// Splits in the plan, and those sent a first attempt: a retry leaves the shares of
    /// the splits not sent yet in the pool.
    splits: u64,
    sent: BTreeSet<usize>,
}

/// The budgets one attempt of a split is sent with: the `budget_*` parameters the split's
/// worker lowers its own to, and what was taken from the pool for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitAttempt {
    /// `budget_bytes`, `budget_decoded_bytes`, `budget_rows_buffered`,
    /// `budget_subrequests`, `budget_ms`, where there is a limit.
    pub params: Vec<(&'static str, String)>,
    bytes: Option<u64>,
    subrequests: Option<u64>,
}

impl SplitBudgets {
    /// `left` of the coordinator's budgets shared by the `splits` of a plan.
    pub fn new(splits: usize, left: TreeBudgets) -> Self {
        let width = splits.max(1) as u64;
        let at_least_one = |n: u64| (n / width).max(1);
        SplitBudgets {
            share: TreeBudgets {
                bytes: left.bytes.map(|n| n / width),
                decoded_bytes: left.decoded_bytes.map(at_least_one),
                rows_buffered: left
                    .rows_buffered
                    .map(|n| usize::try_from(at_least_one(n as u64)).unwrap_or(usize::MAX)),
                subrequests: left.subrequests.map(|n| n / width),
            },
            bytes_left: left.bytes,
            subrequests_left: left.subrequests,
            splits: width,
            sent: BTreeSet::new(),
        }
    }

    /// The budgets of the next attempt of `split` (its id in the plan), given `millis`
    /// of wall time (the caller's: what is left of its own), its bytes and storage
    /// requests taken from the pool: a share, or what is left when less is (for a retry,
    /// less the shares of the splits not sent yet).
    pub fn take(&mut self, split: usize, millis: Option<f64>) -> SplitAttempt {
        let first = self.sent.insert(split);
        let unsent = self.splits.saturating_sub(self.sent.len() as u64);
        let grant = |share: Option<u64>, left: &mut Option<u64>| {
            let (share, l) = (share?, left.as_mut()?);
            let reserved = if first {
                0
            } else {
                share.saturating_mul(unsent)
            };
            let n = share.min(l.saturating_sub(reserved));
            *l -= n;
            Some(n)
        };
        let bytes = grant(self.share.bytes, &mut self.bytes_left);
        let subrequests = grant(self.share.subrequests, &mut self.subrequests_left);
        let mut params = Vec::new();
        if let Some(n) = bytes {
            params.push(("budget_bytes", n.to_string()));
        }
        if let Some(n) = self.share.decoded_bytes {
            params.push(("budget_decoded_bytes", n.to_string()));
        }
        if let Some(n) = self.share.rows_buffered {
            params.push(("budget_rows_buffered", n.to_string()));
        }
        if let Some(n) = subrequests {
            params.push(("budget_subrequests", n.to_string()));
        }
        if let Some(ms) = millis {
            params.push(("budget_ms", (ms.max(1.0) as u64).to_string()));
        }
        SplitAttempt {
            params,
            bytes,
            subrequests,
        }
    }

    /// `attempt` ended, having `spent` what its worker reported (`None`: nothing was
    /// reported, so all of its grant counts as spent): the rest of its grant goes back
    /// to the pool, and what it spent beyond it is taken from the pool.
    pub fn settle(&mut self, attempt: &SplitAttempt, spent: Option<Spent>) {
        let Some(spent) = spent else {
            return;
        };
        // what it did not use goes back; what it used beyond its grant (a byte budget
        // may be passed by the read in flight) is taken from what is left
        let give_back = |grant: Option<u64>, used: u64, left: &mut Option<u64>| {
            if let (Some(g), Some(l)) = (grant, left.as_mut()) {
                *l = l.saturating_add(g.saturating_sub(used));
                *l = l.saturating_sub(used.saturating_sub(g));
            }
        };
        give_back(attempt.bytes, spent.bytes, &mut self.bytes_left);
        give_back(
            attempt.subrequests,
            spent.subrequests,
            &mut self.subrequests_left,
        );
    }

    /// What is left in the pool: bytes and storage requests.
    pub fn left(&self) -> (Option<u64>, Option<u64>) {
        (self.bytes_left, self.subrequests_left)
    }
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
    F: Fn(&Split, usize) -> Fut,
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

    /// A report of `bytes` read in `subrequests` requests.
    fn spent(bytes: u64, subrequests: u64) -> Option<Spent> {
        Some(Spent { bytes, subrequests })
    }

    #[test]
    fn each_split_gets_a_share_of_the_budgets() {
        let left = TreeBudgets {
            bytes: Some(64 << 20),
            decoded_bytes: Some(300),
            rows_buffered: Some(2),
            subrequests: Some(10),
        };
        let mut pool = SplitBudgets::new(3, left);
        assert_eq!(
            pool.take(0, Some(20_000.0)).params,
            vec![
                ("budget_bytes", (22_369_621).to_string()),
                ("budget_decoded_bytes", "100".to_string()),
                ("budget_rows_buffered", "1".to_string()),
                ("budget_subrequests", "3".to_string()),
                ("budget_ms", "20000".to_string()),
            ]
        );
        // less left than splits: none each (a split answers from its worker's cache, or
        // fails naming the budget), never more than the tree has
        let few = TreeBudgets {
            subrequests: Some(2),
            bytes: Some(2),
            ..Default::default()
        };
        assert_eq!(
            SplitBudgets::new(3, few).take(0, None).params,
            vec![
                ("budget_bytes", "0".to_string()),
                ("budget_subrequests", "0".to_string())
            ]
        );
        let mut none = SplitBudgets::new(3, TreeBudgets::default());
        assert!(none.take(0, None).params.is_empty());
    }

    #[test]
    fn a_retry_is_paid_for_from_the_same_budget() {
        let left = TreeBudgets {
            subrequests: Some(10),
            bytes: Some(3000),
            ..Default::default()
        };
        let mut pool = SplitBudgets::new(3, left);
        let first: Vec<SplitAttempt> = (0..3).map(|i| pool.take(i, None)).collect();
        assert_eq!(pool.left(), (Some(0), Some(1)));
        // split 0 answered, having spent 2 requests and 400 bytes: the rest goes back
        pool.settle(&first[0], spent(400, 2));
        assert_eq!(pool.left(), (Some(600), Some(2)));
        // split 1's answer never came: its whole grant counts as spent
        pool.settle(&first[1], None);
        assert_eq!(pool.left(), (Some(600), Some(2)));
        // split 2 read 100 bytes beyond its grant (the read in flight): the pool pays
        pool.settle(&first[2], spent(1100, 3));
        assert_eq!(pool.left(), (Some(500), Some(2)));
        // split 1's retry gets what is left, not a new share
        let retry = pool.take(1, None);
        assert_eq!(
            retry.params,
            vec![
                ("budget_bytes", "500".to_string()),
                ("budget_subrequests", "2".to_string())
            ]
        );
        assert_eq!(pool.left(), (Some(0), Some(0)));
        // an attempt reporting more than there is leaves nothing (and no overflow)
        pool.settle(&retry, spent(u64::MAX, u64::MAX));
        assert_eq!(pool.left(), (Some(0), Some(0)));
    }

    #[test]
    fn a_retry_leaves_the_shares_of_splits_not_sent_yet() {
        let left = TreeBudgets {
            subrequests: Some(40),
            ..Default::default()
        };
        let mut pool = SplitBudgets::new(4, left);
        let a = pool.take(0, None);
        pool.take(1, None);
        // split 0 failed without a report: its retry may not take splits 2 and 3's
        pool.settle(&a, None);
        assert_eq!(pool.left(), (None, Some(20)));
        let retry = pool.take(0, None);
        assert_eq!(retry.params, vec![("budget_subrequests", "0".to_string())]);
        for split in [2, 3] {
            let p = pool.take(split, None).params;
            assert_eq!(p, vec![("budget_subrequests", "10".to_string())]);
        }
    }

    #[test]
    fn attempts_never_spend_more_than_was_left() {
        // random runs of a fan-out: each attempt spends up to its grant (a worker cannot
        // spend more than it is sent), some fail, some without a report; whatever
        // happens, the attempts' spending together stays within what was left
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n.max(1)
        };
        let mut retried_within = 0;
        for _ in 0..2000 {
            let width = 1 + next(8) as usize;
            let total = next(60);
            let left = TreeBudgets {
                subrequests: Some(total),
                ..Default::default()
            };
            let mut pool = SplitBudgets::new(width, left);
            let mut spent_all = 0;
            for i in 0..width * 3 {
                let a = pool.take(i % width, None);
                let grant = a.subrequests.unwrap_or(0);
                let used = next(grant + 1);
                spent_all += used;
                let report = spent(0, used).filter(|_| next(4) != 0);
                if i >= width && used > 0 {
                    retried_within += 1;
                }
                pool.settle(&a, report);
            }
            assert!(
                spent_all <= total,
                "{spent_all} of {total} over {width} splits"
            );
        }
        // retries did get budget back from attempts that spent less than their grant
        assert!(retried_within > 100, "{retried_within}");
    }
}
