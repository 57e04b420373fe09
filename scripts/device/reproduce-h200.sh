#!/usr/bin/env bash
# Reproduces the committed H200 results (bench/results/h200/README.md says which committed report
# each step remakes). Run from the repository root on an H200 machine with the CUDA 13 toolkit in
# /usr/local/cuda; the --devices check of step `tool` needs 2 GPUs (on one it says so).
#
#   OUT=out [ARCHIVE=1] bash scripts/device/reproduce-h200.sh [STEP ...]   (default: every step, in order)
#
#   build       the README main command on the bare machine (scripts/setup && build/nvfp4bench,
#               -> readme-main/), then the same build/ with tests and the development benchmarks:
#               scripts/setup --tests -DNVFP4_BUILD_BENCH=ON -DNVFP4_SM90_PTXAS_VERBOSE=ON
#   foundation  naive vs cpu-exact on the ten GPU MODE test shapes at L=1 and L=3 and on four
#               ragged shapes (random seeds), one JSON report each; bench_cpu_reference
#   measure     scripts/device/measure.sh (stability, cold/hot/rotate/graph, schema, compare)
#   sanitize    scripts/device/sanitize.sh (memcheck, racecheck, synccheck, planted bugs)
#   tool        ctest reports/plugin_gpu/cli, the oversized-problem refusal, scripts/device/sweep.sh
#   sm90        scripts/device/sm90-results.sh (tests, both paths on every shipped shape, the sweeps
#               with peers, the large shapes with every peer, the benchmark shapes in graph mode,
#               stream-K beside the pick, sanitizers of both paths),
#               then memcheck/racecheck of the registered kernel from build/
#   verdict     scripts/device/sm90-results.sh build loop default tests sanitize sanitize-configs
#               configs and scripts/device/verdict.sh old modes cheats on its build (the verdict's
#               first round, superseded by verdict.sh's own steps), then the Blackwell first-run
#               script's refusal (the first-run-refusal folder keeps that)
#   kernelpy    scripts/device/kernel-py-results.sh (--kernel-py on the GPU backend: its own build
#               against the python3 on PATH, which must have torch; the seed submission's diff
#               from $NVFP4_SEED_SUBMISSION_DIFF)
#
# What you need: one H200 (a second GPU only for the --devices check of `tool`), the CUDA 13
# toolkit, Debian 12 (scripts/setup installs the rest with apt-get; `kernelpy` also needs a
# python3 with torch), about 20 GB of disk and some 30 minutes for every step (sm90 takes the
# longest, about 10). Steps after `build` use its build/, so run `build` first on the same
# machine; then any steps, in one call or several. Each step writes under $OUT/<step>/ and
# prints a summary line; ARCHIVE=1 packs $OUT into one $OUT/reproduce-h200-<steps>.tgz (handy to
# copy the results off a remote machine).
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT"
steps=("$@"); ((${#steps[@]})) || steps=(build foundation measure sanitize tool sm90 verdict kernelpy)
CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
log() { echo "== $*"; }
need_build() { [[ -x build/nvfp4bench && -x build/tests/gpu/sm90_test ]] || { echo "no build/ with tests: run step build first"; return 2; }; }

step_build() {
  local d="$OUT/readme-main"; mkdir -p "$d"
  log "machine"; nvidia-smi -L
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
  log "README main command (bare machine)"
  (scripts/setup && build/nvfp4bench --json "$d/default.json") > "$d/readme-main-command.log" 2>&1
  echo "rc=$?"; tail -7 "$d/readme-main-command.log"
  log "build with tests and development benchmarks"
  scripts/setup --tests -DNVFP4_BUILD_BENCH=ON -DNVFP4_SM90_PTXAS_VERBOSE=ON > "$OUT/build.log" 2>&1
  local rc=$?; echo "rc=$rc"; [[ $rc -eq 0 ]] || { grep -B2 -A3 -m5 error "$OUT/build.log"; return 1; }
}

step_foundation() {
  need_build || return 2
  local d="$OUT/foundation"; mkdir -p "$d"
  {
    log "naive vs cpu-exact, GPU MODE test shapes"
    local shapes="128,256,256 128,1536,7168 128,3072,1536 256,7168,256 256,7168,2048 2304,4608,7168 384,7168,2304 512,512,7168 512,4096,512 512,1536,7168"
    local fails=0 m n k L s
    for L in 1 3; do for s in $shapes; do IFS=, read -r m n k <<<"$s"
      build/nvfp4bench --m $m --n $n --k $k --l $L --kernel naive --reference cpu-exact --seed $RANDOM \
        --json "$d/naive-${m}x${n}x${k}-L$L.json" > /tmp/o.txt 2>&1 || { fails=$((fails+1)); cat /tmp/o.txt; }
      grep -E "^verify" /tmp/o.txt | sed "s/^/${m}x${n}x${k} L=$L /" | cut -c1-110
    done; done
    log "ragged shapes, normal dist"
    for s in 200,300,512,3 129,131,80,2 1,8,16,1 1000,999,1024,1; do IFS=, read -r m n k L <<<"$s"
      build/nvfp4bench --m $m --n $n --k $k --l $L --kernel naive --reference cpu-exact --dist normal --seed $RANDOM \
        --json "$d/naive-${m}x${n}x${k}-L$L-normal.json" > /tmp/o.txt 2>&1 || { fails=$((fails+1)); cat /tmp/o.txt; }
      grep -E "^verify" /tmp/o.txt | sed "s/^/${m}x${n}x${k} L=$L /" | cut -c1-110
    done
    echo "naive failures: $fails"
    log "cpu reference benchmark"; build/bench_cpu_reference 2>&1 | tail -1
  } 2>&1 | tee "$d/foundation.log" | grep -E "^==|failures|best"
}

step_measure() {
  need_build || return 2
  mkdir -p "$OUT/measure"
  OUT="$OUT/measure" bash scripts/device/measure.sh > "$OUT/measure/measure.log" 2>&1
  echo "measure.sh rc=$?"; grep -E "^(PASS|FAIL)|measure checks failed" "$OUT/measure/measure.log"
}

step_sanitize() {
  need_build || return 2
  mkdir -p "$OUT/sanitize-run"
  OUT="$OUT/sanitize-run" CASE_TIMEOUT=90 bash scripts/device/sanitize.sh > "$OUT/sanitize-run/sanitize.log" 2>&1
  echo "sanitize.sh rc=$?"; grep -vE "^ok " "$OUT/sanitize-run/sanitize.log" | tail -12
}

step_tool() {
  need_build || return 2
  local d="$OUT/tool"; mkdir -p "$d"
  ctest --test-dir build -R "^(reports|plugin_gpu|cli)$" --output-on-failure > "$d/ctest.log" 2>&1
  echo "ctest rc=$?"; grep -E "tests passed|\(Failed\)" "$d/ctest.log"
  build/nvfp4bench --m 8 --n 8 --k 137438953472 > "$d/oom.log" 2>&1
  echo "oversized: exit $? $(tail -1 "$d/oom.log")"
  OUT="$d" bash scripts/device/sweep.sh > "$d/sweep.log" 2>&1
  echo "sweep.sh rc=$?"; grep -E "^(ok|FAILED|== summary)" "$d/sweep.log"
}

step_sm90() {
  need_build || return 2
  local d="$OUT/sm90"; mkdir -p "$d"
  # The current evidence (bench/results/h200/sm90-standing, replaced in place; sm90-results.sh's
  # steps fit and heldout remake the fixtures' sources): its own script, its own sm90-only build.
  OUT="$d" bash scripts/device/sm90-results.sh build tests paths sanitize sweep peers graph default streamk
  # The registered kernel from build/ under the sanitizers (the cost models' held-out check is
  # sm90-results.sh's step heldout).
  local tool s m n k l f
  for tool in memcheck racecheck; do
    for s in "128 7168 2048 1" "1000 1000 512 2"; do
      read -r m n k l <<<"$s"
      f="$d/sanitize-$tool-${m}x${n}x${k}x${l}.txt"
      timeout 60 "$CS" --tool $tool --error-exitcode 9 build/nvfp4bench --m $m --n $n --k $k --l $l \
        --kernel sm90-fused --reference cpu-exact --iters 1 --warmup 0 > "$f" 2>&1
      echo "$tool ${m}x${n}x${k}x${l}: rc=$? $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f") $(grep -m1 '^verify' "$f")"
    done
  done
}

step_verdict() {
  local d="$OUT/verdict"; mkdir -p "$d"
  OUT="$d" bash scripts/device/verdict.sh old > "$d/old.log" 2>&1 &
  local old=$!
  OUT="$d" TESTS_TIMEOUT=330 bash scripts/device/sm90-results.sh build loop default tests sanitize sanitize-configs configs
  wait $old; tail -3 "$d/old.log"
  BUILD=build-sm90 OUT="$d" bash scripts/device/verdict.sh modes cheats
  bash scripts/device/blackwell-first-run.sh > "$d/first-run-h200.log" 2>&1; echo "first-run rc=$? (2 on a non-Blackwell GPU)"
}

step_kernelpy() {
  local d="$OUT/kernelpy"; mkdir -p "$d"
  OUT="$d" bash scripts/device/kernel-py-results.sh
}

for s in "${steps[@]}"; do
  case $s in
    build|foundation|measure|sanitize|tool|sm90|verdict|kernelpy) log "step $s"; t0=$SECONDS; "step_$s"; echo "step $s: rc=$? ($((SECONDS-t0)) s)" ;;
    *) echo "unknown step '$s' (build foundation measure sanitize tool sm90 verdict kernelpy)"; exit 2 ;;
  esac
done
if [[ ${ARCHIVE:-0} == 1 ]]; then
  name="reproduce-h200-$(IFS=-; echo "${steps[*]}").tgz"
  tar czf "/tmp/$name" -C "$OUT" . && find "$OUT" -mindepth 1 -delete && mv "/tmp/$name" "$OUT/$name"
fi
ls -la "$OUT"
