#!/usr/bin/env python3
"""The shipped sweeps' shapes (configs/gpumode-nvfp4-gemm.json, configs/llm-layers.json), each once,
in config order, as "m n k l" lines: those with M equal to --m, or at most --max-m."""
import argparse
import json
import os

ap = argparse.ArgumentParser(description=__doc__)
g = ap.add_mutually_exclusive_group(required=True)
g.add_argument("--m", type=int, help="only shapes with this M")
g.add_argument("--max-m", type=int, help="only shapes with M at most this")
args = ap.parse_args()
root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
seen = []
for name in ["gpumode-nvfp4-gemm.json", "llm-layers.json"]:
    for case in json.load(open(os.path.join(root, "configs", name)))["cases"]:
        if "shape" in case:
            sh = [(case["shape"]["m"], case["shape"]["n"], case["shape"]["k"], case["shape"].get("l", 1))]
        else:
            a = case["axes"]
            ms = a["m"] if isinstance(a["m"], list) else [a["m"]]
            sh = [(m, a["n"], a["k"], 1) for m in ms]
        keep = (lambda m: m == args.m) if args.m is not None else (lambda m: m <= args.max_m)
        seen += [s for s in sh if keep(s[0]) and s not in seen]
for s in seen:
    print(*s)
