"""Numeric precisions as registered objects: the base class, and one small module per built-in precision.

:data:`BUILTIN_PRECISIONS` is the one list of the built-ins: accelplug's own plugin registers it through
the ``register_precisions`` hook (as a plugin registers its own), and the names users type
(:mod:`accelplug.precision.names`) and the benchmark's hand-written loop are read from these classes.
Adding a built-in precision is its module and one line here.
"""

from typing import Any

from . import base
from .base import NumericPrecision
from .bf16_true import BF16TruePrecision
from .fp16_true import FP16TruePrecision
from .full import Float32Precision, Float64Precision
from .mixed import BF16MixedPrecision, FP16MixedPrecision

__all__ = [
    "BUILTIN_PRECISIONS",
    "BF16MixedPrecision",
    "BF16TruePrecision",
    "FP16MixedPrecision",
    "FP16TruePrecision",
    "Float32Precision",
    "Float64Precision",
    "NumericPrecision",
]

#: The built-in precisions, in the order they are listed (the Trainer's default first).
BUILTIN_PRECISIONS: tuple[type[NumericPrecision], ...] = (
    Float32Precision,
    BF16MixedPrecision,
    FP16MixedPrecision,
    Float64Precision,
    BF16TruePrecision,
    FP16TruePrecision,
)


def __getattr__(name: str) -> Any:
    """``Precision``: the old name of :class:`NumericPrecision` (with a ``DeprecationWarning``)."""
    if name == "Precision":
        return base.__getattr__(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
