#!/usr/bin/env python3
"""Where the warps of the sm90 fused kernel spend their time: a summary of ncu's per-SASS-line
warp stall samples (`ncu -i REP --page source --csv --print-source sass`).

  usage: ncu_loop.py SOURCE.csv [--trim OUT.csv]

The consumer K loop is taken as the SASS lines from 40 before the first HGMMA to 12 after the
last `WARPGROUP.DEPBAR.LE gsb0, 0x1` (wgmma.wait_group 1). Its samples are split into the HGMMA
lines, the mbarrier wait loops (a branch whose samples are mostly long-scoreboard stalls) and the
rest (decode and bookkeeping), with the loop's stall reasons. --trim writes the columns used
here, for the lines with samples, so the summary can be redone from a small file.
"""
import csv
import collections
import sys

KEEP = ["Source", "Warp Stall Sampling (All Samples)", "Instructions Executed"]


def load(path):
    rows = list(csv.reader(open(path, newline="")))
    head = 1 if rows and "Source" not in rows[0] else 0  # ncu writes a title row first
    h = rows[head]
    return h, rows[head + 1:]


def main():
    h, data = load(sys.argv[1])
    ix = {k: i for i, k in enumerate(h)}
    stalls = [c for c in h if c.startswith("stall_") and "Not Issued" not in c]
    line = [int(r[ix["Line"]]) if "Line" in ix else n for n, r in enumerate(data)]
    src = [r[ix["Source"]] for r in data]
    samp = [int(r[ix["Warp Stall Sampling (All Samples)"]] or 0) for r in data]
    if "--trim" in sys.argv:
        out = csv.writer(open(sys.argv[sys.argv.index("--trim") + 1], "w", newline=""))
        out.writerow(["Line"] + KEEP + stalls)
        for n, r in enumerate(data):
            if samp[n] or "HGMMA" in src[n] or "WARPGROUP.DEPBAR" in src[n]:
                out.writerow([line[n]] + [r[ix[k]] for k in KEEP + stalls])
    hg = [line[n] for n, s in enumerate(src) if "HGMMA" in s]
    dep = [line[n] for n, s in enumerate(src) if "WARPGROUP.DEPBAR.LE gsb0, 0x1" in s]
    lo, hi = hg[0] - 40, dep[-1] + 12
    cat = collections.Counter()
    reasons = collections.Counter()
    for n, r in enumerate(data):
        if not lo <= line[n] <= hi:
            continue
        s = src[n]
        if "HGMMA" in s:
            c = "HGMMA issue"
        elif "BRA" in s and int(r[ix["stall_long_sb"]] or 0) > samp[n] // 2:
            c = "mbarrier wait loops"
        else:
            c = "decode and bookkeeping"
        cat[c] += samp[n]
        for k in stalls:
            reasons[k] += int(r[ix[k]] or 0)
    total, loop = sum(samp), sum(cat.values())
    print(f"warp stall samples: {total}; consumer K loop (SASS lines {lo}-{hi}): {loop} ({100 * loop / total:.0f} %)")
    for c, v in cat.most_common():
        print(f"  {c:24s} {v:6d} {100 * v / loop:5.1f} %")
    named = sum(reasons.values())
    print("  stall reasons in the loop, % of the samples that name one: " +
          ", ".join(f"{k.replace('stall_', '')} {100 * v / named:.0f}" for k, v in reasons.most_common(8)))
    kb = max(1, len(hg) // 4)  # four HGMMA (k16 steps) a K block
    print(f"  loop body: {hi - lo + 1} SASS lines, {len(hg)} HGMMA: unrolled over {kb} K blocks (~{(hi - lo + 1) // kb} per block)")


if __name__ == "__main__":
    main()
