"""The Trainer's Lightning names for its loop objects and what they decide (``fit_loop``, ``val_check_batch``...).

Mixed into ``Trainer``; the loop objects themselves are :mod:`.views`, one of each per Trainer, made when first read.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ...data.sources import has_loader_source
from ...overrides import overrides
from ..display.defaults import progress_bar_callback
from ..options.entries import TrainerOptions
from ..state import LoopState
from .views import EvaluationLoopView, FitLoopView, Host, PredictionLoopView

__all__ = ["LoopObjects"]

_V = TypeVar("_V")


class LoopObjects:
    """The Trainer's Lightning names for its loops and what they decide (mixed into ``Trainer``)."""

    state: LoopState
    options: TrainerOptions
    callbacks: list[Any]

    def _view(self, name: str, make: Callable[[Host], _V]) -> _V:
        """One view of each kind per Trainer, so ``trainer.fit_loop is trainer.fit_loop`` as in Lightning."""
        views: dict[str, Any] = self.__dict__.setdefault("_loop_views", {})
        if name not in views:
            views[name] = make(self)  # type: ignore[arg-type]  # the Trainer is the Host
        view: _V = views[name]
        return view

    @property
    def fit_loop(self) -> FitLoopView:
        return self._view("fit", FitLoopView)

    @property
    def validate_loop(self) -> EvaluationLoopView:
        return self._view("validate", lambda host: EvaluationLoopView(host, "validate:validation"))

    @property
    def test_loop(self) -> EvaluationLoopView:
        return self._view("test", lambda host: EvaluationLoopView(host, "test:test"))

    @property
    def predict_loop(self) -> PredictionLoopView:
        return self._view("predict", PredictionLoopView)

    @property
    def val_check_batch(self) -> int | float | None:
        """After a fit set up its data: validation runs every this many training batches (None before a fit)."""
        counts = self.state.data.get("train")
        if counts is None:
            return None
        length, interval = counts[1], self.options.val_check_interval
        length = length[0] if isinstance(length, list) else length
        if isinstance(interval, int):
            return interval
        if length is None or length == float("inf"):
            return float("inf")
        return max(1, int(length * float(interval if interval is not None else 1.0)))

    @property
    def enable_validation(self) -> bool:
        """Whether a fit validates: the module writes ``validation_step``, there is validation data, and
        ``limit_val_batches`` is not 0."""
        module = getattr(self, "lightning_module", None)
        if module is None or not overrides(module, "validation_step") or self.options.limit_val_batches == 0:
            return False
        return "val" in self.state.data or has_loader_source("validate", module, getattr(self, "datamodule", None))

    @property
    def progress_bar_callback(self) -> Any:
        """The progress-bar callback among the Trainer's callbacks, or None (``enable_progress_bar=False``)."""
        return progress_bar_callback(self.callbacks)

    @property
    def distributed_sampler_kwargs(self) -> dict[str, int] | None:
        """``num_replicas``/``rank`` for a ``DistributedSampler`` under a parallel strategy, else None."""
        kwargs: dict[str, int] | None = getattr(getattr(self, "strategy", None), "distributed_sampler_kwargs", None)
        return kwargs
