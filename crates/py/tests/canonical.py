"""The conformance corpus' canonical row format (../shared/conformance/README.md), from
Arrow: one compact JSON array per row in schema order, lines sorted bytewise."""
import datetime
import json

import numpy as np
import pyarrow as pa

_EPOCH_UTC = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
_EPOCH = datetime.datetime(1970, 1, 1)
_US = datetime.timedelta(microseconds=1)


def _float(x):
    """Rust's `{:e}`: the shortest digits that read back, `1.5e0`, `-2.5e-7`."""
    if np.isnan(x):
        return "NaN"
    if np.isinf(x):
        return "inf" if x > 0 else "-inf"
    mantissa, exponent = np.format_float_scientific(x, unique=True, trim="-").split("e")
    return f"{mantissa}e{int(exponent)}"


def _micros(v):
    if v.tzinfo is not None:
        return (v - _EPOCH_UTC) // _US
    return (v - _EPOCH) // _US


def value(v, t):
    """The canonical JSON value of the Python value `v` of Arrow type `t`."""
    if v is None:
        return None
    if pa.types.is_boolean(t) or pa.types.is_integer(t):
        return v
    if pa.types.is_float32(t):
        return _float(np.float32(v))
    if pa.types.is_floating(t):
        return _float(np.float64(v))
    if pa.types.is_decimal(t):
        return f"{v:.{t.scale}f}"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return v
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return v.hex()
    if pa.types.is_date(t):
        return v.isoformat()
    if pa.types.is_timestamp(t):
        return _micros(v)
    if pa.types.is_struct(t):
        return [value(v[t.field(i).name], t.field(i).type) for i in range(t.num_fields)]
    if pa.types.is_map(t):
        pairs = [[value(k, t.key_type), value(x, t.item_type)] for k, x in v]
        return sorted(pairs, key=lambda p: json.dumps(p[0], separators=(",", ":"), ensure_ascii=False))
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return [value(x, t.value_type) for x in v]
    raise TypeError(f"no canonical form for {t}")


def lines(table: pa.Table):
    """Canonical lines (each ending in a newline, sorted bytewise) of `table`'s rows."""
    columns = [(table.column(i).to_pylist(), table.schema.field(i).type) for i in range(table.num_columns)]
    out = []
    for r in range(table.num_rows):
        row = [value(vals[r], t) for vals, t in columns]
        out.append(json.dumps(row, separators=(",", ":"), ensure_ascii=False) + "\n")
    return sorted(out, key=lambda s: s.encode("utf-8"))
