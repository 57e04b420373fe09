#!/usr/bin/env bash
# sm90v3 device call: SASS census of the v2 producer kernel, full test_sm90 on both builds,
# sm90_bench (25 samples, median, L2 flushed, cuBLASLt FP16 same process) base vs X (R deeper).
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
O=${OUT:-out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
F=_ZN5nvfp44sm902v29ws_kernelILi256ELi0ELi0ELi1EEEvNS1_6ParamsE
cuobjdump -sass -fun $F base/sm90_bench > $O/sass_ws256.txt 2>&1
grep -E '^\s+/\*[0-9a-f]{4}\*/' $O/sass_ws256.txt | awk '{o=$2; if (o ~ /^@/) o=$3; sub(/\..*/,"",o); print o}' | sort | uniq -c | sort -rn | head -25 | tr '\n' ' ' | tee $O/sass_ws256_hist.txt; echo
for v in base x; do
  timeout 120 ./$v/test_sm90 > $O/tests_$v.txt 2>&1; echo "tests $v rc $?"
  grep -E "^\[  (PASSED|FAILED) |FAILED \]" $O/tests_$v.txt | head -8
done
S="128x7168x2048 256x7168x2048 512x4096x7168 128x4096x7168 128x7168x16384 1024x7168x16384 4096x4096x4096 8192x8192x8192"
for v in base x; do
  timeout 170 ./$v/sm90_bench $S > $O/bench_$v.txt 2>&1; echo "bench $v rc $?"
done
for v in base x; do echo "== $v"; awk '/^shape/ {printf "%s %s %s | ", $2, $5, $6} / auto / {print}' $O/bench_$v.txt; done
