//! Tombstones (PROTOCOL.md "Add File and Remove File"): the `remove` actions a version
//! still carries — the checkpoint's and those of the commits after it — which tell VACUUM
//! which files the table no longer reads. VACUUM deletes a removed file only once its
//! `deletionTimestamp` is older than `delta.deletedFileRetentionDuration` (default
//! `interval 1 week`), so readers of older versions keep working that long.
//!
//! The tombstones are streamed like the active files ([`crate::active_files`]): the
//! commits after the checkpoint are replayed newest first in memory (a removed file
//! re-added since is no tombstone, and a file removed twice counts once), then the
//! checkpoint's `remove` column streams a batch at a time. Memory follows a batch and the
//! tail, never the number of tombstones.

use std::collections::HashSet;

use deltalens_storage::Storage;

use crate::actions::{Action, FileKey, Metadata, Remove, parse_actions};
use crate::checkpoint::stream_checkpoint_removes;
use crate::error::{Error, Result};
use crate::log::prefetch::WithPrefetched;
use crate::log::{LogSegment, read_files};

/// The table property that sets how long removed files are kept for VACUUM.
pub const DELETED_FILE_RETENTION_KEY: &str = "delta.deletedFileRetentionDuration";

/// The retention when the table does not set [`DELETED_FILE_RETENTION_KEY`].
pub const DEFAULT_DELETED_FILE_RETENTION: &str = "interval 1 week";

/// Interval strings longer than this are refused unread (a hostile property).
const MAX_INTERVAL_CHARS: usize = 256;

/// The deleted-file retention of `metadata` in milliseconds, with the text it was read
/// from (the property, or [`DEFAULT_DELETED_FILE_RETENTION`]).
pub fn deleted_file_retention(metadata: &Metadata) -> (String, Result<i64>) {
    let text = metadata
        .property(DELETED_FILE_RETENTION_KEY)
        .unwrap_or(DEFAULT_DELETED_FILE_RETENTION)
        .to_string();
    let ms = parse_interval_ms(&text).map_err(|reason| Error::InvalidProperty {
        key: DELETED_FILE_RETENTION_KEY.to_string(),
        value: text.chars().take(80).collect(),
        reason,
    });
    (text, ms)
}

/// A calendar interval as Delta writes its durations (`interval 1 week`, `interval 7
/// days`, `2 days 12 hours`, `interval 168 HOURS`): an optional `interval`, then one or
/// more `<whole number> <unit>` pairs, units `week`, `day`, `hour`, `minute`, `second`,
/// `millisecond`, `microsecond` (singular or plural, any case). Months and years are
/// refused (their length varies; Delta refuses them for retention too), as are negative,
/// fractional and overflowing amounts. The error says why, for a message.
pub fn parse_interval_ms(text: &str) -> std::result::Result<i64, String> {
    if text.len() > MAX_INTERVAL_CHARS {
        return Err(format!(
            "longer than {MAX_INTERVAL_CHARS} characters: not an interval"
        ));
    }
    let mut words = text.split_whitespace().peekable();
    if words
        .peek()
        .is_some_and(|w| w.eq_ignore_ascii_case("interval"))
    {
        words.next();
    }
    let mut total: i64 = 0;
    let mut pairs = 0;
    while let Some(amount) = words.next() {
        let n: i64 = amount
            .parse()
            .map_err(|_| format!("{amount:?} is not a whole number"))?;
        if n < 0 {
            return Err(format!("negative amount {n}"));
        }
        let unit = words
            .next()
            .ok_or_else(|| format!("{amount} has no unit (week, day, hour, minute, second)"))?;
        let per = unit_ms(unit)?;
        let ms = match per {
            UnitMs::Whole(per) => n.checked_mul(per),
            UnitMs::Micro => Some(n / 1000),
        };
        total = ms
            .and_then(|ms| total.checked_add(ms))
            .ok_or_else(|| "too long: overflows 64-bit milliseconds".to_string())?;
        pairs += 1;
    }
    if pairs == 0 {
        return Err("empty: expected e.g. `interval 1 week`".into());
    }
    Ok(total)
}

enum UnitMs {
    Whole(i64),
    Micro,
}

fn unit_ms(unit: &str) -> std::result::Result<UnitMs, String> {
    let u = unit.to_ascii_lowercase();
    let singular = u.strip_suffix('s').unwrap_or(&u);
    Ok(UnitMs::Whole(match singular {
        "week" => 7 * 24 * 3_600_000,
        "day" => 24 * 3_600_000,
        "hour" => 3_600_000,
        "minute" => 60_000,
        "second" => 1000,
        "millisecond" => 1,
        "microsecond" => return Ok(UnitMs::Micro),
        "month" | "year" => {
            return Err(format!(
                "{unit}: months and years have no fixed length; give weeks, days or hours"
            ));
        }
        _ => {
            return Err(format!(
                "{unit:?} is not a unit (week, day, hour, minute, second)"
            ));
        }
    }))
}

/// Hand every tombstone of `segment` to `on_remove` (the newer commits' first, newest
/// first, then the checkpoint's in checkpoint order), until it returns false. A logical
/// file `(path, deletion vector)` is a tombstone when the newest action naming it is a
/// `remove`.
pub async fn for_each_tombstone<S: Storage + ?Sized>(
    storage: &S,
    segment: &LogSegment,
    on_remove: &mut dyn FnMut(Remove) -> Result<bool>,
) -> Result<()> {
    let storage = &WithPrefetched {
        inner: storage,
        pre: &segment.prefetched,
    };
    let data = read_files(storage, segment.commits.iter().map(|f| f.path())).await?;
    // logical files named by a newer commit: an older action on them is superseded
    let mut seen: HashSet<FileKey> = HashSet::new();
    for (f, d) in segment.commits.iter().zip(data).rev() {
        for a in parse_actions(f.path(), &d)? {
            match a {
                Action::Add(add) => {
                    seen.insert(add.key());
                }
                Action::Remove(rm) => {
                    // the newest action on a logical file decides; older ones are passed
                    let go_on = !seen.insert(rm.key()) || on_remove(rm)?;
                    if !go_on {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
    }
    if let Some(cp) = &segment.checkpoint {
        stream_checkpoint_removes(storage, &cp.parts, &mut |removes| {
            for rm in removes {
                if !seen.contains(&rm.key()) && !on_remove(rm)? {
                    return Ok(false);
                }
            }
            Ok(true)
        })
        .await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use wasm_bindgen_test::wasm_bindgen_test;

    const DAY: i64 = 24 * 3_600_000;

    #[wasm_bindgen_test(unsupported = test)]
    fn intervals_parse_as_delta_writes_them() {
        for (text, ms) in [
            ("interval 1 week", 7 * DAY),
            ("interval 7 days", 7 * DAY),
            ("INTERVAL 168 HOURS", 7 * DAY),
            ("2 days 12 hours", 2 * DAY + 12 * 3_600_000),
            ("interval 0 seconds", 0),
            ("interval 1500 microseconds", 1),
            ("  interval   30   minutes ", 30 * 60_000),
        ] {
            assert_eq!(parse_interval_ms(text), Ok(ms), "{text}");
        }
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn hostile_intervals_are_refused_with_a_reason() {
        for (text, why) in [
            ("", "empty"),
            ("interval", "empty"),
            ("interval 1", "no unit"),
            ("interval -1 days", "negative"),
            ("interval 1.5 days", "whole number"),
            ("interval 1 fortnight", "not a unit"),
            ("interval 2 months", "months"),
            ("interval 9223372036854775807 weeks", "overflows"),
            ("interval 99999999999999999999 days", "whole number"),
        ] {
            let e = parse_interval_ms(text).unwrap_err();
            assert!(e.contains(why), "{text:?}: {e}");
        }
        let long = "1 day ".repeat(50);
        assert!(parse_interval_ms(&long).unwrap_err().contains("longer"));
    }
}
