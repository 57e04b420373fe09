#!/usr/bin/env python3
"""Kernels written in Python (--kernel-py, docs/python.md) end to end on the host backend, with
numpy-only GPU MODE style submissions written into a temporary folder: a correct one passes, a
wrong one is incorrect (exit 1), a raising one is an error naming its file:line (exit 3), a file
that does not load or lacks the function is refused before any work (exit 2); --list shows them,
and a sweep hands them on to its child processes. Skipped, saying so, when the tool was built
without Python kernels (no pybind11-dev / python3-dev)."""
import json
import os
import tempfile
import textwrap
import unittest

from nvfp4cli import HOST_ENV, SRC, run

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


def built_without_python():
    """The tool's message when it was built without Python kernels, else None."""
    with tempfile.TemporaryDirectory() as d:
        probe = os.path.join(d, "probe.py")
        with open(probe, "w") as f:
            f.write("def custom_kernel(data):\n    return data[-1]\n")
        rc, out, err = run("--kernel-py", probe, "--list", env=HOST_ENV, timeout=120)
    return err.strip() if rc == 2 and "built without Python kernels" in err else None


class KernelPy(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = built_without_python()
        if why:
            raise unittest.SkipTest(f"this nvfp4bench was built without Python kernels: {why}")
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        for name, text in [("good", GOOD), ("wrong", WRONG), ("raising", RAISING),
                           ("bad_return", BAD_RETURN), ("no_function", NO_FUNCTION),
                           ("syntax_error", SYNTAX_ERROR)]:
            with open(cls.path(name), "w") as f:
                f.write(textwrap.dedent(text))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def path(cls, name):
        return os.path.join(cls.dir, name + ".py")

    def case(self, args):
        """One run with a JSON report: (exit code, stdout, stderr, the case or None)."""
        rep = os.path.join(self.dir, "r.json")
        if os.path.exists(rep):
            os.remove(rep)
        rc, out, err = run(*args, *SHAPE, "--json", rep, "--iters", "2", "--warmup", "0",
                           env=HOST_ENV, timeout=300)
        c = None
        if os.path.exists(rep):
            with open(rep) as f:
                c = json.load(f)["cases"][0]
        return rc, out, err, c

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


if __name__ == "__main__":
    unittest.main()
