#!/usr/bin/env bash
# compute-sanitizer over the GPU code. Run from the repository root on a GPU
# machine after a build with tests in build/ (scripts/setup --tests: the broken test plugins).
#   - memcheck (with device leak check), racecheck and synccheck on every available device
#     kernel and device reference (from `nvfp4bench --list`, plus the example CUDA plugin), on
#     small shapes, one checked run each (--iters 1 --warmup 0);
#   - memcheck on the broken plugin that stores one element past C, which a plain run cannot
#     see: it must be CAUGHT;
#   - an oversized problem must be refused with exit 3 "out of device memory".
# Full logs go to $OUT/sanitize/; the output is one line per run with its ERROR SUMMARY.
#   Usage: OUT=out scripts/device/sanitize.sh        (exit 1 when a clean run reports errors
#                                                     or the planted bug is missed)
#   TOOLS="memcheck racecheck synccheck" (default) and CASE_TIMEOUT=240 (seconds per run) narrow it.
set -uo pipefail
OUT=${OUT:-out}
LOGS="$OUT/sanitize"
mkdir -p "$LOGS"
BIN=build/nvfp4bench
PLUG=build/plugins
CS=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
[[ -x $BIN ]] || { echo "sanitize.sh: $BIN missing: build first (scripts/setup --tests)"; exit 2; }
[[ -x $CS ]] || { echo "sanitize.sh: compute-sanitizer not found"; exit 2; }
[[ -f $PLUG/libnvfp4_broken_device.so ]] || { echo "sanitize.sh: $PLUG/libnvfp4_broken_device.so missing: build with tests"; exit 2; }
EXAMPLE=(--kernel-lib "$PLUG/libnvfp4_example_cuda.so")

# Available device kernels and references: the --list lines "  NAME  available  ..." of the
# kernels: and references: sections (host implementations are skipped: nothing for the GPU
# sanitizer to see).
list=$("$BIN" "${EXAMPLE[@]}" --list)
echo "$list" | head -1
pick() {  # section name -> available names, one per line
  echo "$list" | awk -v want="$1:" '/^[a-z]+:$/ {sec=$1; next} sec==want && $2=="available" {print $1}' |
    grep -v -x -E 'host|cpu-exact'
}
kernels=$(pick kernels)
references=$(pick references)
echo "device kernels: $(echo $kernels)"
echo "device references: $(echo $references)"

shapes=("128 256 256 1" "200 300 512 2")
TOOLS=${TOOLS:-memcheck racecheck synccheck}
CASE_TIMEOUT=${CASE_TIMEOUT:-240}
bad=0
# run NAME TOOL EXPECT ARGS...: EXPECT clean|caught
run() {
  local name=$1 tool=$2 expect=$3; shift 3
  local log="$LOGS/$tool-$name.log" extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  local t0=$SECONDS
  timeout "$CASE_TIMEOUT" "$CS" --tool "$tool" "${extra[@]}" --print-limit 20 --error-exitcode 99 \
    "$BIN" "$@" --iters 1 --warmup 0 > "$log" 2>&1
  local rc=$? secs=$((SECONDS - t0))
  local summary
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$log" | tail -1)
  local errors
  # "ERROR SUMMARY: N errors"; racecheck: "RACECHECK SUMMARY: H hazards displayed (N errors, W warnings)"
  errors=$(echo "$summary" | grep -oE '[0-9]+ errors?' | head -1 | grep -oE '[0-9]+')
  local verdict
  if [[ $expect == clean && $rc -eq 2 ]] && grep -q "does not support" "$log"; then
    verdict=skip  # the shape is outside the kernel's rules (exit 2): nothing ran
  elif [[ $expect == clean ]]; then
    if [[ $rc -eq 0 && ${errors:-0} -eq 0 ]]; then verdict=ok; else verdict=FAIL; bad=$((bad+1)); fi
  else
    if [[ ${errors:-0} -gt 0 ]]; then verdict=CAUGHT; else verdict=MISSED; bad=$((bad+1)); fi
  fi
  [[ $rc -eq 124 ]] && summary="timed out after ${CASE_TIMEOUT} s"
  printf '%-8s %-10s %-40s rc=%-3s %4ss %s\n' "$verdict" "$tool" "$name" "$rc" "$secs" \
    "${summary:-no summary (see $log)}"
}

for s in "${shapes[@]}"; do
  read -r m n k l <<<"$s"
  shape=(--m "$m" --n "$n" --k "$k" --l "$l")
  tag="${m}x${n}x${k}-L$l"
  for tool in $TOOLS; do
    for kern in $kernels; do
      run "kernel-$kern-$tag" $tool clean "${EXAMPLE[@]}" --kernel "$kern" --reference cpu-exact "${shape[@]}"
    done
    for ref in $references; do
      run "reference-$ref-$tag" $tool clean --kernel naive --reference "$ref" "${shape[@]}"
    done
  done
done

# The planted bugs: one element past C (invisible without the sanitizer) and a store 2 TiB away.
for kern in broken-oob-edge broken-oob; do
  run "planted-$kern" memcheck caught --kernel-lib "$PLUG/libnvfp4_broken_device.so" --kernel "$kern" \
    --reference cpu-exact --m 128 --n 256 --k 256
  grep -m1 -E "Invalid __global__ write" "$LOGS/memcheck-planted-$kern.log" | sed 's/^/         /'
done
# Without the sanitizer the edge store goes unnoticed (exit 0), the far one faults (exit 3).
for kern in broken-oob-edge broken-oob; do
  "$BIN" --kernel-lib "$PLUG/libnvfp4_broken_device.so" --kernel "$kern" --m 128 --n 256 --k 256 \
    --iters 1 --warmup 0 > "$LOGS/plain-$kern.log" 2>&1
  echo "plain    $kern: exit $? $(tail -1 "$LOGS/plain-$kern.log" | cut -c1-100)"
done

# A problem larger than the GPU (1 TiB of A and B, tiny C so the host copy of C fits): refused up
# front (exit 3, "out of device memory"), no allocation.
"$BIN" --m 8 --n 8 --k 137438953472 > "$LOGS/oom.log" 2>&1
rc=$?
if [[ $rc -eq 3 ]] && grep -q "out of device memory" "$LOGS/oom.log"; then verdict=ok; else verdict=FAIL; bad=$((bad+1)); fi
echo "$verdict       oversized problem: exit $rc $(tail -1 "$LOGS/oom.log" | cut -c1-110)"

echo "sanitize.sh: $bad unexpected result(s); logs in $LOGS"
[[ $bad -eq 0 ]]
