#!/usr/bin/env python3
"""How often `nvfp4bench compare` gets a gate right: 100 trials of a planted 1.5x slowdown (must be
flagged SLOWER in at least 99) and 100 of a re-run with no change (must not be flagged in at least
95), for reports that keep their samples (the U test) and reports that do not (the medians'
standard errors, from the spread below each median).

Trials are generated, not timed: a real host-backend report from the tool is the template, and each
trial's samples are drawn with a fixed seed from a model of host-backend timings on a busy 2-core
machine (CI's), fitted by eye to 200 samples of a 64x64x256 run beside two busy loops: a lognormal
body (3 %), a 15 % chance per sample of a spike of 2x to 100x, log-uniform (the scheduler gave the
core away for part of a time slice), and a 1 % lognormal drift of the whole run (the machine's
load when it ran). Each
trial is one case of a 100-case report, so the whole measurement is 4 compare calls.

--pool REPORT draws the trials from the samples_us a real report kept (bootstrap) instead of the
model (e.g. `nvfp4bench --m 64 --n 64 --k 256 --iters 200 --samples --json pool.json` on the
machine the gate runs on).

Usage: gate_trials.py [--tool build/nvfp4bench] [--samples 30] [--seed 1] [--pool REPORT] [--check]
Prints the four figures; --check exits 1 when any of them misses its bar."""
import argparse
import copy
import json
import math
import os
import random
import re
import subprocess
import sys
import tempfile

TRIALS = 100
SLOWDOWN = 1.5
EXTRA = os.environ.get("GATE_EXTRA", "").split()


def quantile(v, q):
    pos = q * (len(v) - 1)
    lo = int(math.floor(pos))
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (pos - lo) * (v[hi] - v[lo])


def stats(samples):
    """The stats block the tool writes (src/measure/stats.cpp), from samples."""
    v = sorted(samples)
    n = len(v)
    mean = sum(v) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in v) / (n - 1)) if n > 1 else 0.0
    med, q1, q3 = quantile(v, 0.5), quantile(v, 0.25), quantile(v, 0.75)
    half = 1.959963984540054 * math.sqrt(n) / 2
    lo = min(max(math.floor(n / 2 - half), 1), n)
    hi = min(max(math.ceil(n / 2 + half) + 1, 1), n)
    rse_med = 1.2533141373155003 * (q3 - q1) / 1.3489795003921634 / math.sqrt(n) / med if n > 1 else 0.0
    return {"count": n, "median_us": med, "mean_us": mean, "min_us": v[0], "max_us": v[-1],
            "stdev_us": sd, "q1_us": q1, "q3_us": q3, "iqr_us": q3 - q1,
            "median_ci_lo_us": v[lo - 1], "median_ci_hi_us": v[hi - 1],
            "rse_median": rse_med, "rse_mean": sd / math.sqrt(n) / mean if n > 1 else 0.0}


def model_run(rng, n, true_us):
    """One run's samples on a busy machine (see the module's docstring)."""
    drift = math.exp(rng.gauss(0, 0.01))
    out = []
    for _ in range(n):
        t = true_us * drift * math.exp(rng.gauss(0, 0.03))
        if rng.random() < 0.15:
            t *= math.exp(rng.uniform(math.log(2), math.log(100)))
        out.append(t)
    return out


def make_report(template, runs, keep_samples):
    """The template report with one case per run (m = 1, 2, ...), its stats those of the run."""
    rep = copy.deepcopy(template)
    case0 = template["cases"][0]
    rep["cases"] = []
    for i, samples in enumerate(runs):
        c = copy.deepcopy(case0)
        c["problem"]["m"] = i + 1
        kt = c["kernel_timing"]
        kt["stats"] = stats(samples)
        kt["attempts"] = len(samples)
        if keep_samples:
            kt["samples_us"] = samples
            kt["clock_mhz"] = []
        else:
            kt.pop("samples_us", None)
            kt.pop("clock_mhz", None)
        rep["cases"].append(c)
    return rep


def verdicts(tool, base, new, tmp, name):
    """compare's verdict column, one per case, in order."""
    paths = []
    for tag, rep in (("base", base), ("new", new)):
        p = os.path.join(tmp, f"{name}-{tag}.json")
        with open(p, "w") as f:
            json.dump(rep, f)
        paths.append(p)
    r = subprocess.run([tool, "compare", *paths, *EXTRA], capture_output=True, text=True)
    if r.returncode not in (0, 1):
        sys.exit(f"gate_trials: compare exited {r.returncode}: {r.stderr.strip() or r.stdout[-500:]}")
    rows = [line for line in r.stdout.splitlines() if re.match(r"^\| \d+x", line)]
    return [row.rstrip(" |").split(" | ")[-1] for row in rows]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", default=os.environ.get("NVFP4BENCH", "build/nvfp4bench"))
    ap.add_argument("--samples", type=int, default=30, help="samples per run (compare's --min-samples)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pool", help="draw samples from this report's samples_us instead of the model")
    ap.add_argument("--check", action="store_true", help="exit 1 when a figure misses its bar")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    with tempfile.TemporaryDirectory() as tmp:
        tpath = os.path.join(tmp, "template.json")
        r = subprocess.run([a.tool, "--m", "16", "--n", "16", "--k", "64", "--iters", "2", "--samples",
                            "--json", tpath], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"gate_trials: the template run exited {r.returncode}: {r.stderr.strip()}")
        with open(tpath) as f:
            template = json.load(f)
        if a.pool:
            with open(a.pool) as f:
                pool = json.load(f)["cases"][0]["kernel_timing"]["samples_us"]
            draw = lambda scale: [scale * rng.choice(pool) for _ in range(a.samples)]  # noqa: E731
            source = f"bootstrap of {len(pool)} samples of {a.pool}"
        else:
            draw = lambda scale: model_run(rng, a.samples, 100.0 * scale)  # noqa: E731
            source = f"busy-machine model, seed {a.seed}"
        base = [draw(1.0) for _ in range(TRIALS)]
        rerun = [draw(1.0) for _ in range(TRIALS)]
        slow = [draw(SLOWDOWN) for _ in range(TRIALS)]
        ok = True
        print(f"gate_trials: {TRIALS} trials, {a.samples} samples a run, {source}")
        for keep, how in ((True, "samples kept (U test)"), (False, "no samples (rse_median)")):
            b = make_report(template, base, keep)
            flagged_slow = verdicts(a.tool, b, make_report(template, slow, keep), tmp, f"slow{keep}")
            flagged_same = verdicts(a.tool, b, make_report(template, rerun, keep), tmp, f"same{keep}")
            caught = sum("SLOWER" in v for v in flagged_slow)
            quiet = sum("SLOWER" not in v for v in flagged_same)
            if len(flagged_slow) != TRIALS or len(flagged_same) != TRIALS:
                sys.exit(f"gate_trials: expected {TRIALS} rows, got {len(flagged_slow)} and {len(flagged_same)}")
            print(f"  {how}: {SLOWDOWN}x slowdown flagged in {caught}/{TRIALS} (need >= 99); "
                  f"re-run not flagged in {quiet}/{TRIALS} (need >= 95)")
            ok = ok and caught >= 99 and quiet >= 95
    if a.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
