#!/usr/bin/env bash
# Device session, part C: sweeps (issue 6 and 7.3/7.4) - the GPU MODE config end to end,
# SIGTERM + resume, timeout isolation, --devices all. Results in $OUT/final-c.tgz.
set -uo pipefail
OUT=${OUT:-out}; mkdir -p "$OUT/c"
[[ -x build/nvfp4bench ]] || { scripts/setup --tests > "$OUT/c/setup.log" 2>&1; echo "rebuilt rc=$?"; }
nvidia-smi -L
t0=$SECONDS; OUT="$OUT/c" bash scripts/device/sweep.sh 2>&1 | tail -50; echo "sweep ($((SECONDS-t0)) s)"
(cd "$OUT" && tar czf final-c.tgz c && rm -rf c)
