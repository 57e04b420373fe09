#!/usr/bin/env python3
"""The sm90 kernel's standing against its targets, from the reports of
scripts/device/sm90-results.sh: per case of the two shipped sweeps, sm90 beside dequant-f16 and
f16-predeq; the floor, small-M, benchmark-shape and large-M summaries; the large shapes with the
mainloop peer (sm90-f16-predeq) beside cuBLASLt (f16-predeq); with paths/, the path each case
took (the report's kernel.configuration) against both paths forced on the same shape.
Usage: scripts/device/sm90_targets.py RESULTS_DIR   (the folder holding sweep/ and peers/)"""
import glob
import json
import math
import sys

d = sys.argv[1]
cases = []
for f in sorted(glob.glob(d + "/sweep/*.json")):
    for c in json.load(open(f))["cases"]:
        p = c["problem"]
        k = c["kernel_timing"]["stats"]["median_us"]
        peers = {t["name"]: t["stats"]["median_us"] for t in c.get("peers", []) if t.get("ran")}
        mhz = {t["name"]: t.get("clock", {}).get("median_mhz", 0) for t in c.get("peers", []) if t.get("ran")}
        mhz["kernel"] = c["kernel_timing"].get("clock", {}).get("median_mhz", 0)
        cases.append(((p["m"], p["n"], p["k"], p["l"]), c["kernel"].get("configuration", ""), c["disposition"], k,
                      peers.get("dequant-f16"), peers.get("f16-predeq"), mhz))
def gm(xs): return math.exp(sum(map(math.log, xs)) / len(xs))
print("| shape | sm90 ran | sm90 us | dequant-f16 us | f16-predeq us | vs dequant-f16 | vs f16-predeq |")
print("|---|---|---|---|---|---|---|")
for s, cfg, disp, k, dq, pd, _ in sorted(cases):
    print("| %s | %s | %.1f | %.1f | %.1f | %.2fx | %.2fx |" % ("x".join(map(str, s[:3])), cfg or "-", k, dq, pd, dq / k, pd / k))
print()
print("cases", len(cases), "passed", sum(c[2] == "passed" for c in cases))
below = [c for c in cases if c[4] / c[3] < 1.0]
print("floor: %d of %d below 1.00x dequant-f16:" % (len(below), len(cases)), ", ".join("%s %.2fx" % ("x".join(map(str, c[0][:3])), c[4] / c[3]) for c in below))
small = [c for c in cases if c[0][0] <= 512]; large = [c for c in cases if c[0][0] >= 1024]
print("small M (%d cases, M<=512): geomean vs f16-predeq %.2fx, vs dequant-f16 %.2fx" % (len(small), gm([c[5] / c[3] for c in small]), gm([c[4] / c[3] for c in small])))
print("large M (%d cases, M>=1024): geomean vs dequant-f16 %.2fx, vs f16-predeq %.2fx" % (len(large), gm([c[4] / c[3] for c in large]), gm([c[5] / c[3] for c in large])))
m16 = [c for c in cases if c[0][0] == 16]
if m16: print("M = 16 (%d cases): geomean vs f16-predeq %.2fx" % (len(m16), gm([c[5] / c[3] for c in m16])))
print("all: geomean vs dequant-f16 %.2fx, vs f16-predeq %.2fx" % (gm([c[4] / c[3] for c in cases]), gm([c[5] / c[3] for c in cases])))
# The same in cycles (time x median SM clock): the GPU lowers its clock under sustained load, and
# the kernel and its peers are timed one after the other (docs/cli.md, clock_ratio).
clocked = [c for c in cases if c[6]["kernel"] > 0 and c[6].get("dequant-f16", 0) > 0 and c[6].get("f16-predeq", 0) > 0]
apart = [c for c in clocked if max(abs(c[6][n] / c[6]["kernel"] - 1) for n in ("dequant-f16", "f16-predeq")) > 0.03]
cyc = lambda c, n, i: (c[i] * c[6][n]) / (c[3] * c[6]["kernel"])
print("clocks: %d of %d cases with the kernel's median SM clock more than 3 %% from a peer's" % (len(apart), len(cases)))
print("in cycles: floor %d of %d below 1.00x dequant-f16; small M vs f16-predeq %.2fx; M = 16 %.2fx; large M vs dequant-f16 %.2fx" % (
    sum(cyc(c, "dequant-f16", 4) < 1.0 for c in clocked), len(clocked),
    gm([cyc(c, "f16-predeq", 5) for c in clocked if c[0][0] <= 512]),
    gm([cyc(c, "f16-predeq", 5) for c in clocked if c[0][0] == 16]),
    gm([cyc(c, "dequant-f16", 4) for c in clocked if c[0][0] >= 1024])))
for s in [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048)]:
    for c in cases:
        if c[0][:3] == s: print("bench %s: sm90 %.1f us, vs f16-predeq %.2fx" % ("x".join(map(str, s)), c[3], c[5] / c[3]))
for f in sorted(glob.glob(d + "/graph/*.json")):
    c = json.load(open(f))["cases"][0]; p = c["problem"]
    peers = {t["name"]: t["stats"]["median_us"] for t in c.get("peers", []) if t.get("ran")}
    k = c["kernel_timing"]["stats"]["median_us"]
    print("graph %dx%dx%d: sm90 %.2f us (%s, %s), f16-predeq %.2f us, dequant-f16 %.2f us: %.2fx f16-predeq, %.2fx dequant-f16"
          % (p["m"], p["n"], p["k"], k, c["kernel"].get("configuration", ""), c["disposition"], peers["f16-predeq"],
             peers["dequant-f16"], peers["f16-predeq"] / k, peers["dequant-f16"] / k))
print()
print("| large shape | sm90 us | sm90-f16-predeq (mainloop) us | f16-predeq us | mainloop vs cuBLAS | sm90 vs dequant-f16 |")
print("|---|---|---|---|---|---|")
for f in sorted(glob.glob(d + "/peers/*.json")):
    c = json.load(open(f))["cases"][0]; p = c["problem"]
    peers = {t["name"]: t["stats"]["median_us"] for t in c.get("peers", []) if t.get("ran")}
    k = c["kernel_timing"]["stats"]["median_us"]
    print("| %dx%dx%d | %.1f | %.1f | %.1f | %.3fx | %.2fx |" % (p["m"], p["n"], p["k"], k, peers["sm90-f16-predeq"], peers["f16-predeq"], peers["f16-predeq"] / peers["sm90-f16-predeq"], peers["dequant-f16"] / k))

forced = {}
for f in sorted(glob.glob(d + "/paths/*.json")):
    if f.endswith("-paths.json"): continue  # the derived sweep configs
    for c in json.load(open(f))["cases"]:
        p = c["problem"]
        forced.setdefault((p["m"], p["n"], p["k"], p["l"]), {}).setdefault(c["kernel"]["name"], c["kernel_timing"]["stats"]["median_us"])
if forced:
    took = {s: cfg for s, cfg, *_ in cases}
    rows = []
    for s, t in sorted(forced.items()):
        if s not in took or not took[s]: continue
        path = "sm90-2phase" if took[s].startswith("two-phase") else "sm90-fused"
        rows.append((t[path] / min(t.values()), s, path))
    worse = [r for r in rows if r[0] > 1.0]
    print()
    print("paths: %d shapes, two-phase taken on %d; the path taken is the faster forced one on %d, "
          "slower on %d (worst %.3fx at %s)" % (len(rows), sum(r[2] == "sm90-2phase" for r in rows), len(rows) - len(worse),
                                                len(worse), max(r[0] for r in rows), "x".join(map(str, max(rows)[1][:3]))))
