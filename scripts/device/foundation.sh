#!/usr/bin/env bash
# Device check of the foundation (issue 2): the README's two commands on the bare machine, then
# the naive kernel against the exact reference on the GPU MODE test shapes (L=1 and L=3) and on
# ragged shapes, each writing a JSON report.  Usage (on the device): scripts/device/foundation.sh
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/reports"
log() { echo "== $*"; }
log "machine"; nvidia-smi -L; nvcc --version | tail -1
log "README main command"; (scripts/setup && build/nvfp4bench --json "$OUT/reports/default.json") 2>&1 | tail -8
log "README test command"; (scripts/setup --tests && ctest --test-dir build --output-on-failure) > "$OUT/ctest.log" 2>&1
echo "ctest rc=$?"; grep -E "tests passed|tests failed|Failed|Skipped \*|\(Failed\)" "$OUT/ctest.log" | tail -15
log "naive vs cpu-exact, GPU MODE test shapes"
shapes="128,256,256 128,1536,7168 128,3072,1536 256,7168,256 256,7168,2048 2304,4608,7168 384,7168,2304 512,512,7168 512,4096,512 512,1536,7168"
fails=0
for L in 1 3; do for s in $shapes; do IFS=, read m n k <<<"$s"
  build/nvfp4bench --m $m --n $n --k $k --l $L --kernel naive --reference cpu-exact --seed $RANDOM \
    --json "$OUT/reports/naive-${m}x${n}x${k}-L$L.json" > /tmp/o.txt 2>&1 || { fails=$((fails+1)); cat /tmp/o.txt; }
  grep -E "^verify" /tmp/o.txt | sed "s/^/${m}x${n}x${k} L=$L /" | cut -c1-110
done; done
log "ragged shapes, normal dist"
for s in 200,300,512,3 129,131,80,2 1,8,16,1 1000,999,1024,1; do IFS=, read m n k L <<<"$s"
  build/nvfp4bench --m $m --n $n --k $k --l $L --kernel naive --reference cpu-exact --dist normal --seed $RANDOM \
    --json "$OUT/reports/naive-${m}x${n}x${k}-L$L-normal.json" > /tmp/o.txt 2>&1 || { fails=$((fails+1)); cat /tmp/o.txt; }
  grep -E "^verify" /tmp/o.txt | sed "s/^/${m}x${n}x${k} L=$L /" | cut -c1-110
done
echo "naive failures: $fails"
log "cpu reference benchmark"; build/bench_cpu_reference 2>&1 | tail -1 || true
(cd "$OUT" && tar czf foundation-reports.tgz reports && rm -rf reports)
