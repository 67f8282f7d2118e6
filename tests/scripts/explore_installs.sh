#!/usr/bin/env bash
# README's first command installs only what the explorer needs (issue #18): on a
# simulated fresh machine — stub rustup, cargo, apt-get, python3 and npm that record
# their calls; no clang, no wasm-bindgen — `scripts/setup --explorer` (what
# scripts/explore runs) asks for the wasm32 target, clang and wasm-bindgen-cli and for
# nothing else, while the full `scripts/setup` (the test suite's) asks for worker-build,
# the Python packages and npm too (the stubs see what an install would do). And
# `scripts/explore --dry-run` lists only the explorer's steps.
set -euo pipefail
cd "$(dirname "$0")/../.."
stub=$(mktemp -d)
trap 'rm -rf "$stub"' EXIT
log=$stub/calls
for tool in rustup cargo apt-get npm sudo; do
  printf '#!/bin/sh\necho "%s $*" >> "%s"\n' "$tool" "$log" > "$stub/$tool"
  chmod +x "$stub/$tool"
done
# python3 answers "not installed" to every import check, so pip installs are asked for
printf '#!/bin/sh\necho "python3 $*" >> "%s"\nexit 1\n' "$log" > "$stub/python3"
chmod +x "$stub/python3"
for tool in bash sh awk grep id dirname cat sed; do ln -s "$(command -v "$tool")" "$stub/$tool"; done
fresh() { PATH=$stub HOME=$stub CARGO_HOME=$stub/cargo "$stub/bash" scripts/setup "$@" 2>/dev/null; }

: > "$log"
fresh --explorer
explorer=$(cat "$log")
: > "$log"
fresh || true # the stubs install nothing: the full set-up stops at its checks
full=$(cat "$log")

fail=0
want() { grep -q -- "$2" <<<"$1" || { echo "FAIL: $3 missing: $2"; fail=1; }; }
none() { if grep -q -- "$2" <<<"$1"; then echo "FAIL: $3: $2"; fail=1; fi; }
want "$explorer" "rustup target add wasm32-unknown-unknown" "explorer set-up"
want "$explorer" "apt-get install -y --no-install-recommends clang" "explorer set-up"
want "$explorer" "cargo install wasm-bindgen-cli --version" "explorer set-up"
for tool in worker-build chromium nginx pip npm deltalake moto playwright; do
  none "$explorer" "$tool" "the explorer's set-up installs the test suite's $tool"
done
# (the full set-up stops at the first failed pip install, and finds this machine's nginx)
for tool in worker-build chromium pip deltalake; do
  want "$full" "$tool" "the full set-up (so the stubs see installs)"
done
extra=$(grep -v -e '^rustup target' -e '^apt-get install -y --no-install-recommends clang' \
  -e '^cargo install wasm-bindgen-cli' <<<"$explorer" || true)
[[ -z $extra ]] || { echo "FAIL: the explorer's set-up also ran: $extra"; fail=1; }

steps=$(scripts/explore --dry-run)
for word in worker-build chromium nginx pip npm playwright deltalake duckdb moto azurite scripts/test; do
  none "$steps" "$word" "scripts/explore --dry-run lists"
done
want "$steps" "scripts/setup --explorer" "scripts/explore --dry-run"
want "$steps" "deltalens serve" "scripts/explore --dry-run"
want "$steps" "--no-default-features" "scripts/explore --dry-run (the CLI without DataFusion)"
((fail == 0)) && echo "explore: set-up asks for $(wc -l <<<"$explorer") installs/checks (the wasm32 target, clang, wasm-bindgen-cli); the full set-up $(wc -l <<<"$full"); the dry run lists $(wc -l <<<"$steps") steps"
exit $fail
