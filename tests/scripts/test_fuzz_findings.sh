#!/usr/bin/env bash
# scripts/fuzz's report of a finding, with cargo-fuzz and rustup replaced by shims (a run
# of a real fuzzer cannot be made to find something on demand). Two stops' CI runs failed
# on a checkpoint_parquet finding whose kind and message were cut off: the log's tail held
# only the end of the input's base64, and the input passed here. Checked:
# - the output's last lines name the kind, the message and whether the input replays alone;
# - a crash fails the run, replayed or not; a timeout or out-of-memory fails it, except
#   under FUZZ_CONFIRM=1 (scripts/test's brief run) when its input passes alone;
# - the pinned nightly is the one asked for (a fresh machine's `nightly` moves every day).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp" "$root/fuzz/artifacts/shim_target" "$root/fuzz/corpus/shim_target"' EXIT
mkdir -p "$tmp/bin" "$tmp/conformance/tables"
pinned=$(sed -n 's/^toolchain=\${FUZZ_TOOLCHAIN:-\(nightly-[0-9-]*\)}$/\1/p' scripts/fuzz)
[[ -n $pinned ]] || { echo "FAIL scripts/fuzz pins no nightly (toolchain=\${FUZZ_TOOLCHAIN:-nightly-…})" >&2; exit 1; }

cat >"$tmp/bin/rustup" <<EOF
#!/usr/bin/env bash
[[ \$* == "toolchain list" ]] && { echo "$pinned-x86_64-unknown-linux-gnu"; exit 0; }
echo "rustup shim: unexpected \$*" >&2; exit 9
EOF
# the shim fuzzer: SHIM_KIND is what the run finds (crash|timeout|oom), SHIM_REPLAY the
# replay's exit status; every call is logged, with the toolchain it was asked for
cat >"$tmp/bin/cargo" <<'EOF'
#!/usr/bin/env bash
echo "$*" >>"$SHIM_CALLS"
[[ $1 == +* ]] || { echo "cargo shim: no toolchain in $*" >&2; exit 9; }
shift
[[ $1 == fuzz ]] || exit 9
case $2 in
  --version) echo "cargo-fuzz 0.13.2" ;;
  list) echo shim_target ;;
  build) ;;
  run)
    if [[ " $* " == *" -runs=3 "* ]]; then
      ((SHIM_REPLAY == 0)) && { echo "Done 3 runs in 0 second(s)"; exit 0; }
      echo "ERROR: libFuzzer: $SHIM_MESSAGE"; exit "$SHIM_REPLAY"
    fi
    mkdir -p artifacts/shim_target
    echo "#1234	NEW    cov: 10 ft: 11 corp: 3/9b exec/s: 999 rss: 600Mb"
    case $SHIM_KIND in
      crash) echo "thread '<unnamed>' panicked at src/x.rs:1:2:"; echo "shim panic message"
             echo "==1== ERROR: libFuzzer: deadly signal"; f=crash-1 ;;
      timeout) echo "==1== ERROR: libFuzzer: timeout after 11 seconds"; f=timeout-1 ;;
      oom) echo "==1== ERROR: libFuzzer: out-of-memory (used: 600Mb; exceeds: 512Mb)"; f=oom-1 ;;
    esac
    printf 'shim input' >"artifacts/shim_target/$f"
    echo "artifact_prefix='artifacts/shim_target/'; Test unit written to artifacts/shim_target/$f"
    exit 1 ;;
  *) exit 9 ;;
esac
EOF
chmod +x "$tmp/bin/rustup" "$tmp/bin/cargo"

failed=0
# $1 kind, $2 replay status, $3 FUZZ_CONFIRM, $4 expected exit status of scripts/fuzz
check() {
  local out status message=$1
  [[ $1 == oom ]] && message="out-of-memory (used: 600Mb; exceeds: 512Mb)"
  [[ $1 == timeout ]] && message="timeout after 1 seconds"
  : >"$tmp/calls"
  set +e
  out=$(PATH="$tmp/bin:$PATH" SHIM_CALLS="$tmp/calls" SHIM_KIND=$1 SHIM_REPLAY=$2 SHIM_MESSAGE="$message" \
    FUZZ_CONFIRM=$3 DELTALENS_CONFORMANCE="$tmp/conformance" FUZZ_SEED=1 scripts/fuzz 1 shim_target 2>&1)
  status=$?
  set -e
  local tail what="$1, replay exit $2, FUZZ_CONFIRM=$3"
  tail=$(tail -n 8 <<<"$out")
  local problems=()
  ((status == $4)) || problems+=("exit $status, expected $4")
  grep -q "== finding in shim_target: " <<<"$tail" || problems+=("the tail does not name the finding")
  if [[ $2 == 0 ]]; then
    grep -q "replay: not reproduced" <<<"$tail" || problems+=("the tail does not say the replay passed")
  else
    grep -q "replay: reproduced alone" <<<"$tail" || problems+=("the tail does not say the replay failed")
  fi
  [[ $1 != crash ]] || grep -q "shim panic message" <<<"$tail" || problems+=("the tail lacks the panic message")
  grep -q "rss: 600Mb" <<<"$tail" || problems+=("the tail lacks the last progress line")
  grep -vq "^+$pinned fuzz" "$tmp/calls" && problems+=("a cargo call without +$pinned: $(grep -v "^+$pinned" "$tmp/calls" | head -1)")
  if ((${#problems[@]})); then
    echo "FAIL $what: ${problems[*]}" >&2
    sed 's/^/     | /' <<<"$tail" >&2
    failed=1
  else
    echo "ok   $what: exit $status, the tail names the finding and its replay"
  fi
}
check crash 1 1 1
check crash 0 1 1
check timeout 1 1 1
check timeout 0 1 0
check oom 0 1 0
check oom 0 0 1
check timeout 0 0 1
exit "$failed"
