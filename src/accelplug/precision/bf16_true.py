"""``bf16-true``: parameters, inputs and computation in bfloat16 (half of float32's memory, no master copy).

For models whose float32 weights and optimizer state do not fit, or fine-tuning where bfloat16's
7-bit mantissa is enough; ``bf16-mixed`` keeps float32 weights and is the safer default.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import NumericPrecision

if TYPE_CHECKING:
    import torch

    from ..accelerator import Accelerator

__all__ = ["BF16TruePrecision"]


class BF16TruePrecision(NumericPrecision):
    name = "bf16-true"
    description = "bfloat16 parameters, inputs and computation"

    @classmethod
    def supports(cls, accelerator: type[Accelerator]) -> bool | None:
        return True if accelerator.device_type in ("cpu", "cuda") else None

    @property
    def param_dtype(self) -> torch.dtype:
        import torch

        return torch.bfloat16
