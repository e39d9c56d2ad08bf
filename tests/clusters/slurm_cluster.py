"""A real one-node Slurm cluster for the tests: MUNGE, slurmctld and slurmd started from a generated config.

Slurm comes from Debian's packages (``scripts/slurm/install.sh``); everything the cluster writes
(MUNGE key and socket, ``slurm.conf``, the controller's state, slurmd's spool, logs) lives in one
temporary folder, the daemons run in the foreground as children of this process (so they are
reaped, and die with it: ``PR_SET_PDEATHSIG``), and :meth:`SlurmCluster.stop` cancels every job,
shuts the daemons down, checks that no process of the cluster is left and removes the folder.

The cluster is as small as Slurm allows: one node with this process's CPUs, ``proctrack/linuxproc``
and ``task/none`` (no cgroups, so it runs in a container), ``select/cons_tres`` per CPU, no
accounting, ``SlurmUser=root``. Ports are chosen free at start, so several clusters (two test runs
on one machine) do not meet.

Where Slurm cannot run, :func:`ensure_installed` and :func:`start_cluster` raise
:class:`SlurmUnavailable` with the reason; the pytest fixture turns that into a skip, or into a
failure with ``TESTS_SLURM=require`` (CI, where Slurm must run). ``TESTS_SLURM=off`` skips without
trying to install. Run this file to time installation and start-up and to run one ``srun``::

    python tests/clusters/slurm_cluster.py
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
INSTALL_SCRIPT = REPO / "scripts" / "slurm" / "install.sh"
#: Every program the cluster and the tests run.
COMMANDS = ("munged", "mungekey", "slurmctld", "slurmd", "srun", "sbatch", "sinfo", "scontrol", "squeue", "scancel")
MODE_ENV = "TESTS_SLURM"
MODES = ("auto", "require", "off")
#: Where Debian puts the daemons (``/usr/sbin`` is not on every PATH).
_SBIN = ("/usr/sbin", "/sbin")
_PR_SET_PDEATHSIG = 1


class SlurmUnavailable(Exception):
    """Slurm cannot be installed or started here; the message says why."""


def mode() -> str:
    """``TESTS_SLURM``: ``auto`` (install when root with apt-get, else skip), ``require`` or ``off``."""
    value = os.environ.get(MODE_ENV, "auto").strip().lower() or "auto"
    if value not in MODES:
        raise ValueError(f"{MODE_ENV}={value!r} is invalid: expected one of {', '.join(MODES)}")
    return value


def which(command: str) -> str | None:
    """The program's path, looking in the sbin folders too."""
    path = os.pathsep.join([os.environ.get("PATH", ""), *_SBIN])
    return shutil.which(command, path=path)


def missing_commands() -> list[str]:
    return [command for command in COMMANDS if which(command) is None]


@dataclass(frozen=True)
class Installation:
    """How Slurm came to be here: already installed, or installed now (and how long that took)."""

    installed_now: bool
    seconds: float
    output: str


def ensure_installed(timeout: float = 900) -> Installation:
    """Install Slurm and MUNGE with ``scripts/slurm/install.sh`` when a command is missing.

    Raises :class:`SlurmUnavailable` when this machine cannot install them (not Linux, not root, no
    apt-get, ``TESTS_SLURM=off``) or when apt-get fails; the message carries the script's output.
    """
    missing = missing_commands()
    if not missing:
        return Installation(False, 0.0, "already installed")
    if mode() == "off":
        raise SlurmUnavailable(f"Slurm is not installed (missing {', '.join(missing)}) and {MODE_ENV}=off")
    if not sys.platform.startswith("linux"):
        raise SlurmUnavailable(f"Slurm is not installed (missing {', '.join(missing)}) and runs on Linux only")
    if os.geteuid() != 0:
        raise SlurmUnavailable(
            f"Slurm is not installed (missing {', '.join(missing)}) and installing it needs root: "
            f"run `sudo {INSTALL_SCRIPT.relative_to(REPO)}` once"
        )
    if shutil.which("apt-get") is None:
        raise SlurmUnavailable(
            f"Slurm is not installed (missing {', '.join(missing)}) and {INSTALL_SCRIPT.relative_to(REPO)} "
            "installs Debian's packages, which needs apt-get"
        )
    begin = time.perf_counter()
    result = subprocess.run(["bash", str(INSTALL_SCRIPT)], capture_output=True, text=True, timeout=timeout)
    seconds = time.perf_counter() - begin
    output = (result.stdout + result.stderr).strip()
    if result.returncode != 0 or missing_commands():
        raise SlurmUnavailable(
            f"{INSTALL_SCRIPT.relative_to(REPO)} failed (exit {result.returncode}) after {seconds:.0f} s: "
            f"{output[-2000:]}"
        )
    return Installation(True, seconds, output)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _die_with_parent() -> None:
    """In the daemon, before exec: receive SIGTERM when the test process ends, however it ends."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)


def first_job_id(controller_port: int) -> int:
    """The cluster's first job id: 1 + 100 x (the controller's port mod 100), one of 100 blocks of 100 ids."""
    return 1 + 100 * (controller_port % 100)


def render_config(root: Path, node: str, cpus: int, ports: tuple[int, int], socket_path: Path) -> str:
    """``slurm.conf`` for one node named ``node`` at 127.0.0.1 with ``cpus`` CPUs, everything under ``root``."""
    controller_port, node_port = ports
    return "\n".join(
        [
            f"ClusterName=accelplug{os.getpid()}",
            f"SlurmctldHost={node}(127.0.0.1)",
            "SlurmUser=root",
            "SlurmdUser=root",
            f"SlurmctldPort={controller_port}",
            f"SlurmdPort={node_port}",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={socket_path}",
            f"StateSaveLocation={root / 'state'}",
            f"SlurmdSpoolDir={root / 'spool'}",
            f"SlurmctldPidFile={root / 'run' / 'slurmctld.pid'}",
            f"SlurmdPidFile={root / 'run' / 'slurmd.pid'}",
            f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
            f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
            # No cgroups: processes are tracked by parentage, tasks are not bound to CPUs.
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SchedulerType=sched/backfill",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "ReturnToService=2",
            # Finished jobs stay visible to `scontrol show job` for 5 minutes (the tests read them back).
            "MinJobAge=300",
            # A training job's rendezvous port is 15000 + the last four digits of its job id, so two clusters alive
            # at once (the xdist workers' own, or two test runs) must not number their jobs alike: each starts
            # at a block of 100 ids chosen by its controller's port, which no other live cluster has.
            f"FirstJobId={first_job_id(controller_port)}",
            "KillWait=5",
            "InactiveLimit=0",
            f"NodeName={node} NodeHostname={node} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN",
            f"PartitionName=debug Nodes={node} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]
    )


@dataclass
class SlurmCluster:
    """A running one-node cluster; its commands run with :meth:`run` (``SLURM_CONF`` points at it)."""

    root: Path
    conf: Path
    node: str
    cpus: int
    daemons: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    #: Seconds from the first daemon's start to the node reported idle.
    start_seconds: float = 0.0
    stopped: bool = False

    # ---- commands ---------------------------------------------------------------------------------
    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        """This process's environment without any Slurm job's variables, with ``SLURM_CONF`` set.

        The tests may themselves run inside a Slurm job; its ``SLURM_*`` variables would otherwise
        leak into ``srun``/``sbatch`` as options.
        """
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_"))}
        # nor a rendezvous of the test process's own (a set MASTER_ADDR/MASTER_PORT wins over the job id's port)
        for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE", "LOCAL_RANK", "NODE_RANK", "GROUP_RANK"):
            env.pop(name, None)
        env["SLURM_CONF"] = str(self.conf)
        env["PATH"] = os.pathsep.join([env.get("PATH", ""), *_SBIN])
        env.update(extra or {})
        return env

    def run(
        self,
        args: Sequence[str],
        *,
        timeout: float = 60,
        check: bool = True,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """Run a Slurm command (``["srun", ...]``) against this cluster."""
        result = subprocess.run(
            list(args), env=self.env(env), cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"{' '.join(args)} exited {result.returncode}\nstdout: {result.stdout}\nstderr: {result.stderr}"
                f"\n{self.log_tail()}"
            )
        return result

    def sbatch(self, script: str, cwd: Path, *, name: str = "job.sh", env: dict[str, str] | None = None) -> int:
        """Write ``script`` to ``cwd/name``, submit it from ``cwd`` and return the job id."""
        path = cwd / name
        path.write_text(script, encoding="utf-8")
        path.chmod(0o755)
        result = self.run(["sbatch", "--parsable", str(path)], cwd=cwd, env=env)
        return int(result.stdout.strip().split(";")[0])

    def job(self, job_id: int) -> dict[str, str]:
        """``scontrol show job`` as a dict (``JobState``, ``Restarts``, ``ExitCode``...)."""
        text = self.run(["scontrol", "show", "job", "--oneliner", str(job_id)]).stdout
        return dict(re.findall(r"(\w+)=(\S*)", text))

    def wait_for(self, job_id: int, states: Sequence[str], *, timeout: float = 60, poll: float = 0.2) -> dict[str, str]:
        """Wait until the job is in one of ``states`` (``RUNNING``, ``PENDING``, ``COMPLETED``...)."""
        deadline = time.monotonic() + timeout
        info: dict[str, str] = {}
        while time.monotonic() < deadline:
            info = self.job(job_id)
            if info.get("JobState") in states:
                return info
            time.sleep(poll)
        raise AssertionError(
            f"job {job_id} did not reach {'/'.join(states)} within {timeout:g} s: {info}\n{self.log_tail()}"
        )

    def wait_until(self, condition: Callable[[], bool], what: str, *, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return
            time.sleep(0.2)
        raise AssertionError(f"{what} did not happen within {timeout:g} s\n{self.log_tail()}")

    def jobs(self) -> list[int]:
        result = self.run(["squeue", "--noheader", "--format=%i"], check=False)
        return [int(line.split("_")[0]) for line in result.stdout.split() if line.strip()]

    def node_state(self) -> str:
        result = self.run(["sinfo", "--noheader", "--Node", "--format=%t"], check=False, timeout=10)
        return result.stdout.strip() if result.returncode == 0 else f"sinfo failed: {result.stderr.strip()}"

    def log_tail(self, lines: int = 15) -> str:
        """The end of every daemon's log, for an assertion message."""
        parts = []
        for path in sorted((self.root / "log").glob("*.log")):
            text = path.read_text(encoding="utf-8", errors="replace").splitlines()[-lines:]
            parts.append(f"--- {path.name}\n" + "\n".join(text))
        return "\n".join(parts)

    # ---- life cycle -------------------------------------------------------------------------------
    def _spawn(self, name: str, args: list[str]) -> None:
        log = (self.root / "log" / f"{name}.out").open("wb")
        with log:
            self.daemons[name] = subprocess.Popen(
                args,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=self.env(),
                preexec_fn=_die_with_parent,
            )

    def _check_daemons(self) -> bool:
        """Raise :class:`SlurmUnavailable` when a daemon has exited; False otherwise (to chain in a wait)."""
        for name, process in self.daemons.items():
            if process.poll() is not None:
                raise SlurmUnavailable(
                    f"{name} exited with {process.returncode} while the cluster started\n{self.log_tail()}"
                )
        return False

    def leftover_processes(self) -> list[str]:
        """Processes (other than this one) that still belong to the cluster: they name its folder in
        their command line or environment (``SLURM_CONF``), or run in it."""
        root = str(self.root)
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                environ = (entry / "environ").read_bytes().decode(errors="replace")
                cwd = os.readlink(entry / "cwd")
            except OSError:  # gone meanwhile, or a kernel thread
                continue
            if root in cmdline or root in environ or cwd.startswith(root):
                found.append(f"{entry.name}: {cmdline.strip()}")
        return found

    def stop(self) -> None:
        """Cancel every job, stop the daemons, and remove the cluster's folder.

        Raises ``AssertionError`` (after killing them) when processes of the cluster outlived it.
        """
        if self.stopped:
            return
        self.stopped = True
        try:
            if self.daemons.get("slurmctld") is not None and self.daemons["slurmctld"].poll() is None:
                jobs = self.jobs()
                if jobs:
                    self.run(["scancel", *map(str, jobs)], check=False)
                    with contextlib.suppress(AssertionError):
                        self.wait_until(lambda: not self.jobs(), "cancelling the remaining jobs", timeout=30)
                self.run(["scontrol", "shutdown"], check=False, timeout=15)
            for name in ("slurmd", "slurmctld", "munged"):
                process = self.daemons.get(name)
                if process is None:
                    continue
                if name == "munged":
                    process.terminate()
                try:
                    process.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(timeout=5)
            leftovers = self.leftover_processes()
            for line in leftovers:
                with contextlib.suppress(OSError):
                    os.kill(int(line.split(":")[0]), signal.SIGKILL)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)
        if leftovers:
            raise AssertionError("processes of the Slurm cluster outlived it (killed now):\n" + "\n".join(leftovers))


def start_cluster(*, timeout: float = 60) -> SlurmCluster:
    """Start MUNGE, slurmctld and slurmd and wait until the node is idle.

    Raises :class:`SlurmUnavailable` when a command is missing or the node does not become idle
    (with the daemons' logs); nothing is left running or on disk then.
    """
    missing = missing_commands()
    if missing:
        raise SlurmUnavailable(f"Slurm is not installed here (missing {', '.join(missing)})")
    # MUNGE refuses a socket in a folder that others cannot enter: the root is 0755, the key's 0700.
    root = Path(tempfile.mkdtemp(prefix="accelplug-slurm-"))
    root.chmod(0o755)
    for folder in ("munge", "key", "state", "spool", "run", "log"):
        (root / folder).mkdir()
    (root / "munge").chmod(0o755)
    (root / "key").chmod(0o700)
    node = socket.gethostname().split(".")[0]
    cpus = len(os.sched_getaffinity(0))
    conf = root / "slurm.conf"
    socket_path = root / "munge" / "munge.socket.2"
    conf.write_text(render_config(root, node, cpus, (free_port(), free_port()), socket_path), encoding="utf-8")
    cluster = SlurmCluster(root, conf, node, cpus)
    begin = time.perf_counter()
    try:
        key = root / "key" / "munge.key"
        subprocess.run([which("mungekey") or "mungekey", "--create", f"--keyfile={key}"], check=True, timeout=30)
        cluster._spawn(
            "munged",
            [
                which("munged") or "munged",
                "--foreground",
                f"--key-file={key}",
                f"--socket={socket_path}",
                f"--pid-file={root / 'run' / 'munged.pid'}",
                f"--log-file={root / 'log' / 'munged.log'}",
                f"--seed-file={root / 'key' / 'munged.seed'}",
            ],
        )
        cluster.wait_until(lambda: cluster._check_daemons() or socket_path.exists(), "munged's socket")
        cluster._spawn("slurmctld", [which("slurmctld") or "slurmctld", "-D", "-f", str(conf)])
        cluster._spawn("slurmd", [which("slurmd") or "slurmd", "-D", "-f", str(conf), "-N", node])
        deadline = time.monotonic() + timeout
        state = ""
        while time.monotonic() < deadline:
            cluster._check_daemons()
            state = cluster.node_state()
            if state == "idle":
                break
            time.sleep(0.2)
        else:
            raise SlurmUnavailable(
                f"the node did not become idle within {timeout:g} s (sinfo: {state})\n{cluster.log_tail()}"
            )
    except (SlurmUnavailable, OSError, subprocess.SubprocessError, AssertionError) as exc:
        logs = cluster.log_tail()
        with contextlib.suppress(AssertionError):
            cluster.stop()
        if isinstance(exc, SlurmUnavailable):
            raise
        raise SlurmUnavailable(f"the cluster did not start: {exc}\n{logs}") from exc
    cluster.start_seconds = time.perf_counter() - begin
    return cluster


@contextlib.contextmanager
def running_cluster() -> Iterator[SlurmCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


def main() -> int:
    """Install if needed, start a cluster, run ``srun --ntasks=2`` in it, stop it, and print the times."""
    try:
        installation = ensure_installed()
        begin = time.perf_counter()
        cluster = start_cluster()
    except SlurmUnavailable as exc:
        print(f"Slurm unavailable: {exc}", file=sys.stderr)
        return 2
    try:
        srun_begin = time.perf_counter()
        ranks = cluster.run(
            ["srun", "--ntasks=2", sys.executable, "-c", "import os; print(os.environ['SLURM_PROCID'])"]
        ).stdout.split()
        srun_seconds = time.perf_counter() - srun_begin
    finally:
        stop_begin = time.perf_counter()
        cluster.stop()
        stop_seconds = time.perf_counter() - stop_begin
    install = f"installed now in {installation.seconds:.1f} s" if installation.installed_now else "already installed"
    print(f"slurm: {install}")
    print(f"cluster start (munged, slurmctld, slurmd, node idle): {cluster.start_seconds:.2f} s")
    print(f"srun --ntasks=2: ranks {sorted(ranks)} in {srun_seconds:.2f} s")
    print(f"stop (jobs cancelled, daemons ended, folder removed): {stop_seconds:.2f} s")
    print(f"total from start to stopped: {time.perf_counter() - begin:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
