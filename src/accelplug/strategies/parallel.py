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


def _devices(given: Any, owner: str) -> list[torch.device] | None:
    """``parallel_devices`` as devices (Lightning's form: a list of ``torch.device``; names such as ``"cpu"`` too)."""
    if given is None:
        return None
    try:
        return [device if isinstance(device, torch.device) else torch.device(device) for device in given]
    except (RuntimeError, TypeError, ValueError):
        raise MisconfigurationException(
            f"{owner}(parallel_devices={given!r}) is not a list of devices; expected torch.device objects such as "
            "[torch.device('cuda', 0), torch.device('cuda', 1)]."
        ) from None


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
        *,
        precision: Any = None,
    ) -> None:
        """Lightning's constructor: ``parallel_devices`` (this node's devices, one process each) and
        ``cluster_environment`` (who started the processes) are what the Trainer then uses, as Lightning's connector
        takes them from a strategy; ``precision_plugin`` (or Fabric's ``precision``) as :class:`Strategy`'s."""
        super().__init__(
            accelerator=accelerator, checkpoint_io=checkpoint_io, precision_plugin=precision_plugin, precision=precision
        )
        self._parallel_devices: list[torch.device] | None = _devices(parallel_devices, type(self).__name__)
        self._cluster_environment: ClusterEnvironment | None = None
        self.cluster_environment = cluster_environment  # the one given, else the Trainer's (Lightning's attribute)

    @property
    def parallel_devices(self) -> list[torch.device] | None:
        """The devices of this node's processes, one each (None until the Trainer or a user set them)."""
        return self._parallel_devices

    @parallel_devices.setter
    def parallel_devices(self, devices: list[torch.device] | None) -> None:
        self._parallel_devices = devices

    @property
    def root_device(self) -> torch.device | None:
        """This process's device: the one the Trainer set, else this process's entry of ``parallel_devices`` (by
        local rank), as Lightning's parallel strategies answer."""
        own = getattr(self, "_root_device", None)
        devices = self._parallel_devices
        if own is None and devices and 0 <= self.local_rank < len(devices):
            return devices[self.local_rank]
        return own

    @root_device.setter
    def root_device(self, device: torch.device | None) -> None:
        self._root_device = device

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
