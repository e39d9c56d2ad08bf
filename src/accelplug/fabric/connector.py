"""Fabric's arguments turned into a run's plan: the Trainer's selection rules, registry and plugins.

``Fabric(accelerator=..., strategy=..., devices=..., precision=...)`` goes through :func:`accelplug.select`
exactly as ``Trainer(...)`` does, so the same names, plugins and refusals apply. What is Fabric's own, as in
Lightning Fabric: ``precision=None`` means ``"32-true"``; ``"16-mixed"`` on the CPU becomes ``"bf16-mixed"``
(with a warning); ``plugins`` may hold a precision object (a ``NumericPrecision``); the spellings
``ddp_spawn``/``ddp_fork``/``ddp_notebook`` are DDP started by ``launch(function)`` with multiprocessing instead
of re-launching the script; and ``strategy="fsdp"`` saves sharded checkpoints by default (the Trainer's default
is one full file).
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

from ..accelerator import Accelerator
from ..errors import MisconfigurationException
from ..registry import get_registry
from ..selection import Choices, RunSetup, Selection, build, cpu_half_as_bf16, select, sort_plugins
from ..strategies.base import Strategy, accelerator_of, plugin_of

__all__ = ["plan"]

#: Lightning's DDP spellings that start processes from ``launch(function)`` (multiprocessing start methods).
START_METHODS = {"ddp_spawn": "spawn", "ddp_fork": "fork", "ddp_notebook": "fork"}


def _check_num_nodes(num_nodes: object) -> int:
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, int) or num_nodes < 1:
        raise MisconfigurationException(f"num_nodes={num_nodes!r} is invalid: expected a positive int (default 1).")
    return num_nodes


def plan(
    accelerator: str | Accelerator | type[Accelerator],
    strategy: str | Strategy,
    devices: int | str | list[int] | tuple[int, ...],
    num_nodes: int,
    precision: str | int | None,
    plugins: Any,
) -> RunSetup:
    """Validate Fabric's arguments and resolve them into the run's record (:class:`~accelplug.selection.RunSetup`,
    the Trainer's too), with the start method its DDP spelling asked for."""
    num_nodes = _check_num_nodes(num_nodes)
    accelerator = accelerator_of(strategy, accelerator, given=True)  # a strategy built with one: Lightning's rule
    start_method = "popen"
    if isinstance(strategy, str) and strategy.strip().lower() in START_METHODS:
        start_method = START_METHODS[strategy.strip().lower()]
        strategy = "ddp"
    sorted_plugins = sort_plugins(plugins)
    if sorted_plugins.layer_sync is not None:
        raise MisconfigurationException(
            f"plugins holds {sorted_plugins.layer_sync!r}, a Trainer plugin: Fabric takes a Precision or a "
            "ClusterEnvironment; convert BatchNorm layers yourself with torch.nn.SyncBatchNorm.convert_sync_batchnorm."
        )
    # A strategy built with a precision or cluster environment (Lightning's form) gives them to the run, as the
    # Trainer's does; the same object in plugins= too is refused.
    given_precision = sorted_plugins.precision
    sorted_plugins = replace(
        sorted_plugins,
        precision=plugin_of(strategy, "precision_plugin", given_precision),
        cluster_environment=plugin_of(strategy, "cluster_environment", sorted_plugins.cluster_environment),
    )
    precision_name = "32-true" if precision is None else precision
    choices = Choices(accelerator, devices, strategy, precision_name, num_nodes)
    own_precision = sorted_plugins.precision is not None
    setup = build(
        choices,
        sorted_plugins,
        precision_given=precision is not None and sorted_plugins.precision is given_precision,
        make_strategy=_strategy_from_name,
        adjust=None if own_precision else cpu_half_as_bf16("Fabric"),
        select_with=_select,
    )
    if start_method != "popen" and not setup.strategy.is_distributed:
        start_method = "popen"  # one device: nothing to start
    return replace(setup, start_method=start_method)


def _select(
    accelerator: Any, devices: Any, strategy: str | Strategy, precision: str | int, num_nodes: int
) -> Selection:
    """:func:`select`, with Lightning Fabric's fallback for ``strategy="dp"``: ``DataParallel`` has nothing to
    split on the CPU, so there it is DDP (with Lightning's warning); on an accelerator it stays refused."""
    if not (isinstance(strategy, str) and strategy.strip().lower() == "dp"):
        return select(accelerator, devices, strategy, precision, num_nodes=num_nodes)
    selection = select(accelerator, devices, "ddp", precision, num_nodes=num_nodes)
    if selection.root_device.type != "cpu":
        from ..strategies.data_parallel import DataParallelStrategy

        DataParallelStrategy()  # raises: accelplug runs several GPUs with DDP
    warnings.warn("'dp' is not supported on CPUs, hence setting `strategy='ddp'`.", UserWarning, stacklevel=5)
    return selection


def _strategy_from_name(name: str) -> Strategy:
    from ..strategies.fsdp import FSDPStrategy

    cls = get_registry().get_strategy(name)
    if cls is FSDPStrategy:
        from .strategies import FSDPStrategy as FabricFSDP

        return FabricFSDP()
    return cls()
