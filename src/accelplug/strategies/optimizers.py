"""Reading what ``configure_optimizers()`` returns, in each of the shapes Lightning accepts.

Kept below the Trainer and the strategies: the strategy calls ``configure_optimizers()`` at the end of
its preparation order (after wrapping the module), and the loop only steps what comes back. The rules are
Lightning 2.6's: the same shapes, the same warnings for keys it ignores, and in manual optimization the
scheduler dict's stepping keys are ignored (the module steps its schedulers itself).
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch

from ..errors import MisconfigurationException
from ..overrides import overrides

__all__ = ["LRSchedulerConfig", "OptimizerSetup", "parse_optimizers"]

_SHAPES = (
    "an optimizer, a list of optimizers, a dict {'optimizer': opt, 'lr_scheduler': sched or "
    "{'scheduler': sched, 'interval': 'epoch'|'step', 'frequency': n, 'monitor': metric}}, "
    "a list of such dicts, or a pair ([optimizers], [schedulers])"
)
_OPTIMIZER_KEYS = frozenset({"optimizer", "lr_scheduler", "monitor"})
#: the keys of a scheduler dict that only automatic optimization reads (the module steps its own otherwise)
_AUTOMATIC_ONLY_KEYS = ("reduce_on_plateau", "monitor", "strict")


@dataclass
class LRSchedulerConfig:
    """One scheduler and when it steps (Lightning's ``LRSchedulerConfig``, ``trainer.lr_scheduler_configs``)."""

    scheduler: Any  # torch.optim.lr_scheduler.LRScheduler or ReduceLROnPlateau
    name: str | None = None
    interval: str = "epoch"
    frequency: int = 1
    #: whether the scheduler steps with a monitored value (a ``ReduceLROnPlateau`` unless the dict said otherwise)
    reduce_on_plateau: bool = False
    monitor: str | None = None
    #: Lightning's "strict": a monitored metric that was not logged is an error (False: warn and skip the step).
    strict: bool = True


@dataclass
class OptimizerSetup:
    optimizers: list[torch.optim.Optimizer]
    schedulers: list[LRSchedulerConfig]


class _WrongOptimizerUse(MisconfigurationException, RuntimeError):
    """Lightning raises a ``RuntimeError`` for several optimizers in automatic optimization."""


class _SchedulerWithoutState(MisconfigurationException, TypeError):
    """Lightning raises a ``TypeError`` for a scheduler without ``state_dict``/``load_state_dict``."""


class _NoOptimizer(torch.optim.Optimizer):
    """What a fit steps when ``configure_optimizers()`` returned None (Lightning's choice too): the closure runs,
    so ``training_step`` and ``backward`` still happen, and no parameter changes."""

    def __init__(self) -> None:
        super().__init__([torch.zeros(1)], {})

    def step(self, closure: Any = None) -> Any:  # type: ignore[override]
        return closure() if closure is not None else None

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        pass  # the placeholder parameter only: nothing of the module's is ever added

    def state_dict(self) -> dict[str, Any]:
        return {}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        pass  # nothing was saved

    def zero_grad(self, set_to_none: bool = True) -> None:
        pass  # the module's gradients are not this optimizer's


def _is_plateau(scheduler: Any) -> bool:
    return isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)


def _unknown_configuration(returned: Any) -> MisconfigurationException:
    return MisconfigurationException(
        f"Unknown configuration for model optimizers: configure_optimizers() returned {returned!r}; expected {_SHAPES}."
    )


def _optimizer_dict(config: Mapping[str, Any]) -> None:
    if "optimizer" not in config:
        raise MisconfigurationException(
            f"configure_optimizers() returned a dict without an 'optimizer' key (keys: {sorted(config)}); "
            f"expected {_SHAPES}."
        )
    extra = set(config) - _OPTIMIZER_KEYS
    if extra:
        warnings.warn(
            f"Found unsupported keys in the optimizer configuration: {extra}; accelplug ignores them (accepted: "
            f"{sorted(_OPTIMIZER_KEYS)}).",
            RuntimeWarning,
            stacklevel=4,
        )


def _is_optimizer(value: Any) -> bool:
    return isinstance(value, torch.optim.Optimizer)


def _split(returned: Any) -> tuple[list[Any], list[Any], str | None]:
    """The optimizers, the schedulers (objects or dicts) and the dict's monitor, of each shape Lightning accepts."""
    if _is_optimizer(returned):
        return [returned], [], None
    if isinstance(returned, Mapping):
        _optimizer_dict(returned)
        scheduler = returned.get("lr_scheduler")
        return [returned["optimizer"]], [] if scheduler is None else [scheduler], returned.get("monitor")
    if not isinstance(returned, Sequence) or isinstance(returned, str):
        raise _unknown_configuration(returned)
    first = returned[0] if returned else None
    if len(returned) == 2 and isinstance(first, Sequence) and all(_is_optimizer(o) for o in first):
        second = returned[1]
        return list(first), list(second) if isinstance(second, Sequence) else [second], None
    if returned and all(isinstance(item, Mapping) for item in returned):
        schedulers: list[Any] = []
        for item in returned:
            _optimizer_dict(item)
            scheduler = item.get("lr_scheduler")
            if scheduler is not None:  # the dict's own monitor is the default of its scheduler's
                as_dict = dict(scheduler) if isinstance(scheduler, Mapping) else {"scheduler": scheduler}
                if item.get("monitor") is not None:
                    as_dict.setdefault("monitor", item["monitor"])
                schedulers.append(as_dict)
        return [item["optimizer"] for item in returned], schedulers, None
    if returned and all(_is_optimizer(item) for item in returned):
        return list(returned), [], None
    raise _unknown_configuration(returned)


def _automatic_scheduler(value: Any, monitor: str | None) -> LRSchedulerConfig:
    if not isinstance(value, Mapping):
        if _is_plateau(value) and monitor is None:
            raise MisconfigurationException(
                "`configure_optimizers` must include a monitor when a `ReduceLROnPlateau` scheduler is used; return "
                "{'optimizer': opt, 'lr_scheduler': sched, 'monitor': 'val_loss'} (any logged name)."
            )
        return LRSchedulerConfig(value, reduce_on_plateau=_is_plateau(value), monitor=monitor)
    supported = {f.name for f in fields(LRSchedulerConfig)}
    extra = set(value) - supported
    if extra:
        warnings.warn(
            f"Found unsupported keys in the lr scheduler dict: {extra}. HINT: remove them from the output of "
            f"`configure_optimizers` (accepted: {sorted(supported)}).",
            RuntimeWarning,
            stacklevel=4,
        )
    if "scheduler" not in value:
        raise MisconfigurationException(
            f'The lr scheduler dict must have the key "scheduler" with its item being an lr scheduler; got keys '
            f"{sorted(value)}."
        )
    config = {key: item for key, item in value.items() if key in supported}
    if config.get("interval", "epoch") not in ("epoch", "step"):
        raise MisconfigurationException(
            f'The "interval" key in lr scheduler dict must be "step" or "epoch" but is "{config["interval"]}".'
        )
    frequency = config.get("frequency", 1)
    if not isinstance(frequency, int) or isinstance(frequency, bool) or frequency < 1:
        raise MisconfigurationException(f"lr_scheduler frequency={frequency!r} is invalid; use an int >= 1.")
    config.setdefault("reduce_on_plateau", _is_plateau(config["scheduler"]))
    if config["reduce_on_plateau"] and config.get("monitor") is None:
        raise MisconfigurationException(
            "The lr scheduler dict must include a monitor when a `ReduceLROnPlateau` scheduler is used; return "
            "{'optimizer': opt, 'lr_scheduler': {'scheduler': sched, 'monitor': 'val_loss'}} (any logged name)."
        )
    if isinstance(config["scheduler"], torch.optim.lr_scheduler.OneCycleLR) and config.get("interval") != "step":
        warnings.warn(
            "A `OneCycleLR` scheduler is using 'interval': 'epoch'. Are you sure you didn't mean 'interval': 'step'?",
            RuntimeWarning,
            stacklevel=4,
        )
    return LRSchedulerConfig(**config)


def _manual_scheduler(value: Any) -> LRSchedulerConfig:
    """In manual optimization the module steps its schedulers: the keys that say how the loop would are ignored
    (``interval`` and ``frequency`` stay, for ``LearningRateMonitor``)."""
    if not isinstance(value, Mapping):
        return LRSchedulerConfig(value)
    ignored = [key for key in value if key in _AUTOMATIC_ONLY_KEYS]
    if ignored:
        warnings.warn(
            f"The lr scheduler dict contains the key(s) {ignored}, but the keys will be ignored. You need to call "
            "`lr_scheduler.step()` manually in manual optimization.",
            RuntimeWarning,
            stacklevel=4,
        )
    return LRSchedulerConfig(**{key: item for key, item in value.items() if key not in _AUTOMATIC_ONLY_KEYS})


def _parameters(function: Any) -> tuple[str, ...]:
    try:
        return tuple(inspect.signature(function).parameters)
    except (TypeError, ValueError):  # a builtin or a mock without a signature: it names no optimizer_idx
        return ()


def _check(optimizers: list[Any], schedulers: list[LRSchedulerConfig], module: Any, automatic: bool) -> None:
    step = getattr(module, "training_step", None)
    if step is not None and "optimizer_idx" in _parameters(step):
        raise _WrongOptimizerUse(
            "Training with multiple optimizers is only supported with manual optimization. Remove the `optimizer_idx` "
            "argument from `training_step`, set `self.automatic_optimization = False` and take your optimizers in "
            "`training_step` with `opt1, opt2, ... = self.optimizers()`."
        )
    if automatic and len(optimizers) > 1:
        raise _WrongOptimizerUse(
            f"Training with multiple optimizers is only supported with manual optimization; configure_optimizers() "
            f"returned {len(optimizers)}. Set `self.automatic_optimization = False`, then take your optimizers in "
            "`training_step` with `opt1, opt2, ... = self.optimizers()`."
        )
    for config in schedulers:
        scheduler = config.scheduler
        attached = getattr(scheduler, "optimizer", None)
        if attached is not None and not any(attached is optimizer for optimizer in optimizers):
            raise MisconfigurationException(
                f"Some schedulers are attached with an optimizer that wasn't returned from `configure_optimizers`: "
                f"{type(scheduler).__name__} steps a {type(attached).__name__} that is not among "
                f"{[type(o).__name__ for o in optimizers]}."
            )
        if not (
            callable(getattr(scheduler, "state_dict", None)) and callable(getattr(scheduler, "load_state_dict", None))
        ):
            raise _SchedulerWithoutState(
                f"The provided lr scheduler `{type(scheduler).__name__}` is invalid. It should have `state_dict` and "
                "`load_state_dict` methods defined (checkpoints save and restore it)."
            )
        torch_scheduler = isinstance(
            scheduler, (torch.optim.lr_scheduler.LRScheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)
        )
        if automatic and not torch_scheduler and not overrides(module, "lr_scheduler_step"):
            raise MisconfigurationException(
                f"The provided lr scheduler `{type(scheduler).__name__}` doesn't follow PyTorch's LRScheduler API. "
                "Override `LightningModule.lr_scheduler_step(scheduler, metric)` to step it, or use a "
                "torch.optim.lr_scheduler class."
            )


def parse_optimizers(returned: Any, module: Any = None) -> OptimizerSetup:
    """Normalise the value of ``configure_optimizers()`` of ``module`` into optimizers and scheduler configs.

    None (no optimizer) warns and gives a placeholder that steps nothing, as Lightning does.
    """
    if returned is None:
        warnings.warn(
            "`LightningModule.configure_optimizers` returned `None`, this fit will run with no optimizer: the "
            "parameters will not change.",
            UserWarning,
            stacklevel=3,
        )
        returned = _NoOptimizer()
    optimizers, schedulers, monitor = _split(returned)
    bad = [o for o in optimizers if not isinstance(o, torch.optim.Optimizer)]
    if bad:
        raise _unknown_configuration(returned)
    automatic = bool(getattr(module, "automatic_optimization", True))
    configs = [_automatic_scheduler(s, monitor) if automatic else _manual_scheduler(s) for s in schedulers]
    _check(optimizers, configs, module, automatic)
    return OptimizerSetup(optimizers, configs)
