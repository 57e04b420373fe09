#!/usr/bin/env python3
"""How quick the tool is without a GPU: repeated wall-clock runs of the commands a user starts
(--version, --help, --list, and the main job of README.md: the default problem) and the host kernel's
and the CPU reference's own times from the main job's report; minimum and median of each.

    scripts/bench_host.py [--tool build/nvfp4bench] [--runs 20] [--main-runs 5] [--out DIR]

Runs on the host backend (CUDA_VISIBLE_DEVICES="" also on a GPU machine). With --out, writes
DIR/bench-host.json (every time measured) and the reports of the main job's runs there.
Standard library only."""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time


def timed(cmd, env, runs, cwd=None, executable=None):
    """Wall-clock seconds of `runs` runs of cmd (each must exit 0)."""
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                           cwd=cwd, executable=executable)
        out.append(time.perf_counter() - t0)
        if p.returncode != 0:
            sys.exit(f"bench_host: {' '.join(cmd)} exited {p.returncode}: {p.stderr.strip()}")
    return out


def summary(xs):
    return {"runs": len(xs), "min": min(xs), "median": statistics.median(xs)}


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tool", default=os.path.join("build", "nvfp4bench"))
    ap.add_argument("--runs", type=int, default=20, help="runs of --version, --help, --list")
    ap.add_argument("--main-runs", type=int, default=5, help="runs of the main job")
    ap.add_argument("--out", help="folder for bench-host.json and the main job's reports")
    a = ap.parse_args()
    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    tool = os.path.abspath(a.tool)
    out_dir = a.out or tempfile.mkdtemp(prefix="bench-host-")
    os.makedirs(out_dir, exist_ok=True)

    res = {"tool": a.tool, "cpu": cpu_model(), "cores": os.cpu_count(),
           "load_average_before": os.getloadavg(), "commands": {}}
    version = subprocess.run([tool, "--version"], capture_output=True, text=True, env=env)
    res["version"] = version.stdout.strip()
    for name, args in (("--version", ["--version"]), ("--help", ["--help"]), ("--list", ["--list"])):
        res["commands"][name] = summary(timed([tool, *args], env, a.runs))
    kernel, reference = [], []
    main_times = []
    for i in range(a.main_runs):
        report = os.path.join(out_dir, f"main-{i}.json")  # written in out_dir, named relatively
        # argv[0] as given, so the report's argv names no path of this machine
        main_times += timed([a.tool, "--json", os.path.basename(report)], env, 1, cwd=out_dir,
                            executable=tool)
        case = json.load(open(report))["cases"][0]
        kernel.append(case["kernel_timing"]["stats"]["median_us"] / 1e6)
        reference.append(case["reference_timing"]["stats"]["median_us"] / 1e6)
        res["host_configuration"] = case["kernel"].get("configuration", "")
        res["problem"] = case["problem"]
    res["commands"]["main job (default problem)"] = summary(main_times)
    res["host kernel per call (report median)"] = summary(kernel)
    res["cpu-exact reference per call (report median)"] = summary(reference)
    res["load_average_after"] = os.getloadavg()
    with open(os.path.join(out_dir, "bench-host.json"), "w") as f:
        json.dump(res, f, indent=1)

    print(f"{res['version']} on {res['cpu']} ({res['cores']} cores), host kernel "
          f"{res['host_configuration']}, load average {res['load_average_before'][0]:.2f}")
    rows = [(k, v) for k, v in res["commands"].items()] + [
        ("host kernel per call", res["host kernel per call (report median)"]),
        ("cpu-exact per call", res["cpu-exact reference per call (report median)"])]
    print(f"{'what':32} {'runs':>4} {'min':>10} {'median':>10}")
    for k, v in rows:
        unit, scale = ("ms", 1e3) if v["median"] < 1 else ("s", 1)
        print(f"{k:32} {v['runs']:>4} {v['min'] * scale:>8.3g} {unit:<2}{v['median'] * scale:>7.3g} {unit}")
    print(f"written: {os.path.join(out_dir, 'bench-host.json')}")


if __name__ == "__main__":
    main()
