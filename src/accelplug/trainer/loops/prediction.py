"""Prediction: ``predict_step`` (or ``forward``) over every batch of one or more loaders, in order.

The hooks run in Lightning's order (``on_predict_model_eval``, ``on_predict_start``, ``on_predict_epoch_start``,
per batch the transfer hooks, ``on_predict_batch_start``, the step, ``on_predict_batch_end``; then
``on_predict_epoch_end`` and ``on_predict_end``). The outputs and, when a :class:`BasePredictionWriter` asks,
each batch's dataset indices are kept in ``run.state.predict`` (``trainer.predict_loop``), where writers read
them; without a writer the loaders are left as they are.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...callbacks.prediction_writer import BasePredictionWriter
from ...data.batch_indices import record_batch_indices
from ._limits import batch_limit, count_batches, epoch_length
from ._modes import ModuleModes
from ._transfer import transfer_batch
from .evaluation import check_dataloader_idx, grad_context, step_accepts

if TYPE_CHECKING:
    from .._run import Run

__all__ = ["PredictionLoop"]


class PredictionLoop:
    """``predict_step`` (or ``forward``) over one or more loaders; the outputs in order."""

    def __init__(self, run: Run, loaders: Sequence[Any], *, limit: float | int) -> None:
        self.run = run
        self._limit = limit
        self._take(loaders)
        writers = [c for c in run.hooks.callbacks if isinstance(c, BasePredictionWriter)]
        self.on_batch = any(w.interval.on_batch for w in writers)
        self.on_epoch = any(w.interval.on_epoch for w in writers)

    def _take(self, loaders: Sequence[Any]) -> None:
        self.loaders = list(loaders)
        self.limits = [batch_limit(self._limit, loader, "limit_predict_batches") for loader in self.loaders]
        counts = [count_batches(loader, self._limit, "limit_predict_batches") for loader in self.loaders]
        self.run.state.data["predict"] = (list(self.loaders), counts)

    def predict(self) -> list[Any] | list[list[Any]]:
        """Every loader's outputs in order; all of it (the hooks too) under ``inference_mode``, as in Lightning."""
        with grad_context(self.run):
            return self._predict()

    def _predict(self) -> list[Any] | list[list[Any]]:
        run, hooks, module = self.run, self.run.hooks, self.run.module
        record = run.state.predict
        keep = record.return_predictions or self.on_epoch
        record.outputs = [[] for _ in self.loaders]
        record.epoch_batch_indices = [[] for _ in self.loaders]
        record.current_batch_indices = []
        step = getattr(module, "predict_step", None)
        arity = step_accepts(step) if callable(step) else 1
        hook_names = ("predict_step", "on_predict_batch_start", "on_predict_batch_end")
        check_dataloader_idx(module, hook_names, "predict", several=len(self.loaders) > 1)
        modes = ModuleModes(module)  # given back after on_predict_end, as Lightning does
        if hooks.module_hook("on_predict_model_eval") is None:
            module.eval()
        else:
            hooks.call_module("on_predict_model_eval")
        hooks.call("on_predict_start")
        if run.tuned_loaders is not None:  # BatchSizeFinder made them again at the size it found (its trials
            self._take(run.tuned_loaders)  # predicted into the same record: start it afresh)
            run.tuned_loaders = None
            record.outputs = [[] for _ in self.loaders]
            record.epoch_batch_indices = [[] for _ in self.loaders]
            record.current_batch_indices = []
        run.state.eval_batches["predict"] = done = 0
        hooks.call("on_predict_epoch_start")
        several = len(self.loaders) > 1
        for index, loader in enumerate(self.loaders):
            recorder = None
            if self.on_batch or self.on_epoch:
                loader, recorder = record_batch_indices(loader)
            extra = (index,) if several else ()
            fetching = hooks.fetching(loader, "[_PredictionLoop].predict_next")
            for batch_idx, raw in enumerate(itertools.islice(fetching, epoch_length(loader, self.limits[index]))):
                if recorder is not None:
                    indices = recorder.seen_batch_indices[batch_idx]
                    if self.on_epoch:
                        record.epoch_batch_indices[index].append(indices)
                    if self.on_batch:
                        record.current_batch_indices = indices
                batch = transfer_batch(run, raw, index)
                hooks.call("on_predict_batch_start", batch, batch_idx, *extra)
                context = getattr(run.precision, "predict_step_context", run.precision.forward_context)
                with context(), hooks.strategy_span("predict_step"):
                    if callable(step):
                        arguments = (batch, batch_idx, *extra)
                        output = step(*arguments[: max(1, min(arity, len(arguments)))])
                    else:
                        output = module(batch)
                hooks.call("on_predict_batch_end", output, batch, batch_idx, *extra)
                if keep:
                    record.outputs[index].append(output)
                done += 1
            run.state.eval_batches["predict"] = done
        hooks.call("on_predict_epoch_end")
        results = record.outputs
        if not record.return_predictions:
            record.outputs = []
        record.epoch_batch_indices = []
        hooks.call("on_predict_end")
        modes.restore(module)
        return results if several else results[0]
