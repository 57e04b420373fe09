#!/usr/bin/env python3
"""nvfp4cli.main's exit status, which ctest reads (SKIP_RETURN_CODE 77, tests/cli/CMakeLists.txt):
a failure or an error is 1 even beside a skipped test (ctest's SKIP_REGULAR_EXPRESSION, used
before, marked such a run skipped and hid the failure), a skip without failures 77, else 0."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import nvfp4cli

HERE = os.path.dirname(os.path.abspath(__file__))
BODIES = {
    "ok": "self.assertTrue(True)",
    "fail": "self.assertEqual(1, 2)",
    "error": "raise RuntimeError('planted')",
    "skip": "self.skipTest('planted skip')",
}


def status(*kinds):
    """Exit status of a test file whose tests do `kinds`, run through nvfp4cli.main."""
    tests = "".join(f"    def test_{i}_{k}(self):\n        {BODIES[k]}\n" for i, k in enumerate(kinds))
    src = textwrap.dedent("""\
        import sys, unittest
        sys.path.insert(0, {here!r})
        import nvfp4cli
        class T(unittest.TestCase):
        {tests}
        if __name__ == "__main__":
            nvfp4cli.main()
        """).format(here=HERE, tests=tests)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "planted_test.py")
        with open(path, "w") as f:
            f.write(src)
        return subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=120).returncode


class ExitStatus(unittest.TestCase):
    def test_a_failure_beside_a_skip_fails(self):
        self.assertEqual(status("skip", "fail"), 1)
        self.assertEqual(status("ok", "skip", "error"), 1)

    def test_failures_and_errors_fail(self):
        self.assertEqual(status("fail"), 1)
        self.assertEqual(status("error", "ok"), 1)

    def test_a_skip_without_failures_is_a_skip(self):
        self.assertEqual(status("skip"), nvfp4cli.SKIP_EXIT)
        self.assertEqual(status("ok", "skip"), nvfp4cli.SKIP_EXIT)

    def test_passes_pass(self):
        self.assertEqual(status("ok", "ok"), 0)


if __name__ == "__main__":
    nvfp4cli.main()
