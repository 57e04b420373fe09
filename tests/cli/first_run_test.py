"""scripts/device/blackwell-first-run.sh refuses, with one line and exit 2, on anything but a
GPU of compute capability 10.0 or 10.3 (the sm_100f family: the same rule as sm100's
availability, kernels/sm100/targets.hpp), before it writes anything; on those its gate passes. The
GPU is a fake nvidia-smi first on PATH, so this runs on any machine. Every command line that
docs/kernels.md and bench/notes-sm100.md give for the script is accepted by it (run with
--dry-run, which checks the steps and runs nothing), and --help prints its usage."""
import os
import re
import stat
import subprocess
import tempfile
import unittest
import nvfp4cli

SRC = os.environ.get("NVFP4_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SRC, "scripts", "device", "blackwell-first-run.sh")


class FirstRunGate(unittest.TestCase):
    @staticmethod
    def fake_tool(path, body):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write("#!/bin/sh\n" + body)
        os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)

    def run_with_gpu(self, answer, *steps, rc=0, extra=None):
        """Runs the script with an nvidia-smi that prints `answer` for the query (exit `rc`);
        extra(tmp) may add fake tools under tmp/bin and returns more environment."""
        with tempfile.TemporaryDirectory() as tmp:
            fake = os.path.join(tmp, "bin", "nvidia-smi")
            self.fake_tool(fake, (f"printf '%s\\n' '{answer}'\n" if answer is not None else "") + f"exit {rc}\n")
            env = dict(os.environ, PATH=os.path.dirname(fake) + os.pathsep + os.environ["PATH"],
                       OUT=os.path.join(tmp, "out"))
            if extra:
                env.update(extra(tmp))
            env.pop("NVFP4_FIRST_RUN_ANY_GPU", None)
            p = subprocess.run(["bash", SCRIPT, *steps], cwd=SRC, env=env, capture_output=True,
                               text=True, timeout=60)
            out = os.path.join(tmp, "out", "blackwell-first-run")
            readme = open(os.path.join(out, "README.md")).read() if os.path.exists(
                os.path.join(out, "README.md")) else None
            summary = os.path.join(out, "summary.txt")
            self.summary = open(summary).read() if os.path.exists(summary) else ""
            return p, os.path.exists(out), readme

    def assert_refused(self, p, wrote, *words):
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertEqual(p.stdout, "")
        lines = p.stderr.strip().splitlines()
        self.assertEqual(len(lines), 1, p.stderr)
        self.assertIn("needs compute capability 10.0 or 10.3", lines[0])
        for w in words:
            self.assertIn(w, lines[0])
        self.assertFalse(wrote, "wrote results before refusing")

    def test_refuses_without_a_gpu(self):
        p, wrote, _ = self.run_with_gpu(None, rc=9)
        self.assert_refused(p, wrote, "no NVIDIA GPU")

    def test_refuses_on_an_h200(self):
        p, wrote, _ = self.run_with_gpu("NVIDIA H200, 9.0")
        self.assert_refused(p, wrote, "NVIDIA H200", "compute capability 9.0")

    def test_refuses_on_a_later_architecture(self):
        p, wrote, _ = self.run_with_gpu("NVIDIA RTX PRO 6000, 12.0")
        self.assert_refused(p, wrote, "12.0")

    def test_gate_passes_on_a_b200(self):
        p, wrote, readme = self.run_with_gpu("NVIDIA B200, 10.0", "gate")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertTrue(wrote)
        self.assertIn("NVIDIA B200, 10.0", readme)
        self.assertIn("0 step(s) failed", readme)
        self.assertNotIn("NOT a Blackwell GPU", readme)

    def test_a_failing_step_is_reported_failed(self):
        # The step's own exit status, not that of the $(grep ...) in its summary line: a ctest
        # that fails (exit 8) is FAILED, and the script exits 1.
        def tools(tmp):
            self.fake_tool(os.path.join(tmp, "bin", "ctest"), "echo '50% tests passed, 1 tests failed out of 2'\nexit 8\n")
            self.fake_tool(os.path.join(tmp, "build", "nvfp4bench"), "exit 0\n")
            return {"BUILD": os.path.join(tmp, "build")}
        p, wrote, readme = self.run_with_gpu("NVIDIA B200, 10.0", "tests", extra=tools)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        for which in ("-LE gpu (host tests)", "-L gpu (GPU tests)"):
            self.assertIn(f"FAILED  ctest {which}: 50% tests passed, 1 tests failed out of 2 (rc 8)", self.summary)
        self.assertIn("2 step(s) failed", readme)

    def test_bisect_step_names_what_differs(self):
        # The bisect's verdict is the step's summary line, each DIFFERS line (how) follows it,
        # and its exit status 1 (a behaviour differs) fails the step.
        report = ("(d) epilogue (TMEM -> registers -> C): ok\n"
                  "(b) tcgen05.cp 32x128b.warpx4 lane mapping: DIFFERS: SFA lanes 32-63 hold no atom row\n"
                  "verdict: differs: (b) tcgen05.cp 32x128b.warpx4 lane mapping\n")
        def tools(tmp):
            self.fake_tool(os.path.join(tmp, "build", "nvfp4bench"), "exit 0\n")
            self.fake_tool(os.path.join(tmp, "build", "sm100_bisect"), f"printf '{report}'\nexit 1\n")
            return {"BUILD": os.path.join(tmp, "build")}
        p, _, readme = self.run_with_gpu("NVIDIA B200, 10.0", "bisect", extra=tools)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("FAILED  sm100 bisect: verdict: differs: (b) tcgen05.cp 32x128b.warpx4 lane mapping (rc 1)",
                      self.summary)
        self.assertIn("        (b) tcgen05.cp 32x128b.warpx4 lane mapping: DIFFERS: SFA lanes 32-63 hold no atom row",
                      self.summary)
        self.assertIn("bisect.txt", readme)

    def test_a_wrong_sm100_shape_runs_the_bisect(self):
        # Step shapes alone: an sm100 case that fails its check brings the bisect in after it.
        def tools(tmp):
            self.fake_tool(os.path.join(tmp, "build", "nvfp4bench"), "echo 'verify  FAILED'\nexit 1\n")
            self.fake_tool(os.path.join(tmp, "build", "sm100_bisect"),
                           "echo 'verdict: no behaviour differs from the documented one'\nexit 0\n")
            return {"BUILD": os.path.join(tmp, "build")}
        p, _, _ = self.run_with_gpu("NVIDIA B200, 10.0", "shapes", extra=tools)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("== bisect (an sm100 case failed in step shapes)", p.stdout)
        self.assertIn("ok      sm100 bisect: verdict: no behaviour differs from the documented one",
                      self.summary)

    def test_gate_decision_per_compute_capability(self):
        # sm_100f code runs on 10.0 and 10.3 only (kernels/sm100/targets.hpp, checked against
        # sm100's availability() by tests/unit/sm100_kernel_test.cpp).
        for cc in ("10.0", "10.3"):
            p, wrote, readme = self.run_with_gpu(f"NVIDIA Blackwell, {cc}", "gate")
            self.assertEqual(p.returncode, 0, cc + p.stdout + p.stderr)
            self.assertIn(f"NVIDIA Blackwell, {cc}", readme)
        for cc in ("10.1", "10.2", "11.0", "12.0", "12.1", "9.0", "8.0"):
            p, wrote, _ = self.run_with_gpu(f"Some GPU, {cc}", "gate")
            self.assert_refused(p, wrote, f"compute capability {cc}")

    def test_unknown_step_is_refused(self):
        p, _, _ = self.run_with_gpu("NVIDIA B200, 10.0", "bogus")
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown step 'bogus'", p.stderr)



class FirstRunCommandsInTheDocs(unittest.TestCase):
    """Each documented invocation of the script, run as a dry run: an unknown step (such as a
    placeholder the script does not take) fails, as it would on the GPU machine."""

    DOCS = [os.path.join("docs", "kernels.md"), os.path.join("bench", "notes-sm100.md")]
    COMMAND = re.compile(r"`((?:[A-Z_]+=\S+ )*(?:bash )?scripts/device/blackwell-first-run\.sh[^`]*)`")

    def documented(self):
        found = []
        for doc in self.DOCS:
            with open(os.path.join(SRC, doc), encoding="utf-8") as f:
                found += [(doc, m.group(1)) for m in self.COMMAND.finditer(f.read())]
        return found

    def test_documented_commands_are_accepted(self):
        commands = self.documented()
        self.assertGreater(len(commands), 0, "no documented command found")
        for doc, cmd in commands:
            words = re.sub(r"\[[^\]]*\]", "", cmd).split()  # [STEP ...] is optional
            env = dict(os.environ)
            while "=" in words[0]:
                k, v = words.pop(0).split("=", 1)
                env[k] = v
            if words[0] == "bash":
                words.pop(0)
            args = words[1:]
            if "--help" not in args and "--dry-run" not in args:
                args = ["--dry-run"] + args
            p = subprocess.run(["bash", os.path.join(SRC, words[0])] + args, cwd=SRC, env=env,
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, f"{doc}: `{cmd}`: {p.stderr}")

    def test_help(self):
        p = subprocess.run(["bash", SCRIPT, "--help"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("OUT=out bash scripts/device/blackwell-first-run.sh [STEP ...]", p.stdout)
        self.assertIn("--dry-run", p.stdout)

    def test_dry_run_refuses_a_placeholder(self):
        p = subprocess.run(["bash", SCRIPT, "--dry-run", "OUT_DIR"], capture_output=True,
                           text=True, timeout=60)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown step 'OUT_DIR'", p.stderr)


if __name__ == "__main__":
    nvfp4cli.main()
