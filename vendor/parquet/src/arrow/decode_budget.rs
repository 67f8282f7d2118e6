// deltalens patch 19: a ceiling on the bytes of byte-array values one decode step
// materializes (see vendor/README.md).

//! A ceiling on the bytes of string and binary values that one step of decoding (one
//! batch of a [`crate::arrow::arrow_reader::ParquetRecordBatchReader`], all its columns)
//! copies into its arrays, counted as they are produced.
//!
//! A dictionary-encoded column materializes its value once per row and a
//! `DELTA_BYTE_ARRAY` column repeats a prefix of the value before: a few bytes of input
//! can decode into gigabytes. Within [`within`], every value appended to a string or
//! binary array is charged first; the value that would pass the ceiling is refused with
//! an error instead of allocated, and [`within`] says so, so the caller can decode the
//! rows again in smaller batches.

use std::cell::Cell;

use crate::errors::{ParquetError, Result};

thread_local! {
    /// Bytes that may still be appended (`None`: no ceiling).
    static REMAINING: Cell<Option<usize>> = const { Cell::new(None) };
    /// Whether a value was refused.
    static EXCEEDED: Cell<bool> = const { Cell::new(false) };
    /// The largest value appended or refused.
    static LARGEST: Cell<usize> = const { Cell::new(0) };
}

/// Restores the ceiling of an enclosing [`within`] (also when `step` unwinds).
struct Restore(Option<usize>, bool, usize);

impl Drop for Restore {
    fn drop(&mut self) {
        REMAINING.with(|r| r.set(self.0));
        EXCEEDED.with(|e| e.set(self.1));
        LARGEST.with(|l| l.set(self.2));
    }
}

/// Runs `step` with at most `max_bytes` of byte-array values appended on this thread
/// (decoding is synchronous: nothing else runs on it meanwhile). When a value was refused
/// for passing it (then `step`'s error is the refusal), also answers the largest value
/// appended or refused meanwhile, in bytes: the caller can size a smaller step by it.
pub fn within<T>(max_bytes: usize, step: impl FnOnce() -> T) -> (T, Option<usize>) {
    let _restore = Restore(
        REMAINING.with(|r| r.replace(Some(max_bytes))),
        EXCEEDED.with(|e| e.replace(false)),
        LARGEST.with(|l| l.replace(0)),
    );
    let out = step();
    let passed = EXCEEDED.with(|e| e.get());
    (out, passed.then(|| LARGEST.with(|l| l.get())))
}

/// Runs `step` with nothing it appends charged to the enclosing [`within`] (a dictionary
/// page: decoded once per column chunk and bounded by the page limit, it is no batch's own
/// work).
pub(crate) fn uncharged<T>(step: impl FnOnce() -> T) -> T {
    within(usize::MAX, step).0
}

/// Notes a value of `bytes` appended or refused (see [`within`]).
pub(crate) fn note_largest(bytes: usize) {
    LARGEST.with(|l| {
        if bytes > l.get() {
            l.set(bytes)
        }
    });
}

/// Bytes that may still be appended (`usize::MAX` outside [`within`]).
pub(crate) fn room() -> usize {
    REMAINING.with(|r| r.get()).unwrap_or(usize::MAX)
}

/// Charges `bytes` appended (one value, or what a call appended: see [`note_largest`]):
/// an error, and nothing charged, when they pass the ceiling.
pub(crate) fn charge(bytes: usize) -> Result<()> {
    REMAINING.with(|r| match r.get() {
        None => Ok(()),
        Some(left) if bytes <= left => {
            r.set(Some(left - bytes));
            Ok(())
        }
        Some(_) => Err(refused()),
    })
}

/// Charges a vector of `count` entries of `each` bytes that a page's own data sizes (the
/// lengths of a DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY page: a count of zero-width
/// deltas costs a few bytes for any count) before it is allocated (deltalens patch 21).
pub(crate) fn charge_entries(count: usize, each: usize) -> Result<()> {
    charge(count.saturating_mul(each))
}

/// The error for a value that would pass the ceiling (and marks it passed).
pub(crate) fn refused() -> ParquetError {
    EXCEEDED.with(|e| e.set(true));
    ParquetError::General(
        "the string and binary values of one batch passed the decoder's byte ceiling".to_string(),
    )
}

// deltalens patch 23: skipping rows walks levels and values that no batch holds: a page
// of a few bytes may claim 2^31 run-length encoded levels, a second or two of work to
// skip. The levels and values one step skips within a page are charged before they are
// walked.

/// The text an error over [`skipping_within`]'s ceiling starts with, followed by
/// `<levels and values> > <ceiling>`.
pub const SKIP_OVER_BUDGET: &str =
    "skipping rows would walk more levels and values within pages than the limit: ";

thread_local! {
    /// Levels and values that may still be skipped, and the ceiling (`None`: none).
    static SKIP_LEFT: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// Restores the skip ceiling of an enclosing [`skipping_within`].
struct RestoreSkip(Option<(usize, usize)>);

impl Drop for RestoreSkip {
    fn drop(&mut self) {
        SKIP_LEFT.with(|s| s.set(self.0));
    }
}

/// Runs `step` with at most `left` levels and values skipped within pages on this thread
/// (whole pages skipped by their header are not counted: they cost nothing), of a ceiling
/// of `max` (an error names it; `left` is what earlier steps of the same budget, e.g. the
/// row groups of one file before, left of it: deltalens patch 26). Answers `step`'s
/// result and what is left after it.
pub fn skipping_within<T>(left: usize, max: usize, step: impl FnOnce() -> T) -> (T, usize) {
    let _restore = RestoreSkip(SKIP_LEFT.with(|s| s.replace(Some((left.min(max), max)))));
    let out = step();
    let after = SKIP_LEFT.with(|s| s.get()).map_or(left, |(left, _)| left);
    (out, after)
}

/// Of `levels` levels, how many may still be skipped; an error when none may.
pub(crate) fn skip_room(levels: usize) -> Result<usize> {
    match SKIP_LEFT.with(|s| s.get()) {
        None => Ok(levels),
        Some((0, max)) if levels > 0 => Err(skip_refused(levels, 0, max)),
        Some((left, _)) => Ok(levels.min(left)),
    }
}

/// Charges `levels` levels or values skipped: an error, and nothing charged, when they
/// pass the ceiling.
pub(crate) fn charge_skip(levels: usize) -> Result<()> {
    SKIP_LEFT.with(|s| match s.get() {
        None => Ok(()),
        Some((left, max)) if levels <= left => {
            s.set(Some((left - levels, max)));
            Ok(())
        }
        Some((left, max)) => Err(skip_refused(levels, left, max)),
    })
}

fn skip_refused(levels: usize, left: usize, max: usize) -> ParquetError {
    let would = max.saturating_sub(left).saturating_add(levels);
    ParquetError::General(format!("{SKIP_OVER_BUDGET}{would} > {max}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_until_the_ceiling_and_restores_the_outer_one() {
        assert!(charge(usize::MAX).is_ok());
        let ((), passed) = within(10, || {
            note_largest(6);
            assert!(charge(6).is_ok());
            note_largest(5);
            assert!(charge(5).is_err());
            assert!(charge(4).is_ok());
            let ((), inner) = within(1, || {
                note_largest(2);
                assert!(charge(2).is_err())
            });
            assert_eq!(inner, Some(2));
            assert_eq!(room(), 0);
        });
        assert_eq!(passed, Some(6));
        assert_eq!(room(), usize::MAX);
        let ((), passed) = within(10, || assert!(charge(10).is_ok()));
        assert_eq!(passed, None);
        // what a dictionary page appends is not the batch's
        let ((), passed) = within(10, || {
            uncharged(|| {
                note_largest(100);
                assert!(charge(100).is_ok())
            });
            assert_eq!(room(), 10);
        });
        assert_eq!(passed, None);
    }
}
