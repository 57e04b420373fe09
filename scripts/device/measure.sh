#!/usr/bin/env bash
# Device checks of the measurement, with the real binary, after a build in build/:
#  1. stability: 128x7168x16384 timed cold 5 times in a row; median-to-median spread must be < 2%
#  2. cold vs hot (and rotate, graph) on the three GPU MODE benchmark shapes
#  3. one device report validated against schemas/report.schema.json
#  4. compare: two runs of the same build (expect exit 0), a planted 10% slowdown (expect 1),
#     a planted verification failure (expect 1)
#  5. the GPU tests of the timing modes (ctest -L gpu -R GpuMeasure)
# Usage (repo root, on the device): scripts/device/measure.sh   [KERNEL=auto|naive|...]
# Writes reports and logs under $OUT; prints a short summary; exit 1 when a check fails.
set -uo pipefail
OUT=${OUT:-out}
R="$OUT/measure-reports"
mkdir -p "$R"
BIN=${BIN:-build/nvfp4bench}
KERNEL=${KERNEL:-auto}
PY=${PY:-python3}
COMMON=(--kernel "$KERNEL" --verify-sample 20000 --max-time 5 ${EXTRA:-})
# Shapes (overridable for a dry run on a small machine: STAB=64,256,512 SHAPES="64,128,256").
STAB=${STAB:-128,7168,16384}
SHAPES=${SHAPES:-128,7168,16384 128,4096,7168 128,7168,2048}
fails=0
log() { echo "== $*"; }
check() {  # check NAME CONDITION-RC
  if [ "$2" -eq 0 ]; then echo "PASS $1"; else echo "FAIL $1"; fails=$((fails + 1)); fi
}
# One line per report: shape, mode, median, noise, samples, why it stopped, clock.
summary() {
  "$PY" - "$@" <<'PYEOF'
import json, sys
for path in sys.argv[1:]:
    r = json.load(open(path)); c = r["cases"][0]; p = c["problem"]; t = c["kernel_timing"]; s = t["stats"]
    k = t["clock"]
    print(f'{p["m"]}x{p["n"]}x{p["k"]} {c["kernel"]["name"]:<8} {t["mode"]:<6} {s["median_us"]:10.2f} us '
          f'±{100*s["rse_median"]:.2f}% n={s["count"]:<5} {t["stop_reason"]:<20} copies={t["copies"]:<3} '
          f'x{t["launches_per_sample"]:<3} SM {k["source"]} {k["median_mhz"]:.0f} MHz '
          f'(dropped {k["dropped_low_clock"]}) {c["disposition"]}')
PYEOF
}

log "machine"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv,noheader 2>&1 | head -2
[ -x "$BIN" ] || { echo "no $BIN: build first (cmake -S . -B build -G Ninja && cmake --build build)"; exit 2; }

log "GPU tests of the timing modes"
ctest --test-dir build -L gpu -R GpuMeasure --output-on-failure > "$OUT/measure-ctest.log" 2>&1
rc=$?; grep -E "tests passed|tests failed|Skipped|\(Failed\)" "$OUT/measure-ctest.log" | head -5
check "ctest GpuMeasure" $rc

log "stability: $STAB cold, 5 runs in a row"
IFS=, read -r sm sn sk <<<"$STAB"
for i in 1 2 3 4 5; do
  "$BIN" --m "$sm" --n "$sn" --k "$sk" --mode cold "${COMMON[@]}" --json "$R/stab-$i.json" \
    > "$R/stab-$i.txt" 2>&1 || { echo "run $i: exit $?"; tail -3 "$R/stab-$i.txt"; }
done
summary "$R"/stab-*.json
"$PY" - "$R"/stab-*.json <<'PYEOF'
import json, sys
med = [json.load(open(p))["cases"][0]["kernel_timing"]["stats"]["median_us"] for p in sys.argv[1:]]
spread = (max(med) - min(med)) / min(med)
print(f"medians {', '.join(f'{m:.2f}' for m in med)} us: spread {100*spread:.2f}% (must be < 2%)")
sys.exit(0 if spread < 0.02 else 1)
PYEOF
check "cold median spread < 2%" $?

log "cold vs hot vs rotate vs graph, GPU MODE benchmark shapes"
for shape in $SHAPES; do
  IFS=, read -r m n k <<<"$shape"
  for mode in cold hot rotate graph; do
    "$BIN" --m "$m" --n "$n" --k "$k" --mode "$mode" "${COMMON[@]}" --json "$R/${m}x${n}x${k}-$mode.json" \
      > "$R/${m}x${n}x${k}-$mode.txt" 2>&1 || { echo "${m}x${n}x${k} $mode: exit $?"; tail -3 "$R/${m}x${n}x${k}-$mode.txt"; }
  done
  summary "$R/${m}x${n}x${k}"-{cold,hot,rotate,graph}.json
  "$PY" - "$R/${m}x${n}x${k}"-{cold,hot,rotate,graph}.json <<'PYEOF'
import json, sys
med = dict(zip(["cold", "hot", "rotate", "graph"],  # the order of the arguments
               [json.load(open(p))["cases"][0]["kernel_timing"]["stats"]["median_us"] for p in sys.argv[1:]]))
print(f'  hot/cold {med["hot"]/med["cold"]:.3f}  rotate/cold {med["rotate"]/med["cold"]:.3f}  '
      f'graph/cold {med["graph"]/med["cold"]:.3f}')
PYEOF
done

log "schema"
"$PY" scripts/validate_report.py "$R/stab-1.json" "$R/${m}x${n}x${k}-graph.json"
check "device reports match the schema" $?

log "compare: two runs of the same build"
"$BIN" compare "$R/stab-1.json" "$R/stab-2.json" > "$R/compare-same.md" 2>&1
rc=$?; grep -E "^\| [0-9]|regression" "$R/compare-same.md"; echo "exit $rc"
[ $rc -eq 0 ]; check "compare same build -> 0" $?

log "compare: planted 10% slowdown, planted verification failure"
"$PY" - "$R/stab-1.json" "$R/slow.json" "$R/failing.json" <<'PYEOF'
import copy, json, sys
r = json.load(open(sys.argv[1]))
slow = copy.deepcopy(r)
s = slow["cases"][0]["kernel_timing"]["stats"]
for key in s:
    if key.endswith("_us"):
        s[key] *= 1.10  # every time 10% longer: the same relative noise
json.dump(slow, open(sys.argv[2], "w"))
bad = copy.deepcopy(r)
bad["cases"][0]["disposition"] = "incorrect"
json.dump(bad, open(sys.argv[3], "w"))
PYEOF
"$BIN" compare "$R/stab-1.json" "$R/slow.json" > "$R/compare-slow.md" 2>&1
rc=$?; grep -E "^\| [0-9]|regression" "$R/compare-slow.md"; echo "exit $rc"
[ $rc -eq 1 ]; check "compare planted slowdown -> 1" $?
"$BIN" compare "$R/stab-1.json" "$R/failing.json" > "$R/compare-failing.md" 2>&1
rc=$?; grep -E "^\| [0-9]" "$R/compare-failing.md"; echo "exit $rc"
[ $rc -eq 1 ]; check "compare passed->failed -> 1" $?

log "formats from one device run"
"$BIN" --m "$m" --n "$n" --k "$k" --mode graph "${COMMON[@]}" --format md --output - 2>/dev/null | tail -3

(cd "$OUT" && tar czf measure-reports.tgz measure-reports && rm -rf measure-reports)
echo "measure checks failed: $fails"
[ $fails -eq 0 ]
