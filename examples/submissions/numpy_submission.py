"""A GPU MODE nvfp4_gemm submission in plain numpy, for nvfp4bench's host backend:

    CUDA_VISIBLE_DEVICES= build/nvfp4bench --kernel-py examples/submissions/numpy_submission.py \
        --kernel py:numpy_submission --m 128 --n 256 --k 512 --l 2

custom_kernel gets the contest's tuple (a, b, sfa, sfb, sfa_permuted, sfb_permuted, c) as numpy
views of the tool's buffers: a [M, K/2, L] and b [N, K/2, L] uint8 (two E2M1 codes per byte, the
even K index in the low nibble), sfa [M, K/16, L] and sfb [N, K/16, L] uint8 (E4M3 bits), the
blocked scales in the contest's 6-D view (unused here), c [M, N, L] float16. It writes C = A B^T
per batch into c and returns it (docs/python.md)."""
import numpy as np

E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)
# E4M3 as unsigned scales (UE4M3): the 128 values of the low 7 bits, by table
_e, _m = np.arange(128) >> 3, np.arange(128) & 7
E4M3 = np.where(_e == 0, _m * 2.0 ** -9, (8 + _m) * 2.0 ** (_e - 10)).astype(np.float32)


def dequantize(q, sf):  # [R, K/2, L] codes, [R, K/16, L] scales -> [L, R, K] float32
    q, sf = np.moveaxis(q, 2, 0), np.moveaxis(sf, 2, 0)
    x = np.empty(q.shape[:2] + (q.shape[2] * 2,), np.float32)
    x[..., 0::2], x[..., 1::2] = E2M1[q & 15], E2M1[q >> 4]
    return x * np.repeat(E4M3[sf & 0x7F], 16, axis=2)


def custom_kernel(data):
    a, b, sfa, sfb, _sfa_permuted, _sfb_permuted, c = data
    out = dequantize(a, sfa) @ dequantize(b, sfb).transpose(0, 2, 1)  # [L, M, N] float32
    c[...] = np.moveaxis(out, 0, 2).astype(np.float16)
    return c
