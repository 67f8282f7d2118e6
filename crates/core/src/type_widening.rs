//! A data file's column read as the table's type: the changes of PROTOCOL.md "Type
//! Widening" (byte → short → int → long, float/integers → double, date → timestamp_ntz,
//! integers and decimals → wider decimals) and the other ways Parquet writers store a Delta
//! type (a timestamp in seconds, milliseconds or nanoseconds — INT96 —, narrower or
//! unsigned integers, large or view strings and binaries, text stored as binary). Exact:
//! a value that does not fit is an error, never a wrapped or silently null value. Anything
//! else is refused with both types named. (Arrow's general cast kernel did this before; it
//! is most of a megabyte of wasm.)

use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::{
    Date32Type, Decimal32Type, Decimal64Type, Decimal128Type, Float32Type, Int8Type, Int16Type,
    Int32Type, Int64Type, TimestampMicrosecondType, TimestampMillisecondType,
    TimestampNanosecondType, TimestampSecondType, UInt8Type, UInt16Type, UInt32Type, UInt64Type,
};
use arrow_array::{
    Array, ArrayRef, ArrowPrimitiveType, BinaryArray, Int64Array, PrimitiveArray, StringArray,
};
use arrow_schema::{DataType as ArrowType, TimeUnit};

const MICROS_PER_DAY: i64 = 86_400_000_000;

/// `array` as `target`, or why it cannot be.
pub fn widen(array: &ArrayRef, target: &ArrowType) -> Result<ArrayRef, String> {
    let from = array.data_type();
    if from == target {
        return Ok(array.clone());
    }
    if from == &ArrowType::Null {
        return Ok(arrow_array::new_null_array(target, array.len()));
    }
    let refused = || format!("a {from} column cannot be read as {target}");
    let out: ArrayRef = match target {
        ArrowType::Int8 => Arc::new(narrow::<Int8Type>(&longs(array).ok_or_else(refused)?)?),
        ArrowType::Int16 => Arc::new(narrow::<Int16Type>(&longs(array).ok_or_else(refused)?)?),
        ArrowType::Int32 => Arc::new(narrow::<Int32Type>(&longs(array).ok_or_else(refused)?)?),
        ArrowType::Int64 => Arc::new(longs(array).ok_or_else(refused)?),
        ArrowType::Float64 => Arc::new(match from {
            ArrowType::Float32 => array
                .as_primitive::<Float32Type>()
                .unary::<_, arrow_array::types::Float64Type>(f64::from),
            _ => longs(array)
                .ok_or_else(refused)?
                .unary::<_, arrow_array::types::Float64Type>(|v| v as f64),
        }),
        ArrowType::Decimal128(p, s) => Arc::new(decimal(array, *p, *s).ok_or_else(refused)??),
        ArrowType::Timestamp(unit, tz) => {
            let us = micros(array).ok_or_else(refused)??;
            in_unit(&us, *unit, tz.clone())?
        }
        ArrowType::Utf8 => Arc::new(text(array).ok_or_else(refused)??),
        ArrowType::Binary => Arc::new(bytes(array).ok_or_else(refused)?),
        _ => return Err(refused()),
    };
    Ok(out)
}

/// Any integer column as 64-bit integers (unsigned beyond `i64::MAX` are null-free errors
/// caught by `narrow`'s caller: they do not fit any Delta type).
fn longs(array: &ArrayRef) -> Option<Int64Array> {
    fn up<T: ArrowPrimitiveType>(a: &ArrayRef) -> Int64Array
    where
        T::Native: Into<i64>,
    {
        a.as_primitive::<T>().unary(Into::into)
    }
    Some(match array.data_type() {
        ArrowType::Int8 => up::<Int8Type>(array),
        ArrowType::Int16 => up::<Int16Type>(array),
        ArrowType::Int32 => up::<Int32Type>(array),
        ArrowType::Int64 => array.as_primitive::<Int64Type>().clone(),
        ArrowType::UInt8 => up::<UInt8Type>(array),
        ArrowType::UInt16 => up::<UInt16Type>(array),
        ArrowType::UInt32 => up::<UInt32Type>(array),
        // an unsigned long beyond i64::MAX becomes null here: flagged by `checked_longs`
        ArrowType::UInt64 => array
            .as_primitive::<UInt64Type>()
            .unary_opt(|v| i64::try_from(v).ok()),
        _ => return None,
    })
    .filter(|a| a.null_count() == array.null_count())
}

/// 64-bit integers as the narrower `T`, every value checked.
fn narrow<T: ArrowPrimitiveType>(a: &Int64Array) -> Result<PrimitiveArray<T>, String>
where
    T::Native: TryFrom<i64>,
{
    a.try_unary(|v| T::Native::try_from(v).map_err(|_| ()))
        .map_err(|()| format!("a value does not fit {}", T::DATA_TYPE))
}

/// Integers or decimals as decimal(`p`, `s`): `None` for other columns.
fn decimal(
    array: &ArrayRef,
    p: u8,
    s: i8,
) -> Option<Result<PrimitiveArray<Decimal128Type>, String>> {
    let (unscaled, from_scale): (PrimitiveArray<Decimal128Type>, i8) = match array.data_type() {
        ArrowType::Decimal128(_, fs) => (array.as_primitive::<Decimal128Type>().clone(), *fs),
        ArrowType::Decimal64(_, fs) => {
            (array.as_primitive::<Decimal64Type>().unary(i128::from), *fs)
        }
        ArrowType::Decimal32(_, fs) => {
            (array.as_primitive::<Decimal32Type>().unary(i128::from), *fs)
        }
        _ => (longs(array)?.unary(i128::from), 0),
    };
    let up = i32::from(s) - i32::from(from_scale);
    let factor = u32::try_from(up).ok().and_then(|u| 10i128.checked_pow(u));
    let limit = 10i128.checked_pow(u32::from(p));
    let (Some(factor), Some(limit)) = (factor, limit) else {
        return Some(Err(format!(
            "decimals of scale {from_scale} cannot be read as decimal({p},{s})"
        )));
    };
    let out = unscaled.try_unary(|v| {
        v.checked_mul(factor)
            .filter(|w| w.unsigned_abs() < limit.unsigned_abs())
            .ok_or(())
    });
    Some(
        out.map_err(|()| format!("a value does not fit decimal({p},{s})"))
            .and_then(|a| a.with_precision_and_scale(p, s).map_err(|e| e.to_string())),
    )
}

/// A timestamp or date column as microseconds since the epoch: `None` for other columns.
fn micros(array: &ArrayRef) -> Option<Result<PrimitiveArray<TimestampMicrosecondType>, String>> {
    let overflow = |()| "a timestamp is out of range".to_string();
    Some(match array.data_type() {
        ArrowType::Timestamp(TimeUnit::Second, _) => array
            .as_primitive::<TimestampSecondType>()
            .try_unary(|v| v.checked_mul(1_000_000).ok_or(()))
            .map_err(overflow),
        ArrowType::Timestamp(TimeUnit::Millisecond, _) => array
            .as_primitive::<TimestampMillisecondType>()
            .try_unary(|v| v.checked_mul(1_000).ok_or(()))
            .map_err(overflow),
        ArrowType::Timestamp(TimeUnit::Microsecond, _) => Ok(array
            .as_primitive::<TimestampMicrosecondType>()
            .reinterpret_cast()),
        ArrowType::Timestamp(TimeUnit::Nanosecond, _) => Ok(array
            .as_primitive::<TimestampNanosecondType>()
            .unary(|v| v / 1_000)),
        ArrowType::Date32 => array
            .as_primitive::<Date32Type>()
            .try_unary(|d| i64::from(d).checked_mul(MICROS_PER_DAY).ok_or(()))
            .map_err(overflow),
        _ => return None,
    })
}

/// Microseconds as a timestamp column of `unit` in zone `tz` (values are instants: a zone
/// changes how they are shown, not what they are).
fn in_unit(
    us: &PrimitiveArray<TimestampMicrosecondType>,
    unit: TimeUnit,
    tz: Option<Arc<str>>,
) -> Result<ArrayRef, String> {
    Ok(match unit {
        TimeUnit::Microsecond => Arc::new(us.clone().with_timezone_opt(tz)),
        TimeUnit::Nanosecond => Arc::new(
            us.try_unary::<_, TimestampNanosecondType, ()>(|v| v.checked_mul(1_000).ok_or(()))
                .map_err(|()| "a timestamp is out of the nanosecond range".to_string())?
                .with_timezone_opt(tz),
        ),
        TimeUnit::Millisecond => Arc::new(
            us.unary::<_, TimestampMillisecondType>(|v| v / 1_000)
                .with_timezone_opt(tz),
        ),
        TimeUnit::Second => Arc::new(
            us.unary::<_, TimestampSecondType>(|v| v / 1_000_000)
                .with_timezone_opt(tz),
        ),
    })
}

/// Large, view or binary text as a string column (binary must be UTF-8): `None` for other
/// columns.
fn text(array: &ArrayRef) -> Option<Result<StringArray, String>> {
    let not_utf8 = |_| "a binary value is not UTF-8 text".to_string();
    Some(match array.data_type() {
        ArrowType::LargeUtf8 => Ok(array.as_string::<i64>().iter().collect()),
        ArrowType::Utf8View => Ok(array.as_string_view().iter().collect()),
        ArrowType::Binary | ArrowType::LargeBinary | ArrowType::BinaryView => bytes(array)?
            .iter()
            .map(|v| v.map(std::str::from_utf8).transpose())
            .collect::<Result<StringArray, _>>()
            .map_err(not_utf8),
        _ => return None,
    })
}

/// Any binary or text column as a binary column: `None` for other columns.
fn bytes(array: &ArrayRef) -> Option<BinaryArray> {
    Some(match array.data_type() {
        ArrowType::Binary => array.as_binary::<i32>().clone(),
        ArrowType::LargeBinary => array.as_binary::<i64>().iter().collect(),
        ArrowType::BinaryView => array.as_binary_view().iter().collect(),
        ArrowType::FixedSizeBinary(_) => array.as_fixed_size_binary().iter().collect(),
        ArrowType::Utf8 => array
            .as_string::<i32>()
            .iter()
            .map(|s| s.map(str::as_bytes))
            .collect(),
        ArrowType::LargeUtf8 => array
            .as_string::<i64>()
            .iter()
            .map(|s| s.map(str::as_bytes))
            .collect(),
        ArrowType::Utf8View => array
            .as_string_view()
            .iter()
            .map(|s| s.map(str::as_bytes))
            .collect(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::{
        Date32Array, Decimal128Array, Float32Array, Int8Array, Int32Array, LargeStringArray,
        TimestampNanosecondArray, UInt64Array,
    };
    use wasm_bindgen_test::wasm_bindgen_test;

    fn arr(a: impl Array + 'static) -> ArrayRef {
        Arc::new(a)
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn the_protocols_widenings() {
        let ints = arr(Int8Array::from(vec![Some(-3), None, Some(7)]));
        let l = widen(&ints, &ArrowType::Int64).unwrap();
        assert_eq!(
            l.as_primitive::<Int64Type>().iter().collect::<Vec<_>>(),
            [Some(-3), None, Some(7)]
        );
        let d = widen(&ints, &ArrowType::Float64).unwrap();
        assert_eq!(
            d.as_primitive::<arrow_array::types::Float64Type>().value(2),
            7.0
        );
        let f = widen(&arr(Float32Array::from(vec![1.5])), &ArrowType::Float64).unwrap();
        assert_eq!(
            f.as_primitive::<arrow_array::types::Float64Type>().value(0),
            1.5
        );
        let dec = widen(&ints, &ArrowType::Decimal128(12, 2)).unwrap();
        assert_eq!(dec.as_primitive::<Decimal128Type>().value(0), -300);
        assert_eq!(dec.data_type(), &ArrowType::Decimal128(12, 2));
        let narrow_dec = arr(Decimal128Array::from(vec![12345])
            .with_precision_and_scale(5, 2)
            .unwrap());
        let wide = widen(&narrow_dec, &ArrowType::Decimal128(8, 4)).unwrap();
        assert_eq!(wide.as_primitive::<Decimal128Type>().value(0), 1_234_500);
        assert!(
            widen(&narrow_dec, &ArrowType::Decimal128(6, 4))
                .unwrap_err()
                .contains("does not fit")
        );
        assert!(widen(&narrow_dec, &ArrowType::Decimal128(5, 1)).is_err());
        let day = arr(Date32Array::from(vec![1]));
        let ntz = widen(&day, &ArrowType::Timestamp(TimeUnit::Microsecond, None)).unwrap();
        assert_eq!(
            ntz.as_primitive::<TimestampMicrosecondType>().value(0),
            MICROS_PER_DAY
        );
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn parquet_representations() {
        let ns = arr(TimestampNanosecondArray::from(vec![1_500, -1_500]));
        let utc = ArrowType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let us = widen(&ns, &utc).unwrap();
        assert_eq!(us.data_type(), &utc);
        assert_eq!(
            us.as_primitive::<TimestampMicrosecondType>().values(),
            &[1, -1]
        );
        let big = arr(Int32Array::from(vec![1, 300]));
        assert!(
            widen(&big, &ArrowType::Int8)
                .unwrap_err()
                .contains("does not fit")
        );
        let small = arr(Int32Array::from(vec![1, -100]));
        assert_eq!(
            widen(&small, &ArrowType::Int8).unwrap().data_type(),
            &ArrowType::Int8
        );
        let huge = arr(UInt64Array::from(vec![u64::MAX]));
        assert!(widen(&huge, &ArrowType::Int64).is_err());
        let large = arr(LargeStringArray::from(vec![Some("a"), None]));
        let s = widen(&large, &ArrowType::Utf8).unwrap();
        assert_eq!(
            s.as_string::<i32>().iter().collect::<Vec<_>>(),
            [Some("a"), None]
        );
        let raw = arr(BinaryArray::from(vec![&b"ok"[..], &[0xff][..]]));
        assert!(widen(&raw, &ArrowType::Utf8).unwrap_err().contains("UTF-8"));
        let text = arr(StringArray::from(vec!["ab"]));
        assert_eq!(
            widen(&text, &ArrowType::Binary)
                .unwrap()
                .as_binary::<i32>()
                .value(0),
            b"ab"
        );
        let nulls = arrow_array::new_null_array(&ArrowType::Null, 2);
        assert_eq!(widen(&nulls, &ArrowType::Int32).unwrap().null_count(), 2);
    }

    #[wasm_bindgen_test(unsupported = test)]
    fn anything_else_is_refused_by_name() {
        let f = arr(Float32Array::from(vec![1.5]));
        let e = widen(&f, &ArrowType::Int32).unwrap_err();
        assert!(e.contains("Float32") && e.contains("Int32"), "{e}");
        let s = arr(StringArray::from(vec!["1"]));
        assert!(widen(&s, &ArrowType::Int64).is_err());
    }
}
