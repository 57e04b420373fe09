#!/usr/bin/env python3
"""The verdict cannot be fooled (docs/cli.md, "The verdict"): kernels whose first call is right
but which cheat afterwards are reported incorrect (exit 1) with the line of the check that caught
them, and the honest kernels keep passing with the checks recorded. One cheat per threat class
(issue #45), as plugins (tests/cheat_plugins/) and as Python kernels (--kernel-py, written here):
  lazy          right on its first call only, then leaves C as it is      -> the timed outputs
  memo          replays an output cached by input address (and shape)    -> the timed outputs or
  memo-shape    replays an output cached by shape alone                    the recheck
  fast          poison-aware: computes only when C holds 0x7F7F           -> the timed outputs
  count         computes on calls 0, 1, 3, 7, 15, ... only                -> the timed outputs
  random        skips a call with probability p                           -> the timed outputs
                (p = 0.5); --check-every-call (p = 0.05)
  deferred      the work on a host thread, after the call returns         -> the timed outputs
                (host: 300 ms late, after the case ended; device: at the recheck, after the
                timing ended: the buffers a call was given are still the case's)
  other-stream  the GEMM on a stream of its own, waited for by nobody     -> the isolation check
                                                                             or the timed outputs
  host-wait     the GEMM on a stream of its own, waited for on the host   -> timed without the
                hold, its wait in the window: right, and no faster than the honest GEMM
  host-work     the GEMM on the CPU, operands copied on a stream of its   -> the isolation check
  (plugin, torch) own (copy engines), C copied back in the window            (host time per call)
  predict       works the secret out of its operands (the generator's      -> the timed outputs
                mixer undone step by step) as the verdict once allowed,
                and computes only the elements it predicts will be
                gathered; with a keyed PRF between the secret and every
                seed it never finds it (its log: "found 0")
  fault         (plugin only) protects C's pages and computes each one    -> the timed outputs
                in its own SIGSEGV handler when the tool reads it: the       (C unreadable)
                verdict reads C through the kernel (a pipe), never faults
  pipe          (plugin only) finds the pipe the verdict once read C      -> the timed outputs
                through, fills it and returns at once; its thread computes   (no pipe to find:
                C while the tool's write of C waits                          it never computes)
  stdclock      (plugin only) honest, but rewrites libstdc++'s GOT slot   -> nothing to gain:
                of clock_gettime (partial RELRO: writable) to hide its       the tool's clock
                calls' time                                                  does not go through
                                                                             it (its median is
                                                                             its real time)
  notif         (plugin only) returns at once and holds the tool's read   -> the timed outputs:
                of C with a seccomp filter of its own (a user notification)  the tool's own filter
                until its thread has computed C                              refuses seccomp(), so
                                                                             it never computes
  verdict-file  an isolated run's child: finds the verdict file's name in -> the run ended
                /proc/self/environ, writes 0 there, ends the process         without a verdict
                                                                             (exit 3): the name is
                                                                             scrubbed, the parent
                                                                             wants a token
  exit-forge    (plugin only) computes nothing; at exit rewrites the      -> the first call's
                --json report to "passed" and exits 0                        verification: the run
                                                                             ends before any atexit
                                                                             handler
  clock         (plugin only) honest, but rewrites the tool's GOT entry   -> its own crash
                of its clock to leave out its calls' time                    (exit 3): the GOT
                                                                             is read-only
  content-memo  replays an output cached by addresses and a fingerprint   -> nothing to catch:
                of 64 sampled bytes per operand                              fresh operands make
                                                                             it miss every call,
                it computes every call and passes; the test checks (its log) that it never hit
  VerdictHost  the host backend (forced): host plugins and numpy submissions
  VerdictGpu   the GPU (label gpu): CUDA plugins in every timing mode, torch submissions, and the
               honest sm90, example-cuda and torch kernels; skipped, saying why, without a GPU"""
import json
import os
import shutil
import tempfile
import textwrap
import unittest

from nvfp4cli import HOST_ENV, PLUGIN_DIR, SCHEMA, SRC, gpu_reason, run
import nvfp4cli

try:
    import jsonschema
except ImportError:  # Debian's python3-jsonschema; without it the schema checks skip
    jsonschema = None

HOST_LIB = os.path.join(PLUGIN_DIR, "libnvfp4_cheat_host.so")
DEVICE_LIB = os.path.join(PLUGIN_DIR, "libnvfp4_cheat_device.so")

# What each verdict part's failure says (docs/cli.md, "The verdict").
WHY = {
    "timed_outputs": ("wrote a wrong output", "left its output unreadable"),
    "recheck": ("recheck on fresh operands in the same buffers",),
    "isolation": ("work outside the timed stream",),
    "floor": ("below the physical floor of",),
}
EVERY_CALL = "--check-every-call: call "

# Python cheats over an honest submission (the example beside them, numpy or torch).
LAZY = """
from {honest} import custom_kernel as honest
calls = 0


def custom_kernel(data):
    global calls
    calls += 1
    return honest(data) if calls == 1 else data[-1]
"""

MEMO = """
import copy

from {honest} import custom_kernel as honest
cache = {{}}


def custom_kernel(data):
    key = ({address}, tuple(data[-1].shape))
    if key not in cache:
        cache[key] = copy.deepcopy(honest(data))  # not C itself: replays rewrite C
    return cache[key]
"""

MEMO_SHAPE = """
import copy

from {honest} import custom_kernel as honest
cache = {{}}


def custom_kernel(data):
    key = tuple(data[-1].shape)
    if key not in cache:
        cache[key] = copy.deepcopy(honest(data))  # not C itself: replays rewrite C
    return cache[key]
"""

# Computes only when C holds the first call's poison (today's checked calls).
FAST_NUMPY = """
import numpy as np
from numpy_submission import custom_kernel as honest


def custom_kernel(data):
    c = data[-1]
    return honest(data) if c.view(np.uint16).flat[0] == 0x7F7F else c
"""

# The old public schedule of checked samples.
COUNT = """
from {honest} import custom_kernel as honest
calls = 0


def custom_kernel(data):
    global calls
    n, calls = calls, calls + 1
    return honest(data) if ((n + 1) & n) == 0 else data[-1]  # calls 0, 1, 3, 7, 15, ...
"""

# Skips a call with probability $NVFP4_CHEAT_P (0.5) from a fixed seed; the first call computes.
# Seed 45 skips calls 6, 11, 45, 57, 65, 80, ... at p = 0.05.
RANDOM = """
import os
import random

from {honest} import custom_kernel as honest
rng = random.Random(45)
p = float(os.environ.get("NVFP4_CHEAT_P") or 0.5)
calls = 0


def custom_kernel(data):
    global calls
    calls += 1
    return honest(data) if calls == 1 or rng.random() >= p else data[-1]
"""

# The output cached by the operands' addresses, the shape and 64 sampled bytes of A, B, SFA and
# SFB; "calls N hits H" written to $NVFP4_CHEAT_LOG after every call.
CONTENT_MEMO = """
import copy
import os

import numpy as np
{imports}
from {honest} import custom_kernel as honest
cache = {{}}
calls = hits = 0


def fingerprint(x):
{fingerprint}


def custom_kernel(data):
    global calls, hits
    calls += 1
    ops, c = data[:4], data[-1]
    key = (tuple({address_of} for x in ops), tuple(c.shape), *(fingerprint(x) for x in ops))
    if key in cache:
        hits += 1
        c[...] = cache[key]
    else:
        if len(cache) >= 16:  # fresh operands: bound the cache
            cache.clear()
        cache[key] = copy.deepcopy(honest(data))  # not C itself: replays rewrite C
    with open(os.environ["NVFP4_CHEAT_LOG"], "w") as f:
        f.write(f"calls {{calls}} hits {{hits}}\\n")
    return c
"""
FINGERPRINT_NUMPY = """\
    at = np.unravel_index(np.arange(64) * x.size // 64, x.shape)
    return x[at].tobytes()"""
# On the GPU the fingerprint reaches the host: the call waits for the device (a held call, the
# isolation check).
FINGERPRINT_TORCH = """\
    at = np.unravel_index(np.arange(64) * x.numel() // 64, tuple(x.shape))
    x = x.view(torch.uint8)
    return x[tuple(torch.as_tensor(i, device=x.device) for i in at)].cpu().numpy().tobytes()"""

# The secret worked out of the operands by undoing the generator's mixer and the verdict's old
# derivations (as tests/cheat_plugins/cheat_host.cpp's predict-host), then only the elements it
# predicts will be gathered computed; C left as it is when no run's derived fill matches C's.
# "calls N found F" written to $NVFP4_CHEAT_LOG after every call.
PREDICT_NUMPY = """
import os

import numpy as np
from numpy_submission import custom_kernel as honest, dequantize

M64 = (1 << 64) - 1
I1, I2 = pow(0xBF58476D1CE4E5B9, -1, 1 << 64), pow(0x94D049BB133111EB, -1, 1 << 64)
state = {"calls": 0, "found": 0, "run": -1}


def mix64(z):
    z = (z + 0x9E3779B97F4A7C15) & M64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return z ^ (z >> 31)


def unxorshift(z, s):
    r = z
    for _ in range(64 // s + 1):
        r = z ^ (r >> s)
    return r


def unmix64(z):
    z = (unxorshift(z, 31) * I2) & M64
    z = (unxorshift(z, 27) * I1) & M64
    return (unxorshift(z, 30) - 0x9E3779B97F4A7C15) & M64


def random_finite_fp16(seed, index):
    r = mix64(seed ^ mix64(index))
    return (r & 0x83FF) | ((25 + ((r >> 16) % 6)) << 10)


def predict(data, c16):
    a, b, sfa, sfb, _, _, c = data
    r0 = int.from_bytes(bytes(np.asarray(a[0, :8, 0])), "little")
    key = unmix64((unmix64(r0) - 0xE7037ED1A0B428DB) & M64) ^ mix64(0)
    seed = unmix64(key) ^ 0xA0761D6478BD642F  # the call's operand seed
    for run in range(state["run"] + 1, state["run"] + 257):
        secret = unmix64(unmix64(seed) ^ mix64(run * 4096)) ^ 0xC0FFEE5EED
        fill = mix64(mix64(secret ^ 0xF111) ^ run)
        if any(int(c16[e]) != random_finite_fp16(fill, e) for e in range(8)):
            continue
        state["run"] = run
        M, N, L = c.shape
        gather = mix64(mix64(secret ^ 0x6A7E) ^ run)
        idx = np.array([(mix64(gather ^ mix64(t)) * (M * N * L)) >> 64 for t in range(4096)])
        l, i, j = idx // (M * N), idx // N % M, idx % N
        da, db = dequantize(a, sfa), dequantize(b, sfb)
        np.moveaxis(c, 2, 0)[l, i, j] = np.einsum("ek,ek->e", da[l, i], db[l, j]).astype(np.float16)
        return True
    return False


def custom_kernel(data):
    c = data[-1]
    state["calls"] += 1
    c16 = np.moveaxis(c, 2, 0).reshape(-1).view(np.uint16)
    if c16[0] == 0x7F7F:  # the first call and the recheck
        honest(data)
    elif predict(data, c16):
        state["found"] += 1
    with open(os.environ["NVFP4_CHEAT_LOG"], "w") as f:
        f.write(f"calls {state['calls']} found {state['found']}\\n")
    return c
"""

# An isolated run's child: the verdict file's name from /proc/self/environ, 0 written there, the
# process ended (the parent once took that 0 as the verdict).
VERDICT_FILE = """
import os


def custom_kernel(data):
    with open("/proc/self/environ", "rb") as f:
        env = f.read().split(b"\\0")
    for kv in env:
        if kv.startswith(b"NVFP4BENCH_VERDICT_FILE=/"):
            with open(kv.split(b"=", 1)[1], "w") as out:
                out.write("0\\n")
    os.kill(os.getpid(), 9)
"""

# After its first call, the work on a thread of its own that writes c after the call returned;
# one such thread at a time (a call that finds it busy starts none), never waited for by a call.
DEFERRED = """
import threading

from numpy_submission import custom_kernel as honest
calls = 0
worker = []


def custom_kernel(data):
    global calls
    calls += 1
    if calls == 1:
        return honest(data)
    if not worker or not worker[0].is_alive():
        worker[:] = [threading.Thread(target=honest, args=(data,))]
        worker[0].start()
    return data[-1]
"""

# After its first call, the work on a stream of its own that nobody waits for.
OTHER_STREAM = """
import torch
from torch_submission import custom_kernel as honest
side = []
calls = 0


def custom_kernel(data):
    global calls
    calls += 1
    if calls == 1:
        return honest(data)
    if not side:
        side.append(torch.cuda.Stream())
    with torch.cuda.stream(side[0]):
        honest(data)
    return data[-1]
"""

# The work on a stream of its own, waited for on the host, so the tool's stream sees only the
# copy into c.
HOST_WAIT = """
import torch
from torch_submission import custom_kernel as honest
side = []


def custom_kernel(data):
    if not side:
        side.append(torch.cuda.Stream())
        side[0].wait_stream(torch.cuda.current_stream())  # the first call's operands
    with torch.cuda.stream(side[0]):
        out = honest(data)
    side[0].synchronize()
    out.record_stream(torch.cuda.current_stream())
    return out
"""


# The GEMM on the CPU: the operands copied on a stream of its own (copy engines: the hold of the
# SMs does not stop them), C copied back on the tool's stream, inside the window. A held call has
# no event on the tool's stream that says when its fresh operands are written: it sleeps 2 ms.
HOST_WORK = """
import time
import torch
from torch_submission import dequantize
side = []


def custom_kernel(data):
    a, b, sfa, sfb, _, _, c = data
    if not side:
        side.append(torch.cuda.Stream())
        side[0].wait_stream(torch.cuda.current_stream())  # the first call's operands
    else:
        time.sleep(0.002)
    with torch.cuda.stream(side[0]):
        qa, qb, sa, sb = (x.to("cpu", non_blocking=True) for x in (a, b, sfa, sfb))
    side[0].synchronize()
    out = torch.matmul(dequantize(qa, sa).float(), dequantize(qb, sb).float().transpose(1, 2)).half()
    c.copy_(out.permute(1, 2, 0).contiguous().pin_memory(), non_blocking=True)
    return c
"""

class Verdict(unittest.TestCase):
    ENV = None
    HONEST = ""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.dir = cls.tmp.name
        cls.log = os.path.join(cls.dir, "cheat.log")

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    @classmethod
    def write_python(cls, sources):
        """The Python cheats beside a copy of the honest example they wrap."""
        shutil.copy(os.path.join(SRC, "examples", "submissions", cls.HONEST + ".py"), cls.dir)
        for name, text in sources.items():
            with open(cls.py(name), "w") as f:
                f.write(textwrap.dedent(text))

    @classmethod
    def py(cls, name):
        return os.path.join(cls.dir, name + ".py")

    def case(self, *args, env=None, timeout=600):
        """(exit code, stdout + stderr, the report's case); `env` adds to the class's."""
        rep = os.path.join(self.dir, "r.json")
        if os.path.exists(rep):
            os.remove(rep)
        full = dict(self.ENV if self.ENV is not None else os.environ, **(env or {}))
        rc, out, err = run(*args, "--json", rep, env=full, timeout=timeout)
        self.assertTrue(os.path.exists(rep), out + err)
        with open(rep) as f:
            report = json.load(f)
        if jsonschema:
            with open(SCHEMA) as f:
                jsonschema.validate(report, json.load(f))
        return rc, out + err, report["cases"][0]

    def assert_caught(self, args, by, env=None, every_call=False):
        """Exit 1, incorrect after a right first call, the message of one of the parts `by` (a
        name or a tuple of names: the checks that may catch this class first) and that part
        failed; with `every_call`, the message of --check-every-call."""
        rc, out, c = self.case(*args, env=env)
        self.assertEqual(rc, 1, out)
        self.assertEqual(c["disposition"], "incorrect", c["message"])
        self.assertTrue(c["verification"]["passed"], "the first call is right: " + out)
        self.assertIn("result    incorrect: " + c["message"], out)
        v = c["verdict"]
        if every_call:
            self.assertTrue(c["message"].startswith(EVERY_CALL), c["message"])
            self.assertIn(WHY["timed_outputs"][0], c["message"])
            self.assertFalse(v["timed_outputs"]["passed"], v)
            return c
        parts = (by,) if isinstance(by, str) else by
        part = next((p for p in parts if any(w in c["message"] for w in WHY[p])), None)
        self.assertIsNotNone(part, f"caught by one of {parts}: {c['message']}")
        failed = v[part]["verification"]["passed"] if part == "recheck" else v[part]["passed"]
        self.assertFalse(failed, v)
        return c

    def assert_honest(self, args, every_call=False, env=None):
        """Exit 0, passed, every part right, the timed outputs checked from the secret."""
        if every_call:
            args = [*args, "--check-every-call"]
        rc, out, c = self.case(*args, env=env)
        self.assertEqual(rc, 0, out)
        self.assertEqual(c["disposition"], "passed")
        v = c["verdict"]
        t = v["timed_outputs"]
        self.assertTrue(t["passed"], v)
        self.assertIs(t["secret"], True, v)
        self.assertGreater(t["samples"], 0)
        self.assertGreater(t["outputs"], 0)
        self.assertTrue(v["recheck"]["verification"]["passed"], v)
        self.assertTrue(v["floor"]["known"] and v["floor"]["passed"], v)
        self.assertIsNot(v.get("isolation", {}).get("passed"), False, v)
        self.assertIn("checked   timed outputs right", out)
        self.assertGreater(c["kernel_timing"]["host_us_per_call"]["median_us"], 0)
        return c

    def assert_never_replayed(self, args, env=None):
        """content-memo: fresh operands before every sample, so its fingerprint never matched
        (its log: "calls N hits 0") and every call computed; it passes like an honest kernel."""
        if os.path.exists(self.log):
            os.remove(self.log)
        c = self.assert_honest(args, env=dict(env or {}, NVFP4_CHEAT_LOG=self.log))
        with open(self.log) as f:
            calls, hits = (int(w) for w in f.read().split()[1::2])
        self.assertGreater(calls, 2, "the log is written at every call")
        self.assertEqual(hits, 0, "the content memo replayed an output: the operands repeated")
        return c


class VerdictHost(Verdict):
    ENV = HOST_ENV
    HONEST = "numpy_submission"
    # 48 samples: 32 of them verified (the default), so a cheat that skips half its calls is
    # seen in all but 2^-32 of runs. No warm-up time: the calls are counted (count, random).
    SAMPLES = 48
    SMALL = ["--m", "40", "--n", "24", "--k", "96", "--l", "2", "--iters", str(SAMPLES),
             "--warmup", "1", "--warmup-time", "0"]
    # random at p = 0.05 under --check-every-call: its fixed seeds skip calls 6, 13, 34, 62, 82
    # (plugin) and 6, 11, 45, 57, 65, 80 (Python) of the first 100 (call 0 the first call,
    # call 1 the warm-up).
    LONG = ["--m", "40", "--n", "24", "--k", "96", "--l", "2", "--iters", "100", "--warmup", "1",
            "--warmup-time", "0"]
    # the late deferred threads' tests: C 1 MiB; calls 0 (first), 1-3 (timed), 4 (the recheck)
    LATE = ["--m", "512", "--n", "512", "--k", "64", "--l", "2", "--iters", "3", "--warmup", "0",
            "--warmup-time", "0"]
    # predict and fault: a C of 12288 elements (24 KiB: whole pages to protect, more elements
    # than a run gathers); --dist gpumode (the default), whose operand seed A's bytes give away.
    PAGED = ["--m", "128", "--n", "96", "--k", "256", "--iters", "20", "--warmup", "1",
             "--warmup-time", "0"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        rc, out, err = run("--kernel-py", os.path.join(SRC, "examples", "submissions",
                                                       "numpy_submission.py"), "--list", env=HOST_ENV)
        cls.python = rc == 0
        cls.python_why = err.strip()
        address = "data[0].ctypes.data"
        cls.write_python({
            "lazy": LAZY.format(honest=cls.HONEST),
            "memo": MEMO.format(honest=cls.HONEST, address=address),
            "memo_shape": MEMO_SHAPE.format(honest=cls.HONEST),
            "fast": FAST_NUMPY,
            "count": COUNT.format(honest=cls.HONEST),
            "random": RANDOM.format(honest=cls.HONEST),
            "content_memo": CONTENT_MEMO.format(
                honest=cls.HONEST, imports="", fingerprint=FINGERPRINT_NUMPY,
                address_of="x.ctypes.data"),
            "deferred": DEFERRED,
            "predict": PREDICT_NUMPY,
            "verdict_file": VERDICT_FILE,
        })

    def need_python(self):
        if not self.python:
            self.skipTest(f"this nvfp4bench has no Python kernels: {self.python_why}")

    def plugin(self, kernel, shape=None):
        return ["--kernel-lib", HOST_LIB, "--kernel", kernel, *(shape or self.SMALL)]

    def python_kernel(self, name, shape=None):
        return ["--kernel-py", self.py(name), "--kernel", "py:" + name, *(shape or self.SMALL)]

    def test_lazy_plugin_fails_the_timed_outputs(self):
        c = self.assert_caught(self.plugin("lazy-host"), "timed_outputs")
        self.assertTrue(c["verdict"]["timed_outputs"]["secret"])

    def test_poison_aware_plugin_fails_the_timed_outputs(self):
        # C holds a random finite fill before every timed call, never the poison.
        self.assert_caught(self.plugin("fast-host"), "timed_outputs")

    def test_counting_plugin_fails_the_timed_outputs(self):
        self.assert_caught(self.plugin("count-host"), "timed_outputs")

    def test_deferred_plugin_fails_the_timed_outputs(self):
        # The outputs are gathered as soon as the call returns: its thread has not written C.
        self.assert_caught(self.plugin("deferred-host"), "timed_outputs")

    def test_memo_plugins_fail(self):
        # Fresh operands before every sample: a timed sample may catch the replay before the
        # recheck does.
        for kernel in ["memo-host", "memo-shape-host"]:
            with self.subTest(kernel=kernel):
                self.assert_caught(self.plugin(kernel), ("timed_outputs", "recheck"))

    def test_content_memo_plugin_never_replays(self):
        self.assert_never_replayed(self.plugin("content-memo-host"))

    def test_random_plugin_fails(self):
        self.assert_caught(self.plugin("random-host"), "timed_outputs", env={"NVFP4_CHEAT_P": "0.5"})
        self.assert_caught([*self.plugin("random-host", self.LONG), "--check-every-call"],
                           "timed_outputs", env={"NVFP4_CHEAT_P": "0.05"}, every_call=True)

    def test_every_plugin_fails_under_check_every_call(self):
        for kernel in ["lazy-host", "fast-host", "count-host", "deferred-host", "memo-host",
                       "memo-shape-host"]:
            with self.subTest(kernel=kernel):
                self.assert_caught([*self.plugin(kernel), "--check-every-call"], "timed_outputs",
                                   every_call=True)

    def test_deferred_thread_after_the_case_ends(self):
        # The thread reads the operands and writes C 300 ms after the first wrong call ended the
        # case: the run's buffers (C 1 MiB here) are kept until its process exits, so the case
        # is still incorrect, not a crash (exit 3) or a corrupted report.
        self.assert_caught([*self.plugin("deferred-host", self.LATE), "--check-every-call"],
                           "timed_outputs", env={"NVFP4_CHEAT_DELAY_MS": "300"}, every_call=True)

    def test_deferred_thread_of_the_recheck(self):
        # Calls 0-3 (the first, three timed) compute in the call; the recheck's (call 4) returns
        # at once and its thread reads the recheck's operands 300 ms later, after the case ended:
        # they are the case's buffers, kept, so the recheck fails (under ASan a freed copy would
        # be a heap-use-after-free, the process's end).
        self.assert_caught(self.plugin("deferred-host", self.LATE), "recheck",
                           env={"NVFP4_CHEAT_DELAY_MS": "300", "NVFP4_CHEAT_DEFER_FROM": "4"})

    def assert_never_found(self, args):
        """predict: caught, and its log says it never found the secret (calls N found 0)."""
        if os.path.exists(self.log):
            os.remove(self.log)
        c = self.assert_caught(args, "timed_outputs", env={"NVFP4_CHEAT_LOG": self.log},
                               every_call="--check-every-call" in args)
        with open(self.log) as f:
            calls, found = (int(w) for w in f.read().split()[1::2])
        self.assertGreater(calls, 1)
        self.assertEqual(found, 0, "the secret followed from the operands")
        return c

    def test_predicting_plugin_never_finds_the_secret(self):
        self.assert_never_found(self.plugin("predict-host", self.PAGED))
        self.assert_never_found([*self.plugin("predict-host", self.PAGED), "--check-every-call"])

    def test_python_predict_never_finds_the_secret(self):
        self.need_python()
        self.assert_never_found(self.python_kernel("predict", self.PAGED))

    def test_fault_handler_plugin_fails(self):
        # C's pages protected after the call: the verdict's read of C fails (it never faults), in
        # both forms of the check.
        for extra in [[], ["--check-every-call"]]:
            with self.subTest(extra=extra):
                c = self.assert_caught([*self.plugin("fault-host", self.PAGED), *extra], "timed_outputs")
                self.assertIn("left its output unreadable after the call", c["message"])

    def test_pipe_plugin_fails(self):
        # It returns without computing unless it finds a pipe of the tool's to fill: C is read
        # with process_vm_readv (or a pipe made for that one read), so there is none.
        self.assert_caught(self.plugin("pipe-host", self.PAGED), "timed_outputs")

    def test_libstdcxx_clock_rewrite_gains_nothing(self):
        # It hides 99 % of its calls' time from clock_gettime as libstdc++ calls it; the tool's
        # clock is its own clock_gettime call, so the median stays its calls' real time (its log:
        # the shortest real call, measured by a syscall of its own).
        if os.path.exists(self.log):
            os.remove(self.log)
        rc, out, c = self.case(*self.plugin("stdclock-host", self.PAGED), env={"NVFP4_CHEAT_LOG": self.log})
        self.assertEqual(rc, 0, out)
        with open(self.log) as f:
            words = f.read().split()
        patched, real_us = int(words[1]), float(words[3])
        median_us = c["kernel_timing"]["stats"]["median_us"]
        self.assertGreater(median_us, 0.5 * real_us,
                           f"timed {median_us} us, its calls took {real_us} us (slot patched: {patched})")

    def test_seccomp_notification_plugin_fails(self):
        # The tool's filter refuses seccomp(): the cheat cannot hold the read (its log says so)
        # and returns without computing.
        if os.path.exists(self.log):
            os.remove(self.log)
        self.assert_caught(self.plugin("notif-host", self.PAGED), "timed_outputs",
                           env={"NVFP4_CHEAT_LOG": self.log})
        with open(self.log) as f:
            self.assertEqual(f.read().split(), ["installed", "0"])

    def assert_no_verdict(self, args):
        rc, out, err = run(*args, env=self.ENV, cwd=self.dir)
        self.assertEqual(rc, 3, out + err)
        self.assertIn("ended the process without a verdict", err)

    def test_verdict_file_writers_fail(self):
        self.assert_no_verdict(self.plugin("verdict-file-host"))
        if self.python:
            self.assert_no_verdict(self.python_kernel("verdict_file"))

    def test_report_forged_at_exit_fails(self):
        # A run with a kernel's code in it ends as soon as its verdict and reports are out, so
        # the kernel's atexit handler never runs: incorrect (exit 1), isolated or not.
        for extra in [[], ["--no-isolate"]]:
            with self.subTest(extra=extra):
                rc, out, c = self.case(*self.plugin("exit-forge-host"), *extra)
                self.assertEqual(rc, 1, out)
                self.assertEqual(c["disposition"], "incorrect", c["message"])

    def test_clock_rewriting_plugin_crashes(self):
        # The tool is linked with full RELRO: its GOT is read-only once loaded, so the write
        # that would swap its clock crashes the call (exit 3) instead of passing at any speed.
        rc, out, c = self.case(*self.plugin("clock-host"))
        self.assertEqual(rc, 3, out)
        self.assertIn("kernel 'clock-host'", out)
        self.assertIn("crashed: SIGSEGV", out)
        self.assertNotEqual(c["disposition"], "passed")

    def test_python_cheats_fail(self):
        self.need_python()
        for name in ["lazy", "fast", "count", "deferred"]:
            with self.subTest(kernel=name):
                self.assert_caught(self.python_kernel(name), "timed_outputs")
        for name in ["memo", "memo_shape"]:
            with self.subTest(kernel=name):
                self.assert_caught(self.python_kernel(name), ("timed_outputs", "recheck"))
        with self.subTest(kernel="random"):
            self.assert_caught(self.python_kernel("random"), "timed_outputs",
                               env={"NVFP4_CHEAT_P": "0.5"})
            self.assert_caught([*self.python_kernel("random", self.LONG), "--check-every-call"],
                               "timed_outputs", env={"NVFP4_CHEAT_P": "0.05"}, every_call=True)
        with self.subTest(kernel="count", every_call=True):
            self.assert_caught([*self.python_kernel("count"), "--check-every-call"],
                               "timed_outputs", every_call=True)

    def test_python_content_memo_never_replays(self):
        self.need_python()
        self.assert_never_replayed(self.python_kernel("content_memo"))

    def test_honest_kernels_pass_with_the_checks_recorded(self):
        kernels = [[], ["--kernel-lib", os.path.join(PLUGIN_DIR, "libnvfp4_example_host.so"),
                        "--kernel", "example-host"]]
        if self.python:
            kernels.append(["--kernel-py", self.py(self.HONEST), "--kernel", "py:" + self.HONEST])
        for kernel in kernels:
            for every_call in [False, True]:
                with self.subTest(kernel=kernel[-1] if kernel else "host", every_call=every_call):
                    c = self.assert_honest([*kernel, *self.SMALL], every_call=every_call)
                    v = c["verdict"]
                    self.assertEqual(v["timed_outputs"]["samples"],
                                     self.SAMPLES if every_call else min(32, self.SAMPLES))
                    self.assertEqual(v["recheck"]["against"], "the exact CPU value at 1920 elements")
                    self.assertNotEqual(v["recheck"]["seed"], c["problem"]["seed"])
                    if not kernel:
                        self.assertEqual(c["kernel"]["name"], "host")

    def test_few_samples_are_all_verified(self):
        c = self.assert_honest(["--m", "40", "--n", "24", "--k", "96", "--l", "2", "--iters", "4",
                                "--warmup", "1", "--warmup-time", "0"])
        self.assertEqual(c["verdict"]["timed_outputs"]["samples"], 4)


class VerdictGpu(Verdict):
    HONEST = "torch_submission"
    SHAPE = ["--m", "128", "--n", "7168", "--k", "16384"]  # the README's default problem
    # The cheats' GEMM is the plain one of examples/plugins/example_gemm.hpp (one thread per
    # element): a smaller problem keeps a call near a millisecond.
    CHEAT_SHAPE = ["--m", "128", "--n", "1024", "--k", "2048"]
    # 40 samples, 32 verified. No warm-up time: calls are counted.
    TIMING = ["--iters", "40", "--warmup", "1", "--warmup-time", "0"]
    MODES = ["cold", "hot", "rotate", "graph"]
    # random at p = 0.05 under --check-every-call: the device's fixed seed skips launches 1, 30,
    # 56, 58, 82, ... of the first 100.
    LONG = ["--iters", "100", "--warmup", "1", "--warmup-time", "0"]

    @staticmethod
    def batch(mode):
        """24 launches per rotate/graph sample (each with its own operand copy and C slot), under
        the 64 the stream hold takes; the automatic batch at the cheats' small problem is a few
        hundred (copies totalling 3x L2)."""
        return ["--batch", "24"] if mode in ("rotate", "graph") else []

    @classmethod
    def setUpClass(cls):
        why = gpu_reason()
        if why:
            raise unittest.SkipTest(f"needs a CUDA GPU: {why}")
        super().setUpClass()
        cls.write_python({
            "lazy": LAZY.format(honest=cls.HONEST),
            "memo": MEMO.format(honest=cls.HONEST, address="data[0].data_ptr()"),
            "memo_shape": MEMO_SHAPE.format(honest=cls.HONEST),
            "count": COUNT.format(honest=cls.HONEST),
            "random": RANDOM.format(honest=cls.HONEST),
            "content_memo": CONTENT_MEMO.format(
                honest=cls.HONEST, imports="import torch", fingerprint=FINGERPRINT_TORCH,
                address_of="x.data_ptr()"),
            "other_stream": OTHER_STREAM,
            "host_wait": HOST_WAIT,
            "host_work": HOST_WORK,
        })
        rc, out, err = run("--kernel-py", cls.py("lazy"), "--list", timeout=300)
        line = next((l for l in out.splitlines() if l.split()[:1] == ["py:lazy"]), "")
        cls.torch_why = "" if rc == 0 and "unavailable" not in line else (line or err).strip()

    def plugin(self, kernel, mode, timing=None):
        return ["--kernel-lib", DEVICE_LIB, "--kernel", kernel, "--mode", mode, *self.CHEAT_SHAPE,
                *(timing or self.TIMING), *self.batch(mode)]

    def python_kernel(self, name, mode, timing=None):
        return ["--kernel-py", self.py(name), "--kernel", "py:" + name, "--mode", mode,
                *self.CHEAT_SHAPE, *(timing or self.TIMING), *self.batch(mode)]

    def need_torch(self):
        if self.torch_why:
            self.skipTest(f"no torch with CUDA in the embedded Python: {self.torch_why}")

    def test_plugins_that_skip_work_fail_the_timed_outputs_in_every_mode(self):
        # count and random decide on the device (a launch counter), so graph replays count too.
        for kernel in ["lazy", "fast", "count", "random"]:
            for mode in self.MODES:
                with self.subTest(kernel=kernel, mode=mode):
                    self.assert_caught(self.plugin(kernel, mode), "timed_outputs",
                                       env={"NVFP4_CHEAT_P": "0.5"})

    def test_random_plugin_fails_under_check_every_call_in_every_mode(self):
        for mode in self.MODES:
            with self.subTest(mode=mode):
                self.assert_caught([*self.plugin("random", mode, self.LONG), "--check-every-call"],
                                   "timed_outputs", env={"NVFP4_CHEAT_P": "0.05"}, every_call=True)

    def test_memo_plugins_fail(self):
        for kernel in ["memo", "memo-shape"]:
            for mode in ["cold", "hot", "rotate"]:  # memo allocates on a miss: no graph capture
                with self.subTest(kernel=kernel, mode=mode):
                    self.assert_caught(self.plugin(kernel, mode), ("timed_outputs", "recheck"))

    def test_content_memo_plugin_never_replays_in_every_mode(self):
        # Its lookup is on the device (no host wait), so it runs in every mode, graphs too.
        for mode in self.MODES:
            with self.subTest(mode=mode):
                self.assert_never_replayed(self.plugin("content-memo", mode))

    def test_deferred_thread_after_the_timing_ends(self):
        # The thread of the first timed call waits for the recheck (the next call given the first
        # call's C) and launches that timed call's GEMM there, after the timing has ended: its
        # operand copy and C slot must still be the allocations the call was given (the driver's
        # buffer IDs), kept by the case, and the GEMM must end cleanly. The timed calls wrote
        # nothing in their windows: caught by the timed outputs; the recheck's own call is right.
        timing = ["--iters", "3", "--warmup", "0", "--warmup-time", "0"]
        for mode in ["cold", "rotate"]:
            with self.subTest(mode=mode):
                if os.path.exists(self.log):
                    os.remove(self.log)
                args = ["--kernel-lib", DEVICE_LIB, "--kernel", "deferred", "--mode", mode,
                        *self.CHEAT_SHAPE, *timing, *(["--batch", "4"] if mode == "rotate" else [])]
                c = self.assert_caught(args, "timed_outputs",
                                       env={"NVFP4_CHEAT_LATE": "1", "NVFP4_CHEAT_LOG": self.log})
                self.assertTrue(c["verdict"]["recheck"]["verification"]["passed"], c["verdict"])
                with open(self.log) as f:
                    self.assertEqual(f.read().strip(), "late same-buffers cudaSuccess")

    def test_other_stream_plugin_fails_in_every_mode(self):
        # Its stream is not the tool's: the held stream shows an idle window, and the GEMM still
        # runs (or has not run) when the outputs are gathered or the next sample starts. In graph
        # mode the capture holds the empty kernel alone (the side launch ran at capture).
        for mode in self.MODES:
            with self.subTest(mode=mode):
                self.assert_caught(self.plugin("other-stream", mode), ("isolation", "timed_outputs"))

    def timed_with_its_wait(self, args, honest_median):
        """A call that waits on the host for device work makes the hold (which fills every SM)
        time out: it is timed without the hold from then on, its wait inside the window, so it
        gains nothing: right, and not faster than the same GEMM done honestly."""
        rc, out, c = self.case(*args)
        self.assertEqual(rc, 0, out)
        kt = c["kernel_timing"]
        self.assertFalse(kt["stream_held"], kt)
        self.assertIn("waited on the host", kt["stream_hold_note"])
        self.assertGreaterEqual(kt["stats"]["median_us"], 0.8 * honest_median, kt["stats"])
        return c

    def honest_example_median(self, mode):
        rc, out, c = self.case("--kernel-lib", os.path.join(PLUGIN_DIR, "libnvfp4_example_cuda.so"),
                               "--kernel", "example-cuda", "--mode", mode, *self.CHEAT_SHAPE,
                               *self.TIMING, *self.batch(mode))
        self.assertEqual(rc, 0, out)
        return c["kernel_timing"]["stats"]["median_us"]

    def test_host_wait_plugin_gains_nothing(self):
        # It synchronizes inside run(): it cannot be captured in a graph. On the H200 its side
        # GEMM lands beside a hold that is still starting, whose CTAs then start ~680 us apart:
        # incorrect by the isolation check (cold, rotate); where not, it is timed with its wait.
        for mode in ["cold", "hot", "rotate"]:
            with self.subTest(mode=mode):
                rc, out, c = self.case(*self.plugin("host-wait", mode))
                if rc == 1:
                    self.assertEqual(c["disposition"], "incorrect", out)
                    self.assertFalse(c["verdict"]["isolation"]["passed"], c["verdict"])
                    self.assertIn("work outside the timed stream", c["message"])
                else:
                    self.timed_with_its_wait(self.plugin("host-wait", mode), self.honest_example_median(mode))

    def test_host_work_plugin_fails_the_isolation_check(self):
        # Milliseconds on the host per call (copies, a CPU GEMM), one small copy in the window:
        # the held call's host time against its window. Not in graph mode: it synchronizes. Four
        # launches a rotate sample, so that a held sample stays well inside the hold's 100 ms.
        small = ["--m", "16", "--n", "64", "--k", "256"]
        timing = ["--iters", "5", "--warmup", "1", "--warmup-time", "0"]
        for mode in ["cold", "hot", "rotate"]:
            with self.subTest(mode=mode):
                args = ["--kernel-lib", DEVICE_LIB, "--kernel", "host-work", "--mode", mode, *small, *timing,
                        *(["--batch", "4"] if mode == "rotate" else [])]
                c = self.assert_caught(args, "isolation")
                self.assertIn("on the host per call while the stream was held", c["message"])

    def test_torch_host_work_fails_the_isolation_check(self):
        self.need_torch()
        args = ["--kernel-py", self.py("host_work"), "--kernel", "py:host_work", "--mode", "cold", "--m", "16",
                "--n", "64", "--k", "256", "--iters", "5", "--warmup", "1", "--warmup-time", "0"]
        c = self.assert_caught(args, "isolation")
        self.assertIn("on the host per call while the stream was held", c["message"])

    def test_torch_side_stream_not_waited_for_gains_nothing(self):
        # Caught where its GEMM is still running when the gather reads C behind the window. On
        # the H100 (2026-12-05, 128x1024x2048 cold) its calls waited on the host, the hold timed
        # out, and it was timed without the hold at 243 us a call, the side GEMM inside every
        # window: right, and no faster than the honest submission. Either is a pass for the
        # verdict; a fast and right timing is not.
        self.need_torch()
        env = {"NVFP4_CHEAT_P": "0.5", "NVFP4_CHEAT_LOG": self.log}
        rc, out, c = self.case(*self.python_kernel("other_stream", "cold"), env=env)
        if rc == 1:
            self.assertEqual(c["disposition"], "incorrect", out)
            v = c["verdict"]
            self.assertFalse(v["isolation"]["passed"] and v["timed_outputs"]["passed"], v)
            return
        self.assertEqual(rc, 0, out)
        rc, hout, h = self.case(*self.python_kernel(self.HONEST, "cold"))
        self.assertEqual(rc, 0, hout)
        self.assertGreaterEqual(c["kernel_timing"]["stats"]["median_us"],
                                0.8 * h["kernel_timing"]["stats"]["median_us"], out)

    def test_torch_cheats_fail(self):
        # Not in graph mode: a graph captures one Python call, so what the Python decides per
        # call (count, random, lazy) is decided once; a host wait cannot be captured at all.
        self.need_torch()
        for mode in ["cold", "rotate"]:
            for name, by in [("lazy", "timed_outputs"), ("count", "timed_outputs"),
                             ("random", "timed_outputs"), ("memo", ("timed_outputs", "recheck")),
                             ("memo_shape", ("timed_outputs", "recheck"))]:
                with self.subTest(kernel=name, mode=mode):
                    self.assert_caught(self.python_kernel(name, mode), by,
                                       env={"NVFP4_CHEAT_P": "0.5", "NVFP4_CHEAT_LOG": self.log})
        with self.subTest(kernel="random", every_call=True):
            self.assert_caught([*self.python_kernel("random", "cold", self.LONG),
                                "--check-every-call"], "timed_outputs",
                               env={"NVFP4_CHEAT_P": "0.05"}, every_call=True)

    def test_honest_kernels_pass_in_every_mode(self):
        kernels = [["--kernel", "sm90", *self.SHAPE],
                   ["--kernel-lib", os.path.join(PLUGIN_DIR, "libnvfp4_example_cuda.so"),
                    "--kernel", "example-cuda", *self.CHEAT_SHAPE]]
        if not self.torch_why:
            kernels.append(["--kernel-py", self.py(self.HONEST), "--kernel", "py:" + self.HONEST,
                            *self.CHEAT_SHAPE])
        for kernel in kernels:
            for mode in self.MODES:
                for every_call in [False, True]:
                    with self.subTest(kernel=kernel[kernel.index("--kernel") + 1], mode=mode,
                                      every_call=every_call):
                        c = self.assert_honest(["--mode", mode, *kernel, *self.TIMING,
                                                *self.batch(mode)], every_call=every_call)
                        self.assertTrue(c["kernel_timing"]["stream_held"], c["kernel_timing"])
                        self.assertTrue(c["verdict"]["isolation"]["passed"], c["verdict"])
                        if mode in ("rotate", "graph"):
                            self.assertGreater(c["verdict"]["timed_outputs"]["slots"], 1)


if __name__ == "__main__":
    nvfp4cli.main()
