#!/usr/bin/env python3
"""Messages that name the real problem, on the host backend: paths the system cannot take, paths
the user never typed, folders left by killed sweeps, reports behind symbolic links, long plugin
messages, help texts that cite files of the tree. (One-line refusals are rows of the rejects
table in docs/errors.md, run by cli_reject_test.py; these need more than one command.)"""
import json
import os
import re
import resource
import signal
import subprocess
import tempfile
import unittest

from nvfp4cli import BIN, HOST_ENV, PLUGIN_DIR, SRC, built_without_python, run
import nvfp4cli

SHAPE = ["--m", "16", "--n", "16", "--k", "64"]
ONE_CASE = {"defaults": {"warmup": 0, "iters": 1}, "cases": [{"shape": {"m": 16, "n": 16, "k": 64}}]}


def write_config(d, name="one.json", cfg=ONE_CASE):
    path = os.path.join(d, name)
    with open(path, "w") as f:
        json.dump(cfg, f)
    return path


class SweepPaths(unittest.TestCase):
    def test_a_path_over_path_max_is_exit_2_naming_it(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d)
            deep = "a/" * 2100 + "r.json"  # over PATH_MAX (4096) once absolute
            for flag in ("--json", "--jsonl"):
                with self.subTest(flag=flag):
                    rc, out, err = run("sweep", cfg, flag, deep, cwd=d, env=HOST_ENV)
                    self.assertEqual(rc, 2, err)
                    self.assertNotIn("internal error", err)
                    self.assertRegex(err, rf"^nvfp4bench: {flag} a/a/.*: path is \d+ bytes; the system allows \d+\n$")
            for args, words in [(["sweep", deep], ": cannot be read (File name too long)"),
                                (["--kernel-lib", deep], ": cannot be read (File name too long)")]:
                with self.subTest(args=args[0]):
                    rc, out, err = run(*args, cwd=d, env=HOST_ENV)
                    self.assertEqual(rc, 2, err)
                    self.assertTrue(err.rstrip().endswith(words), err[-200:])

    def test_a_derived_path_is_named_as_what_it_is(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d)
            report = "n" * 250 + ".json"  # fits NAME_MAX; its .jsonl (256 bytes) does not
            rc, _, err = run("sweep", cfg, "--json", report, cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 2, err)
            self.assertIn("the record file (the report's path with .jsonl; choose another with "
                          f"--jsonl) {report[:-5]}.jsonl: file name is 256 bytes", err)
            self.assertNotIn("--jsonl n", err)

    def test_a_killed_sweeps_temporary_folder_is_removed_at_the_next_start(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d)
            tmp = os.path.join(d, "tmp")
            os.mkdir(tmp)
            p = subprocess.Popen(["true"])
            p.wait()  # a pid that has ended: its sweep was killed
            dead = os.path.join(tmp, f"nvfp4bench-sweep-{p.pid}-abcdef")
            alive = os.path.join(tmp, f"nvfp4bench-sweep-{os.getpid()}-abcdef")
            other = os.path.join(tmp, "nvfp4bench-sweep-notapid")
            for f in (dead, alive, other):
                os.mkdir(f)
            with open(os.path.join(dead, "case-0.json"), "w") as f:
                f.write("{}")
            env = dict(HOST_ENV, TMPDIR=tmp)
            rc, out, err = run("sweep", cfg, "--json", os.path.join(d, "r.json"), cwd=d, env=env)
            self.assertEqual(rc, 0, out + err)
            left = sorted(os.listdir(tmp))
            self.assertEqual(left, sorted(os.path.basename(x) for x in (alive, other)))


    def test_a_full_disk_names_the_records_and_the_report(self):
        # A full disk, played by a file size limit (writes past it fail with EFBIG): one where the
        # records fit and the report does not, one where neither does after the header.
        with tempfile.TemporaryDirectory() as d:
            cfg = write_config(d, "two.json", dict(ONE_CASE, cases=[dict(ONE_CASE["cases"][0], seeds=[1, 2])]))
            args = ["sweep", cfg, "--no-isolate", "--json", "r.json"]
            rc, out, err = run(*args, cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 0, out + err)
            jsonl_size = os.path.getsize(os.path.join(d, "r.jsonl"))
            report_size = os.path.getsize(os.path.join(d, "r.json"))
            with open(os.path.join(d, "r.jsonl")) as f:
                header_size = len(f.readline())
            self.assertLess(jsonl_size, report_size)

            def limited(limit):
                def pre():
                    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
                    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
                for f in ("r.json", "r.jsonl"):
                    if os.path.exists(os.path.join(d, f)):
                        os.remove(os.path.join(d, f))
                return subprocess.run([BIN, *args], capture_output=True, text=True, cwd=d, env=HOST_ENV,
                                      preexec_fn=pre, timeout=120)

            p = limited((jsonl_size + report_size) // 2)  # the report is indented: far larger
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertIn("nvfp4bench: writing r.json: File too large; the 2 finished cases are recorded "
                          "in r.jsonl: make room and run the sweep again with --resume", p.stderr)
            p = limited(header_size + 1)
            self.assertEqual(p.returncode, 3, p.stderr)
            self.assertIn("nvfp4bench: r.jsonl: write failed (File too large) (after 0 of 2 cases); the "
                          "report could not be written either: writing r.json: File too large", p.stderr)


class Symlinks(unittest.TestCase):
    def test_a_report_behind_a_link_is_written_to_the_links_target(self):
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "store"))
            target = os.path.join(d, "store", "latest.json")
            with open(target, "w") as f:
                f.write("old\n")
            os.symlink("store/latest.json", os.path.join(d, "r.json"))  # relative, as ln -s makes
            os.symlink(os.path.join(d, "store", "new.json"), os.path.join(d, "dangling.json"))
            cfg = write_config(d)
            for args, link, dest in [
                    (SHAPE + ["--iters", "1", "--json", "r.json"], "r.json", target),
                    (SHAPE + ["--iters", "1", "--json", "dangling.json"], "dangling.json",
                     os.path.join(d, "store", "new.json")),
                    (["sweep", cfg, "--json", "r.json", "--jsonl", "s.jsonl"], "r.json", target)]:
                with self.subTest(args=args):
                    rc, out, err = run(*args, cwd=d, env=HOST_ENV)
                    self.assertEqual(rc, 0, out + err)
                    self.assertTrue(os.path.islink(os.path.join(d, link)))
                    with open(dest) as f:
                        self.assertEqual(json.load(f)["schema_version"], 2)
            self.assertEqual(sorted(os.listdir(os.path.join(d, "store"))), ["latest.json", "new.json"])

    def test_a_link_to_a_read_only_file_or_a_loop_is_refused_naming_the_target(self):
        with tempfile.TemporaryDirectory() as d:
            ro = os.path.join(d, "ro.json")
            with open(ro, "w") as f:
                f.write("{}\n")
            os.chmod(ro, 0o444)
            os.symlink(ro, os.path.join(d, "r.json"))
            os.symlink("loop.json", os.path.join(d, "loop.json"))
            rc, _, err = run(*SHAPE, "--json", "r.json", cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 2, err)
            self.assertIn(f"--json r.json (the link's target {ro}): exists and is not writable; not "
                          "replaced", err)
            rc, _, err = run(*SHAPE, "--json", "loop.json", cwd=d, env=HOST_ENV)
            self.assertEqual(rc, 2, err)
            self.assertIn("--json loop.json: a symbolic link that leads nowhere", err)


class Listing(unittest.TestCase):
    def test_list_keeps_its_columns_for_long_names(self):
        lib = os.path.join(PLUGIN_DIR, "libnvfp4_broken_host.so")  # names up to 21 characters
        rc, out, err = run("--kernel-lib", lib, "--list", env=HOST_ENV)
        self.assertEqual(rc, 0, err)
        rows = [l for l in out.splitlines() if re.match(r"^  \S+ +(available|unavailable) ", l)]
        self.assertIn("broken-unwritten-host", out)
        starts = {re.search(r" (available|unavailable) ", l).start() for l in rows}
        self.assertEqual(len(starts), 1, "\n".join(rows))
        whys = [l for l in out.splitlines() if l.strip().startswith("why:")]
        self.assertTrue(all(l.index("why:") == whys[0].index("why:") for l in whys), whys)


# A file of the tree as help and config texts cite one: a path from the repository root.
CITED = re.compile(r"\b((?:docs|include|configs|scripts|examples|schemas|src)/[\w./-]*\w)")


class HelpTexts(unittest.TestCase):
    def test_every_file_the_help_and_the_configs_cite_exists(self):
        texts = {}
        for args in ([], ["sweep"], ["compare"], ["merge"]):
            rc, out, err = run(*args, "--help", env=HOST_ENV)
            self.assertEqual(rc, 0, err)
            texts[" ".join(args + ["--help"])] = out
        for name in sorted(os.listdir(os.path.join(SRC, "configs"))):
            with open(os.path.join(SRC, "configs", name)) as f:
                texts["configs/" + name] = f.read()
        cited = 0
        for where, text in texts.items():
            old_style = "READ" + "ME, "  # the old "README, Section" pointers (split: not a pointer itself)
            self.assertNotIn(old_style, text, f"{where} cites a README section (they moved to docs/)")
            for path in CITED.findall(text):
                with self.subTest(where=where, path=path):
                    cited += 1
                    self.assertTrue(os.path.exists(os.path.join(SRC, path)), f"{where} cites {path}")
        self.assertIn("include/nvfp4bench/plugin.h", texts["--help"])
        self.assertGreaterEqual(cited, 4)

    def test_sweep_writes_the_default_report_its_help_names(self):
        rc, out, _ = run("sweep", "--help", env=HOST_ENV)
        self.assertIn("default: sweep-STEM.json in the current folder, STEM the config's file name "
                      "without .json; sweep-STEM.shard-I-of-N.json for a shard", " ".join(out.split()))
        with tempfile.TemporaryDirectory() as d:
            os.mkdir(os.path.join(d, "cfgs"))
            two = dict(ONE_CASE, cases=[dict(ONE_CASE["cases"][0], seeds=[1, 2])])
            cfg = write_config(os.path.join(d, "cfgs"), "tiny.cfg.json", two)
            for extra, report in (([], "sweep-tiny.cfg.json"), (["--shard", "1/2"], "sweep-tiny.cfg.shard-1-of-2.json")):
                with self.subTest(extra=extra):
                    rc, out, err = run("sweep", cfg, *extra, cwd=d, env=HOST_ENV)
                    self.assertEqual(rc, 0, out + err)
                    self.assertTrue(os.path.exists(os.path.join(d, report)), os.listdir(d))


class Scripts(unittest.TestCase):
    def test_slurm_sweep_without_arguments_prints_its_usage_and_exits_2(self):
        script = os.path.join(SRC, "scripts", "slurm-sweep.sh")
        for args in ([], ["a.json", "out", "extra"]):
            with self.subTest(args=args):
                p = subprocess.run(["bash", script, *args], capture_output=True, text=True, timeout=60)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertEqual(p.stderr, "usage: sbatch --array=0-N scripts/slurm-sweep.sh CONFIG "
                                           "[OUTDIR] (docs/slurm.md)\n")


class PythonKernels(unittest.TestCase):
    """What the embedded interpreter says of a submission's mistakes (docs/python.md, Failures)."""

    @classmethod
    def setUpClass(cls):
        why = built_without_python()
        if why:
            raise unittest.SkipTest(why)

    def run_py(self, d, name, text):
        path = os.path.join(d, name + ".py")
        with open(path, "w") as f:
            f.write(text)
        return run("--kernel-py", path, "--kernel", "py:" + name, *SHAPE, "--iters", "1", cwd=d,
                   env=HOST_ENV)

    def test_each_mistake_is_named_in_the_submissions_terms(self):
        with tempfile.TemporaryDirectory() as d:
            for name, text, code, words in [
                    ("sig", "def custom_kernel(a, b):\n    return a\n", 3,
                     "custom_kernel raised TypeError: custom_kernel() missing 1 required positional "
                     "argument: 'b' (at {d}/sig.py:1, the function's definition: the call itself "
                     "failed; it is called as custom_kernel(data), data the input tuple)"),
                    ("text", "def custom_kernel(data):\n    return 'abc'\n", 3,
                     "custom_kernel returned a str, not an array; expected c as float16"),
                    ("gen", "def custom_kernel(data):\n    yield data[-1]\n", 3,
                     "custom_kernel returned a generator, not an array;"),
                    ("obj", "class K:\n    pass\ndef custom_kernel(data):\n    return K()\n", 3,
                     "custom_kernel returned a K, not an array;"),
                    ("num", "custom_kernel = 3\n", 2,
                     "--kernel-py {d}/num.py (function custom_kernel): the file defines "
                     "'custom_kernel' as an int (3), not a function")]:
                with self.subTest(name=name):
                    rc, out, err = self.run_py(d, name, text)
                    self.assertEqual(rc, code, out + err)
                    self.assertIn(words.format(d=d), err)
                    self.assertNotIn("<string>", err)
                    self.assertNotIn("shape ()", err)


if __name__ == "__main__":
    nvfp4cli.main()
