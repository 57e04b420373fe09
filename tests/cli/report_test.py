#!/usr/bin/env python3
"""Reports end to end with the real binary (host backend on GPU-less machines): the native JSON
validated against schemas/report.schema.json, every --format parsed back, and `compare` exit
codes on planted changes. Run under /usr/bin/python3 (Debian's python3-jsonschema)."""
import copy
import csv
import io
import json
import math
import os
import subprocess
import sys
import tempfile
import unittest
import nvfp4cli

try:
    import jsonschema
except ImportError:  # scripts/setup installs python3-jsonschema; without it validation skips
    jsonschema = None

from nvfp4cli import HOST_ENV, PLUGIN_DIR, SCHEMA, load, run
SMALL = ["--m", "24", "--n", "40", "--k", "64", "--seed", "3"]



class Reports(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        # One fixed-count and one adaptive run; the adaptive one is kept short.
        cls.fixed = os.path.join(cls.dir, "fixed.json")
        rc, out, err = run(*SMALL, "--iters", "5", "--json", cls.fixed, "--samples")
        assert rc == 0, out + err
        cls.adaptive = os.path.join(cls.dir, "adaptive.json")
        rc, out, err = run(*SMALL, "--iters", "0", "--min-time", "0.05", "--max-time", "0.5",
                           "--noise-target", "2", "--json", cls.adaptive)
        assert rc == 0, out + err
        cls.host = "host backend" in out.splitlines()[0]
        # Peers (not run without a GPU) and the exact check add their own keys.
        cls.extras = os.path.join(cls.dir, "extras.json")
        rc, out, err = run(*SMALL, "--iters", "2", "--verify-exact", "50", "--peers", "all",
                           "--json", cls.extras)
        assert rc == 0, out + err

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def load(self, path):
        with open(path) as f:
            return json.load(f)

    def test_reports_validate_against_the_schema(self):
        if jsonschema is None:
            self.skipTest("python3-jsonschema is not installed (apt-get install python3-jsonschema): "
                          "schema validation skipped")
        schema = self.load(SCHEMA)
        jsonschema.Draft202012Validator.check_schema(schema)
        v = jsonschema.Draft202012Validator(schema)
        for path in (self.fixed, self.adaptive, self.extras):
            with self.subTest(report=os.path.basename(path)):
                v.validate(self.load(path))
        # The schema is not vacuous: a missing key, an unknown key and a bad value all fail.
        r = self.load(self.fixed)
        for mutate in (lambda r: r.pop("seed"),
                       lambda r: r["cases"][0]["kernel_timing"].update(undocumented=1),
                       lambda r: r["cases"][0]["kernel_timing"].update(stop_reason="bored"),
                       lambda r: r["cases"][0]["kernel_timing"]["stats"].pop("rse_median"),
                       lambda r: r["measurement"].update(mode="lukewarm")):
            bad = copy.deepcopy(r)
            mutate(bad)
            with self.assertRaises(jsonschema.ValidationError):
                v.validate(bad)

    def test_builtin_fallback_validator_accepts_and_rejects_like_jsonschema(self):
        # scripts/validate_report.py --builtin is what the device script uses without jsonschema.
        script = os.path.join(os.path.dirname(SCHEMA), "..", "scripts", "validate_report.py")
        def check(path):
            p = subprocess.run([sys.executable, script, "--builtin", "--schema", SCHEMA, path],
                               capture_output=True, text=True)
            return p.returncode, p.stdout
        rc, out = check(self.fixed)
        self.assertEqual(rc, 0, out)
        self.assertIn("valid (built-in validator)", out)
        bad = copy.deepcopy(self.load(self.fixed))
        bad["cases"][0]["kernel_timing"]["stats"]["count"] = -1
        bad["cases"][0]["problem"]["k"] = 24
        path = os.path.join(self.dir, "bad.json")
        with open(path, "w") as f:
            json.dump(bad, f)
        rc, out = check(path)
        self.assertEqual(rc, 1, out)
        self.assertIn("count: -1 < minimum 0", out)
        self.assertIn("not a multiple of 16", out)

    def test_report_carries_provenance_and_measurement_records(self):
        r = self.load(self.fixed)
        self.assertEqual(r["schema_version"], 2)
        self.assertEqual(r["seed"], 3)
        self.assertEqual(r["tolerance"], {"rtol": 1e-3, "atol": 1e-3})
        self.assertIn("--samples", r["argv"])
        for key in ("version", "git_revision", "compiler", "build_type", "cuda_compiled_version"):
            self.assertIn(key, r["tool"])
        for key in ("cuda_runtime_version", "cuda_driver_version"):
            self.assertIn(key, r["device"])
        # cuBLASLt is loaded only where a GPU path needs it: its version is there with a GPU.
        self.assertEqual("cublaslt_version" in r["device"], r["device"]["has_gpu"])
        kt = r["cases"][0]["kernel_timing"]
        self.assertEqual(kt["stop_reason"], "fixed sample count")
        self.assertEqual(kt["stats"]["count"], len(kt["samples_us"]))
        self.assertIn("sol_fraction", kt)
        a = self.load(self.adaptive)
        self.assertTrue(a["measurement"]["adaptive"])
        self.assertAlmostEqual(a["measurement"]["target_rse"], 0.02)
        self.assertIn(a["cases"][0]["kernel_timing"]["stop_reason"],
                      ("noise target reached", "max time", "max samples"))
        if self.host:
            self.assertEqual(kt["mode"], "hot")
            self.assertEqual(kt["clock"]["source"], "none")

    def test_every_format_parses_back(self):
        outs = {}
        for fmt in ("json", "gbench", "bencher", "csv", "md"):
            path = os.path.join(self.dir, "out." + fmt)
            rc, out, err = run(*SMALL, "--iters", "2", "--format", fmt, "--output", path)
            self.assertEqual(rc, 0, out + err)
            with open(path) as f:
                outs[fmt] = f.read()
        native = json.loads(outs["json"])
        self.assertEqual(native["schema_version"], 2)
        kernel = native["cases"][0]["kernel"]["name"]  # host here, the auto GPU kernel elsewhere
        g = json.loads(outs["gbench"])
        self.assertIn("context", g)
        names = [b["name"] for b in g["benchmarks"]]
        self.assertTrue(any(n.startswith(f"{kernel}/24x40x64x1/gpumode/") for n in names), names)
        for b in g["benchmarks"]:
            for key in ("name", "run_name", "run_type", "iterations", "real_time", "cpu_time", "time_unit"):
                self.assertIn(key, b)
        bmf = json.loads(outs["bencher"])
        for bench, measures in bmf.items():
            self.assertIn("latency", measures, bench)
            lat = measures["latency"]
            self.assertLessEqual(lat["lower_value"], lat["value"])
            self.assertLessEqual(lat["value"], lat["upper_value"])
        rows = list(csv.DictReader(io.StringIO(outs["csv"])))
        self.assertGreaterEqual(len(rows), 1)
        self.assertGreater(float(rows[0]["median_us"]), 0)
        self.assertEqual(rows[0]["disposition"], "passed")
        self.assertIn("| case |", outs["md"])

    def test_output_dash_puts_only_the_report_on_stdout(self):
        rc, out, err = run(*SMALL, "--iters", "2", "--format", "bencher", "--output", "-")
        self.assertEqual(rc, 0, err)
        json.loads(out)  # nothing else on stdout
        self.assertIn("verify", err)
        # A plugin that prints: its lines go to stderr, in-process and isolated alike.
        for how in ("--isolate", "--no-isolate"):
            rc, out, err = run(*SMALL, "--iters", "2", "--format", "csv", "--output", "-", how,
                               "--kernel-lib", os.path.join(PLUGIN_DIR, "libnvfp4_broken_host.so"),
                               "--kernel", "chatty-host")
            self.assertEqual(rc, 0, err)
            self.assertNotIn("chatter", out)
            self.assertIn("chatter from the plugin", err)
            self.assertTrue(out.startswith("name,implementation,"), out[:200])


def controlled(report, median, iqr, count, disposition="passed"):
    """The report with its kernel timing's statistics set to known values."""
    r = copy.deepcopy(report)
    c = r["cases"][0]
    c["disposition"] = disposition
    s = c["kernel_timing"]["stats"]
    # Statistics that agree with one another, as compare requires (a doctored one is refused).
    q1, q3 = median - iqr / 2, median + iqr / 2
    s.update(median_us=median, iqr_us=iqr, count=count, q1_us=q1, q3_us=q3, min_us=q1, max_us=q3,
             mean_us=median, median_ci_lo_us=q1, median_ci_hi_us=q3,
             rse_median=1.2533141373155003 * iqr / 1.3489795003921634 / math.sqrt(count) / median
             if count > 1 else 0.0)
    c["kernel_timing"]["attempts"] = max(count, c["kernel_timing"]["attempts"])
    return r


class OutputsNeverReplaceInputs(unittest.TestCase):
    """Regression: an output that is an input or another output, a read-only report, an
    unusable path: refused before any work, the file untouched."""
    SHAPE = ["--m", "16", "--n", "16", "--k", "64", "--iters", "1", "--warmup", "0"]

    def test_json_and_output_on_one_file(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = run(*self.SHAPE, "--json", "r.json", "--format", "csv", "--output", "./r.json",
                               cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 2, out + err)
            self.assertIn("the same file as --json r.json", err)
            self.assertFalse(os.path.exists(os.path.join(d, "r.json")))

    def test_compare_output_on_an_input(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = run(*self.SHAPE, "--json", "b.json", cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 0, out + err)
            with open(os.path.join(d, "b.json")) as f:
                before = f.read()
            for which in (["b.json", "b.json", "--output", "b.json"], ["b.json", "b.json", "--output", "./b.json"]):
                rc, out, err = run("compare", *which, cwd=d)
                self.assertEqual(rc, 2, out + err)
                self.assertIn("is the input BASE (b.json)", err)
            with open(os.path.join(d, "b.json")) as f:
                self.assertEqual(f.read(), before)

    def test_read_only_report_is_not_replaced(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "ro.json")
            with open(path, "w") as f:
                f.write("keep\n")
            os.chmod(path, 0o444)
            rc, out, err = run(*self.SHAPE, "--json", path, cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 2, out + err)
            self.assertIn("exists and is not writable; not replaced", err)
            self.assertNotIn("kernel", out)  # refused before measuring
            with open(path) as f:
                self.assertEqual(f.read(), "keep\n")
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o444)

    def test_a_replaced_report_keeps_its_mode(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "r.json")
            with open(path, "w") as f:
                f.write("old\n")
            os.chmod(path, 0o640)
            rc, out, err = run(*self.SHAPE, "--json", path, cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 0, out + err)
            self.assertEqual(os.stat(path).st_mode & 0o777, 0o640)
            self.assertEqual(load(path)["schema_version"], 2)
            self.assertEqual(sorted(os.listdir(d)), ["r.json"])  # no temporary file left

    def test_too_long_a_file_name_is_refused_before_measuring(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = run(*self.SHAPE, "--json", "x" * 300 + ".json", cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 2, out + err)
            self.assertIn("file name is 305 bytes; the system allows 255", err)
            self.assertEqual(out, "")

    def test_json_dash_is_not_a_file(self):
        with tempfile.TemporaryDirectory() as d:
            rc, out, err = run(*self.SHAPE, "--json", "-", cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 2, out + err)
            self.assertIn("--json -: not a file path", err)
            self.assertEqual(os.listdir(d), [])


class Compare(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.real = os.path.join(cls.dir, "real.json")
        rc, out, err = run(*SMALL, "--iters", "30", "--json", cls.real)
        assert rc == 0, out + err
        with open(cls.real) as f:
            cls.report = json.load(f)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write(self, name, obj):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj))
        return path

    def compare(self, base, new, *extra):
        return run("compare", base, new, *extra)

    def test_same_report_twice_exits_0(self):
        rc, out, err = self.compare(self.real, self.real)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("| problem |", out)
        self.assertIn("0 regression(s)", out)

    def test_planted_ten_percent_slowdown_exits_1(self):
        base = self.write("base.json", controlled(self.report, 100.0, 1.0, 100))
        slow = self.write("slow.json", controlled(self.report, 110.0, 1.1, 100))
        rc, out, err = self.compare(base, slow)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("+10.00%", out)
        self.assertIn("SLOWER", out)
        # A threshold above the change lets it pass.
        rc, out, _ = self.compare(base, slow, "--threshold", "15")
        self.assertEqual(rc, 0, out)

    def test_too_few_samples_are_not_comparable_exit_4(self):
        # configs/smoke.json's iters: 1 cases: two runs of one binary gave SLOWER and exit 1; then
        # "not comparable" with exit 0, whatever the slowdown: a gate that failed open.
        for count in (1, 3):
            base = self.write("few-base.json", controlled(self.report, 100.0, 0.0, count))
            new = self.write("few-new.json", controlled(self.report, 2000.0, 0.0, count))
            rc, out, err = self.compare(base, new)
            self.assertEqual(rc, 4, out + err)
            self.assertIn(f"not comparable: {count} samples (at least 30 needed)", out)
            self.assertIn("1 case(s) not comparable", out)
            self.assertNotIn("SLOWER", out)
            rc, out, err = self.compare(base, new, "--allow-incomparable")
            self.assertEqual(rc, 0, out + err)
        # A case that stops passing is still a regression (1, not 4).
        bad = self.write("few-bad.json", controlled(self.report, 100.0, 0.0, 1, "incorrect"))
        self.assertEqual(self.compare(base, bad)[0], 1)
        rc, _, err = self.compare(base, new, "--min-samples", "3")
        self.assertEqual(rc, 2)
        self.assertIn("--min-samples 3: must be >= 5", err)

    def test_doctored_noise_is_refused_not_within_noise(self):
        base = self.write("d-base.json", controlled(self.report, 100.0, 1.0, 100))
        slow = controlled(self.report, 1000.0, 1.0, 100)
        slow["cases"][0]["kernel_timing"]["stats"]["rse_median"] = 1e9
        rc, out, err = self.compare(base, self.write("d-new.json", slow))
        self.assertEqual(rc, 2, out + err)
        self.assertIn("stats.rse_median: 1000000000; expected", err)

    def test_passed_then_failed_exits_1(self):
        base = self.write("ok.json", controlled(self.report, 100.0, 1.0, 100))
        bad = self.write("bad.json", controlled(self.report, 100.0, 1.0, 100, "incorrect"))
        rc, out, err = self.compare(base, bad)
        self.assertEqual(rc, 1, out + err)
        self.assertIn("NOW FAILS", out)

    def test_noise_larger_than_the_change_exits_0(self):
        base = self.write("noisy-base.json", controlled(self.report, 100.0, 60.0, 30))
        new = self.write("noisy-new.json", controlled(self.report, 110.0, 66.0, 30))
        rc, out, err = self.compare(base, new)
        self.assertEqual(rc, 0, out + err)
        self.assertIn("within noise", out)

    def test_unreadable_or_invalid_input_exits_2_with_one_line(self):
        good = self.write("good.json", self.report)
        broken = self.write("broken.json", "{not json")
        no_cases = self.write("no-cases.json", {k: v for k, v in self.report.items() if k != "cases"})
        for args, needle in (((good, os.path.join(self.dir, "absent.json")), "absent.json: cannot be read"),
                             ((broken, good), "broken.json: not valid JSON"),
                             ((good, no_cases), "no-cases.json: cases: missing; required (schemas/report.schema.json)"),
                             ((good,), "new is required")):
            with self.subTest(needle=needle):
                rc, out, err = run("compare", *args)
                self.assertEqual(rc, 2, out + err)
                self.assertIn(needle, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)


class InputsAreBoundedRegularFiles(unittest.TestCase):
    """Regression: sweep, compare and merge blocked forever on a FIFO and read /dev/zero without
    bound; every input is now a regular file of at most 256 MiB, else one line and exit 2."""

    def test_fifo_and_device_are_refused_at_once(self):
        with tempfile.TemporaryDirectory() as d:
            fifo = os.path.join(d, "fifo")
            os.mkfifo(fifo)
            for bad in (fifo, "/dev/zero"):
                for args in (("compare", bad, bad), ("merge", os.path.join(d, "out.json"), bad),
                             ("sweep", bad), ("convert", bad, "--format", "csv")):
                    with self.subTest(args=args):
                        # A hang would run into the timeout; a refusal is immediate.
                        rc, out, err = run(*args, timeout=60)
                        self.assertEqual(rc, 2, out + err)
                        self.assertIn(f"{bad}: not a regular file (a FIFO, a device or a socket); "
                                      "expected a regular file of at most 256 MiB", err)
                        self.assertEqual(len(err.strip().splitlines()), 1, err)


if __name__ == "__main__":
    nvfp4cli.main()
