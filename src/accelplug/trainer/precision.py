"""What each precision setting means for the loop: parameter dtype, autocast, gradient scaling."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

import torch

__all__ = ["Precision"]

_AUTOCAST_DTYPES = {"bf16-mixed": torch.bfloat16, "16-mixed": torch.float16}


@dataclass
class Precision:
    """The precision plan for one run on one device type.

    ``32-true`` and ``64-true`` keep parameters (and floating inputs) in that dtype; the ``-mixed``
    settings keep float32 parameters and run the forward pass under ``torch.autocast``. ``16-mixed``
    scales the loss with ``torch.amp.GradScaler`` where the device supports it (CUDA), because float16
    gradients underflow without it; bfloat16 has float32's range and needs no scaling.
    """

    name: str
    device_type: str
    scaler: Any = None  # torch.amp.GradScaler | None

    @classmethod
    def create(cls, name: str, device_type: str) -> Precision:
        scaler = None
        if name == "16-mixed" and device_type == "cuda":
            scaler = torch.amp.GradScaler(device_type)
        return cls(name, device_type, scaler)

    @property
    def param_dtype(self) -> torch.dtype | None:
        """The dtype parameters and floating inputs are cast to, or None to leave them alone."""
        return torch.float64 if self.name == "64-true" else None

    @property
    def uses_autocast(self) -> bool:
        return self.name in _AUTOCAST_DTYPES

    def forward_context(self) -> contextlib.AbstractContextManager[Any]:
        dtype = _AUTOCAST_DTYPES.get(self.name)
        if dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(self.device_type, dtype=dtype)

    def backward(self, loss: torch.Tensor) -> None:
        if self.scaler is not None:
            self.scaler.scale(loss).backward()
        else:
            loss.backward()  # type: ignore[no-untyped-call]

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        """Bring scaled gradients back to their true values (needed before clipping them)."""
        if self.scaler is not None:
            self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer) -> None:
        """Step one optimizer (skipped by the scaler when its gradients overflowed)."""
        if self.scaler is not None:
            self.scaler.step(optimizer)
        else:
            optimizer.step()

    def update(self) -> None:
        """Adjust the loss scale once per iteration, after every optimizer has stepped."""
        if self.scaler is not None:
            self.scaler.update()
