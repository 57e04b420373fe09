"""scripts/device/sm90-results.sh ab checks every line of AB_CASES before it times anything: M N K L
positive integers, a pinned configuration one that sm90 lists for the shape (--list-configs).
Both sides are the tool under test (AB_OTHER_ENV), so this runs on any machine; timing itself
needs a GPU and is not exercised here beyond its start."""
import os
import subprocess
import tarfile
import tempfile
import unittest
import nvfp4cli

SRC = os.environ.get("NVFP4_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(SRC, "scripts", "device", "sm90-results.sh")
TOOL = os.environ.get("NVFP4BENCH", "")


class AbCasesChecked(unittest.TestCase):
    def setUp(self):
        probe = subprocess.run([TOOL, "--kernel", "sm90", "--m", "128", "--n", "256", "--k", "256",
                                "--list-configs"], capture_output=True, text=True, timeout=60)
        if probe.returncode != 0 or "fused 64x128 split 1" not in probe.stdout.splitlines():
            self.skipTest(f"this build's sm90 lists no configurations (rc {probe.returncode}: "
                          f"{probe.stderr.strip()[:200]})")

    def run_ab(self, lines):
        with tempfile.TemporaryDirectory() as tmp:
            cases = os.path.join(tmp, "cases.txt")
            with open(cases, "w") as f:
                f.write("".join(line + "\n" for line in lines))
            env = dict(os.environ, OUT=os.path.join(tmp, "out"), SM90_BIN=TOOL, AB_CASES=cases,
                       AB_OTHER_ENV="NVFP4_AB_TEST=1", AB_ROUNDS="1")
            p = subprocess.run(["bash", SCRIPT, "ab"], cwd=SRC, env=env, capture_output=True,
                               text=True, timeout=120)
            with tarfile.open(os.path.join(tmp, "out", "sm90-results.tgz")) as t:
                names = t.getnames()
            return p, cases, [n for n in names if n.endswith(".json")]

    def test_bad_lines_refused_before_timing(self):
        p, cases, reports = self.run_ab([
            "128 256 256 1 fused 64x128 split 1",
            "1024 576 7168 1 two-phase 128x144 split 4",  # a two-phase configuration without its group
            "# a comment",
            "128 x 256 1",
            "128 256 256 0",
        ])
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn(f"ab: {cases} line 2: CONFIG 'two-phase 128x144 split 4' is not one", p.stdout)
        self.assertIn("lists for 1024x576x7168 L=1", p.stdout)
        self.assertIn(f"ab: {cases} line 4: N is 'x', expected a positive integer", p.stdout)
        self.assertIn(f"ab: {cases} line 5: L is '0', expected a positive integer", p.stdout)
        self.assertNotIn("line 1:", p.stdout)
        self.assertNotIn("line 3:", p.stdout)
        self.assertEqual(p.stdout.count("ab: "), 3, p.stdout)  # one line each, though both sides are checked
        self.assertEqual(reports, [], "nothing may be timed when a line is bad")

    def test_good_lines_go_on_to_timing(self):
        p, cases, reports = self.run_ab(["128 256 256 1 fused 64x128 split 1", "128 256 256"])
        self.assertNotIn(f"ab: {cases} line", p.stdout)
        self.assertEqual(len(reports), 4, p.stdout + p.stderr)  # two cases, both sides, one round


if __name__ == "__main__":
    nvfp4cli.main()
