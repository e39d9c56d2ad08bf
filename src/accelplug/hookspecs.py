"""The hooks a plugin implements to give accelplug new hardware or new ways to run on it.

Built-in accelerators, strategies, precisions and cluster environments arrive through these same hooks
(``accelplug.builtin_plugin``), so the plugin API is exercised on every run.

A strategy or cluster environment may be given as a :class:`Deferred` declaration instead of the class: its
name (and, for an environment, what detection needs) now, its module when a run first uses it. That is how the
built-ins keep DDP, FSDP and the schedulers' environments off the start-up path.
"""

from __future__ import annotations

import importlib
import os
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


class Deferred:
    """A strategy or cluster environment registered by name, its class imported where it is first needed.

    ``target`` is ``"module:ClassName"``. The registry lists ``name`` at once and imports the class when a run
    asks for it (``get_strategy``, ``get_environment``), then checks that it is the kind of class the hook
    registers and has the declared name (and ``detect_priority``); a class that does not match is reported as
    the plugin's failure. For a cluster environment, ``detect_priority`` orders detection as the class
    attribute would, and ``detect_when`` names the variables its ``detect()`` needs: while none of them is set,
    detection passes the environment over without importing it (``None``: always import and ask).
    """

    __slots__ = ("detect_priority", "detect_when", "name", "target")

    def __init__(
        self,
        target: str,
        name: str,
        *,
        detect_priority: int | None = None,
        detect_when: tuple[str, ...] | None = None,
    ) -> None:
        self.target = target
        self.name = name
        self.detect_priority = detect_priority
        self.detect_when = detect_when

    def load(self) -> object:
        """Import the module and return the object ``target`` names."""
        module, _, attribute = self.target.partition(":")
        found: object = importlib.import_module(module)
        for part in attribute.split("."):
            found = getattr(found, part)
        return found

    def may_detect(self) -> bool:
        """Whether detection has to ask the class: one of ``detect_when`` is set now (always, when it is None)."""
        return self.detect_when is None or any(name in os.environ for name in self.detect_when)

    def __repr__(self) -> str:
        return f"Deferred({self.target!r}, name={self.name!r})"


@hookspec
def register_accelerators() -> Iterable[type[Accelerator]]:  # type: ignore[empty-body]
    """Return the ``Accelerator`` subclasses this plugin provides."""


@hookspec
def register_strategies() -> Iterable[type[Strategy] | Deferred]:  # type: ignore[empty-body]
    """Return the ``Strategy`` subclasses (ways to spread a run over devices) this plugin provides, or a
    :class:`Deferred` declaration of each."""


@hookspec
def register_precisions() -> Iterable[type[NumericPrecision]]:  # type: ignore[empty-body]
    """Return the ``NumericPrecision`` subclasses (numeric precisions such as ``"bf16-mixed"``) this plugin provides."""


@hookspec
def register_cluster_environments() -> Iterable[type[ClusterEnvironment] | Deferred]:  # type: ignore[empty-body]
    """Return the ``ClusterEnvironment`` subclasses (schedulers and launchers that start processes) it provides,
    or a :class:`Deferred` declaration of each (with ``detect_priority``)."""
