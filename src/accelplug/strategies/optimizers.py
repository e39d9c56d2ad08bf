"""Reading what ``configure_optimizers()`` returns, in each of the shapes Lightning accepts.

Kept below the Trainer and the strategies: the strategy calls ``configure_optimizers()`` at the end of
its preparation order (after wrapping the module), and the loop only steps what comes back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

import torch

from ..errors import MisconfigurationException

__all__ = ["LRSchedulerConfig", "OptimizerSetup", "parse_optimizers"]

_SHAPES = (
    "an optimizer, a list of optimizers, a dict {'optimizer': opt, 'lr_scheduler': sched or "
    "{'scheduler': sched, 'interval': 'epoch'|'step', 'frequency': n, 'monitor': metric}}, "
    "a list of such dicts, or a pair (optimizers, schedulers)"
)


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
    #: Lightning's "strict": a monitored metric that was not logged is an error (False: skip the step).
    strict: bool = True


@dataclass
class OptimizerSetup:
    optimizers: list[torch.optim.Optimizer]
    schedulers: list[LRSchedulerConfig]


def _is_plateau(scheduler: Any) -> bool:
    return isinstance(scheduler, torch.optim.lr_scheduler.ReduceLROnPlateau)


def _scheduler(value: Any, monitor: str | None = None) -> LRSchedulerConfig:
    config = _scheduler_config(value, monitor)
    if _is_plateau(config.scheduler) and config.monitor is None:
        raise MisconfigurationException(
            "`configure_optimizers` must include a monitor when a `ReduceLROnPlateau` scheduler is used; return "
            "{'optimizer': opt, 'lr_scheduler': {'scheduler': sched, 'monitor': 'val_loss'}} (any logged name)."
        )
    return config


def _not_a_scheduler(value: Any) -> MisconfigurationException:
    return MisconfigurationException(
        f"The provided lr scheduler `{type(value).__name__}` doesn't follow PyTorch's LRScheduler API: {value!r} has "
        "no step(). Return a torch.optim.lr_scheduler object, or give yours a step() method."
    )


def _scheduler_config(value: Any, monitor: str | None) -> LRSchedulerConfig:
    if isinstance(value, Mapping):
        if "scheduler" not in value:
            raise MisconfigurationException(
                f'The lr scheduler dict must have the key "scheduler" with its item being an lr scheduler; got keys '
                f"{sorted(value)}."
            )
        interval = value.get("interval", "epoch")
        if interval not in ("epoch", "step"):
            raise MisconfigurationException(
                f'The "interval" key in lr scheduler dict must be "step" or "epoch" but is "{interval}".'
            )
        frequency = value.get("frequency", 1)
        if not isinstance(frequency, int) or isinstance(frequency, bool) or frequency < 1:
            raise MisconfigurationException(f"lr_scheduler frequency={frequency!r} is invalid; use an int >= 1.")
        unknown = sorted(set(value) - {f.name for f in fields(LRSchedulerConfig)})
        if unknown:
            raise MisconfigurationException(
                f"an lr_scheduler dict has unknown key(s) {unknown}; accepted: scheduler, interval, frequency, "
                "monitor, strict, name, reduce_on_plateau."
            )
        if not hasattr(value["scheduler"], "step"):
            raise _not_a_scheduler(value["scheduler"])
        return LRSchedulerConfig(
            value["scheduler"],
            name=value.get("name"),
            interval=interval,
            frequency=frequency,
            reduce_on_plateau=bool(value.get("reduce_on_plateau", _is_plateau(value["scheduler"]))),
            monitor=value.get("monitor", monitor),
            strict=bool(value.get("strict", True)),
        )
    if not hasattr(value, "step"):
        raise _not_a_scheduler(value)
    return LRSchedulerConfig(value, reduce_on_plateau=_is_plateau(value), monitor=monitor)


def _from_dict(config: Mapping[str, Any], setup: OptimizerSetup) -> None:
    if "optimizer" not in config:
        raise MisconfigurationException(
            f"configure_optimizers() returned a dict without an 'optimizer' key (keys: {sorted(config)}); "
            f"expected {_SHAPES}."
        )
    setup.optimizers.append(config["optimizer"])
    if config.get("lr_scheduler") is not None:
        setup.schedulers.append(_scheduler(config["lr_scheduler"], config.get("monitor")))


def parse_optimizers(returned: Any) -> OptimizerSetup:
    """Normalise the value of ``configure_optimizers()`` into optimizers and scheduler configs."""
    setup = OptimizerSetup([], [])
    if isinstance(returned, torch.optim.Optimizer):
        setup.optimizers.append(returned)
    elif isinstance(returned, Mapping):
        _from_dict(returned, setup)
    elif (
        isinstance(returned, tuple)
        and len(returned) == 2
        and isinstance(returned[0], Sequence)
        and isinstance(returned[1], Sequence)
    ):
        setup.optimizers.extend(returned[0])
        setup.schedulers.extend(_scheduler(s) for s in returned[1])
    elif isinstance(returned, Sequence) and not isinstance(returned, str):
        for item in returned:
            if isinstance(item, Mapping):
                _from_dict(item, setup)
            else:
                setup.optimizers.append(item)
    bad = [o for o in setup.optimizers if not isinstance(o, torch.optim.Optimizer)]
    if not setup.optimizers or bad:
        raise MisconfigurationException(
            f"Unknown configuration for model optimizers: configure_optimizers() returned {returned!r}, which holds "
            f"no usable optimizer; expected {_SHAPES}."
        )
    return setup
