"""A table for the explorer's grid benchmark (bench/grid.mjs), written by deltalake
(a real writer): ROWS rows in FILES files of mixed types (long, string, timestamp UTC,
date, decimal, double with NaN and nulls, boolean, a long string every 1,000 rows).

    python3 bench/grid_table.py OUT [ROWS] [FILES]
"""

import datetime as dt
import decimal
import os
import sys

import pyarrow as pa
from deltalake import write_deltalake


def batch(start: int, n: int) -> pa.Table:
    ids = list(range(start, start + n))
    base = dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc)
    return pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "name": pa.array([f"user-{i % 9973}" if i % 1000 else "x" * 300 for i in ids]),
            "ts": pa.array([base + dt.timedelta(seconds=37 * i) for i in ids], pa.timestamp("us", tz="UTC")),
            "day": pa.array([(base + dt.timedelta(days=i // 5000)).date() for i in ids], pa.date32()),
            "amount": pa.array([decimal.Decimal(i % 100000) / 100 for i in ids], pa.decimal128(10, 2)),
            "score": pa.array([None if i % 97 == 0 else (float("nan") if i % 89 == 0 else i / 7) for i in ids], pa.float64()),
            "flag": pa.array([i % 3 == 0 for i in ids], pa.bool_()),
        }
    )


def main() -> None:
    out = sys.argv[1]
    rows = int(sys.argv[2]) if len(sys.argv) > 2 else 120_000
    files = int(sys.argv[3]) if len(sys.argv) > 3 else 12
    if os.path.isdir(os.path.join(out, "_delta_log")):
        print(f"{out}: already there")
        return
    per = -(-rows // files)
    for start in range(0, rows, per):
        write_deltalake(out, batch(start, min(per, rows - start)), mode="append")
    print(f"{out}: {rows} rows in {files} files")


if __name__ == "__main__":
    main()
