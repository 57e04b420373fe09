#!/usr/bin/env python3
"""Converts the H200 timings the sm90 cost models were fitted to (and the held-out timings
that checked them) into the tool's JSON report format, as test fixtures under
tests/fixtures/sm90-fit/. Run once, when the fixtures were made; the fit data is now remade by
the tool itself (docs/kernels.md, "Refitting the cost models").

Where the numbers came from:
  * bench/results/h200/sm90-fit/fit/*.txt: the text output of the benchmark
    program bench/sm90_bench.cu (since deleted), one H200, cold L2, the median of 10 samples per
    configuration: `--sweep-2phase` (every two-phase tile x split) and `--sweep` (every fused M
    tile x split), on the fit shapes (sweep-*.txt) and on 10 held-out shapes (heldout-*.txt).
    A configuration printed twice for a shape (the registered choice and a sweep entry) keeps the
    lower median, as the test that read these files did.
  * the table of fused timings at M <= 512 (sm90_bench --v5, 15 samples each, GPU MODE data)
    that tests/unit/sm90_host_test.cpp held inline at git revision REV (default 9b75efa).
  * bench/results/h200/sm90-streamk-fit/streamk/: the tool's reports of the split-K
    pick (pick-*.json) and of stream-K over 132 workers with the same M tile (sk-*.json), timed
    one after the other on each shipped shape with M <= 512 (step `streamk` of
    scripts/device/sm90-results.sh, the two-ring kernel of commit 3f0364f): streamk.json, the
    pairs stream-K's cost model is checked against.

Writes fit.json (the sweeps), small-m.json (the inline table), heldout.json and streamk.json. Each holds the
report keys the test reads: cases[].problem.{m,n,k,l}, cases[].kernel.{name,configuration} and
cases[].kernel_timing.stats.median_us.

With --write FILE --from-reports REPORT...: FILE holds those keys of the passed sm90 cases of the
tool's reports (a sweep of configs/sm90-fit.json, say; a configuration timed twice on a shape keeps
the lower median), the form in which new fit data becomes a fixture (docs/kernels.md, "Refitting
the cost models").

Usage: scripts/sm90_fit_fixture.py [--rev REV] [--out tests/fixtures/sm90-fit]
       scripts/sm90_fit_fixture.py --write FILE --from-reports REPORT...
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIT = "bench/results/h200/sm90-fit/fit"
STREAMK = "bench/results/h200/sm90-streamk-fit/streamk"

SHAPE = re.compile(r"^shape (\d+)x(\d+)x(\d+) ")
TWO = re.compile(r"(two-phase \d+x\d+ split \d+ group \d+)\s+([\d.]+) us")
FUSED = re.compile(r"(fused \d+x128 split \d+)\s+([\d.]+) us")


def read_bench(path, want, timings):
    """Adds path's configurations of kind `want` ("two" or "fused") to timings[(m,n,k)][config]."""
    cur = None
    with open(os.path.join(ROOT, path)) as f:
        for line in f:
            m = SHAPE.search(line)
            if m:
                cur = tuple(int(x) for x in m.groups())
                continue
            m = (TWO if want == "two" else FUSED).search(line)
            if m and cur:
                t = timings.setdefault(cur, {})
                t[m.group(1)] = min(float(m.group(2)), t.get(m.group(1), float("inf")))


def read_inline_table(rev, timings):
    text = subprocess.run(["git", "-C", ROOT, "show", f"{rev}:tests/unit/sm90_host_test.cpp"],
                          check=True, capture_output=True, text=True).stdout
    rows = re.findall(r'\{\{(\d+), (\d+), (\d+), 1\}, "([^"]+)"\}', text)
    if len(rows) != 34:
        sys.exit(f"expected the 34 rows of the inline fused table at {rev}, found {len(rows)}")
    for m, n, k, items in rows:
        t = timings.setdefault((int(m), int(n), int(k)), {})
        for item in items.split():
            tile_split, us = item.split(":")
            mt, split = tile_split.split("/")
            t[f"fused {mt}x128 split {split}"] = float(us)


SM90_CONFIG = re.compile(r"^(fused \d+x128 (split|stream-k) \d+|two-phase \d+x\d+ split \d+ group \d+)$")


def read_report_paths(paths, timings):
    """Adds every passed sm90 case of the tool's JSON reports at paths."""
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for c in doc["cases"]:
            cfg = c.get("kernel", {}).get("configuration", "")
            if (c.get("disposition") != "passed" or not SM90_CONFIG.match(cfg)
                    or c["kernel"].get("name") not in ("sm90", "sm90-fused", "sm90-2phase")):
                continue
            p = c["problem"]
            t = timings.setdefault((p["m"], p["n"], p["k"], p.get("l", 1)), {})
            t[cfg] = min(c["kernel_timing"]["stats"]["median_us"], t.get(cfg, float("inf")))


def read_reports(pattern, timings):
    """Adds every passed case of the tool's JSON reports matching pattern (under the root)."""
    read_report_paths(sorted(glob.glob(os.path.join(ROOT, pattern))), timings)


def report(timings, argv, device=None):
    cases = []
    for shape, configs in sorted(timings.items()):
        m, n, k = shape[:3]
        l = shape[3] if len(shape) > 3 else 1
        for config, us in sorted(configs.items()):
            cases.append({"problem": {"m": m, "n": n, "k": k, "l": l},
                          "kernel": {"name": "sm90", "configuration": config},
                          "kernel_timing": {"stats": {"median_us": us}}})
    return {"schema_version": 2, "argv": argv,
            "device": device or {"name": "NVIDIA H200", "sm_count": 132}, "cases": cases}


def write_fixture(path, doc):
    with open(path, "w") as f:  # one case per line: diffs stay readable
        head = {k: v for k, v in doc.items() if k != "cases"}
        f.write(json.dumps(head)[:-1] + ', "cases": [\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in doc["cases"]))
        f.write("\n]}\n")
    print(f"{path}: {len(doc['cases'])} cases")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rev", default="9b75efa")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests/fixtures/sm90-fit"))
    ap.add_argument("--write", metavar="FILE", help="write the sm90 timings of --from-reports to FILE")
    ap.add_argument("--from-reports", nargs="+", metavar="REPORT", default=[])
    a = ap.parse_args()
    if a.write or a.from_reports:
        if not (a.write and a.from_reports):
            ap.error("--write FILE and --from-reports REPORT... go together")
        if any(os.path.realpath(r) == os.path.realpath(a.write) for r in a.from_reports):
            ap.error(f"--write {a.write}: is also one of --from-reports; write to a new file")
        timings = {}
        read_report_paths(a.from_reports, timings)
        if not timings:
            ap.error("--from-reports: no passed case of sm90 with a configuration in " + ", ".join(a.from_reports))
        with open(a.from_reports[0]) as f:
            first = json.load(f)
        device = {k: first.get("device", {}).get(k) for k in ("name", "sm_count")}
        # The fixture names its sources by file name only (no machine paths in a committed file).
        argv = ["scripts/sm90_fit_fixture.py", "--from-reports", *(os.path.basename(r) for r in a.from_reports)]
        write_fixture(a.write, report(timings, argv, device))
        return
    os.makedirs(a.out, exist_ok=True)
    outputs = {}
    fit = {}
    read_bench(f"{FIT}/sweep-2phase-1.txt", "two", fit)
    read_bench(f"{FIT}/sweep-2phase-2.txt", "two", fit)
    read_bench(f"{FIT}/sweep-fused.txt", "fused", fit)
    outputs["fit.json"] = report(fit, ["sm90_bench --sweep-2phase / --sweep", f"{FIT}/sweep-*.txt"])
    small = {}
    read_inline_table(a.rev, small)
    outputs["small-m.json"] = report(small, ["sm90_bench --v5", f"tests/unit/sm90_host_test.cpp@{a.rev}"])
    held = {}
    read_bench(f"{FIT}/heldout-2phase.txt", "two", held)
    read_bench(f"{FIT}/heldout-fused.txt", "fused", held)
    outputs["heldout.json"] = report(held, ["sm90_bench --sweep-2phase / --sweep", f"{FIT}/heldout-*.txt"])
    sk = {}
    read_reports(f"{STREAMK}/pick-*.json", sk)
    read_reports(f"{STREAMK}/sk-*.json", sk)
    sk = {shape: t for shape, t in sk.items() if len(t) == 2}  # shapes with both timed
    outputs["streamk.json"] = report(sk, ["nvfp4bench --kernel sm90 [--kernel-config 'fused MTx128 stream-k 132']",
                                          f"{STREAMK}/pick-*.json, sk-*.json"])
    for name, doc in outputs.items():
        write_fixture(os.path.join(a.out, name), doc)


if __name__ == "__main__":
    main()
