#!/usr/bin/env python3
"""The verdict cannot be fooled (docs/cli.md, "The verdict"): kernels whose first call is right
but which cheat afterwards are reported incorrect (exit 1) with a line that says why, and the
honest kernels keep passing with the checks recorded (docs/cli.md, "The verdict").
  lazy        right on its first call only, then leaves C as it is  -> the timed outputs
  memo        replays an output cached by input address (and shape) -> the recheck
  memo-shape  replays an output cached by shape alone               -> the recheck
  fast        computes only when C holds the poison                 -> the physical floor
as plugins (tests/cheat_plugins/) and as Python kernels (--kernel-py, written here).
  VerdictHost  the host backend (forced): host plugins and numpy submissions
  VerdictGpu   the GPU (label gpu): CUDA plugins in every timing mode, torch submissions, and
               the honest sm90 kernel; skipped, saying why, without a GPU"""
import json
import os
import shutil
import tempfile
import textwrap
import unittest

from nvfp4cli import HOST_ENV, PLUGIN_DIR, SCHEMA, SRC, gpu_reason, run

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema; without it the schema checks skip
    jsonschema = None

HOST_LIB = os.path.join(PLUGIN_DIR, "libnvfp4_cheat_host.so")
DEVICE_LIB = os.path.join(PLUGIN_DIR, "libnvfp4_cheat_device.so")

# Python cheats over an honest submission (the example beside them, numpy or torch).
LAZY = """
from {honest} import custom_kernel as honest
calls = 0


def custom_kernel(data):
    global calls
    calls += 1
    return honest(data) if calls == 1 else data[-1]
"""

MEMO = """
import copy

from {honest} import custom_kernel as honest
cache = {{}}


def custom_kernel(data):
    key = ({address}, tuple(data[-1].shape))
    if key not in cache:
        cache[key] = copy.deepcopy(honest(data))  # not C itself: replays rewrite C
    return cache[key]
"""

MEMO_SHAPE = """
import copy

from {honest} import custom_kernel as honest
cache = {{}}


def custom_kernel(data):
    key = tuple(data[-1].shape)
    if key not in cache:
        cache[key] = copy.deepcopy(honest(data))  # not C itself: replays rewrite C
    return cache[key]
"""

FAST_NUMPY = """
import numpy as np
from numpy_submission import custom_kernel as honest


def custom_kernel(data):
    c = data[-1]
    return honest(data) if c.view(np.uint16).flat[0] == 0x7F7F else c  # only when checked
"""

# On the GPU: the work on a stream of its own, waited for on the host, so the tool's stream sees
# only the copy into c.
FAST_TORCH = """
import torch
from torch_submission import custom_kernel as honest
side = []


def custom_kernel(data):
    if not side:
        side.append(torch.cuda.Stream())
    with torch.cuda.stream(side[0]):
        out = honest(data)
    side[0].synchronize()
    out.record_stream(torch.cuda.current_stream())
    return out
"""


class Verdict(unittest.TestCase):
    ENV = None
    HONEST = ""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def write_python(cls, address, fast):
        """The Python cheats beside a copy of the honest example they wrap."""
        shutil.copy(os.path.join(SRC, "examples", "submissions", cls.HONEST + ".py"), cls.dir)
        for name, text in {"lazy": LAZY, "memo": MEMO, "memo_shape": MEMO_SHAPE, "fast": fast}.items():
            with open(cls.py(name), "w") as f:
                f.write(textwrap.dedent(text.format(honest=cls.HONEST, address=address)))

    @classmethod
    def py(cls, name):
        return os.path.join(cls.dir, name + ".py")

    def case(self, *args, timeout=600):
        """(exit code, stdout + stderr, the report's case)."""
        rep = os.path.join(self.dir, "r.json")
        if os.path.exists(rep):
            os.remove(rep)
        rc, out, err = run(*args, "--json", rep, env=self.ENV, timeout=timeout)
        self.assertTrue(os.path.exists(rep), out + err)
        with open(rep) as f:
            report = json.load(f)
        if jsonschema:
            with open(SCHEMA) as f:
                jsonschema.validate(report, json.load(f))
        return rc, out + err, report["cases"][0]

    def assert_caught(self, args, by, why):
        """Exit 1, incorrect, the verdict part `by` failed, and `why` in the message and output."""
        rc, out, c = self.case(*args)
        self.assertEqual(rc, 1, out)
        self.assertEqual(c["disposition"], "incorrect", c["message"])
        self.assertTrue(c["verification"]["passed"], "the first call is right: " + out)
        v = c["verdict"]
        part = v[by]
        self.assertFalse(part["verification"]["passed"] if by == "recheck" else part["passed"], v)
        self.assertIn(why, c["message"])
        self.assertIn("result    incorrect: " + c["message"], out)
        return c

    def assert_honest(self, args):
        rc, out, c = self.case(*args)
        self.assertEqual(rc, 0, out)
        self.assertEqual(c["disposition"], "passed")
        v = c["verdict"]
        self.assertTrue(v["timed_outputs"]["passed"], v)
        self.assertGreater(v["timed_outputs"]["samples"], 0)
        self.assertTrue(v["recheck"]["verification"]["passed"], v)
        self.assertTrue(v["floor"]["known"] and v["floor"]["passed"], v)
        self.assertIn("checked   timed outputs right", out)
        self.assertGreater(c["kernel_timing"]["host_us_per_call"]["median_us"], 0)
        return c


class VerdictHost(Verdict):
    ENV = HOST_ENV
    HONEST = "numpy_submission"
    SMALL = ["--m", "40", "--n", "24", "--k", "96", "--l", "2", "--iters", "4", "--warmup", "1"]
    # The fast kernels need a floor well above their call: it scales with the FLOPs. The calls
    # just after a checked one are slower (caches): enough samples keep the median on fast ones.
    PLUGIN_FAST = ["--m", "512", "--n", "256", "--k", "1536", "--iters", "16", "--warmup", "1"]
    PY_FAST = ["--m", "512", "--n", "512", "--k", "2048", "--iters", "40", "--warmup", "1",
               "--verify-sample", "1000"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        rc, out, err = run("--kernel-py", os.path.join(SRC, "examples", "submissions",
                                                       "numpy_submission.py"), "--list", env=HOST_ENV)
        cls.python = rc == 0
        cls.python_why = err.strip()
        cls.write_python("data[0].ctypes.data", FAST_NUMPY)

    def need_python(self):
        if not self.python:
            self.skipTest(f"this nvfp4bench has no Python kernels: {self.python_why}")

    def plugin(self, kernel, shape):
        return ["--kernel-lib", HOST_LIB, "--kernel", kernel, *shape]

    def python_kernel(self, name, shape):
        return ["--kernel-py", self.py(name), "--kernel", "py:" + name, *shape]

    def test_lazy_plugin_fails_at_its_first_timed_sample(self):
        c = self.assert_caught(self.plugin("lazy-host", self.SMALL), "timed_outputs",
                               "timed sample 0 (its one call) wrote a wrong output")
        self.assertIn("1920 unwritten", c["message"])

    def test_memo_plugins_fail_the_recheck(self):
        for kernel in ["memo-host", "memo-shape-host"]:
            with self.subTest(kernel=kernel):
                c = self.assert_caught(self.plugin(kernel, self.SMALL), "recheck",
                                       "recheck on fresh operands in the same buffers")
                self.assertTrue(c["verdict"]["timed_outputs"]["passed"])  # it replays right

    def test_fast_plugin_is_below_the_floor(self):
        # The host floor scales with the hardware threads (src/measure/floor.hpp); at this shape
        # it must stay above the few microseconds a call that returns at once still takes.
        threads = os.cpu_count() or 1
        floor_us = 2 * 512 * 256 * 1536 / (threads * 4096 * 6e9) * 1e6
        if floor_us < 5:
            self.skipTest(f"the host floor at 512x256x1536 with {threads} hardware threads is "
                          f"{floor_us:.2f} us, under a call's own overhead")
        c = self.assert_caught(self.plugin("fast-host", self.PLUGIN_FAST), "floor",
                               "below the physical floor of")
        self.assertTrue(c["verdict"]["timed_outputs"]["passed"])
        self.assertTrue(c["verdict"]["recheck"]["verification"]["passed"])
        self.assertIn("hardware threads", c["message"])

    def test_python_cheats_fail(self):
        self.need_python()
        self.assert_caught(self.python_kernel("lazy", self.SMALL), "timed_outputs",
                           "timed sample 0 (its one call)")
        self.assert_caught(self.python_kernel("memo", self.SMALL), "recheck", "recheck on fresh")
        self.assert_caught(self.python_kernel("memo_shape", self.SMALL), "recheck", "recheck on fresh")
        self.assert_caught(self.python_kernel("fast", self.PY_FAST), "floor", "below the physical floor")

    def test_honest_kernels_pass_with_the_checks_recorded(self):
        c = self.assert_honest(self.SMALL)
        self.assertEqual(c["kernel"]["name"], "host")
        v = c["verdict"]
        self.assertEqual(v["timed_outputs"]["samples"], 3)  # attempts 0, 1 and 3 of 4
        self.assertEqual(v["timed_outputs"]["elements_per_output"], 2 * 40 * 24)
        self.assertEqual(v["recheck"]["against"], "the exact CPU value at 1920 elements")
        self.assertNotEqual(v["recheck"]["seed"], c["problem"]["seed"])
        self.assert_honest(["--kernel-lib", os.path.join(PLUGIN_DIR, "libnvfp4_example_host.so"),
                            "--kernel", "example-host", *self.SMALL])
        if self.python:
            self.assert_honest(self.python_kernel(self.HONEST, self.SMALL))


class VerdictGpu(Verdict):
    HONEST = "torch_submission"
    SHAPE = ["--m", "128", "--n", "7168", "--k", "16384"]  # the README's default problem
    TIMING = ["--iters", "16", "--warmup", "1"]

    @classmethod
    def setUpClass(cls):
        why = gpu_reason()
        if why:
            raise unittest.SkipTest(f"needs a CUDA GPU: {why}")
        super().setUpClass()
        cls.write_python("data[0].data_ptr()", FAST_TORCH)
        rc, out, err = run("--kernel-py", cls.py("lazy"), "--list", timeout=300)
        line = next((l for l in out.splitlines() if l.split()[:1] == ["py:lazy"]), "")
        cls.torch_why = "" if rc == 0 and "unavailable" not in line else (line or err).strip()

    def plugin(self, kernel, mode, shape=None):
        return ["--kernel-lib", DEVICE_LIB, "--kernel", kernel, "--mode", mode,
                *(shape or self.SHAPE), *self.TIMING]

    def test_lazy_plugin_fails_in_every_mode(self):
        for mode in ["cold", "hot", "rotate", "graph"]:
            with self.subTest(mode=mode):
                self.assert_caught(self.plugin("lazy", mode), "timed_outputs", "timed sample 0")

    def test_memo_plugins_fail_the_recheck(self):
        for kernel in ["memo", "memo-shape"]:
            for mode in ["cold", "hot", "rotate"]:  # memo allocates on a miss: no graph capture
                with self.subTest(kernel=kernel, mode=mode):
                    self.assert_caught(self.plugin(kernel, mode), "recheck", "recheck on fresh")

    def test_fast_plugin_is_below_the_floor(self):
        for mode in ["cold", "hot", "rotate", "graph"]:
            with self.subTest(mode=mode):
                c = self.assert_caught(self.plugin("fast", mode), "floor", "below the physical floor")
                self.assertIn("TFLOP/s", c["verdict"]["floor"]["basis"])
                self.assertEqual(c["verdict"]["floor"]["memory_counted"], mode != "hot")

    def test_torch_cheats_fail(self):
        if self.torch_why:
            self.skipTest(f"no torch with CUDA in the embedded Python: {self.torch_why}")
        py = lambda name: ["--kernel-py", self.py(name), "--kernel", "py:" + name, *self.SHAPE,
                           *self.TIMING]
        self.assert_caught(py("lazy"), "timed_outputs", "timed sample 0")
        self.assert_caught(py("memo"), "recheck", "recheck on fresh")
        self.assert_caught(py("memo_shape"), "recheck", "recheck on fresh")
        self.assert_caught(py("fast"), "floor", "below the physical floor")

    def test_honest_kernels_pass_in_every_mode(self):
        for mode in ["cold", "hot", "rotate", "graph"]:
            with self.subTest(mode=mode):
                c = self.assert_honest(["--mode", mode, *self.SHAPE, *self.TIMING])
                self.assertTrue(c["kernel_timing"]["stream_held"], c["kernel_timing"])
                if mode in ("rotate", "graph"):
                    self.assertGreater(c["verdict"]["timed_outputs"]["slots"], 1)


if __name__ == "__main__":
    unittest.main()
