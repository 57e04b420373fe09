#!/usr/bin/env bash
# The sm90 kernel's evidence on an H200 (bench/results/h200/sm90-standing/README.md, replaced in place):
#   build       the sm90-only preset with ptxas -v; SASS counts of the two-phase objects, and the
#               fused consumer chain per K block (bench/sm90_fused_count.py: chain_count.txt)
#   tests       ctest -L gpu (every sm90 path and tile, references, peers, measurement);
#               TESTS_REGEX=RE runs only the GPU tests it matches
#   paths       both shipped sweep configs with the two paths forced (sm90-fused, sm90-2phase;
#               20 cold samples, in-process): the table behind the path rule
#   sanitize    compute-sanitizer memcheck, racecheck and synccheck of both paths on ragged shapes
#               (racecheck scoped to the kernel under test)
#   sanitize-configs  racecheck of the fused path at every M tile, split 1 and its largest split,
#               pinned with --kernel-config (shapes whose ring wraps), and one shape whose CTAs
#               run several split-K units
#   configs     both shipped sweeps, 5 samples, no peers: the configuration of every case beside
#               the one the committed standing sweep recorded (bench/results/h200/sm90-standing/sweep/)
#   loop        bench/sm90_loop_bench (the fused consumer loop alone, its variants)
#   splitk      bench/sm90_splitk_bench (split-K's reduction alone, every form, last-bulk's
#               bulk-copy sum among them; splitk.txt; not in the default list, about 1 minute)
#   sanitize-nstep  memcheck and racecheck of the two-phase path on shapes whose tiles have a
#               BN % 64 tail (128x144, 128x80, 128x48) and on N % 8 != 0 (not in the default list)
#   sweep       both shipped sweep configs with --peers dequant-f16,f16-predeq (adaptive, cold),
#               and the cost models' error on those picks (model.txt, bench/sm90_fit --residuals)
#   peers       4096^3, 8192^3, 2048x8192x8192 with --peers all (the mainloop beside cuBLASLt)
#   default     the default problem (README's sample output)
#   fit         the tool's sweep of configs/sm90-fit.json: every configuration the two cost models
#               choose from (kernel_config "all"), the data they are fitted to and that
#               tests/unit/sm90_host_test.cpp checks them against (tests/fixtures/sm90-fit/fit.json;
#               not in the default list; FIT_SHARD=I/N runs a part: the whole is > 10 minutes)
#   fit-fused   the fused cases of that sweep alone (about one call), then bench/sm90_fit's refit
#               of them (not in the default list)
#   picks       PICKS=FILE: the sweep bench/sm90_fit --picks-sweep wrote, the picks a refit changes
#               before and after, and their table (not in the default list)
#   refit       fit-fused, then picks on the sweep of its refit's changed picks, in one call (not
#               in the default list)
#   heldout     the same on configs/sm90-fit-heldout.json, 10 shapes outside the fit: the models'
#               held-out check (tests/fixtures/sm90-fit/heldout.json; not in the default list)
#   limits      ncu of the fused kernel at 16x57344x8192 and 128x7168x16384: speed of light,
#               memory, warp states and per-SASS-line stall samples, summarised by ncu_loop.py
#               (not in the default list: run it by name)
#   splits      128x7168x2048 and 128x7168x16384: every fused configuration and the two-phase
#               128x256/128x128 ones, pinned with --kernel-config, in graph and cold mode, then
#               the chooser's own pick (splits.txt; not in the default list)
#   graph       the three GPU MODE benchmark shapes in graph mode beside dequant-f16 and f16-predeq
#   streamk     stream-K beside the chooser's pick on the shipped shapes with M <= 512 (not in
#               the default list)
#   kernels     ncu's duration of the A prepass and the fused kernel at those two shapes, the
#               chooser's configuration, first call (kernels.txt; not in the default list)
#   stamps      bench/sm90_stamps (the fused kernel's time line per unit: fill, K loop, split-K,
#               epilogue, the wait for the A prepass) at the chooser's pick on the three GPU MODE
#               benchmark shapes and 16x57344x8192 (stamps/*.txt; not in the default list)
#   ab          this tree beside another, case by case in turns: AB_TREE=DIR, a source tree of
#               the other revision (`git archive REV | tar -x -C DIR` where .git is at hand), built
#               into DIR/build-sm90; AB_CASES=FILE, lines "M N K L [CONFIG]" (CONFIG pinned with
#               --kernel-config, else each tree's own pick); AB_ROUNDS rounds (default 2), each
#               timing every case with the other tree then this one, cold, every case verified;
#               ab/ab.txt: the table, this vs other per round, and the geomean (not in the
#               default list). AB_OTHER_ENV="VAR=VALUE ..." instead of AB_TREE: the other side
#               is this build run with that environment (no second build); AB_MODE: the timing
#               mode (default cold); AB_NAME: the folder under the results (default ab). Every
#               line is checked before anything is timed: M N K L positive integers, CONFIG one
#               that both trees' sm90 lists for the shape (--list-configs)
# Usage, from the repository root: OUT=out bash scripts/device/sm90-results.sh [STEP ...]
# (default: all, about 8 minutes on one H200). Leaves one archive, $OUT/sm90-results.tgz.
# NVFP4_REVISION=<commit> is baked into the build (and so the reports) where the tree's .git is
# not its own.
set -uo pipefail
OUT=${OUT:-out}; R=$OUT/sm90-results; mkdir -p "$R"
steps=("$@"); ((${#steps[@]})) || steps=(build tests paths sanitize sweep peers graph default)
PY=$(command -v python3)
BIN=${SM90_BIN:-build-sm90/nvfp4bench}  # SM90_BIN: another build of the tool (tests/cli/sm90_results_ab_test.py)

step_build() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv,noheader | tee "$R/smi.txt"
  # Python kernels where this Python has pip's pybind11 (the GPU tests then include the Python
  # kernels' verdict and guard tests; kernel-py-results.sh times the submissions).
  local pyb=(); pyb=(-Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir 2>/dev/null)")
  cmake --preset sm90-only -DNVFP4_PYTHON="$PY" -DNVFP4_SM90_PTXAS_VERBOSE=ON "${pyb[@]}" \
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
  echo "fused objects: HGMMA $(grep -c HGMMA "$sass"), LDL $(grep -c LDL "$sass"), STL $(grep -c STL "$sass"), UBLKCP $(grep -c UBLKCP "$sass"), UTMALDG $(grep -c UTMALDG "$sass"), UTMASTG $(grep -c UTMASTG "$sass")" | tee -a "$R/sass_counts.txt"
  # issue 48's count: the fused consumer's chain per K block, from this SASS (chain_count.txt)
  "$PY" bench/sm90_fused_count.py --check "$sass" | tee "$R/chain_count.txt"
}

step_tests() {
  # about 4 minutes, racecheck_gpu's four sanitizer runs included
  local only=(); [[ -n ${TESTS_REGEX:-} ]] && only=(-R "$TESTS_REGEX")
  timeout "${TESTS_TIMEOUT:-420}" ctest --test-dir build-sm90 -L gpu "${only[@]}" --output-on-failure > "$R/ctest-gpu.log" 2>&1
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
  local CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer} tool s m n k l f kern kname
  # Both paths as the chooser runs them, on ragged shapes (M, N not multiples of the tiles);
  # racecheck looks at the kernel under test only (cuBLAS's own kernels are not ours to judge).
  # fused: every tool at 520x136x768 (its 9-stage ring wraps) and racecheck at 1000x1000x512 L=2;
  # two-phase: every tool at 1000x1000x512 L=2.
  local runs=("sm90-fused memcheck 520 136 768 1" "sm90-fused racecheck 520 136 768 1"
              "sm90-fused synccheck 520 136 768 1" "sm90-fused racecheck 1000 1000 512 2"
              "sm90-2phase memcheck 1000 1000 512 2" "sm90-2phase racecheck 1000 1000 512 2"
              "sm90-2phase synccheck 1000 1000 512 2")
  for s in "${runs[@]}"; do
    read -r kern tool m n k l <<<"$s"
    kname=fused_kernel; [[ $kern == sm90-2phase ]] && kname=mainloop_kernel
    f="$R/sanitize/$kern-$tool-${m}x${n}x${k}x${l}.txt"
    timeout 60 "$CS" --tool $tool --kernel-name kns=$kname --error-exitcode 9 $BIN --m $m --n $n \
      --k $k --l $l --kernel $kern --reference cpu-exact --iters 1 --warmup 0 > "$f" 2>&1
    echo "$kern $tool ${m}x${n}x${k}x${l}: rc=$? $(grep -m1 '^config' "$f") $(grep -m1 -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$f")"
  done
}

# racecheck of the fused path at every M tile the chooser weighs - 256 and 128 at 520x136x768,
# 64 at 100x136x1536, 32 and 16 at 20x136x1536 (ragged M and N; at split 1 every ring wraps) -
# each at split 1 and at the largest split listed there (--list-configs), pinned with
# --kernel-config.
step_sanitize-configs() {
  mkdir -p "$R/sanitize-configs"
  local CS=${COMPUTE_SANITIZER:-/usr/local/cuda/bin/compute-sanitizer} s m n k cfg f i=0
  for s in "520 136 768" "100 136 1536" "20 136 1536"; do
    read -r m n k <<<"$s"
    $BIN --kernel sm90-fused --m $m --n $n --k $k --list-configs > "$R/sanitize-configs/list-${m}x${n}x${k}.txt"
    "$PY" - "$R/sanitize-configs/list-${m}x${n}x${k}.txt" > /tmp/pick.txt <<'PYEOF'
import re, sys
tiles = {}
for line in open(sys.argv[1]):
    mt = re.match(r"\s*(fused (\d+)x128 split (\d+))\s*$", line)
    if mt: tiles.setdefault(int(mt.group(2)), []).append((int(mt.group(3)), mt.group(1)))
for t in sorted(tiles):
    v = sorted(tiles[t]); print(v[0][1]); print(v[-1][1]) if v[-1] != v[0] else None
PYEOF
    while read -r cfg; do
      i=$((i + 1)); f="$R/sanitize-configs/racecheck-${m}x${n}x${k}-$i.txt"
      timeout 60 "$CS" --tool racecheck --kernel-name kns=fused_kernel --error-exitcode 9 $BIN --m $m --n $n --k $k \
        --kernel sm90-fused --kernel-config "$cfg" --reference cpu-exact --iters 1 --warmup 0 > "$f" 2>&1
      echo "${m}x${n}x${k} '$cfg': rc=$? $(grep -m1 -E 'RACECHECK SUMMARY' "$f") $(grep -m1 '^verify' "$f" | cut -c1-40)"
    done < /tmp/pick.txt
  done
  # Several split-K units per CTA (the shapes above give each CTA one): where a shared-memory
  # flag drew racecheck reports in the fused kernel (docs/kernels.md, history: "split-K broadcast").
  f="$R/sanitize-configs/racecheck-520x136x768x8-split3.txt"
  timeout 60 "$CS" --tool racecheck --kernel-name kns=fused_kernel --error-exitcode 9 $BIN --m 520 --n 136 --k 768 \
    --l 8 --kernel sm90-fused --kernel-config "fused 128x128 split 3" --reference cpu-exact --iters 1 --warmup 0 > "$f" 2>&1
  echo "520x136x768 L=8 'fused 128x128 split 3': rc=$? $(grep -m1 -E 'RACECHECK SUMMARY' "$f") $(grep -m1 '^verify' "$f" | cut -c1-40)"
}

# The two shipped sweeps (fixed 5 samples, no peers): the configuration chosen for every case,
# set beside the one the committed standing sweep recorded (bench/results/h200/sm90-standing/sweep/).
step_configs() {
  mkdir -p "$R/configs"
  local c
  for c in gpumode-nvfp4-gemm llm-layers; do
    "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); c["name"]+="-configs"
c["defaults"].update(peers=[], iters=5)
json.dump(c, open(sys.argv[2],"w"), indent=1)' configs/$c.json "$R/configs/$c-configs.json"
    timeout 250 $BIN sweep "$R/configs/$c-configs.json" --no-isolate --json "$R/configs/$c.json" --overwrite \
      --progress lines > "$R/configs/$c.log" 2>&1
    echo "configs $c rc=$?"; grep -E '^sweep: [0-9]' "$R/configs/$c.log"
    "$PY" - "$R/configs/$c.json" "bench/results/h200/sm90-standing/sweep/$c.json" <<'PYEOF'
import json, sys
def key(c):
    p = c["problem"]; return (p["m"], p["n"], p["k"], p["l"], p["dist"], p["seed"])
new = {key(c): c.get("kernel", {}).get("configuration") for c in json.load(open(sys.argv[1]))["cases"]}
old = {key(c): c.get("kernel", {}).get("configuration") for c in json.load(open(sys.argv[2]))["cases"]}
same = sum(new.get(k) == v for k, v in old.items())
print(f"  same configuration as before: {same} of {len(old)} cases")
for k, v in old.items():
    if new.get(k) != v: print(f"  {k}: before {v!r}, now {new.get(k)!r}")
PYEOF
  done
}

# The fused consumer K loop alone and its variants (bench/sm90_loop_bench.cu).
step_loop() {
  cmake --build build-sm90 --target sm90_loop_bench -j"$(nproc)" > "$R/loop-build.log" 2>&1 || return 1
  build-sm90/sm90_loop_bench 2048 | tee "$R/loop_bench.txt"
}

step_splitk() {
  cmake --build build-sm90 --target sm90_splitk_bench -j"$(nproc)" > "$R/splitk-build.log" 2>&1 || return 1
  timeout 240 build-sm90/sm90_splitk_bench 40 | tee "$R/splitk.txt"
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
  # The cost models against the picks just timed (each timing with both estimates): how far the
  # shipped coefficients are from the kernel as it is.
  build-sm90/sm90_fit "$R"/sweep/*.json --within 100 --residuals > "$R/sweep/model.txt" 2>&1
  echo "sm90_fit rc=$?"; grep -E "model:|estimate error, shipped" "$R/sweep/model.txt"
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

# The three GPU MODE benchmark shapes in graph mode (back-to-back launches captured in a CUDA
# graph, the way inference runs layers), the kernel beside both peers.
step_graph() {
  mkdir -p "$R/graph"
  local s m n k
  for s in "128 7168 16384" "128 4096 7168" "128 7168 2048"; do
    read -r m n k <<<"$s"
    timeout 90 $BIN --m $m --n $n --k $k --mode graph --peers dequant-f16,f16-predeq \
      --json "$R/graph/${m}x${n}x${k}.json" > "$R/graph/${m}x${n}x${k}.txt" 2>&1
    echo "graph ${m}x${n}x${k} rc=$? $(grep -m1 -E '^kernel ' "$R/graph/${m}x${n}x${k}.txt")"
  done
}

# Stream-K ('fused MTx128 stream-k W', listed, not chosen) beside the chooser's pick on every
# shipped shape with M <= 512 where it is listed for the pick's M tile, cold, one process each
# (streamk/streamk.txt; not in the default list).
step_streamk() {
  mkdir -p "$R/streamk"
  "$PY" scripts/device/shipped_shapes.py --max-m 512 > "$R/streamk/shapes.txt"
  local m n k l pick sk i=0
  while read -r m n k l; do
    i=$((i + 1))
    $BIN --kernel sm90 --m $m --n $n --k $k --l $l --json "$R/streamk/pick-$i.json" > /dev/null 2>&1
    pick=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["cases"][0]["kernel"]["configuration"])' "$R/streamk/pick-$i.json" 2>/dev/null)
    [[ $pick == fused* ]] || continue  # stream-K is the fused path's
    sk=$($BIN --kernel sm90 --m $m --n $n --k $k --l $l --list-configs 2>/dev/null |
         grep -o "$(echo "$pick" | sed -n 's/^\(fused [0-9]*x128\) .*/\1/p') stream-k [0-9]*" | head -1)
    [[ -n $sk ]] && $BIN --kernel sm90 --kernel-config "$sk" --m $m --n $n --k $k --l $l \
      --json "$R/streamk/sk-$i.json" > /dev/null 2>&1
  done < "$R/streamk/shapes.txt"
  "$PY" - "$R/streamk" <<'PYEOF' | tee "$R/streamk/streamk.txt"
import glob, json, os, sys
d = sys.argv[1]
print("| shape | pick | pick us | stream-k | stream-k us | stream-k vs pick |")
print("|---|---|---|---|---|---|")
for f in sorted(glob.glob(d + "/pick-*.json"), key=lambda x: int(x.split("-")[-1][:-5])):
    c = json.load(open(f))["cases"][0]; p = c["problem"]; t = c["kernel_timing"]["stats"]["median_us"]
    g = f.replace("pick-", "sk-")
    if os.path.exists(g):
        s = json.load(open(g))["cases"][0]; u = s["kernel_timing"]["stats"]["median_us"]
        row = (s["kernel"]["configuration"] + " (" + s["disposition"] + ")", "%.1f" % u, "%.2fx" % (t / u))
    else:
        row = ("-", "-", "-")
    print("| %dx%dx%d | %s (%s) | %.1f | %s | %s | %s |" % (p["m"], p["n"], p["k"], c["kernel"]["configuration"], c["disposition"], t, *row))
PYEOF
}

# In one process (--no-isolate): thousands of short cases, each a configuration the kernel lists.
# 4077 cases, more than one call's 10 minutes: FIT_SHARD=0/2 and 1/2 run halves (merge them with
# `nvfp4bench merge`); an interrupted sweep's report still holds its finished cases.
step_fit() {
  mkdir -p "$R/fit"
  local shard=${FIT_SHARD:-0/1}
  timeout 590 $BIN sweep configs/sm90-fit.json --no-isolate --shard "$shard" --json "$R/fit/fit-${shard/\//-of-}.json" \
    --overwrite --progress lines > "$R/fit/fit-${shard/\//-of-}.log" 2>&1
  echo "fit shard $shard rc=$?"; grep -E '^sweep: [0-9]' "$R/fit/fit-${shard/\//-of-}.log"
}

# The fused path's part of `fit` alone (881 cases: every fused configuration, stream-K's
# included, on the 57 shapes fitted on the fused path), one call's worth: the data to refit the
# fused model to the kernel as it now is, and stream-K's timings above M = 512. Then
# bench/sm90_fit's refit of it, with the choices fixture's lines it would change (fit-fused.txt).
step_fit-fused() {
  mkdir -p "$R/fit"
  "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); c["name"]+="-fused"
c["cases"]=[dict(x, kernels=["sm90-fused"]) for x in c["cases"] if "sm90-fused" in x["kernels"]]
json.dump(c, open(sys.argv[2],"w"), indent=1)' configs/sm90-fit.json "$R/fit/sm90-fit-fused.json"
  timeout "${FIT_TIMEOUT:-540}" $BIN sweep "$R/fit/sm90-fit-fused.json" --no-isolate --json "$R/fit/fit-fused.json" --overwrite \
    --progress lines > "$R/fit/fit-fused.log" 2>&1
  echo "fit-fused rc=$?"; grep -E '^sweep: [0-9]' "$R/fit/fit-fused.log"
  build-sm90/sm90_fit "$R/fit/fit-fused.json" --choices tests/fixtures/sm90-choices.txt > "$R/fit/fit-fused.txt" 2>&1
  echo "sm90_fit rc=$?"; grep -E "model|error|picks|changes" "$R/fit/fit-fused.txt"
}

# The picks a refit changes, before and after, pinned, in one sweep: PICKS=FILE is the config
# bench/sm90_fit --picks-sweep wrote (docs/kernels.md, "Refitting the cost models"); picks.txt
# is the table, after vs before per shape and their geomean (not in the default list).
step_picks() {
  mkdir -p "$R/picks"
  [[ -f ${PICKS:-} ]] || { echo "picks: PICKS=FILE (a config of sm90_fit --picks-sweep) is not given"; return 1; }
  timeout "${PICKS_TIMEOUT:-560}" $BIN sweep "$PICKS" --no-isolate --json "$R/picks/picks.json" --overwrite --progress lines \
    > "$R/picks/picks.log" 2>&1
  echo "picks rc=$?"; grep -E '^sweep: [0-9]' "$R/picks/picks.log"
  "$PY" - "$R/picks/picks.json" <<'PYEOF' | tee "$R/picks/picks.txt"
import json, math, sys
rows = {}
for c in json.load(open(sys.argv[1]))["cases"]:
    p = c["problem"]; shape = "%dx%dx%d" % (p["m"], p["n"], p["k"]) + ("x%d" % p["l"] if p["l"] > 1 else "")
    us = c["kernel_timing"]["stats"]["median_us"] if c["disposition"] == "passed" else None
    rows.setdefault(shape, {})[c["sweep"]["name"]] = (c["kernel"].get("configuration", "?"), us, c["disposition"])
print("| shape | before | us | after | us | after vs before |")
print("|---|---|---|---|---|---|")
gains = []
for shape, r in rows.items():
    b, a = r.get("before", ("-", None, "missing")), r.get("after", ("-", None, "missing"))
    gain = b[1] / a[1] if b[1] and a[1] else None
    if gain: gains.append(gain)
    cell = lambda x: "%.1f" % x[1] if x[1] else x[2]
    print("| %s | %s | %s | %s | %s | %s |" % (shape, b[0], cell(b), a[0], cell(a), "%.2fx" % gain if gain else "-"))
if gains:
    print("\n%d shapes: geomean %.3fx, %.2f-%.2fx" % (len(gains), math.exp(sum(map(math.log, gains)) / len(gains)), min(gains), max(gains)))
PYEOF
}

# fit-fused, then the picks its refit would change, before and after, in the same call (the
# sweep is cut at FIT_TIMEOUT, default 380 s, and its finished cases kept; the picks sweep gets
# PICKS_TIMEOUT, default 150 s): whether the refit's picks are faster, before adopting it.
step_refit() {
  FIT_TIMEOUT=${FIT_TIMEOUT:-380} step_fit-fused
  build-sm90/sm90_fit "$R/fit/fit-fused.json" --choices tests/fixtures/sm90-choices.txt \
    --picks-sweep "$R/fit/picks-sweep.json" --picks-max "${PICKS_MAX:-30}" > /dev/null 2>&1 || {
    echo "refit: sm90_fit --picks-sweep failed"; return 1; }
  PICKS="$R/fit/picks-sweep.json" PICKS_TIMEOUT=${PICKS_TIMEOUT:-150} step_picks
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
    # --clock-control none: the card's clocks are left as they are (ncu otherwise locks them at base)
    timeout 120 ncu --clock-control none --kernel-name regex:fused_kernel --launch-count 1 --section SpeedOfLight \
      --section MemoryWorkloadAnalysis --section WarpStateStats --section SourceCounters \
      --section ComputeWorkloadAnalysis --section LaunchStats -o "$rep" -f \
      $BIN --m "$m" --n "$n" --k "$k" --iters 3 --warmup 0 > "$rep.log" 2>&1 || { echo "ncu $sh failed"; return 1; }
    ncu -i "$rep.ncu-rep" --page details --csv > "$rep-details.csv"
    ncu -i "$rep.ncu-rep" --page source --csv --print-source sass > /tmp/ncu-source.csv
    "$PY" scripts/device/ncu_loop.py /tmp/ncu-source.csv --trim "$rep-stalls.csv" | tee "$rep-summary.txt"
    rm -f "$rep.ncu-rep" "$rep.log"
  done
}

step_splits() {
  local k mode cfg
  for k in 2048 16384; do
    for mode in graph cold; do
      while read -r cfg; do
        $BIN --kernel sm90 --kernel-config "$cfg" --m 128 --n 7168 --k $k --mode $mode \
          --max-time 0.4 --min-time 0.2 --json "$R/split.json" > "$R/split.log" 2>&1
        "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cases"][0]
print(sys.argv[2], sys.argv[3], "%-36s" % sys.argv[4], c["disposition"], "%.2f" % c["kernel_timing"]["stats"]["median_us"])' \
          "$R/split.json" $k $mode "$cfg" 2>/dev/null || echo "$k $mode $cfg FAILED: $(tail -1 "$R/split.log")"
      done < <($BIN --kernel sm90 --m 128 --n 7168 --k $k --list-configs | grep -E "^fused|two-phase 128x(256|128) ")
      $BIN --kernel sm90 --m 128 --n 7168 --k $k --mode $mode --max-time 0.4 --min-time 0.2 | grep -E "^config|^kernel"
    done
  done | tee "$R/splits.txt"
  rm -f "$R/split.json" "$R/split.log"
}

step_kernels() {
  local k
  for k in 2048 16384; do
    echo "== 128x7168x$k"
    ncu --clock-control none --launch-count 2 -k 'regex:decode_a_kernel|fused_kernel' \
      --metrics gpu__time_duration.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      $BIN --kernel sm90 --m 128 --n 7168 --k $k --iters 1 --warmup 0 2>&1 | grep -E "decode_a_kernel|fused_kernel|gpu__time|throughput" | grep -v PROF
  done | tee "$R/kernels.txt"
}

step_stamps() {
  mkdir -p "$R/stamps"
  cmake --build build-sm90 --target sm90_stamps -j"$(nproc)" > "$R/stamps/build.log" 2>&1 || return 1
  local s m n k
  for s in "128 7168 16384" "128 4096 7168" "128 7168 2048" "16 57344 8192"; do
    read -r m n k <<<"$s"
    timeout 120 build-sm90/sm90_stamps $m $n $k 1 auto > "$R/stamps/${m}x${n}x${k}.txt" 2>&1
    echo "stamps ${m}x${n}x${k} rc=$?"; head -8 "$R/stamps/${m}x${n}x${k}.txt"
  done
}

# AB_CASES's lines, all of them, before a case is timed: a malformed line would otherwise cost a
# device call and show in the table as not_supported.
ab_check_cases() {
  local cases=$1 obin=$2 ln=0 bad=0 lbad m n k l cfg b what bins=("$BIN")
  [[ $obin != "$BIN" ]] && bins+=("$obin")
  while read -r m n k l cfg; do
    ln=$((ln + 1)); lbad=0
    [[ -z $m || $m == \#* ]] && continue
    for what in "M:$m" "N:$n" "K:$k" "L:${l:-1}"; do
      [[ ${what#*:} =~ ^[1-9][0-9]*$ ]] ||
        { echo "ab: $cases line $ln: ${what%%:*} is '${what#*:}', expected a positive integer (line: M N K L [CONFIG])"; lbad=1; bad=1; }
    done
    [[ -z $cfg || $lbad == 1 ]] && continue
    for b in "${bins[@]}"; do
      "$b" --kernel sm90 --m "$m" --n "$n" --k "$k" --l "${l:-1}" --list-configs 2>/dev/null | grep -Fxq -- "$cfg" ||
        { echo "ab: $cases line $ln: CONFIG '$cfg' is not one $b lists for ${m}x${n}x${k} L=${l:-1} (--list-configs; two-phase configurations end in 'group G')"; bad=1; }
    done
  done < "$cases"
  return $bad
}

step_ab() {
  local AB=$R/${AB_NAME:-ab}
  mkdir -p "$AB"
  local other=${AB_TREE:-} cases=${AB_CASES:-} rounds=${AB_ROUNDS:-2} envs=()
  # AB_OTHER_ENV="VAR=VALUE ...": the other side is this tree's own binary run with that
  # environment (a diagnostic or scratch switch the code reads), no second build
  [[ -n ${AB_OTHER_ENV:-} ]] && { read -ra envs <<<"$AB_OTHER_ENV"; other=.; }
  [[ -d $other && -f $cases ]] || { echo "ab: AB_TREE=DIR (a source tree) or AB_OTHER_ENV, and AB_CASES=FILE, are needed"; return 1; }
  if [[ ${#envs[@]} -eq 0 && ! -x $other/build-sm90/nvfp4bench ]]; then
    (cd "$other" && cmake --preset sm90-only -DNVFP4_PYTHON="$PY" -DNVFP4_REVISION="${AB_REVISION:-other}" \
      && cmake --build build-sm90 -j"$(nproc)" --target nvfp4bench) > "$AB/other-build.log" 2>&1 || {
      echo "ab: the other tree did not build"; tail -5 "$AB/other-build.log"; return 1; }
  fi
  local obin=$other/build-sm90/nvfp4bench; ((${#envs[@]})) && obin=$BIN
  ab_check_cases "$cases" "$obin" || return 1
  local r m n k l cfg tree bin i
  for ((r = 1; r <= rounds; r++)); do
    i=0
    while read -r m n k l cfg; do
      [[ -z $m || $m == \#* ]] && continue
      i=$((i + 1))
      for tree in other this; do
        bin=$BIN; [[ $tree == other ]] && bin=$obin
        local pin=() env=(); [[ -n $cfg ]] && pin=(--kernel-config "$cfg"); [[ $tree == other ]] && env=("${envs[@]}")
        timeout 120 env "${env[@]}" "$bin" --kernel sm90 --m "$m" --n "$n" --k "$k" --l "${l:-1}" "${pin[@]}" \
          --mode "${AB_MODE:-cold}" --max-time 0.4 \
          --min-time 0.3 --json "$AB/$tree-$i-${m}x${n}x${k}x${l:-1}-$r.json" > "$AB/run.log" 2>&1 ||
          { echo "ab: $tree $m $n $k $l '$cfg' round $r rc=$?"; tail -3 "$AB/run.log"; }
      done
    done < "$cases"
  done
  rm -f "$AB/run.log"
  "$PY" - "$AB" <<'PYEOF' | tee "$AB/ab.txt"
import glob, json, math, os, re, statistics, sys
d = sys.argv[1]
rows = {}
for f in glob.glob(d + "/*.json"):
    tree, i, shape, r = re.match(r"(this|other)-(\d+)-(\S+)-(\d+)\.json$", os.path.basename(f)).groups()
    c = json.load(open(f))["cases"][0]
    us = c["kernel_timing"]["stats"]["median_us"] if c["disposition"] == "passed" else None
    rows.setdefault((int(i), shape), {}).setdefault(tree, {})[int(r)] = (us, c["kernel"].get("configuration", "?"), c["disposition"])
print("| shape | other: configuration | us per round | this: configuration | us per round | this vs other |")
print("|---|---|---|---|---|---|")
gains = []
for (i, shape), t in sorted(rows.items()):
    cells = []
    for tree in ("other", "this"):
        runs = t.get(tree, {})
        cfg = next(iter(runs.values()))[1] if runs else "-"
        cells += [cfg, " / ".join("%.2f" % runs[r][0] if runs[r][0] else runs[r][2] for r in sorted(runs))]
    o = [v[0] for v in t.get("other", {}).values() if v[0]]
    n = [v[0] for v in t.get("this", {}).values() if v[0]]
    g = statistics.median(o) / statistics.median(n) if o and n else None
    if g: gains.append(g)
    print("| %s | %s | %s | %s | %s | %s |" % (shape, *cells, "%.3fx" % g if g else "-"))
if gains:
    print("\n%d cases: geomean %.3fx, %.3f-%.3fx (medians over rounds; > 1: this tree faster)" % (
        len(gains), math.exp(sum(map(math.log, gains)) / len(gains)), min(gains), max(gains)))
PYEOF
}

step_default() {
  timeout 60 $BIN --json "$R/default.json" > "$R/default.txt" 2>&1; echo "default rc=$?"; cat "$R/default.txt"
}

failed=0
for s in "${steps[@]}"; do
  echo "== $s"; "step_$s" || { echo "step $s failed"; failed=1; break; }
done
# The device tool returns at most 8 files: everything in one archive.
(cd "$OUT" && tar czf sm90-results.tgz sm90-results && rm -rf sm90-results)
exit $failed
