#!/usr/bin/env bash
# The registered sm90 (v3) after a heuristic change: sm_90a build of the tool and test_sm90,
# the full test_sm90, then scripts/device/peers.sh (kernel, reference and every peer, cold L2,
# exact check of 4000 elements); peers land in $OUT/peers.tgz.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_BUILD_TESTS=ON > "$OUT/cmake.log" 2>&1
cmake --build build -j16 --target nvfp4bench test_sm90 sm90_bench > "$OUT/build.log" 2>&1 || { tail -30 "$OUT/build.log"; exit 1; }
timeout 300 ./build/tests/test_sm90 > "$OUT/test_sm90.log" 2>&1; echo "test_sm90 rc=$?"
grep -E "^\[  (PASSED|FAILED) |FAILED \]|bad, first" "$OUT/test_sm90.log" | head
OUT="$OUT/p" bash scripts/device/peers.sh
(cd "$OUT/p" && tar czf ../peers.tgz peers) && rm -rf "$OUT/p"
