"""The ``Logger`` base class: the protocol the Trainer speaks to every experiment tracker.

Lightning 2.6's loggers and ours share one interface, so a logger written for Lightning (a subclass of
``lightning.pytorch.loggers.Logger``) and one written for accelplug look the same to the Trainer:
``log_hyperparams`` once when fit starts, ``log_metrics`` at logging steps, ``log_graph`` when asked,
``after_save_checkpoint`` after every checkpoint the ``ModelCheckpoint`` writes, ``save`` now and then
and ``finalize(status)`` when the run ends ("success", "failed", or "finished" after a signal).

Only global rank 0 talks to a tracker. ``rank_zero_experiment`` makes a logger's ``experiment`` property
hand a do-nothing stand-in to the other ranks, so user code such as
``self.logger.experiment.add_image(...)`` runs unchanged on every rank without opening one tracker
run per process; ``rank_zero_only`` does the same for methods.
"""

from __future__ import annotations

import functools
import os
from abc import ABC, abstractmethod
from argparse import Namespace
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import torch

from ..errors import MisconfigurationException

__all__ = [
    "DummyExperiment",
    "DummyLogger",
    "Logger",
    "global_rank",
    "merge_dicts",
    "rank_zero_experiment",
    "rank_zero_only",
]

_T = TypeVar("_T")

#: Environment variables that name this process's rank before torch.distributed is set up, in the
#: order Lightning reads them (LOCAL_RANK before SLURM_PROCID: SLURM sets the latter even when it
#: does not manage the processes).
RANK_VARIABLES = ("RANK", "LOCAL_RANK", "SLURM_PROCID", "JSM_NAMESPACE_RANK")


def global_rank() -> int:
    """This process's global rank: torch.distributed's when it is set up, else the launcher's variables.

    Read at each call rather than once at import (as Lightning does) so a logger made before the process
    group exists still sees the right rank later. A variable that is set but not an integer is an error
    that names it, never a silent rank 0 on every process.
    """
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return int(torch.distributed.get_rank())
    for name in RANK_VARIABLES:
        value = os.environ.get(name)
        if value is None:
            continue
        try:
            return int(value)
        except ValueError:
            raise MisconfigurationException(
                f"The environment variable {name}={value!r} is not an integer rank; loggers read it to decide "
                f"which process talks to the tracker. Set it to this process's rank (0, 1, ...) or unset it."
            ) from None
    return 0


def rank_zero_only(fn: Callable[..., _T]) -> Callable[..., _T | None]:
    """Run ``fn`` on global rank 0 only; elsewhere do nothing and return None."""

    @functools.wraps(fn)
    def on_rank_zero(*args: Any, **kwargs: Any) -> _T | None:
        if global_rank() != 0:
            return None
        return fn(*args, **kwargs)

    return on_rank_zero


class DummyExperiment:
    """What ``logger.experiment`` is on ranks other than 0: every attribute is a method that does nothing.

    Indexing returns itself so ``logger.experiment[0].add_image(...)`` also works.
    """

    def nop(self, *args: Any, **kwargs: Any) -> None:
        """Accept any call and do nothing."""

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # copy/pickle probe special names: answer as a plain object would
        return self.nop

    def __getitem__(self, index: Any) -> DummyExperiment:
        return self

    def __setitem__(self, index: Any, value: Any) -> None:
        pass


def rank_zero_experiment(getter: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Wrap a logger's ``experiment`` getter: the real object on rank 0, a ``DummyExperiment`` elsewhere.

    The getter runs (and so creates the tracker's run) only on rank 0, on first use: constructing a logger
    in every process of a distributed job opens exactly one run. Typed ``Any``: the tracker's run object
    and the stand-in share no type, and user code calls the tracker's own methods on it.
    """

    @functools.wraps(getter)
    def experiment(self: Any) -> Any:
        if global_rank() != 0:
            return DummyExperiment()
        return getter(self)

    return experiment


class Logger(ABC):
    """Base class for experiment loggers, with Lightning 2.6's interface.

    A subclass must give ``name``, ``version``, ``log_metrics`` and ``log_hyperparams``; the rest has
    working defaults (no local folder, no graph, nothing to save, ``finalize`` saves). Trackers expose
    their own run object as ``experiment``.
    """

    @property
    @abstractmethod
    def name(self) -> str | None:
        """The experiment's name (for trackers, the project or experiment the run belongs to)."""

    @property
    @abstractmethod
    def version(self) -> int | str | None:
        """The run's version or id within ``name``."""

    @property
    def root_dir(self) -> str | None:
        """The folder that holds every version of this experiment, or None when nothing is written locally."""
        return None

    @property
    def log_dir(self) -> str | None:
        """The folder of this version, or None when nothing is written locally."""
        return None

    @property
    def save_dir(self) -> str | None:
        """The folder the logger was told to write under, or None when nothing is written locally."""
        return None

    @property
    def group_separator(self) -> str:
        """The character that groups metric names into sections (``"train/loss"``)."""
        return "/"

    @property
    def experiment(self) -> Any:
        """The tracker's own run object (None for loggers that have none); trackers override this."""
        return None

    @abstractmethod
    def log_metrics(self, metrics: Mapping[str, float], step: int | None = None) -> None:
        """Record ``metrics`` (name to number) at ``step``, as soon as they arrive."""

    @abstractmethod
    def log_hyperparams(self, params: dict[str, Any] | Namespace, *args: Any, **kwargs: Any) -> None:
        """Record the run's hyper-parameters (a dict or an ``argparse.Namespace``)."""

    def log_graph(self, model: torch.nn.Module, input_array: torch.Tensor | None = None) -> None:  # noqa: B027 - optional hook
        """Record the model's graph; loggers that cannot show one ignore it."""

    def save(self) -> None:  # noqa: B027 - optional hook
        """Make what was logged so far durable; loggers that write as they go have nothing to do."""

    def finalize(self, status: str) -> None:
        """The run ended with ``status`` ("success", "failed" or "finished"); by default, save."""
        self.save()

    def after_save_checkpoint(self, checkpoint_callback: Any) -> None:  # noqa: B027 - optional hook
        """A ``ModelCheckpoint`` just wrote a checkpoint; trackers that keep checkpoints upload it here."""


class DummyLogger(Logger):
    """A logger that records nothing and accepts any call, for code that needs a logger but must not log.

    Lightning swaps the user's logger for one of these while it runs throwaway steps (the learning-rate
    finder, ``fast_dev_run``) so user code that calls ``self.logger.whatever(...)`` keeps working.
    """

    def __init__(self) -> None:
        self._experiment = DummyExperiment()

    @property
    def experiment(self) -> DummyExperiment:
        return self._experiment

    @property
    def name(self) -> str:
        return ""

    @property
    def version(self) -> str:
        return ""

    def log_metrics(self, *args: Any, **kwargs: Any) -> None:
        pass

    def log_hyperparams(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getitem__(self, index: int) -> DummyLogger:
        return self

    def __getattr__(self, name: str) -> Callable[..., None]:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)  # else copy.deepcopy finds a "__deepcopy__" that returns None

        def ignore(*args: Any, **kwargs: Any) -> None:
            return None

        return ignore


def _mean(values: Sequence[float]) -> float:
    import statistics  # only when merging: statistics pulls decimal and fractions in

    return statistics.mean(values)


def merge_dicts(
    dicts: Sequence[Mapping[Any, Any]],
    agg_key_funcs: Mapping[Any, Any] | None = None,
    default_func: Callable[[Sequence[float]], float] | None = None,
) -> dict[Any, Any]:
    """One dict from several: each key's values (None skipped) aggregated by its function in ``agg_key_funcs``,
    else ``default_func`` (the mean); nested dicts are merged the same way, with the nested functions."""
    functions = agg_key_funcs or {}
    merged: dict[Any, Any] = {}
    for key in set().union(*(d.keys() for d in dicts)):
        values = [d[key] for d in dicts if d.get(key) is not None]
        function = functions.get(key)
        if values and isinstance(values[0], dict):
            merged[key] = merge_dicts(values, function, default_func)
        else:
            merged[key] = (function or default_func or _mean)(values)
    return merged
