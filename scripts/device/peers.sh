#!/usr/bin/env bash
# Device checks of the references and peers and the kernels' standing against them,
# after a build in build/: for the three GPU MODE benchmark shapes, the large shapes
# and 4096^3, the auto kernel (sm90 on an H200) against cublaslt-f16 with every peer timed in
# the same run, cold L2, and 4000 sampled elements of kernel and reference checked against the
# exact CPU reference. Writes one JSON report per shape under $OUT/peers/.
set -uo pipefail
OUT=${OUT:-out}; BIN=${BIN:-build/nvfp4bench}; mkdir -p "$OUT/peers"
fails=0
for s in 128,7168,16384 128,4096,7168 128,7168,2048 4096,4096,4096 1024,7168,16384 8192,8192,8192 \
         256,7168,2048 512,4096,7168; do
  IFS=, read -r m n k <<<"$s"
  "$BIN" --m "$m" --n "$n" --k "$k" --kernel auto --reference cublaslt-f16 --peers all \
    --verify-exact 4000 --seed 11 --json "$OUT/peers/peers-${m}x${n}x${k}.json" > "$OUT/peers/${m}x${n}x${k}.txt" 2>&1 \
    || { fails=$((fails+1)); echo "FAILED ${m}x${n}x${k}"; tail -5 "$OUT/peers/${m}x${n}x${k}.txt"; }
done
# One table: kernel and peers per shape (median us, kernel speed-up over each peer).
${PYTHON:-python3} - "$OUT/peers" <<'PY'
import json, glob, sys
for f in sorted(glob.glob(sys.argv[1] + "/peers-*.json")):
    c = json.load(open(f))["cases"][0]; p = c["problem"]
    k = c["kernel_timing"]; sol = c.get("speed_of_light", {})
    row = [f'{p["m"]}x{p["n"]}x{p["k"]}', c["disposition"], f'{c["kernel"]["name"]} {k["stats"]["median_us"]:.1f}us',
           f'sol {sol.get("sol_us", 0):.1f}us', f'exact k/r {c["exact_check"]["kernel"]["passed"]}/{c["exact_check"]["reference"]["passed"]}']
    row.append(f'ref {c["reference_timing"]["stats"]["median_us"]:.1f}' if c.get("reference_timing", {}).get("ran") else "ref -")
    for q in c["peers"]:
        row.append(f'{q["name"]} {q["stats"]["median_us"]:.1f} ({q["kernel_speedup"]:.2f}x)' if q["ran"] else f'{q["name"]} not run')
    print(" | ".join(row))
PY
echo "peers failures: $fails"
