#!/usr/bin/env bash
# Device session, part D (a rerun after fixes): the report test that assumed the host backend,
# the oversized-problem refusal, and the sweeps with peers. Results in $OUT/final-d.tgz.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/d"
NVFP4_CUDA_ARCHS="80-virtual;90a-real" scripts/setup --tests > "$OUT/d/setup.log" 2>&1; echo "setup rc=$?"
ctest --test-dir build -R "^(reports|plugin_gpu|cli)$" --output-on-failure > "$OUT/d/ctest.log" 2>&1
echo "ctest rc=$?"; grep -E "tests passed|\(Failed\)" "$OUT/d/ctest.log"
build/nvfp4bench --m 8 --n 8 --k 137438953472 > "$OUT/d/oom.log" 2>&1; echo "oversized: exit $? $(tail -1 "$OUT/d/oom.log")"
t0=$SECONDS; OUT="$OUT/d" bash scripts/device/sweep.sh 2>&1 | tail -45; echo "sweep ($((SECONDS-t0)) s)"
(cd "$OUT" && tar czf final-d.tgz d && rm -rf d)
