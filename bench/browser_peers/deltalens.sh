#!/usr/bin/env bash
# The harness (run.sh) with deltalens as its third reader, in the same run as hyparquet (and
# DuckDB-wasm when its Parquet extension is at hand, see vendor/duckdb-ext/README.md): the
# npm package (scripts/build-js; built here when missing) and deltalens/deltalens_bench.js
# served as /ext/. DATA must hold scan5m (../shared/bench/make_tables.py DATA --only scan5m).
#   DATA=/path bench/browser_peers/deltalens.sh [run.sh options, e.g. --runs 3 --warmup 1]
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
target=${CARGO_TARGET_DIR:-$ROOT/target}
pkg=$target/js/package/pkg
[[ -f $pkg/deltalens_js_bg.wasm ]] || (cd "$ROOT" && scripts/build-js)
ext=$(mktemp -d)
trap 'rm -rf "$ext"' EXIT
cp -r "$pkg" "$ext/pkg"
cp "$HERE/deltalens/deltalens_bench.js" "$ext/"
PYTHON=${PYTHON:-$(command -v python3)} EXT_DIR=$ext "$HERE/run.sh" --hook /ext/deltalens_bench.js#scanIpc "$@"
