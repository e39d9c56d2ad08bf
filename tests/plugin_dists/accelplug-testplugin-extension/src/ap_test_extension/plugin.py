"""The registration lines: one per added class."""

from __future__ import annotations

from accelplug import hookimpl

from .static_scale import StaticScalePrecision
from .traced_strategy import TracedStrategy


@hookimpl
def register_precisions() -> list[type[StaticScalePrecision]]:
    return [StaticScalePrecision]


@hookimpl
def register_strategies() -> list[type[TracedStrategy]]:
    return [TracedStrategy]
