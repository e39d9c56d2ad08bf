"""torchrun (TorchElastic): its agent started every process and set torch's own variables.

``torchrun`` (``python -m torch.distributed.run``, also what ``accelplug launch`` runs) gives each
worker ``WORLD_SIZE``, ``RANK``, ``LOCAL_RANK``, ``GROUP_RANK`` (its node), ``MASTER_ADDR`` and
``MASTER_PORT``, and ``TORCHELASTIC_RUN_ID``, which is how torch itself tells that torchrun is the
launcher (``torch.distributed.is_torchelastic_launched``). It has the highest priority because
torchrun is often run *inside* another scheduler's job (one torchrun per Slurm node), and then
torchrun's variables, not the scheduler's, describe the processes.
"""

from __future__ import annotations

import os
import warnings

from .base import ClusterEnvironment, check_below, read_int, read_port

__all__ = ["TorchElasticEnvironment"]

#: Lightning's fallbacks when torchrun somehow did not set the rendezvous (it always does).
DEFAULT_ADDRESS = "127.0.0.1"
DEFAULT_PORT = 12910
_HINT = "torchrun sets it for every worker."


class TorchElasticEnvironment(ClusterEnvironment):
    """Processes started by torchrun (Lightning's ``TorchElasticEnvironment``)."""

    name = "torchrun"
    description = "torchrun / TorchElastic: workers started by its agent (WORLD_SIZE, RANK, LOCAL_RANK, GROUP_RANK)"
    detect_priority = 400

    @property
    def creates_processes_externally(self) -> bool:
        return True

    @property
    def main_address(self) -> str:
        address = (os.environ.get("MASTER_ADDR") or "").strip()
        if not address:
            warnings.warn(f"MASTER_ADDR is not set; using {DEFAULT_ADDRESS}", UserWarning, stacklevel=2)
            return DEFAULT_ADDRESS
        return address

    @property
    def main_port(self) -> int:
        port = read_port("MASTER_PORT")
        if port is None:
            warnings.warn(f"MASTER_PORT is not set; using {DEFAULT_PORT}", UserWarning, stacklevel=2)
            return DEFAULT_PORT
        return port

    @staticmethod
    def detect() -> bool:
        """torch's own test: ``TORCHELASTIC_RUN_ID`` is set (torch is imported only now, when asked)."""
        import torch.distributed

        return bool(torch.distributed.is_available() and torch.distributed.is_torchelastic_launched())

    def world_size(self) -> int:
        return read_int("WORLD_SIZE", minimum=1, hint=_HINT)

    def global_rank(self) -> int:
        return check_below("RANK", read_int("RANK", hint=_HINT), "WORLD_SIZE", self.world_size())

    def local_rank(self) -> int:
        rank = read_int("LOCAL_RANK", hint=_HINT)
        if (os.environ.get("LOCAL_WORLD_SIZE") or "").strip():
            return check_below("LOCAL_RANK", rank, "LOCAL_WORLD_SIZE", read_int("LOCAL_WORLD_SIZE", minimum=1))
        return check_below("LOCAL_RANK", rank, "WORLD_SIZE", self.world_size())

    def node_rank(self) -> int:
        return read_int("GROUP_RANK", default=0)
