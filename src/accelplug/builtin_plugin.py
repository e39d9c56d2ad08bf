"""accelplug's own accelerators, strategies, precisions and cluster environments, registered through the
public hooks like any plugin.

Each hook returns its package's one list of built-ins (``BUILTIN_ACCELERATORS``, ``BUILTIN_STRATEGIES``,
``BUILTIN_PRECISIONS``, ``BUILTIN_ENVIRONMENTS``), so adding a built-in never touches this file. Strategies and
cluster environments are declared by name (``hookspecs.Deferred``), as a plugin may declare its own: the
registry imports one where a run uses it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from .hookspecs import Deferred, hookimpl

if TYPE_CHECKING:
    from .accelerator import Accelerator
    from .precision.base import NumericPrecision


@hookimpl
def register_accelerators() -> Iterable[type[Accelerator]]:
    from .accelerators import BUILTIN_ACCELERATORS

    return list(BUILTIN_ACCELERATORS)


@hookimpl
def register_strategies() -> Iterable[Deferred]:
    from .strategies import BUILTIN_STRATEGIES

    return [Deferred(target, name) for name, target in BUILTIN_STRATEGIES]


@hookimpl
def register_precisions() -> Iterable[type[NumericPrecision]]:
    from .precision import BUILTIN_PRECISIONS

    return list(BUILTIN_PRECISIONS)


@hookimpl
def register_cluster_environments() -> Iterable[Deferred]:
    from .environments import BUILTIN_ENVIRONMENTS

    return [
        Deferred(target, name, detect_priority=priority, detect_when=variables)
        for name, target, priority, variables in BUILTIN_ENVIRONMENTS
    ]
