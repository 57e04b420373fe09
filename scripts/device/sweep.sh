#!/usr/bin/env bash
# Device check of sweeps (issues 6, 7.3, 7.4), run from the repository root after a build in build/:
#   1. the GPU MODE config end to end (--kernel auto via the config, verification, all peers when the
#      tool has --peers), report + JSONL;
#   2. the same cases (10 fixed samples, no peers) killed with SIGTERM after a few records, then
#      --resume: exit 130, no case lost, none run twice (checked with python);
#   3. isolation on the GPU: a case killed by its timeout mid-kernel, the next case still passes;
#   4. --devices all (spreads over 2+ GPUs; on one GPU it says so);
#   5. --no-isolate on the smoke config (one CUDA context for every case);
#   6. PNG charts of the GPU MODE report.
# Writes under $OUT (default out/); prints a short summary.
set -uo pipefail
OUT=${OUT:-out}
mkdir -p "$OUT/sweep"
W=$OUT/sweep
BIN=build/nvfp4bench
PY=${NVFP4_PYTHON:-python3}
log() { echo "== $*"; }
fail=0
check() { if eval "$1"; then echo "ok: $2"; else echo "FAILED: $2"; fail=$((fail + 1)); fi; }

if [[ ! -x $BIN ]]; then
  cmake -S . -B build -G Ninja -DNVFP4_CUDA_ARCHS="${NVFP4_CUDA_ARCHS:-90a-real}" -DNVFP4_BUILD_TESTS=OFF >/dev/null &&
    cmake --build build -j"$(nproc)" --target nvfp4bench >/dev/null || { echo "build failed"; exit 3; }
fi
log "machine"; nvidia-smi -L; gpus=$(nvidia-smi -L | grep -c '^GPU')
peers=()
# No pipe into grep -q here: with pipefail its early exit gives the tool SIGPIPE.
if [[ $($BIN --help 2>&1) == *--peers* ]]; then peers=(--peers all); echo "peers: all"; else echo "peers: the tool has no --peers yet"; fi
CFG=${SWEEP_CONFIG:-configs/gpumode-nvfp4-gemm.json}  # another config for a dry run elsewhere

log "1. GPU MODE sweep"
t0=$(date +%s%N)
$BIN sweep $CFG "${peers[@]}" --json $W/gpumode.json --overwrite > $W/gpumode.log 2>&1
rc=$?
echo "rc=$rc in $(( ($(date +%s%N) - t0) / 1000000 )) ms"; grep -E '^\[|^sweep: [0-9]' $W/gpumode.log | cut -c1-160
check "[[ $rc == 0 ]]" "GPU MODE sweep exit 0 (every case passed)"

# Steps 2 and 4 check mechanics, not speed: the same cases with 10 fixed samples and no peers.
$PY -c "import json,sys; c=json.load(open(sys.argv[1])); c['defaults'].update(iters=10, warmup=2); c['defaults'].pop('peers', None); json.dump(c, open(sys.argv[2], 'w'))" $CFG $W/quick.json

log "2. SIGTERM after 4 records, then --resume"
rm -f $W/killed.json $W/killed.jsonl
$BIN sweep $W/quick.json --json $W/killed.json > $W/killed-1.log 2>&1 &
pid=$!
for _ in $(seq 1 1200); do
  [[ -f $W/killed.jsonl ]] && (( $(wc -l < $W/killed.jsonl) >= 5 )) && break
  sleep 0.1
done
kill -TERM $pid; wait $pid; rc1=$?
tail -2 $W/killed-1.log
cp $W/killed.json $W/killed-at-interrupt.json
$BIN sweep $W/quick.json --json $W/killed.json --resume > $W/killed-2.log 2>&1; rc2=$?
grep -E '^sweep: ' $W/killed-2.log | head -2
check "[[ $rc1 == 130 ]]" "interrupted sweep exits 130 (got $rc1)"
check "[[ $rc2 == 0 ]]" "resumed sweep exits 0 (got $rc2)"
$PY - "$W" <<'PY' && echo "ok: resume lost and repeated nothing" || { echo "FAILED: resume check"; exit_py=1; }
import json, sys
w = sys.argv[1]
lines = [json.loads(l) for l in open(f"{w}/killed.jsonl") if l.strip()]
head, recs = lines[0], lines[1:]
idx = [r["sweep"]["index"] for r in recs]
first = json.load(open(f"{w}/killed-at-interrupt.json"))
final = json.load(open(f"{w}/killed.json"))
n = final["sweep"]["cases_in_config"]
before = [c["sweep"]["index"] for c in first["cases"]]
print(f"  interrupted report: {len(before)} cases {before}, complete={first['sweep']['complete']}, "
      f"interrupted={first['sweep']['interrupted']}")
print(f"  JSONL: {len(recs)} records for {n} cases; final report complete={final['sweep']['complete']}")
assert sorted(idx) == list(range(n)), f"records {sorted(idx)}"
assert len(set(idx)) == len(idx), "a case ran twice"
assert [c["sweep"]["index"] for c in final["cases"]] == list(range(n))
assert 0 < len(before) < n and not first["sweep"]["complete"]
# the cases finished before the signal are the same records in the final report
for c in first["cases"]:
    assert final["cases"][c["sweep"]["index"]] == c
assert all(c["disposition"] == "passed" for c in final["cases"]), [c["message"] for c in final["cases"]]
PY
[[ ${exit_py:-0} == 1 ]] && fail=$((fail + 1))

log "3. isolation: a case killed by its timeout mid-kernel, then the next case"
cat > $W/timeout.json <<'J'
{"cases": [{"name": "killed", "shape": {"m": 8192, "n": 8192, "k": 16384, "l": 4}, "kernels": ["naive"], "timeout_s": 2},
           {"name": "after", "shape": {"m": 512, "n": 4096, "k": 512}}]}
J
$BIN sweep $W/timeout.json --json $W/timeout-report.json --overwrite > $W/timeout.log 2>&1; rc=$?
grep -E '^\[' $W/timeout.log | cut -c1-160
check "[[ $rc == 3 ]] && grep -q 'error .*timed out after 2 s' $W/timeout.log && grep -q 'passed .*after' $W/timeout.log" \
  "timed-out case recorded as error, the next case passed (exit 3)"

log "4. --devices all ($gpus GPU(s))"
$BIN sweep $W/quick.json --devices all --json $W/devices.json --overwrite > $W/devices.log 2>&1; rc=$?
grep -E '^sweep: ' $W/devices.log | head -3
$PY - "$W/devices.json" "$gpus" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); gpus = int(sys.argv[2])
used = sorted({c["sweep"]["device"] for c in r["cases"]})
print(f"  devices used: {used}; cases: {len(r['cases'])}, passed: {r['sweep']['counts']['passed']}")
if gpus < 2:
    print("  one GPU here: --devices all runs one worker (spreading needs 2 or more)")
assert used == list(range(gpus)) or (gpus < 2 and used == [0]), used
PY
check "[[ $? == 0 && $rc == 0 ]]" "--devices all used every GPU and every case passed"

log "5. --no-isolate (smoke config, one process)"
$BIN sweep configs/smoke.json --no-isolate --json $W/smoke-inprocess.json --overwrite > $W/smoke.log 2>&1; rc=$?
tail -1 $W/smoke.log
check "[[ $rc == 0 ]]" "in-process sweep exit 0"

log "6. charts"
if scripts/plot $W/gpumode.json --out $OUT/plots; then
  ls -la $OUT/plots | tail -n +2
else
  echo "no charts here (see above); plot locally: scripts/plot $W/gpumode.json --out plots"
fi
(cd $W && tar czf ../sweep-reports.tgz *.json *.jsonl *.log 2>/dev/null) && rm -rf "$W"
echo "== summary: $fail check(s) failed"
exit $((fail > 0))
