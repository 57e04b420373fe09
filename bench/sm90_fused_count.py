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
wgmma fence (SASS WARPGROUP.ARRIVE, PTX wgmma.fence.sync.aligned) before its wgmmas. The count of
a K block is the instructions from one fence to the next in program order - its wait for the A
stage, the descriptor, the wgmmas, the next block's decode, the wait_group and the release, the
B stage's wait and release where the block has them, and the loop's exit tests; a wait loop's body
counted once - so the eleven whole gaps of the twelve are averaged (the twelfth runs into the back
edge). Opcode classes per K block are printed too.
--check: exit 1 unless every fused kernel has twelve fences, wgmmas between each pair, and no
local memory (LDL/STL; ld.local/st.local). --plant drops the wgmmas of each kernel's first K block
before counting: the check must then fail (ctest sm90_fused_count_catches_a_block_without_wgmma).
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
    """The gaps between consecutive fences (lists of instructions), or None without twelve."""
    fences = [x['i'] for x in ins if is_fence(x, sass)]
    if len(fences) != 12:
        return None
    return [ins[a:b] for a, b in zip(fences, fences[1:])]


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
        gaps = chain(ins, sass)
        if gaps is None:
            print(f"  {label}: not twelve wgmma fences")
            failed.append(f"{label}: not twelve fences")
            continue
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
        if any(not any(is_wgmma(x, sass) for x in g) for g in gaps) or local:
            failed.append(f"{label}: a K block without wgmma, or {local} local-memory instructions")
    if not seen:
        failed.append("no fused_kernel in the dump")
    if check:
        if failed:
            print("CHECK FAILED: " + "; ".join(failed))
            sys.exit(1)
        print("CHECK PASSED: every fused kernel has its twelve K blocks, wgmma in each, and no local memory")


if __name__ == '__main__':
    main()
