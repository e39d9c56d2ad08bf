"""The Trainer (constructor only for now: it performs the selection every run starts with)."""

from __future__ import annotations

import torch

from ..accelerator import Accelerator
from ..selection import Selection, select

__all__ = ["Trainer"]


class Trainer:
    """Trains a ``torch.nn.Module`` written in Lightning's protocol on the chosen accelerator."""

    def __init__(
        self,
        accelerator: str | Accelerator | type[Accelerator] = "auto",
        devices: int | str | list[int] | tuple[int, ...] = "auto",
        strategy: str = "auto",
        precision: str | int = "32-true",
    ) -> None:
        self.selection: Selection = select(accelerator, devices, strategy, precision)

    @property
    def accelerator(self) -> Accelerator:
        return self.selection.accelerator

    @property
    def strategy(self) -> str:
        return self.selection.strategy

    @property
    def num_devices(self) -> int:
        return self.selection.num_devices

    @property
    def device_ids(self) -> list[int]:
        return list(self.selection.device_ids)

    @property
    def root_device(self) -> torch.device:
        return self.selection.root_device

    @property
    def precision(self) -> str:
        return self.selection.precision
