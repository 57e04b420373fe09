#!/usr/bin/env python3
"""scripts/slurm-sweep.sh under a real Slurm (docs/slurm.md): a single-host cluster from Debian's
slurm-wlm and munge, started and stopped here (munged with a generated key, slurmctld and slurmd
with a slurm.conf written here, all state in a temporary folder), then the commands of
docs/slurm.md for CPU-only nodes: an array of 3 over configs/smoke.json and the dependent merge
job; and the fault: a task sent SIGTERM mid-case (scancel --full --signal=TERM, what a time limit
does), requeued by the script, resumed, merged.

No skipping: a machine that cannot run the daemons fails this test with the daemons' logs.
Environment: NVFP4BENCH (the tool), NVFP4_SOURCE_DIR (the repository: scripts/, configs/);
NVFP4_SLURM_KEEP=1 keeps the temporary folder."""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "cli"))
from nvfp4cli import BIN, SRC, jsonl, load  # noqa: E402  (the CLI tests' shared helper)

DAEMONS = ["munged", "slurmctld", "slurmd"]
CLIENTS = ["sbatch", "scontrol", "scancel", "sinfo"]


def free_ports(n):
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


def which(name):
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin:/usr/bin")


def tail(path, lines=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"({e})"


class Cluster:
    """munged + slurmctld + slurmd on this host; everything under one temporary folder."""

    def __init__(self):
        missing = [n for n in DAEMONS + CLIENTS if not which(n)]
        if missing:
            raise RuntimeError(f"not installed: {', '.join(missing)} (Debian: slurm-wlm munge; "
                               "scripts/setup --tests installs them)")
        self.dir = tempfile.mkdtemp(prefix="nvfp4-slurm-")
        os.chmod(self.dir, 0o755)  # munged wants the socket's folder reachable by all
        self.procs = {}
        self.logs = {}
        d = self.dir
        for sub in ("state", "spool", "log", "submit"):
            os.makedirs(os.path.join(d, sub))
        self.env = dict(os.environ, SLURM_CONF=os.path.join(d, "slurm.conf"))
        for k in [k for k in self.env if k.startswith(("SLURM_", "SBATCH_", "SQUEUE_", "SALLOC_"))]:
            if k != "SLURM_CONF":
                del self.env[k]

    def start(self):
        d = self.dir
        key = os.path.join(d, "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        self.munge_socket = os.path.join(d, "munge.socket")
        self._spawn("munged", [which("munged"), "--foreground", "--force", f"--socket={self.munge_socket}",
                               f"--key-file={key}", f"--pid-file={d}/munged.pid",
                               f"--log-file={d}/log/munged.log", f"--seed-file={d}/munged.seed"])
        self._wait(lambda: os.path.exists(self.munge_socket), 20, "munged did not create its socket")

        # The node as slurmd sees it (CPUs, sockets, cores), under the name slurmd will use.
        self.node = socket.gethostname().split(".")[0]
        hw = subprocess.run([which("slurmd"), "-C"], capture_output=True, text=True, timeout=30)
        if hw.returncode != 0:
            raise RuntimeError(f"slurmd -C failed ({hw.returncode}): {hw.stderr.strip()}")
        fields = dict(re.findall(r"(\w+)=(\S+)", hw.stdout.splitlines()[0]))
        node_hw = " ".join(f"{k}={fields[k]}" for k in
                           ("CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore") if k in fields)
        self.cpus = int(fields.get("CPUs", "1"))
        ctld_port, d_port = free_ports(2)
        user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
        conf = f"""# written by tests/slurm/slurm_test.py
ClusterName=nvfp4test
SlurmctldHost={self.node}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={d_port}
SlurmUser={user}
SlurmdUser={user}
AuthType=auth/munge
CredType=cred/munge
# cred_expire is also how long a requeued job waits before it may start again (default 120 s)
AuthInfo=socket={self.munge_socket},cred_expire=10
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
ReturnToService=2
KillWait=30
MinJobAge=3600
MailProg=/bin/true
NodeName={self.node} NodeAddr=127.0.0.1 {node_hw} RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
"""
        with open(self.env["SLURM_CONF"], "w") as f:
            f.write(conf)
        self._spawn("slurmctld", [which("slurmctld"), "-D", "-i", "-f", self.env["SLURM_CONF"]])
        self._spawn("slurmd", [which("slurmd"), "-D", "-N", self.node, "-f", self.env["SLURM_CONF"]])
        self._wait(lambda: self.sinfo_state() in ("idle",), 60,
                   "the node did not become idle")

    def _spawn(self, name, argv):
        log = os.path.join(self.dir, "log", name + ".out")
        self.logs[name] = log
        with open(log, "w") as f:
            self.procs[name] = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT, env=self.env,
                                                stdin=subprocess.DEVNULL)

    def _wait(self, ok, timeout, what):
        deadline = time.time() + timeout
        while time.time() < deadline:
            for name, p in self.procs.items():
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode}\n{self.report()}")
            if ok():
                return
            time.sleep(0.2)
        raise RuntimeError(f"{what} in {timeout} s\n{self.report()}")

    def sinfo_state(self):
        p = self.run("sinfo", "-h", "-N", "-o", "%T", check=False)
        return p.stdout.strip().rstrip("*~#!%$@^-") if p.returncode == 0 else ""

    def run(self, *argv, check=True, cwd=None, timeout=60):
        p = subprocess.run(list(argv), capture_output=True, text=True, env=self.env, cwd=cwd, timeout=timeout)
        if check and p.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)}: exit {p.returncode}: {p.stderr.strip()}")
        return p

    def jobs(self, jid):
        """{'<id>' or '<id>_<task>': {field: value}} from scontrol show job -o."""
        p = self.run("scontrol", "show", "job", "-o", str(jid), check=False)
        out = {}
        for line in p.stdout.splitlines():
            f = dict(re.findall(r"(\w+)=(\S*)", line))
            if "ArrayTaskId" in f:
                out[f"{f['ArrayJobId']}_{f['ArrayTaskId']}"] = f
            elif "JobId" in f:
                out[f["JobId"]] = f
        return out

    def report(self):
        parts = []
        for name in DAEMONS:
            for path in (os.path.join(self.dir, "log", name + ".out"), os.path.join(self.dir, "log", name + ".log")):
                if os.path.exists(path):
                    parts.append(f"--- {path} (last lines)\n{tail(path)}")
        return "\n".join(parts)

    def stop(self):
        if "slurmctld" in self.procs and self.procs["slurmctld"].poll() is None:
            self.run("scancel", "--user", subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip(),
                     check=False)
            deadline = time.time() + 40
            while time.time() < deadline and self.run("squeue", "-h", check=False).stdout.strip():
                time.sleep(0.5)
        for name in reversed(DAEMONS):
            p = self.procs.get(name)
            if p and p.poll() is None:
                p.terminate()
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait(10)
        if os.environ.get("NVFP4_SLURM_KEEP"):
            print(f"kept {self.dir}", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


class SlurmSweep(unittest.TestCase):
    cluster = None

    @classmethod
    def setUpClass(cls):
        t0 = time.time()
        missing = [n for n in DAEMONS + CLIENTS if not which(n)]
        if missing and not shutil.which("apt-get"):
            # A machine without a package registry (the GPU image): scripts/setup could not install
            # Slurm here. Where apt-get exists (CI), a missing Slurm is a failure, not a skip.
            raise unittest.SkipTest(f"Slurm is not installed and this machine has no apt-get to "
                                    f"install it ({', '.join(missing)} missing)")
        cls.cluster = Cluster()
        try:
            cls.cluster.start()
        except BaseException:
            cls.cluster.stop()
            raise
        print(f"\nslurm: {cls.cluster.node}, {cls.cluster.cpus} CPUs, up in {time.time() - t0:.1f} s "
              f"({cls.cluster.dir})", file=sys.stderr)
        # The submit folder looks like the repository root to the script: build/nvfp4bench,
        # scripts/, configs/ (the repository's smoke.json and this test's slow.json).
        sub = cls.submit = os.path.join(cls.cluster.dir, "submit")
        os.makedirs(os.path.join(sub, "build"))
        os.makedirs(os.path.join(sub, "configs"))
        os.symlink(BIN, os.path.join(sub, "build", "nvfp4bench"))
        os.symlink(os.path.join(SRC, "scripts"), os.path.join(sub, "scripts"))
        os.symlink(os.path.join(SRC, "configs", "smoke.json"), os.path.join(sub, "configs", "smoke.json"))
        shutil.copy(os.path.join(HERE, "slow.json"), os.path.join(sub, "configs", "slow.json"))

    @classmethod
    def tearDownClass(cls):
        if cls.cluster:
            cls.cluster.stop()

    def tearDown(self):
        result = getattr(self._outcome, "result", None)
        problems = (result.failures + result.errors) if result else []
        if any(t is self for t, _ in problems):
            logs = sorted(f for f in os.listdir(self.submit) if f.endswith(".out"))
            for f in logs:
                print(f"--- {f}\n{tail(os.path.join(self.submit, f), 60)}", file=sys.stderr)
            print(self.cluster.report(), file=sys.stderr)

    # helpers
    def sh(self, cmd, timeout=60):
        """A command line of docs/slurm.md, run by bash in the submit folder."""
        p = self.cluster.run("bash", "-c", cmd, cwd=self.submit, timeout=timeout)
        return p.stdout.strip()

    def wait_done(self, jid, timeout):
        """Until every job (array task) of jid has ended; returns them."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            jobs = self.cluster.jobs(jid)
            if jobs and all(j["JobState"] not in ("PENDING", "RUNNING", "REQUEUED", "COMPLETING",
                                                  "CONFIGURING", "SUSPENDED", "REQUEUE_HOLD")
                            for j in jobs.values()):
                return jobs
            time.sleep(0.5)
        self.fail(f"job {jid} not done in {timeout} s: "
                  + "; ".join(f"{k} {v.get('JobState')} {v.get('Reason')}" for k, v in self.cluster.jobs(jid).items()))

    def read(self, name):
        with open(os.path.join(self.submit, name), errors="replace") as f:
            return f.read()

    def cases_of(self, config):
        out = subprocess.run([BIN, "sweep", os.path.join(self.submit, "configs", config), "--list-cases"],
                             capture_output=True, text=True, check=True).stdout
        return int(re.search(r"^(\d+) cases", out, re.M).group(1))

    def check_merged(self, merged, n):
        self.assertEqual([c["sweep"]["index"] for c in merged["cases"]], list(range(n)))
        self.assertTrue(merged["sweep"]["complete"])
        self.assertEqual(merged["sweep"]["counts"]["passed"], n, merged["sweep"]["counts"])
        self.assertEqual(len(merged["sweep"]["merged_from"]), 3)
        for c in merged["cases"]:  # nothing half-measured: every case measured all its iterations
            self.assertEqual(c["disposition"], "passed", c.get("message"))
            self.assertEqual(c["kernel_timing"]["stats"]["count"], c["sweep"]["params"]["iters"], c["sweep"])
            self.assertEqual(c["sweep"]["child"], "exited with code 0")

    def test_1_array_of_three_then_merge(self):
        """docs/slurm.md, CPU-only nodes: an array of 3 over configs/smoke.json, the merge job."""
        t0 = time.time()
        n = self.cases_of("smoke.json")
        jid = self.sh("sbatch --parsable --array=0-2 --gres=none scripts/slurm-sweep.sh configs/smoke.json results")
        mid = self.sh(f"sbatch --parsable --dependency=afterany:{jid} --output=nvfp4-merge-%j.out --wrap "
                      "\"build/nvfp4bench merge results/smoke.json results/smoke.shard-*-of-3.json\"")
        tasks = self.wait_done(jid, 300)
        self.assertEqual(sorted(tasks), [f"{jid}_{i}" for i in range(3)])
        for k, t in tasks.items():
            self.assertEqual((t["JobState"], t["ExitCode"]), ("COMPLETED", "0:0"), k)
        merge = self.wait_done(mid, 120)[mid]
        self.assertEqual((merge["JobState"], merge["ExitCode"]), ("COMPLETED", "0:0"), self.read(f"nvfp4-merge-{mid}.out"))
        print(f"\nslurm: array of 3 + merge over smoke.json ({n} cases) in {time.time() - t0:.1f} s", file=sys.stderr)

        merged = load(os.path.join(self.submit, "results", "smoke.json"))
        self.check_merged(merged, n)
        for i in range(3):
            shard = load(os.path.join(self.submit, "results", f"smoke.shard-{i}-of-3.json"))
            self.assertEqual(shard["sweep"]["shard"], {"index": i, "count": 3})
            self.assertEqual([c["sweep"]["index"] for c in shard["cases"]], list(range(i, n, 3)))
            self.assertTrue(shard["sweep"]["complete"])
            # The task's log where the docs say: nvfp4-sweep-<array job>_<task>.out in the submit folder.
            log = self.read(f"nvfp4-sweep-{jid}_{i}.out")
            self.assertIn(f"array task {i}, run 1): shard {i}/3", log)
            self.assertIn(f"shard {i}/3 (of {n})", log)
            self.assertIn("one worker on the host backend", log)
        self.assertIn("results/smoke.json", self.read(f"nvfp4-merge-{mid}.out"))

    def test_2_sigterm_mid_case_requeue_resume_merge(self):
        """A task sent SIGTERM mid-case as at its time limit: requeued, resumed; each case once."""
        t0 = time.time()
        n = self.cases_of("slow.json")
        # --array=1-3: task ids that do not start at 0 still make shards 0/3..2/3.
        jid = self.sh("sbatch --parsable --array=1-3 --gres=none scripts/slurm-sweep.sh configs/slow.json results")
        mid = self.sh(f"sbatch --parsable --dependency=afterany:{jid} --output=nvfp4-merge-%j.out --wrap "
                      "\"build/nvfp4bench merge results/slow.json results/slow.shard-*-of-3.json\"")
        # Task 2 (shard 1) as 2 minutes before its time limit (the script's --signal=B:TERM@120:
        # the shell only); task 3 (shard 2) as at the limit itself (the shell and the sweep).
        victims = {f"{jid}_2": (1, "--batch"), f"{jid}_3": (2, "--full")}
        before = {}
        for victim, (shard, how) in victims.items():
            records = os.path.join(self.submit, "results", f"slow.shard-{shard}-of-3.jsonl")
            deadline = time.time() + 300
            while time.time() < deadline:  # one case recorded, the next one running
                state = self.cluster.jobs(victim).get(victim, {}).get("JobState")
                if state == "RUNNING" and os.path.exists(records) and len(jsonl(records)) >= 2:
                    break
                self.assertNotIn(state, ("COMPLETED", "FAILED"), "the task ended before the signal: make slow.json longer")
                time.sleep(0.05)
            else:
                self.fail(f"no case of {victim} finished in 300 s")
            before[victim] = len(jsonl(records)) - 1
            self.sh(f"scancel {how} --signal=TERM {victim}")
            print(f"\nslurm: scancel {how} --signal=TERM {victim} after {before[victim]} of 3 cases", file=sys.stderr)

        tasks = self.wait_done(jid, 400)
        for k, t in tasks.items():
            self.assertEqual((t["JobState"], t["ExitCode"]), ("COMPLETED", "0:0"), k)
            self.assertEqual(t["Restarts"], "1" if k in victims else "0", k)
        merge = self.wait_done(mid, 120)[mid]
        self.assertEqual((merge["JobState"], merge["ExitCode"]), ("COMPLETED", "0:0"), self.read(f"nvfp4-merge-{mid}.out"))
        print(f"slurm: array of 3 with 2 requeues + merge over slow.json ({n} cases) in {time.time() - t0:.1f} s",
              file=sys.stderr)

        for victim, (shard, how) in victims.items():
            # The log holds both runs (--open-mode=append): interrupted mid-case, requeued, resumed.
            log = self.read(f"nvfp4-sweep-{victim}.out")
            first, _, second = log.partition(f"array task {victim.split('_')[1]}, run 2)")
            self.assertTrue(second, log)
            self.assertIn("SIGTERM: stopping the sweep", first)
            self.assertRegex(first, r"sweep: interrupted by SIG(INT|TERM): [1-9]\d* cases not run")
            self.assertIn("requeueing job", first)
            self.assertIn(f"({before[victim]} resumed)", second)
            self.assertNotIn("interrupted", second)
            # Every case of the shard exactly once in its records; its report says what was resumed.
            records = os.path.join(self.submit, "results", f"slow.shard-{shard}-of-3.jsonl")
            self.assertEqual(sorted(r["sweep"]["index"] for r in jsonl(records)[1:]), list(range(shard, n, 3)))
            rep = load(os.path.join(self.submit, "results", f"slow.shard-{shard}-of-3.json"))
            self.assertEqual(rep["sweep"]["shard"], {"index": shard, "count": 3})
            self.assertEqual(rep["sweep"]["resumed"], before[victim])
        # The merged report: every case once, all passed, each with all its iterations.
        self.check_merged(load(os.path.join(self.submit, "results", "slow.json")), n)


if __name__ == "__main__":
    unittest.main()
