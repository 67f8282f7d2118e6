#!/usr/bin/env bash
# scripts/test's EXIT trap (it stops the background builds) keeps the suite's exit status:
# a stop's CI once failed with every step passed, because the trap's `pkill` found no
# process left (the builds had ended) and, under `set -e`, turned the exit into 1. The trap
# line is taken from scripts/test itself and run as there, under `set -euo pipefail`, with
# the background jobs it names (the builds, the brief fuzz run) ended or still running,
# after a passing or a failing end.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(grep -cE '^trap .* EXIT$' scripts/test) == 1 ]] ||
  { echo "scripts/test: expected one trap line (trap … EXIT)" >&2; exit 1; }
trap_line=$(grep -E '^trap .* EXIT$' scripts/test)
failed=0
check() { # $1: the background job's life (ended|running); $2: the end's status; expected status
  local got seconds=0
  [[ $1 == running ]] && seconds=30
  got=$(bash -c "set -euo pipefail
    ( sleep $seconds; true ) &
    background=\$!
    ( sleep $seconds; true ) &
    fuzzing=\$!
    $trap_line
    [[ $1 == ended ]] && { wait \"\$background\" \"\$fuzzing\" || true; }
    exit $2" >/dev/null 2>&1; echo $?) || true
  if [[ $got == "$2" ]]; then
    echo "ok   background $1, exit $2: the suite exits $got"
  else
    echo "FAIL background $1, exit $2: the suite exits $got" >&2
    failed=1
  fi
}
check ended 0
check running 0
check ended 3
check running 3
exit "$failed"
