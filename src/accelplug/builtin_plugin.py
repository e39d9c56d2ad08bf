"""accelplug's own accelerators, strategies, precisions and cluster environments, registered through the
public hooks like any plugin.

Each hook returns its package's one list of built-ins (``BUILTIN_ACCELERATORS``, ``BUILTIN_STRATEGIES``,
``BUILTIN_PRECISIONS``, ``BUILTIN_ENVIRONMENTS``), so adding a built-in never touches this file.
"""

from __future__ import annotations

from collections.abc import Iterable

from .accelerator import Accelerator
from .environments.base import ClusterEnvironment
from .hookspecs import hookimpl
from .precision.base import NumericPrecision
from .strategies.base import Strategy


@hookimpl
def register_accelerators() -> Iterable[type[Accelerator]]:
    from .accelerators import BUILTIN_ACCELERATORS

    return list(BUILTIN_ACCELERATORS)


@hookimpl
def register_strategies() -> Iterable[type[Strategy]]:
    from .strategies import BUILTIN_STRATEGIES

    return list(BUILTIN_STRATEGIES)


@hookimpl
def register_precisions() -> Iterable[type[NumericPrecision]]:
    from .precision import BUILTIN_PRECISIONS

    return list(BUILTIN_PRECISIONS)


@hookimpl
def register_cluster_environments() -> Iterable[type[ClusterEnvironment]]:
    from .environments import BUILTIN_ENVIRONMENTS

    return list(BUILTIN_ENVIRONMENTS)
