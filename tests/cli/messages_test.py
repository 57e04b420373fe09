#!/usr/bin/env python3
"""Messages that name the real problem, on the host backend: paths the system cannot take, paths
the user never typed, folders left by killed sweeps, reports behind symbolic links, long plugin
messages, help texts that cite files of the tree. (One-line refusals are rows of the rejects
table in docs/errors.md, run by cli_reject_test.py; these need more than one command.)"""
import json
import os
import re
import subprocess
import tempfile
import unittest

from nvfp4cli import HOST_ENV, PLUGIN_DIR, SRC, built_without_python, run

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
    unittest.main()
