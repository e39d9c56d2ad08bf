"""``lightning.fabric.utilities.throughput``'s names: ``Throughput``, ``get_available_flops``, ``measure_flops``."""

from __future__ import annotations

from ..callbacks.throughput import Throughput, get_available_flops, precision_compute_dtype
from .flops import measure_flops

__all__ = ["Throughput", "get_available_flops", "measure_flops", "precision_compute_dtype"]
