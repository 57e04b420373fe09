#!/usr/bin/env python3
"""Static instruction count of the small-M streaming loop, per warp per 16x64 tile (one K block):
the model test's (bench/sm90_stream_bench.cu, stream_kernel<V, K, W>) and the sm90 streaming
path's (kernels/sm90/stream_kernel.cuh, stream_kernel<NT, kStamps, W>: NT n8 tiles of A, M tile 8 NT;
kStamps the time line's twin, counted apart).

  usage: sm90_stream_count.py DUMP [--check]
         sm90_stream_count.py --compile [--check]   (builds kernels/sm90/stream.cu for sm_90a with
                                                      nvcc; SASS by cuobjdump where it is on the
                                                      PATH or in /usr/local/cuda/bin, else PTX)
  DUMP: cuobjdump --dump-sass output, nvcc --ptx output, or an object, executable or cubin
        (disassembled by scripts/sass_dump.py).

For every such kernel in the dump: the loop is the backward branch whose range holds the most
128-bit streamed global loads (no-allocate, LDG.E.NA.128 in SASS; one per K block: 4 a group, 3
groups a trip). Within it, basic blocks that hold a global atomic, a fence, a global store or a
shared store are the piece ends (once per panel-slice, not per K block) and are counted apart.
The rest, divided by the loop's K blocks, is the count per tile; it still includes the cursor's
wrap blocks (once per slice of <= 8 groups), so it is an upper bound by ~1-2. The opcode classes are printed per K block too.
--check: exit 1 unless every streaming-path kernel has HMMA (mma.sync) in its loop and no local
memory (LDL/STL; ld.local/st.local) anywhere.
PTX counts come before ptxas fuses and/or/shift into LOP3: an upper bound of the SASS count.
"""
import os
import shutil
import subprocess
import tempfile
import re
import sys
from collections import Counter

SASS_INS = re.compile(r'^\s*/\*([0-9a-f]{4,})\*/\s*(.*?)\s*;?\s*(?:/\*\s*0x[0-9a-f]+\s*\*/)?\s*$')
SASS_LABEL = re.compile(r'^\s*(\.L_x_\d+):\s*$')
PTX_LABEL = re.compile(r'^(\$L__\w+):\s*$')
KERNEL = re.compile(r'streambench13stream_kernelILi(\d)ELi(\d+)ELi(\d+)E')
PATH_KERNEL = re.compile(r'6stream13stream_kernelILi(\d)ELb(\d)ELi(\d+)E')  # NT, kStamps, warps
VARIANTS = {'0': 'load', '1': '+decode', '2': '+mma'}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'scripts'))
import sass_dump  # noqa: E402  (its ADDR_OP: one definition of a code-address operand)


def functions(text):
    """(name, lines) per function, for SASS ('Function : NAME') or PTX ('.entry NAME(')."""
    out, name, cur = [], None, []
    for line in text.split('\n'):
        m = re.search(r'Function : (\S+)', line) or re.search(r'\.entry\s+(\w+)\s*\(', line)
        if m:
            if name:
                out.append((name, cur))
            name, cur = m.group(1), []
        elif name:
            cur.append(line)
    if name:
        out.append((name, cur))
    return out


def parse(lines, sass):
    """Instructions as dicts {i, text, op, target}; labels map to the next instruction's index."""
    ins, labels, pending = [], {}, []
    for line in lines:
        if sass:
            lm = SASS_LABEL.match(line)
            m = SASS_INS.match(line) if not lm else None
            if lm:
                pending.append(lm.group(1))
                continue
            if not m or not m.group(2):
                continue
            text, addr = m.group(2).strip().rstrip(';').strip(), int(m.group(1), 16)
            a = sass_dump.ADDR_OP.match(line)  # a printed code address (CUDA 13's form)
            code_addr = int(a.group(2), 16) if a else None
        else:
            lm = PTX_LABEL.match(line.strip())
            if lm:
                pending.append(lm.group(1))
                continue
            s = line.strip()
            if not s or s.startswith(('//', '.', '{', '}')) or not s.endswith(';'):
                continue
            text, addr, code_addr = s.rstrip(';').strip(), None, None
        for p in pending:
            labels[p] = len(ins)
        pending = []
        body = re.sub(r'^@!?U?P\w+\s+', '', text) if sass else re.sub(r'^@!?%p\w*\s+', '', text)
        op = body.split()[0] if body.split() else ''
        ins.append(dict(i=len(ins), addr=addr, text=text, op=op, target=None, code_addr=code_addr))
    # branch targets as instruction indices
    by_addr = {x['addr']: x['i'] for x in ins if x['addr'] is not None}
    leaders = set(labels.values())
    for x in ins:
        # A dump that prints code addresses instead of labels (CUDA 13's cuobjdump) has no label
        # lines: the addresses that BRA, BSSY, CALL and JMP name start basic blocks all the same,
        # so that both forms split the code alike (without this the address form counted 3-4
        # instructions a K block fewer at M tile 16: blocks merged across a target were judged
        # cold whole).
        at = by_addr.get(x['code_addr']) if x['code_addr'] is not None else None
        if at is not None:
            leaders.add(at)
        if sass and x['op'].startswith('BRA'):
            m = re.search(r'`\((\.L_x_\d+)\)', x['text'])
            x['target'] = labels.get(m.group(1)) if m else at
        elif not sass and x['op'].startswith('bra'):
            m = re.search(r'(\$L__\w+)', x['text'])
            if m:
                x['target'] = labels.get(m.group(1))
    return ins, leaders


def is_stream_load(x, sass):
    # the no-allocate ones only: the pieces' sum loads 128 bits too (ld.global.cg: LDG.E.128.STRONG.GPU)
    if sass:
        return x['op'].startswith('LDG') and '.128' in x['op'] and '.NA.' in x['op'] + '.'
    return x['op'].startswith('ld.global.nc.L1::no_allocate.v4')


def is_cold(x, sass):
    if sass:
        return any(k in x['op'] for k in ('RED', 'ATOM', 'MEMBAR', 'STG', 'FENCE', 'ERRBAR', 'CCTL', 'STS'))
    return x['op'].startswith(('atom.', 'red.', 'membar', 'fence', 'st.global', 'st.shared'))


def is_local(x, sass):
    return x['op'].startswith(('LDL', 'STL')) if sass else x['op'].startswith(('ld.local', 'st.local'))


def is_mma(x, sass):
    return x['op'].startswith('HMMA') if sass else x['op'].startswith('mma.sync')


def classify(op, sass):
    if not sass:
        return op.split('.')[0]
    return op.split('.')[0]


def count(ins, leaders, sass):
    loops = [(x['target'], x['i']) for x in ins if x['target'] is not None and x['target'] <= x['i']]
    if not loops:
        return None
    best = max(loops, key=lambda r: sum(is_stream_load(ins[j], sass) for j in range(r[0], r[1] + 1)))
    lo, hi = best
    # basic blocks of the loop range
    starts = sorted({lo} | {j for j in leaders if lo < j <= hi} |
                    {x['i'] + 1 for x in ins[lo:hi] if x['target'] is not None or x['op'].startswith(('EXIT', 'ret'))})
    starts = [s for s in starts if s <= hi]
    hot, cold = [], []
    for a, b in zip(starts, starts[1:] + [hi + 1]):
        block = ins[a:b]
        (cold if any(is_cold(x, sass) for x in block) else hot).extend(block)
    kblocks = sum(is_stream_load(x, sass) for x in hot)
    return dict(lo=lo, hi=hi, kblocks=kblocks, hot=hot, cold=cold)


def compile_dump(source='stream.cu'):
    """kernels/sm90/SOURCE built for sm_90a: its SASS (cuobjdump) or, without cuobjdump, its PTX."""
    nvcc = shutil.which('nvcc') or '/usr/local/cuda/bin/nvcc'
    cuobjdump = shutil.which('cuobjdump') or '/usr/local/cuda/bin/cuobjdump'
    src = os.path.join(ROOT, 'kernels', 'sm90', source)
    flags = ['-std=c++17', '-O3', '-arch=sm_90a', '-I', ROOT, '--expt-relaxed-constexpr']
    with tempfile.TemporaryDirectory() as tmp:
        if os.path.exists(cuobjdump):
            cubin = os.path.join(tmp, 'dump.cubin')
            subprocess.run([nvcc, *flags, '-cubin', '-o', cubin, src], check=True)
            return subprocess.run([cuobjdump, '-sass', cubin], check=True, capture_output=True, text=True).stdout
        ptx = os.path.join(tmp, 'dump.ptx')
        subprocess.run([nvcc, *flags, '-ptx', '-o', ptx, src], check=True)
        return open(ptx).read()


def dump_text(args, source, usage):
    """The dump the arguments name: ['--compile'] builds kernels/sm90/SOURCE, else the files (also
    as one ';'-separated argument, ctest's $<TARGET_OBJECTS:...>) read as one text."""
    if args == ['--compile']:
        return compile_dump(source)
    files = [f for a in args for f in a.split(';') if f]
    if not files or any(f.startswith('-') for f in files):
        sys.exit(usage)
    return '\n'.join(read_dump(f) for f in files)


def read_dump(path):
    """A dump's text; an object, executable or cubin is disassembled (scripts/sass_dump.py)."""
    with open(path, 'rb') as f:
        if f.read(4) != b'\x7fELF':
            return open(path).read()
    cuobjdump = sass_dump.find_cuobjdump()
    if not cuobjdump:
        print(f'{path}: no cuobjdump to disassemble it with ($NVFP4_CUOBJDUMP, the PATH, /usr/local/cuda/bin; '
              'scripts/setup --tests fetches Debian 12\'s)')
        sys.exit(77)
    return sass_dump.sass_of(path, cuobjdump)


def main():
    args = sys.argv[1:]
    check = '--check' in args
    text = dump_text([a for a in args if a != '--check'], 'stream.cu', __doc__)
    sass = 'Function :' in text
    print(f"static counts per warp per 16x64 tile (one K block), from {'SASS' if sass else 'PTX (an upper bound)'}: "
          "loop trip = 3 groups = 12 K blocks; piece-end blocks apart")
    failed = []
    timed_tiles, seen = set(), 0
    for name, lines in functions(text):
        m = KERNEL.search(name)
        pm = PATH_KERNEL.search(name)
        if not m and not pm:
            continue
        seen += 1
        ins, leaders = parse(lines, sass)
        r = count(ins, leaders, sass)
        if m:
            label = f"{VARIANTS[m.group(1)]:8s} K={m.group(2):5s} warps={m.group(3)}"
        else:
            # the kernel every timed run launches, and its twin with the time line (stamps.hpp)
            label = f"path M tile {8 * int(pm.group(1)):2d} warps={pm.group(3)}" + (" (time line)" if pm.group(2) == '1' else "")
            if pm.group(2) == '0':
                timed_tiles.add(8 * int(pm.group(1)))
        local = sum(is_local(x, sass) for x in ins)
        if not r or not r['kblocks']:
            print(f"  {label}: no loop found")
            if pm:
                failed.append(f"{label}: no loop found")
            continue
        kb = r['kblocks']
        mma = sum(is_mma(x, sass) for x in r['hot'])
        hist = Counter(classify(x['op'], sass) for x in r['hot'])
        top = ', '.join(f"{k} {v / kb:.2f}" for k, v in hist.most_common(14))
        print(f"  {label}: {len(r['hot']) / kb:6.1f} per K block ({len(r['hot'])} in the loop's {kb} K blocks; "
              f"piece-end blocks {len(r['cold'])} instructions, once per panel-slice); "
              f"{'HMMA' if sass else 'mma.sync'} {mma / kb:.1f} per K block; local-memory instructions {local}")
        print(f"      by opcode per K block: {top}")
        if pm and (mma == 0 or local > 0):
            failed.append(f"{label}: {mma} mma in the loop, {local} local-memory instructions")
    if check:
        if not seen:
            failed.append("no streaming kernel in the dump (the names changed?)")
        elif timed_tiles and timed_tiles != {8, 16, 32}:
            failed.append(f"the path's timed kernels found at M tiles {sorted(timed_tiles)}, not 8, 16, 32")
        if failed:
            print("CHECK FAILED: " + "; ".join(failed))
            sys.exit(1)
        print("CHECK PASSED: every streaming-path kernel has mma in its loop and no local memory")


if __name__ == '__main__':
    main()
