#!/usr/bin/env bash
# sm90 v3 with the super-granule K order: sm_90a build, test_sm90 (stop on failure), then the
# tool's side-by-side with every peer (scripts/device/peers.sh) into $OUT/peers.tgz.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_BUILD_TESTS=ON -DNVFP4_SM90_PTXAS_VERBOSE=ON > "$OUT/cmake.log" 2>&1
cmake --build build -j16 --target nvfp4bench test_sm90 > "$OUT/build.log" 2>&1 || { grep -A3 error "$OUT/build.log" | head -30; exit 1; }
grep -E "Compiling entry|Used|spill|C75" "$OUT/build.log" | grep -A2 "rs_kernel" | sed 's/ptxas info *: //' > "$OUT/ptxas_v3.txt"
timeout 100 ./build/tests/test_sm90 > "$OUT/test_sm90.log" 2>&1; rc=$?; echo "test_sm90 rc=$rc"
grep -E "^\[  (PASSED|FAILED) |FAILED \]|bad, first|OK \]" "$OUT/test_sm90.log" | head -20
[ $rc -eq 0 ] || exit 1
OUT="$OUT/p" timeout 150 bash scripts/device/peers.sh
(cd "$OUT/p" && tar czf ../peers.tgz peers) && rm -rf "$OUT/p"
