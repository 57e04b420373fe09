#!/usr/bin/env python3
"""`nvfp4bench sweep` and `merge` end to end on the host backend: configs and their errors (also
checked against configs/sweep.schema.json), records, isolation (unsupported cases, timeouts),
interruption with SIGTERM and --resume, shards and merge, progress output."""
import json
import os
import re
import signal
import subprocess
import tempfile
import time
import unittest
import nvfp4cli

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema; without it the schema checks skip
    jsonschema = None

from nvfp4cli import BIN, CONFIGS, HOST_ENV, PLUGIN_DIR, SCHEMA as REPORT_SCHEMA, jsonl, load, run

LIB = os.path.join(PLUGIN_DIR, "libnvfp4_broken_host.so")  # k64-host: refuses K % 64 != 0


def check_report_schema(test, report):
    """A sweep report is a report: schemas/report.schema.json holds for it too."""
    if jsonschema is None:
        return
    jsonschema.validate(report, load(REPORT_SCHEMA), cls=jsonschema.Draft202012Validator)


def write_config(d, name, cfg):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        f.write(cfg if isinstance(cfg, str) else json.dumps(cfg))
    return path


SMALL = {"defaults": {"warmup": 0, "iters": 1},
         "cases": [{"name": "a", "shape": {"m": 64, "n": 64, "k": 256}},
                   {"name": "b", "axes": {"m": [16, 32], "n": [16, 48], "k": 64, "l": 2}, "seeds": [1, 2]}]}

PROGRESS_LINE = re.compile(
    r"^\[\s*(\d+)/(\d+)\] (passed|incorrect|not_supported|error)\s+(.+?) \| elapsed (\d+:\d\d)(, ~\d+:\d\d left)?$")


class Configs(unittest.TestCase):
    def test_shipped_configs_list_their_cases(self):
        for name, count in [("smoke", None), ("gpumode-nvfp4-gemm", 13), ("llm-layers", None)]:
            with self.subTest(name):
                rc, out, err = run("sweep", os.path.join(CONFIGS, name + ".json"), "--list-cases")
                self.assertEqual(rc, 0, err)
                lines = out.strip().splitlines()
                n = int(re.match(r"(\d+) cases", lines[-1]).group(1))
                self.assertEqual(len(lines) - 1, n)
                if count:
                    self.assertEqual(n, count)
        rc, out, _ = run("sweep", os.path.join(CONFIGS, "gpumode-nvfp4-gemm.json"), "--list-cases")
        self.assertIn("--m 128 --n 7168 --k 16384 --l 1", out)

    def test_kernels_replace_every_cases_kernels(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "k.json", {
                "defaults": {"warmup": 0, "iters": 1, "kernels": ["auto"]},
                "cases": [{"name": "a", "shape": {"m": 16, "n": 24, "k": 64}, "kernels": ["naive"]},
                          {"name": "b", "axes": {"m": [16, 32], "n": 16, "k": 64}}]})
            rc, before, err = run("sweep", cfg, "--list-cases")
            self.assertEqual(rc, 0, err)
            rc, out, err = run("sweep", cfg, "--kernels", "host,auto", "--list-cases")
            self.assertEqual(rc, 0, err)
            lines = out.strip().splitlines()
            self.assertTrue(lines[-1].startswith("6 cases"), lines[-1])  # 3 shapes x 2 kernels
            kernels = [re.search(r"--kernel (\S+)", l).group(1) for l in lines[:-1]]
            self.assertEqual(kernels, ["host", "auto"] * 3)
            hash_of = lambda text: re.search(r"config hash (\S+)\)", text).group(1)
            self.assertNotEqual(hash_of(out), hash_of(before))
            # Run: every record names the kernel asked for.
            rc, out, err = run("sweep", cfg, "--kernels", "host", "--no-isolate", "--progress", "off",
                               "--json", os.path.join(d, "r.json"), cwd=d,
                               env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
            self.assertEqual(rc, 0, out + err)
            rep = load(os.path.join(d, "r.json"))
            self.assertEqual([c["kernel"]["name"] for c in rep["cases"]], ["host"] * 3)
            for bad, says in [("bogus", "--kernels: 'bogus' is not a kernel; expected auto or one of:"),
                              (",", "expected a comma-separated list of kernel names")]:
                rc, out, err = run("sweep", cfg, "--kernels", bad, "--list-cases")
                self.assertEqual(rc, 2, out + err)
                self.assertIn(says, err)

    @unittest.skipIf(jsonschema is None, "python3-jsonschema is not installed: the schema checks need it")
    def test_shipped_configs_match_the_schema(self):
        schema = load(os.path.join(CONFIGS, "sweep.schema.json"))
        jsonschema.Draft202012Validator.check_schema(schema)
        for name in ["smoke", "gpumode-nvfp4-gemm", "llm-layers"]:
            jsonschema.validate(load(os.path.join(CONFIGS, name + ".json")), schema,
                                cls=jsonschema.Draft202012Validator)

    def test_bad_configs_are_one_line_exit_2_and_rejected_by_the_schema(self):
        shape = {"m": 1, "n": 1, "k": 16}
        bad = [
            ({"cases": [{"shape": shape}, {"shape": shape}, {"shape": dict(shape, mm=2)}]},
             "cases[2].shape.mm: unknown key"),
            ({"cases": []}, "cases: empty"),
            ({"name": "x"}, "cases: missing"),
            ({"cases": [{"shape": dict(shape, m="1")}]}, "cases[0].shape.m: expected a positive integer, got a string"),
            ({"defaults": {"iters": "5"}, "cases": [{"shape": shape}]}, "defaults.iters: expected an integer, got a string"),
            ({"defaults": {"warmup": -1}, "cases": [{"shape": shape}]}, "defaults.warmup: -1 is out of range"),
            ({"cases": [{"shape": shape, "dists": ["cauchy"]}]}, "cases[0].dists[0]"),
            ({"cases": [{"axes": {"m": {"from": 1, "to": 4}, "n": 1, "k": 16}}]}, "cases[0].axes.m"),
            ({"cases": [{"shape": shape, "axes": shape}]}, "cases[0]: a case needs exactly one of"),
            ({"cases": [{"shape": shape, "seeds": [-1]}]}, "cases[0].seeds[0]"),
            ({"cases": [{"shape": shape, "flush": 1}]}, "cases[0].flush: expected true or false"),
            ({"cases": [{"shape": shape, "peers": "every"}]}, "cases[0].peers"),
            ({"casess": []}, "casess: unknown key"),
            ({"cases": [{"shape": dict(shape, k=24)}]}, "cases[0].shape.k: 24 is not a multiple of 16"),
            ({"cases": [{"shape": shape, "mode": "warm"}]}, "cases[0].mode: 'warm' is not a timing mode"),
        ]
        schema = load(os.path.join(CONFIGS, "sweep.schema.json"))
        with tempfile.TemporaryDirectory() as d:
            for i, (cfg, needle) in enumerate(bad):
                with self.subTest(needle):
                    path = write_config(d, f"bad{i}.json", cfg)
                    rc, out, err = run("sweep", path, cwd=d)
                    self.assertEqual(rc, 2, out + err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertIn(f"{path}: {needle}", err)
                    self.assertFalse(os.path.exists(os.path.join(d, f"sweep-bad{i}.json")))
                    if jsonschema is not None:  # the schema and the parser agree
                        with self.assertRaises(jsonschema.ValidationError):
                            jsonschema.validate(cfg, schema, cls=jsonschema.Draft202012Validator)
            for text, needle in [("{\"cases\": [", "not JSON"), ("", "not JSON")]:
                path = write_config(d, "nj.json", text)
                rc, _, err = run("sweep", path, cwd=d)
                self.assertEqual(rc, 2)
                self.assertIn(f"{path}: {needle}", err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
            rc, _, err = run("sweep", os.path.join(d, "missing.json"))
            self.assertEqual(rc, 2)
            self.assertIn("missing.json: cannot be read", err)

    def test_bad_flags(self):
        cfg = os.path.join(CONFIGS, "smoke.json")
        for args, needle in [(["--shard", "2/2"], "--shard '2/2'"), (["--case-timeout", "0"], "--case-timeout 0"),
                             (["--progress", "loud"], "--progress 'loud'"), (["--bogus"], "--bogus"),
                             (["--resume", "--overwrite"], "--resume excludes --overwrite")]:
            with self.subTest(args):
                with tempfile.TemporaryDirectory() as d:
                    rc, _, err = run("sweep", cfg, *args, cwd=d)
                    self.assertEqual(rc, 2, err)
                    self.assertIn(needle, err)


class Sweeps(unittest.TestCase):
    def test_smoke_sweep_records_report_and_progress(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(CONFIGS, "smoke.json")
            rc, out, err = run("sweep", cfg, "--json", os.path.join(d, "r.json"), cwd=d)
            self.assertEqual(rc, 0, out + err)
            if "host backend" not in out:
                self.skipTest("a GPU is present: the host-backend sweep is tested on GPU-less machines")
            n = int(re.search(r": (\d+) cases, ", out).group(1))
            rep = load(os.path.join(d, "r.json"))
            self.assertEqual(rep["schema_version"], 2)
            s = rep["sweep"]
            self.assertTrue(s["complete"])
            self.assertIsNone(s["interrupted"])
            self.assertEqual(s["cases_done"], n)
            self.assertEqual(s["counts"]["passed"], n)
            self.assertTrue(s["config_hash"].startswith("fnv1a64:"))
            self.assertEqual([c["sweep"]["index"] for c in rep["cases"]], list(range(n)))
            for c in rep["cases"]:
                self.assertEqual(c["disposition"], "passed")
                self.assertEqual(c["sweep"]["child"], "exited with code 0")
                self.assertTrue(c["sweep"]["isolated"])
                self.assertEqual(c["kernel"]["name"], "host")
                self.assertEqual(c["problem"]["m"], c["sweep"]["params"]["m"])
                self.assertIn("measurement", c)
            # The smoke config's overrides reached the cases.
            hot = [c for c in rep["cases"] if c["sweep"]["name"] == "hot"][0]
            self.assertEqual(hot["measurement"]["mode"], "hot")
            for c in rep["cases"]:  # "warmup": 0 with "warmup_time": 0: no warm-up at all
                self.assertEqual(c["measurement"]["warmup_s"], 0)
                self.assertEqual(c["kernel_timing"]["warmup_runs"], 0)
            # 30 samples a case: two smoke sweeps are comparable (compare's --min-samples).
            self.assertEqual(hot["kernel_timing"]["stats"]["count"], 30)
            batched = [c for c in rep["cases"] if c["sweep"]["name"] == "batched"]
            self.assertEqual(sorted(c["problem"]["dist"] for c in batched), ["gpumode", "normal"])
            self.assertEqual(batched[0]["problem"]["l"], 3)
            # JSONL: the header, then one record per case; same content as the report.
            lines = jsonl(os.path.join(d, "r.jsonl"))
            self.assertEqual(lines[0]["config_hash"], s["config_hash"])
            self.assertEqual(sorted(r["sweep"]["index"] for r in lines[1:]), list(range(n)))
            # Plain progress lines (stdout is a pipe): case i of n, elapsed and remaining time.
            progress = [l for l in out.splitlines() if l.startswith("[")]
            self.assertEqual(len(progress), n)
            for i, line in enumerate(progress):
                m = PROGRESS_LINE.match(line)
                self.assertIsNotNone(m, line)
                self.assertEqual((int(m.group(1)), int(m.group(2))), (i + 1, n))
                self.assertEqual(m.group(3), "passed")
            self.assertIn("~", progress[0])
            check_report_schema(self, rep)
            self.assertNotIn("\x1b[", out)
            # Without --resume an existing JSONL is not overwritten.
            rc, _, err = run("sweep", cfg, "--json", os.path.join(d, "r.json"), cwd=d)
            self.assertEqual(rc, 2)
            self.assertIn("pass --resume", err)
            # With --resume and nothing left, nothing runs and the report is the same.
            rc, out, _ = run("sweep", cfg, "--json", os.path.join(d, "r.json"), "--resume", cwd=d)
            self.assertEqual(rc, 0)
            self.assertIn(f"0 to run ({n} resumed)", out)
            self.assertEqual(len(jsonl(os.path.join(d, "r.jsonl"))), n + 1)
            # Two smoke sweeps are comparable: compare gives every case a speed verdict (0 or
            # 1 on a busy machine), never 4.
            rc, out, err = run("sweep", cfg, "--json", os.path.join(d, "again.json"), cwd=d)
            self.assertEqual(rc, 0, out + err)
            rc, out, err = run("compare", os.path.join(d, "r.json"), os.path.join(d, "again.json"))
            self.assertIn(rc, (0, 1), out + err)
            self.assertNotIn("not comparable", out)
            self.assertEqual(out.count("| passed |"), n, out)

    def test_bar_progress_and_in_process(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "c.json", SMALL)
            rc, out, err = run("sweep", cfg, "--progress", "bar", "--no-isolate", cwd=d)
            self.assertEqual(rc, 0, out + err)
            self.assertIn("in-process (--no-isolate)", out)
            # (text mode reads the carriage return as a newline)
            self.assertIn("\x1b[K[0/9] elapsed 0:00 | running: a 64x64x256 L=1", out)
            rep = load(os.path.join(d, "sweep-c.json"))
            self.assertEqual(len(rep["cases"]), 9)
            self.assertFalse(rep["cases"][0]["sweep"]["isolated"])
            check_report_schema(self, rep)
            self.assertEqual(rep["cases"][0]["disposition"], "passed")
            rc, out, _ = run("sweep", cfg, "--progress", "off", "--overwrite", cwd=d)
            self.assertEqual(rc, 0)
            self.assertFalse([l for l in out.splitlines() if l.startswith("[")])

    def test_failing_cases_are_recorded_and_the_sweep_goes_on(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "f.json", {
                "defaults": {"warmup": 0, "iters": 1},
                "cases": [{"name": "ok", "shape": {"m": 16, "n": 16, "k": 64}},
                          {"name": "nokernel", "shape": {"m": 16, "n": 16, "k": 48}, "kernels": ["k64-host"]},
                          {"name": "huge", "shape": {"m": 2 ** 40, "n": 2 ** 40, "k": 2 ** 20}},
                          # seconds of work for the host kernel and reference, stopped at 0.2 s
                          {"name": "slow", "shape": {"m": 4096, "n": 4096, "k": 16384}, "timeout_s": 0.2},
                          {"name": "after", "shape": {"m": 16, "n": 32, "k": 64}}]})
            # An unknown kernel name is refused when the config is read (exit 2, its path), so
            # "nokernel" names a plugin kernel that refuses its shape (K not a multiple of 64).
            rc, out, err = run("--kernel-lib", LIB, "sweep", cfg, cwd=d, env=HOST_ENV)  # host kernels
            self.assertEqual(rc, 3, out + err)  # an error (the timeout) and nothing incorrect
            rep = load(os.path.join(d, "sweep-f.json"))
            by = {c["sweep"]["name"]: c for c in rep["cases"]}
            self.assertEqual(by["ok"]["disposition"], "passed")
            self.assertEqual(by["nokernel"]["disposition"], "not_supported")
            self.assertIn("--kernel 'k64-host' does not support 16x16x48 L=1: K must be a multiple of 64",
                          by["nokernel"]["message"])
            self.assertEqual(by["nokernel"]["sweep"]["child"], "exited with code 2")
            self.assertEqual(by["huge"]["disposition"], "not_supported")
            self.assertIn("overflows 64 bits", by["huge"]["message"])
            self.assertEqual(by["slow"]["disposition"], "error")
            self.assertEqual(by["slow"]["message"], "timed out after 0.2 s")
            self.assertEqual(by["after"]["disposition"], "passed")
            self.assertEqual(rep["sweep"]["counts"], {"passed": 2, "not_supported": 2, "error": 1, "incorrect": 0})
            # The output of failed cases is kept beside the report.
            log = by["huge"]["sweep"]["log"]
            with open(log) as f:
                self.assertIn("overflows 64 bits", f.read())
            check_report_schema(self, rep)
            self.assertNotIn("log", by["ok"]["sweep"])
            # --case-timeout overrides the config's timeout_s (and keeps the config hash: resumable).
            rc, out, err = run("--kernel-lib", LIB, "sweep", cfg, "--overwrite", "--case-timeout", "0.001", cwd=d)
            self.assertEqual(rc, 3)
            rep = load(os.path.join(d, "sweep-f.json"))
            new_by = {c["sweep"]["name"]: c for c in rep["cases"]}
            # The slow case (seconds of work; its config says 0.2 s) is stopped at the new 0.001 s.
            self.assertEqual(new_by["slow"]["message"], "timed out after 0.001 s")
            # The others may end on their own between two polls of the child, past the deadline:
            # then their own result is kept (nothing finished is thrown away), never another one.
            for name, c in new_by.items():
                if c["disposition"] == "error":
                    self.assertEqual(c["message"], "timed out after 0.001 s", name)
                else:
                    self.assertEqual(c["disposition"], by[name]["disposition"], name)
                    self.assertEqual(c["message"], by[name]["message"], name)
            # Only not-supported cases: exit 2.
            cfg2 = write_config(d, "g.json", {"cases": [{"shape": {"m": 16, "n": 16, "k": 48}, "kernels": ["k64-host"]}]})
            rc, out, err = run("--kernel-lib", LIB, "sweep", cfg2, cwd=d)
            self.assertEqual(rc, 2, out + err)
            self.assertIn("1 not supported", out)

    def test_compare_catches_an_auto_case_that_stops_passing(self):
        """Regression: cases asking for kernel auto (the configs' default) that time out
        in the new sweep were recorded under "auto" and matched nothing: exit 0."""
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "a.json", {"defaults": {"warmup": 0, "iters": 1},
                                             "cases": [{"shape": {"m": 64, "n": 64, "k": 256}}]})
            base, new = os.path.join(d, "base.json"), os.path.join(d, "new.json")
            rc, out, err = run("sweep", cfg, "--json", base, cwd=d)
            self.assertEqual(rc, 0, out + err)
            k = load(base)["cases"][0]["kernel"]
            self.assertEqual(k["asked"], "auto")
            self.assertNotEqual(k["name"], "auto")
            rc, out, err = run("sweep", cfg, "--json", new, "--case-timeout", "0.001", cwd=d)
            self.assertEqual(rc, 3, out + err)
            c = load(new)["cases"][0]
            self.assertEqual(c["kernel"]["asked"], "auto")
            check_report_schema(self, load(new))
            rc, out, err = run("compare", base, new, cwd=d)
            self.assertEqual(rc, 1, out + err)
            self.assertIn("NOW FAILS", out)
            self.assertIn("1 regression(s)", out)

    def test_sigterm_then_resume_loses_and_repeats_nothing(self):
        self.interrupted_then_resumed(signal.SIGTERM)

    def test_sighup_is_an_interruption_like_sigterm(self):
        self.interrupted_then_resumed(signal.SIGHUP)

    def interrupted_then_resumed(self, sig):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "long.json", {
                "defaults": {"warmup": 0, "iters": 3},
                "cases": [{"axes": {"m": 256, "n": 256, "k": 2048}, "seeds": {"from": 0, "to": 11, "step": 1}}]})
            rep_path, rec_path = os.path.join(d, "long-report.json"), os.path.join(d, "long-report.jsonl")
            p = subprocess.Popen([BIN, "sweep", cfg, "--json", rep_path], cwd=d, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            deadline = time.time() + 120
            while time.time() < deadline:
                if os.path.exists(rec_path) and len(jsonl(rec_path)) >= 2:  # header + a finished case
                    break
                time.sleep(0.02)
            else:
                p.kill()
                self.fail("no case finished in 120 s")
            p.send_signal(sig)
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 130, out + err)
            self.assertIn(f"nvfp4bench: sweep: interrupted by {sig.name}", err)
            rep = load(rep_path)
            done = [c["sweep"]["index"] for c in rep["cases"]]
            self.assertGreaterEqual(len(done), 1)
            self.assertLess(len(done), 12, "the sweep ended before the signal: make its cases longer")
            self.assertFalse(rep["sweep"]["complete"])
            self.assertEqual(rep["sweep"]["interrupted"], sig.name)
            recorded = [r["sweep"]["index"] for r in jsonl(rec_path)[1:]]
            self.assertEqual(sorted(recorded), sorted(done))  # the report has every finished case
            self.assertFalse([f for f in os.listdir(d) if f.endswith(".tmp")])
            check_report_schema(self, rep)
            # Resume: only the rest runs, each case exactly once in the end.
            rc, out, err = run("sweep", cfg, "--json", rep_path, "--resume", cwd=d)
            self.assertEqual(rc, 0, out + err)
            self.assertIn(f"{12 - len(done)} to run ({len(done)} resumed)", out)
            ran_now = [int(m.group(1)) for m in map(PROGRESS_LINE.match, out.splitlines()) if m]
            self.assertEqual(len(ran_now), 12 - len(done))
            recorded = [r["sweep"]["index"] for r in jsonl(rec_path)[1:]]
            self.assertEqual(sorted(recorded), list(range(12)))
            rep = load(rep_path)
            self.assertTrue(rep["sweep"]["complete"])
            self.assertEqual([c["sweep"]["index"] for c in rep["cases"]], list(range(12)))
            self.assertEqual([c["problem"]["seed"] for c in rep["cases"]], list(range(12)))

    def test_a_case_killed_with_the_sweep_is_rerun_not_recorded_as_a_crash(self):
        """Slurm signals every process of the step: the case's process dies of SIGTERM as the sweep
        stops. That case is interrupted (rerun by --resume), not "crashed with signal 15"."""
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "long.json", {
                "defaults": {"warmup": 0, "iters": 3},
                "cases": [{"axes": {"m": 256, "n": 256, "k": 2048}, "seeds": {"from": 0, "to": 11, "step": 1}}]})
            rec = os.path.join(d, "sweep-long.jsonl")
            p = subprocess.Popen([BIN, "sweep", cfg], cwd=d, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)

            def children():
                out = []
                for t in os.listdir(f"/proc/{p.pid}/task"):
                    try:
                        with open(f"/proc/{p.pid}/task/{t}/children") as f:
                            out += [int(x) for x in f.read().split()]
                    except OSError:
                        pass
                return out

            deadline = time.time() + 120
            kids = []
            while time.time() < deadline:
                if os.path.exists(rec) and len(jsonl(rec)) >= 2:
                    kids = children()
                    if kids:
                        break
                time.sleep(0.01)
            else:
                p.kill()
                self.fail("no case running after one finished in 120 s")
            os.kill(kids[0], signal.SIGTERM)  # the case first, as a signal to the step may land
            p.send_signal(signal.SIGTERM)
            out, err = p.communicate(timeout=60)
            self.assertEqual(p.returncode, 130, out + err)
            for r in jsonl(rec)[1:]:
                self.assertEqual(r["disposition"], "passed", r.get("message"))
            rc, out, err = run("sweep", cfg, "--resume", cwd=d)
            self.assertEqual(rc, 0, out + err)
            recs = jsonl(rec)[1:]
            self.assertEqual(sorted(r["sweep"]["index"] for r in recs), list(range(12)))
            self.assertTrue(all(r["disposition"] == "passed" for r in recs))

    def test_resume_refuses_another_config_and_cuts_a_torn_line(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "c.json", SMALL)
            rc, _, _ = run("sweep", cfg, cwd=d)
            self.assertEqual(rc, 0)
            rec = os.path.join(d, "sweep-c.jsonl")
            with open(rec) as f:
                lines = f.read().splitlines(keepends=True)
            # Keep the header and 3 records, then half a line (a crash mid-write).
            with open(rec, "w") as f:
                f.writelines(lines[:4])
                f.write(lines[4][: len(lines[4]) // 2])
            rc, out, err = run("sweep", cfg, "--resume", cwd=d)
            self.assertEqual(rc, 0, out + err)
            self.assertIn("dropping a torn last line", out)
            self.assertIn("6 to run (3 resumed)", out)
            self.assertEqual(sorted(r["sweep"]["index"] for r in jsonl(rec)[1:]), list(range(9)))
            other = write_config(d, "c.json", dict(SMALL, defaults={"warmup": 0, "iters": 2}))
            rc, _, err = run("sweep", other, "--resume", cwd=d)
            self.assertEqual(rc, 2)
            self.assertIn("was written for another config", err)

    def test_a_second_writer_is_refused_with_the_holders_pid(self):
        """Regression: two sweeps on one JSONL measured the same cases and wrote duplicates."""
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "long.json", {
                "defaults": {"warmup": 0, "iters": 3},
                "cases": [{"axes": {"m": 256, "n": 256, "k": 2048}, "seeds": {"from": 0, "to": 11, "step": 1}}]})
            rec = os.path.join(d, "sweep-long.jsonl")
            p = subprocess.Popen([BIN, "sweep", cfg], cwd=d, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            try:
                deadline = time.time() + 60
                while time.time() < deadline and not (os.path.exists(rec) and os.path.getsize(rec) > 0):
                    time.sleep(0.02)
                for extra in (["--resume"], ["--overwrite"]):
                    rc, out, err = run("sweep", cfg, *extra, cwd=d)
                    self.assertEqual(rc, 2, out + err)
                    self.assertIn(f"sweep-long.jsonl: in use by another sweep (pid {p.pid})", err)
            finally:
                p.send_signal(signal.SIGTERM)
                p.communicate(timeout=60)
            # Once it has ended, --resume goes on from its records.
            rc, out, err = run("sweep", cfg, "--resume", cwd=d)
            self.assertEqual(rc, 0, out + err)
            idx = [r["sweep"]["index"] for r in jsonl(rec)[1:]]
            self.assertEqual(sorted(idx), list(range(12)))

    def test_resume_refuses_empty_and_duplicated_records(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "c.json", SMALL)
            rc, _, _ = run("sweep", cfg, cwd=d)
            self.assertEqual(rc, 0)
            rec = os.path.join(d, "sweep-c.jsonl")
            with open(rec) as f:
                lines = f.read().splitlines(keepends=True)
            for bad, line, words in [(lines[:3] + ["{}\n"] + lines[3:], 4, "line 4: not a case record"),
                                     (lines + [lines[2]], len(lines) + 1,
                                      f"line {len(lines) + 1}: case 1 is recorded twice (first on line 3)")]:
                with open(rec, "w") as f:
                    f.writelines(bad)
                rc, out, err = run("sweep", cfg, "--resume", cwd=d)
                self.assertEqual(rc, 2, out + err)
                self.assertIn(words, err)
                self.assertEqual(len(jsonl(rec)), len(bad))  # nothing appended

    def test_resume_trusts_only_records_of_this_config_in_a_case_shape(self):
        """A forged or damaged record is refused (exit 2, file, line and key), never resumed."""
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "c.json", SMALL)
            rc, _, _ = run("sweep", cfg, cwd=d)
            self.assertEqual(rc, 0)
            rec = os.path.join(d, "sweep-c.jsonl")
            with open(rec) as f:
                lines = f.read().splitlines(keepends=True)
            header, first, second = json.loads(lines[0]), json.loads(lines[1]), json.loads(lines[2])

            def edited(record, **changes):
                r = json.loads(json.dumps(record))
                for path, value in changes.items():
                    *keys, last = path.split("__")
                    node = r
                    for k in keys:
                        node = node[k]
                    node[last] = value
                return json.dumps(r) + "\n"

            swapped = json.loads(json.dumps(second))
            swapped["sweep"]["index"] = first["sweep"]["index"]
            for bad, words in [
                    # The forged record of the issue: an index and a disposition, nothing else.
                    ([lines[0], '{"sweep": {"index": 0}, "disposition": "passed"}\n'],
                     "sweep-c.jsonl line 2: problem: missing; required (schemas/report.schema.json)"),
                    ([lines[0], edited(first, disposition=7)] + lines[2:],
                     'line 2: disposition: 7; expected one of "passed"'),
                    ([lines[0], edited(first, disposition="great")] + lines[2:],
                     'line 2: disposition: "great"; expected one of'),
                    ([lines[0], edited(first, verification__passed=False)] + lines[2:],
                     "line 2: verification.passed: false; a passed case has a verification that passed"),
                    ([lines[0], edited(first, problem__m=999)] + lines[2:],
                     "line 2: problem.m: 999; case 0 of this config has 64"),
                    ([lines[0], json.dumps(swapped) + "\n"] + lines[2:],
                     "line 2: sweep.params: not the parameters of case 0 of this config"),
                    ([lines[0], edited(first, sweep__index=90)] + lines[2:],
                     "line 2: sweep.index 90: not a case of"),
                    ([edited(header, config_hash=12345)] + lines[1:],
                     "sweep-c.jsonl line 1: config_hash: wrong type; expected a string")]:
                with self.subTest(words):
                    with open(rec, "w") as f:
                        f.writelines(bad)
                    rc, out, err = run("sweep", cfg, "--resume", cwd=d)
                    self.assertEqual(rc, 2, out + err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertIn(words, err)
                    self.assertNotIn("internal error", err)

    def test_merge_checks_indices_and_keys_of_every_shard(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "c.json", SMALL)
            for i in range(2):
                rc, out, err = run("sweep", cfg, "--shard", f"{i}/2", cwd=d)
                self.assertEqual(rc, 0, out + err)
            shards = [os.path.join(d, f"sweep-c.shard-{i}-of-2.json") for i in range(2)]
            reps = [load(p) for p in shards]

            def write(name, rep):
                path = os.path.join(d, name)
                with open(path, "w") as f:
                    json.dump(rep, f)
                return path

            def changed(rep, fn):
                r = json.loads(json.dumps(rep))
                fn(r)
                return r

            def shift(r):  # every index +90: as many cases as before, none of the config
                for c in r["cases"]:
                    c["sweep"]["index"] += 90
            out_path = os.path.join(d, "all.json")
            for name, rep, words in [
                    ("shifted.json", changed(reps[1], shift), "cases[0].sweep.index 91: not a case of shard 1/2 of a config with 9 cases"),
                    ("index.json", changed(reps[1], lambda r: r["sweep"]["shard"].update(index=5)),
                     "sweep.shard 5/2: expected 0 <= index < count"),
                    ("hash.json", changed(reps[1], lambda r: r["sweep"].update(config_hash=12345)),
                     "hash.json: sweep.config_hash: 12345; expected a string (schemas/report.schema.json)"),
                    ("disp.json", changed(reps[1], lambda r: r["cases"][0].update(disposition=7)),
                     'disp.json: cases[0].disposition: 7; expected one of "passed"')]:
                with self.subTest(name):
                    rc, out, err = run("merge", out_path, shards[0], write(name, rep))
                    self.assertEqual(rc, 2, out + err)
                    self.assertEqual(len(err.strip().splitlines()), 1, err)
                    self.assertIn(words, err)
                    self.assertNotIn("internal error", err)
                    self.assertFalse(os.path.exists(out_path))
            # Missing cases are named by index, not judged by a count.
            rc, out, err = run("merge", out_path, shards[0])
            self.assertEqual(rc, 3, out + err)
            self.assertIn("incomplete: 4 cases of the config are in none of the reports: 1, 3, 5, 7", out)
            self.assertEqual(load(out_path)["sweep"]["missing"], [1, 3, 5, 7])
            check_report_schema(self, load(out_path))
            # A merged report is not a shard: merging it again is refused.
            rc, out, err = run("merge", os.path.join(d, "again.json"), out_path, shards[1])
            self.assertEqual(rc, 2, out + err)
            self.assertIn("a merged report (sweep.merged_from)", err)

    def test_shards_merge_to_the_whole(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "c.json", SMALL)
            for i in range(3):
                rc, out, err = run("sweep", cfg, "--shard", f"{i}/3", cwd=d)
                self.assertEqual(rc, 0, out + err)
                rep = load(os.path.join(d, f"sweep-c.shard-{i}-of-3.json"))
                self.assertEqual([c["sweep"]["index"] for c in rep["cases"]], list(range(i, 9, 3)))
            shards = [os.path.join(d, f"sweep-c.shard-{i}-of-3.json") for i in (2, 0, 1)]
            rc, out, err = run("merge", os.path.join(d, "all.json"), *shards)
            self.assertEqual(rc, 0, out + err)
            merged = load(os.path.join(d, "all.json"))
            self.assertEqual([c["sweep"]["index"] for c in merged["cases"]], list(range(9)))
            self.assertTrue(merged["sweep"]["complete"])
            self.assertEqual(len(merged["sweep"]["merged_from"]), 3)
            check_report_schema(self, merged)
            rc, whole_out, _ = run("sweep", cfg, "--list-cases")
            self.assertIn(merged["sweep"]["config_hash"], whole_out)
            # A missing shard: merged, said, and exit 3.
            rc, out, _ = run("merge", os.path.join(d, "part.json"), *shards[:2])
            self.assertEqual(rc, 3)
            self.assertIn("incomplete: 3 cases of the config are in none of the reports: 1, 4, 7", out)
            # Shards of another config: refused.
            other = write_config(d, "o.json", dict(SMALL, defaults={"warmup": 0, "iters": 2}))
            rc, _, _ = run("sweep", other, "--shard", "1/3", cwd=d)
            self.assertEqual(rc, 0)
            rc, _, err = run("merge", os.path.join(d, "bad.json"), shards[1], os.path.join(d, "sweep-o.shard-1-of-3.json"))
            self.assertEqual(rc, 2)
            self.assertIn("differs", err)
            self.assertFalse(os.path.exists(os.path.join(d, "bad.json")))
            # OUT forgotten: shard 0 would be replaced by the merge of the others.
            ordered = sorted(f for f in os.listdir(d) if f.startswith("sweep-c.shard-") and f.endswith(".json"))
            with open(os.path.join(d, ordered[0])) as f:
                before = f.read()
            rc, _, err = run("merge", *ordered, cwd=d)
            self.assertEqual(rc, 2, err)
            self.assertIn("is a shard report (0/3) and would be replaced by the merge", err)
            rc, _, err = run("merge", ordered[1], *ordered, cwd=d)
            self.assertEqual(rc, 2, err)
            self.assertIn(f"OUT {ordered[1]}: is the input SHARD ({ordered[1]})", err)
            with open(os.path.join(d, ordered[0])) as f:
                self.assertEqual(f.read(), before)

    def test_devices(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "c.json", SMALL)
            rc, out, err = run("sweep", cfg, "--devices", "all", cwd=d)
            self.assertEqual(rc, 0, out + err)
            if "host backend" not in out:
                self.skipTest("a GPU is present")
            self.assertIn("no CUDA device", out)
            self.assertIn("one worker on the host backend", out)
            rc, _, err = run("sweep", cfg, "--devices", "0,1", "--overwrite", cwd=d)
            self.assertEqual(rc, 2)
            self.assertIn("--devices 0,1: no CUDA device here", err)


if __name__ == "__main__":
    nvfp4cli.main()
