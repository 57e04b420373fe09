#!/usr/bin/env python3
"""Every row of the "Rejected inputs" table in docs/errors.md, run: the exit code, one line on stderr
with the row's words, never a stack trace, a sanitizer report or a hang. The table is the
source: a row that cannot be run, or a run that disagrees with its row, fails here."""
import json
import os
import re
import shlex
import subprocess
import tempfile
import unittest

from nvfp4cli import BIN, PLUGIN_DIR, SRC
import nvfp4cli

ERRORS_DOC = os.path.join(SRC, "docs", "errors.md")
BASE = ["--m", "16", "--n", "16", "--k", "64"]
# Signs of a crash rather than a refusal.
CRASH_WORDS = ["terminate called", "Traceback", "Sanitizer", "runtime error:", "Segmentation", "Aborted"]


def table_rows():
    """(input cell, exit code, says cell) for each row between the rejects markers."""
    with open(ERRORS_DOC) as f:
        text = f.read()
    m = re.search(r"<!-- rejects:begin -->(.*?)<!-- rejects:end -->", text, re.S)
    if not m:
        raise AssertionError("docs/errors.md has no <!-- rejects:begin/end --> table")
    rows = []
    for line in m.group(1).strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("input", "---") or set(cells[0]) <= set("-"):
            continue
        rows.append((cells[0], int(cells[1]), cells[2]))
    return rows


def code_span(cell):
    m = re.search(r"`([^`]*)`", cell)
    return m.group(1) if m else None


class RejectTable(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        with open(os.path.join(d, "notes.txt"), "w") as f:
            f.write("not a library\n")
        # The sweep configs the table names (docs/sweeps.md, "Sweep configs").
        shape = {"m": 16, "n": 16, "k": 64}
        for name, cfg in [("wrong-type.json", {"cases": [{"shape": dict(shape, m="x")}]}),
                          ("unknown-key.json", {"cases": [{"shape": dict(shape, mm=16)}]}),
                          ("no-cases.json", {"cases": []}),
                          ("one-case.json", {"cases": [{"shape": shape}]}),
                          ("all-auto.json", {"cases": [{"shape": shape, "kernel_config": "all"}]}),
                          ("negative-warmup-time.json", {"defaults": {"warmup_time": -1},
                                                         "cases": [{"shape": shape}]}),
                          ("all-no-choice.json", {"cases": [{"shape": shape, "kernels": ["naive"],
                                                             "kernel_config": "all"}]}),
                          ("flush-rotate.json", {"defaults": {"flush": False},
                                                 "cases": [{"shape": shape}, {"shape": shape, "mode": "rotate"}]}),
                          ("unknown-kernel.json", {"cases": [{"shape": shape, "kernels": ["auto", "nope"]}]}),
                          ("unknown-reference.json", {"cases": [{"shape": shape, "references": ["nope"]}]})]:
            with open(os.path.join(d, name), "w") as f:
                json.dump(cfg, f)
        with open(os.path.join(d, "huge-number.json"), "w") as f:  # found by fuzz_sweep_config
            f.write('{"cases": [{"shape": {"m": 1e999, "n": 16, "k": 64}}]}')
        with open(os.path.join(d, "newline-key.json"), "w") as f:  # found by fuzz_sweep_config
            f.write('{"cases": [{"sha\\npe": {"m": 16, "n": 16, "k": 64}}]}')
        with open(os.path.join(d, "deep.json"), "w") as f:  # crashed the tool
            f.write('{"cases": ' + "[" * 70000 + "]" * 70000 + "}")
        with open(os.path.join(d, "dup-key.json"), "w") as f:
            f.write('{"cases": [{"shape": {"m": 16, "m": 32, "n": 16, "k": 64}}]}')
        with open(os.path.join(d, "read-only.json"), "w") as f:
            f.write("{}\n")
        os.chmod(os.path.join(d, "read-only.json"), 0o444)
        for i in range(2):  # two shard reports (only what merge's OUT check reads)
            with open(os.path.join(d, f"shard-{i}.json"), "w") as f:
                json.dump({"schema_version": 2, "sweep": {"config_hash": "x", "shard": {"index": i, "count": 2}},
                           "cases": []}, f)
        with open(os.path.join(d, "sub.py"), "w") as f:  # a submission the outputs must not replace
            f.write("def custom_kernel(data):\n    return data[-1]\n")
        os.symlink(BIN, os.path.join(d, "nvfp4bench"))
        with open(os.path.join(d, "blocked.logs"), "w") as f:  # where a sweep's logs folder goes
            f.write("not a folder\n")  # the running executable, by a link
        for name in os.listdir(PLUGIN_DIR):
            if name.endswith(".so"):
                os.symlink(os.path.join(PLUGIN_DIR, name), os.path.join(d, name))
        cls.make_damaged_reports(d, shape)

    @classmethod
    def make_damaged_reports(cls, d, shape):
        """What compare, convert, merge and sweep --resume read, made by the tool (a single run's
        report with its samples, two shard reports and their merge, a sweep's JSONL), and copies
        of them each damaged in one way the table's rows name."""
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")

        def tool(*args):
            p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=300, cwd=d, env=env)
            if p.returncode != 0:
                raise AssertionError(f"{args}: exit {p.returncode}: {p.stderr}")

        def load(name):
            with open(os.path.join(d, name)) as f:
                return json.load(f)

        def save(name, obj):
            with open(os.path.join(d, name), "w") as f:
                json.dump(obj, f)

        tool(*BASE, "--iters", "30", "--warmup", "0", "--samples", "--json", "good.json")
        with open(os.path.join(d, "two-cases.json"), "w") as f:
            json.dump({"cases": [{"shape": shape}, {"shape": dict(shape, m=32)}]}, f)
        for i in range(2):
            tool("sweep", "two-cases.json", "--shard", f"{i}/2", "--json", f"sh-{i}.json")
        tool("merge", "merged.json", "sh-0.json", "sh-1.json")
        tool("sweep", "one-case.json", "--json", "done.json")
        good = load("good.json")

        def report(name, damage, samples=True):
            r = json.loads(json.dumps(good))
            kt = r["cases"][0]["kernel_timing"]
            if not samples:
                kt.pop("samples_us")
                kt.pop("clock_mhz", None)
            damage(r, kt, kt["stats"])
            save(name, r)

        report("negative-count.json", lambda r, kt, st: st.update(count=-7))
        report("extra-key.json", lambda r, kt, st: r["cases"][0].update(colour="red"))
        report("version-3.json", lambda r, kt, st: r.update(schema_version=3))
        report("bad-disposition.json", lambda r, kt, st: r["cases"][0].update(disposition="great"))
        report("doctored-noise.json", lambda r, kt, st: st.update(rse_median=1e9), samples=False)
        report("inflated-count.json", lambda r, kt, st: st.update(count=1000000), samples=False)
        report("wrong-iqr.json", lambda r, kt, st: st.update(iqr_us=2 * st["iqr_us"]), samples=False)
        report("median-outside.json", lambda r, kt, st: st.update(q1_us=2 * st["median_us"],
                                                                    q3_us=2 * st["median_us"] + st["iqr_us"]),
               samples=False)
        report("short-samples.json", lambda r, kt, st: kt["samples_us"].pop())
        report("doubled-samples.json", lambda r, kt, st: kt.update(samples_us=[2 * x for x in kt["samples_us"]]))
        report("zero-median.json", lambda r, kt, st: st.update({k: 0.0 for k in (
            "median_us", "q1_us", "q3_us", "iqr_us", "rse_median", "min_us", "mean_us", "median_ci_lo_us")}),
               samples=False)
        report("passed-with-mismatches.json", lambda r, kt, st: r["cases"][0]["verification"].update(mismatches=3))
        save("array.json", [])

        def shard(name, source, damage):
            r = load(source)
            damage(r)
            save(name, r)

        shard("sh-negative-count.json", "sh-0.json",
              lambda r: r["cases"][0]["kernel_timing"]["stats"].update(count=-7))
        shard("sh-moved.json", "sh-0.json", lambda r: r["cases"][0]["problem"].update(m=48))
        shard("sh-other-config.json", "sh-1.json", lambda r: r["sweep"].update(config_hash="fnv1a64:0000000000000000"))
        shard("sh-wrong-index.json", "sh-0.json", lambda r: r["cases"][0]["sweep"].update(index=1))
        shard("sh-of-3.json", "sh-1.json", lambda r: r["sweep"].update(shard={"index": 1, "count": 3}))
        shard("sh-config-size.json", "sh-1.json", lambda r: r["sweep"].update(cases_in_config=3))
        shard("sh-index-2-of-2.json", "sh-1.json", lambda r: r["sweep"].update(shard={"index": 2, "count": 2}))

        with open(os.path.join(d, "done.jsonl")) as f:
            header, record = (json.loads(line) for line in f.read().splitlines())

        def records(name, recs, head=header):
            with open(os.path.join(d, name), "w") as f:
                for rec in ([head] if head else []) + recs:
                    f.write(json.dumps(rec) + "\n")

        def damaged(change):
            rec = json.loads(json.dumps(record))
            change(rec)
            return rec

        records("r-negative-count.jsonl", [damaged(lambda r: r["kernel_timing"]["stats"].update(count=-7))])
        records("r-twice.jsonl", [record, record])
        records("r-no-header.jsonl", [record], head=None)
        records("r-shard.jsonl", [record], head=dict(header, shard={"index": 1, "count": 2}))
        records("r-other-config.jsonl", [record], head=dict(header, config_hash="fnv1a64:0000000000000000"))
        records("r-index.jsonl", [damaged(lambda r: r["sweep"].update(index=5))])
        records("r-problem.jsonl", [damaged(lambda r: r["problem"].update(m=48))])
        records("r-params.jsonl", [damaged(lambda r: (r["sweep"]["params"].update(m=48), r["problem"].update(m=48)))])
        records("r-not-a-record.jsonl", [damaged(lambda r: r.pop("sweep"))])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def run_cli(self, args):
        # The host backend on every machine: the rows are about the input, not the GPU. The
        # shape goes before the row's own arguments, except for a subcommand's row (single-run
        # options before a subcommand are refused) and for the shape options the row gives
        # itself (an option given twice is refused).
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
        base = [] if {"sweep", "merge", "compare", "convert"} & set(args) else BASE
        base = [x for i in range(0, len(base), 2) if base[i] not in args for x in base[i:i + 2]]
        return subprocess.run([BIN, *base, *args], capture_output=True, text=True, timeout=120,
                              cwd=self.tmp.name, env=env)

    def test_table_is_there(self):
        rows = table_rows()
        self.assertGreaterEqual(len(rows), 55)
        self.assertTrue(all(e in (1, 2, 3) for _, e, _ in rows))

    def test_every_row(self):
        for cell, code, says in table_rows():
            with self.subTest(input=cell):
                args = code_span(cell)
                words = code_span(says)
                self.assertIsNotNone(args, f"row without a command: {cell}")
                self.assertIsNotNone(words, f"row without the words: {says}")
                p = self.run_cli(shlex.split(args))
                err = p.stderr
                self.assertEqual(p.returncode, code, f"{args}: stderr: {err}\nstdout: {p.stdout}")
                lines = err.strip().splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertTrue(lines[0].startswith("nvfp4bench: "), err)
                for w in CRASH_WORDS:
                    self.assertNotIn(w, err + p.stdout)
                pos = 0
                for frag in (w.strip() for w in words.split("…")):
                    at = lines[0].find(frag, pos)
                    self.assertGreaterEqual(at, 0, f"'{frag}' missing (in order) from: {lines[0]}")
                    pos = at + len(frag)


if __name__ == "__main__":
    nvfp4cli.main()
