"""IBM Spectrum LSF: ``jsrun`` starts the processes; its variables and the job's rank file place them.

``jsrun`` gives each process ``JSM_NAMESPACE_SIZE`` (world size), ``JSM_NAMESPACE_RANK`` and
``JSM_NAMESPACE_LOCAL_RANK``; LSF writes the job's hosts to the file named by ``LSB_DJOB_RANKFILE``,
one line per slot, the first line being the launch node, which runs no training process. As in
Lightning, rank 0's host is the first compute host of that file, a process's node rank is the
position of its host among the compute hosts, and the port is derived from ``LSB_JOBID``
(``LSB_JOBID % 1000 + 10000``) unless ``MASTER_PORT`` is set.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from ..errors import MisconfigurationException
from .base import ClusterEnvironment, check_below, read_int, read_port, read_str

__all__ = ["LSFEnvironment"]

_REQUIRED = ("LSB_JOBID", "LSB_DJOB_RANKFILE", "JSM_NAMESPACE_LOCAL_RANK", "JSM_NAMESPACE_SIZE")
_HINT = "jsrun sets it for every process; start the training script with `jsrun`."
PORT_BASE = 10000


class LSFEnvironment(ClusterEnvironment):
    """Processes started by LSF's ``jsrun`` (Lightning's ``LSFEnvironment``)."""

    name = "lsf"
    description = "IBM LSF: processes started by jsrun (JSM_NAMESPACE_SIZE/RANK/LOCAL_RANK, LSB_DJOB_RANKFILE)"
    detect_priority = 200

    @property
    def creates_processes_externally(self) -> bool:
        return True

    @staticmethod
    def detect() -> bool:
        return all(name in os.environ for name in _REQUIRED)

    def compute_hosts(self) -> list[str]:
        """The job's compute hosts, one per slot, in the rank file's order (without its first line, the launch node)."""
        path = read_str("LSB_DJOB_RANKFILE", hint="LSF sets it for every job.")
        try:
            lines = Path(path).read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise MisconfigurationException(
                f"environment variable LSB_DJOB_RANKFILE={path!r} names a file that cannot be read: {exc.strerror}."
            ) from None
        hosts = [line.strip() for line in lines if line.strip()][1:]
        if not hosts:
            raise MisconfigurationException(
                f"the LSF rank file LSB_DJOB_RANKFILE={path!r} lists no compute host after the launch node "
                "(its first line)."
            )
        return hosts

    @property
    def main_address(self) -> str:
        return self.compute_hosts()[0]

    @property
    def main_port(self) -> int:
        port = read_port("MASTER_PORT")
        if port is not None:
            return port
        return read_int("LSB_JOBID", hint="LSF sets it for every job.") % 1000 + PORT_BASE

    def world_size(self) -> int:
        return read_int("JSM_NAMESPACE_SIZE", minimum=1, hint=_HINT)

    def global_rank(self) -> int:
        rank = read_int("JSM_NAMESPACE_RANK", hint=_HINT)
        return check_below("JSM_NAMESPACE_RANK", rank, "JSM_NAMESPACE_SIZE", self.world_size())

    def local_rank(self) -> int:
        rank = read_int("JSM_NAMESPACE_LOCAL_RANK", hint=_HINT)
        return check_below("JSM_NAMESPACE_LOCAL_RANK", rank, "JSM_NAMESPACE_SIZE", self.world_size())

    def node_rank(self) -> int:
        """The position of this host among the job's distinct compute hosts."""
        hosts = list(dict.fromkeys(self.compute_hosts()))
        here = socket.gethostname()
        if here not in hosts:
            raise MisconfigurationException(
                f"this host ({here!r}) is not among the compute hosts of the LSF rank file "
                f"LSB_DJOB_RANKFILE={os.environ.get('LSB_DJOB_RANKFILE')!r}: {', '.join(hosts)}."
            )
        return hosts.index(here)
