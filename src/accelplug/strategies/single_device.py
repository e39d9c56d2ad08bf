"""Everything on one device in this process: the base ``Strategy`` behaviour, unchanged."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from ..errors import MisconfigurationException
from .base import Strategy

if TYPE_CHECKING:
    from ..accelerator import Accelerator
    from ..checkpoint import CheckpointIO
    from ..precision.base import NumericPrecision

__all__ = ["SingleDeviceStrategy"]


class SingleDeviceStrategy(Strategy):
    """One device, one process (Lightning's constructor).

    ``device`` picks the device *index* among those of the Trainer's accelerator (``"cuda:1"``); the
    accelerator itself is the Trainer's choice, so a device of another type than the selected accelerator's
    is refused when the run starts rather than silently moved. The default ``"cpu"`` follows the Trainer.
    """

    name = "single_device"
    description = "one device, one process"

    def __init__(
        self,
        device: Any = "cpu",
        accelerator: Accelerator | None = None,
        checkpoint_io: CheckpointIO | None = None,
        precision_plugin: NumericPrecision | None = None,
        *,
        precision: NumericPrecision | None = None,
    ) -> None:
        super().__init__(
            accelerator=accelerator, checkpoint_io=checkpoint_io, precision_plugin=precision_plugin, precision=precision
        )
        try:
            self._given_device = device if isinstance(device, torch.device) else torch.device(device)
        except (RuntimeError, TypeError, ValueError):
            raise MisconfigurationException(
                f"SingleDeviceStrategy(device={device!r}) is not a device; expected a torch.device or a string "
                "such as 'cpu', 'cuda' or 'cuda:1'."
            ) from None
        self._root_device = self._given_device  # Lightning's strategy.root_device, the Trainer's type permitting

    @property
    def launcher(self) -> None:
        """None, as Lightning's: one process, nothing to launch (the fit runs in this process)."""
        return None

    def setup_environment(self, accelerator: Accelerator | None = None, device: torch.device | None = None) -> None:
        accelerator, device = self._environment_target(accelerator, device)
        given = self._given_device
        if given.type != device.type and given != torch.device("cpu"):
            raise MisconfigurationException(
                f"SingleDeviceStrategy(device={str(given)!r}) does not match the Trainer's accelerator, which runs "
                f"on {device.type!r}; pass accelerator={given.type!r} to the Trainer or a {device.type} device."
            )
        if given.type == device.type and given.index is not None:
            device = given
        super().setup_environment(accelerator, device)
