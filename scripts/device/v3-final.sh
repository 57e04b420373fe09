#!/usr/bin/env bash
# Device session for the sm90 v3 kernel (issue 5): the README test command on the bare machine
# (all architectures, every test including the GPU ones), bench/sm90_bench --v3 (v3 variants
# beside the previous v1/v2 choice, cuBLASLt FP16 and dequantize-then-cuBLASLt, bit check),
# the tool's side-by-side with every peer (scripts/device/peers.sh), and compute-sanitizer
# memcheck + racecheck on the registered sm90 for a split-K shape and a many-units shape.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi -L; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t0=$SECONDS
(scripts/setup --tests) > "$OUT/setup.log" 2>&1; echo "setup rc=$? ($((SECONDS-t0)) s)"; tail -2 "$OUT/setup.log"
t0=$SECONDS
ctest --test-dir build --output-on-failure -j6 > "$OUT/ctest.log" 2>&1; echo "ctest rc=$? ($((SECONDS-t0)) s)"
grep -E "tests passed|tests failed|\(Failed\)|\*\*\*Failed|Timeout" "$OUT/ctest.log" | head -20
grep -E "Sm90Gemm.*(OK|FAILED)" "$OUT/ctest.log" | head; grep -B1 -A3 "bad, first" "$OUT/ctest.log" | head -20
t0=$SECONDS
timeout 200 ./build/sm90_bench --v3 --samples ${SAMPLES:-11} 128x7168x16384 128x4096x7168 128x7168x2048 \
  256x7168x2048 512x4096x7168 1024x7168x16384 4096x4096x4096 8192x8192x8192 > "$OUT/bench.txt" 2>&1
echo "bench rc=$? ($((SECONDS-t0)) s)"; grep -E "^shape|auto|old|MISMATCH" "$OUT/bench.txt"
t0=$SECONDS
OUT="$OUT" bash scripts/device/peers.sh; echo "peers ($((SECONDS-t0)) s)"
CS=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck; do
  for s in "128 7168 2048 1" "1000 1000 320 2"; do
    read -r m n k l <<<"$s"
    $CS --tool $tool --error-exitcode 9 build/nvfp4bench --m $m --n $n --k $k --l $l --kernel sm90 \
      --reference cpu-exact --iters 1 --warmup 0 > "$OUT/sanitize-$tool-${m}x${n}x${k}x${l}.txt" 2>&1
    echo "$tool ${m}x${n}x${k}x${l}: rc=$? $(grep -m1 'ERROR SUMMARY' "$OUT/sanitize-$tool-${m}x${n}x${k}x${l}.txt")"
  done
done
