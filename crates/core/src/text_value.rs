//! A Delta value written as text — a partition value (PROTOCOL.md "Partition Value
//! Serialization"), a filter's literal, a time-travel timestamp — read as a one-row Arrow
//! array of a given type. Exact: a decimal with more places than its scale, an integer out
//! of its type's range, a date that does not exist are refused, never rounded or wrapped.
//! (Arrow's general cast kernel did this before; it is most of a megabyte of wasm.)

use std::sync::Arc;

use arrow_array::types::{
    Decimal128Type, TimestampMicrosecondType, TimestampMillisecondType, TimestampNanosecondType,
    TimestampSecondType,
};
use arrow_array::{
    ArrayRef, BinaryArray, BooleanArray, Date32Array, Float32Array, Float64Array, Int8Array,
    Int16Array, Int32Array, Int64Array, LargeBinaryArray, LargeStringArray, PrimitiveArray,
    StringArray, StringViewArray,
};
use arrow_schema::{DataType as ArrowType, TimeUnit};
use chrono::{DateTime, NaiveDate, NaiveDateTime};

/// Most digits a decimal's text may have (Delta decimals have at most 38).
const MAX_DECIMAL_DIGITS: usize = 38;
/// Largest exponent accepted in a decimal's text (`1E+5`): Java's BigDecimal writes these.
const MAX_DECIMAL_EXPONENT: i32 = 76;

/// `text` as a one-row array of type `ty`, or why it is not a `ty`.
pub fn one_row(text: &str, ty: &ArrowType) -> Result<ArrayRef, String> {
    let t = text.trim();
    let not_a = |what: &str| format!("{text:?} is not {what}");
    Ok(match ty {
        ArrowType::Null => arrow_array::new_null_array(ty, 1),
        ArrowType::Utf8 => Arc::new(StringArray::from(vec![text])),
        ArrowType::LargeUtf8 => Arc::new(LargeStringArray::from(vec![text])),
        ArrowType::Utf8View => Arc::new(StringViewArray::from(vec![text])),
        ArrowType::Binary => Arc::new(BinaryArray::from(vec![text.as_bytes()])),
        ArrowType::LargeBinary => Arc::new(LargeBinaryArray::from(vec![text.as_bytes()])),
        ArrowType::Boolean => Arc::new(BooleanArray::from(vec![
            boolean(t).ok_or_else(|| not_a("true or false"))?,
        ])),
        ArrowType::Int8 => Arc::new(Int8Array::from(vec![
            int::<i8>(t).ok_or_else(|| not_a("a byte"))?,
        ])),
        ArrowType::Int16 => Arc::new(Int16Array::from(vec![
            int::<i16>(t).ok_or_else(|| not_a("a short integer"))?,
        ])),
        ArrowType::Int32 => Arc::new(Int32Array::from(vec![
            int::<i32>(t).ok_or_else(|| not_a("an integer"))?,
        ])),
        ArrowType::Int64 => Arc::new(Int64Array::from(vec![
            int::<i64>(t).ok_or_else(|| not_a("a long integer"))?,
        ])),
        ArrowType::Float32 => Arc::new(Float32Array::from(vec![
            t.parse::<f32>().map_err(|_| not_a("a number"))?,
        ])),
        ArrowType::Float64 => Arc::new(Float64Array::from(vec![
            t.parse::<f64>().map_err(|_| not_a("a number"))?,
        ])),
        ArrowType::Decimal128(p, s) => {
            let v = decimal(t, *p, *s).map_err(|why| format!("{text:?} {why}"))?;
            Arc::new(
                PrimitiveArray::<Decimal128Type>::from(vec![v])
                    .with_precision_and_scale(*p, *s)
                    .map_err(|e| e.to_string())?,
            )
        }
        ArrowType::Date32 => Arc::new(Date32Array::from(vec![
            date_days(t).ok_or_else(|| not_a("a date (YYYY-MM-DD)"))?,
        ])),
        ArrowType::Timestamp(unit, tz) => {
            let us = timestamp_us(t).ok_or_else(|| not_a("an ISO-8601 timestamp or date"))?;
            let v = from_micros(us, *unit).ok_or_else(|| not_a("a timestamp in range"))?;
            timestamp_array(v, *unit, tz.clone())
        }
        other => return Err(format!("a {other} cannot be written as text")),
    })
}

fn boolean(t: &str) -> Option<bool> {
    if t.eq_ignore_ascii_case("true") {
        Some(true)
    } else if t.eq_ignore_ascii_case("false") {
        Some(false)
    } else {
        None
    }
}

fn int<T: TryFrom<i64>>(t: &str) -> Option<T> {
    t.parse::<i64>().ok().and_then(|v| T::try_from(v).ok())
}

/// Days since 1970-01-01 of `YYYY-MM-DD`.
pub fn date_days(t: &str) -> Option<i32> {
    let d = NaiveDate::parse_from_str(t, "%Y-%m-%d").ok()?;
    let epoch = NaiveDate::from_ymd_opt(1970, 1, 1)?;
    i32::try_from(d.signed_duration_since(epoch).num_days()).ok()
}

/// Microseconds since the epoch of an ISO-8601 timestamp (`2021-09-08 11:11:11.123456`,
/// `…T…`, with a zone or offset, or without = UTC; ` UTC` suffix allowed; minutes without
/// seconds) or a date (its midnight, UTC).
pub fn timestamp_us(t: &str) -> Option<i64> {
    if let Ok(dt) = DateTime::parse_from_rfc3339(t) {
        return Some(dt.timestamp_micros());
    }
    for f in ["%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%.f%z"] {
        if let Ok(dt) = DateTime::parse_from_str(t, f) {
            return Some(dt.timestamp_micros());
        }
    }
    let naive = t.strip_suffix(" UTC").unwrap_or(t);
    for f in [
        "%Y-%m-%dT%H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%dT%H:%M",
        "%Y-%m-%d %H:%M",
    ] {
        if let Ok(dt) = NaiveDateTime::parse_from_str(naive, f) {
            return Some(dt.and_utc().timestamp_micros());
        }
    }
    let d = NaiveDate::parse_from_str(naive, "%Y-%m-%d").ok()?;
    Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp_micros())
}

/// Microseconds in `unit` (truncated toward zero, as a reader of a coarser column would).
fn from_micros(us: i64, unit: TimeUnit) -> Option<i64> {
    match unit {
        TimeUnit::Second => Some(us / 1_000_000),
        TimeUnit::Millisecond => Some(us / 1_000),
        TimeUnit::Microsecond => Some(us),
        TimeUnit::Nanosecond => us.checked_mul(1_000),
    }
}

/// A one-row timestamp array of `unit` and zone `tz`.
pub fn timestamp_array(v: i64, unit: TimeUnit, tz: Option<Arc<str>>) -> ArrayRef {
    match unit {
        TimeUnit::Second => {
            Arc::new(PrimitiveArray::<TimestampSecondType>::from(vec![v]).with_timezone_opt(tz))
        }
        TimeUnit::Millisecond => Arc::new(
            PrimitiveArray::<TimestampMillisecondType>::from(vec![v]).with_timezone_opt(tz),
        ),
        TimeUnit::Microsecond => Arc::new(
            PrimitiveArray::<TimestampMicrosecondType>::from(vec![v]).with_timezone_opt(tz),
        ),
        TimeUnit::Nanosecond => {
            Arc::new(PrimitiveArray::<TimestampNanosecondType>::from(vec![v]).with_timezone_opt(tz))
        }
    }
}

/// The unscaled value of a decimal's text at `scale`, exactly: `[+-]digits[.digits][e±n]`.
pub fn decimal(t: &str, precision: u8, scale: i8) -> Result<i128, String> {
    let (mantissa, exponent) = match t.find(['e', 'E']) {
        Some(i) => {
            let e: i32 = t[i + 1..]
                .parse()
                .map_err(|_| "has an unreadable exponent".to_string())?;
            if e.abs() > MAX_DECIMAL_EXPONENT {
                return Err(format!("has an exponent beyond ±{MAX_DECIMAL_EXPONENT}"));
            }
            (&t[..i], e)
        }
        None => (t, 0),
    };
    let (negative, digits) = match mantissa.as_bytes().first() {
        Some(b'-') => (true, &mantissa[1..]),
        Some(b'+') => (false, &mantissa[1..]),
        _ => (false, mantissa),
    };
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all = || whole.bytes().chain(frac.bytes());
    if whole.is_empty() && frac.is_empty() || !all().all(|b| b.is_ascii_digit()) {
        return Err("is not a decimal number".into());
    }
    // significant digits only: leading zeros do not count against the limit
    let significant = all().skip_while(|b| *b == b'0').count();
    if significant > MAX_DECIMAL_DIGITS {
        return Err(format!("has more than {MAX_DECIMAL_DIGITS} digits"));
    }
    let mut unscaled: i128 = 0;
    for b in all().skip_while(|b| *b == b'0') {
        unscaled = unscaled * 10 + i128::from(b - b'0');
    }
    // value = unscaled × 10^(exponent − frac.len()); wanted: value × 10^scale
    let shift = i64::from(exponent) - frac.len() as i64 + i64::from(scale);
    let value = if shift >= 0 {
        u32::try_from(shift)
            .ok()
            .and_then(|s| 10i128.checked_pow(s))
            .and_then(|f| unscaled.checked_mul(f))
            .ok_or_else(|| format!("does not fit decimal({precision},{scale})"))?
    } else {
        let f = u32::try_from(-shift)
            .ok()
            .and_then(|s| 10i128.checked_pow(s));
        match f {
            Some(f) if unscaled % f == 0 => unscaled / f,
            None if unscaled == 0 => 0,
            _ => return Err(format!("has more than {scale} decimal places")),
        }
    };
    let limit = 10i128
        .checked_pow(u32::from(precision))
        .ok_or_else(|| format!("cannot be a decimal({precision},{scale})"))?;
    if value >= limit {
        return Err(format!("does not fit decimal({precision},{scale})"));
    }
    Ok(if negative { -value } else { value })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;
    use arrow_array::cast::AsArray;
    use wasm_bindgen_test::wasm_bindgen_test;

    fn dec(t: &str, p: u8, s: i8) -> Result<i128, String> {
        decimal(t, p, s)
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn decimals_are_exact() {
        assert_eq!(dec("12.340", 10, 3), Ok(12340));
        assert_eq!(dec("12.34", 10, 3), Ok(12340));
        assert_eq!(dec("-0.5", 3, 1), Ok(-5));
        assert_eq!(dec("+7", 3, 0), Ok(7));
        assert_eq!(dec(".25", 3, 2), Ok(25));
        assert_eq!(dec("1E+2", 5, 0), Ok(100));
        assert_eq!(dec("1.5e-1", 5, 2), Ok(15));
        assert_eq!(dec("1.500", 5, 1), Ok(15));
        assert_eq!(dec("0.000", 5, 0), Ok(0));
        assert_eq!(
            dec("0e-99", 5, 0).map_err(|e| e.contains("exponent")),
            Err(true)
        );
        assert!(dec("1.005", 5, 2).unwrap_err().contains("2 decimal places"));
        assert!(dec("1000", 3, 0).unwrap_err().contains("does not fit"));
        assert!(dec("99999999999999999999999999999999999999", 38, 0).is_ok());
        assert!(dec("999999999999999999999999999999999999999", 38, 0).is_err());
        assert!(dec("1e76", 38, 0).is_err());
        assert!(dec("", 5, 0).is_err());
        assert!(dec(".", 5, 0).is_err());
        assert!(dec("1.2.3", 5, 0).is_err());
        assert!(dec("--1", 5, 0).is_err());
        assert!(dec("1e", 5, 0).is_err());
        assert!(dec("NaN", 5, 0).is_err());
        let zeros = format!("{}1", "0".repeat(5000));
        assert_eq!(dec(&zeros, 5, 0), Ok(1));
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn integers_keep_to_their_range() {
        let i8t = one_row("127", &ArrowType::Int8).unwrap();
        assert_eq!(
            i8t.as_primitive::<arrow_array::types::Int8Type>().value(0),
            127
        );
        assert!(
            one_row("128", &ArrowType::Int8)
                .unwrap_err()
                .contains("a byte")
        );
        assert!(one_row("70000", &ArrowType::Int16).is_err());
        assert!(one_row("5.0", &ArrowType::Int32).is_err());
        let l = one_row(" -9223372036854775808 ", &ArrowType::Int64).unwrap();
        assert_eq!(
            l.as_primitive::<arrow_array::types::Int64Type>().value(0),
            i64::MIN
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn times_and_dates() {
        assert_eq!(date_days("1970-01-02"), Some(1));
        assert_eq!(date_days("1969-12-31"), Some(-1));
        assert_eq!(date_days("2021-02-30"), None);
        let want = 1_631_099_471_123_456;
        for t in [
            "2021-09-08 11:11:11.123456",
            "2021-09-08T11:11:11.123456",
            "2021-09-08T11:11:11.123456Z",
            "2021-09-08T13:11:11.123456+02:00",
            "2021-09-08 11:11:11.123456 UTC",
        ] {
            assert_eq!(timestamp_us(t), Some(want), "{t}");
        }
        assert_eq!(timestamp_us("1970-01-01"), Some(0));
        assert_eq!(timestamp_us("1970-01-01 00:01"), Some(60_000_000));
        assert_eq!(timestamp_us("yesterday"), None);
        let ty = ArrowType::Timestamp(TimeUnit::Nanosecond, Some("UTC".into()));
        let a = one_row("1970-01-01T00:00:01Z", &ty).unwrap();
        assert_eq!(a.data_type(), &ty);
        assert_eq!(
            a.as_primitive::<TimestampNanosecondType>().value(0),
            1_000_000_000
        );
        let far = ArrowType::Timestamp(TimeUnit::Nanosecond, None);
        assert!(
            one_row("9999-01-01", &far)
                .unwrap_err()
                .contains("in range")
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn every_type_has_its_own_type() {
        for (text, ty) in [
            ("x", ArrowType::Utf8),
            ("x", ArrowType::LargeUtf8),
            ("x", ArrowType::Binary),
            ("TRUE", ArrowType::Boolean),
            ("1.5", ArrowType::Float32),
            ("-inf", ArrowType::Float64),
            ("1.5", ArrowType::Decimal128(4, 2)),
            ("2020-02-29", ArrowType::Date32),
            (
                "2020-02-29",
                ArrowType::Timestamp(TimeUnit::Microsecond, None),
            ),
        ] {
            let a = one_row(text, &ty).unwrap();
            assert_eq!((a.data_type(), a.len()), (&ty, 1), "{text}");
        }
        assert!(one_row("maybe", &ArrowType::Boolean).is_err());
        assert!(one_row("x", &ArrowType::Float64).is_err());
        assert!(one_row("x", &ArrowType::Time64(TimeUnit::Microsecond)).is_err());
    }
}
