"""Slurm: every task of ``srun`` is one training process; Slurm's variables say which.

``srun --ntasks-per-node=2 python train.py`` (or ``--ntasks=2``) starts the processes and gives each
``SLURM_NTASKS`` (the world size), ``SLURM_PROCID`` (its rank), ``SLURM_LOCALID`` (its rank on the
node), ``SLURM_NODEID`` and ``SLURM_NODELIST`` (the job's nodes; rank 0 runs on the first). As in
Lightning, the rendezvous port is derived from the job id (its last four digits + 15000), so every
task computes the same one without talking to the others, and ``MASTER_ADDR``/``MASTER_PORT`` win
when set.

When Slurm did *not* start the training processes, :meth:`SLURMEnvironment.detect` says so:

- an interactive allocation (``srun --pty bash``, ``salloc``: the job is named ``bash`` or
  ``interactive``), where the user starts processes by hand (as in Lightning);
- a batch script that runs ``python train.py`` itself, without ``srun``, in a job of several tasks:
  that one process is not task 0 of N, it is alone (only ``srun`` sets ``SLURM_STEP_ID``). Lightning
  takes it for rank 0 of N and waits forever for the others; here the Trainer starts its own processes;
- ``mpirun`` inside an allocation: Open MPI's or Hydra's rank variables disagree with Slurm's (which
  describe ``mpirun``'s helpers, not the ranks), so the MPI environment answers instead.

Requeueing: ``#SBATCH --signal=USR1@90`` asks Slurm to send ``SIGUSR1`` to every task 90 s before the
time limit; a job that saves a checkpoint then and calls :meth:`SLURMEnvironment.requeue` (``scontrol
requeue``) is started again from the top, with ``SLURM_RESTART_COUNT`` one higher.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess

from ..errors import MisconfigurationException
from .base import ClusterEnvironment, check_below, read_int, read_port

__all__ = ["INTERACTIVE_JOB_NAMES", "SLURMEnvironment", "tasks_per_node"]

#: Job names of an allocation a person works in (``srun --pty bash``, ``salloc``), as in Lightning.
INTERACTIVE_JOB_NAMES = ("bash", "interactive")
#: Ports derived from the job id lie in 15000..24999 (Lightning's rule, so both pick the same port).
PORT_BASE = 15000
#: The port when there is no job id either (Lightning's default).
DEFAULT_PORT = 12910
_HINT = "srun sets it for every task; start the training script with `srun python train.py`."
#: MPI launchers' (rank, size) variables; if they disagree with Slurm's, mpirun started this process.
_MPI_VARIABLES = (("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"), ("PMI_RANK", "PMI_SIZE"))
_TASKS = re.compile(r"^(\d+)(?:\(x(\d+)\))?$")


def _ignore_sigterm() -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _interactive() -> bool:
    return os.environ.get("SLURM_JOB_NAME") in INTERACTIVE_JOB_NAMES


def _number(name: str) -> int | None:
    """A variable's value as an int, None when unset or not a number (detection never raises)."""
    value = (os.environ.get(name) or "").strip()
    return int(value) if value.isascii() and value.isdigit() else None


def _started_by_mpirun() -> bool:
    slurm = (_number("SLURM_PROCID"), _number("SLURM_NTASKS"))
    for rank, size in _MPI_VARIABLES:
        theirs = (_number(rank), _number(size))
        if theirs != (None, None) and theirs != slurm:
            return True
    return False


def _batch_script_alone() -> bool:
    in_step = "SLURM_STEP_ID" in os.environ or "SLURM_STEPID" in os.environ
    ntasks = _number("SLURM_NTASKS")
    return not in_step and ntasks is not None and ntasks > 1


def tasks_per_node(text: str, source: str = "SLURM_TASKS_PER_NODE") -> list[int]:
    """Slurm's task counts per node (``"2(x3),1"`` is ``[2, 2, 2, 1]``), in node order."""
    counts: list[int] = []
    for piece in text.split(","):
        match = _TASKS.match(piece.strip())
        if match is None:
            raise MisconfigurationException(
                f"environment variable {source}={text!r} is not Slurm's tasks-per-node list; expected counts "
                "such as '2' or '2(x3),1'."
            )
        counts += [int(match.group(1))] * int(match.group(2) or 1)
    return counts


class SLURMEnvironment(ClusterEnvironment):
    """Processes started by ``srun`` (Lightning's ``SLURMEnvironment``).

    ``auto_requeue`` and ``requeue_signal`` are Lightning's arguments: whether the Trainer should save
    and requeue the job when ``requeue_signal`` (``SIGUSR1`` by default) arrives.
    """

    name = "slurm"
    description = "Slurm: tasks started by srun (SLURM_NTASKS, SLURM_PROCID, SLURM_LOCALID, SLURM_NODELIST)"
    detect_priority = 300

    def __init__(self, auto_requeue: bool = True, requeue_signal: signal.Signals | None = None) -> None:
        self.auto_requeue = auto_requeue
        if requeue_signal is None and hasattr(signal, "SIGUSR1"):
            requeue_signal = signal.SIGUSR1
        self.requeue_signal = requeue_signal

    @property
    def creates_processes_externally(self) -> bool:
        return True

    @property
    def main_address(self) -> str:
        address = (os.environ.get("MASTER_ADDR") or "").strip()
        if address:
            return address
        nodes = os.environ.get("SLURM_NODELIST")
        if nodes is None:
            return "127.0.0.1"
        from .hostlist import first_host  # its parser costs every start-up ~2 ms; read only under Slurm

        first = first_host(nodes, "SLURM_NODELIST")
        if first is None:
            raise MisconfigurationException(f"environment variable SLURM_NODELIST={nodes!r} names no node. {_HINT}")
        return first

    @property
    def main_port(self) -> int:
        port = read_port("MASTER_PORT")
        if port is not None:
            return port
        job_id = os.environ.get("SLURM_JOB_ID")
        if job_id is None:
            return DEFAULT_PORT
        read_int("SLURM_JOB_ID", minimum=0, hint=_HINT)
        return int(job_id.strip()[-4:]) + PORT_BASE

    @staticmethod
    def detect() -> bool:
        """Whether ``srun`` started this process as one task of the training job (see the module docstring)."""
        if "SLURM_NTASKS" not in os.environ or _interactive():
            return False
        return not (_batch_script_alone() or _started_by_mpirun())

    @staticmethod
    def job_name() -> str | None:
        return os.environ.get("SLURM_JOB_NAME")

    @staticmethod
    def job_id() -> int | None:
        """The job's id; None outside a job and in an interactive allocation (as in Lightning)."""
        if _interactive():
            return None
        value = _number("SLURM_JOB_ID")
        return value

    def world_size(self) -> int:
        return read_int("SLURM_NTASKS", minimum=1, hint=_HINT)

    def global_rank(self) -> int:
        return check_below("SLURM_PROCID", read_int("SLURM_PROCID", hint=_HINT), "SLURM_NTASKS", self.world_size())

    def local_rank(self) -> int:
        return check_below("SLURM_LOCALID", read_int("SLURM_LOCALID", hint=_HINT), "SLURM_NTASKS", self.world_size())

    def node_rank(self) -> int:
        rank = read_int("SLURM_NODEID", hint=_HINT)
        if (os.environ.get("SLURM_NNODES") or "").strip():
            return check_below("SLURM_NODEID", rank, "SLURM_NNODES", read_int("SLURM_NNODES", minimum=1))
        return rank

    def validate_settings(self, num_devices: int, num_nodes: int) -> None:
        """The Trainer's ``devices`` and ``num_nodes`` against what Slurm started.

        Lightning refuses ``--ntasks`` without ``--ntasks-per-node`` outright; here ``--ntasks`` is
        accepted when Slurm placed the same number of tasks, ``devices``, on every node, and refused
        with the placement when it did not.
        """
        if self.job_name() in INTERACTIVE_JOB_NAMES:  # the Trainer or Fabric starts the processes there
            return
        per_node = (os.environ.get("SLURM_NTASKS_PER_NODE") or "").strip()
        if per_node:
            count = read_int("SLURM_NTASKS_PER_NODE", minimum=1)
            if count != num_devices:
                raise MisconfigurationException(
                    f"devices={num_devices}, but the job runs SLURM_NTASKS_PER_NODE={count} tasks per node: the "
                    f"number of tasks per node configured in SLURM (--ntasks-per-node={count}) does not match "
                    f"devices={num_devices}. Set devices={count}."
                )
        nodes = (os.environ.get("SLURM_NNODES") or "").strip()
        if nodes:
            count = read_int("SLURM_NNODES", minimum=1)
            if count != num_nodes:
                raise MisconfigurationException(
                    f"num_nodes={num_nodes}, but the job runs on SLURM_NNODES={count} nodes: the number of nodes "
                    f"configured in SLURM (--nodes={count}) does not match num_nodes={num_nodes}. "
                    f"Set num_nodes={count}."
                )
        source = "SLURM_STEP_TASKS_PER_NODE" if "SLURM_STEP_TASKS_PER_NODE" in os.environ else "SLURM_TASKS_PER_NODE"
        placement = os.environ.get(source)
        if placement:
            counts = tasks_per_node(placement, source)
            if any(count != num_devices for count in counts):
                raise MisconfigurationException(
                    f"devices={num_devices}, but Slurm placed {source}={placement!r} tasks on the job's nodes; "
                    f"every node must run devices={num_devices} of them. Ask for --ntasks-per-node={num_devices}."
                )
        if "SLURM_NTASKS" in os.environ:  # the product is checked where Slurm says how many tasks it started
            super().validate_settings(num_devices, num_nodes)

    # ---- requeueing --------------------------------------------------------------------------------
    @staticmethod
    def requeue_job_id() -> str:
        """The id ``scontrol requeue`` takes: ``JOB`` or, in a job array, ``ARRAYJOB_TASK``."""
        array_job = (os.environ.get("SLURM_ARRAY_JOB_ID") or "").strip()
        if array_job:
            job = read_int("SLURM_ARRAY_JOB_ID")
            task = read_int("SLURM_ARRAY_TASK_ID", hint="Slurm sets it in every task of a job array.")
            return f"{job}_{task}"
        return str(read_int("SLURM_JOB_ID", hint=_HINT))

    def requeue(self, timeout: float = 60) -> None:
        """Put this job back in the queue (``scontrol requeue``); Slurm ends its processes and starts it again.

        Raises ``RuntimeError`` with scontrol's message when it refuses (a job submitted with
        ``--no-requeue``, or a cluster with ``JobRequeue=0``).
        """
        scontrol = shutil.which("scontrol")
        if scontrol is None:
            raise RuntimeError("cannot requeue the job: `scontrol` is not on PATH in this process")
        command = [scontrol, "requeue", self.requeue_job_id()]
        # Slurm ends the job's processes (SIGTERM) as soon as it accepts the requeue, scontrol among them
        # when it runs inside the job: it ignores SIGTERM so that its own exit code says what happened.
        result = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            preexec_fn=_ignore_sigterm,
        )
        if result.returncode != 0:
            message = (result.stderr or result.stdout).strip()
            raise RuntimeError(f"`{' '.join(command)}` failed with exit code {result.returncode}: {message}")
