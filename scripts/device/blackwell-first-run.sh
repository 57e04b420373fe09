#!/usr/bin/env bash
# The first run on a datacenter Blackwell GPU (compute capability 10.0 or 10.3, the sm_100f
# family the sm100 kernel is built for): does the mission's core work?
# Run from the repository root with the CUDA 13 toolkit in /usr/local/cuda; python3 on PATH
# should import torch with CUDA (for the --kernel-py steps; without it they say so).
#
#   OUT=out bash scripts/device/blackwell-first-run.sh [STEP ...]   (default: every step)
#   bash scripts/device/blackwell-first-run.sh --help               (this text)
#   bash scripts/device/blackwell-first-run.sh --dry-run [STEP ...] (the steps, checked, not run)
#
#   gate      refuses with one line, exit 2, unless GPU 0 reports compute capability 10.0 or
#             10.3 (kernels/sm100/targets.hpp: what sm_100f code runs on)
#   build     scripts/setup --tests against python3 (--kernel-py built in), sm_100f included
#   tests     ctest, every test: the host tests 4 at a time, then the GPU tests one at a time
#   inspect   scripts/inspect-sm100 (SASS counts, registers, spills)
#   bisect    build/sm100_bisect: structured probes through sm100 that name which hardware
#             behaviour differs from the documented one, and how - (a) the K step inside the
#             swizzle atom, (b) the tcgen05.cp lane mapping, (c) the scale placement in tensor
#             memory, (d) the epilogue (docs/kernels.md, "The bisect"); also run after step
#             shapes whenever an sm100 case failed there and this step was not asked for
#   shapes    sm100 and cublaslt-nvfp4 on every GPU MODE shape (configs/gpumode-nvfp4-gemm.json),
#             each fully verified against cpu-exact, plus --verify-exact against each other;
#             sm100 also at L = 3 and on ragged shapes; split-K shapes twice, C compared bit for bit
#   kernelpy  GPU MODE's seed submission (torch._scaled_mm, rebuilt as docs/python.md says) and
#             the example submissions through --kernel-py on the three benchmark shapes
#   sweep     the GPU MODE sweep with every peer (--kernel auto and sm100)
#   sanitize  compute-sanitizer memcheck, racecheck, synccheck of sm100 on small shapes
#
# Writes everything under $OUT/blackwell-first-run/ with a README.md of what ran and how it
# went; exit 1 when a step failed. NVFP4_FIRST_RUN_ANY_GPU=1 runs the steps on another GPU
# (to try the script; the sm100 and cublaslt-nvfp4 steps then record that they cannot run).
set -uo pipefail
if [[ ${1:-} == --help || ${1:-} == -h ]]; then
  sed -n '2,/^set -uo pipefail/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
fi
dry_run=0
if [[ ${1:-} == --dry-run ]]; then dry_run=1; shift; fi
OUT=${OUT:-out}
R=$OUT/blackwell-first-run
BUILD=${BUILD:-build}  # the build tree (step build makes build/, the README's)
BIN=$BUILD/nvfp4bench
PY=$(command -v python3 || true)
CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer}
CFG=configs/gpumode-nvfp4-gemm.json
all_steps="gate build tests inspect bisect shapes kernelpy sweep sanitize"
steps=("$@"); ((${#steps[@]})) || read -ra steps <<< "$all_steps"
for s in "${steps[@]}"; do  # names checked before the gate (the steps are defined below)
  case " $all_steps " in
    *" $s "*) ;;
    *) echo "blackwell-first-run: unknown step '$s' (steps: $all_steps; --help)" >&2; exit 2 ;;
  esac
done
if ((dry_run)); then
  echo "blackwell-first-run: would run ${steps[*]} into $OUT/blackwell-first-run (gate: GPU 0 of compute capability 10.0 or 10.3)"
  exit 0
fi

# --- the gate: first, always, before anything is written ------------------------------------
gpu=$(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader -i 0 2>/dev/null | head -1)
cc=${gpu##*, }
# The same rule as sm100's availability (kernels/sm100/targets.hpp): sm_100f code runs on
# compute capability 10.0 (B200, GB200) and 10.3 (B300, GB300), on nothing else.
need="needs compute capability 10.0 or 10.3 (B200, GB200, B300, GB300: the sm_100f family)"
if [[ -z $gpu ]]; then
  echo "blackwell-first-run: no NVIDIA GPU here (nvidia-smi found none); $need" >&2
  exit 2
fi
blackwell=0
[[ $cc == 10.0 || $cc == 10.3 ]] && blackwell=1
if ((!blackwell)) && [[ ${NVFP4_FIRST_RUN_ANY_GPU:-0} != 1 ]]; then
  echo "blackwell-first-run: GPU 0 is ${gpu%, *} (compute capability $cc); $need" >&2
  exit 2
fi

SUMMARY=$R/summary.txt
failed=0
note() { echo "$*" | tee -a "$SUMMARY"; }
result() {  # NAME RC [EXPECTED_RC]; RC taken before NAME's $(...) runs, which would reset $?
  if [[ $2 -eq ${3:-0} ]]; then note "ok      $1"; else note "FAILED  $1 (rc $2)"; failed=$((failed + 1)); fi
}
need_build() { [[ -x $BIN ]] || { note "FAILED  no $BIN: run step build first"; failed=$((failed + 1)); return 1; }; }
shapes() {  # "m n k l" per GPU MODE case
  "$PY" -c 'import json,sys
for c in json.load(open(sys.argv[1]))["cases"]:
    s = c["shape"]; print(s["m"], s["n"], s["k"], s.get("l", 1))' "$CFG"
}

step_gate() {
  note "gpu     $gpu"
  nvidia-smi > "$R/nvidia-smi.txt" 2>&1
  git log -1 --format='commit  %H %s' | tee -a "$SUMMARY"
}

step_build() {
  local extra=()
  if [[ -n $PY ]] && "$PY" -c 'import pybind11' 2>/dev/null; then
    extra=(-DNVFP4_PYTHON="$PY" -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)")
  fi
  scripts/setup --tests "${extra[@]}" > "$R/build.log" 2>&1
  result "build (scripts/setup --tests ${extra[*]})" $?
}

step_tests() {
  need_build || return
  # The host tests side by side, the GPU tests one at a time (they share the one GPU).
  timeout 1200 ctest --test-dir "$BUILD" -LE gpu -j4 --output-on-failure > "$R/ctest-cpu.log" 2>&1
  local rc=$?
  result "ctest -LE gpu (host tests): $(grep -E 'tests passed|tests failed' "$R/ctest-cpu.log")" $rc
  timeout 1800 ctest --test-dir "$BUILD" -L gpu --output-on-failure > "$R/ctest-gpu.log" 2>&1
  rc=$?
  result "ctest -L gpu (GPU tests): $(grep -E 'tests passed|tests failed' "$R/ctest-gpu.log")" $rc
}

step_inspect() {
  need_build || return
  scripts/inspect-sm100 "$BUILD" > "$R/inspect-sm100.txt" 2>&1
  result "scripts/inspect-sm100" $?
}

# The bisect (build/sm100_bisect): its verdict in the summary, with the line of each behaviour
# that differs (how it differs); the whole report in bisect.txt.
bisect_ran=0
sm100_wrong=0
step_bisect() {
  need_build || return
  bisect_ran=1
  timeout 600 "$BUILD/sm100_bisect" > "$R/bisect.txt" 2>&1
  local rc=$?
  result "sm100 bisect: $(grep -E '^(verdict|sm100_bisect): ' "$R/bisect.txt" | head -1 | cut -c1-160)" $rc
  grep -F ': DIFFERS: ' "$R/bisect.txt" | sed 's/^/        /' | tee -a "$SUMMARY"
}

run_case() {  # NAME ARGS...: one report, its verify line in the summary
  local name=$1; shift
  timeout 600 "$BIN" "$@" --json "$R/shapes/$name.json" > "$R/shapes/$name.log" 2>&1
  local rc=$?
  [[ $rc -ne 0 && $* == *"--kernel sm100 --reference cpu-exact"* ]] && sm100_wrong=1
  result "$name: $(grep -E '^(verify|error)' "$R/shapes/$name.log" | head -1 | cut -c1-110)" $rc
}

step_shapes() {
  need_build || return
  mkdir -p "$R/shapes"
  local m n k l
  while read -r m n k l; do
    run_case "sm100-${m}x${n}x${k}" --m $m --n $n --k $k --l $l --kernel sm100 --reference cpu-exact
    run_case "cublaslt-nvfp4-${m}x${n}x${k}" --m $m --n $n --k $k --l $l --kernel sm100 \
      --reference cublaslt-nvfp4 --verify-exact 4096
  done < <(shapes)
  for s in "128 256 256 3" "512 512 7168 3" "200 96 512 3" "1 160 1024 1" "129 4064 2048 2"; do
    read -r m n k l <<< "$s"
    run_case "sm100-${m}x${n}x${k}-L$l" --m $m --n $n --k $k --l $l --kernel sm100 --reference cpu-exact \
      --dist normal --seed 7
  done
  # Split-K shapes (the last-arriver reduction): two runs, the outputs bit-identical.
  for s in "128 7168 16384" "128 4096 7168" "128 1536 7168"; do
    read -r m n k <<< "$s"
    for i in 1 2; do
      "$BIN" --m $m --n $n --k $k --kernel sm100 --reference cpu-exact --iters 50 \
        --save-tensors "$R/shapes/t$i" > "$R/shapes/determinism-${m}x${n}x${k}-$i.log" 2>&1
    done
    cmp -s "$R/shapes/t1/c.npy" "$R/shapes/t2/c.npy"
    result "sm100 ${m}x${n}x${k} (split-K) bit-identical over two runs" $?
    rm -rf "$R/shapes/t1" "$R/shapes/t2"
  done
}

step_kernelpy() {
  need_build || return
  mkdir -p "$R/kernel-py"
  if ! "$PY" -c 'import torch; assert torch.cuda.is_available()' 2>/dev/null; then
    note "FAILED  kernel-py: $PY cannot import torch with CUDA"; failed=$((failed + 1)); return
  fi
  # Rebuilt at run time by the tests' own code (docs/python.md): not part of this repository.
  # Without the diff (NVFP4_SEED_SUBMISSION_DIFF) the seed submission is skipped, and said so.
  local diff
  diff=$("$PY" -c 'import sys; sys.path.insert(0, "tests/cli"); from kernel_py_test import seed_diff; print(seed_diff())')
  if [[ -f $diff ]]; then
    "$PY" -c 'import sys; sys.path.insert(0, "tests/cli"); from kernel_py_test import rebuild_from_diff
open(sys.argv[1], "w").write(rebuild_from_diff(open(sys.argv[2], encoding="utf-8").read()))' \
      "$R/kernel-py/seed_submission.py" "$diff" > "$R/kernel-py/seed-rebuild.log" 2>&1
    result "seed submission rebuilt from $diff" $?
  else
    note "skipped seed submission: no diff at $diff (set NVFP4_SEED_SUBMISSION_DIFF)"
  fi
  local sub path m n k rc
  for s in "128 7168 16384" "128 4096 7168" "128 7168 2048"; do
    read -r m n k <<< "$s"
    for sub in seed_submission torch_submission triton_submission; do
      path=examples/submissions/$sub.py; [[ $sub == seed_submission ]] && path=$R/kernel-py/seed_submission.py
      [[ -f $path ]] || continue
      timeout 600 "$BIN" --kernel-py "$path" --kernel py:$sub --m $m --n $n --k $k --peers cublaslt-nvfp4 \
        --json "$R/kernel-py/$sub-${m}x${n}x${k}.json" > "$R/kernel-py/$sub-${m}x${n}x${k}.log" 2>&1
      rc=$?
      result "$sub ${m}x${n}x${k}: $(grep -E '^(verify|error|nvfp4bench: )' "$R/kernel-py/$sub-${m}x${n}x${k}.log" | head -1 | cut -c1-90)" $rc
    done
  done
}

step_sweep() {
  need_build || return
  mkdir -p "$R/sweep"
  local kern
  for kern in auto sm100; do
    timeout 1800 "$BIN" sweep "$CFG" --kernels $kern --peers all --json "$R/sweep/gpumode-$kern.json" \
      --overwrite --progress lines > "$R/sweep/gpumode-$kern.log" 2>&1
    local rc=$?
    result "sweep $CFG --kernels $kern --peers all: $(grep -E '^sweep: ' "$R/sweep/gpumode-$kern.log" | tail -1)" $rc
  done
}

step_sanitize() {
  need_build || return
  mkdir -p "$R/sanitize"
  local tool s m n k l
  for tool in memcheck racecheck synccheck; do
    for s in "128 256 256 1" "200 96 512 3" "128 1536 7168 1"; do
      read -r m n k l <<< "$s"
      timeout 900 "$CS" --tool $tool --error-exitcode 9 "$BIN" --m $m --n $n --k $k --l $l --kernel sm100 \
        --reference cpu-exact --iters 1 --warmup 0 > "$R/sanitize/$tool-${m}x${n}x${k}.log" 2>&1
      local rc=$?
      result "compute-sanitizer $tool sm100 ${m}x${n}x${k} L=$l: $(grep -m1 'ERROR SUMMARY' "$R/sanitize/$tool-${m}x${n}x${k}.log")" $rc
    done
  done
}

for s in "${steps[@]}"; do
  declare -F "step_$s" > /dev/null || { echo "blackwell-first-run: unknown step '$s'" >&2; exit 2; }
done
mkdir -p "$R"; : > "$SUMMARY"
for s in "${steps[@]}"; do
  echo "== $s"; t0=$(date +%s)
  "step_$s"
  echo "== $s: $(( $(date +%s) - t0 )) s"
done
if ((sm100_wrong && !bisect_ran)); then  # sm100's output was wrong: say which behaviour, if one
  echo "== bisect (an sm100 case failed in step shapes)"
  step_bisect
fi

{
  echo "# Blackwell first run ($(date -u +%F))"
  echo
  echo "\`OUT=$OUT bash scripts/device/blackwell-first-run.sh ${steps[*]}\` on $gpu."
  ((blackwell)) || echo "NOT a Blackwell GPU (NVFP4_FIRST_RUN_ANY_GPU=1): sm100 and cublaslt-nvfp4 cannot run here."
  echo
  echo "$failed step(s) failed. One line per check (logs and reports beside this file:"
  echo "build.log, ctest-cpu.log, ctest-gpu.log, inspect-sm100.txt, bisect.txt, shapes/, kernel-py/, sweep/, sanitize/):"
  echo
  echo '```'
  cat "$SUMMARY"
  echo '```'
} > "$R/README.md"
echo "blackwell-first-run: $failed failed; $R/README.md"
((failed == 0))
