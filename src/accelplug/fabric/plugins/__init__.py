"""``accelplug.fabric.plugins``: precision objects for ``Fabric(plugins=...)``.

These are accelplug's precision classes, the ones ``precision="..."`` selects (a plugin distribution adds
its own through the ``register_precisions`` hook). Each takes the device type it runs on:
``Fabric(plugins=BF16MixedPrecision("cpu"))`` is ``Fabric(precision="bf16-mixed")`` on the CPU.
"""

from __future__ import annotations

from ...precision import BF16MixedPrecision, Float32Precision, Float64Precision, FP16MixedPrecision
from ...precision.base import NumericPrecision as Precision
from ...precision.bf16_true import BF16TruePrecision
from ...precision.fp16_true import FP16TruePrecision

__all__ = [
    "BF16MixedPrecision",
    "BF16TruePrecision",
    "FP16MixedPrecision",
    "FP16TruePrecision",
    "Float32Precision",
    "Float64Precision",
    "Precision",
]
