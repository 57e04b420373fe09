#!/usr/bin/env python3
"""scripts/plot: PNG files with the expected series, from a real host-backend sweep and from a
report carrying peers and speed-of-light data. Skips (saying so) without matplotlib."""
import json
import os
import struct
import subprocess
import sys
import tempfile
import unittest

from nvfp4cli import BIN, SRC
import nvfp4cli

PLOT = os.path.join(SRC, "scripts", "plot")

try:
    import matplotlib  # noqa: F401
    HAVE_MPL = True
except ImportError:
    HAVE_MPL = False


def plot(*args):
    p = subprocess.run([sys.executable, PLOT, *args], capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n" or head[12:16] != b"IHDR":
        return None
    return struct.unpack(">II", head[16:24])


def timing(name, role, us, flops):
    return {"name": name, "role": role, "ran": True, "stats": {"median_us": us},
            "tflops": flops / (us * 1e-6) * 1e-12}


PEAK_TFLOPS, BW_TBS = 9000.0, 7.7  # a B200-like speed of light


def synthetic_report():
    """GPU MODE's benchmark shapes (memory-bound) and one compute-bound shape, with peers and the
    kernel's speed of light as the tool reports it (kernel_timing.sol_us)."""
    cases = []
    shapes = [(128, 7168, 16384), (128, 4096, 7168), (128, 7168, 2048), (8192, 8192, 8192)]
    for i, (m, n, k) in enumerate(shapes):
        flops = 2.0 * m * n * k
        traffic = m * k // 2 + n * k // 2 + (m + n) * k // 16 + 2 * m * n
        sol_us = max(traffic / (BW_TBS * 1e12), flops / (PEAK_TFLOPS * 1e12)) * 1e6
        kt = timing("sm100", "kernel", 2 * sol_us, flops)
        kt["sol_us"] = sol_us
        cases.append({
            "problem": {"m": m, "n": n, "k": k, "l": 1, "dist": "gpumode", "seed": 0, "flops": flops,
                        "bytes": {"min_traffic": traffic}},
            "disposition": "passed",
            "kernel_timing": kt,
            "reference_timing": timing("cublaslt-nvfp4", "reference", 3 * sol_us, flops),
            "peers": [timing("cublaslt-bf16", "peer", 8 * sol_us, flops),
                      {"name": "cublaslt-fp8", "role": "peer", "ran": False, "reason": "not here"}],
            "sweep": {"index": i, "name": f"case-{i + 1}"},
        })
    return {"schema_version": 2, "backend": "cuda", "device": {"name": "NVIDIA B200"},
            "sweep": {"config_name": "synthetic"}, "cases": cases}


@unittest.skipUnless(HAVE_MPL, "matplotlib is not installed for this python (Debian: python3-matplotlib)")
class Plot(unittest.TestCase):
    def check_pngs(self, side):
        for chart in side["charts"]:
            size = png_size(chart["file"])
            self.assertIsNotNone(size, chart["file"])
            self.assertGreater(size[0], 300)
            self.assertGreater(size[1], 300)
            self.assertGreater(os.path.getsize(chart["file"]), 5000)

    def test_synthetic_report_with_peers_and_speed_of_light(self):
        with tempfile.TemporaryDirectory() as d:
            rep = os.path.join(d, "r.json")
            with open(rep, "w") as f:
                json.dump(synthetic_report(), f)
            rc, out, err = plot(rep, "--out", os.path.join(d, "p"), "--prefix", "x")
            self.assertEqual(rc, 0, out + err)
            with open(os.path.join(d, "p", "x-plot.json")) as f:
                side = json.load(f)
            self.assertEqual(side["cases"], 4)
            time_chart, roof_chart = side["charts"]
            self.assertEqual(time_chart["series"], ["kernel", "reference", "peer:cublaslt-bf16", "sol"])
            self.assertEqual(roof_chart["series"], ["kernel", "reference", "peer:cublaslt-bf16", "sol", "roofline"])
            # The roofline recovered from the speed-of-light times: the compute-bound case gives
            # the peak, the memory-bound ones the bandwidth.
            self.assertAlmostEqual(roof_chart["roofline"]["peak_tflops"], PEAK_TFLOPS, places=6)
            self.assertAlmostEqual(roof_chart["roofline"]["bandwidth_tbs"], BW_TBS, places=9)
            self.assertEqual(side["notes"], [])
            self.check_pngs(side)

    def test_labels_unique_axis_fits_the_range_roofline_points_labelled(self):
        """Regression: the last case of a same-shape group lost its dist/seed, a log axis
        over a narrow range exaggerated differences, roofline points had no labels."""
        rep = synthetic_report()
        first = rep["cases"][0]
        group = []
        for seed, us in ((0, 100.0), (1, 104.0), (2, 98.0)):
            c = json.loads(json.dumps(first))
            c["problem"]["seed"] = seed
            c["kernel_timing"]["stats"]["median_us"] = us
            c["reference_timing"]["stats"]["median_us"] = us * 1.2
            c["peers"] = []
            c["sweep"] = {"index": seed, "name": "same"}
            del c["kernel_timing"]["sol_us"]
            group.append(c)
        narrow = dict(rep, cases=group)
        with tempfile.TemporaryDirectory() as d:
            for name, r in (("narrow", narrow), ("wide", rep)):
                path = os.path.join(d, name + ".json")
                with open(path, "w") as f:
                    json.dump(r, f)
                rc, out, err = plot(path, "--out", d)
                self.assertEqual(rc, 0, out + err)
            with open(os.path.join(d, "narrow-plot.json")) as f:
                side = json.load(f)
            time_chart, roof_chart = side["charts"]
            self.assertEqual(len(set(time_chart["labels"])), 3, time_chart["labels"])
            self.assertTrue(all("s" + str(i) in time_chart["labels"][i] for i in range(3)), time_chart["labels"])
            self.assertEqual(time_chart["yscale"], "linear")
            self.assertEqual(len(roof_chart["point_labels"]), 3)
            self.assertEqual(len(set(roof_chart["point_labels"])), 3)
            with open(os.path.join(d, "wide-plot.json")) as f:
                self.assertEqual(json.load(f)["charts"][0]["yscale"], "log")

    def test_stated_speed_of_light_wins(self):
        # Memory-bound cases only: sol_us alone would understate the peak; the stated one is used.
        report = synthetic_report()
        report["cases"] = report["cases"][:3]
        for c in report["cases"]:
            c["speed_of_light"] = {"known": True, "gpu": "B200", "sol_us": c["kernel_timing"]["sol_us"],
                                   "tflops": PEAK_TFLOPS, "bandwidth_tbs": BW_TBS}
            del c["kernel_timing"]["sol_us"]
        with tempfile.TemporaryDirectory() as d:
            rep = os.path.join(d, "r.json")
            with open(rep, "w") as f:
                json.dump(report, f)
            rc, out, err = plot(rep, "--out", d)
            self.assertEqual(rc, 0, out + err)
            with open(os.path.join(d, "r-plot.json")) as f:
                side = json.load(f)
            self.assertIn("sol", side["charts"][0]["series"])
            roof = side["charts"][1]["roofline"]
            self.assertEqual((roof["peak_tflops"], roof["bandwidth_tbs"]), (PEAK_TFLOPS, BW_TBS))
            self.assertEqual(roof["source"], "speed_of_light (B200)")
            self.check_pngs(side)

    def test_real_sweep_report_without_sol(self):
        with tempfile.TemporaryDirectory() as d:
            cfg = os.path.join(d, "c.json")
            with open(cfg, "w") as f:
                json.dump({"defaults": {"warmup": 0, "iters": 1},
                           "cases": [{"name": "a", "axes": {"m": [16, 64], "n": 32, "k": 128}}]}, f)
            # the host backend (no speed of light there), also on a GPU machine
            p = subprocess.run([BIN, "sweep", cfg, "--json", os.path.join(d, "s.json")], cwd=d,
                               capture_output=True, text=True, timeout=300,
                               env=dict(os.environ, CUDA_VISIBLE_DEVICES=""))
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            rc, out, err = plot(os.path.join(d, "s.json"), "--out", d)
            self.assertEqual(rc, 0, out + err)
            with open(os.path.join(d, "s-plot.json")) as f:
                side = json.load(f)
            self.assertEqual(side["cases"], 2)
            self.assertEqual(side["charts"][0]["series"][0], "kernel")
            self.assertIn("reference", side["charts"][0]["series"])
            self.assertNotIn("sol", side["charts"][0]["series"])
            self.assertIsNone(side["charts"][1]["roofline"])
            self.assertTrue(any("roofline not drawn" in n for n in side["notes"]))
            self.assertIn("roofline not drawn", out)
            self.check_pngs(side)

    def test_bad_report(self):
        with tempfile.TemporaryDirectory() as d:
            bad = os.path.join(d, "bad.json")
            with open(bad, "w") as f:
                f.write("{not json")
            rc, _, err = plot(bad, "--out", d)
            self.assertEqual(rc, 2)
            self.assertIn("not an nvfp4bench report", err)
            self.assertFalse([f for f in os.listdir(d) if f.endswith(".png")])


if __name__ == "__main__":
    nvfp4cli.main()
