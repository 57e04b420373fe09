#!/usr/bin/env bash
# sm90 v3 final device call: sm_90a build, test_sm90 (stop on failure), sm90_bench --v3 (the
# registered choice with 3 raw-B buffers beside 2 buffers and the previous v1/v2 choice, same
# run), compute-sanitizer memcheck + racecheck on the registered kernel (super-granule path,
# split-K, many units), then the tool's side-by-side with every peer into $OUT/peers.tgz.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_BUILD_TESTS=ON -DNVFP4_SM90_PTXAS_VERBOSE=ON > "$OUT/cmake.log" 2>&1
cmake --build build -j16 --target nvfp4bench test_sm90 sm90_bench > "$OUT/build.log" 2>&1 || { grep -A3 error "$OUT/build.log" | head -30; exit 1; }
grep -E "Compiling entry|Used|spill|C75" "$OUT/build.log" | grep -A2 "rs_kernel" | sed 's/ptxas info *: //' > "$OUT/ptxas_v3.txt"
timeout 100 ./build/tests/test_sm90 > "$OUT/test_sm90.log" 2>&1; rc=$?; echo "test_sm90 rc=$rc"
grep -E "^\[  (PASSED|FAILED) |FAILED \]|bad, first|OK \]" "$OUT/test_sm90.log" | head -20
[ $rc -eq 0 ] || exit 1
timeout 60 ./build/sm90_bench --v3 --samples 7 128x7168x16384 128x4096x7168 128x7168x2048 256x7168x2048 \
  4096x4096x4096 8192x8192x8192 > "$OUT/bench.txt" 2>&1; echo "bench rc=$?"
grep -E "^shape|auto|old| b2|MISMATCH" "$OUT/bench.txt"
CS=/usr/local/cuda/bin/compute-sanitizer
for tool in memcheck racecheck; do
  for s in "128 7168 2048 1" "1000 1000 512 2"; do
    read -r m n k l <<<"$s"
    f="$OUT/sanitize-$tool-${m}x${n}x${k}x${l}.txt"
    timeout 60 $CS --tool $tool --error-exitcode 9 build/nvfp4bench --m $m --n $n --k $k --l $l \
      --kernel sm90 --reference cpu-exact --iters 1 --warmup 0 > "$f" 2>&1
    echo "$tool ${m}x${n}x${k}x${l}: rc=$? $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f") $(grep -m1 '^verify' "$f")"
  done
done
OUT="$OUT/p" timeout 120 bash scripts/device/peers.sh
(cd "$OUT/p" && tar czf ../peers.tgz peers) && rm -rf "$OUT/p"
