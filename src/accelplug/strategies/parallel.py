"""``ParallelStrategy``: Lightning's base of the strategies that run one process per device (DDP, FSDP, 2D).

What every such strategy answers the same way lives here: which devices the processes use, each process's
share of the data (``distributed_sampler_kwargs``), a decision all processes must agree on
(``reduce_boolean_decision``) and skipping gradient synchronisation (``block_backward_sync``). The
process group itself and the wrapping are the subclasses' (:mod:`.ddp`, :mod:`.fsdp`, :mod:`.model_parallel`).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch

from ..errors import MisconfigurationException
from .base import Strategy

if TYPE_CHECKING:
    from ..environments.base import ClusterEnvironment

__all__ = ["ParallelStrategy"]


class ParallelStrategy(Strategy):
    """One process per device: Lightning's properties of such a strategy over accelplug's ``Strategy``."""

    is_distributed = True

    def __init__(
        self,
        accelerator: Any = None,
        parallel_devices: list[torch.device] | None = None,
        cluster_environment: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
    ) -> None:
        chosen = {"cluster_environment": cluster_environment, "precision_plugin": precision_plugin}
        given = next((name for name, value in chosen.items() if value is not None), None)
        if given is not None:
            raise MisconfigurationException(
                f"{type(self).__name__}({given}=...): accelplug's Trainer chooses this itself from its own arguments "
                f"(plugins=, precision=); leave {given} at None."
            )
        # the writer every checkpoint goes through, and the accelerator to select, as in Lightning
        super().__init__(accelerator=accelerator, checkpoint_io=checkpoint_io)
        self._parallel_devices: list[torch.device] | None = parallel_devices
        self._cluster_environment: ClusterEnvironment | None = None

    @property
    def parallel_devices(self) -> list[torch.device] | None:
        """The devices of this node's processes, one each (None until the Trainer or a user set them)."""
        return self._parallel_devices

    @parallel_devices.setter
    def parallel_devices(self, devices: list[torch.device] | None) -> None:
        self._parallel_devices = devices

    @property
    def num_processes(self) -> int:
        """Processes on this node."""
        if self._parallel_devices is not None:
            return len(self._parallel_devices)
        return int(os.environ.get("LOCAL_WORLD_SIZE", "1"))

    @property
    def cluster_environment(self) -> ClusterEnvironment | None:
        """The environment that started this run's processes, or Lightning's local one where the Trainer or
        Fabric starts them (set by them: Lightning's attribute). Process identity is asked of it."""
        return getattr(self, "_cluster_environment", None)

    @cluster_environment.setter
    def cluster_environment(self, environment: ClusterEnvironment | None) -> None:
        self._cluster_environment = environment

    @property
    def node_rank(self) -> int:
        """This machine's index, as the cluster environment answers it (the one place that reads the variables)."""
        environment = self.cluster_environment
        if environment is None:
            from ..environments.lightning import LightningEnvironment

            environment = LightningEnvironment()  # what the Trainer sets where nothing else started the processes
        return environment.node_rank()

    @property
    def distributed_sampler_kwargs(self) -> dict[str, int]:
        """What a ``DistributedSampler`` is given: every process is a replica, this one's rank."""
        return {"num_replicas": self.world_size, "rank": self.global_rank}

    def reduce_boolean_decision(self, decision: bool, all: bool = True) -> bool:
        """True when every process decided True (``all=False``: when any did), the same answer on every process."""
        votes = torch.tensor(float(bool(decision)), device=self.root_device or torch.device("cpu"))
        total = float(self.reduce_sum(votes))
        return total == self.world_size if all else total > 0

    @contextlib.contextmanager
    def block_backward_sync(self) -> Iterator[None]:
        """Backward passes inside skip the gradient all-reduce (accumulating micro-batches)."""
        with self.no_gradient_sync(self._wrapped_module()):
            yield

    def _wrapped_module(self) -> Any:
        """The module as the strategy wrapped it (DDP's wrapper), for ``block_backward_sync``; None if none."""
        return None
