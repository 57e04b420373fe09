#!/usr/bin/env bash
# The verdict on the GPU (docs/cli.md, "The verdict"), in one call:
#   build   the tool (against the Python that holds torch, for the torch cheats), the cheat and
#           example plugins, the GPU measure tests
#   tests   ctest: GpuMeasure (the stream hold, the verdict in every mode), verdict_gpu (CUDA
#           plugins and torch submissions that cheat: lazy, memo, memo-shape, fast) and verdict
#           (the host backend's half)
#   modes   the honest kernels at 128x7168x2048 and 128x7168x16384 in cold, hot, rotate and
#           graph: sm90 (kernel), cublaslt-f16 (reference, timed) and the f16-predeq peer; one
#           table of medians, host us/call, stream held, verdict (modes.txt)
#   cheats  every CUDA cheat plugin at 128x7168x16384 in every mode: each line shows the exit
#           code (1) and the reason (cheats.txt)
#   ab      the old tool, this one and this one with --check-every-call in turns, sm90 beside
#           cublaslt-f16 at 128x7168x16384, 16x576x7168 and 128x7168x2048, cold and graph: the
#           medians and the verdict's cost per sample and per run (ab.md; needs old first)
#   old     the tool at revision $OLD_REV (default a45241c, the last without the verdict's
#           checks) into build-old, from `git archive` (or the archive $OLD_TGZ where this .git
#           lacks the commit); with it, modes also times every row by the old tool, one after
#           the other (modes-before.txt): the honest timings side by side
#   trees   revisions side by side, in turns: each of $TREES (default "b4f99c4 f4171ad 3b4ab8a
#           HEAD"; HEAD is this working tree) built from `git archive` (or $TREE_TGZ_DIR/REV.tgz)
#           into /tmp/nvfp4-tree-REV-build, sm90 beside cublaslt-f16 at 128x7168x2048, 16x576x7168 and
#           128x7168x16384, cold and graph, plus this tree with --audit-streams, and the default
#           problem (`nvfp4bench` with no options) of each, TREE_ROUNDS rounds (default 2;
#           3 for the default problem): trees.txt, one line per run (median, wall per sample)
# MODE_ARGS adds options to every run of modes (e.g. "--max-time 2").
# Usage, from the repository root: OUT=out bash scripts/device/verdict.sh [STEP ...]
# (default: build tests modes cheats; BUILD=build-sm90 reuses sm90-results.sh's build).
# Everything lands in $OUT/verdict/.
set -uo pipefail
OUT=${OUT:-out}; R=$OUT/verdict; mkdir -p "$R"
steps=("$@"); ((${#steps[@]})) || steps=(build tests modes cheats)
PY=$(command -v python3)
BUILD=${BUILD:-build-verdict}
OLD_REV=${OLD_REV:-a45241c}
BIN=$BUILD/nvfp4bench
MODES=(cold hot rotate graph)

step_build() {
  nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader | tee "$R/smi.txt"
  local pyargs=()
  if "$PY" -c 'import torch, pybind11' 2>/dev/null; then
    pyargs=(-DNVFP4_PYTHON="$PY" -DNVFP4_PYTHON_KERNELS=ON -Dpybind11_DIR="$("$PY" -m pybind11 --cmakedir)")
  fi
  cmake -S . -B $BUILD -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVFP4_BUILD_TESTS=ON \
    -DNVFP4_CUDA_ARCHS=90a-real "${pyargs[@]}" > "$R/cmake.log" 2>&1 || { tail -20 "$R/cmake.log"; return 1; }
  cmake --build $BUILD -j"$(nproc)" --target nvfp4bench measure_test nvfp4_cheat_device \
    nvfp4_cheat_host nvfp4_example_host nvfp4_example_cuda > "$R/build.log" 2>&1 || { grep -m5 -A8 error "$R/build.log"; return 1; }
}

step_tests() {
  timeout 560 ctest --test-dir $BUILD -R '^GpuMeasure|^verdict_gpu$|^verdict$' -V > "$R/ctest.log" 2>&1
  echo "ctest rc=$?"; grep -E "Test +#|tests passed|skipped '|FAIL|Error" "$R/ctest.log" | head -40
}

summarize() {  # one line per report: mode, kernel/reference/peer medians and host us/call
  "$PY" - "$@" <<'PYEOF'
import json, sys
for path in sys.argv[1:]:
    c = json.load(open(path))["cases"][0]
    def t(x):
        if not x or not x.get("ran"): return "-"
        return "%s %.2f us (host %.2f us/call, held %s)" % (x["name"], x["stats"]["median_us"],
               x["host_us_per_call"]["median_us"], x.get("stream_held"))
    v = c.get("verdict", {})
    p = c["problem"]
    print("%dx%dx%d %-6s %-9s | %s | %s | %s | timed %s recheck %s floor %s" % (
        p["m"], p["n"], p["k"], c["kernel_timing"]["mode"] if c.get("kernel_timing") else "?",
        c["disposition"], t(c.get("kernel_timing")), t(c.get("reference_timing")),
        t(c["peers"][0] if c["peers"] else None),
        v.get("timed_outputs", {}).get("passed"), v.get("recheck", {}).get("verification", {}).get("passed"),
        v.get("floor", {}).get("passed")))
PYEOF
}

step_old() { tree_bin "$OLD_REV" build-old "${OLD_TGZ:-}"; }

summarize_old() {  # the old tool's reports: host time where it had one, no verdict
  "$PY" - "$@" <<'PYEOF'
import json, sys
for path in sys.argv[1:]:
    c = json.load(open(path))["cases"][0]
    def t(x):
        if not x or not x.get("ran"): return "-"
        host = " (host %.2f us/call)" % x["host_us_per_call"]["median_us"] if "host_us_per_call" in x else ""
        return "%s %.2f us%s" % (x["name"], x["stats"]["median_us"], host)
    p = c["problem"]
    print("%dx%dx%d %-6s %-9s | %s | %s | %s" % (p["m"], p["n"], p["k"], c["kernel_timing"]["mode"],
          c["disposition"], t(c.get("kernel_timing")), t(c.get("reference_timing")), t(c["peers"][0] if c["peers"] else None)))
PYEOF
}

step_modes() {
  local k mode who bin files=() before=()
  for k in 2048 16384; do
    for mode in "${MODES[@]}"; do
      for who in before after; do
        bin=$BIN; [[ $who == before ]] && { [[ -x build-old/nvfp4bench ]] || continue; bin=build-old/nvfp4bench; }
        local f="$R/modes-128x7168x$k-$mode"; [[ $who == before ]] && f="$R/before-128x7168x$k-$mode"
        $bin --m 128 --n 7168 --k $k --mode $mode --peers f16-predeq ${MODE_ARGS:-} --json "$f.json" > "$f.log" 2>&1
        echo "$who 128x7168x$k $mode rc=$?"
        if [[ $who == before ]]; then before+=("$f.json"); else files+=("$f.json"); fi
      done
    done
  done
  summarize "${files[@]}" | tee "$R/modes.txt"
  ((${#before[@]})) && summarize_old "${before[@]}" | tee "$R/modes-before.txt"
}

# The cost of the verdict and its effect on the honest medians, in turns: the old tool (build-old),
# this one, and this one with --check-every-call, sm90 timed beside the cublaslt-f16 reference;
# per run the medians, the wall time per sample of the kernel's timing (sampling_s / attempts)
# and of the whole run (ab.md). AB_ROUNDS rounds (default 2); AB_MAX_TIME per timing (default 1).
step_ab() {
  local r shape mode who bin f t0 t1 extra
  : > "$R/ab-runs.txt"
  for ((r = 1; r <= ${AB_ROUNDS:-2}; r++)); do
    for shape in "128 7168 16384" "16 576 7168" "128 7168 2048"; do
      read -r m n k <<<"$shape"
      for mode in cold graph; do
        for who in old new every; do
          bin=$BIN; extra=()
          [[ $who == old ]] && { [[ -x build-old/nvfp4bench ]] || continue; bin=build-old/nvfp4bench; }
          [[ $who == every ]] && extra=(--check-every-call)
          f="$R/ab-$who-${m}x${n}x${k}-$mode-$r"
          t0=$(date +%s%N)
          timeout 120 "$bin" --kernel sm90 --reference cublaslt-f16 --m "$m" --n "$n" --k "$k" --mode "$mode" \
            "${extra[@]}" --max-time "${AB_MAX_TIME:-1}" --json "$f.json" > "$f.log" 2>&1
          local rc=$?
          t1=$(date +%s%N)
          echo "$who ${m}x${n}x${k} $mode $r rc=$rc wall_ms=$(((t1 - t0) / 1000000))" | tee -a "$R/ab-runs.txt"
        done
      done
    done
  done
  "$PY" - "$R" <<'PYEOF' | tee "$R/ab.md"
import glob, json, os, re, statistics, sys
d = sys.argv[1]
wall = {}
for line in open(d + "/ab-runs.txt"):
    who, shape, mode, r, rc, w = line.split()
    wall[(who, shape, mode, r)] = (int(rc.split("=")[1]), int(w.split("=")[1]))
rows = {}
for (who, shape, mode, r), (rc, w) in wall.items():
    f = "%s/ab-%s-%s-%s-%s.json" % (d, who, shape, mode, r)
    if not os.path.exists(f):
        rows.setdefault((shape, mode, who), []).append(("rc %d" % rc, None, None, None, w)); continue
    c = json.load(open(f))["cases"][0]
    kt, rt = c.get("kernel_timing"), c.get("reference_timing")
    km = kt["stats"]["median_us"] if kt and kt.get("ran") else None
    rm = rt["stats"]["median_us"] if rt and rt.get("ran") else None
    ps = kt["sampling_s"] / max(1, kt["attempts"]) * 1e3 if kt and kt.get("ran") and "sampling_s" in kt else None
    rows.setdefault((shape, mode, who), []).append((c["disposition"], km, rm, ps, w))
def med(v):
    v = [x for x in v if x is not None]
    return "%.2f" % statistics.median(v) if v else "-"
print("| shape | mode | tool | disposition | sm90 median us | cublaslt-f16 median us | wall per kernel sample ms | whole run s |")
print("|---|---|---|---|---|---|---|---|")
for (shape, mode, who), runs in sorted(rows.items()):
    print("| %s | %s | %s | %s | %s | %s | %s | %.1f |" % (shape, mode, {"old": "before (b4f99c4)", "new": "default", "every": "--check-every-call"}[who],
          "/".join(sorted(set(x[0] for x in runs))), med([x[1] for x in runs]), med([x[2] for x in runs]),
          med([x[3] for x in runs]), statistics.median([x[4] for x in runs]) / 1e3))
PYEOF
}

step_cheats() {
  local kernel mode
  : > "$R/cheats.txt"
  for kernel in lazy memo memo-shape fast count random content-memo other-stream host-wait; do
    for mode in "${MODES[@]}"; do
      [[ ( $kernel == memo* || $kernel == host-wait ) && $mode == graph ]] && continue  # allocates or waits: not capturable
      $BIN --kernel-lib $BUILD/plugins/libnvfp4_cheat_device.so --kernel $kernel --mode $mode \
        --m 128 --n 7168 --k 16384 --iters 16 --warmup 1 \
        --json "$R/cheat-$kernel-$mode.json" > "$R/cheat-$kernel-$mode.log" 2>&1
      echo "$kernel $mode rc=$? $(grep -E '^result ' "$R/cheat-$kernel-$mode.log" | cut -c1-220)" | tee -a "$R/cheats.txt"
    done
  done
}

# Builds revision REV's nvfp4bench into BUILD (HEAD: this working tree), from `git archive` or,
# where this .git lacks the commit, the archive TGZ (default $TREE_TGZ_DIR/REV.tgz).
tree_bin() {  # REV BUILD [TGZ]
  local rev=$1 b=$2 tgz=${3:-${TREE_TGZ_DIR:-.}/$1.tgz} src=/tmp/nvfp4-src-$1
  if [[ $rev == HEAD ]]; then src=.
  else
    rm -rf "$src"; mkdir -p "$src"
    if git cat-file -e "$rev^{commit}" 2>/dev/null; then git archive "$rev" | tar x -C "$src"
    elif [[ -f $tgz ]]; then tar xzf "$tgz" -C "$src"
    else echo "$rev is not in this .git and $tgz is missing" >&2; return 1; fi
  fi
  cmake -S "$src" -B "$b" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVFP4_BUILD_TESTS=OFF -DNVFP4_WERROR=OFF \
    -DNVFP4_CUDA_ARCHS=90a-real -DNVFP4_PYTHON_KERNELS=OFF -DNVFP4_REVISION="$rev" > "$R/build-$rev-cmake.log" 2>&1 &&
    cmake --build "$b" -j"${TREE_JOBS:-$(nproc)}" --target nvfp4bench > "$R/build-$rev.log" 2>&1 ||
    { echo "$rev did not build" >&2; grep -m5 -A8 error "$R/build-$rev.log" >&2; return 1; }
}

step_trees() {
  local revs=(${TREES:-b4f99c4 f4171ad 3b4ab8a HEAD}) rev r shape mode f extra
  for rev in "${revs[@]}"; do TREE_JOBS=5 tree_bin "$rev" "/tmp/nvfp4-tree-$rev-build" & done
  wait
  med() { "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1]))["cases"][0]; k=c["kernel_timing"]; print("%s %.2f us n=%d wall/sample %.3f ms" % (c["disposition"], k["stats"]["median_us"], k["stats"]["count"], k["sampling_s"]/max(1,k["attempts"])*1e3))' "$1" 2>/dev/null || echo "no report"; }
  : > "$R/trees.txt"
  for ((r = 1; r <= ${TREE_ROUNDS:-2}; r++)); do
    for shape in "128 7168 2048" "16 576 7168" "128 7168 16384"; do
      read -r m n k <<<"$shape"
      for mode in cold graph; do
        for rev in "${revs[@]}" HEAD+audit; do
          extra=(); [[ $rev == HEAD+audit ]] && extra=(--audit-streams)
          f="$R/tree-$rev-${m}x${n}x${k}-$mode-$r"
          timeout 60 "/tmp/nvfp4-tree-${rev%+audit}-build/nvfp4bench" --kernel sm90 --reference cublaslt-f16 --m "$m" --n "$n" \
            --k "$k" --mode "$mode" --max-time 0.6 "${extra[@]}" --json "$f.json" > "$f.log" 2>&1
          echo "$r ${m}x${n}x${k} $mode $rev rc=$? $(med "$f.json")" | tee -a "$R/trees.txt"
        done
      done
    done
  done
  for ((r = 1; r <= ${TREE_ROUNDS:-2} + 1; r++)); do
    for rev in "${revs[@]}"; do
      f="$R/tree-$rev-default-$r"
      "/tmp/nvfp4-tree-$rev-build/nvfp4bench" --json "$f.json" > "$f.log" 2>&1
      echo "$r default $rev rc=$? $(med "$f.json")" | tee -a "$R/trees.txt"
    done
  done
}

for s in "${steps[@]}"; do echo "== $s"; "step_$s"; done
