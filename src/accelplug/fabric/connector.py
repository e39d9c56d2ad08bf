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
from dataclasses import dataclass, replace
from typing import Any

from ..accelerator import Accelerator
from ..environments.base import ClusterEnvironment
from ..errors import MisconfigurationException
from ..precision.base import NumericPrecision
from ..registry import get_registry
from ..selection import Selection, select, sort_plugins
from ..strategies.base import Strategy, accelerator_of

__all__ = ["FabricPlan", "plan"]

#: Lightning's DDP spellings that start processes from ``launch(function)`` (multiprocessing start methods).
START_METHODS = {"ddp_spawn": "spawn", "ddp_fork": "fork", "ddp_notebook": "fork"}


@dataclass(frozen=True)
class FabricPlan:
    selection: Selection
    strategy: Strategy
    precision: NumericPrecision
    num_nodes: int
    #: "popen" (a plain script re-launches itself, as ``Trainer(strategy="ddp")``), "spawn" or "fork".
    start_method: str
    #: The ``ClusterEnvironment`` given in ``plugins`` (None: the one detected at ``launch()``).
    cluster_environment: ClusterEnvironment | None = None


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
) -> FabricPlan:
    """Validate Fabric's arguments and resolve them into strategy and precision objects."""
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
    given_precision = sorted_plugins.precision
    if given_precision is not None and precision is not None:
        raise MisconfigurationException(
            f"precision={precision!r} and plugins={given_precision!r} both choose a precision; pass one of them."
        )
    registry = get_registry()
    if given_precision is not None:
        # A registered precision is checked against the accelerator like a name; an unregistered one is the user's.
        chosen: str | int = given_precision.name if given_precision.name in registry.precision_names() else "32-true"
    else:
        chosen = "32-true" if precision is None else precision
    selection = _select(accelerator, devices, strategy, chosen, num_nodes)
    if selection.precision == "16-mixed" and selection.root_device.type == "cpu" and given_precision is None:
        warnings.warn(
            "precision='16-mixed' on the CPU: Fabric uses precision='bf16-mixed' instead, as Lightning Fabric "
            "does (bfloat16 has float32's range, so the CPU needs no loss scaling for it).",
            UserWarning,
            stacklevel=3,
        )
        selection = replace(selection, precision="bf16-mixed")
    strategy_object = selection.strategy_object or _strategy_from_name(selection.strategy)
    precision_object = given_precision or registry.get_precision(selection.precision)(selection.root_device.type)
    if sorted_plugins.checkpoint_io is not None:  # Fabric saves and loads through it, as Lightning Fabric does
        if getattr(strategy_object, "_checkpoint_io", None) not in (None, sorted_plugins.checkpoint_io):
            raise MisconfigurationException(
                "plugins= and the strategy's checkpoint_io= both name the checkpoint writer; choose one."
            )
        strategy_object.checkpoint_io = sorted_plugins.checkpoint_io
    strategy_object.precision_plugin = precision_object  # the strategy's init contexts read it, as under a Trainer
    if start_method != "popen" and not strategy_object.is_distributed:
        start_method = "popen"  # one device: nothing to start
    return FabricPlan(
        selection, strategy_object, precision_object, num_nodes, start_method, sorted_plugins.cluster_environment
    )


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
    warnings.warn("'dp' is not supported on CPUs, hence setting `strategy='ddp'`.", UserWarning, stacklevel=4)
    return selection


def _strategy_from_name(name: str) -> Strategy:
    from ..strategies.fsdp import FSDPStrategy

    cls = get_registry().get_strategy(name)
    if cls is FSDPStrategy:
        from .strategies import FSDPStrategy as FabricFSDP

        return FabricFSDP()
    return cls()
