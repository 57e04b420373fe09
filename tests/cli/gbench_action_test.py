#!/usr/bin/env python3
"""What github-action-benchmark (tool: googlecpp) does with our gbench output: its extraction and
its alert rule, reproduced here in Python from its TypeScript sources (not copied):

Followed at commit c38cce98215cf75e178ecd5a0c1a1ab215e93006 (release v1.22.0), where both parts
read as below; they read the same at the older 04dcc2c41a0add41e0fa82c268ae40952fcd8be4
(extract.ts) and 019cbcbff5b46768d07df85029eb19c76f835b75 (write.ts); action.yml's
alert-threshold default is '200%', fail-threshold defaults to alert-threshold.

- src/extract.ts, extractGoogleCppResult:
  the file is JSON.parse'd; every entry of "benchmarks" becomes {name: b.name, value: b.real_time,
  unit: b.time_unit + "/iter", extra: iterations, cpu_time, threads}. Nothing else is read:
  error_occurred/error_message, run_type and every counter are ignored.
- src/write.ts, findAlerts/getRatio/handleAlert: the previous suite is the last stored one with another
  commit id; each current bench is paired with the previous bench of the same name (none: skipped);
  ratio = current.value / prev.value for googlecpp (not bigger-is-better), 1 when both are 0;
  an alert when ratio > alert-threshold (input '200%' by default, i.e. 2.0); with fail-on-alert the
  job fails when an alert's ratio > fail-threshold (defaults to alert-threshold).

The consequences the test pins down: a failed case must carry a real_time that alerts against the
same name's earlier passing value (a missing real_time gives value undefined, ratio NaN: no
alert, and error_occurred is never looked at), and a reference timed once must not be a bench.
"""
import json
import math
import os
import tempfile
import unittest

from nvfp4cli import HOST_ENV, PLUGIN_DIR, run
import nvfp4cli

ALERT_THRESHOLD = 2.0  # the action's default alert-threshold '200%'
FAILED_US = 1e12  # a failed case's real_time (src/report/gbench_writer.cpp)


def extract_googlecpp(text):
    """extractGoogleCppResult: name, value (real_time; None when absent, as JS's undefined),
    unit, extra."""
    doc = json.loads(text)  # JSON.parse; a parse error fails the action
    out = []
    for b in doc["benchmarks"]:
        out.append({"name": b.get("name"), "value": b.get("real_time"),
                    "unit": f"{b.get('time_unit')}/iter",
                    "extra": f"iterations: {b.get('iterations')}\ncpu: {b.get('cpu_time')} "
                             f"{b.get('time_unit')}\nthreads: {b.get('threads')}"})
    return out


def js_div(a, b):
    """a / b with JavaScript's rules for undefined (None -> NaN), null, 0 and infinities."""
    a = math.nan if a is None else float(a)
    b = math.nan if b is None else float(b)
    if math.isnan(a) or math.isnan(b):
        return math.nan
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a)
    return a / b


def ratio(prev, cur):
    """getRatio for a smaller-is-better tool."""
    if prev["value"] == 0 and cur["value"] == 0:
        return 1.0
    return js_div(cur["value"], prev["value"])


def find_alerts(cur_benches, prev_benches, threshold=ALERT_THRESHOLD):
    """findAlerts: [(name, ratio)] for every current bench worse than the previous one of its
    name by more than the threshold (NaN compares false: no alert)."""
    alerts = []
    for cur in cur_benches:
        prev = next((b for b in prev_benches if b["name"] == cur["name"]), None)
        if prev is None:
            continue
        r = ratio(prev, cur)
        if r > threshold:
            alerts.append((cur["name"], r))
    return alerts


NOISE = 1e3  # no two passing runs' times differ by this ratio; FAILED_US over a real time does


def failures(alerts):
    """The alerts that a failed case's sentinel causes, not timing noise."""
    return [a for a in alerts if a[1] >= NOISE]


def job_fails(alerts, fail_threshold=ALERT_THRESHOLD):
    """handleAlert with fail-on-alert: the job fails when an alert exceeds fail-threshold."""
    return any(r > fail_threshold for _, r in alerts)


class ReproductionSelfCheck(unittest.TestCase):
    """The reproduction's rules on hand-made data, including what a missing real_time does."""

    def test_rules(self):
        prev = [{"name": "k", "value": 100.0}]
        self.assertEqual(find_alerts([{"name": "k", "value": 150.0}], prev), [])
        self.assertEqual(find_alerts([{"name": "k", "value": 250.0}], prev), [("k", 2.5)])
        self.assertEqual(find_alerts([{"name": "other", "value": 1e9}], prev), [])  # no pair
        self.assertEqual(find_alerts([{"name": "k", "value": None}], prev), [])  # no real_time: NaN
        self.assertEqual(find_alerts([{"name": "k", "value": 0.0}], [{"name": "k", "value": 0.0}]), [])
        self.assertEqual(len(find_alerts([{"name": "k", "value": 5.0}], [{"name": "k", "value": 0.0}])), 1)


class OurGbenchThroughTheAction(unittest.TestCase):
    """A passing run and then a failing run of one kernel (flaky-host: one NaN when
    NVFP4_TEST_BREAK is set), each written with --format gbench, fed to the reproduction."""
    SHAPE = ["--m", "64", "--n", "64", "--k", "256", "--warmup", "0"]

    def gbench(self, d, name, broken):
        path = os.path.join(d, name)
        env = dict(HOST_ENV, **({"NVFP4_TEST_BREAK": "1"} if broken else {}))
        env.pop("NVFP4_TEST_BREAK", None) if not broken else None
        rc, out, err = run("--kernel-lib", os.path.join(PLUGIN_DIR, "libnvfp4_broken_host.so"),
                           "--kernel", "flaky-host", *self.SHAPE, "--format", "gbench", "--output",
                           path, env=env)
        self.assertEqual(rc, 1 if broken else 0, out + err)
        with open(path) as f:
            return f.read()

    def test_a_failed_case_alerts_and_fails_the_job(self):
        with tempfile.TemporaryDirectory() as d:
            good1 = extract_googlecpp(self.gbench(d, "good1.json", False))
            good2 = extract_googlecpp(self.gbench(d, "good2.json", False))
            bad = extract_googlecpp(self.gbench(d, "bad.json", True))
            kernel = [b for b in good1 if b["name"].startswith("flaky-host/")]
            self.assertEqual(len(kernel), 1, good1)
            self.assertEqual(kernel[0]["unit"], "us/iter")
            # Passing after passing: no alert on the kernel. The same run twice never alerts. Two
            # runs of small host problems may differ by more than the 2x threshold when the
            # machine is loaded (ctest -j), never by the failure sentinel's ratio: an alert below
            # NOISE is timing, not a failure.
            self.assertEqual(find_alerts(good1, good1), [])
            self.assertEqual(failures(find_alerts(good2, good1)), [])
            # Failing after passing: the kernel's own series alerts, and fail-on-alert fails the job.
            alerts = find_alerts(bad, good1)
            self.assertEqual([a[0] for a in failures(alerts)], [kernel[0]["name"]], alerts)
            self.assertTrue(job_fails(alerts))
            # The failing point is no plausible time on the chart.
            self.assertEqual(next(b for b in bad if b["name"] == kernel[0]["name"])["value"], FAILED_US)
            # Passing again after the failure: no alert (the repair is no regression).
            self.assertEqual(failures(find_alerts(good2, bad)), [])

    def test_a_reference_timed_once_is_no_bench(self):
        with tempfile.TemporaryDirectory() as d:
            doc = json.loads(self.gbench(d, "good.json", False))
            for b in doc["benchmarks"]:
                self.assertGreaterEqual(b["iterations"], 2, b["name"])
            self.assertFalse(any(b["name"].startswith("cpu") for b in doc["benchmarks"]), doc)


class SweepGbenchThroughTheAction(unittest.TestCase):
    """A sweep's report in gbench (sweep --format gbench, and convert of its report): a passing
    sweep, then one where flaky-host fails, fed to the reproduction. Cases of one shape and other
    seeds keep names of their own, so the action pairs each with its own history."""
    CONFIG = {"name": "act", "defaults": {"warmup": 0, "iters": 3},
              "cases": [{"shape": {"m": 64, "n": 64, "k": 256}, "kernels": ["flaky-host", "host"],
                         "seeds": [0, 1]}]}

    def sweep(self, d, name, broken):
        cfg = os.path.join(d, "act.json")
        with open(cfg, "w") as f:
            json.dump(self.CONFIG, f)
        env = dict(HOST_ENV)
        if broken:
            env["NVFP4_TEST_BREAK"] = "1"
        out_path = os.path.join(d, name)
        rc, out, err = run("--kernel-lib", os.path.join(PLUGIN_DIR, "libnvfp4_broken_host.so"), "sweep",
                           cfg, "--overwrite", "--format", "gbench", "--output", out_path, cwd=d, env=env)
        self.assertEqual(rc, 1 if broken else 0, out + err)
        with open(out_path) as f:
            text = f.read()
        # convert of the sweep's report gives the same file
        rc, out, err = run("convert", os.path.join(d, "sweep-act.json"), "--format", "gbench", env=HOST_ENV)
        self.assertEqual(rc, 0, err)
        self.assertEqual(out, text)
        return extract_googlecpp(text)

    def test_the_failed_cases_of_a_sweep_alert_and_fail_the_job(self):
        with tempfile.TemporaryDirectory() as d:
            good = self.sweep(d, "good.json", False)
            bad = self.sweep(d, "bad.json", True)
            names = [b["name"] for b in good]
            self.assertEqual(len(names), len(set(names)), names)  # one series per case
            failed = {f"flaky-host/64x64x256x1/gpumode/hot/seed={s}" for s in (0, 1)}
            self.assertTrue(failed <= set(names), names)
            self.assertEqual({b["name"] for b in bad}, set(names))
            alerts = find_alerts(bad, good)
            # Each failed case alerts by the sentinel's margin; a passing one never comes near it.
            self.assertEqual({n for n, r in alerts if r > 1e6}, failed, alerts)
            self.assertTrue(job_fails(alerts))
            for b in bad:
                self.assertEqual(b["value"] == FAILED_US, b["name"] in failed, b)


if __name__ == "__main__":
    nvfp4cli.main()
