"""bench/sm90_fit (the sm90 cost models' refit, docs/kernels.md "Refitting the cost models")
through its command line: the fit fixtures, a report the tool wrote, and the inputs it refuses
(exit 2, naming the file and the key). The numbers of the fit itself: sm90_host_test (Sm90Fit)."""
import json
import os
import re
import subprocess
import tempfile
import unittest

from nvfp4cli import HOST_ENV, SRC, run
import nvfp4cli

FIT = os.path.abspath(os.environ.get("SM90_FIT", os.path.join("build", "sm90_fit")))
FIXTURES = os.path.join(SRC, "tests", "fixtures", "sm90-fit")


def fit(*args):
    p = subprocess.run([FIT, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def pasted(out):
    """The coefficient lines printed for heuristics.cpp: lists of numbers."""
    tail = out.split("kShipped with these coefficients")[1]
    return [[float(x) for x in re.findall(r"-?\d+\.\d+", line)] for line in tail.splitlines()[1:] if "{" in line]


class Sm90Fit(unittest.TestCase):
    def test_the_fixtures(self):
        rc, out, err = fit(os.path.join(FIXTURES, "fit.json"), os.path.join(FIXTURES, "small-m.json"))
        self.assertEqual(rc, 0, err)
        self.assertIn("fused model: ", out)
        self.assertIn("two-phase model: ", out)
        self.assertRegex(out, r"k_blocks_tile32 +0\.3973 +0\.3973 .* 0  \(held: no timing exercises it\)")
        self.assertRegex(out, r"picks, refit  : geomean 1\.0\d\dx")
        fused, two = pasted(out)
        self.assertEqual((len(fused), len(two)), (11, 8))
        self.assertTrue(all(x > 0 for x in fused + two), out)
        # --residuals: each used timing with both estimates (the stream-K pairs: 63 of the 64
        # timings are within 1.5x of their shape's faster)
        rc, out, err = fit("--residuals", os.path.join(FIXTURES, "streamk.json"))
        self.assertEqual(rc, 0, err)
        rows = re.findall(r"^  (\d+x\d+x\d+) +(fused .+?) +([\d.]+) +([\d.]+) +([-+][\d.]+)%", out, re.M)
        self.assertEqual(len(rows), 63, out)
        for shape, config, us, est, err_pct in rows:
            self.assertAlmostEqual(float(err_pct), 100 * (float(est) / float(us) - 1), delta=0.11)

    def test_a_report_the_tool_wrote(self):
        """The keys it reads are those the tool writes: a host run's report, its case renamed
        sm90-fused with an sm90 configuration, is one fused timing (too few to fit most terms:
        they are held)."""
        with tempfile.TemporaryDirectory() as d:
            rep = os.path.join(d, "naive.json")
            rc, out, err = run("--kernel", "host", "--m", "64", "--n", "64", "--k", "256", "--iters", "3",
                               "--json", rep, env=HOST_ENV)
            self.assertEqual(rc, 0, err)
            rc, out, err = fit(rep)
            self.assertEqual(rc, 2, out)
            self.assertIn("no sm90 configuration timings in " + rep, err)
            with open(rep) as f:
                r = json.load(f)
            r["cases"][0]["kernel"].update(name="sm90-fused", configuration="fused 64x128 split 1")
            patched = os.path.join(d, "as-sm90.json")
            with open(patched, "w") as f:
                json.dump(r, f)
            rc, out, err = fit(patched)
            self.assertEqual(rc, 0, err)
            self.assertIn("fused model: 1 timings within the bound of their shape's fastest, 1 shapes", out)
            self.assertNotIn("two-phase model", out)
            fused, two = pasted(out)
            self.assertEqual(two[:2], [0.1006, 0.2456])  # no two-phase timings: the shipped model

    def test_choices(self):
        """The choices fixture written again by this build is the fixture (ChoicesAreUnchanged
        holds the same); a refit reports how many of its lines it would change."""
        choices = os.path.join(SRC, "tests", "fixtures", "sm90-choices.txt")
        with tempfile.TemporaryDirectory() as d:
            out_path = os.path.join(d, "choices.txt")
            rc, out, err = fit("--choices", choices, "--write-choices", out_path)
            self.assertEqual(rc, 0, err)
            with open(choices) as a, open(out_path) as b:
                self.assertEqual(a.read(), b.read())
            rc, out, err = fit("--choices", choices, os.path.join(FIXTURES, "fit.json"),
                               os.path.join(FIXTURES, "small-m.json"))
            self.assertEqual(rc, 0, err)
            self.assertRegex(out, choices + r": the refit changes the picks of \d+ of 16\d\d lines")
            # The sweep of the changed picks (a refit from the pairs alone: few timings, many changes)
            # is a config the tool expands, two pinned cases a shape.
            picks = os.path.join(d, "picks.json")
            rc, out, err = fit("--choices", choices, "--picks-sweep", picks, "--picks-max", "3",
                               os.path.join(FIXTURES, "streamk.json"))
            self.assertEqual(rc, 0, err)
            with open(picks) as f:
                cfg = json.load(f)
            self.assertEqual([c["name"] for c in cfg["cases"]], ["before", "after"] * 3)
            for before, after in zip(cfg["cases"][::2], cfg["cases"][1::2]):
                self.assertEqual(before["shape"], after["shape"])
                self.assertNotEqual(before["kernel_config"], after["kernel_config"])
            rc, out, err = run("sweep", picks, "--list-cases", env=HOST_ENV)
            self.assertEqual(rc, 0, err)
            self.assertIn("6 cases", out)
            rc, _, err = fit("--choices", choices, "--write-choices", choices)
            self.assertEqual(rc, 2)
            self.assertIn("--write-choices", err)
            bad = os.path.join(d, "bad.txt")
            with open(bad, "w") as f:
                f.write("# a comment\n1 8 64 1 132 | x\n128 7168 oops\n")
            rc, _, err = fit("--choices", bad, "--write-choices", out_path)
            self.assertEqual(rc, 2)
            self.assertIn(bad + ": line 3: \"128 7168 oops\"", err)

    def test_refusals(self):
        with tempfile.TemporaryDirectory() as d:
            missing = os.path.join(d, "none.json")
            rc, _, err = fit(missing)
            self.assertEqual(rc, 2)
            self.assertIn(missing, err)
            bad = os.path.join(d, "bad.json")
            with open(os.path.join(FIXTURES, "streamk.json")) as f:
                r = json.load(f)
            r["cases"][3]["kernel_timing"]["stats"]["median_us"] = "fast"
            with open(bad, "w") as f:
                json.dump(r, f)
            rc, _, err = fit(bad)
            self.assertEqual(rc, 2)
            self.assertIn(bad + ": cases[3].kernel_timing.stats.median_us: wrong type; expected a number", err)
            rc, _, err = fit("--sm-count", "114", os.path.join(FIXTURES, "streamk.json"))
            self.assertEqual(rc, 2, err)
            self.assertIn("--sm-count 114: the reports were taken on a GPU with 132 SMs", err)
            rc, _, err = fit("--within", "0.5", os.path.join(FIXTURES, "streamk.json"))
            self.assertEqual(rc, 2, err)
            self.assertIn("--within", err)
            rc, _, err = fit()
            self.assertEqual(rc, 2)
            self.assertIn("reports", err)


if __name__ == "__main__":
    nvfp4cli.main()
