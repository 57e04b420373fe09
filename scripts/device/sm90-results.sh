#!/usr/bin/env bash
# The sm90 kernel's evidence on an H200 (bench/results/h200/2026-12-01-sm90-nstep/README.md):
#   build       the sm90-only preset with ptxas -v; SASS counts of the two-phase objects
#   tests       ctest -L gpu (every sm90 path and tile, references, peers, measurement)
#   paths       both shipped sweep configs with the two paths forced (sm90-fused, sm90-2phase;
#               20 cold samples, in-process): the table behind the path rule
#   sanitize    compute-sanitizer memcheck, racecheck and synccheck of both paths
#   sanitize-nstep  memcheck and racecheck of the two-phase path on shapes whose tiles have a
#               BN % 64 tail (128x144, 128x80, 128x48) and on N % 8 != 0 (not in the default list)
#   sweep       both shipped sweep configs with --peers dequant-f16,f16-predeq (adaptive, cold)
#   peers       4096^3, 8192^3, 2048x8192x8192 with --peers all (the mainloop beside cuBLASLt)
#   default     the default problem (README's sample output)
#   fit         the tool's sweep of configs/sm90-fit.json: every configuration the two cost models
#               choose from (kernel_config "all"), the data they are fitted to and that
#               tests/unit/sm90_host_test.cpp checks them against (tests/fixtures/sm90-fit/fit.json;
#               not in the default list)
#   heldout     the same on configs/sm90-fit-heldout.json, 10 shapes outside the fit: the models'
#               held-out check (tests/fixtures/sm90-fit/heldout.json; not in the default list)
#   limits      ncu of the fused kernel at 16x57344x8192 and 128x7168x16384: speed of light,
#               memory, warp states and per-SASS-line stall samples, summarised by ncu_loop.py
#               (not in the default list: run it by name)
# Usage, from the repository root: OUT=out bash scripts/device/sm90-results.sh [STEP ...]
# (default: all, about 8 minutes on one H200). Leaves one archive, $OUT/sm90-results.tgz.
# NVFP4_REVISION=<commit> is baked into the build (and so the reports) where the tree's .git is
# not its own.
set -uo pipefail
OUT=${OUT:-out}; R=$OUT/sm90-results; mkdir -p "$R"
steps=("$@"); ((${#steps[@]})) || steps=(build tests paths sanitize sweep peers default)
PY=$(command -v python3)
BIN=build-sm90/nvfp4bench

step_build() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv,noheader | tee "$R/smi.txt"
  # Python kernels are left out of this build: kernel-py-results.sh builds and checks them.
  cmake --preset sm90-only -DNVFP4_PYTHON="$PY" -DNVFP4_SM90_PTXAS_VERBOSE=ON -DNVFP4_PYTHON_KERNELS=OFF \
    -DNVFP4_REVISION="${NVFP4_REVISION:-}" > "$R/cmake.log" 2>&1 || return 1
  cmake --build build-sm90 -j"$(nproc)" > "$R/build.log" 2>&1 || { grep -B2 -A8 -m5 error "$R/build.log"; return 1; }
  grep -E "Compiling entry|Used|spill" "$R/build.log" | grep -A2 "mainloop_kernel" | sed 's/ptxas info *: //' > "$R/ptxas_f16.txt"
  grep -E "Compiling entry|Used|spill" "$R/build.log" | grep -A2 "fused_kernel" | sed 's/ptxas info *: //' > "$R/ptxas_fused.txt"
  local obj sass=/tmp/sm90-two-phase.sass
  obj=$(find build-sm90 -name 'mainloop.cu.o' | head -1)
  cuobjdump --dump-sass "$obj" > "$sass"
  echo "two-phase objects: HGMMA $(grep -c HGMMA "$sass"), LDL $(grep -c LDL "$sass"), STL $(grep -c STL "$sass"), UTMALDG $(grep -c UTMALDG "$sass"), UTMASTG $(grep -c UTMASTG "$sass")" | tee "$R/sass_counts.txt"
  obj=$(find build-sm90 -name 'fused.cu.o' -path '*nvfp4_sm90*' | head -1)
  cuobjdump --dump-sass "$obj" > "$sass"
  echo "fused objects: HGMMA $(grep -c HGMMA "$sass"), LDL $(grep -c LDL "$sass"), STL $(grep -c STL "$sass"), UBLKCP $(grep -c UBLKCP "$sass"), UTMASTG $(grep -c UTMASTG "$sass")" | tee -a "$R/sass_counts.txt"
}

step_tests() {
  timeout 300 ctest --test-dir build-sm90 -L gpu --output-on-failure > "$R/ctest-gpu.log" 2>&1
  echo "ctest -L gpu rc=$?"; grep -E "tests passed|\(Failed\)" "$R/ctest-gpu.log"
}

step_paths() {
  mkdir -p "$R/paths"
  local c
  for c in gpumode-nvfp4-gemm llm-layers; do
    # The shipped config with both paths forced, fixed samples and no peers.
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); c["name"]+="-paths"
c["defaults"].update(kernels=["sm90-fused","sm90-2phase"], peers=[], iters=20)
json.dump(c, open(sys.argv[2],"w"), indent=1)' configs/$c.json "$R/paths/$c-paths.json"
    timeout 200 $BIN sweep "$R/paths/$c-paths.json" --no-isolate --json "$R/paths/$c.json" --overwrite \
      --progress lines > "$R/paths/$c.log" 2>&1
    echo "paths $c rc=$?"; grep -E '^sweep: [0-9]' "$R/paths/$c.log"
  done
}

step_sanitize() {
  mkdir -p "$R/sanitize"
  local CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer} tool s m n k l f kern
  for kern in sm90-2phase sm90-fused; do
    for tool in memcheck racecheck synccheck; do
      for s in "1000 1000 512 2" "300 520 1024 1"; do
        read -r m n k l <<<"$s"; f="$R/sanitize/$kern-$tool-${m}x${n}x${k}x${l}.txt"
        timeout 60 "$CS" --tool $tool --error-exitcode 9 $BIN --m $m --n $n --k $k --l $l \
          --kernel $kern --reference cpu-exact --iters 1 --warmup 0 > "$f" 2>&1
        echo "$kern $tool ${m}x${n}x${k}x${l}: rc=$? $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f")"
      done
    done
  done
}

step_sanitize-nstep() {
  mkdir -p "$R/sanitize-nstep"
  local CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer} tool s m n k f
  for tool in memcheck racecheck; do
    for s in "4096 576 512" "2048 576 512" "1024 576 512" "1024 574 512"; do
      read -r m n k <<<"$s"; f="$R/sanitize-nstep/sm90-2phase-$tool-${m}x${n}x${k}.txt"
      timeout 50 "$CS" --tool $tool --error-exitcode 9 $BIN --m $m --n $n --k $k --kernel sm90-2phase \
        --reference cpu-exact --iters 1 --warmup 0 > "$f" 2>&1
      echo "$tool ${m}x${n}x${k}: rc=$? $(grep -m1 '^config' "$f") $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f")"
    done
  done
}

step_sweep() {
  mkdir -p "$R/sweep"
  local c
  for c in gpumode-nvfp4-gemm llm-layers; do
    timeout 280 $BIN sweep configs/$c.json --peers dequant-f16,f16-predeq --json "$R/sweep/$c.json" \
      --overwrite --progress lines > "$R/sweep/$c.log" 2>&1
    echo "sweep $c rc=$?"; grep -E '^sweep: [0-9]' "$R/sweep/$c.log"
  done
}

step_peers() {
  mkdir -p "$R/peers"
  local s m n k
  for s in "4096 4096 4096" "8192 8192 8192" "2048 8192 8192"; do
    read -r m n k <<<"$s"
    timeout 90 $BIN --m $m --n $n --k $k --peers all --json "$R/peers/${m}x${n}x${k}.json" \
      > "$R/peers/${m}x${n}x${k}.txt" 2>&1
    echo "${m}x${n}x${k} rc=$?"
  done
}

# In one process (--no-isolate): thousands of short cases, each a configuration the kernel lists.
step_fit() {
  mkdir -p "$R/fit"
  timeout 590 $BIN sweep configs/sm90-fit.json --no-isolate --json "$R/fit/fit.json" --overwrite \
    --progress lines > "$R/fit/fit.log" 2>&1
  echo "fit rc=$?"; grep -E '^sweep: [0-9]' "$R/fit/fit.log"
}

step_heldout() {
  mkdir -p "$R/fit"
  timeout 300 $BIN sweep configs/sm90-fit-heldout.json --no-isolate --json "$R/fit/heldout.json" \
    --overwrite --progress lines > "$R/fit/heldout.log" 2>&1
  echo "heldout rc=$?"; grep -E '^sweep: [0-9]' "$R/fit/heldout.log"
}

step_limits() {
  mkdir -p "$R/limits"
  local sh rep
  for sh in 16x57344x8192 128x7168x16384; do
    rep="$R/limits/ncu-$sh"
    # the first fused_kernel launch: the registered choice's warm-up (fused at both shapes)
    read -r m n k <<<"${sh//x/ }"
    timeout 120 ncu --kernel-name regex:fused_kernel --launch-count 1 --section SpeedOfLight \
      --section MemoryWorkloadAnalysis --section WarpStateStats --section SourceCounters \
      --section ComputeWorkloadAnalysis --section LaunchStats -o "$rep" -f \
      $BIN --m "$m" --n "$n" --k "$k" --iters 3 --warmup 0 > "$rep.log" 2>&1 || { echo "ncu $sh failed"; return 1; }
    ncu -i "$rep.ncu-rep" --page details --csv > "$rep-details.csv"
    ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > /tmp/ncu-source.csv
    "$PY" scripts/device/ncu_loop.py /tmp/ncu-source.csv --trim "$rep-stalls.csv" | tee "$rep-summary.txt"
    rm -f "$rep.ncu-rep" "$rep.log"
  done
}

step_default() {
  timeout 60 $BIN --json "$R/default.json" > "$R/default.txt" 2>&1; echo "default rc=$?"; cat "$R/default.txt"
}

for s in "${steps[@]}"; do
  echo "== $s"; "step_$s" || { echo "step $s failed"; break; }
done
# The device tool returns at most 8 files: everything in one archive.
(cd "$OUT" && tar czf sm90-results.tgz sm90-results && rm -rf sm90-results)
