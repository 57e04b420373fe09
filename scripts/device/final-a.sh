#!/usr/bin/env bash
# Device session, part A: the README's test command on the bare machine (all architectures,
# every test including the GPU ones), the sm100 SASS inspection, and references/peers beside
# the auto kernel. Everything lands in $OUT/final-a.tgz plus the summary on stdout.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/a"
nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$SECONDS
(scripts/setup --tests) > "$OUT/a/setup.log" 2>&1; echo "setup rc=$? ($((SECONDS-t0)) s)"; tail -3 "$OUT/a/setup.log"
t0=$SECONDS
ctest --test-dir build --output-on-failure -j6 > "$OUT/a/ctest.log" 2>&1; echo "ctest rc=$? ($((SECONDS-t0)) s)"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Failed|Timeout" "$OUT/a/ctest.log" | head -20
grep -c "Skipped" "$OUT/a/ctest.log" | sed 's/^/skipped lines: /'
scripts/inspect-sm100 build > "$OUT/a/inspect-sm100.txt" 2>&1; echo "inspect-sm100 rc=$?"; head -40 "$OUT/a/inspect-sm100.txt"
t0=$SECONDS
OUT="$OUT/a" bash scripts/device/peers.sh; echo "peers ($((SECONDS-t0)) s)"
(cd "$OUT" && tar czf final-a.tgz a && rm -rf a)
