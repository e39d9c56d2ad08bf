"""The ``Strategy`` base class: how a run is spread over the selected devices.

A strategy owns everything that differs between one process and many: bringing up the process
group, wrapping the model so gradients are synchronised, giving each process its share of the data,
averaging metrics across processes, and deciding which process may write files. The Trainer's loop
calls these methods and stays the same for every strategy.
"""

from __future__ import annotations

import contextlib
from abc import ABC
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    import torch
    from torch.utils.data import DataLoader

    from ..accelerator import Accelerator

__all__ = ["Strategy"]


class Strategy(ABC):
    """A way to run training on the selected devices (registered through ``register_strategies``).

    The defaults describe one process on one device, so a subclass only overrides what it changes.
    """

    name: ClassVar[str]
    description: ClassVar[str] = ""
    #: True when the strategy runs one process per device and needs a process group.
    is_distributed: ClassVar[bool] = False

    def setup(self, accelerator: Accelerator, device: torch.device) -> None:
        """Prepare this process to run on ``device`` (called once at the start of fit/validate/predict)."""
        accelerator.setup_device(device)

    def teardown(self) -> None:  # noqa: B027 - optional hook
        """Release what ``setup`` acquired."""

    @property
    def world_size(self) -> int:
        return 1

    @property
    def global_rank(self) -> int:
        return 0

    @property
    def is_global_zero(self) -> bool:
        """Whether this process writes checkpoints, logs and the progress bar."""
        return self.global_rank == 0

    def wrap_model(self, module: torch.nn.Module, device: torch.device) -> torch.nn.Module:
        """The module the loop calls forward on (DDP wraps it to synchronise gradients)."""
        return module

    def prepare_dataloader(self, loader: Any, *, shuffle_seed: int) -> Any:
        """This process's view of ``loader`` (DDP gives each rank its own shard)."""
        return loader

    def set_epoch(self, loader: Any, epoch: int) -> None:
        """Tell a per-epoch shuffling sampler which epoch starts (keeps ranks and resumes in step)."""
        sampler = getattr(loader, "sampler", None)
        if sampler is not None and hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)

    @contextlib.contextmanager
    def no_gradient_sync(self, wrapped: torch.nn.Module) -> Iterator[None]:
        """Skip gradient synchronisation for micro-batches that only accumulate."""
        yield

    def reduce_mean(self, values: torch.Tensor) -> torch.Tensor:
        """``values`` averaged over every process (the identity for one process)."""
        return values

    def broadcast_object(self, obj: Any) -> Any:
        """Rank 0's ``obj`` on every process (so all ranks agree on, e.g., the log folder)."""
        return obj

    def barrier(self) -> None:  # noqa: B027 - optional hook
        """Wait until every process reaches this point."""

    def describe(self, loader: DataLoader[Any] | None = None) -> str:
        return self.name
