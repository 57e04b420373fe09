"""What the command-line tests share: where the tool, the sources and the plugins are, and how
to run the tool. ctest sets NVFP4BENCH, NVFP4_PLUGIN_DIR and NVFP4_SOURCE_DIR (tests/cli/
CMakeLists.txt); the defaults serve a run by hand from the repository root."""
import json
import os
import sys
import tempfile
import subprocess
import unittest

SRC = os.path.abspath(os.environ.get(
    "NVFP4_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))
BIN = os.path.abspath(os.environ.get("NVFP4BENCH", os.path.join("build", "nvfp4bench")))
PLUGIN_DIR = os.path.abspath(os.environ.get("NVFP4_PLUGIN_DIR", os.path.join("build", "plugins")))
CONFIGS = os.path.join(SRC, "configs")
SCHEMA = os.path.join(SRC, "schemas", "report.schema.json")
# The host backend, even on a GPU machine.
HOST_ENV = dict(os.environ, CUDA_VISIBLE_DEVICES="")


def run(*args, cwd=None, env=None, timeout=300):
    """Runs the tool; returns (exit code, stdout, stderr)."""
    p = subprocess.run([BIN, *args], capture_output=True, text=True, timeout=timeout, cwd=cwd,
                       env=env)
    return p.returncode, p.stdout, p.stderr


def load(path):
    with open(path) as f:
        return json.load(f)


def jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def gpu_reason():
    """Why the tool sees no usable GPU (the first line of --list), or None when it does."""
    rc, out, _ = run("--list", timeout=120)
    first = out.splitlines()[0] if out else ""
    if rc != 0 or first.startswith("device: none"):
        return first or f"--list exited {rc}"
    return None


def built_without_python():
    """The tool's message when it was built without Python kernels, else None."""
    with tempfile.TemporaryDirectory() as d:
        probe = os.path.join(d, "probe.py")
        with open(probe, "w") as f:
            f.write("def custom_kernel(data):\n    return data[-1]\n")
        rc, out, err = run("--kernel-py", probe, "--list", env=HOST_ENV, timeout=120)
    return err.strip() if rc == 2 and "built without Python kernels" in err else None


# ctest's SKIP_RETURN_CODE for these tests (tests/cli/CMakeLists.txt).
SKIP_EXIT = 77


def main():
    """unittest.main with an exit status ctest reads: 1 where any test failed or erred, else
    SKIP_EXIT where any was skipped (the reasons are in the output), else 0. ctest's
    SKIP_REGULAR_EXPRESSION would mark a test skipped whatever its exit status, so one skipped
    subtest (no torch, say) would hide another's failure."""
    result = unittest.main(exit=False).result
    if not result.wasSuccessful():
        sys.exit(1)
    sys.exit(SKIP_EXIT if result.skipped else 0)
