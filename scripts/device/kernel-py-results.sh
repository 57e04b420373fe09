#!/usr/bin/env bash
# --kernel-py on the GPU backend, the evidence behind docs/python.md (bench/results/h200/README.md
# names the committed folder it made):
#   build     the tool against the Python that holds torch (-DNVFP4_PYTHON), tests on
#   tests     ctest -R kernel_py: the host backend and the GPU backend (label gpu)
#   bench     both example submissions on GPU MODE's three benchmark shapes, --peers dequant-f16,
#             cold and rotate
#   seed      GPU MODE's seed submission (torch._scaled_mm), rebuilt from its diff (found as
#             docs/python.md says): its disposition on this GPU
#   sweep     configs/gpumode-nvfp4-gemm.json with both examples, --peers dequant-f16
#   overhead  an empty submission (returns c untouched) in hot mode: the Python call's floor
# Usage, from the repository root: OUT=out bash scripts/device/kernel-py-results.sh [STEP ...]
# (default: all, about 4 minutes on one H200). Leaves one archive, $OUT/kernel-py.tgz.
set -uo pipefail
OUT=${OUT:-out}; R=$OUT/kernel-py; mkdir -p "$R"
steps=("$@"); ((${#steps[@]})) || steps=(build tests bench seed sweep overhead)
PY=$(command -v python3)  # must import torch with CUDA: the embedded Python is this one
BUILD=build-py
BIN=$BUILD/nvfp4bench
EX=examples/submissions
BENCH_SHAPES=("128 7168 16384" "128 4096 7168" "128 7168 2048")  # GPU MODE's benchmark shapes

step_build() {
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$R/smi.txt"
  "$PY" -c 'import torch, triton; print("torch", torch.__version__, "triton", triton.__version__)' | tee -a "$R/smi.txt"
  cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVFP4_BUILD_TESTS=ON \
    -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_PYTHON="$PY" -DNVFP4_PYTHON_KERNELS=ON \
    -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)" > "$R/cmake.log" 2>&1 || { tail -20 "$R/cmake.log"; return 1; }
  grep "Python kernels" "$R/cmake.log"
  cmake --build $BUILD -j"$(nproc)" --target nvfp4bench > "$R/build.log" 2>&1 || { grep -m5 -A8 error "$R/build.log"; return 1; }
}

step_tests() {
  timeout 400 ctest --test-dir $BUILD -R kernel_py -V > "$R/ctest.log" 2>&1
  echo "ctest -R kernel_py rc=$?"; grep -E "Test +#|tests passed|skipped '" "$R/ctest.log"
}

step_bench() {
  local ex shape m n k mode
  for ex in torch_submission triton_submission; do
    for shape in "${BENCH_SHAPES[@]}"; do
      read -r m n k <<< "$shape"
      for mode in cold rotate; do
        $BIN --kernel-py $EX/$ex.py --kernel py:$ex --m $m --n $n --k $k --peers dequant-f16 \
          --mode $mode --json "$R/bench-$ex-${m}x${n}x${k}-$mode.json" > "$R/bench-$ex-${m}x${n}x${k}-$mode.log" 2>&1
        echo "$ex ${m}x${n}x${k} $mode rc=$? $(grep -E '^kernel ' "$R/bench-$ex-${m}x${n}x${k}-$mode.log" | cut -c1-60) | $(grep -oE 'kernel [0-9.]+x faster' "$R/bench-$ex-${m}x${n}x${k}-$mode.log")"
      done
    done
  done
}

step_seed() {
  # Rebuilt at run time by the tests' own code, from where the tests look for it
  # (docs/python.md): the seed's code is not part of this repository.
  "$PY" -c 'import os, sys; sys.path.insert(0, "tests/cli"); from kernel_py_test import rebuild_from_diff, seed_diff
d = seed_diff(); os.path.exists(d) or sys.exit(f"seed: no diff at {d} (NVFP4_SEED_SUBMISSION_DIFF)")
open(sys.argv[1], "w").write(rebuild_from_diff(open(d, encoding="utf-8").read()))' /tmp/seed_submission.py || return 1
  local m n k
  read -r m n k <<< "${BENCH_SHAPES[0]}"
  $BIN --kernel-py /tmp/seed_submission.py --kernel py:seed_submission --m $m --n $n --k $k \
    --json "$R/seed-${m}x${n}x${k}.json" > "$R/seed.log" 2>&1
  echo "seed rc=$?"; cat "$R/seed.log"
}

step_sweep() {
  "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); c["name"]+="-kernel-py"
c["defaults"]["kernels"] = ["py:torch_submission", "py:triton_submission"]
json.dump(c, open(sys.argv[2], "w"), indent=1)' configs/gpumode-nvfp4-gemm.json "$R/gpumode-kernel-py.json"
  # In one process (--no-isolate): a child per case would import torch again, about 3 s each.
  timeout 420 $BIN --kernel-py $EX/torch_submission.py --kernel-py $EX/triton_submission.py \
    sweep "$R/gpumode-kernel-py.json" --peers dequant-f16 --json "$R/sweep-gpumode-kernel-py.json" \
    --overwrite --progress lines --no-isolate > "$R/sweep.log" 2>&1
  echo "sweep rc=$?"; grep -E '^sweep: ' "$R/sweep.log"
}

step_overhead() {
  printf 'def custom_kernel(data):\n    return data[-1]  # nothing enqueued: the call alone\n' > /tmp/empty_submission.py
  $BIN --kernel-py /tmp/empty_submission.py --kernel py:empty_submission --m 128 --n 256 --k 256 \
    --mode hot --json "$R/overhead-empty-hot.json" > "$R/overhead.log" 2>&1
  echo "overhead rc=$? (1 expected: c is left poisoned)"; grep -E '^kernel ' "$R/overhead.log"
}

for s in "${steps[@]}"; do
  echo "== $s"; t0=$(date +%s)
  "step_$s"; echo "== $s: $(( $(date +%s) - t0 )) s"
done
tar -czf "$OUT/kernel-py.tgz" -C "$OUT" kernel-py && rm -rf "$R"
