"""MPI launchers: ``mpirun``/``mpiexec`` started every process and told each its rank in its own variables.

No ``mpi4py`` is needed (Lightning's ``MPIEnvironment`` asks MPI itself through it): the launchers
set the answers in the environment before the script starts. Captured from the real launchers
(Debian 12's Open MPI 4.1 and MPICH 4.0, ``mpirun -n 2 env``; Intel MPI's ``mpiexec`` is Hydra too):

- Open MPI's ``mpirun``: ``OMPI_COMM_WORLD_SIZE``, ``OMPI_COMM_WORLD_RANK``,
  ``OMPI_COMM_WORLD_LOCAL_RANK``, ``OMPI_COMM_WORLD_LOCAL_SIZE`` (the names Open MPI documents);
  job-wide ids ``OMPI_MCA_ess_base_jobid`` and ``PMIX_NAMESPACE``.
- MPICH's and Intel MPI's ``mpiexec`` (Hydra): ``PMI_SIZE``, ``PMI_RANK``, ``MPI_LOCALRANKID``,
  ``MPI_LOCALNRANKS``; no job-wide id.

What the variables do not say, and what is done instead:

- *rank 0's host*: ``MASTER_ADDR`` when set; ``127.0.0.1`` when every process is on this node
  (local size = world size); otherwise it must be given (``mpirun -x MASTER_ADDR=$(hostname)``,
  ``mpiexec -genv MASTER_ADDR $(hostname)``), and its absence is an error saying so.
- *the port*: ``MASTER_PORT`` when set; else derived from Open MPI's job id (15000..24999, the same
  on every rank); else torch's default 29500 (two Hydra jobs on one node must then set
  ``MASTER_PORT``).
- *the node rank*: ``NODE_RANK`` when set; else ``rank // local size``, which holds when ranks are
  placed node by node (both launchers' default); placements that break it (``--map-by node``) are
  detected and refused unless ``NODE_RANK`` is set.

Detected, as in Lightning, only when the world has more than one process: ``mpirun -n 1 python
train.py`` is left to the Trainer, which may start processes of its own.
"""

from __future__ import annotations

import os
import zlib
from dataclasses import dataclass

from ..errors import MisconfigurationException
from .base import ClusterEnvironment, check_below, read_int, read_port

__all__ = ["MPIEnvironment", "MPILauncher"]

#: The port when neither MASTER_PORT nor a job id is known: torch's own default.
DEFAULT_PORT = 29500
PORT_BASE = 15000


@dataclass(frozen=True)
class MPILauncher:
    """One MPI launcher's names for the answers (see the module docstring)."""

    name: str
    size: str
    rank: str
    local_rank: str
    local_size: str
    job_ids: tuple[str, ...] = ()


_LAUNCHERS = (
    MPILauncher(
        "Open MPI",
        "OMPI_COMM_WORLD_SIZE",
        "OMPI_COMM_WORLD_RANK",
        "OMPI_COMM_WORLD_LOCAL_RANK",
        "OMPI_COMM_WORLD_LOCAL_SIZE",
        ("OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE"),
    ),
    MPILauncher("MPICH/Intel MPI (Hydra)", "PMI_SIZE", "PMI_RANK", "MPI_LOCALRANKID", "MPI_LOCALNRANKS"),
)


def _size(launcher: MPILauncher) -> int | None:
    value = (os.environ.get(launcher.size) or "").strip()
    return int(value) if value.isascii() and value.isdigit() else None


class MPIEnvironment(ClusterEnvironment):
    """Processes started by an MPI launcher (Lightning's ``MPIEnvironment``, without mpi4py)."""

    name = "mpi"
    description = "MPI: processes started by mpirun/mpiexec (Open MPI's OMPI_COMM_WORLD_*, MPICH/Intel MPI's PMI_*)"
    detect_priority = 100

    @staticmethod
    def detect() -> bool:
        return any((_size(launcher) or 0) > 1 for launcher in _LAUNCHERS)

    def launcher(self) -> MPILauncher:
        """The launcher whose variables are set (the first of the table that has its world size set)."""
        for launcher in _LAUNCHERS:
            if (os.environ.get(launcher.size) or "").strip():
                return launcher
        names = ", ".join(launcher.size for launcher in _LAUNCHERS)
        raise MisconfigurationException(
            f"no MPI launcher's variables are set (looked for {names}); start the script with mpirun or mpiexec."
        )

    def _hint(self) -> str:
        return f"{self.launcher().name}'s launcher sets it for every process."

    @property
    def creates_processes_externally(self) -> bool:
        return True

    def world_size(self) -> int:
        return read_int(self.launcher().size, minimum=1, hint=self._hint())

    def global_rank(self) -> int:
        launcher = self.launcher()
        rank = read_int(launcher.rank, hint=self._hint())
        return check_below(launcher.rank, rank, launcher.size, self.world_size())

    def local_size(self) -> int:
        launcher = self.launcher()
        size = read_int(launcher.local_size, minimum=1, hint=self._hint())
        if size > self.world_size():
            raise MisconfigurationException(
                f"environment variable {launcher.local_size}={size} contradicts {launcher.size}="
                f"{self.world_size()}: a node cannot run more processes than the job has."
            )
        return size

    def local_rank(self) -> int:
        launcher = self.launcher()
        rank = read_int(launcher.local_rank, hint=self._hint())
        return check_below(launcher.local_rank, rank, launcher.local_size, self.local_size())

    def node_rank(self) -> int:
        if (os.environ.get("NODE_RANK") or "").strip():
            return read_int("NODE_RANK")
        launcher = self.launcher()
        rank, local_rank, local_size = self.global_rank(), self.local_rank(), self.local_size()
        if rank % local_size != local_rank:
            raise MisconfigurationException(
                f"{launcher.rank}={rank} with {launcher.local_rank}={local_rank} and {launcher.local_size}="
                f"{local_size}: the ranks were not placed node by node (as with `--map-by node`), so this "
                "node's index cannot be derived from them. Set NODE_RANK for every process, or place ranks "
                "by slot (the launchers' default)."
            )
        return rank // local_size

    @property
    def main_address(self) -> str:
        address = (os.environ.get("MASTER_ADDR") or "").strip()
        if address:
            return address
        if self.local_size() == self.world_size():
            return "127.0.0.1"
        raise MisconfigurationException(
            f"the job's {self.world_size()} MPI processes run on several nodes, and MPI does not say which host "
            "runs rank 0: set MASTER_ADDR for every process (`mpirun -x MASTER_ADDR=$(hostname)`, "
            "`mpiexec -genv MASTER_ADDR $(hostname)`)."
        )

    @property
    def main_port(self) -> int:
        port = read_port("MASTER_PORT")
        if port is not None:
            return port
        for name in self.launcher().job_ids:
            job = (os.environ.get(name) or "").strip()
            if job:
                return PORT_BASE + zlib.crc32(job.encode()) % 10000
        return DEFAULT_PORT
