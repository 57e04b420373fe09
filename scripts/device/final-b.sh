#!/usr/bin/env bash
# Device session, part B (same machine, build/ from part A, rebuilt if absent): measurement
# checks (issue 4) and compute-sanitizer runs (issue 7). Results in $OUT/final-b.tgz.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/b"
[[ -x build/nvfp4bench ]] || { scripts/setup --tests > "$OUT/b/setup.log" 2>&1; echo "rebuilt rc=$?"; }
t0=$SECONDS; OUT="$OUT/b" bash scripts/device/measure.sh 2>&1 | tail -40; echo "measure ($((SECONDS-t0)) s)"
t0=$SECONDS; OUT="$OUT/b" CASE_TIMEOUT=90 bash scripts/device/sanitize.sh 2>&1 | tail -30; echo "sanitize ($((SECONDS-t0)) s)"
(cd "$OUT" && tar czf final-b.tgz b && rm -rf b)
