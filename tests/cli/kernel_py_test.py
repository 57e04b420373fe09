#!/usr/bin/env python3
"""Kernels written in Python (--kernel-py, docs/python.md) end to end on the host backend, with
numpy-only GPU MODE style submissions written into a temporary folder: a correct one passes, a
wrong one is incorrect (exit 1), a raising one is an error naming its file:line (exit 3), a file
that does not load or lacks the function is refused before any work (exit 2); --list shows them,
and a sweep hands them on to its child processes. Skipped, saying so, when the tool was built
without Python kernels (no pybind11-dev / python3-dev).

KernelPyGpu (ctest kernel_py_gpu, label gpu) is the GPU backend: torch CUDA tensors in the
contest's dtypes on the tool's stream, the example submissions, every timing mode, wrong returns,
and GPU MODE's seed submission (rebuilt at run time from the diff that holds it, never stored
here), which ends "not supported on this GPU" where torch._scaled_mm has no FP4 (before
Blackwell). Skipped, saying why, without a GPU or without torch in the embedded Python."""
import json
import os
import shutil
import tempfile
import textwrap
import unittest

from nvfp4cli import HOST_ENV, SRC, built_without_python, gpu_reason, run
import nvfp4cli

SHAPE = ["--m", "160", "--n", "24", "--k", "96", "--l", "2"]  # M > 128: two row tiles of scales

# Decodes E2M1 by table and the scales per 16-block; B's scales come from the 6-D blocked view
# (GPU MODE's sfb_permuted), A's from the linear ones, so both views are checked. Returns a new
# array, which the tool copies into c.
GOOD = '''
import numpy as np

E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6], np.float32)


def e4m3(bits):
    bits = bits.astype(np.int64) & 0x7F
    e, m = bits >> 3, bits & 7
    return np.where(e == 0, m * 2.0 ** -9, (8 + m) * 2.0 ** (e - 10)).astype(np.float32)


def unblock(p, rows, kb):  # [32, 4, R/128, 4, Kb/4, L] -> [R, Kb, L]
    rt, kt, l = p.shape[2], p.shape[4], p.shape[5]
    return p.transpose(2, 1, 0, 4, 3, 5).reshape(rt * 128, kt * 4, l)[:rows, :kb]


def deq(q, sf):  # [R, K/2, L], [R, K/16, L] -> [L, R, K]
    x = np.empty(q.shape[:1] + (q.shape[1] * 2,) + q.shape[2:], np.float32)
    x[:, 0::2], x[:, 1::2] = E2M1[q & 15], E2M1[q >> 4]
    return np.moveaxis(x * np.repeat(e4m3(sf), 16, axis=1), 2, 0)


def custom_kernel(data):
    a, b, sfa, sfb, sfa_p, sfb_p, c = data
    m, n, l = c.shape
    assert a.dtype == np.uint8 and a.shape[0] == m and a.shape[2] == l and not a.flags.writeable
    assert c.dtype == np.float16 and c.flags.writeable
    assert (unblock(sfa_p, m, sfa.shape[1]) == sfa).all()
    out = deq(a, sfa) @ deq(b, unblock(sfb_p, n, sfb.shape[1])).transpose(0, 2, 1)
    return np.ascontiguousarray(np.moveaxis(out, 0, 2)).astype(np.float16)


def alt(data):
    return custom_kernel(data)
'''

# The good kernel, 50 ms a call at least: 30 calls cannot fit in a second.
SLOW = GOOD + '''

import time


def slow(data):
    time.sleep(0.05)
    return custom_kernel(data)
'''

WRONG = '''
def custom_kernel(data):
    c = data[-1]
    c[...] = 1.0
    return c
'''

RAISING = '''
import numpy as np


def helper(x):
    return x / 0  # line 6


def custom_kernel(data):
    return helper(1)
'''

BAD_RETURN = '''
import numpy as np


def custom_kernel(data):
    return np.zeros(data[-1].shape, np.float32)
'''

NO_FUNCTION = '''
def kernel(data):
    return data[-1]
'''

SYNTAX_ERROR = '''
def custom_kernel(data)
    return data[-1]
'''


class Submissions(unittest.TestCase):
    """What both classes share: submission files written into a temporary folder, and one run
    with a JSON report."""
    FILES = {}  # name -> source
    SHAPE, ENV, TIMING = [], None, []

    @classmethod
    def write_files(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        for name, text in cls.FILES.items():
            with open(cls.path(name), "w") as f:
                f.write(textwrap.dedent(text))

    @classmethod
    def tearDownClass(cls):
        if hasattr(cls, "tmp"):
            cls.tmp.cleanup()

    @classmethod
    def path(cls, name):
        return os.path.join(cls.dir, name + ".py")

    def run_case(self, args, shape=None, timeout=300):
        """(exit code, stdout, stderr, the report's case or None)."""
        rep = os.path.join(self.dir, "r.json")
        if os.path.exists(rep):
            os.remove(rep)
        rc, out, err = run(*args, *(shape or self.SHAPE), "--json", rep, *self.TIMING,
                           env=self.ENV, timeout=timeout)
        c = None
        if os.path.exists(rep):
            with open(rep) as f:
                c = json.load(f)["cases"][0]
        return rc, out, err, c


class KernelPy(Submissions):
    FILES = {"good": GOOD, "slow": SLOW, "wrong": WRONG, "raising": RAISING, "bad_return": BAD_RETURN,
             "no_function": NO_FUNCTION, "syntax_error": SYNTAX_ERROR}
    SHAPE, ENV, TIMING = SHAPE, HOST_ENV, ["--iters", "2", "--warmup", "0"]

    @classmethod
    def setUpClass(cls):
        why = built_without_python()
        if why:
            raise unittest.SkipTest(f"this nvfp4bench was built without Python kernels: {why}")
        cls.write_files()

    def case(self, args):
        return self.run_case(args)

    def test_correct_submission_passes(self):
        rc, out, err, c = self.case(["--kernel-py", self.path("good"), "--kernel", "py:good"])
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["kernel"]["name"], "py:good")
        self.assertIn("custom_kernel() in " + self.path("good"), c["kernel"]["description"])
        self.assertEqual(c["disposition"], "passed")
        self.assertEqual(c["verification"]["checked"], 2 * 160 * 24)

    def test_other_function_by_suffix(self):
        rc, out, err, c = self.case(["--kernel-py", self.path("good") + ":alt", "--kernel", "py:good:alt"])
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["kernel"]["name"], "py:good:alt")

    def test_example_submission_passes(self):
        example = os.path.join(SRC, "examples", "submissions", "numpy_submission.py")
        rc, out, err, c = self.case(["--kernel-py", example, "--kernel", "py:numpy_submission"])
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["disposition"], "passed")

    def test_host_default_sampling_stops_after_a_second(self):
        # Without --iters the host backend takes compare's 30 samples or a second of sampling,
        # whichever comes first (docs/cli.md): a slow kernel stops at the second.
        rep = os.path.join(self.dir, "slow.json")
        rc, out, err = run("--kernel-py", self.path("slow") + ":slow", "--kernel", "py:slow:slow",
                           *self.SHAPE, "--json", rep, env=self.ENV, timeout=300)
        self.assertEqual(rc, 0, out + err)
        with open(rep) as f:
            r = json.load(f)
        self.assertEqual(r["measurement"]["iters"], 30)
        self.assertEqual(r["measurement"]["max_time_s"], 1.0)
        kt = r["cases"][0]["kernel_timing"]
        self.assertEqual(kt["stop_reason"], "max time")
        self.assertGreaterEqual(kt["stats"]["count"], 1)
        self.assertLessEqual(kt["stats"]["count"], 21)  # 1 s / 50 ms, and the one under way

    def test_wrong_result_is_incorrect(self):
        rc, out, err, c = self.case(["--kernel-py", self.path("wrong"), "--kernel", "py:wrong"])
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(c["disposition"], "incorrect")

    def test_exception_is_exit_3_with_file_and_line(self):
        rc, out, err, c = self.case(["--kernel-py", self.path("raising"), "--kernel", "py:raising"])
        self.assertEqual(rc, 3, out + err)
        self.assertIn("ZeroDivisionError", err)
        self.assertIn("division by zero", err)
        self.assertIn(self.path("raising") + ":6", err)
        self.assertEqual(c["disposition"], "error")
        self.assertIn("ZeroDivisionError", c["message"])

    def test_wrong_return_dtype_is_exit_3(self):
        rc, out, err, c = self.case(["--kernel-py", self.path("bad_return"), "--kernel", "py:bad_return"])
        self.assertEqual(rc, 3, out + err)
        self.assertIn("returned dtype float32", err)
        self.assertIn(self.path("bad_return") + ":5", err)

    def test_missing_function_is_exit_2_before_work(self):
        rc, out, err = run("--kernel-py", self.path("no_function"), *SHAPE, env=HOST_ENV)
        self.assertEqual(rc, 2, out + err)
        self.assertIn(self.path("no_function"), err)
        self.assertIn("no function 'custom_kernel'", err)
        self.assertIn("kernel", err)  # what it does define
        self.assertNotIn("problem", out)  # nothing ran
        rc, out, err = run("--kernel-py", self.path("good") + ":nope", "--list", env=HOST_ENV)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("no function 'nope'", err)

    def test_file_that_does_not_load_is_exit_2(self):
        rc, out, err = run("--kernel-py", self.path("syntax_error"), *SHAPE, env=HOST_ENV)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("SyntaxError", err)
        self.assertIn(self.path("syntax_error") + ":2", err)
        rc, out, err = run("--kernel-py", os.path.join(self.dir, "missing.py"), "--list", env=HOST_ENV)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("no such file", err)

    def test_list_shows_python_kernels(self):
        rc, out, err = run("--kernel-py", self.path("good"), "--kernel-py", self.path("wrong"),
                           "--list", env=HOST_ENV)
        self.assertEqual(rc, 0, err)
        lines = {l.split()[0]: l for l in out.splitlines() if l.startswith("  ") and l.split()}
        self.assertIn("available", lines["py:good"])
        self.assertIn("available", lines["py:wrong"])

    def test_auto_does_not_pick_a_python_kernel(self):
        rc, out, err, c = self.case(["--kernel-py", self.path("wrong")])
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["kernel"]["name"], "host")

    def test_sweep_children_get_the_python_kernels(self):
        cfg, rep = os.path.join(self.dir, "py-sweep.json"), os.path.join(self.dir, "py-sweep-report.json")
        with open(cfg, "w") as f:
            json.dump({"name": "py", "defaults": {"warmup": 0, "iters": 1}, "cases": [
                {"name": "good", "shape": {"m": 40, "n": 24, "k": 96, "l": 2}, "kernels": ["py:good"]},
                {"name": "raising", "shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["py:raising"]},
            ]}, f)
        rc, out, err = run("--kernel-py", self.path("good"), "--kernel-py", self.path("raising"),
                           "sweep", cfg, "--json", rep, "--progress", "off", env=HOST_ENV,
                           cwd=self.dir, timeout=300)
        self.assertEqual(rc, 3, out + err)  # one error, nothing incorrect
        with open(rep) as f:
            by = {c["sweep"]["name"]: c for c in json.load(f)["cases"]}
        self.assertEqual(by["good"]["disposition"], "passed", by["good"].get("message"))
        self.assertEqual(by["good"]["kernel"]["name"], "py:good")
        self.assertEqual(by["raising"]["disposition"], "error")
        self.assertIn(self.path("raising") + ":6", by["raising"]["message"])


# The GPU backend's tuple: the contest's dtypes, shapes and strides, on the tool's (non-default)
# stream; returns a new tensor, which the tool copies into c.
TORCH_CHECKS = """
import torch


def custom_kernel(data):
    a, b, sfa, sfb, sfa_p, sfb_p, c = data
    m, n, l = c.shape
    k = a.shape[1] * 2
    assert torch.cuda.current_stream().cuda_stream != 0, "not on the tool's stream"
    assert a.dtype == torch.float4_e2m1fn_x2 and b.dtype == torch.float4_e2m1fn_x2, a.dtype
    assert sfa.dtype == torch.float8_e4m3fn and sfb_p.dtype == torch.float8_e4m3fn, sfa.dtype
    assert c.dtype == torch.float16 and c.is_cuda
    assert a.shape == (m, k // 2, l) and a.stride() == (k // 2, 1, m * k // 2), a.stride()
    assert sfb.shape == (n, k // 16, l) and sfb.stride() == (k // 16, 1, n * k // 16)
    assert sfa_p.shape == (32, 4, (m + 127) // 128, 4, (k // 16 + 3) // 4, l), sfa_p.shape
    assert c.stride() == (n, 1, m * n)
    # Element [i%32, (i%128)//32, i//128, j%4, j//4, l] of the permuted view is sfa[i, j, l].
    i = torch.arange(m, device=c.device)
    for j in range(k // 16):
        got = sfa_p[i % 32, (i % 128) // 32, i // 128, j % 4, j // 4, :].view(torch.uint8)
        assert torch.equal(got, sfa[:, j, :].view(torch.uint8)), j
    from torch_submission import dequantize
    out = torch.matmul(dequantize(a, sfa), dequantize(b, sfb).transpose(1, 2))
    return out.permute(1, 2, 0).contiguous()
"""

CPU_RETURN = """
import torch


def custom_kernel(data):
    return torch.zeros(tuple(data[-1].shape), dtype=torch.float16)
"""

TORCH_RAISING = """
import torch


def custom_kernel(data):
    a = data[0]
    return torch.matmul(a, a)  # line 7: float4 matmul is not implemented
"""

WRONG_TORCH = """
def custom_kernel(data):
    data[-1].fill_(1.0)
    return data[-1]
"""

EMPTY = """
def custom_kernel(data):
    return data[-1]
"""


def seed_diff():
    """The diff that holds GPU MODE's seed submission: outside this repository, in the shared
    documents folder beside the checkout unless $NVFP4_SEED_SUBMISSION_DIFF says where."""
    env = os.environ.get("NVFP4_SEED_SUBMISSION_DIFF")
    return env or os.path.join(SRC, "..", "shared", "docs", "seed-gpumode-submission.diff.txt")


def rebuild_from_diff(text):
    """The new side of a two-column diff: '+ ' and '  ' lines, without their prefix."""
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if l[:2] in ("+ ", "- ", "  "))
    return "\n".join(l[2:] for l in lines[start:] if l[:1] in ("+", " ")) + "\n"


class KernelPyGpu(Submissions):
    FILES = {"torch_checks": TORCH_CHECKS, "cpu_return": CPU_RETURN, "torch_raising": TORCH_RAISING,
             "wrong_torch": WRONG_TORCH, "empty": EMPTY}
    SHAPE = ["--m", "200", "--n", "136", "--k", "512", "--l", "2"]  # ragged, L > 1
    TIMING = ["--iters", "3", "--warmup", "1"]

    @classmethod
    def setUpClass(cls):
        why = built_without_python() or gpu_reason()
        if why:
            raise unittest.SkipTest(f"needs a CUDA GPU and Python kernels: {why}")
        cls.write_files()
        # torch_checks imports the example's dequantize: the example's folder beside it.
        shutil.copy(cls.example("torch_submission"), cls.dir)
        rc, out, err = run("--kernel-py", cls.path("empty"), "--list", timeout=300)
        line = next((l for l in out.splitlines() if l.split()[:1] == ["py:empty"]), "")
        if "unavailable" in line:
            why = out.split("py:empty", 1)[1].split("why:", 1)[-1].splitlines()[0].strip()
            raise unittest.SkipTest(f"no torch with CUDA in the embedded Python: {why}")

    @staticmethod
    def example(name):
        return os.path.join(SRC, "examples", "submissions", name + ".py")

    def case(self, file, kernel, *extra, shape=None):
        return self.run_case(["--kernel-py", file, "--kernel", kernel, *extra], shape, timeout=600)

    def test_tuple_dtypes_strides_and_stream(self):
        rc, out, err, c = self.case(self.path("torch_checks"), "py:torch_checks")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["disposition"], "passed")
        self.assertIn("torch CUDA tensors on the tool's stream", c["kernel"]["description"])
        self.assertIn("the Python call is in the host time per call", c["kernel"]["description"])
        self.assertGreater(c["kernel_timing"]["host_us_per_call"]["median_us"], 0)

    def test_torch_example_passes_in_cold_hot_and_rotate(self):
        for mode in ["cold", "hot", "rotate"]:
            with self.subTest(mode=mode):
                rc, out, err, c = self.case(self.example("torch_submission"), "py:torch_submission",
                                            "--mode", mode)
                self.assertEqual(rc, 0, out + err)
                self.assertEqual(c["disposition"], "passed")
                self.assertEqual(c["verification"]["checked"], 2 * 200 * 136)
                self.assertGreater(c["kernel_timing"]["stats"]["median_us"], 0)

    def test_graph_mode_runs_or_says_why(self):
        rc, out, err, c = self.case(self.example("torch_submission"), "py:torch_submission",
                                    "--mode", "graph")
        if rc != 0:
            self.assertEqual(rc, 3, out + err)
            self.assertIn("cannot be captured in a CUDA graph", err)
        else:
            self.assertEqual(c["disposition"], "passed")

    def test_triton_example_passes(self):
        rc, out, err, c = self.case(self.example("triton_submission"), "py:triton_submission")
        if rc == 2 and "No module named 'triton'" in err:
            self.skipTest(f"no Triton in the embedded Python: {err.strip()}")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["disposition"], "passed")

    def test_docs_snippet_passes(self):
        with open(os.path.join(SRC, "docs", "python.md"), encoding="utf-8") as f:
            doc = f.read()
        section = doc[doc.index("## A 10-line submission"):]
        code = section.split("```python\n", 1)[1].split("```", 1)[0]
        self.assertLessEqual(len(code.strip().splitlines()), 12, code)
        with open(self.path("docs_snippet"), "w") as f:
            f.write(code)
        rc, out, err, c = self.case(self.path("docs_snippet"), "py:docs_snippet")
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["disposition"], "passed")

    def test_wrong_result_is_incorrect(self):
        rc, out, err, c = self.case(self.path("wrong_torch"), "py:wrong_torch")
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(c["disposition"], "incorrect")

    def test_empty_submission_is_timed_and_incorrect(self):
        rc, out, err, c = self.case(self.path("empty"), "py:empty", "--mode", "hot")
        self.assertEqual(rc, 1, out + err)
        # The held stream's window holds no GPU work; the Python call is the host's figure.
        self.assertGreaterEqual(c["kernel_timing"]["stats"]["median_us"], 0)
        self.assertLess(c["kernel_timing"]["stats"]["median_us"], 5)
        self.assertGreater(c["kernel_timing"]["host_us_per_call"]["median_us"], 1)

    def test_cpu_tensor_returned_is_exit_3(self):
        rc, out, err, c = self.case(self.path("cpu_return"), "py:cpu_return")
        self.assertEqual(rc, 3, out + err)
        self.assertIn("returned a tensor on cpu; expected c as float16 [M, N, L]", err)
        self.assertEqual(c["disposition"], "error")

    def test_exception_is_exit_3_with_file_and_line(self):
        rc, out, err, c = self.case(self.path("torch_raising"), "py:torch_raising")
        self.assertEqual(rc, 3, out + err)
        self.assertIn(self.path("torch_raising") + ":7", err)
        self.assertEqual(len(err.strip().splitlines()), 1, err)

    def test_seed_submission_runs_or_is_not_supported(self):
        diff = seed_diff()
        if not os.path.exists(diff):
            self.skipTest(f"the seed submission's diff is not at {diff} (NVFP4_SEED_SUBMISSION_DIFF)")
        seed = os.path.join(self.dir, "seed_submission.py")
        with open(diff, encoding="utf-8") as f, open(seed, "w", encoding="utf-8") as g:
            g.write(rebuild_from_diff(f.read()))
        shape = ["--m", "128", "--n", "256", "--k", "256"]  # GPU MODE's first test shape
        rc, out, err, c = self.case(seed, "py:seed_submission", shape=shape)
        if rc == 0:
            self.assertEqual(c["disposition"], "passed")  # Blackwell: torch._scaled_mm has FP4
            return
        self.assertEqual(rc, 2, out + err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn("kernel 'py:seed_submission': not supported on this GPU: custom_kernel raised", lines[0])
        self.assertIn("RuntimeError", lines[0])
        self.assertEqual(c["disposition"], "not_supported")
        self.assertIn("not supported on this GPU", c["message"])


if __name__ == "__main__":
    nvfp4cli.main()
