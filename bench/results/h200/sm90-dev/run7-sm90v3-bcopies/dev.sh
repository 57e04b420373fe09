#!/usr/bin/env bash
# sm90v3 device call 2: full test_sm90 on x (B halves via cp.async.ca) and y (warp-coalesced B
# copies via shfl, ptxas C7515), sm90_bench (25 samples, median, L2 flushed, cuBLASLt FP16 in
# the same process) for base, x, y on the same shapes.
set -u
cd "$(dirname "$0")"
export LD_LIBRARY_PATH=$PWD/lib:${LD_LIBRARY_PATH:-}
O=${OUT:-out}; mkdir -p $O
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader | tee $O/gpu.txt
for v in x y; do
  timeout 120 ./$v/test_sm90 > $O/tests_$v.txt 2>&1; echo "tests $v rc $?"
  grep -E "^\[  (PASSED|FAILED) |FAILED \]" $O/tests_$v.txt | head -8
done
S="128x7168x2048 256x7168x2048 512x4096x7168 128x4096x7168 128x7168x16384 1024x7168x16384 4096x4096x4096 8192x8192x8192"
for v in base x y; do
  timeout 170 ./$v/sm90_bench $S > $O/bench_$v.txt 2>&1; echo "bench $v rc $?"
done
for v in base x y; do echo "== $v"; awk '/^shape/ {printf "%s %s | ", $2, $5} / auto / {print $2,$3,$4,$5,$6,$7}' $O/bench_$v.txt; done
for v in base x y; do echo "== $v v2 best per shape"; awk '/^shape/ {if (s) print s, b, bd; s=$2; b=1e9} / v2 / && !/\[/ {for(i=1;i<=NF;i++) if($i=="us"){t=$(i-1); break}; if (t+0<b) {b=t+0; bd=$0}} END {print s, b, bd}' $O/bench_$v.txt | cut -c1-100; done
