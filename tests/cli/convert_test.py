#!/usr/bin/env python3
"""`convert REPORT --format F` and `sweep --format F --output PATH` end to end on the host
backend: a single run's, a sweep's and a merged report in every format; a sweep's failed cases
shown as failed in each; damaged input refused (exit 2, the file and the key); and Google
Benchmark's own tools/compare.py (Debian's libbenchmark-tools) on our gbench files, where a
failed case must be listed but stay out of the OVERALL_GEOMEAN row."""
import csv
import io
import json
import math
import os
import re
import subprocess
import tempfile
import unittest

from nvfp4cli import HOST_ENV, PLUGIN_DIR, load, run
import nvfp4cli

LIB = os.path.join(PLUGIN_DIR, "libnvfp4_broken_host.so")
FORMATS = ("gbench", "bencher", "csv", "md", "text")
SHAPE = ["--m", "16", "--n", "16", "--k", "64", "--iters", "3", "--warmup", "0"]
COMPARE_PY = "/usr/share/benchmark/compare.py"  # Debian's libbenchmark-tools
FAILED_US = 1e12  # a failed case's real_time in gbench (src/report/gbench_writer.cpp)


def write(d, name, obj):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(obj if isinstance(obj, str) else json.dumps(obj))
    return path


def read(path):
    with open(path) as f:
        return f.read()


def convert(report, fmt, *extra, cwd=None):
    return run("convert", report, "--format", fmt, *extra, cwd=cwd, env=HOST_ENV)


class ConvertSingleRun(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        # One run per format, each writing its --json and that format: convert of the first
        # must give the second, byte for byte (one reader, the same writers).
        cls.pairs = {}
        for fmt in FORMATS:
            rep, direct = (os.path.join(cls.dir, n) for n in (f"r-{fmt}.json", f"direct.{fmt}"))
            rc, out, err = run(*SHAPE, "--json", rep, "--format", fmt, "--output", direct, env=HOST_ENV)
            assert rc == 0, out + err
            cls.pairs[fmt] = (rep, direct)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_each_format_is_what_the_run_wrote(self):
        for fmt, (rep, direct) in self.pairs.items():
            with self.subTest(format=fmt):
                rc, out, err = convert(rep, fmt)
                self.assertEqual(rc, 0, err)
                self.assertEqual(out, read(direct))
                path = os.path.join(self.dir, f"conv.{fmt}")
                rc, out, err = convert(rep, fmt, "--output", path)
                self.assertEqual(rc, 0, err)
                self.assertEqual(read(path), read(direct))
                self.assertIn(f"(single run, 1 case) -> {path} ({fmt})", out)

    def test_json_is_the_report_itself(self):
        rep = self.pairs["csv"][0]
        rc, out, err = convert(rep, "json")
        self.assertEqual(rc, 0, err)
        self.assertEqual(json.loads(out), load(rep))

    def test_host_fields_that_do_not_apply_are_absent(self):
        g = json.loads(read(self.pairs["gbench"][1]))
        for b in g["benchmarks"]:
            self.assertNotIn("sm_clock_mhz", b)  # no SM clock on the host: not 0 MHz
        self.assertNotIn("mhz_per_cpu", g["context"])
        rows = list(csv.DictReader(io.StringIO(read(self.pairs["csv"][1]))))
        self.assertTrue(rows)
        for r in rows:
            self.assertEqual(r["sm_clock_mhz"], "", r)
            self.assertEqual(r["sol_fraction"], "", r)

    def test_the_output_never_replaces_the_report(self):
        with tempfile.TemporaryDirectory() as d:
            rep = write(d, "r.json", read(self.pairs["csv"][0]))
            os.symlink("r.json", os.path.join(d, "link.json"))
            os.link(rep, os.path.join(d, "hard.json"))
            before = read(rep)
            for out_path in ("r.json", "./r.json", "link.json", "hard.json"):
                with self.subTest(output=out_path):
                    rc, out, err = convert("r.json", "csv", "--output", out_path, cwd=d)
                    self.assertEqual(rc, 2, out + err)
                    self.assertIn(f"--output {out_path}: ", err)
                    self.assertIn("is the input REPORT (r.json); an output never replaces an input", err)
            self.assertEqual(read(rep), before)

    def test_damaged_input_exits_2_naming_the_file_and_the_key(self):
        good = load(self.pairs["csv"][0])
        with tempfile.TemporaryDirectory() as d:
            def damaged(name, change):
                j = json.loads(json.dumps(good))
                change(j)
                return write(d, name, j)
            os.mkdir(os.path.join(d, "folder"))
            cases = (
                (write(d, "broken.json", "{not json"), "broken.json: not valid JSON"),
                (os.path.join(d, "absent.json"), "absent.json: cannot be read (No such file or directory)"),
                (os.path.join(d, "folder"), "folder: is a folder, not a file"),
                (damaged("nocases.json", lambda j: j.pop("cases")), "nocases.json: cases: missing; required (schemas/report.schema.json)"),
                (damaged("mean.json", lambda j: j["cases"][0]["kernel_timing"]["stats"].update(mean_us="x")),
                 'mean.json: cases[0].kernel_timing.stats.mean_us: "x"; expected a number (schemas/report.schema.json)'),
                (damaged("disp.json", lambda j: j["cases"][0].update(disposition="bored")),
                 'disp.json: cases[0].disposition: "bored"; expected one of "passed", "incorrect", "not_supported" or "error" (schemas/report.schema.json)'),
                (damaged("clock.json", lambda j: j["cases"][0]["kernel_timing"]["clock"].update(read="many")),
                 'clock.json: cases[0].kernel_timing.clock.read: "many"; expected an integer (schemas/report.schema.json)'),
                (damaged("version.json", lambda j: j.update(schema_version=9)),
                 "version.json: schema_version: 9; expected 2 (schemas/report.schema.json)"),
            )
            for path, needle in cases:
                with self.subTest(needle=needle):
                    rc, out, err = convert(path, "gbench")
                    self.assertEqual(rc, 2, out + err)
                    self.assertIn(needle, err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertEqual(out, "")

    def test_usage_errors(self):
        rep = self.pairs["csv"][0]
        for args, needle in ((("--format", "xml"), "--format 'xml': unknown; expected one of: json, gbench, bencher, csv, md, text"),
                             ((), "--format is required"),
                             (("--format", "csv", "--output", "/nonexistent-dir/x.csv"),
                              "--output /nonexistent-dir/x.csv: folder /nonexistent-dir does not exist or is not writable")):
            with self.subTest(needle=needle):
                rc, out, err = run("convert", rep, *args, env=HOST_ENV)
                self.assertEqual(rc, 2, out + err)
                self.assertIn(needle, err)


def sweep_config(d):
    """Two passing cases of one shape (seeds 0 and 1: names that must stay apart), one incorrect
    (a NaN), one not supported (refused before timing)."""
    return write(d, "sw.json", {
        "name": "sw", "defaults": {"warmup": 0, "iters": 3},
        "cases": [{"name": "ok", "shape": {"m": 16, "n": 16, "k": 64}, "seeds": [0, 1]},
                  {"name": "nan", "shape": {"m": 16, "n": 16, "k": 64}, "kernels": ["broken-nan-host"]},
                  {"name": "nokernel", "shape": {"m": 16, "n": 16, "k": 48}, "kernels": ["k64-host"]}]})


OK0, OK1 = "host/16x16x64x1/gpumode/hot/seed=0", "host/16x16x64x1/gpumode/hot/seed=1"
NAN, REFUSED = "broken-nan-host/16x16x64x1/gpumode/hot", "k64-host/16x16x48x1/gpumode/hot"


class ConvertSweeps(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.dir = cls.tmp.name
        cfg = sweep_config(d)
        cls.sweep_csv = os.path.join(d, "sweep.csv")
        rc, out, err = run("--kernel-lib", LIB, "sweep", cfg, "--format", "csv", "--output", cls.sweep_csv,
                           cwd=d, env=HOST_ENV)
        assert rc == 1, out + err  # an incorrect case
        assert f"sweep: the report in csv: {cls.sweep_csv}" in out, out
        cls.report = os.path.join(d, "sweep-sw.json")
        shards = []
        for i in range(2):
            shard = os.path.join(d, f"shard-{i}.json")
            rc, out, err = run("--kernel-lib", LIB, "sweep", cfg, "--shard", f"{i}/2", "--json", shard,
                               "--format", "json", "--output", shard + ".copy", cwd=d, env=HOST_ENV)
            assert rc in (0, 1, 2), out + err
            shards.append(shard)
        cls.merged = os.path.join(d, "merged.json")
        rc, out, err = run("merge", cls.merged, *shards, cwd=d, env=HOST_ENV)
        assert rc == 1, out + err
        cls.out = {}
        for fmt in FORMATS:
            rc, out, err = convert(cls.report, fmt)
            assert rc == 0, err
            cls.out[fmt] = out

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_sweep_format_is_what_convert_writes(self):
        self.assertEqual(read(self.sweep_csv), self.out["csv"])

    def test_sweep_format_json_is_the_report_itself(self):
        for i in range(2):
            shard = os.path.join(self.dir, f"shard-{i}.json")
            self.assertEqual(load(shard + ".copy"), load(shard))
            self.assertIn("sweep", load(shard + ".copy"))  # the sweep's section kept

    def test_gbench_lists_every_case_and_the_failed_ones_as_failed(self):
        benches = {b["name"]: b for b in json.loads(self.out["gbench"])["benchmarks"]}
        self.assertTrue({OK0, OK1, NAN, REFUSED} <= set(benches), sorted(benches))
        for name in (OK0, OK1):
            self.assertEqual(benches[name]["run_type"], "iteration")
            self.assertNotIn("error_occurred", benches[name])
            self.assertLess(benches[name]["real_time"], 1e7)
        for name, why in ((NAN, "incorrect: 1 of 256 checked elements mismatch"),
                          (REFUSED, "not_supported: --kernel 'k64-host' does not support 16x16x48")):
            b = benches[name]
            self.assertTrue(b["error_occurred"], b)
            self.assertIn(why, b["error_message"])
            self.assertEqual((b["run_type"], b["aggregate_name"]), ("aggregate", "failed"))
            self.assertEqual(b["real_time"], FAILED_US)
        self.assertEqual(benches[REFUSED]["iterations"], 0)
        for b in benches.values():
            self.assertNotIn("sm_clock_mhz", b)

    def test_bencher_records_the_verification_of_every_case(self):
        bmf = json.loads(self.out["bencher"])
        for name in (OK0, OK1):
            self.assertEqual(bmf[name]["verification"]["value"], 1)
            self.assertIn("latency", bmf[name])
        for name in (NAN, REFUSED):
            self.assertEqual(bmf[name], {"verification": {"value": 0}})

    def test_csv_has_every_case_with_its_disposition(self):
        rows = list(csv.DictReader(io.StringIO(self.out["csv"])))
        kernels = {r["name"]: r for r in rows if r["role"] == "kernel"}
        self.assertEqual(set(kernels), {OK0, OK1, NAN, REFUSED})
        self.assertEqual([kernels[n]["disposition"] for n in (OK0, OK1, NAN, REFUSED)],
                         ["passed", "passed", "incorrect", "not_supported"])
        self.assertEqual(kernels[OK1]["seed"], "1")
        self.assertEqual(kernels[REFUSED]["median_us"], "")
        self.assertIn("K must be a multiple of 64", kernels[REFUSED]["message"])
        self.assertTrue(all(r["sm_clock_mhz"] == "" for r in rows))
        self.assertEqual(len({r["name"] for r in rows}), len(rows))  # references too: one name each

    def test_markdown_and_text_say_which_cases_failed(self):
        md = self.out["md"]
        # the host kernel names its variant (avx512, avx2, generic: what this CPU runs)
        self.assertRegex(md, r"\| 16x16x64 L=1 gpumode seed 1 \| host \(kernel(: \w+)?\) \| passed \|")
        self.assertIn("broken-nan-host 16x16x64 L=1 gpumode seed 0: **incorrect** 1 of 256", md)
        self.assertIn("k64-host 16x16x48 L=1 gpumode seed 0: **not_supported** --kernel 'k64-host'", md)
        text = self.out["text"]
        self.assertEqual(text.count("problem   "), 4)
        self.assertIn("result    incorrect: 1 of 256 checked elements mismatch", text)
        self.assertIn("result    not_supported: --kernel 'k64-host' does not support", text)

    def test_a_merged_report_converts_like_the_whole_sweep(self):
        for fmt in ("gbench", "bencher", "csv"):
            with self.subTest(format=fmt):
                rc, out, err = convert(self.merged, fmt)
                self.assertEqual(rc, 0, err)
                if fmt == "csv":
                    names = {r["name"] for r in csv.DictReader(io.StringIO(out))}
                    whole = {r["name"] for r in csv.DictReader(io.StringIO(self.out["csv"]))}
                elif fmt == "gbench":
                    names = {b["name"] for b in json.loads(out)["benchmarks"]}
                    whole = {b["name"] for b in json.loads(self.out["gbench"])["benchmarks"]}
                else:
                    names, whole = set(json.loads(out)), set(json.loads(self.out["bencher"]))
                self.assertEqual(names, whole)
        path = os.path.join(self.dir, "merged.md")
        rc, out, err = convert(self.merged, "md", "--output", path)
        self.assertEqual(rc, 0, err)
        self.assertIn("(merged sweep, 4 cases)", out)

    def test_sweep_format_and_output_come_together_and_are_checked_first(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = sweep_config(d)
            for args, needle in ((("--format", "csv"), "--format csv: needs --output PATH"),
                                 (("--output", "x.csv"), "--output x.csv: needs --format (json, gbench"),
                                 (("--format", "xml", "--output", "x.xml"), "--format 'xml': unknown; expected one of:"),
                                 (("--format", "csv", "--output", "sw.json"),
                                  "--output sw.json: is the input the config ("),
                                 (("--format", "csv", "--output", "sweep-sw.jsonl"),
                                  "--output sweep-sw.jsonl: the same file as the record file (the report's path with .jsonl; choose another with --jsonl) sweep-sw.jsonl")):
                with self.subTest(needle=needle):
                    rc, out, err = run("--kernel-lib", LIB, "sweep", cfg, *args, cwd=d, env=HOST_ENV)
                    self.assertEqual(rc, 2, out + err)
                    self.assertIn(needle, err)
                    self.assertFalse(os.path.exists(os.path.join(d, "sweep-sw.json")))  # nothing ran


def compare_py_missing():
    """Why Google Benchmark's compare.py cannot run here, or None."""
    if not os.path.exists(COMPARE_PY):
        return (f"{COMPARE_PY} is missing: Debian's libbenchmark-tools is not installed "
                "(scripts/setup --tests installs it)")
    p = subprocess.run(["/usr/bin/python3", "-c", "import scipy, numpy"], capture_output=True, text=True)
    if p.returncode != 0:
        return "compare.py needs scipy and numpy under /usr/bin/python3 (python3-scipy): " + p.stderr.strip()
    return None


def gmean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values))


class GoogleBenchmarkComparePy(unittest.TestCase):
    """compare.py (v1.7.1 in Debian 12) lists the names both files share with old and new times,
    and ends with OVERALL_GEOMEAN over every entry of each file that is not an aggregate."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.dir = cls.tmp.name
        # flaky-host: correct, or one NaN when NVFP4_TEST_BREAK is set; host passes either way.
        cfg = write(d, "cmp.json", {
            "name": "cmp", "defaults": {"warmup": 0, "iters": 3},
            "cases": [{"shape": {"m": 64, "n": 64, "k": 256}, "kernels": ["flaky-host", "host"]},
                      {"shape": {"m": 32, "n": 64, "k": 128}, "kernels": ["host"]}]})
        cls.base, cls.new = os.path.join(d, "base.gbench"), os.path.join(d, "new.gbench")
        for path, env, want in ((cls.base, HOST_ENV, 0), (cls.new, dict(HOST_ENV, NVFP4_TEST_BREAK="1"), 1)):
            rc, out, err = run("--kernel-lib", LIB, "sweep", cfg, "--overwrite", "--format", "gbench",
                               "--output", path, cwd=d, env=env)
            assert rc == want, out + err
        cls.failed = "flaky-host/64x64x256x1/gpumode/hot"

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def compare_py(self, base, new):
        why = compare_py_missing()
        if why:
            self.skipTest(why)
        diff = os.path.join(self.dir, "diff.json")
        p = subprocess.run(["/usr/bin/python3", COMPARE_PY, "--no-color", "-d", diff, "benchmarks", base, new],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout, {e["name"]: e for e in load(diff)}

    def geomean_problem(self, new_path, diff):
        """None when OVERALL_GEOMEAN's new time is the geometric mean of the new file's cases
        that passed, else what is wrong."""
        passed = [b["real_time"] * 1e-6 for b in load(new_path)["benchmarks"] if not b.get("error_occurred")]
        got = diff["OVERALL_GEOMEAN"]["measurements"][0]["real_time_other"]
        want = gmean(passed)
        return None if math.isclose(got, want, rel_tol=1e-9) else f"geomean {got} s, of the passing cases {want} s"

    def test_a_failed_case_is_listed_and_kept_out_of_the_geomean(self):
        out, diff = self.compare_py(self.base, self.new)
        row = diff[self.failed]["measurements"][0]
        self.assertEqual(row["real_time_other"], FAILED_US)  # shown, against its passing base
        self.assertLess(row["real_time"], 1e7)
        self.assertIsNone(self.geomean_problem(self.new, diff))
        self.assertTrue(any(line.startswith(self.failed) for line in out.splitlines()), out)
        self.assertIsNone(re.search(r"\d{20}", out), out)  # no 300-digit numbers
        self.assertLess(max(len(line) for line in out.splitlines()), 200, out)

    def test_the_check_catches_the_old_representation(self):
        # Planted: the failed case as an ordinary iteration at 1e300 us, as it used to be written.
        doc = load(self.new)
        for b in doc["benchmarks"]:
            if b.get("error_occurred"):
                b.update(run_type="iteration", real_time=1e300, cpu_time=1e300)
                b.pop("aggregate_name")
        old = write(self.dir, "old.gbench", doc)
        out, diff = self.compare_py(self.base, old)
        self.assertIsNotNone(self.geomean_problem(old, diff))
        self.assertIsNotNone(re.search(r"\d{20}", out))


if __name__ == "__main__":
    nvfp4cli.main()
