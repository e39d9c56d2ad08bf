"""What a cluster environment answers: who started this process, how many processes there are, where they meet.

A scheduler or launcher (Slurm's ``srun``, torchrun, LSF's ``jsrun``, ``mpirun``, Kubeflow's
PyTorchJob) starts every process of a job itself and tells each one its place through environment
variables. A :class:`ClusterEnvironment` reads them, so the Trainer knows not to start processes of
its own (``creates_processes_externally``), how large the job is, which rank this process is and
where rank 0 listens (``main_address``/``main_port``, the rendezvous for ``torch.distributed``).

The interface is Lightning 2.6's ``ClusterEnvironment`` (so a class written for Lightning works),
plus what a plugin registry needs: a ``name``, a one-line ``description`` (``accelplug env`` shows
it) and ``detect_priority`` (which environment wins when several match; see
``AcceleratorRegistry.detect_environment``). Environments are registered through the
``register_cluster_environments`` hook.

Variables are read when a value is asked for, never at construction or import, and a value that is
missing, not a number, or contradicts another (a rank not below the world size) raises
:class:`~accelplug.errors.MisconfigurationException` naming the variable and its value: a job
started with wrong ranks otherwise hangs at its first collective, with nothing saying why.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import ClassVar

from .._record import record
from ..errors import MisconfigurationException

__all__ = [
    "MAX_PROCESSES",
    "ClusterEnvironment",
    "EnvironmentFacts",
    "MissingVariable",
    "check_below",
    "read_int",
    "read_port",
    "read_str",
]

#: The most processes one job can have: torch.distributed numbers ranks and world sizes with C ``int``s.
MAX_PROCESSES = 2**31 - 1


class MissingVariable(MisconfigurationException, KeyError):
    """A variable the environment needs is not set: a configuration error naming it, and the ``KeyError`` Lightning's
    environments raise there (they read ``os.environ[name]``), so either ``except`` catches it."""

    def __str__(self) -> str:  # the sentence, not KeyError's quoted repr of it
        return str(self.args[0]) if self.args else ""


def read_str(name: str, *, hint: str = "") -> str:
    """The variable's value; a missing or empty one raises, with ``hint`` saying who should have set it."""
    value = os.environ.get(name)
    if value is None or not value.strip():
        state = "is not set" if value is None else "is empty"
        error = MissingVariable if value is None else MisconfigurationException
        raise error(f"environment variable {name} {state}.{f' {hint}' if hint else ''}")
    return value.strip()


def read_int(name: str, *, minimum: int = 0, default: int | None = None, hint: str = "") -> int:
    """A whole number ``>= minimum`` from ``name``; ``default`` when unset (if given)."""
    if default is not None and not (os.environ.get(name) or "").strip():
        return default
    value = read_str(name, hint=hint)
    digits = value[1:] if value[:1] in "+-" else value
    if not (digits.isascii() and digits.isdigit()):
        raise MisconfigurationException(
            f"environment variable {name}={value!r} is not a whole number; expected an integer >= {minimum}."
            f"{f' {hint}' if hint else ''}"
        )
    number = int(value)
    if number < minimum:
        raise MisconfigurationException(
            f"environment variable {name}={value!r} is out of range; expected an integer >= {minimum}."
            f"{f' {hint}' if hint else ''}"
        )
    return number


def read_port(name: str) -> int | None:
    """A TCP port from ``name`` (1..65535), None when unset."""
    if not (os.environ.get(name) or "").strip():
        return None
    port = read_int(name, minimum=1)
    if port > 65535:
        raise MisconfigurationException(
            f"environment variable {name}={port} is not a TCP port; expected an integer between 1 and 65535."
        )
    return port


def check_below(rank_name: str, rank: int, size_name: str, size: int) -> int:
    """``rank`` if it is below ``size``; otherwise the two variables contradict each other."""
    if rank >= size:
        raise MisconfigurationException(
            f"environment variable {rank_name}={rank} contradicts {size_name}={size}: a rank must be below "
            f"the number of processes (0..{size - 1}). The job was started with inconsistent variables."
        )
    return rank


@record(frozen=True)
class EnvironmentFacts:
    """Everything an environment says about this process, asked at once (``accelplug env`` shows it)."""

    name: str
    description: str
    creates_processes_externally: bool
    world_size: int
    global_rank: int
    local_rank: int
    node_rank: int
    main_address: str
    main_port: int


class ClusterEnvironment(ABC):
    """A way processes of one job are started and told their place (Lightning's ``ClusterEnvironment``)."""

    #: The registry's key: a lowercase identifier (``"slurm"``).
    name: ClassVar[str] = ""
    #: One line for ``accelplug env``: what starts the processes and which variables say so.
    description: ClassVar[str] = ""
    #: Asked first when higher. Built-ins: torchrun 400 (it can run inside a Slurm job), Slurm 300,
    #: LSF 200, MPI 100, Kubeflow 0 (never detected).
    detect_priority: ClassVar[int] = 0

    @property
    @abstractmethod
    def creates_processes_externally(self) -> bool:
        """Whether something else started every process, so the Trainer must not start its own."""

    @property
    @abstractmethod
    def main_address(self) -> str:
        """The host rank 0 runs on, where every process meets (``MASTER_ADDR`` for torch)."""

    @property
    @abstractmethod
    def main_port(self) -> int:
        """The port on ``main_address`` where every process meets (``MASTER_PORT`` for torch)."""

    @staticmethod
    @abstractmethod
    def detect() -> bool:
        """Whether this process was started by this environment. Cheap, and never raises for odd values:
        those are reported by the method that needs them."""

    @abstractmethod
    def world_size(self) -> int:
        """How many processes the job has, on all nodes."""

    def set_world_size(self, size: int) -> None:  # noqa: B027 - optional hook
        """Ignored: the scheduler fixed the world size (Lightning's environments that start processes
        externally ignore it too)."""

    @abstractmethod
    def global_rank(self) -> int:
        """This process's index among all processes of the job."""

    def set_global_rank(self, rank: int) -> None:  # noqa: B027 - optional hook
        """Ignored, as :meth:`set_world_size`."""

    @abstractmethod
    def local_rank(self) -> int:
        """This process's index among the processes of its node (the device index it uses)."""

    @abstractmethod
    def node_rank(self) -> int:
        """The index of this process's node in the job."""

    def validate_settings(self, num_devices: int, num_nodes: int) -> None:
        """Refuse a Trainer whose ``devices`` x ``num_nodes`` is not the number of processes started.

        Each started process trains on one device, so a mismatch means either idle devices or two
        processes on one device; Lightning's torchrun environment checks the same product.
        """
        world = self.world_size()
        if num_devices * num_nodes != world:
            raise MisconfigurationException(
                f"devices={num_devices} x num_nodes={num_nodes} = {num_devices * num_nodes} processes, but "
                f"{self.name or type(self).__name__} started {world}. Set devices and num_nodes so that their "
                f"product is {world} (one process per device), or start the job with "
                f"{num_devices * num_nodes} processes (the product ({num_devices} * {num_nodes}) does not match the "
                f"world size ({world}))."
            )

    def teardown(self) -> None:  # noqa: B027 - optional hook
        """Undo what the environment set up for the run (nothing, for the built-ins)."""

    def facts(self) -> EnvironmentFacts:
        """Every answer at once; raises ``MisconfigurationException`` on the first bad variable."""
        return EnvironmentFacts(
            name=self.name,
            description=self.description,
            creates_processes_externally=self.creates_processes_externally,
            world_size=self.world_size(),
            global_rank=self.global_rank(),
            local_rank=self.local_rank(),
            node_rank=self.node_rank(),
            main_address=self.main_address,
            main_port=self.main_port,
        )
