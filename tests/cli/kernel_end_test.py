#!/usr/bin/env python3
"""A kernel cannot end the tool's verdict (docs/errors.md, "A kernel that ends the process"):
plugins (tests/broken_plugins/ending_host.cpp) and Python kernels that exit, crash or hang - in
their call and while being loaded - end a single run with exit 3, one stderr line naming the
kernel and what happened, and the --json report with the case as an error. What no guard can
catch in a process (C's _exit, SIGKILL) is seen by the isolated run (the default with --kernel-lib
and --kernel-py; --isolate, --no-isolate). SIGINT/SIGTERM end a run with 130 and one line.
  KernelEndHost  on the host backend (forced), every machine; each run a few seconds at most
  KernelEndGpu   device plugins and torch kernels on the GPU; skipped without one"""
import json
import os
import signal
import subprocess
import tempfile
import time
import unittest

import nvfp4cli
from nvfp4cli import BIN, HOST_ENV, PLUGIN_DIR, gpu_reason

SHAPE = ["--m", "16", "--n", "16", "--k", "64"]
TIMING = ["--iters", "1", "--warmup", "0"]
ENDING = os.path.join(PLUGIN_DIR, "libnvfp4_ending_host.so")
BROKEN = os.path.join(PLUGIN_DIR, "libnvfp4_broken_host.so")
NO_VERDICT = "ended the process without a verdict"

PY = {
    "py_os_exit": "import os\ndef custom_kernel(data):\n    os._exit(0)\n",
    "py_sys_exit": "import sys\ndef custom_kernel(data):\n    sys.exit(0)\n",
    "py_segv": "import ctypes\ndef custom_kernel(data):\n    ctypes.string_at(0)\n",
    "py_abort": "import os\ndef custom_kernel(data):\n    os.abort()\n",
    # A crash on a thread the submission started, while its call waits for it.
    "py_thread_segv": ("import ctypes, threading\ndef custom_kernel(data):\n"
                       "    t = threading.Thread(target=ctypes.string_at, args=(0,))\n"
                       "    t.start()\n    t.join()\n"),
    "py_hang": "import time\ndef custom_kernel(data):\n    while True:\n        time.sleep(0.05)\n",
    "py_spin": "def custom_kernel(data):\n    while True:\n        pass\n",
    "py_c_exit": "import ctypes\ndef custom_kernel(data):\n    ctypes.CDLL(None)._exit(0)\n",
    "py_sigkill": "import os, signal\ndef custom_kernel(data):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    "py_exit_at_import": "import os\nos._exit(0)\ndef custom_kernel(data):\n    pass\n",
    "py_sys_exit_at_import": "import sys\nsys.exit(0)\n",
    "py_segv_at_import": "import ctypes\nctypes.string_at(0)\n",
    "py_hang_at_import": "import time\nwhile True:\n    time.sleep(0.05)\n",
}


def python_built():
    return nvfp4cli.built_without_python() is None


class Ending:
    ENV = HOST_ENV

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        for name, text in PY.items():
            with open(os.path.join(cls.dir, name + ".py"), "w") as f:
                f.write(text)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def py(self, name):
        return os.path.join(self.dir, name + ".py")

    def ends(self, args, says, env=None, timeout=60):
        """Runs the tool with a report; checks exit 3, one stderr line with `says`, the report's
        case an error with that line; returns (stderr, case or None)."""
        rep = os.path.join(self.dir, "r.json")
        if os.path.exists(rep):
            os.remove(rep)
        t0 = time.monotonic()
        rc, out, err = nvfp4cli.run(*args, "--json", rep, env=env or self.ENV, timeout=timeout)
        lines = [l for l in err.splitlines() if l.startswith("nvfp4bench: ") and "host backend" not in l]
        self.assertEqual(rc, 3, out + err)
        self.assertEqual(len(lines), 1, err)
        for word in says:
            self.assertIn(word, lines[0])
        self.assertLess(time.monotonic() - t0, timeout)
        case = None
        if os.path.exists(rep):
            with open(rep) as f:
                case = json.load(f)["cases"][0]
            self.assertEqual(case["disposition"], "error", case)
            self.assertIn(case["message"], lines[0])
        return lines[0], case

    def plugin(self, kernel, says, *extra, report=True):
        line, case = self.ends(["--kernel-lib", ENDING, "--kernel", kernel, *SHAPE, *TIMING, *extra],
                               [f"kernel '{kernel}'", *says])
        if report:
            self.assertIsNotNone(case, "the report did not survive")
            self.assertEqual(case["kernel"]["asked"], kernel)
        return line


class KernelEndHost(Ending, unittest.TestCase):
    def test_plugin_exit_in_run(self):
        self.plugin("exit-host", ["called exit(0)", "may not end"])

    def test_plugin_quick_exit_in_run(self):
        self.plugin("quick-exit-host", ["called quick_exit"])

    def test_plugin_segfault_in_run(self):
        self.plugin("segv-host", ["crashed: SIGSEGV"])

    def test_plugin_abort_in_run(self):
        self.plugin("abort-host", ["crashed: SIGABRT"])

    def test_plugin_sigfpe_in_run(self):
        self.plugin("fpe-host", ["crashed: SIGFPE"])

    def test_plugin_raw_exit_is_seen_by_the_isolated_run(self):
        self.plugin("raw-exit-host", [NO_VERDICT, "exited with code 0", "may not end"])

    def test_plugin_sigkill_is_seen_by_the_isolated_run(self):
        self.plugin("kill-host", [NO_VERDICT, "crashed with signal 9 (SIGKILL)"])

    def test_guarded_ends_are_the_same_in_process(self):
        # --no-isolate: the guard alone, in this process: the same lines as isolated.
        self.plugin("exit-host", ["called exit(0)"], "--no-isolate")
        self.plugin("segv-host", ["crashed: SIGSEGV"], "--no-isolate")

    def test_no_isolate_cannot_see_a_raw_exit(self):
        # The documented limit of --no-isolate (docs/errors.md): _exit(0) ends the process as
        # "success" with no verdict; this is what the default isolation is for.
        rep = os.path.join(self.dir, "r.json")
        if os.path.exists(rep):
            os.remove(rep)
        rc, out, err = nvfp4cli.run("--kernel-lib", ENDING, "--kernel", "raw-exit-host", *SHAPE, *TIMING,
                                    "--no-isolate", "--json", rep, env=self.ENV, timeout=60)
        self.assertEqual(rc, 0, out + err)
        self.assertFalse(os.path.exists(rep))
        self.assertNotIn("PASSED", out)

    def test_isolate_and_no_isolate_exclude_each_other(self):
        rc, out, err = nvfp4cli.run("--isolate", "--no-isolate", *SHAPE, env=self.ENV, timeout=60)
        self.assertEqual(rc, 2, err)
        self.assertIn("excludes", err)

    def test_a_built_in_kernel_isolated_passes_as_in_process(self):
        reports = {}
        for how in ("--isolate", "--no-isolate"):
            rep = os.path.join(self.dir, f"r{how}.json")
            rc, out, err = nvfp4cli.run(*SHAPE, *TIMING, how, "--json", rep, env=self.ENV, timeout=60)
            self.assertEqual(rc, 0, out + err)
            self.assertEqual(out.count("verify    PASSED"), 1, out)
            with open(rep) as f:
                reports[how] = json.load(f)["cases"][0]
        a, b = reports["--isolate"], reports["--no-isolate"]
        # The child sees the command line as typed: its report's argv is the user's, not the
        # program's absolute path.
        rep = os.path.join(self.dir, "rel.json")
        p = subprocess.run(["./" + os.path.basename(BIN), *SHAPE, *TIMING, "--isolate", "--json", rep],
                           cwd=os.path.dirname(BIN), env=self.ENV, capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        with open(rep) as f:
            self.assertEqual(json.load(f)["argv"][0], "./" + os.path.basename(BIN))
        self.assertEqual(a["disposition"], "passed")
        self.assertEqual(a["verification"], b["verification"])
        self.assertEqual(a["problem"], b["problem"])

    def test_a_failure_keeps_what_was_measured_before_it(self):
        # Right on its first operands, an error status on new ones, which every timed run has
        # (docs/cli.md, "The verdict"): the reference's timing and the first call's
        # verification stay in the report.
        line, case = self.ends(["--kernel-lib", BROKEN, "--kernel", "recheck-status-host", *SHAPE, *TIMING],
                               ["deliberate failure on new operands"])
        self.assertIsNotNone(case)
        self.assertIn("reference_timing", case)
        self.assertGreater(case["reference_timing"]["stats"]["median_us"], 0)
        self.assertTrue(case["verification"]["passed"])

    def test_sweep_case_with_a_raw_exit(self):
        # A sweep's own isolation (its child runs --no-isolate): the case is an error, the sweep goes on.
        cfg = os.path.join(self.dir, "raw.json")
        with open(cfg, "w") as f:
            json.dump({"defaults": {"iters": 1, "warmup": 0},
                       "cases": [{"shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["raw-exit-host"]},
                                 {"shape": {"m": 16, "n": 16, "k": 64}}]}, f)
        rep = os.path.join(self.dir, "raw-report.json")
        rc, out, err = nvfp4cli.run("--kernel-lib", ENDING, "sweep", cfg, "--json", rep, "--overwrite",
                                    env=self.ENV, timeout=120)
        self.assertEqual(rc, 3, out + err)
        with open(rep) as f:
            cases = json.load(f)["cases"]
        self.assertEqual([c["disposition"] for c in cases], ["error", "passed"])
        self.assertIn("exited with code 0", cases[0]["message"])

    def test_plugin_crash_in_a_configuration_callback(self):
        for how in ("--isolate", "--no-isolate"):
            with self.subTest(how):
                rc, out, err = nvfp4cli.run("--kernel-lib", ENDING, "--kernel", "segv-configs-host", *SHAPE,
                                            "--list-configs", how, env=self.ENV, timeout=60)
                self.assertEqual(rc, 3, out + err)
                lines = [l for l in err.splitlines() if l.startswith("nvfp4bench: ")]
                self.assertEqual(len(lines), 1, err)
                self.assertIn("kernel 'segv-configs-host'", lines[0])
                self.assertIn("in configs.list) crashed: SIGSEGV", lines[0])

    def test_plugin_hang_in_run_is_stopped_by_timeout(self):
        self.plugin("hang-host", ["did not return", "--timeout 1"], "--timeout", "1")

    def test_plugin_that_ends_while_loading(self):
        for what, says in [("exit", "called exit(0)"), ("raw-exit", NO_VERDICT), ("segv", "crashed: SIGSEGV"),
                           ("abort", "crashed: SIGABRT"), ("hang", "did not return")]:
            with self.subTest(what):
                self.ends(["--kernel-lib", ENDING, "--kernel", "exit-host", *SHAPE, *TIMING, "--timeout", "1"],
                          [f"--kernel-lib {ENDING} (while loading)" if what != "raw-exit" else "kernel 'exit-host'", says],
                          env=dict(self.ENV, NVFP4_TEST_END_AT_LOAD=what))

    def test_timeout_outside_a_guarded_call(self):
        # The built-in host kernel on a problem that takes far longer than the limit: the
        # watchdog ends the run and still writes the report.
        line, case = self.ends(["--m", "2048", "--n", "2048", "--k", "4096", "--iters", "50",
                                "--timeout", "1"], ["the run of kernel 'auto' did not finish within --timeout 1 s"])
        self.assertIsNotNone(case)
        self.assertEqual(case["problem"]["m"], 2048)

    def test_timeout_is_checked(self):
        rc, out, err = nvfp4cli.run("--timeout", "-1", *SHAPE, env=self.ENV, timeout=60)
        self.assertEqual(rc, 2, err)
        self.assertIn("--timeout -1: must be", err)

    def test_sigint_sigterm_and_sighup_exit_130_with_one_line(self):
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            with self.subTest(sig.name):
                p = subprocess.Popen([BIN, "--kernel-lib", ENDING, "--kernel", "hang-host", *SHAPE, *TIMING],
                                     env=self.ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                time.sleep(1.0)
                p.send_signal(sig)
                out, err = p.communicate(timeout=30)
                self.assertEqual(p.returncode, 130, err)
                lines = [l for l in err.splitlines() if l.startswith("nvfp4bench: ") and "host backend" not in l]
                self.assertEqual(lines, [f"nvfp4bench: interrupted by {sig.name}"], err)

    def python(self, name, says, *extra):
        if not python_built():
            self.skipTest("this nvfp4bench was built without Python kernels")
        return self.ends(["--kernel-py", self.py(name), "--kernel", "py:" + name, *SHAPE, *TIMING, *extra],
                         [f"kernel 'py:{name}'", *says])

    def test_sweep_outputs_never_replace_a_python_kernel_or_a_library(self):
        if not python_built():
            self.skipTest("this nvfp4bench was built without Python kernels")
        cfg = os.path.join(self.dir, "one.json")
        with open(cfg, "w") as f:
            json.dump({"cases": [{"shape": {"m": 16, "n": 16, "k": 64}}]}, f)
        sub = self.py("py_os_exit")
        with open(sub) as f:
            before = f.read()
        for out_flag, extra in [("--jsonl", ["--overwrite"]), ("--json", [])]:
            with self.subTest(out_flag):
                rc, out, err = nvfp4cli.run("--kernel-py", sub, "sweep", cfg, out_flag, sub, *extra,
                                            env=self.ENV, timeout=60)
                self.assertEqual(rc, 2, out + err)
                self.assertIn(f"{out_flag} {sub}: is the input --kernel-py ({sub})", err)
                with open(sub) as f:
                    self.assertEqual(f.read(), before)
        rc, out, err = nvfp4cli.run("--kernel-lib", ENDING, "sweep", cfg, "--json", ENDING, env=self.ENV, timeout=60)
        self.assertEqual(rc, 2, out + err)
        self.assertIn(f"--json {ENDING}: is the input --kernel-lib", err)

    def test_python_os_exit(self):
        self.python("py_os_exit", ["called os._exit(0)", "may not end"])

    def test_python_sys_exit(self):
        self.python("py_sys_exit", ["called sys.exit(0)"])

    def test_python_c_exit_and_sigkill(self):
        self.python("py_c_exit", [NO_VERDICT, "exited with code 0"])
        self.python("py_sigkill", [NO_VERDICT, "SIGKILL"])

    def test_python_segfault(self):
        self.python("py_segv", ["crashed: SIGSEGV"])

    def test_python_abort(self):
        self.python("py_abort", ["crashed: SIGABRT"])

    def test_python_crash_on_another_thread(self):
        # Regression: the child's line was lost behind the isolated run's 'exited with code 3'.
        for extra in ([], ["--no-isolate"]):
            with self.subTest(extra=extra):
                line, case = self.python("py_thread_segv", ["crashed on one of its threads: SIGSEGV"], *extra)
                self.assertNotIn(NO_VERDICT, line)
                self.assertIsNotNone(case, "the report did not survive")

    def test_python_hang_and_spin(self):
        for name in ("py_hang", "py_spin"):
            with self.subTest(name):
                self.python(name, ["did not return", "--timeout 1"], "--timeout", "1")

    def test_python_that_ends_while_importing(self):
        if not python_built():
            self.skipTest("this nvfp4bench was built without Python kernels")
        for name, says in [("py_exit_at_import", "called os._exit(0)"),
                           ("py_sys_exit_at_import", "called sys.exit(0)"),
                           ("py_segv_at_import", "crashed: SIGSEGV"),
                           ("py_hang_at_import", "did not return")]:
            with self.subTest(name):
                self.ends(["--kernel-py", self.py(name), *SHAPE, *TIMING, "--timeout", "1"],
                          [f"--kernel-py {self.py(name)}", says])


class KernelEndGpu(Ending, unittest.TestCase):
    ENV = None

    @classmethod
    def setUpClass(cls):
        why = gpu_reason()
        if why:
            raise unittest.SkipTest(f"needs a CUDA GPU: {why}")
        super().setUpClass()

    def test_device_kernel_hang_is_stopped_by_timeout(self):
        lib = os.path.join(PLUGIN_DIR, "libnvfp4_broken_device.so")
        line, case = self.ends(["--kernel-lib", lib, "--kernel", "broken-hang", *SHAPE, *TIMING, "--timeout", "5"],
                               ["did not finish within --timeout 5"], timeout=120)
        self.assertIsNotNone(case, "the report did not survive")

    def test_host_plugin_exit_with_a_gpu_present(self):
        # A host kernel does not run beside a GPU; its loading does: exit in the constructor.
        self.ends(["--kernel-lib", ENDING, *SHAPE, *TIMING], ["(while loading)", "called exit(0)"],
                  env=dict(os.environ, NVFP4_TEST_END_AT_LOAD="exit"), timeout=120)

    def torch(self, name, says, *extra):
        if not python_built():
            self.skipTest("this nvfp4bench was built without Python kernels")
        rc, out, err = nvfp4cli.run("--kernel-py", self.py(name), "--list", timeout=300)
        if "unavailable" in next((l for l in out.splitlines() if l.split()[:1] == [f"py:{name}"]), ""):
            self.skipTest("no torch with CUDA in the embedded Python")
        return self.ends(["--kernel-py", self.py(name), "--kernel", "py:" + name, *SHAPE, *TIMING, *extra],
                         [f"kernel 'py:{name}'", *says], timeout=300)

    def test_torch_kernel_os_exit_segfault_hang(self):
        for name, says, extra in [("py_os_exit", "called os._exit(0)", []),
                                  ("py_segv", "crashed: SIGSEGV", []),
                                  ("py_c_exit", NO_VERDICT, []),
                                  ("py_hang", "did not return", ["--timeout", "20"])]:
            with self.subTest(name):
                self.torch(name, [says], *extra)


if __name__ == "__main__":
    nvfp4cli.main()
