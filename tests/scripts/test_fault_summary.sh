#!/usr/bin/env bash
# tests/harness/fault_summary.py (the table of scripts/fault-test --full) on logs in the
# three front ends' formats: the CLI's and the worker's matrices (fault_matrix.py's
# report: a 22-character mode column) and the tab's (browser_faults.rs: 27 characters,
# modes named with their stack). Checks that each cell lands under its operation and front
# end, that a wrong answer fails it, and that a log without a matrix fails it.
set -euo pipefail
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
matrix() { # WIDTH MODE CELL-OF-SCAN
  printf 'noise before\n\nall stores\n'
  printf "%-${1}s%-16s%-16s%-16s%-16s\n" mode open scan changes history
  printf "%-${1}s%-16s%-16s%-16s%-16s\n" pass =24 =24 =9 =24
  printf "%-${1}s%-16s%-16s%-16s%-16s\n" "$2" "=20 e4" "$3" "e9" "e24"
  # the next block: after a blank line (the CLI, the worker) or not (the tab)
  [[ $1 == 27 ]] || printf '\n'
  printf 'store http\n'
  printf "%-${1}s%-16s%-16s%-16s%-16s\n" mode open scan changes history
  printf "%-${1}s%-16s%-16s%-16s%-16s\n" pass =8 =8 =3 =8
}
matrix 22 stall "e24" > "$tmp/cli.log"
matrix 27 "stall (retries)" "=12 e12" > "$tmp/tab.log"
matrix 22 stall "e24" > "$tmp/worker.log"
out=$(python3 tests/harness/fault_summary.py cli="$tmp/cli.log" tab="$tmp/tab.log" worker="$tmp/worker.log")
echo "$out" | grep -qF '| pass | =24 | =24 | =24 | =24 | =24 | =24 | =9 | =9 | =9 | =24 | =24 | =24 |' ||
  { echo "$out"; echo "fault summary: the pass row is not as logged" >&2; exit 1; }
echo "$out" | grep -qF '| stall (retries) | n/a | =20 e4 | n/a | n/a | =12 e12 | n/a |' ||
  { echo "$out"; echo "fault summary: the tab's stall row is not as logged" >&2; exit 1; }
echo "$out" | grep -qF 'cells with a wrong answer, panic, hang or crash: 0' ||
  { echo "$out"; exit 1; }
matrix 22 stall "=23 W1" > "$tmp/worker.log"
if python3 tests/harness/fault_summary.py cli="$tmp/cli.log" worker="$tmp/worker.log" > "$tmp/out"; then
  cat "$tmp/out"; echo "fault summary: a wrong answer passed" >&2; exit 1
fi
grep -qF 'cells with a wrong answer, panic, hang or crash: 1' "$tmp/out"
echo "no matrix here" > "$tmp/empty.log"
if python3 tests/harness/fault_summary.py cli="$tmp/empty.log" > "$tmp/out"; then
  echo "fault summary: a log without a matrix passed" >&2; exit 1
fi
echo "ok: fault summary"
