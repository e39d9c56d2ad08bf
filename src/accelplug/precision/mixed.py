"""Mixed precision: float32 parameters, the forward pass under ``torch.autocast``.

``16-mixed`` scales the loss with ``torch.amp.GradScaler`` on CUDA, because float16 gradients
underflow without it; bfloat16 has float32's range and needs no scaling.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from .base import NumericPrecision

if TYPE_CHECKING:
    import torch

__all__ = ["BF16MixedPrecision", "FP16MixedPrecision", "announce_amp"]


def announce_amp(precision: str, logger: str, *, sixteen: str = "16bit") -> None:
    """Lightning's INFO line when a run uses autocast (``Using bfloat16 Automatic Mixed Precision (AMP)``), on global
    rank zero. The Trainer writes float16 as ``16bit``, Fabric as ``16-bit``: each keeps its own words."""
    words = {"16-mixed": sixteen, "bf16-mixed": "bfloat16"}.get(precision)
    if words is None:
        return
    import logging

    from ..distributed.rank_zero import is_rank_zero

    if is_rank_zero():
        logging.getLogger(logger).info("Using %s Automatic Mixed Precision (AMP)", words)


class _AutocastPrecision(NumericPrecision):
    @property
    def device(self) -> str:
        """The device type autocast runs on (Lightning's ``MixedPrecision.device``, what ``trainer.precision_plugin``
        answers for ``precision="16-mixed"``)."""
        return self.device_type

    @property
    def autocast_dtype(self) -> torch.dtype:
        raise NotImplementedError

    @property
    def uses_autocast(self) -> bool:
        return True

    @property
    def compute_dtype(self) -> torch.dtype:
        return self.autocast_dtype

    def forward_context(self) -> contextlib.AbstractContextManager[Any]:
        import torch

        return torch.autocast(self.device_type, dtype=self.autocast_dtype, cache_enabled=self.cache_casts)

    def fsdp_mixed_precision(self) -> Any:
        import torch
        from torch.distributed.fsdp import MixedPrecisionPolicy

        # Compute in the low dtype, keep sharded master weights and gradient reduction in float32.
        return MixedPrecisionPolicy(param_dtype=self.autocast_dtype, reduce_dtype=torch.float32)


class BF16MixedPrecision(_AutocastPrecision):
    name = "bf16-mixed"
    aliases = ("bf16",)
    description = "float32 parameters, forward pass in bfloat16 under autocast"

    @property
    def autocast_dtype(self) -> torch.dtype:
        import torch

        return torch.bfloat16


class FP16MixedPrecision(_AutocastPrecision):
    name = "16-mixed"
    aliases = ("16",)
    description = "float32 parameters, forward pass in float16 under autocast, dynamic loss scaling"

    def __init__(self, device_type: str) -> None:
        super().__init__(device_type)
        self.scaler: Any = _grad_scaler(device_type)

    @property
    def autocast_dtype(self) -> torch.dtype:
        import torch

        return torch.float16

    @property
    def needs_help_with_steps(self) -> bool:
        return self.scaler is not None

    def backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        if self.scaler is not None:
            self.scaler.scale(loss).backward(*args, **kwargs)
        else:
            loss.backward(*args, **kwargs)  # type: ignore[no-untyped-call]

    def unscale(self, optimizer: torch.optim.Optimizer) -> None:
        if self.scaler is not None:
            self.scaler.unscale_(optimizer)

    def step(self, optimizer: torch.optim.Optimizer, closure: Any = None) -> Any:
        if self.scaler is None:
            return super().step(optimizer, closure)
        if closure is not None:
            closure()
        return self.scaler.step(optimizer)

    def update(self) -> None:
        if self.scaler is not None:
            self.scaler.update()

    def state_dict(self) -> dict[str, Any] | None:
        return self.scaler.state_dict() if self.scaler is not None else None

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.scaler is not None and state:
            self.scaler.load_state_dict(state)


def _grad_scaler(device_type: str) -> Any:
    """torch's loss scaler for ``device_type``, on every device whose runtime torch's ``GradScaler``
    supports (CUDA, the CPU, XPU, MPS, a PrivateUse1 backend), as Lightning's ``16-mixed`` does; float16
    gradients underflow the same way on each. None where torch has no scaler for the type: the step then
    runs unscaled, as it did before scalers existed."""
    import warnings

    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "GradScaler is enabled, but <device> is not available": reported below
        try:
            scaler = torch.amp.GradScaler(device_type)
        except (RuntimeError, ValueError, AttributeError):
            return None
    return scaler if scaler.is_enabled() else None
