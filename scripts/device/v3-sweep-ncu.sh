#!/usr/bin/env bash
# sm90 v3 closing call: sm_90a build, test_sm90 (the final kernel after the split-rule commit),
# the GPU MODE sweep with every peer (scripts/device/sweep.sh step 1), the v3 SASS with control
# codes, and Nsight Compute on the M=128 benchmark shape and 4096^3 (stall reasons per SASS line,
# memory chart). Writes under $OUT.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_BUILD_TESTS=ON > "$OUT/cmake.log" 2>&1
cmake --build build -j16 --target nvfp4bench test_sm90 > "$OUT/build.log" 2>&1 || { grep -A3 error "$OUT/build.log" | head -30; exit 1; }
timeout 120 ./build/tests/test_sm90 > "$OUT/test_sm90.log" 2>&1; rc=$?; echo "test_sm90 rc=$rc"
grep -E "^\[  (PASSED|FAILED) |FAILED \]|bad, first" "$OUT/test_sm90.log" | head -20
[ $rc -eq 0 ] || exit 1
OUT="$OUT/s" SWEEP_STEPS=1 timeout 200 bash -c '
  mkdir -p $OUT/sweep; t0=$(date +%s)
  build/nvfp4bench sweep configs/gpumode-nvfp4-gemm.json --peers all --json $OUT/sweep/gpumode.json --overwrite > $OUT/sweep/gpumode.log 2>&1
  echo "sweep rc=$? in $(( $(date +%s) - t0 )) s"'
grep -E '^sweep: [0-9]' "$OUT/s/sweep/gpumode.log"
(cd "$OUT/s" && tar czf ../sweep.tgz sweep) && rm -rf "$OUT/s"
# SASS of the registered instantiation (MT 128, super-granules, 3 raw-B buffers), hex kept for
# the control codes (scoreboards).
obj=$(find build -name 'sm90_rs.cu.o' | head -1)
cuobjdump --dump-sass "$obj" > "$OUT/rs_sass_all.txt" 2>&1
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
mkdir -p "$OUT/ncu"
for s in "128 7168 16384" "4096 4096 4096"; do
  read -r m n k <<<"$s"; tag=${m}x${n}x${k}
  timeout 120 $NCU --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Chart --section WarpStateStats --section SourceCounters \
    --section SchedulerStats --section LaunchStats -k regex:rs_kernel -c 1 -o "$OUT/ncu/$tag" -f \
    build/nvfp4bench --m $m --n $n --k $k --kernel sm90 --iters 1 --warmup 0 --warmup-time 0 > "$OUT/ncu/$tag.log" 2>&1
  echo "ncu $tag rc=$?"
  $NCU -i "$OUT/ncu/$tag.ncu-rep" --page details > "$OUT/ncu/$tag-details.txt" 2>&1
  $NCU -i "$OUT/ncu/$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu/$tag-source.csv" 2>&1
  $NCU -i "$OUT/ncu/$tag.ncu-rep" --page raw --csv > "$OUT/ncu/$tag-raw.csv" 2>&1
  rm -f "$OUT/ncu/$tag.ncu-rep"
done
(cd "$OUT" && tar czf ncu.tgz ncu rs_sass_all.txt) && rm -rf "$OUT/ncu" "$OUT/rs_sass_all.txt"
ls -la "$OUT"
