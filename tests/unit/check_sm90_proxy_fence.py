#!/usr/bin/env python3
"""The sm90 fused kernel's consumers read the raw-B ring with ordinary loads (generic proxy), and
its producer refills a stage by TMA (async proxy) once the stage's empty barrier says the reads
are done. The barrier alone does not order the two proxies: without a fence.proxy.async between
the wait and the TMA, a refill now and then overwrote rows still to be read (docs/kernels.md,
history "raw-B proxy fence"). This checks the PTX of every fused_kernel entry: each TMA load into
shared memory (cp.async.bulk.tensor ... shared::cluster.global) must follow a fence.proxy.async
issued after the last mbarrier wait before it, in the PTX's order. CI has no GPU, so this is what
guards the fence there; the GPU test Sm90Gemm.SplitKRepeatsBitForBit is what shows the race.

Usage: check_sm90_proxy_fence.py [--plant] PTX [PTX ...]   (files whose name has no "fused" are
skipped; none left fails). --plant first deletes every fence.proxy.async line: the check must then
fail.
"""
import re
import sys

TMA_LOAD = re.compile(r"\bcp\.async\.bulk\.tensor\.\S*shared::cluster\.global")
ENTRY = re.compile(r"^\s*\.(?:visible\s+)?\.entry\s+(\S+?)\(", re.M)


def problems_of(text):
    starts = [(m.start(), m.group(1)) for m in ENTRY.finditer(text)]
    found, loads = [], 0
    for i, (pos, name) in enumerate(starts):
        if "fused_kernel" not in name:
            continue
        body = text[pos:starts[i + 1][0] if i + 1 < len(starts) else len(text)]
        fenced = False
        for n, line in enumerate(body.splitlines(), 1):
            if "mbarrier.try_wait" in line:
                fenced = False
            elif "fence.proxy.async" in line:
                fenced = True
            elif TMA_LOAD.search(line):
                loads += 1
                if not fenced:
                    found.append(f"{name}: TMA load at line {n} of the entry follows a barrier wait with no proxy fence")
    if loads == 0:
        found.append("no TMA load into shared memory in any fused_kernel entry: nothing was checked")
    return found


def main(argv):
    plant = "--plant" in argv
    # ctest may pass the PTX objects as one ;-separated argument
    files = [f for a in argv if a != "--plant" for f in a.split(";") if f]
    if not files:
        print(__doc__)
        return 2
    problems, checked = [], 0
    for path in files:
        if "fused" not in path.split("/")[-1]:
            continue
        checked += 1
        text = open(path, encoding="utf-8").read()
        if plant:
            text = "\n".join(l for l in text.splitlines() if "fence.proxy.async" not in l)
        problems += problems_of(text)
    if checked == 0:
        problems.append("no fused PTX among " + ", ".join(files) + ": nothing was checked")
    if problems:
        print("NOT FENCED:\n  " + "\n  ".join(problems))
        return 1
    print("every fused_kernel TMA load into shared memory follows a proxy fence after its barrier wait")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
