#!/usr/bin/env bash
# Rebuilds vendor/parquet from the published parquet 60.1.0 crate and the patches beside
# this script, and checks that the result is vendor/parquet, byte for byte; then tries each
# patch alone on the published crate (vendor/README.md lists which need an earlier one).
#   vendor/patches/check.sh [parquet-60.1.0.crate]   (without it, the crate is downloaded)
# Needs curl (without an argument), tar, GNU patch, diff. Builds nothing; writes only to a
# temporary directory.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
vendored=$(cd "$here/../parquet" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crate=${1:-}
if [[ -z $crate ]]; then
  crate=$work/parquet-60.1.0.crate
  curl -sSfL https://static.crates.io/crates/parquet/parquet-60.1.0.crate -o "$crate"
fi
tar xzf "$crate" -C "$work"
pristine=$work/parquet-60.1.0

# every patch in order (-F0: each hunk's context must match exactly), then the packaging's
# removals: the vendored copy keeps src/ (without the binaries), Cargo.toml, the licence
# files and the README
cp -r "$pristine" "$work/patched"
for p in "$here"/[0-9][0-9]-*.patch; do
  patch -d "$work/patched" -p1 -F0 -s --no-backup-if-mismatch < "$p"
done
(cd "$work/patched" && rm -r src/bin benches examples tests pytest \
  CONTRIBUTING.md THRIFT.md Cargo.lock Cargo.toml.orig)
if diff -r "$work/patched" "$vendored"; then
  echo "identical: the published crate + $(ls "$here"/[0-9][0-9]-*.patch | wc -l) patches = vendor/parquet"
else
  echo "DIFFERENT: vendor/parquet has changes no patch holds (or a patch is stale)" >&2
  exit 1
fi

# each patch alone on the published crate
for p in "$here"/[0-9][0-9]-*.patch; do
  if patch -d "$pristine" -p1 -F0 -s --dry-run < "$p" > /dev/null 2>&1; then
    echo "applies alone: $(basename "$p")"
  else
    echo "needs an earlier patch: $(basename "$p")"
  fi
done
