#!/usr/bin/env bash
# sm90 closing call (second session, after the lean-descriptor commit; the earlier
# v3-final2.sh lost files to the device tool's 8-file limit): sm_90a build, test_sm90 +
# test_sm90_host (stop on failure), the GPU MODE sweep with every peer (report + JSONL), the tool's side-by-side with
# every peer on the issue's shapes (scripts/device/peers.sh), compute-sanitizer memcheck and
# racecheck on the registered kernel, and sm90_bench --v3 on the GPU MODE test shapes the v3
# cost model was not fitted to (does it pick the best split?). Writes $OUT/final.tgz.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_BUILD_TESTS=ON -DNVFP4_SM90_PTXAS_VERBOSE=ON > "$OUT/cmake.log" 2>&1
cmake --build build -j16 --target nvfp4bench test_sm90 test_sm90_host sm90_bench > "$OUT/build.log" 2>&1 || { grep -A3 error "$OUT/build.log" | head -30; exit 1; }
grep -E "Compiling entry|Used|spill" "$OUT/build.log" | grep -A2 "rs_kernelILi128ELi0ELi4ELi3E" | sed 's/ptxas info *: //' > "$OUT/ptxas_registered.txt"
cat "$OUT/ptxas_registered.txt"
timeout 150 ./build/tests/test_sm90 > "$OUT/test_sm90.log" 2>&1; rc=$?; echo "test_sm90 rc=$rc"
timeout 30 ./build/tests/test_sm90_host > "$OUT/test_sm90_host.log" 2>&1; rh=$?; echo "test_sm90_host rc=$rh"
grep -E "^\[  (PASSED|FAILED) |FAILED \]|bad, first" "$OUT/test_sm90.log" "$OUT/test_sm90_host.log" | head -20
[ $rc -eq 0 ] && [ $rh -eq 0 ] || exit 1
mkdir -p "$OUT/s/sweep"; t0=$(date +%s)
timeout 150 build/nvfp4bench sweep configs/gpumode-nvfp4-gemm.json --peers all --json "$OUT/s/sweep/gpumode.json" \
  --overwrite > "$OUT/s/sweep/gpumode.log" 2>&1
echo "sweep rc=$? in $(( $(date +%s) - t0 )) s"; grep -E '^sweep: [0-9]' "$OUT/s/sweep/gpumode.log"
mv "$OUT/s/sweep" "$OUT/sweep"; rmdir "$OUT/s"
t0=$(date +%s); OUT="$OUT/p" timeout 150 bash scripts/device/peers.sh > "$OUT/peers-summary.txt" 2>&1
echo "peers rc=$? in $(( $(date +%s) - t0 )) s"; cat "$OUT/peers-summary.txt"
mv "$OUT/p/peers" "$OUT/peers"; rmdir "$OUT/p"
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
timeout 100 ./build/sm90_bench --v3 --samples 7 128x3072x1536 256x7168x256 512x512x7168 512x4096x512 \
  512x1536x7168 2304x4608x7168 > "$OUT/bench-heldout.txt" 2>&1; echo "bench rc=$?"
grep -E "^shape|auto|old" "$OUT/bench-heldout.txt"
# The device tool returns at most 8 files: everything in one archive.
(cd "$OUT" && tar czf ../final.tgz . && mv ../final.tgz final.tgz && find . -mindepth 1 -maxdepth 1 ! -name final.tgz -exec rm -rf {} +)
ls -la "$OUT"
