"""A GPU MODE nvfp4_gemm submission with its own kernel, in Triton: each program decodes tiles of
A and B from packed E2M1 and their E4M3 scales into fp16 registers (exact: docs/format.md) and
multiplies them with tl.dot, fp32 accumulation; nothing is dequantized to memory. Runs on Hopper
(and any GPU Triton supports).

    nvfp4bench --kernel-py examples/submissions/triton_submission.py \
        --kernel py:triton_submission --m 128 --n 7168 --k 16384 --peers dequant-f16
"""
import torch
import triton
import triton.language as tl


@triton.jit
def _e2m1(code):
    """4-bit E2M1 codes (int32) -> fp32 values: sign, 2 exponent bits, 1 mantissa bit."""
    e = (code >> 1) & 3
    m = (code & 1).to(tl.float32)
    mag = tl.where(e == 0, m * 0.5, (1.0 + 0.5 * m) * tl.exp2((e - 1).to(tl.float32)))
    return tl.where((code & 8) != 0, -mag, mag)


@triton.jit
def _ue4m3(bits):
    """Scale bytes (int32) -> fp32, unsigned E4M3: the sign bit is not part of the value."""
    e = (bits >> 3) & 15
    m = (bits & 7).to(tl.float32)
    return tl.where(e == 0, m * 0.001953125, (8.0 + m) * tl.exp2((e - 10).to(tl.float32)))


@triton.jit
def _tile(q_ptr, sf_ptr, rows, row_ok, k0, sq_r, sq_l, ss_r, ss_l, l, BLOCK_K: tl.constexpr):
    """Rows x BLOCK_K of a packed operand, decoded and scaled, as fp16."""
    kb = k0 // 2 + tl.arange(0, BLOCK_K // 2)
    q = tl.load(q_ptr + l * sq_l + rows[:, None] * sq_r + kb[None, :], mask=row_ok[:, None], other=0)
    q = q.to(tl.int32)
    x = tl.join(_e2m1(q & 15), _e2m1(q >> 4))  # [R, BLOCK_K/2, 2]: even K in the low nibble
    ks = k0 // 16 + tl.arange(0, BLOCK_K // 16)
    s = tl.load(sf_ptr + l * ss_l + rows[:, None] * ss_r + ks[None, :], mask=row_ok[:, None], other=0)
    x = tl.reshape(x, (x.shape[0], BLOCK_K // 16, 16)) * _ue4m3(s.to(tl.int32))[:, :, None]
    return tl.reshape(x, (x.shape[0], BLOCK_K)).to(tl.float16)


@triton.jit
def _nvfp4_gemm(a, b, sfa, sfb, c, M, N, K,
                sa_m, sa_l, sb_n, sb_l, ssa_m, ssa_l, ssb_n, ssb_l, sc_m, sc_n, sc_l,
                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m, pid_n, l = tl.program_id(0), tl.program_id(1), tl.program_id(2)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ta = _tile(a, sfa, rm, rm < M, k0, sa_m, sa_l, ssa_m, ssa_l, l, BLOCK_K)
        tb = _tile(b, sfb, rn, rn < N, k0, sb_n, sb_l, ssb_n, ssb_l, l, BLOCK_K)
        acc = tl.dot(ta, tl.trans(tb), acc)
    ptr = c + l * sc_l + rm[:, None] * sc_m + rn[None, :] * sc_n
    tl.store(ptr, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


def custom_kernel(data):
    a, b, sfa, sfb, _, _, c = data
    a, b = a.view(torch.uint8), b.view(torch.uint8)  # Triton takes bytes, not float4 pairs
    sfa, sfb = sfa.view(torch.uint8), sfb.view(torch.uint8)
    m, n, l = c.shape
    k = a.shape[1] * 2
    block_k = 64 if k % 64 == 0 else 32 if k % 32 == 0 else 16
    # Smaller tiles when 128x128 ones would leave most of the GPU's multiprocessors idle.
    sms = torch.cuda.get_device_properties(c.device).multi_processor_count
    block_m = 64 if m <= 64 or triton.cdiv(m, 128) * triton.cdiv(n, 128) * l < sms else 128
    block_n = 64 if triton.cdiv(m, block_m) * triton.cdiv(n, 128) * l < sms else 128
    grid = (triton.cdiv(m, block_m), triton.cdiv(n, block_n), l)
    _nvfp4_gemm[grid](a, b, sfa, sfb, c, m, n, k,
                      a.stride(0), a.stride(2), b.stride(0), b.stride(2),
                      sfa.stride(0), sfa.stride(2), sfb.stride(0), sfb.stride(2),
                      c.stride(0), c.stride(1), c.stride(2),
                      BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k,
                      num_warps=8 if block_m * block_n > 8192 else 4, num_stages=3)
    return c
