#!/usr/bin/env python3
"""SASS of the CUDA ELF images in a file, as `cuobjdump -sass` of CUDA 12 or later lists it, so that
the count scripts (bench/sm90_fused_count.py, bench/sm90_stream_count.py) run on machines whose CUDA
toolkit has no cuobjdump (docs/testing.md: the tests sm90_fused_chain_count_sass and
sm90_stream_count_sass).

  usage: sass_dump.py [--cuobjdump PATH] FILE...
  FILE: a host object, executable or cubin holding sm_90a ELF images.

The cuobjdump is --cuobjdump, else $NVFP4_CUOBJDUMP, else `cuobjdump` on the PATH or in
/usr/local/cuda/bin. One of CUDA 12 or later prints the SASS itself. Debian 12's (CUDA 11.8, package
nvidia-cuda-toolkit in non-free; scripts/setup --tests fetches it where the toolkit has none) cannot
read CUDA 13's images as they are, so for it each ELF image is cut out of FILE and:
  - its e_flags are written in the encoding before CUDA 12 (11.8 reads the new one as "sm_4");
  - the instructions it cannot decode (it prints their two words as bare hex: VIADD among them) are
    put back at their addresses as UNK_0xOPC (OPC: the low 12 bits of the first word);
  - the code addresses of BRA, BSSY, CALL and JMP are printed as labels, `(.L_x_N), as nvdisasm
    prints them (CUDA 13's cuobjdump prints the addresses; the count scripts split both alike).
Exit 77 (a skip for ctest) when no cuobjdump is found, 1 when no FILE holds a CUDA function.
"""
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

ELF_MAGIC = b'\x7fELF'
ELFOSABI_CUDA = (0x33, 0x41)     # e_ident[EI_OSABI] of CUDA images, before and since CUDA 12
OLD_SM90_FLAGS = 0x5a055a        # EF_CUDA_SM90 | 64-bit address | texmode unified | virtual SM90
INS = re.compile(r'^(\s*)/\*([0-9a-f]{4,})\*/')
HEX = re.compile(r'^\s*/\*\s*(0x[0-9a-f]{16})\s*\*/\s*$')
ADDR_OP = re.compile(r'^(\s*/\*[0-9a-f]{4,}\*/\s*(?:@!?U?P\w+\s+)?(?:BRA|BSSY|CALL|JMP)\S*\s+(?:[^;]*?,\s*)?)(0x[0-9a-f]+)')


def find_cuobjdump(given=None):
    for c in (given, os.environ.get('NVFP4_CUOBJDUMP'), shutil.which('cuobjdump'), '/usr/local/cuda/bin/cuobjdump'):
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def cuda_release(cuobjdump):
    out = subprocess.run([cuobjdump, '--version'], capture_output=True, text=True).stdout
    m = re.search(r'release (\d+)\.(\d+)', out)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


def elf_images(data):
    """The 64-bit CUDA ELF images in `data` (a cubin is one; an object holds them in its fatbin)."""
    images, at = [], data.find(ELF_MAGIC, 0)
    while at != -1:
        if data[at + 4] == 2 and data[at + 7] in ELFOSABI_CUDA and at + 64 <= len(data):
            shoff, = struct.unpack_from('<Q', data, at + 0x28)
            shentsize, shnum = struct.unpack_from('<HH', data, at + 0x3a)
            end = at + shoff + shentsize * shnum
            if shnum and end <= len(data):
                images.append(data[at:end])
                at = data.find(ELF_MAGIC, end)
                continue
        at = data.find(ELF_MAGIC, at + 1)
    return images


def restore_undecoded(text):
    """Lines for the instructions cuobjdump 11.8 printed as bare hex, from the gaps in the addresses."""
    res, prev, orphans = [], None, []
    for line in text.split('\n'):
        m = INS.match(line)
        if m:
            at = int(m.group(2), 16)
            if prev is not None and at > prev + 16:
                words = orphans[1:]  # the first is the previous instruction's second word
                for j in range((at - prev) // 16 - 1):
                    lo = int(words[2 * j], 16) if 2 * j < len(words) else 0
                    res.append('%s/*%04x*/                   UNK_%s ;' % (m.group(1), prev + 16 * (j + 1), hex(lo & 0xfff)))
            prev, orphans = at, []
            res.append(line)
            continue
        if 'Function :' in line:
            prev, orphans = None, []
        h = HEX.match(line)
        if h:
            orphans.append(h.group(1))
            continue
        res.append(line)
    return res


def label_addresses(lines):
    """Code-address operands as `(.L_x_N) and a label line before each target, per function."""
    targets, fn = set(), -1
    for line in lines:
        fn += 'Function :' in line
        m = ADDR_OP.match(line)
        if m:
            targets.add((fn, int(m.group(2), 16)))
    names = {k: '.L_x_%d' % n for n, k in enumerate(sorted(targets))}
    out, fn = [], -1
    for line in lines:
        fn += 'Function :' in line
        m = INS.match(line)
        if m and (fn, int(m.group(2), 16)) in names:
            out.append(names[(fn, int(m.group(2), 16))] + ':')
        a = ADDR_OP.match(line)
        if a:
            line = a.group(1) + '`(' + names[(fn, int(a.group(2), 16))] + ')' + line[a.end():]
        out.append(line)
    return out


def sass_of(path, cuobjdump):
    """The SASS text of every CUDA image in `path` ('' where it holds none)."""
    if cuda_release(cuobjdump) >= (12, 0):
        r = subprocess.run([cuobjdump, '-sass', path], capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else ''
    with open(path, 'rb') as f:
        images = elf_images(f.read())
    texts = []
    with tempfile.TemporaryDirectory() as tmp:
        for n, image in enumerate(images):
            b = bytearray(image)
            struct.pack_into('<I', b, 48, OLD_SM90_FLAGS)
            cubin = os.path.join(tmp, f'image{n}.cubin')
            with open(cubin, 'wb') as f:
                f.write(b)
            env = dict(os.environ, NVDISASM_PATH=os.path.dirname(os.path.abspath(cuobjdump)))
            r = subprocess.run([cuobjdump, '-sass', cubin], check=True, capture_output=True, text=True, env=env)
            texts.append('\n'.join(label_addresses(restore_undecoded(r.stdout))))
    return '\n'.join(texts)


def main():
    args = sys.argv[1:]
    given = None
    if args[:1] == ['--cuobjdump']:
        given, args = args[1] if len(args) > 1 else None, args[2:]
    if not args or any(a.startswith('-') for a in args):
        sys.exit(__doc__)
    cuobjdump = find_cuobjdump(given)
    if not cuobjdump:
        print('no cuobjdump: give --cuobjdump or $NVFP4_CUOBJDUMP (scripts/setup --tests fetches Debian 12\'s)')
        sys.exit(77)
    text = ''.join(sass_of(path, cuobjdump) for path in args)
    if 'Function :' not in text:
        sys.exit(f'no CUDA function in {" ".join(args)}')
    sys.stdout.write(text)


if __name__ == '__main__':
    main()
