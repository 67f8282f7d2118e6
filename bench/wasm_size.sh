#!/usr/bin/env bash
# Size of the explorer's wasm per crate (issue #14). Builds deltalens-web as
# scripts/build-explorer does but with symbol names kept (profile `wasmsize`: the `web`
# profile without strip, defined here through cargo's environment, so the `web` build in
# target/wasm32-unknown-unknown/web is left alone), runs wasm-bindgen --keep-debug, then
# bench/wasm_size.py attributes every function body to a crate from its name and prints
# crate / raw bytes / share / gzip estimate, and the totals of the shipped-equivalent
# module (the same wasm without its name and debug sections, as the stripped `web` build).
#   bench/wasm_size.sh [--top N] [--json OUT] [--names CRATE]   (arguments go to wasm_size.py)
#   NO_BUILD=1 bench/wasm_size.sh   reuse the last build
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
target=${CARGO_TARGET_DIR:-target}
export CARGO_PROFILE_WASMSIZE_INHERITS=web CARGO_PROFILE_WASMSIZE_STRIP=false
if [[ -z "${NO_BUILD:-}" ]]; then
  t=$SECONDS
  nice cargo build --locked --profile wasmsize --target wasm32-unknown-unknown \
    -p deltalens-web --bin deltalens-web >&2
  echo "built ($((SECONDS - t)) s)" >&2
fi
out=$target/wasmsize-bindgen
rm -rf "$out" && mkdir -p "$out"
wasm-bindgen --target web --no-typescript --keep-debug --out-dir "$out" --out-name deltalens-web \
  "$target/wasm32-unknown-unknown/wasmsize/deltalens-web.wasm"
python3 bench/wasm_size.py "$out/deltalens-web_bg.wasm" --write-shipped "$out/shipped.wasm" "$@"
