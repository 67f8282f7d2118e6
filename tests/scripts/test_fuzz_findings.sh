#!/usr/bin/env bash
# scripts/fuzz's report of a finding, with cargo-fuzz and rustup replaced by shims (a run
# of a real fuzzer cannot be made to find something on demand). Two stops' CI runs failed
# on a checkpoint_parquet finding whose kind and message were cut off: the log's tail held
# only the end of the input's base64, and the input passed here. Checked, with two targets
# finding the same thing in one run:
# - every finding's summary (kind, message, last progress line, replay) comes after every
#   input's base64, at the end of the output;
# - the replay is of the finding's own input, and its peak RSS counts (libFuzzer's own
#   memory check, a poll each second, does not run on a short replay);
# - a crash fails the run, replayed or not; a timeout or out-of-memory fails it, except
#   under FUZZ_CONFIRM=1 (scripts/test's brief run) when its input passes alone, which is
#   then said to be unconfirmed;
# - every cargo call asks for the pinned nightly (a fresh machine's `nightly` moves daily).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
unset FUZZ_TOOLCHAIN FUZZ_SANITIZER FUZZ_BUILD FUZZ_TIMEOUT FUZZ_STRICT_PANICS CARGO_TARGET_DIR
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$root"/fuzz/{artifacts,corpus}/shim_{target,other}' EXIT
mkdir -p "$tmp/bin" "$tmp/conformance/tables"
pinned=$(sed -n 's/^toolchain=\${FUZZ_TOOLCHAIN:-\(nightly-[0-9-]*\)}$/\1/p' scripts/fuzz)
[[ -n $pinned ]] || { echo "FAIL scripts/fuzz pins no nightly (toolchain=\${FUZZ_TOOLCHAIN:-nightly-…})" >&2; exit 1; }

cat >"$tmp/bin/rustup" <<SHIM
#!/usr/bin/env bash
[[ \$* == "toolchain list" ]] && { echo "$pinned-x86_64-unknown-linux-gnu"; exit 0; }
echo "rustup shim: unexpected \$*" >&2; exit 9
SHIM
# the shim fuzzer: SHIM_KIND is what the run finds (crash|timeout|oom, or none: it exits 2
# without an input), SHIM_REPLAY the replay's exit status, SHIM_REPLAY_MB the memory the
# replay touches; every call is logged, with the toolchain it asked for
cat >"$tmp/bin/cargo" <<'SHIM'
#!/usr/bin/env bash
echo "$*" >>"$SHIM_CALLS"
[[ $1 == +* ]] || { echo "cargo shim: no toolchain in $*" >&2; exit 9; }
shift
[[ $1 == fuzz ]] || exit 9
case $2 in
  --version) echo "cargo-fuzz 0.13.2" ;;
  list) printf 'shim_target\nshim_other\n' ;;
  build) ;;
  run)
    t=$7
    if [[ " $* " == *" -runs=3 "* ]]; then
      [[ $8 == artifacts/$t/*-1 && -f $8 ]] || { echo "replay of $8, not $t's input" >&2; exit 9; }
      ((SHIM_REPLAY_MB > 0)) && python3 -c "b = bytearray($SHIM_REPLAY_MB << 20)"
      ((SHIM_REPLAY == 0)) && { echo "Done 3 runs in 0 second(s)"; exit 0; }
      echo "ERROR: libFuzzer: $SHIM_MESSAGE"
      exit "$SHIM_REPLAY"
    fi
    [[ $SHIM_KIND == none ]] && { echo "shim: nothing found, exit 2"; exit 2; }
    mkdir -p "artifacts/$t"
    printf '#1234\tNEW    cov: 10 ft: 11 corp: 3/9b exec/s: 999 rss: 600Mb\n'
    case $SHIM_KIND in
      crash)
        echo "thread '<unnamed>' panicked at src/x.rs:1:2:"
        echo "shim panic message"
        echo "==1== ERROR: libFuzzer: deadly signal"
        f=crash-1 ;;
      timeout) echo "==1== ERROR: libFuzzer: timeout after 11 seconds"; f=timeout-1 ;;
      oom) echo "==1== ERROR: libFuzzer: out-of-memory (used: 600Mb; exceeds: 512Mb)"; f=oom-1 ;;
    esac
    head -c 3000 /dev/zero >"artifacts/$t/$f" # 40 lines of base64
    echo "artifact_prefix='artifacts/$t/'; Test unit written to artifacts/$t/$f"
    exit 1 ;;
  *) exit 9 ;;
esac
SHIM
chmod +x "$tmp/bin/rustup" "$tmp/bin/cargo"

failed=0
# $1 kind, $2 replay's exit status, $3 FUZZ_CONFIRM, $4 scripts/fuzz's expected exit
# status, $5 MB the replay touches, $6 "unconfirmed" when the findings are to be said so
check() {
  local out status message=$1 what="$1, replay exit $2 touching $5 MB, FUZZ_CONFIRM=$3"
  local problems=() t summary
  local label=$1 # the kind as the summary names it
  [[ $1 == oom ]] && message="out-of-memory (used: 600Mb; exceeds: 512Mb)" label="out of memory"
  [[ $1 == timeout ]] && message="timeout after 1 seconds"
  [[ $1 == none ]] && label="failed (exit 2)"
  : >"$tmp/calls"
  set +e
  out=$(PATH="$tmp/bin:$PATH" SHIM_CALLS="$tmp/calls" SHIM_KIND=$1 SHIM_REPLAY=$2 \
    SHIM_MESSAGE="$message" SHIM_REPLAY_MB=$5 FUZZ_CONFIRM=$3 \
    DELTALENS_CONFORMANCE="$tmp/conformance" FUZZ_SEED=1 scripts/fuzz 1 shim_target shim_other 2>&1)
  status=$?
  set -e
  ((status == $4)) || problems+=("exit $status, expected $4")
  ((status == 0)) || [[ $(tail -n 1 <<<"$out") == "findings in: "* ]] ||
    problems+=("the last line does not list the findings")
  for t in shim_target shim_other; do
    # the summary: from its heading to the next heading or the list of findings
    summary=$(awk -v h="== finding in $t: $label" 'index($0, h) == 1 { on = 1; print; next }
      /^== finding in / || /^findings in:/ { on = 0 } on' <<<"$out")
    [[ -n $summary ]] || { problems+=("$t: no summary"); continue; }
    awk -v h="== finding in $t: $label" 'index($0, h) == 1 { s = NR } /^AAAA/ { b = NR }
      END { exit !(s > b) }' <<<"$out" || problems+=("$t: summary before an input's base64")
    [[ $(tail -n 30 <<<"$out") == *"$summary"* ]] || problems+=("$t: summary not in the last 30 lines")
    [[ $1 == none ]] || grep -q "last progress: .*rss: 600Mb" <<<"$summary" ||
      problems+=("$t: no last progress line")
    [[ $1 != crash ]] || grep -q "shim panic message" <<<"$summary" || problems+=("$t: no panic message")
    if [[ $1 == none ]]; then
      grep -q "replay: no input to replay" <<<"$summary" || problems+=("$t: no 'no input to replay'")
    elif [[ $2 == 0 && $5 -le 512 ]]; then
      grep -q "replay: not reproduced" <<<"$summary" || problems+=("$t: a passing replay not said")
    else
      grep -q "replay: reproduced alone" <<<"$summary" || problems+=("$t: a failing replay not said")
    fi
    if [[ ${6:-} == unconfirmed ]]; then
      grep -q "unconfirmed: this" <<<"$summary" || problems+=("$t: not said to be unconfirmed")
    elif grep -q "unconfirmed" <<<"$summary"; then
      problems+=("$t: said to be unconfirmed")
    fi
  done
  if grep -vq "^+$pinned fuzz" "$tmp/calls"; then
    problems+=("a cargo call without +$pinned: $(grep -v "^+$pinned fuzz" "$tmp/calls" | head -1)")
  fi
  if ((${#problems[@]})); then
    echo "FAIL $what: $(printf '%s; ' "${problems[@]}")" >&2
    tail -n 30 <<<"$out" | sed 's/^/     | /' >&2
    failed=1
  else
    echo "ok   $what: exit $status, both findings summed up after the inputs"
  fi
}
check crash 1 1 1 0
check crash 0 1 1 0
check timeout 1 1 1 0
check timeout 0 1 0 0 unconfirmed
check oom 0 1 0 0 unconfirmed
check oom 0 1 1 700
check oom 0 0 1 0
check timeout 0 0 1 0
check none 0 1 1 0
exit "$failed"
