"""``ParallelStrategy``: Lightning's common base of the strategies that run one process per device.

User code asks ``isinstance(self.trainer.strategy, ParallelStrategy)`` to learn whether this process sees
only its share of the data (Lightning's ImageNet example then divides its batch size by
``strategy.num_processes``); accelplug's DDP and FSDP strategies are ParallelStrategy, the single-device one
is not.
"""

from __future__ import annotations

from abc import abstractmethod
from typing import Any

import torch

from ..errors import MisconfigurationException
from .base import Strategy

__all__ = ["ParallelStrategy"]

_CHOSEN_BY_TRAINER = {
    "accelerator": "Trainer(accelerator=...)",
    "parallel_devices": "Trainer(devices=...)",
    "cluster_environment": "the environment detected from the launcher's variables (torchrun, SLURM, LSF, MPI...)",
    "checkpoint_io": "the Trainer's own checkpoint writer",
    "precision_plugin": "Trainer(precision=...)",
}


class ParallelStrategy(Strategy):
    """A strategy whose run is spread over processes, one per device, each holding a replica or a shard."""

    is_distributed = True

    def __init__(
        self,
        accelerator: Any = None,
        parallel_devices: list[torch.device] | None = None,
        cluster_environment: Any = None,
        checkpoint_io: Any = None,
        precision_plugin: Any = None,
    ) -> None:
        """Lightning's arguments, which accelplug's Trainer chooses itself: one given is refused, naming where
        it is chosen (a strategy built with them would silently run on the Trainer's choice instead)."""
        super().__init__()
        given = {
            "accelerator": accelerator,
            "parallel_devices": parallel_devices,
            "cluster_environment": cluster_environment,
            "checkpoint_io": checkpoint_io,
            "precision_plugin": precision_plugin,
        }
        for option, value in given.items():
            if value is not None:
                raise MisconfigurationException(
                    f"{type(self).__name__}({option}={value!r}): accelplug's Trainer chooses this itself; use "
                    f"{_CHOSEN_BY_TRAINER[option]} and leave {option} at None."
                )

    @property
    @abstractmethod
    def num_processes(self) -> int:
        """The processes of this run on this node."""

    @property
    def distributed_sampler_kwargs(self) -> dict[str, int]:
        """What a ``DistributedSampler`` is given: every process is a replica, this one's rank."""
        return {"num_replicas": self.world_size, "rank": self.global_rank}
