"""The path of ``measure_flops`` beside Lightning's other utilities; it lives in :mod:`accelplug.measure.flops`."""

from __future__ import annotations

from ..measure.flops import (
    measure_flops,
)

__all__ = [
    "measure_flops",
]
