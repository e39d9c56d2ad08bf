"""The hooks a plugin implements to give accelplug new hardware or new ways to run on it.

Built-in accelerators, strategies, precisions and cluster environments arrive through these same hooks
(``accelplug.builtin_plugin``), so the plugin API is exercised on every run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from .accelerator import Accelerator
    from .environments.base import ClusterEnvironment
    from .precision.base import NumericPrecision
    from .strategies.base import Strategy

PROJECT_NAME = "accelplug"

hookspec = pluggy.HookspecMarker(PROJECT_NAME)
hookimpl = pluggy.HookimplMarker(PROJECT_NAME)


@hookspec
def register_accelerators() -> Iterable[type[Accelerator]]:  # type: ignore[empty-body]
    """Return the ``Accelerator`` subclasses this plugin provides."""


@hookspec
def register_strategies() -> Iterable[type[Strategy]]:  # type: ignore[empty-body]
    """Return the ``Strategy`` subclasses (ways to spread a run over devices) this plugin provides."""


@hookspec
def register_precisions() -> Iterable[type[NumericPrecision]]:  # type: ignore[empty-body]
    """Return the ``NumericPrecision`` subclasses (numeric precisions such as ``"bf16-mixed"``) this plugin provides."""


@hookspec
def register_cluster_environments() -> Iterable[type[ClusterEnvironment]]:  # type: ignore[empty-body]
    """Return the ``ClusterEnvironment`` subclasses (schedulers and launchers that start processes) it provides."""
