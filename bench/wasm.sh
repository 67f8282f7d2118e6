#!/usr/bin/env bash
# wasm vs native: the same open + full scan of a multi-file table served by nginx on
# 127.0.0.1 (Range + CORS), natively (`deltalens bench` over HTTP, one thread) and in
# headless Chromium (crates/fetch-storage/tests/bench.rs, release build), interleaved
# ROUNDS times in one run. Prints medians, the wasm/native ratio, and the sizes of the
# release .wasm (raw, gzip, brotli).
#   bench/wasm.sh [TABLE_DIR]   (default /work/bench-data/scan5m, from ../shared/bench)
set -euo pipefail
cd "$(dirname "$0")/.."
table=$(realpath "${1:-/work/bench-data/scan5m}")
rounds=${ROUNDS:-3}
runs=${RUNS:-3}
port=18095
run=$(mktemp -d)
trap 'kill $(cat "$run/nginx.pid" 2>/dev/null) 2>/dev/null || true; rm -rf "$run"' EXIT
[[ -n "${KEEP:-}" ]] && trap - EXIT
cat > "$run/nginx.conf" <<CONF
worker_processes 1;
pid $run/nginx.pid;
error_log $run/error.log;
events { worker_connections 64; }
http {
  access_log off;
  client_body_temp_path $run;
  proxy_temp_path $run;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$port;
    root $(dirname "$table");
    location / {
      add_header Access-Control-Allow-Origin * always;
      add_header Access-Control-Allow-Headers Range always;
      add_header Access-Control-Expose-Headers "Content-Range, Content-Length, ETag" always;
      if (\$request_method = OPTIONS) { return 204; }
    }
  }
}
CONF
nginx -c "$run/nginx.conf" -p "$run"
url="http://127.0.0.1:$port/$(basename "$table")"
cargo build -q --release --locked -p deltalens-cli
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
export CHROMEDRIVER=${CHROMEDRIVER:-/usr/bin/chromedriver}
export WASM_BINDGEN_TEST_TIMEOUT=600
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner
export DELTALENS_BENCH_URL=$url DELTALENS_BENCH_RUNS=$runs
(cd crates/fetch-storage && cargo test -q --release --locked --target wasm32-unknown-unknown --test bench --no-run 2>/dev/null)
native=() wasm=()
for r in $(seq "$rounds"); do
  n=$(target/release/deltalens bench "$url" -o allow_http=true --runs "$runs" --json)
  native+=("$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["median_s"])' "$n")")
  w=$(cd crates/fetch-storage && cargo test --release --locked --target wasm32-unknown-unknown --test bench -- --nocapture 2>&1 | grep -o 'BENCH median [0-9.]*' | awk '{print $3}')
  wasm+=("$w")
  echo "round $r: native ${native[-1]} s, wasm $w s"
done
rows=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["rows"])' "$n")
python3 - "$rows" "${native[*]}" "${wasm[*]}" <<'PY'
import statistics, sys
rows = int(sys.argv[1])
n = [float(x) for x in sys.argv[2].split()]
w = [float(x) for x in sys.argv[3].split()]
mn, mw = statistics.median(n), statistics.median(w)
print(f"native: median {mn:.3f} s ({rows / mn / 1e6:.1f} M rows/s); wasm in Chromium: median {mw:.3f} s ({rows / mw / 1e6:.1f} M rows/s)")
print(f"wasm / native wall time: {mw / mn:.2f}")
PY
