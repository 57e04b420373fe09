#!/usr/bin/env bash
# sm90 v3, raw B staged in shared memory by cp.async (kSmemB): sm_90a build, test_sm90 (stop on
# failure), sm90_bench --v3 (the registered choice beside raw B in registers with 3 and 2
# buffers, 2 shared-memory stages and the v1/v2 choice, same run), the SASS with control codes,
# and ncu stall sampling on 128x7168x16384. Logs under $OUT.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_BUILD_TESTS=ON -DNVFP4_SM90_PTXAS_VERBOSE=ON > "$OUT/cmake.log" 2>&1
cmake --build build -j16 --target nvfp4bench test_sm90 sm90_bench > "$OUT/build.log" 2>&1 || { grep -A3 error "$OUT/build.log" | head -30; exit 1; }
grep -E "Compiling entry|Used|spill|C75" "$OUT/build.log" | grep -A2 "rs_kernel" | sed 's/ptxas info *: //' > "$OUT/ptxas_v3.txt"
timeout ${TEST_TIMEOUT:-200} ./build/tests/test_sm90 > "$OUT/test_sm90.log" 2>&1; rc=$?; echo "test_sm90 rc=$rc"
grep -E "^\[  (PASSED|FAILED) |FAILED \]|bad, first" "$OUT/test_sm90.log" | head -20
[ $rc -eq 0 ] || exit 1
SHAPES=("$@")
[ ${#SHAPES[@]} -eq 0 ] && SHAPES=(128x7168x16384 128x4096x7168 128x7168x2048 256x7168x2048 512x4096x7168 1024x7168x16384 4096x4096x4096 8192x8192x8192)
timeout ${BENCH_TIMEOUT:-200} ./build/sm90_bench --v3 --samples ${SAMPLES:-7} "${SHAPES[@]}" > "$OUT/bench.txt" 2>&1; echo "bench rc=$?"
grep -E "^shape|auto|old|regB| b2|MISMATCH" "$OUT/bench.txt"
obj=$(find build -name 'sm90_rs.cu.o' | head -1)
cuobjdump --dump-sass "$obj" > "$OUT/rs_sass_all.txt" 2>&1
mkdir -p "$OUT/ncu"
if [[ ${NCU:-1} == 1 ]]; then
  tag=128x7168x16384
  timeout 90 ncu --clock-control none --section SpeedOfLight --section WarpStateStats --section SourceCounters \
    --section SchedulerStats -k regex:rs_kernel -c 1 -o "$OUT/ncu/$tag" -f \
    build/nvfp4bench --m 128 --n 7168 --k 16384 --kernel sm90 --iters 1 --warmup 0 --warmup-time 0 > "$OUT/ncu/$tag.log" 2>&1
  echo "ncu rc=$?"
  ncu -i "$OUT/ncu/$tag.ncu-rep" --page details > "$OUT/ncu/$tag-details.txt" 2>&1
  ncu -i "$OUT/ncu/$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/$tag-source.csv" 2>&1
  ncu -i "$OUT/ncu/$tag.ncu-rep" --page raw --csv > "$OUT/ncu/$tag-raw.csv" 2>&1
  rm -f "$OUT/ncu/$tag.ncu-rep"
fi
(cd "$OUT" && tar czf dev.tgz ncu rs_sass_all.txt ptxas_v3.txt build.log) && rm -rf "$OUT/ncu" "$OUT/rs_sass_all.txt"
