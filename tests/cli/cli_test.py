#!/usr/bin/env python3
"""The CLI end to end on the host backend: exit codes, one-line errors, the report, and the
.npy export re-checked independently with numpy. Run under /usr/bin/python3 (Debian's numpy)."""
import json
import os
import tempfile
import unittest
import nvfp4cli

try:
    import numpy as np
except ImportError:  # scripts/setup installs it; without it the numpy check skips
    np = None

from nvfp4cli import HOST_ENV, run


E2M1 = [0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6]


def e4m3(bits):
    bits = bits.astype(np.int64) & 0x7F  # scales are unsigned
    e, m = bits >> 3, bits & 7
    return np.where(e == 0, m * 2.0 ** -9, (8 + m) * 2.0 ** (e - 10))


def unpack(q):  # [L, R, K/2] -> [L, R, K], even K index in the low nibble
    out = np.empty(q.shape[:-1] + (q.shape[-1] * 2,), dtype=np.float64)
    table = np.array(E2M1)
    out[..., 0::2] = table[q & 15]
    out[..., 1::2] = table[q >> 4]
    return out


class Cli(unittest.TestCase):
    def test_help_documents_exit_codes(self):
        rc, out, _ = run("--help")
        self.assertEqual(rc, 0)
        self.assertIn("Exit codes", out)
        self.assertIn("--verify-sample", out)

    def test_messages_say_what_they_mean(self):
        """Regression: the no-GPU reason says what is missing and is said once by --list;
        "1 samples" and a +-% from fewer than 3 samples are gone; compare and merge end their
        help with their own exit codes."""
        rc, out, err = run("--list", env=HOST_ENV)
        self.assertEqual(rc, 0, err)
        first = out.splitlines()[0]
        self.assertTrue(first.startswith("device: none ("), first)
        reason = first[len("device: none ("):first.rindex("): only host")]
        self.assertEqual(out.count(reason), 1, out)
        self.assertIn("why: needs a CUDA device", out)
        if not os.path.exists("/dev/nvidiactl") and not os.path.exists("/dev/nvidia0"):
            self.assertNotIn("insufficient", first)
            self.assertTrue(reason.startswith("no NVIDIA "), reason)
        for iters, words in (("1", "(1 sample, "), ("2", "(2 samples, ")):
            rc, out, err = run("--m", "16", "--n", "16", "--k", "64", "--warmup", "0", "--iters", iters,
                               env=HOST_ENV)
            self.assertEqual(rc, 0, out + err)
            kernel = next(line for line in out.splitlines() if line.startswith("kernel "))
            self.assertIn(words, kernel)
            self.assertNotIn("±", kernel)
            self.assertRegex(kernel, r" \d+\.\d\d (ns|us|ms|s) median")
            checked = next(line for line in out.splitlines() if line.startswith("checked "))
            self.assertIn(f"({iters} sample{'s' if iters == '2' else ''} verified, {iters} output", checked)
        for sub, code_words in (("compare", "1 a regression"), ("merge", "3 a case with an error")):
            rc, out, _ = run(sub, "--help")
            self.assertEqual(rc, 0)
            self.assertIn(code_words, out)
            self.assertNotIn("1 verification failed (compare: regression)", out)

    def test_host_default_sampling_is_comparable(self):
        """Regression: the host backend took 3 samples by default, which compare can only call
        'not comparable' (exit 4); now compare's 30, or a second of sampling (docs/cli.md)."""
        with tempfile.TemporaryDirectory() as d:
            reps = [os.path.join(d, f"r{i}.json") for i in range(2)]
            for rep in reps:
                rc, out, err = run("--m", "16", "--n", "16", "--k", "64", "--json", rep, env=HOST_ENV)
                self.assertEqual(rc, 0, out + err)
            with open(reps[0]) as f:
                r = json.load(f)
            kt = r["cases"][0]["kernel_timing"]
            self.assertEqual(kt["stats"]["count"], 30)
            self.assertEqual(kt["stop_reason"], "fixed sample count")
            self.assertEqual(r["measurement"]["warmup"], 1)
            self.assertEqual(r["measurement"]["max_time_s"], 1.0)
            rc, out, err = run("compare", *reps)
            self.assertIn(rc, (0, 1), out + err)  # a verdict on speed either way, never 4
            self.assertNotIn("not comparable", out)
            # Asked for, the old count and time cap stay what was asked.
            rc, out, err = run("--m", "16", "--n", "16", "--k", "64", "--iters", "3", "--max-time", "5",
                               "--json", reps[1], env=HOST_ENV)
            self.assertEqual(rc, 0, out + err)
            with open(reps[1]) as f:
                r = json.load(f)
            self.assertEqual(r["cases"][0]["kernel_timing"]["stats"]["count"], 3)
            self.assertEqual(r["measurement"]["max_time_s"], 5.0)
            self.assertEqual(run("compare", reps[0], reps[1])[0], 4)

    def test_bad_input_is_one_line_with_exit_2(self):
        cases = [
            (["--m", "0"], "--m 0"),
            (["--n", "-5"], "--n -5"),
            (["--m", "abc"], "--m"),
            (["--k", "24"], "--k 24: must be a multiple of 16"),
            (["--l", "0"], "--l 0"),
            (["--kernel", "nope"], "--kernel 'nope': unknown kernel"),
            (["--reference", "nope"], "--reference 'nope': unknown reference"),
            (["--dist", "cauchy"], "--dist 'cauchy'"),
            (["--iters", "-1"], "--iters -1"),
            (["--mode", "warm"], "--mode 'warm'"),
            (["--rotate", "--mode", "hot"], "conflicting timing modes"),
            (["--format", "xml", "--output", "x"], "--format 'xml'"),
            (["--format", "csv"], "needs --output"),
            (["--noise-target", "0"], "--noise-target 0"),
            (["--min-clock", "1.5"], "--min-clock 1.5"),
            (["--output", "/nonexistent-dir/r.csv", "--format", "csv"], "/nonexistent-dir/r.csv"),
            (["--rtol", "-1"], "--rtol -1"),
            (["--m", "1099511627776", "--n", "1099511627776", "--k", "1048576"], "overflows 64 bits"),
            (["--json", "/nonexistent-dir/r.json"], "/nonexistent-dir/r.json"),
            (["--bogus"], "--bogus"),
        ]
        for args, needle in cases:
            with self.subTest(args=args):
                # The small shape, less what the case gives itself (an option twice is refused).
                base = ["--m", "16", "--n", "16", "--k", "64"]
                base = [x for i in range(0, 6, 2) if base[i] not in args for x in base[i:i + 2]]
                rc, _, err = run(*base, *args)
                self.assertEqual(rc, 2, err)
                self.assertIn(needle, err)
                self.assertEqual(len(err.strip().splitlines()), 1, err)
                self.assertNotIn("terminate called", err)

    def test_list_shows_availability(self):
        rc, out, _ = run("--list")
        self.assertEqual(rc, 0)
        self.assertIn("naive", out)
        self.assertIn("cpu-exact", out)
        self.assertIn("host", out)

    def test_host_run_report_and_tensors(self):
        with tempfile.TemporaryDirectory() as d:
            rep, tdir = os.path.join(d, "r.json"), os.path.join(d, "t")
            rc, out, err = run("--m", "40", "--n", "24", "--k", "96", "--l", "2", "--seed", "5",
                               "--dist", "normal", "--json", rep, "--save-tensors", tdir)
            self.assertEqual(rc, 0, out + err)
            first = out.splitlines()[0]
            if "host backend" not in first:
                self.skipTest("a GPU is present: the host-backend run is tested on GPU-less machines")
            with open(rep) as f:
                r = json.load(f)
            self.assertEqual(r["schema_version"], 2)
            self.assertEqual(r["backend"], "host")
            self.assertIn("git_revision", r["tool"])
            c = r["cases"][0]
            self.assertEqual(c["disposition"], "passed")
            self.assertEqual(c["problem"], c["problem"] | {"m": 40, "n": 24, "k": 96, "l": 2, "seed": 5,
                                                           "dist": "normal"})
            self.assertEqual(c["verification"]["checked"], 2 * 40 * 24)
            self.assertEqual(c["kernel"]["name"], "host")
            self.assertGreater(c["kernel_timing"]["stats"]["median_us"], 0)
            # The files the outputs are kept apart from (saved_tensor_files(), src/case/run_case.hpp).
            self.assertEqual(sorted(os.listdir(tdir)),
                             sorted(["a.npy", "b.npy", "sfa.npy", "sfb.npy", "sfa_blocked.npy",
                                     "sfb_blocked.npy", "c.npy", "ref.npy", "problem.json"]))
            for name in sorted(os.listdir(tdir)):
                rc, _, err = run("--m", "40", "--n", "24", "--k", "96", "--save-tensors", tdir,
                                 "--json", os.path.join(tdir, name))
                self.assertEqual(rc, 2, err)
                self.assertIn(f"--save-tensors {tdir}/{name}: the same file as --json", err)

            if np is None:
                self.skipTest("numpy is not installed: the .npy check needs it")
            a, b = np.load(f"{tdir}/a.npy"), np.load(f"{tdir}/b.npy")
            sfa, sfb = np.load(f"{tdir}/sfa.npy"), np.load(f"{tdir}/sfb.npy")
            ref, got = np.load(f"{tdir}/ref.npy"), np.load(f"{tdir}/c.npy")
            self.assertEqual((a.dtype, a.shape), (np.uint8, (2, 40, 48)))
            self.assertEqual((sfb.dtype, sfb.shape), (np.uint8, (2, 24, 6)))
            self.assertEqual((ref.dtype, ref.shape), (np.float16, (2, 40, 24)))
            self.assertEqual(np.load(f"{tdir}/sfa_blocked.npy").shape, (2, 128 * 8))
            # Independent semantics: dequantize with numpy, matmul in float64, round once.
            A = unpack(a) * np.repeat(e4m3(sfa), 16, axis=2)
            B = unpack(b) * np.repeat(e4m3(sfb), 16, axis=2)
            C = np.einsum("lik,ljk->lij", A, B).astype(np.float16)
            np.testing.assert_array_equal(C, ref)
            np.testing.assert_allclose(got.astype(np.float64), C.astype(np.float64), rtol=1e-3, atol=1e-3)
            with open(f"{tdir}/problem.json") as f:
                self.assertEqual(json.load(f)["k"], 96)


if __name__ == "__main__":
    nvfp4cli.main()
