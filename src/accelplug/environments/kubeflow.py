"""Kubeflow's PyTorchJob: the operator starts one pod per replica and sets torch's variables in each.

A PyTorchJob's pods get ``MASTER_ADDR`` (the master replica's service), ``MASTER_PORT``,
``WORLD_SIZE`` (the number of pods) and ``RANK``; each pod runs one process, so the pod is the node
and the local rank is 0. Nothing in these variables tells a PyTorchJob apart from any job started
by hand with the same four variables, so, as in Lightning, this environment is never detected: pass
``KubeflowEnvironment()`` explicitly. (A PyTorchJob whose pods run ``torchrun`` is detected as
torchrun, which is right: torchrun then started the processes.)
"""

from __future__ import annotations

from .base import ClusterEnvironment, MissingVariable, check_below, read_int, read_port, read_str

__all__ = ["KubeflowEnvironment"]

_HINT = "The PyTorchJob operator sets it in every replica's pod."


class KubeflowEnvironment(ClusterEnvironment):
    """One process per pod of a Kubeflow PyTorchJob (Lightning's ``KubeflowEnvironment``)."""

    name = "kubeflow"
    description = "Kubeflow PyTorchJob: one process per pod (MASTER_ADDR, MASTER_PORT, WORLD_SIZE, RANK); not detected"
    detect_priority = 0

    @property
    def creates_processes_externally(self) -> bool:
        return True

    @property
    def main_address(self) -> str:
        return read_str("MASTER_ADDR", hint=_HINT)

    @property
    def main_port(self) -> int:
        port = read_port("MASTER_PORT")
        if port is None:
            raise MissingVariable(f"environment variable MASTER_PORT is not set. {_HINT}")
        return port

    @staticmethod
    def detect() -> bool:
        """Never: a PyTorchJob cannot be told apart from a hand-started job (Lightning raises here)."""
        return False

    def world_size(self) -> int:
        return read_int("WORLD_SIZE", minimum=1, hint=_HINT)

    def global_rank(self) -> int:
        return check_below("RANK", read_int("RANK", hint=_HINT), "WORLD_SIZE", self.world_size())

    def local_rank(self) -> int:
        return 0

    def node_rank(self) -> int:
        return self.global_rank()
