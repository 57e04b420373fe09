#!/usr/bin/env python3
"""Static instruction count of the sm90 fused path's consumer chain, per warp per K block (issue
48's "chain diet": <= 90 at M tiles 64, 128 and 256), for every fused_kernel<MT, OCC> in a dump.

  usage: sm90_fused_count.py DUMP... [--check] [--plant]
         sm90_fused_count.py --compile [--check]   (builds kernels/sm90/fused.cu for sm_90a with
                                                     nvcc; SASS by cuobjdump where it is on the
                                                     PATH or in /usr/local/cuda/bin, else PTX)
  DUMP: cuobjdump --dump-sass output, nvcc --ptx output, or an object, executable or cubin
        (disassembled by scripts/sass_dump.py); several are read as one.

The consumer loop is unrolled by twelve K blocks (fused_kernel.cuh), each opened by one
wgmma fence (SASS WARPGROUP.ARRIVE, PTX wgmma.fence.sync.aligned) before its wgmmas. At M tiles
<= 128 it comes twice: whole passes (no test per block) first, then the unit's last pass, which
tests each block; the first twelve fences in program order are counted (the whole passes, where
a long unit spends its time) and the last pass's count is printed beside them. The count of a K
block is the instructions from one fence to the next in program order - its wait for the A stage
where it has one, the descriptor, the wgmmas, the next block's decode, the wait_group and the
releases, the B stage's wait and release where the block has them, and the exit tests; a wait
loop's body counted once - so the eleven whole gaps of the twelve are averaged (the twelfth runs
into the back edge). Opcode classes per K block are printed too.
--check: exit 1 unless every fused kernel has twelve or twenty-four fences, wgmmas between each
pair, and no local memory (LDL/STL; ld.local/st.local). A wgmma the compiler serialised (ptxas
C7510-C7515: a fence before each) shows as more fences and fails the check. --plant drops the
wgmmas of each kernel's first K block before counting: the check must then fail (ctest
sm90_fused_count_catches_a_block_without_wgmma).
PTX counts come before ptxas fuses and/or/shift into LOP3: an upper bound of the SASS count.
"""
import os
import re
import sys
from collections import Counter

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sm90_stream_count import dump_text, functions, is_local, parse  # noqa: E402  (one parser for both counts)

FUSED = re.compile(r'5fused12fused_kernelILi(\d+)ELi(\d)E')
BUDGET = 90


def is_fence(x, sass):
    return x['op'].startswith('WARPGROUP.ARRIVE') if sass else x['op'].startswith('wgmma.fence')


def is_wgmma(x, sass):
    return x['op'].startswith('HGMMA') if sass else x['op'].startswith('wgmma.mma_async')


def chain(ins, sass):
    """The gaps between consecutive fences (lists of instructions) of each run of twelve: one or
    two lists of eleven gaps, or None without twelve or twenty-four fences."""
    fences = [x['i'] for x in ins if is_fence(x, sass)]
    if len(fences) not in (12, 24):
        return None
    runs = [fences[r:r + 12] for r in range(0, len(fences), 12)]
    return [[ins[a:b] for a, b in zip(f, f[1:])] for f in runs]


def main():
    args = sys.argv[1:]
    check, plant = '--check' in args, '--plant' in args
    text = dump_text([a for a in args if a not in ('--check', '--plant')], 'fused.cu', __doc__)
    sass = 'Function :' in text
    print(f"fused consumer chain per warp per K block, from {'SASS' if sass else 'PTX (an upper bound)'}: "
          f"fence to fence over the loop's 12 K blocks (budget <= {BUDGET} at M tiles 64, 128, 256)")
    failed, seen = [], 0
    for name, lines in functions(text):
        m = FUSED.search(name)
        if not m:
            continue
        seen += 1
        label = f"M tile {int(m.group(1)):3d} ctas/SM {m.group(2)}"
        ins, _ = parse(lines, sass)
        if plant:
            fences = [x['i'] for x in ins if is_fence(x, sass)]
            if len(fences) > 1:
                ins = [x for x in ins if not (fences[0] < x['i'] < fences[1] and is_wgmma(x, sass))]
                for k, x in enumerate(ins):
                    x['i'] = k
        local = sum(is_local(x, sass) for x in ins)
        runs = chain(ins, sass)
        if runs is None:
            print(f"  {label}: not twelve or twenty-four wgmma fences")
            failed.append(f"{label}: not twelve or twenty-four fences")
            continue
        gaps = runs[0]
        n = len(gaps)
        total = sum(len(g) for g in gaps)
        mma = sum(is_wgmma(x, sass) for g in gaps for x in g)
        hist = Counter(x['op'].split('.')[0] for g in gaps for x in g)
        top = ', '.join(f"{k} {v / n:.2f}" for k, v in hist.most_common(14))
        per = total / n
        budget = '' if int(m.group(1)) < 64 else f"; budget {'met' if per <= BUDGET else 'NOT met'}"
        print(f"  {label}: {per:6.1f} per K block (min {min(map(len, gaps))}, max {max(map(len, gaps))}); "
              f"{'HGMMA' if sass else 'wgmma'} {mma / n:.1f} per K block; local-memory instructions {local}{budget}")
        print(f"      by opcode per K block: {top}")
        if len(runs) > 1:
            last = runs[1]
            print(f"      the last pass (each block tested): {sum(len(g) for g in last) / len(last):.1f} per K block")
        if any(not any(is_wgmma(x, sass) for x in g) for r in runs for g in r) or local:
            failed.append(f"{label}: a K block without wgmma, or {local} local-memory instructions")
    if not seen:
        failed.append("no fused_kernel in the dump")
    if check:
        if failed:
            print("CHECK FAILED: " + "; ".join(failed))
            sys.exit(1)
        print("CHECK PASSED: every fused kernel has its twelve K blocks (once or twice), wgmma in each, and no local memory")


if __name__ == '__main__':
    main()
