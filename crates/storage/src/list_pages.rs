//! The pages of one listing, as a paging backend (S3, Azure, GCS over `fetch`, an R2
//! binding) fetches them: at most [`MAX_LIST_PAGES`] pages, each page after the first
//! charged on the request's [`BudgetMeter`] *before* it is fetched, and a continuation
//! token that repeats (a store sending the same page forever) refused.

use std::sync::Arc;

use crate::budget::BudgetMeter;
use crate::{Result, StorageError};

/// Pages one listing may take: 10,000 pages are 10 million objects on S3 (1,000 per
/// page), far beyond any `_delta_log/` a reader lists (it lists from a checkpoint on).
pub const MAX_LIST_PAGES: u32 = 10_000;

/// Bookkeeping for the pages of one listing of `prefix`.
#[derive(Debug)]
pub struct ListPages<'a> {
    prefix: &'a str,
    meter: Option<&'a Arc<BudgetMeter>>,
    fetched: u32,
    last_token: Option<String>,
}

impl<'a> ListPages<'a> {
    /// A listing of `prefix`, charged on `meter` when the backend runs under a budget.
    pub fn new(prefix: &'a str, meter: Option<&'a Arc<BudgetMeter>>) -> Self {
        ListPages {
            prefix,
            meter,
            fetched: 0,
            last_token: None,
        }
    }

    /// Call before fetching each page, with the continuation token it will be fetched
    /// with (`None` for the first page). Refuses the page when the listing already took
    /// [`MAX_LIST_PAGES`], when the store handed out the same token twice in a row, or
    /// when the request budget has no request left (the first page is the request the
    /// caller asked for: the budget counted it already).
    pub fn before_page(&mut self, token: Option<&str>) -> Result<()> {
        if self.fetched >= MAX_LIST_PAGES {
            return Err(StorageError::InvalidResponse {
                path: self.prefix.to_string(),
                operation: "list",
                message: format!(
                    "the listing did not end after {MAX_LIST_PAGES} pages (limit MAX_LIST_PAGES); the store keeps handing out continuation tokens"
                ),
            });
        }
        if let Some(t) = token {
            if self.last_token.as_deref() == Some(t) {
                return Err(StorageError::InvalidResponse {
                    path: self.prefix.to_string(),
                    operation: "list",
                    message: format!(
                        "page {} repeats the continuation token of the page before; the store's listing does not advance",
                        self.fetched + 1
                    ),
                });
            }
            self.last_token = Some(t.to_string());
        }
        if self.fetched > 0
            && let Some(m) = self.meter
        {
            m.subrequest(self.prefix)?;
        }
        self.fetched += 1;
        Ok(())
    }

    /// Pages fetched (or about to be) so far.
    pub fn fetched(&self) -> u32 {
        self.fetched
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BudgetKind, Budgets};
    use wasm_bindgen_test::wasm_bindgen_test;

    fn clock() -> f64 {
        0.0
    }

    fn kind(e: StorageError) -> Option<BudgetKind> {
        match e {
            StorageError::BudgetExceeded { budget, .. } => Some(budget),
            _ => None,
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn each_page_after_the_first_is_charged_before_it_is_fetched() {
        let meter = Arc::new(BudgetMeter::new(
            Budgets {
                max_requests: Some(3),
                ..Default::default()
            },
            clock,
        ));
        // the caller's budget counted the listing's first request already
        meter.subrequest("_delta_log/").unwrap();
        let mut pages = ListPages::new("_delta_log/", Some(&meter));
        pages.before_page(None).unwrap();
        assert_eq!(meter.requests(), 1);
        pages.before_page(Some("t1")).unwrap();
        pages.before_page(Some("t2")).unwrap();
        assert_eq!(meter.requests(), 3);
        let e = pages.before_page(Some("t3")).unwrap_err();
        assert_eq!(kind(e), Some(BudgetKind::Subrequests));
        assert_eq!(meter.requests(), 3);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn a_repeated_token_and_an_endless_listing_are_errors() {
        let mut pages = ListPages::new("p/", None);
        pages.before_page(None).unwrap();
        pages.before_page(Some("same")).unwrap();
        let e = pages.before_page(Some("same")).unwrap_err().to_string();
        assert!(e.contains("repeats the continuation token"), "{e}");

        let mut pages = ListPages::new("p/", None);
        pages.before_page(None).unwrap();
        for i in 1..MAX_LIST_PAGES {
            pages.before_page(Some(&i.to_string())).unwrap();
        }
        assert_eq!(pages.fetched(), MAX_LIST_PAGES);
        let e = pages.before_page(Some("more")).unwrap_err().to_string();
        assert!(e.contains("MAX_LIST_PAGES") && e.contains("p/"), "{e}");
    }
}
