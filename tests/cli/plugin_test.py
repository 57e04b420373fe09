#!/usr/bin/env python3
"""Kernels from plugins (--kernel-lib) end to end: the example plugins pass, and the
deliberately broken ones (tests/broken_plugins/) are reported for what they are.
  PluginHost   host kernels on the host backend (forced, so it runs on every machine)
  PluginGpu    device kernels; skipped without a GPU
  PluginSweep  a hanging kernel under the sweep's per-case timeout; skipped without `sweep`"""
import json
import os
import subprocess
import tempfile
import unittest

import nvfp4cli
from nvfp4cli import BIN, HOST_ENV, PLUGIN_DIR as PLUGINS, gpu_reason


def lib(name):
    return os.path.join(PLUGINS, f"libnvfp4_{name}.so")


def run(args, env=None, timeout=300):
    return nvfp4cli.run(*args, env=env, timeout=timeout)


class Report:
    """Runs one case with a JSON report and returns (exit code, stdout, stderr, the case)."""

    def case(self, args, env):
        with tempfile.TemporaryDirectory() as d:
            rep = os.path.join(d, "r.json")
            rc, out, err = run([*args, "--json", rep, "--iters", "1", "--warmup", "0"], env)
            with open(rep) as f:
                return rc, out, err, json.load(f)["cases"][0]


class PluginHost(unittest.TestCase, Report):
    SHAPE = ["--m", "40", "--n", "24", "--k", "96", "--l", "2"]

    def test_example_host_passes(self):
        rc, out, err, c = self.case(["--kernel-lib", lib("example_host"), "--kernel", "example-host",
                                     *self.SHAPE], HOST_ENV)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["kernel"]["name"], "example-host")
        self.assertIn("[plugin " + lib("example_host"), c["kernel"]["description"])
        self.assertEqual(c["disposition"], "passed")
        self.assertEqual(c["verification"]["checked"], 2 * 40 * 24)

    def test_list_shows_plugin_kernels(self):
        rc, out, err = run(["--kernel-lib", lib("example_host"), "--kernel-lib", lib("broken_host"),
                            "--kernel-lib", lib("example_cuda"), "--list"], HOST_ENV)
        self.assertEqual(rc, 0, err)
        lines = {l.split()[0]: l for l in out.splitlines() if l.startswith("  ") and l.split()}
        self.assertIn("available", lines["example-host"])
        self.assertIn("available", lines["broken-nan-host"])
        self.assertIn("unavailable", lines["example-cuda"])  # a device kernel, no GPU here

    def test_auto_keeps_the_builtin_kernel(self):
        # Loading a library adds choices; it does not change what `auto` picks.
        rc, out, err, c = self.case(["--kernel-lib", lib("broken_host"), *self.SHAPE], HOST_ENV)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["kernel"]["name"], "host")

    def test_a_failing_kernel_still_leaves_its_report(self):
        """Regression: an error status from a plugin kernel left no --json report."""
        rc, out, err, c = self.case(["--kernel-lib", lib("broken_host"), "--kernel", "broken-status-host",
                                     *self.SHAPE], HOST_ENV)
        self.assertEqual(rc, 3, out + err)
        self.assertEqual(c["disposition"], "error")
        self.assertEqual(c["kernel"]["name"], "broken-status-host")
        self.assertEqual(c["kernel"]["asked"], "broken-status-host")
        self.assertTrue(c["message"], c)
        self.assertIn(c["message"], err)  # the same one line on stderr

    def test_nan_is_incorrect(self):
        rc, out, err, c = self.case(["--kernel-lib", lib("broken_host"), "--kernel", "broken-nan-host",
                                     *self.SHAPE], HOST_ENV)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(c["disposition"], "incorrect")
        v = c["verification"]
        self.assertEqual((v["mismatches"], v["unwritten"]), (1, 0))
        first = v["first_mismatches"][0]
        self.assertEqual((first["l"], first["i"], first["j"], first["unwritten"]), (0, 0, 0, False))
        self.assertIn("result    incorrect: 1 of 1920 checked elements mismatch (0 unwritten)", out)

    def test_unwritten_outputs_are_counted(self):
        rc, out, err, c = self.case(["--kernel-lib", lib("broken_host"), "--kernel",
                                     "broken-unwritten-host", *self.SHAPE], HOST_ENV)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(c["disposition"], "incorrect")
        v = c["verification"]
        self.assertEqual((v["mismatches"], v["unwritten"]), (2 * 24, 2 * 24))  # last row, each batch
        self.assertTrue(all(m["unwritten"] and m["i"] == 39 for m in v["first_mismatches"]))
        self.assertIn("(48 unwritten)", out)


    # The example host plugin's optional configurations entry (docs/plugins.md): listed for the
    # shape, pinned, refused where the shape does not allow it, each run by a sweep's "all".
    def test_configurations_are_listed_pinned_and_refused(self):
        ex = ["--kernel-lib", lib("example_host"), "--kernel", "example-host"]
        rc, out, err = run([*ex, "--m", "16", "--n", "24", "--k", "64", "--list-configs"], HOST_ENV)
        self.assertEqual((rc, out.splitlines()), (0, ["linear tile 16", "blocked tile 16"]), err)
        rc, out, err = run([*ex, "--m", "16", "--n", "80", "--k", "64", "--list-configs"], HOST_ENV)
        self.assertEqual(out.splitlines(), ["linear tile 16", "linear tile 64", "blocked tile 16",
                                            "blocked tile 64"], err)
        rc, out, err, c = self.case([*ex, *self.SHAPE, "--kernel-config", "blocked tile 16"], HOST_ENV)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual((c["kernel"]["configuration"], c["disposition"]), ("blocked tile 16", "passed"))
        rc, out, err, c = self.case([*ex, *self.SHAPE], HOST_ENV)
        self.assertEqual(c["kernel"]["configuration"], "linear tile 16")  # its own choice
        rc, out, err = run([*ex, *self.SHAPE, "--kernel-config", "blocked tile 64"], HOST_ENV)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("--kernel-config 'blocked tile 64': tile 64 needs N >= 64 (N is 24); see "
                      "--list-configs", err)
        # A plugin without the entry (built before it existed) has no configurations.
        old = ["--kernel-lib", lib("broken_host"), "--kernel", "broken-nan-host", *self.SHAPE]
        rc, out, err = run([*old, "--list-configs"], HOST_ENV)
        self.assertEqual(rc, 0, err)
        self.assertIn("kernel 'broken-nan-host' has no selectable configurations for 40x24x96 L=2", out)
        rc, out, err = run([*old, "--kernel-config", "tile 16"], HOST_ENV)
        self.assertEqual(rc, 2, out + err)
        self.assertIn("--kernel-config 'tile 16': this implementation has no selectable configurations", err)

    def test_sweep_runs_every_configuration_and_pins_do_not_leak(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "configs.json")
            with open(cfg, "w") as f:
                json.dump({"name": "configs", "defaults": {"warmup": 0, "iters": 1,
                                                           "kernels": ["example-host"]}, "cases": [
                    {"name": "all", "axes": {"m": 16, "n": [24, 80], "k": 64}, "kernel_config": "all"},
                    {"name": "pinned", "shape": {"m": 16, "n": 80, "k": 64}, "kernel_config": "blocked tile 64"},
                    {"name": "own", "shape": {"m": 16, "n": 80, "k": 64}},
                ]}, f)
            for isolate in ("--isolate", "--no-isolate"):
                rep = os.path.join(d, f"r{isolate}.json")
                p = subprocess.run([BIN, "--kernel-lib", lib("example_host"), "sweep", cfg, isolate,
                                    "--json", rep, "--progress", "off"], capture_output=True,
                                   text=True, timeout=120, env=HOST_ENV, cwd=d)
                self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
                with open(rep) as f:
                    cases = json.load(f)["cases"]
                got = [(c["sweep"]["name"], c["problem"]["n"], c["kernel"]["configuration"],
                        c["sweep"]["params"].get("kernel_config")) for c in cases]
                self.assertEqual(got, [
                    ("all", 24, "linear tile 16", "linear tile 16"), ("all", 24, "blocked tile 16", "blocked tile 16"),
                    ("all", 80, "linear tile 16", "linear tile 16"), ("all", 80, "linear tile 64", "linear tile 64"),
                    ("all", 80, "blocked tile 16", "blocked tile 16"), ("all", 80, "blocked tile 64", "blocked tile 64"),
                    ("pinned", 80, "blocked tile 64", "blocked tile 64"), ("own", 80, "linear tile 16", None)], isolate)
                self.assertTrue(all(c["disposition"] == "passed" for c in cases))


class PluginGpu(unittest.TestCase, Report):
    SHAPE = ["--m", "200", "--n", "300", "--k", "512", "--l", "2"]

    def setUp(self):
        why = gpu_reason()
        if why:
            self.skipTest(f"needs a CUDA GPU: {why}")

    def test_example_cuda_passes(self):
        rc, out, err, c = self.case(["--kernel-lib", lib("example_cuda"), "--kernel", "example-cuda",
                                     *self.SHAPE], None)
        self.assertEqual(rc, 0, out + err)
        self.assertEqual(c["disposition"], "passed")

    def test_out_of_bounds_store_is_a_runtime_failure(self):
        rc, out, err = run(["--kernel-lib", lib("broken_device"), "--kernel", "broken-oob", *self.SHAPE])
        self.assertEqual(rc, 3, out + err)
        lines = err.strip().splitlines()
        self.assertEqual(len(lines), 1, err)
        self.assertIn("CUDA error", lines[0])

    def test_nan_and_unwritten_on_the_gpu(self):
        rc, out, err, c = self.case(["--kernel-lib", lib("broken_device"), "--kernel", "broken-nan",
                                     *self.SHAPE], None)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual((c["verification"]["mismatches"], c["verification"]["unwritten"]), (1, 0))
        rc, out, err, c = self.case(["--kernel-lib", lib("broken_device"), "--kernel",
                                     "broken-unwritten", *self.SHAPE], None)
        self.assertEqual(rc, 1, out + err)
        self.assertEqual(c["verification"]["unwritten"], 2 * 300)


class PluginSweep(unittest.TestCase):
    """A kernel that never returns is only survivable with process isolation and a per-case
    timeout: `nvfp4bench --kernel-lib LIB sweep CONFIG --isolate --case-timeout SECONDS`
    (docs/sweeps.md#isolation-timeouts-and-crashes). It needs the sweep to hand --kernel-lib on to its child processes."""

    def setUp(self):
        rc, out, err = run(["sweep", "--help"], HOST_ENV, timeout=60)
        if rc != 0 or "--case-timeout" not in out:
            self.skipTest("the `sweep` subcommand with --isolate/--case-timeout is not in this "
                          "build (branch `sweep` not merged yet)")

    def test_hang_times_out_and_the_next_case_runs(self):
        with tempfile.TemporaryDirectory() as d:
            cfg, rep = os.path.join(d, "hang.json"), os.path.join(d, "hang-report.json")
            with open(cfg, "w") as f:
                json.dump({"name": "hang", "defaults": {"warmup": 0, "iters": 1}, "cases": [
                    {"name": "hang", "shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["broken-hang-host"]},
                    {"name": "after", "shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["example-host"]},
                ]}, f)
            p = subprocess.run([BIN, "--kernel-lib", lib("broken_host"), "--kernel-lib", lib("example_host"),
                                "sweep", cfg, "--isolate", "--case-timeout", "2", "--json", rep,
                                "--progress", "off"], capture_output=True, text=True, timeout=120,
                               env=HOST_ENV, cwd=d)
            self.assertEqual(p.returncode, 3, p.stdout + p.stderr)  # an error, nothing incorrect
            with open(rep) as f:
                by = {c["sweep"]["name"]: c for c in json.load(f)["cases"]}
            self.assertEqual(by["hang"]["disposition"], "error")
            self.assertIn("timed out", by["hang"]["message"])
            self.assertEqual(by["after"]["disposition"], "passed", by["after"].get("message"))
            self.assertEqual(by["after"]["kernel"]["name"], "example-host")


if __name__ == "__main__":
    nvfp4cli.main()
