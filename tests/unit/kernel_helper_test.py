"""The Python that runs inside the embedded interpreter (src/python/kernel_helper.py), imported
here as a plain module: it lints clean (pyflakes), and loading, function lookup, exception
descriptions, the unsupported rule and the return checks behave as --kernel-py relies on."""
import importlib.util
import os
import subprocess
import sys
import tempfile
import unittest

import numpy as np

SRC = os.environ.get("NVFP4_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
HELPER = os.path.abspath(os.path.join(SRC, "src", "python", "kernel_helper.py"))


def import_helper():
    spec = importlib.util.spec_from_file_location("kernel_helper", HELPER)
    mod = importlib.util.module_from_spec(spec)
    out = sys.stdout
    try:
        spec.loader.exec_module(mod)
    finally:
        sys.stdout = out  # the helper points stdout at stderr, as the tool needs
    return mod


H = import_helper()


class Lint(unittest.TestCase):
    def test_pyflakes_is_clean(self):
        try:
            import pyflakes  # noqa: F401
        except ImportError:
            self.skipTest("pyflakes is not installed (Debian: python3-pyflakes; scripts/setup --tests)")
        r = subprocess.run([sys.executable, "-m", "pyflakes", HELPER], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class Helper(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return os.path.abspath(path)

    def test_load_caches_and_finds_functions(self):
        path = self.write("sub_ok.py", "def custom_kernel(data):\n    return data\n\ndef other(x):\n    return x\n")
        mod = H.load(path)
        self.assertIs(H.load(path), mod)
        self.assertTrue(callable(H.function(mod, "custom_kernel")))
        with self.assertRaises(LookupError) as e:
            H.function(mod, "missing")
        self.assertIn("has no function 'missing' (it defines: custom_kernel, other)", str(e.exception))

    def test_describe_names_the_submissions_line(self):
        path = self.write("sub_raises.py", "def custom_kernel(data):\n    raise ValueError('bad  input\\n here')\n")
        fn = H.function(H.load(path), "custom_kernel")
        try:
            fn(None)
        except ValueError as exc:
            self.assertEqual(H.describe(exc, path), f"ValueError: bad input here (at {path}:2)")
            self.assertEqual(H.describe_call(exc, path), f"raised ValueError: bad input here (at {path}:2)")
        bad = self.write("sub_syntax.py", "def custom_kernel(:\n")
        with self.assertRaises(SyntaxError) as e:
            H.load(bad)
        self.assertIn(f"(at {bad}:1)", H.describe(e.exception, bad))

    def test_a_failed_call_points_at_the_functions_definition_not_the_helper(self):
        path = self.write("sub_sig.py", "def custom_kernel(a, b):\n    return a\n")
        fn = H.function(H.load(path), "custom_kernel")
        try:
            H.call(fn, (1,), np.zeros((1, 1, 1), dtype=np.float16))
        except TypeError as exc:
            self.assertEqual(H.describe_call(exc, path, fn),
                             "raised TypeError: custom_kernel() missing 1 required positional argument: "
                             f"'b' (at {path}:1, the function's definition: the call itself failed; it "
                             "is called as custom_kernel(data), data the input tuple)")
        else:
            self.fail("a call with the wrong arguments did not raise")

    def test_a_value_that_is_no_function_is_named_by_its_kind(self):
        mod = H.load(self.write("sub_int.py", "custom_kernel = 3\nother = 'x'\n"))
        with self.assertRaises(LookupError) as e:
            H.function(mod, "custom_kernel")
        self.assertEqual(str(e.exception), "defines 'custom_kernel' as an int (3), not a function "
                                           "(expected def custom_kernel(data): ...)")
        with self.assertRaises(LookupError) as e:
            H.function(mod, "other")
        self.assertIn("defines 'other' as a str ('x'), not a function", str(e.exception))

    def test_unsupported_rule(self):
        self.assertTrue(H.unsupported(NotImplementedError()))
        self.assertTrue(H.unsupported(RuntimeError("CUBLAS_STATUS_NOT_SUPPORTED when calling cublasLt")))
        self.assertTrue(H.unsupported(RuntimeError("no kernel image is available for execution")))
        self.assertFalse(H.unsupported(ValueError("index out of range")))
        self.assertFalse(H.unsupported(H.WrongReturn("returned shape (1,); not supported")))

    def test_call_checks_what_comes_back(self):
        c = np.zeros((2, 3, 1), dtype=np.float16)
        H.call(lambda d: np.ones((2, 3, 1), dtype=np.float16), None, c)
        self.assertTrue((c == 1).all())
        H.call(lambda d: c, None, c)  # c itself: nothing to copy
        for fn, want in ((lambda d: None, "returned None"),
                         (lambda d: np.ones((3, 2, 1), dtype=np.float16), "returned shape (3, 2, 1)"),
                         (lambda d: np.ones((2, 3, 1), dtype=np.float32), "returned dtype float32"),
                         # Not arrays: named by their type, not as numpy's 0-d "shape ()".
                         (lambda d: "abc", "returned a str, not an array"),
                         (lambda d: (x for x in ()), "returned a generator, not an array"),
                         (lambda d: Exception(), "returned an Exception, not an array"),
                         (lambda d: 1.5, "returned a float, not an array"),
                         (lambda d: [object()], "returned a list, not an array of numbers")):
            with self.assertRaises(H.WrongReturn) as e:
                H.call(fn, None, c)
            self.assertIn(want, str(e.exception))
            self.assertIn("expected c as float16 [M, N, L] = (2, 3, 1)", str(e.exception))

    def test_kinds_match_the_tuple_layouts_names(self):
        # The C++ side names each element's kind (src/python/contest_tuple.cpp, kind_name).
        self.assertEqual(sorted(H._KINDS), ["e4m3", "f16", "fp4x2"])


if __name__ == "__main__":
    unittest.main()
