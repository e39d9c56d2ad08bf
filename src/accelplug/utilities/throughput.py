"""``lightning.fabric.utilities.throughput``'s names: ``Throughput``, ``get_available_flops``, ``measure_flops``."""

from __future__ import annotations

from ..measure.flops import measure_flops
from ..measure.throughput import Throughput, get_available_flops, precision_compute_dtype

__all__ = ["Throughput", "get_available_flops", "measure_flops", "precision_compute_dtype"]
