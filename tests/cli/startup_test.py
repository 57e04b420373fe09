#!/usr/bin/env python3
"""What a call without a GPU loads: cuBLASLt (500+ MB, ~80 ms of static initialisers) only where
a GPU path needs it (src/device/cublaslt_library.hpp). The dynamic loader's own trace
(LD_DEBUG=libs) says which libraries a process opened; --version, --help, --list, a host run and
a host sweep must not open libcublasLt. Timing is not asserted here (bench/results/cpu/ has the
figures); what is loaded is."""
import os
import subprocess
import tempfile
import unittest

from nvfp4cli import BIN, CONFIGS, HOST_ENV
import nvfp4cli


def opened_libraries(*args):
    """(exit code, the loader's trace of `nvfp4bench args`) on the host backend."""
    env = dict(HOST_ENV, LD_DEBUG="libs")
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300, env=env)
    return p.returncode, p.stderr


class Startup(unittest.TestCase):
    def assert_no_cublaslt(self, *args):
        rc, trace = opened_libraries(*args)
        self.assertEqual(rc, 0, trace[-2000:])
        # The trace is real: it names the libraries the tool does need.
        self.assertIn("libcudart.so", trace)
        self.assertNotIn("libcublasLt", trace, f"{args} opened cuBLASLt")

    def test_version_help_and_list_do_not_open_cublaslt(self):
        for args in (["--version"], ["--help"], ["--list"], ["sweep", "--help"]):
            with self.subTest(args=args):
                self.assert_no_cublaslt(*args)

    def test_host_run_and_host_sweep_do_not_open_cublaslt(self):
        with tempfile.TemporaryDirectory() as d:
            self.assert_no_cublaslt("--m", "16", "--n", "32", "--k", "64", "--warmup", "0",
                                    "--iters", "1", "--json", os.path.join(d, "r.json"))
            self.assert_no_cublaslt("sweep", os.path.join(CONFIGS, "smoke.json"), "--json",
                                    os.path.join(d, "sweep.json"))


if __name__ == "__main__":
    nvfp4cli.main()
