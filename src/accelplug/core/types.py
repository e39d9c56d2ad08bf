"""The type aliases Lightning modules annotate their hooks with (``-> STEP_OUTPUT``, ``-> OptimizerLRScheduler``).

Aliases only, for annotations: what ``configure_optimizers`` may really return is checked by
``accelplug.strategies.optimizers`` when a run starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, Protocol, TypeAlias, TypedDict, runtime_checkable

import torch
from torch import Tensor
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler, ReduceLROnPlateau
from typing_extensions import NotRequired

from ..strategies.optimizers import LRSchedulerConfig

__all__ = [
    "EVAL_DATALOADERS",
    "STEP_OUTPUT",
    "TRAIN_DATALOADERS",
    "CollectibleGroup",
    "DistributedDataParallel",
    "LRSchedulerConfig",
    "LRSchedulerConfigType",
    "LRSchedulerPLType",
    "LRSchedulerType",
    "LRSchedulerTypeTuple",
    "LRSchedulerTypeUnion",
    "Optimizable",
    "OptimizerConfig",
    "OptimizerLRScheduler",
    "OptimizerLRSchedulerConfig",
    "Steppable",
    "UntypedStorage",
]

# Lightning's underscored aliases: private by name, yet libraries built on Lightning annotate their public
# signatures with them (pytorch-forecasting imports ``_PATH`` and ``_MAP_LOCATION_TYPE``), so they import from the
# same modules here. Not in ``__all__``, as not in Lightning's.
_PATH = str | Path
_DEVICE = torch.device | str | int
_MAP_LOCATION_TYPE = (
    _DEVICE | Callable[[torch.UntypedStorage, str], torch.UntypedStorage | None] | dict[_DEVICE, _DEVICE] | None
)
_PARAMETERS = Iterator[torch.nn.Parameter]
_NUMBER = int | float
_METRIC = Any  # Lightning: a torchmetrics Metric, a tensor or a number (torchmetrics is not imported for a name)
_EVALUATE_OUTPUT = list[Mapping[str, float]]
_PREDICT_OUTPUT = list[Any] | list[list[Any]]

#: What ``training_step`` and the evaluation steps may return: a loss tensor, a dict with ``"loss"``, or None.
STEP_OUTPUT = Tensor | Mapping[str, Any] | None
#: Any iterable of batches, or a collection of them.
TRAIN_DATALOADERS = Any
EVAL_DATALOADERS = Any

LRSchedulerTypeUnion = LRScheduler | ReduceLROnPlateau
#: The scheduler classes, for ``isinstance``.
LRSchedulerTypeTuple = (LRScheduler, ReduceLROnPlateau)
LRSchedulerType = type[LRScheduler] | type[ReduceLROnPlateau]
LRSchedulerPLType = LRScheduler | ReduceLROnPlateau


@runtime_checkable
class DistributedDataParallel(Protocol):
    """What a data-parallel wrapper of a module offers (``torch.nn.parallel.DistributedDataParallel`` does):
    the wrapped ``module`` and ``no_sync()``, the context that skips gradient synchronisation."""

    module: Any

    def no_sync(self) -> AbstractContextManager[None]: ...


class LRSchedulerConfigType(TypedDict):
    """The ``"lr_scheduler"`` dict of ``configure_optimizers``: the scheduler and when it steps."""

    scheduler: LRSchedulerTypeUnion
    interval: NotRequired[str]
    frequency: NotRequired[int]
    monitor: NotRequired[str]
    strict: NotRequired[bool]
    name: NotRequired[str | None]
    reduce_on_plateau: NotRequired[bool]


class OptimizerConfig(TypedDict):
    optimizer: Optimizer


class OptimizerLRSchedulerConfig(TypedDict):
    optimizer: Optimizer
    lr_scheduler: NotRequired[LRSchedulerTypeUnion | LRSchedulerConfigType]
    monitor: NotRequired[str]


#: Every shape ``configure_optimizers`` may return.
OptimizerLRScheduler = (
    Optimizer
    | Sequence[Optimizer]
    | tuple[Sequence[Optimizer], Sequence[LRSchedulerTypeUnion | LRSchedulerConfigType]]
    | OptimizerConfig
    | OptimizerLRSchedulerConfig
    | Sequence[OptimizerConfig]
    | Sequence[OptimizerLRSchedulerConfig]
    | None
)


#: The storage behind a tensor (what a ``map_location`` function receives).
UntypedStorage: TypeAlias = torch.UntypedStorage


@runtime_checkable
class CollectibleGroup(Protocol):
    """A group of processes a collective runs over: it knows its size and this process's rank in it."""

    def size(self) -> int: ...

    def rank(self) -> int: ...


@runtime_checkable
class _Stateful(Protocol):
    """Lightning's test of an object a checkpoint saves through its own ``state_dict``/``load_state_dict``
    (``isinstance(obj, _Stateful)``), as ``fabric.save`` and ``fabric.load`` treat every such entry of a state."""

    def state_dict(self) -> dict[Any, Any]: ...

    def load_state_dict(self, state_dict: dict[Any, Any]) -> None: ...


@runtime_checkable
class Steppable(Protocol):
    """Anything with an optimizer's ``step(closure=None)``."""

    def step(self, closure: Callable[[], float] | None = ...) -> float | None: ...


@runtime_checkable
class Optimizable(Steppable, Protocol):
    """Anything shaped like a torch optimizer: ``step``, its parameter groups, defaults and state, and saving."""

    param_groups: list[dict[Any, Any]]
    defaults: dict[Any, Any]
    state: Any

    def state_dict(self) -> dict[str, dict[Any, Any]]: ...

    def load_state_dict(self, state_dict: dict[str, dict[Any, Any]]) -> None: ...
