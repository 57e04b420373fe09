#!/usr/bin/env bash
# sm90 v3 development run on one H200: build (sm_90a only), ptxas/SASS evidence for the v3
# kernel, timings of v3 variants beside the registered choice, v1, cuBLASLt FP16 and
# dequantize-then-cuBLASLt (bench/sm90_bench --v3), then the full test_sm90. Logs under $OUT.
#   usage: scripts/device/v3.sh [bench shapes ...]
set -u
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,compute_cap,clocks.sm,clocks.max.sm,power.limit --format=csv > "$OUT/gpu.txt"
cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_BUILD_TESTS=ON \
  -DNVFP4_SM90_PTXAS_VERBOSE=ON > "$OUT/cmake.txt" 2>&1 || { tail -20 "$OUT/cmake.txt"; exit 1; }
cmake --build build -j16 --target sm90_bench test_sm90 > "$OUT/build.txt" 2>&1 \
  || { grep -E "error" -A3 "$OUT/build.txt" | head -40; exit 1; }
grep -E "Compiling entry|Used|spill|C75" "$OUT/build.txt" | grep -A2 "rs_kernel" | sed 's/ptxas info *: //' > "$OUT/ptxas_v3.txt"
grep -E "Used|spill|C75" "$OUT/ptxas_v3.txt"
cuobjdump --dump-sass build/CMakeFiles/nvfp4_sm90.dir/kernels/sm90/sm90_rs.cu.o > "$OUT/sass_rs.txt"
echo "sm90_rs: HGMMA $(grep -c HGMMA "$OUT/sass_rs.txt") HMMA $(grep -c ' HMMA' "$OUT/sass_rs.txt") LDL $(grep -c ' LDL' "$OUT/sass_rs.txt")" | tee "$OUT/sass_counts.txt"
grep -m2 HGMMA "$OUT/sass_rs.txt"
SHAPES=("$@")
[ ${#SHAPES[@]} -eq 0 ] && SHAPES=(128x7168x16384 128x4096x7168 128x7168x2048 256x7168x2048 512x4096x7168 1024x7168x16384 4096x4096x4096 8192x8192x8192)
timeout ${BENCH_TIMEOUT:-240} ./build/sm90_bench --v3 --samples ${SAMPLES:-15} "${SHAPES[@]}" > "$OUT/bench.txt" 2>&1; echo "bench rc $?"
grep -E "^shape|auto|v1 |v3" "$OUT/bench.txt" | awk '/^shape/ {print; next} {print}' | head -150
timeout ${TEST_TIMEOUT:-300} ./build/tests/test_sm90 > "$OUT/tests.txt" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|bad, first|Failure" "$OUT/tests.txt" | head -30
