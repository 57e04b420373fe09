"""compute-sanitizer racecheck on the sm90 paths where a CTA runs several split-K units (the
split-K protocol's broadcast, kernels/sm90/schedule.cuh) or, on the streaming path, sums its warps'
pieces in shared memory, and on a planted shared-memory race,
which it must report. GPU only: skipped, with the reason, without a GPU or compute-sanitizer."""
import os
import re
import shutil
import subprocess
import unittest

from nvfp4cli import BIN, PLUGIN_DIR, gpu_reason
import nvfp4cli

# (kernel, M N K L, configuration): more split-K units than an H200 has SMs, so CTAs run several.
SPLIT_K_CASES = [
    ("sm90-fused", "520 136 768 2", "fused 128x128 split 12"),          # 240 units
    ("sm90-fused", "16 36864 1024 1", "fused 16x128 split 2 per-sm 2"),  # 576 units, two CTAs an SM
    ("sm90-2phase", "1000 1000 2048 2", "two-phase 128x128 split 4 group 8"),  # 512 units
    # the streaming path: 130 units over 9 CTAs of 16 warps, pieces summed in shared memory and
    # panel-slices shared between CTAs
    ("sm90", "16 200 1280 2", "stream 16x16 ctas 9 warps 16"),
]
KERNEL_NAMES = {"sm90-fused": "fused_kernel", "sm90-2phase": "mainloop_kernel", "sm90": "stream_kernel"}


def sanitizer():
    """compute-sanitizer: $COMPUTE_SANITIZER, on PATH, or beside nvcc in /usr/local/cuda."""
    for c in (os.environ.get("COMPUTE_SANITIZER"), shutil.which("compute-sanitizer"),
              "/usr/local/cuda/bin/compute-sanitizer"):
        if c and os.access(c, os.X_OK):
            return c
    return None


def hazards(out):
    """The count racecheck's summary line gives, or None without one."""
    m = re.search(r"RACECHECK SUMMARY: (\d+) hazards? displayed", out)
    return int(m.group(1)) if m else None


class RacecheckGpu(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        why = gpu_reason()
        if why:
            raise unittest.SkipTest(f"needs a CUDA GPU: {why}")
        cls.cs = sanitizer()
        if not cls.cs:
            raise unittest.SkipTest("compute-sanitizer not found ($COMPUTE_SANITIZER, PATH, /usr/local/cuda/bin)")

    def racecheck(self, *args, kernel_name=None):
        scope = ["--kernel-name", f"kns={kernel_name}"] if kernel_name else []
        p = subprocess.run([self.cs, "--tool", "racecheck", *scope, "--error-exitcode", "9", BIN, *args,
                            "--iters", "1", "--warmup", "0"], capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout + p.stderr

    def test_split_k_units_are_race_free(self):
        for kernel, shape, config in SPLIT_K_CASES:
            with self.subTest(kernel=kernel, config=config):
                m, n, k, l = shape.split()
                rc, out = self.racecheck("--m", m, "--n", n, "--k", k, "--l", l, "--kernel", kernel,
                                         "--kernel-config", config, "--reference", "cpu-exact",
                                         kernel_name=KERNEL_NAMES[kernel])
                self.assertEqual(hazards(out), 0, out[-3000:])
                self.assertEqual(rc, 0, out[-3000:])
                self.assertRegex(out, r"verify +PASSED")

    def test_planted_race_is_reported(self):
        lib = os.path.join(PLUGIN_DIR, "libnvfp4_broken_device.so")
        self.assertTrue(os.path.exists(lib), lib)
        rc, out = self.racecheck("--kernel-lib", lib, "--kernel", "broken-race", "--m", "16", "--n", "16",
                                 "--k", "64", "--reference", "cpu-exact")
        self.assertEqual(rc, 9, out[-3000:])
        self.assertGreater(hazards(out) or 0, 0, out[-3000:])


if __name__ == "__main__":
    nvfp4cli.main()
