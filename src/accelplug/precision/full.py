"""Full precision: every parameter, input and operation in one floating dtype."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import NumericPrecision

if TYPE_CHECKING:
    import torch

__all__ = ["Float32Precision", "Float64Precision"]


class Float32Precision(NumericPrecision):
    """torch's default: float32 everywhere (the Trainer's default)."""

    name = "32-true"
    aliases = ("32",)
    description = "float32 parameters and computation"


class Float64Precision(NumericPrecision):
    """float64 parameters and floating inputs, for numerics that float32 cannot hold."""

    name = "64-true"
    aliases = ("64",)
    description = "float64 parameters, inputs and computation"

    @property
    def param_dtype(self) -> torch.dtype:
        import torch

        return torch.float64

    def convert_module(self, module: torch.nn.Module) -> torch.nn.Module:
        """Floating parameters and buffers to float64; complex ones keep their dtype (``module.double()``, as
        Lightning's ``DoublePrecision`` converts: casting a complex buffer to a real dtype would drop its imaginary
        part)."""
        return module.double()
