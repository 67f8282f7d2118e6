"""A table for the Query tab's pool of workers (web/e2e/explorer.mjs, bench): written by
deltalake (a real writer) in FILES files of ROWS_PER_FILE rows each, large enough
(random doubles do not compress) that a query over it is cut into splits
(web/query: MIN_POOL_BYTES, 16 MiB): a category (8 values), a long id, a double.

    python3 bench/pool_table.py OUT [FILES] [ROWS_PER_FILE]
"""

import os
import sys

import numpy as np
import pyarrow as pa
from deltalake import write_deltalake


def main() -> None:
    out = sys.argv[1]
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    per = int(sys.argv[3]) if len(sys.argv) > 3 else 500_000
    if os.path.isdir(os.path.join(out, "_delta_log")):
        print(f"{out}: already there")
        return
    rng = np.random.default_rng(7)
    for f in range(files):
        ids = np.arange(f * per, (f + 1) * per, dtype=np.int64)
        t = pa.table(
            {
                "category": pa.array([f"c{i % 8}" for i in range(per)]),
                "id": pa.array(ids),
                "price": pa.array(rng.random(per) * 1000.0),
            }
        )
        write_deltalake(out, t, mode="append")
    size = sum(os.path.getsize(os.path.join(d, n)) for d, _, ns in os.walk(out) for n in ns if n.endswith(".parquet"))
    print(f"{out}: {files} files, {files * per} rows, {size} bytes of data files")


if __name__ == "__main__":
    main()
