"""The environment of a run nobody else started: the Trainer starts its own processes on this machine.

Lightning's ``LightningEnvironment`` (its fallback when no scheduler is detected), with the same two
modes: a plain ``python train.py`` (no ``LOCAL_RANK``), where the Trainer starts one process per
device itself, and processes started by hand with at least ``LOCAL_RANK`` set, which it then takes
as started externally. World size and global rank are whatever the Trainer sets (``set_world_size``,
``set_global_rank``), as in Lightning. It is not registered for detection: ``detect()`` is always
True, so it would hide "no scheduler" in ``accelplug env``; it is what a run without one uses.
"""

from __future__ import annotations

import os

from ..errors import MisconfigurationException
from .base import ClusterEnvironment, read_int, read_port

__all__ = ["LightningEnvironment", "find_free_network_port"]


def find_free_network_port() -> int:
    """A port nobody listens on now on this machine (``STANDALONE_PORT`` when set: Lightning's override for tests)."""
    standalone = read_port("STANDALONE_PORT")
    if standalone is not None:
        return standalone
    from ..distributed.local_processes import free_port

    return free_port()


class LightningEnvironment(ClusterEnvironment):
    """Processes on this machine, started by the Trainer or by hand (Lightning's ``LightningEnvironment``)."""

    name = "lightning"
    description = "this machine: the Trainer starts one process per device (LOCAL_RANK set: started by hand)"
    detect_priority = -1

    def __init__(self) -> None:
        self._main_port: int | None = None
        self._world_size = 1
        self._global_rank = 0
        self._stated_world_size: int | None = None  # WORLD_SIZE as the run first found it (started by hand)

    @property
    def creates_processes_externally(self) -> bool:
        """Someone set ``LOCAL_RANK``: they started the processes, so the Trainer must not."""
        return "LOCAL_RANK" in os.environ

    @property
    def main_address(self) -> str:
        return (os.environ.get("MASTER_ADDR") or "").strip() or "127.0.0.1"

    @property
    def main_port(self) -> int:
        """``MASTER_PORT``, else a free port chosen once (every later answer is the same)."""
        if self._main_port is None:
            given = read_port("MASTER_PORT")
            self._main_port = given if given is not None else find_free_network_port()
        return self._main_port

    @staticmethod
    def detect() -> bool:
        return True

    def world_size(self) -> int:
        return self._world_size

    def set_world_size(self, size: int) -> None:
        self._world_size = size

    def global_rank(self) -> int:
        return self._global_rank

    def set_global_rank(self, rank: int) -> None:
        self._global_rank = rank

    def local_rank(self) -> int:
        return read_int("LOCAL_RANK", default=0)

    def node_rank(self) -> int:
        """``NODE_RANK``, else torchrun's ``GROUP_RANK``, else 0."""
        if (os.environ.get("NODE_RANK") or "").strip():
            return read_int("NODE_RANK")
        return read_int("GROUP_RANK", default=0)

    def validate_settings(self, num_devices: int, num_nodes: int) -> None:
        """Nothing is refused: the world is what the Trainer makes it (devices x nodes), whatever ``WORLD_SIZE``
        said, as in Lightning. For processes started by hand, the ``WORLD_SIZE`` found at this first check is kept
        (the Trainer then exports its own), so that a run can name the disagreement before its first collective
        waits for processes that will never come (:meth:`check_started_world`)."""
        if self._stated_world_size is None and self.creates_processes_externally:
            stated = (os.environ.get("WORLD_SIZE") or "").strip()
            self._stated_world_size = int(stated) if stated.isascii() and stated.isdigit() and int(stated) else None

    def check_started_world(self, num_devices: int, num_nodes: int) -> None:
        """Before a distributed run starts: the processes started by hand (their ``WORLD_SIZE``) must be the run's
        devices x nodes, or every rank would wait in the rendezvous for ranks nobody started (Lightning hangs)."""
        stated, world = self._stated_world_size, num_devices * num_nodes
        if stated is not None and stated != world:
            raise MisconfigurationException(
                f"devices={num_devices} x num_nodes={num_nodes} means {world} processes, but the processes were "
                f"started by hand with WORLD_SIZE={stated}; start {world} processes (LOCAL_RANK 0..{num_devices - 1} "
                f"on each of {num_nodes} node(s)), or set devices/num_nodes to match the {stated} started."
            )

    def teardown(self) -> None:
        """Forget ``WORLD_SIZE`` set for the run, so a later run in this process starts afresh (as Lightning)."""
        os.environ.pop("WORLD_SIZE", None)
