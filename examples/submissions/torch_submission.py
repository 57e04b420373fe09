"""A GPU MODE nvfp4_gemm submission that runs on Hopper: dequantize A and B with torch ops (exact
in fp16: docs/format.md), then one fp16 batched matmul with fp32 accumulation.

    nvfp4bench --kernel-py examples/submissions/torch_submission.py \
        --kernel py:torch_submission --m 128 --n 7168 --k 16384 --peers dequant-f16

What it costs is the point of comparison: this is what a user without an NVFP4 GEMM writes first.
"""
import torch

# No fp16 partial sums inside cuBLAS's split-K: the result is the fp32 sum rounded once.
torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False

_E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]
_pairs = {}  # device -> [256, 2] fp16: the two E2M1 values of each byte (low nibble first)


def _pair_table(device):
    t = _pairs.get(device)
    if t is None:
        v = torch.tensor(_E2M1, dtype=torch.float16, device=device)
        byte = torch.arange(256, device=device)
        t = _pairs[device] = torch.stack((v[byte & 15], v[byte >> 4]), dim=1)
    return t


def dequantize(q, sf):
    """[R, K/2, L] packed E2M1, [R, K/16, L] E4M3 scales -> [L, R, K] fp16."""
    q = q.view(torch.uint8).permute(2, 0, 1)  # [L, R, K/2]
    x = torch.nn.functional.embedding(q.int(), _pair_table(q.device)).flatten(-2)  # [L, R, K]
    # The scales are unsigned E4M3 (UE4M3): the sign bit is not part of the value.
    s = (sf.view(torch.uint8) & 0x7F).view(torch.float8_e4m3fn).to(torch.float16)
    s = s.permute(2, 0, 1).unsqueeze(-1)  # [L, R, K/16, 1]
    return (x.unflatten(-1, (-1, 16)) * s).flatten(-2)


def custom_kernel(data):
    a, b, sfa, sfb, _, _, c = data
    out = torch.matmul(dequantize(a, sfa), dequantize(b, sfb).transpose(1, 2))  # [L, M, N]
    c.copy_(out.permute(1, 2, 0))
    return c
