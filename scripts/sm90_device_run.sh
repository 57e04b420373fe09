#!/usr/bin/env bash
# One device session for the sm90 kernel: build (sm_90a only), resource usage, SASS evidence,
# correctness tests, timings. Writes logs under $OUT (or ./out). Usage: scripts/sm90_device_run.sh [bench args]
set -u
OUT=${OUT:-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,compute_cap,clocks.sm,clocks.max.sm,power.limit --format=csv | tee "$OUT/gpu.txt"
cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_BUILD_TESTS=ON \
  -DNVFP4_SM90_PTXAS_VERBOSE=ON > "$OUT/cmake.txt" 2>&1 || { tail -20 "$OUT/cmake.txt"; exit 1; }
cmake --build build -j16 > "$OUT/build.txt" 2>&1 || { grep -E "error" -A3 "$OUT/build.txt" | head -40; exit 1; }
grep -E "Compiling entry|Used|spill|C75" "$OUT/build.txt" | grep -A2 "gemm_kernel" | sed 's/ptxas info *: //' | tee "$OUT/ptxas.txt" | grep -E "Used|spill|C75"
for f in build/CMakeFiles/nvfp4_sm90.dir/kernels/sm90/sm90_bn*.cu.o; do
  cuobjdump --dump-sass "$f" > "$OUT/sass_$(basename "$f" .cu.o).txt"
  echo "$(basename "$f"): HGMMA $(grep -c HGMMA "$OUT/sass_$(basename "$f" .cu.o).txt")  HMMA $(grep -c ' HMMA' "$OUT/sass_$(basename "$f" .cu.o).txt")  LDS $(grep -c ' LDS' "$OUT/sass_$(basename "$f" .cu.o).txt")  STS $(grep -c ' STS' "$OUT/sass_$(basename "$f" .cu.o).txt")"
done | tee "$OUT/sass_counts.txt"
grep -m2 HGMMA "$OUT/sass_sm90_bn256.txt"
timeout 60 ./build/tests/test_sm90 --gtest_filter='Sm90Decode.*' 2>&1 | tail -3
timeout 150 ./build/sm90_bench "$@" > "$OUT/bench.txt" 2>&1; echo "bench rc $?"
awk '/^shape|^device/ {print} / auto |no decode|no wgmma/ {print}' "$OUT/bench.txt"
timeout 280 ./build/tests/test_sm90 > "$OUT/tests.txt" 2>&1; echo "tests rc $?"
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|bad, first|Failure" "$OUT/tests.txt" | head -30
