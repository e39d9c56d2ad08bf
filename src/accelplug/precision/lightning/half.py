"""Lightning's ``HalfPrecision`` (``16-true``/``bf16-true``) and ``DoublePrecision`` (``64-true``).

Weights, inputs and computation all in one dtype: the built-in true precisions do the conversion.
"""

from __future__ import annotations

from ...errors import MisconfigurationException, did_you_mean
from ..bf16_true import BF16TruePrecision
from ..fp16_true import FP16TruePrecision
from ..full import Float64Precision
from .base import Precision

__all__ = ["DoublePrecision", "HalfPrecision"]

_HALF = ("16-true", "bf16-true")


class HalfPrecision(Precision):
    """float16 (``"16-true"``, the default) or bfloat16 (``"bf16-true"``) weights, inputs and computation."""

    precision: str = "16-true"

    def __init__(self, precision: str = "16-true") -> None:
        if precision not in _HALF:
            raise MisconfigurationException(
                f"{type(self).__name__}(precision={precision!r}) is invalid. Accepted: "
                f"{', '.join(repr(a) for a in _HALF)}.{did_you_mean(precision, _HALF)}"
            )
        self.precision = precision

    def _numerics_name(self) -> str:
        return self.precision

    def __repr__(self) -> str:
        return f"{type(self).__name__}(precision={self.precision!r})"


class DoublePrecision(Precision):
    """float64 weights, inputs and computation, for numerics float32 cannot hold."""

    precision: str = "64-true"

    def _numerics_name(self) -> str:
        return "64-true"


HalfPrecision.register(BF16TruePrecision)  # what precision="bf16-true"/"16-true"/"64-true" selects counts as one
HalfPrecision.register(FP16TruePrecision)
DoublePrecision.register(Float64Precision)
