"""Which cluster environment a run adopts, and what adopting it does: what the Trainer and Fabric ask at
construction.

Apart from :mod:`accelplug.launcher` (which starts processes and builds torchrun's arguments) so that
``Trainer()`` loads only these few functions, not the launcher's plans and parsers (issue 28's start-up).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..strategies.base import Strategy
    from .base import ClusterEnvironment

__all__ = ["adopt_environment", "attach_environment", "cluster_environment"]


def cluster_environment(given: ClusterEnvironment | None = None) -> ClusterEnvironment | None:
    """The environment a run uses: ``given`` (``plugins=[SLURMEnvironment()]``), else the one detected
    (:meth:`AcceleratorRegistry.detect_environment`), else None (the Trainer starts its own processes)."""
    if given is not None:
        return given
    from ..registry import get_registry

    found = get_registry().detect_environment()
    return found() if found is not None else None


def attach_environment(strategy: Strategy, environment: ClusterEnvironment | None) -> None:
    """Give a one-process-per-device strategy the environment its process identity is asked of.

    Trainer and Fabric ask the strategy (``node_rank``...), the strategy asks this environment: the one that
    started the processes, else Lightning's local one (the Trainer or Fabric starts them, or torchrun's
    variables are read). A strategy of one process has none, as in Lightning.
    """
    from ..strategies.parallel import ParallelStrategy

    if isinstance(strategy, ParallelStrategy):
        from .lightning import LightningEnvironment

        strategy.cluster_environment = environment if environment is not None else LightningEnvironment()


def adopt_environment(environment: ClusterEnvironment | None, num_devices: int, num_nodes: int) -> bool:
    """When ``environment`` started the processes: check ``devices``/``num_nodes`` against it and export its
    ranks and rendezvous for torch (:func:`~accelplug.environments.rendezvous.export_rendezvous`); True then.

    False when nothing started the processes, so the caller may start them itself.
    """
    if environment is None or not environment.creates_processes_externally:
        return False
    from .rendezvous import export_rendezvous

    environment.validate_settings(num_devices, num_nodes)
    export_rendezvous(environment)
    return True
