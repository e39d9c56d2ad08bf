"""Prediction: ``predict_step`` (or ``forward``) over every batch of one or more loaders, in order.

The hooks run in Lightning's order (``on_predict_model_eval``, ``on_predict_start``, ``on_predict_epoch_start``,
per batch the transfer hooks, ``on_predict_batch_start``, the step, ``on_predict_batch_end``; then
``on_predict_epoch_end`` and ``on_predict_end``). The outputs and, when a :class:`BasePredictionWriter` asks,
each batch's dataset indices (recorded by the loader's batch sampler, :func:`accelplug.data.loaders.for_prediction`)
are kept in ``run.state.predict`` (``trainer.predict_loop``), where writers read them.
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...callbacks.prediction_writer import BasePredictionWriter
from ...data.batch_indices import IndexRecordingBatchSampler
from ._dataloader_iter import DataloaderIter, chained, iterator_steps, takes_dataloader_iter, warn_dataloader_iter
from ._limits import batch_limit, count_batches, epoch_length
from ._modes import ModuleModes, eval_target
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
        self._warned_none = False

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
        hook_names: tuple[str, ...] = ("predict_step", "on_predict_batch_start", "on_predict_batch_end")
        if takes_dataloader_iter(step):  # its batches' dataloader_idx is in what it fetches
            hook_names = hook_names[1:]
            warn_dataloader_iter("predict_step")
        check_dataloader_idx(module, hook_names, "predict", several=len(self.loaders) > 1)
        for loader in self.loaders:  # a sampler that shuffles per epoch learns the training epoch (as in Lightning)
            run.strategy.set_epoch(loader, run.state.epoch)
        first = None  # the first loader's iterator, made before the hooks (Lightning's order)
        if not takes_dataloader_iter(step) and self.loaders and epoch_length(self.loaders[0], self.limits[0]) != 0:
            first = run.hold_iterator("predict/0", hooks.fetching(self.loaders[0], "[_PredictionLoop].predict_next"))
        target = eval_target(module, run.prepared.wrapped)
        modes = ModuleModes(module)  # given back after on_predict_end, as Lightning does
        if hooks.module_hook("on_predict_model_eval") is None:
            target.eval()
        else:
            hooks.call_module("on_predict_model_eval")
        hooks.call("on_predict_start")
        if run.tuned_loaders is not None:  # BatchSizeFinder made them again at the size it found (its trials
            self._take(run.tuned_loaders)  # predicted into the same record: start it afresh)
            run.tuned_loaders = first = None
            record.outputs = [[] for _ in self.loaders]
            record.epoch_batch_indices = [[] for _ in self.loaders]
            record.current_batch_indices = []
        run.state.eval_batches["predict"] = 0
        hooks.call("on_predict_epoch_start")
        if takes_dataloader_iter(step):
            self._predict_iterator(step, keep=keep)
        else:
            self._predict_loaders(step, keep=keep, first=first)
            del first
        hooks.call("on_predict_epoch_end")
        results = record.outputs
        if not record.return_predictions:
            record.outputs = []
        record.epoch_batch_indices = []
        hooks.call("on_predict_end")
        modes.restore(module)
        return results if len(self.loaders) > 1 else results[0]

    def _predict_loaders(self, step: Any, *, keep: bool, first: Any = None) -> None:
        """Every loader in turn: each batch moved (with the transfer hooks), then ``predict_step`` (or the forward)."""
        run, hooks, module, record = self.run, self.run.hooks, self.run.module, self.run.state.predict
        arity = step_accepts(step) if callable(step) else 1
        several = len(self.loaders) > 1
        done = 0
        for index, loader in enumerate(self.loaders):
            recorder = getattr(loader, "batch_sampler", None) if self.on_batch or self.on_epoch else None
            if not isinstance(recorder, IndexRecordingBatchSampler):  # no indices to tell (as in Lightning)
                recorder = None
            extra = (index,) if several else ()
            iterator, first = first, None
            if index != 0 or iterator is None:
                fetching = hooks.fetching(loader, "[_PredictionLoop].predict_next")
                iterator = run.hold_iterator(f"predict/{index}", fetching)
            batches = itertools.islice(iterator, epoch_length(loader, self.limits[index]))
            del iterator  # held by the run alone, so that a failure's traceback does not keep the workers alive
            for batch_idx, raw in enumerate(batches):
                if recorder is not None:
                    indices = recorder.seen_batch_indices[batch_idx]
                    if self.on_epoch:
                        record.epoch_batch_indices[index].append(indices)
                    if self.on_batch:
                        record.current_batch_indices = indices
                batch = transfer_batch(run, raw, index)
                hooks.call("on_predict_batch_start", batch, batch_idx, *extra)
                with self._context(), hooks.strategy_span("predict_step"):
                    if callable(step):
                        arguments = (batch, batch_idx, *extra)
                        output = step(*arguments[: max(1, min(arity, len(arguments)))])
                    else:
                        output = module(batch)
                self._finish_batch(output, batch, batch_idx, index, keep=keep)
                done += 1
            run.state.eval_batches["predict"] = done

    def _predict_iterator(self, step: Any, *, keep: bool) -> None:
        """``predict_step(self, dataloader_iter)``: one iterator over every loader in turn; the batch hooks get the
        last batch fetched (``_dataloader_iter.py``)."""
        hooks = self.run.hooks
        lengths = [epoch_length(loader, limit) for loader, limit in zip(self.loaders, self.limits, strict=True)]
        fetching = [hooks.fetching(loader, "[_PredictionLoop].predict_next") for loader in self.loaders]
        total = None if None in lengths else sum(n or 0 for n in lengths)
        source = DataloaderIter(chained(zip(fetching, lengths, strict=True)), total)
        several = len(self.loaders) > 1
        for steps, _ in iterator_steps(source, first=1):
            extra = (source.dataloader_idx,) if several else ()
            hooks.call("on_predict_batch_start", source.batch, source.batch_idx, *extra)
            try:
                with self._context(), hooks.strategy_span("predict_step"):
                    output = step(source)
            except StopIteration:  # the step found the iterator exhausted: prediction ends (Lightning's)
                break
            self._finish_batch(output, source.batch, source.batch_idx, source.dataloader_idx, keep=keep)
            self.run.state.eval_batches["predict"] = steps

    def _context(self) -> Any:
        precision = self.run.precision
        return getattr(precision, "predict_step_context", precision.forward_context)()

    def _finish_batch(self, output: Any, batch: Any, batch_idx: int, index: int, *, keep: bool) -> None:
        """``on_predict_batch_end``, and the output kept (``None``: Lightning's warning, once per run)."""
        if output is None and not self._warned_none:
            self._warned_none = True
            warnings.warn(
                "predict returned None for a batch, which is its prediction (if the step has nothing to return on "
                "purpose, ignore this warning).",
                UserWarning,
                stacklevel=4,
            )
        several = len(self.loaders) > 1
        self.run.hooks.call("on_predict_batch_end", output, batch, batch_idx, *((index,) if several else ()))
        if keep:
            self.run.state.predict.outputs[index].append(output)
