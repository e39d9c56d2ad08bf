"""``16-true``: parameters, inputs and computation in float16, with no float32 master copy and no loss scaling.

Lightning users type it for inference-heavy fine-tuning and for Apple GPUs, where float16 is the
fastest dtype. float16's range (max 65504, smallest normal 6e-5) is narrow: gradients can underflow
to zero without the scaler ``16-mixed`` brings, so ``16-mixed`` or ``bf16-true`` are the safer choices
for training from scratch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import NumericPrecision

if TYPE_CHECKING:
    import torch

    from ..accelerator import Accelerator

__all__ = ["FP16TruePrecision"]


class FP16TruePrecision(NumericPrecision):
    name = "16-true"
    description = "float16 parameters, inputs and computation (no loss scaling)"

    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        return True if accelerator.device_type in ("cpu", "cuda", "mps") else None

    @property
    def param_dtype(self) -> torch.dtype:
        import torch

        return torch.float16
