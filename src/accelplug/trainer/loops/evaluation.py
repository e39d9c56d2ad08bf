"""Evaluation: validation (inside fit and on its own), test, the sanity check, and prediction.

The order of hooks is Lightning 2.x's: ``on_{stage}_model_eval``, ``on_{stage}_start``,
``on_{stage}_epoch_start``, per batch the transfer hooks, ``on_{stage}_batch_start``, the step,
``on_{stage}_batch_end``; then ``on_{stage}_epoch_end``, ``on_{stage}_end`` and
``on_{stage}_model_train``. Steps run under ``torch.inference_mode`` (``inference_mode=False``: plain
``no_grad``, for models that need autograd-compatible tensors afterwards); the validation inside a fit always
runs under ``no_grad``, as Lightning's does, since training goes on with what it leaves behind.

Metrics: every scalar a step returns is averaged over the batches (``"loss"`` becomes ``val_loss`` or
``test_loss``) and every ``self.log`` value is reduced as Lightning reduces it; with several loaders,
names get a ``/dataloader_idx_N`` suffix, as in Lightning.
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from ...data.combined_loader import CombinedLoader, TrainingBatches
from ...errors import MisconfigurationException
from ..checkpointing.format import capture_rng_state, restore_rng_state
from ..logging.collector import LogCollector
from ..state import RunningStage, Stage, TrainerFn
from ._counters import EvaluationRecord, forget_sanity_check
from ._dataloader_iter import DataloaderIter, chained, iterator_steps, takes_dataloader_iter, warn_dataloader_iter
from ._limits import batch_limit, count_batches, epoch_length, validates_in_epoch
from ._modes import ModuleModes, eval_target
from ._readback import finish_eval_epoch, log_row, output_scalars, returns_metrics
from ._transfer import transfer_batch

if TYPE_CHECKING:
    from .._run import Run
    from ..display.progress import ProgressDisplay

__all__ = [
    "DataloaderIdxError",
    "EvaluationLoop",
    "check_dataloader_idx",
    "grad_context",
    "split_by_loader",
    "step_accepts",
]


def grad_context(run: Run) -> contextlib.AbstractContextManager[Any]:
    """``inference_mode`` as asked, else ``no_grad``; always ``no_grad`` where an inference tensor would outlive
    the evaluation and break later work (Lightning's choices):

    - the validation inside a fit (its sanity check too): what its hooks create (a pruning mask a callback
      applies at the epoch's end, a cached buffer) is used by the next training step's autograd, which refuses
      inference tensors;
    - a strategy that cannot evaluate under it (FSDP's all-gathered parameters);
    - a gloo process group, whose collectives do not accept inference tensors.
    """
    if (
        run.options.inference_mode
        and run.state.fn is not TrainerFn.FITTING
        and run.strategy.allows_inference_mode
        and not _gloo_group()
    ):
        return torch.inference_mode()
    return torch.no_grad()


def _gloo_group() -> bool:
    """Whether this process belongs to a default process group of the gloo backend."""
    distributed = torch.distributed
    return distributed.is_available() and distributed.is_initialized() and distributed.get_backend() == "gloo"


def step_accepts(method: Callable[..., Any]) -> int:
    """How many positional arguments a step method takes besides ``self`` (``batch``, ``batch_idx``...)."""
    try:
        parameters = inspect.signature(inspect.unwrap(method)).parameters.values()  # through FSDP's wrapper
    except (TypeError, ValueError):
        return 3
    count = 0
    for p in parameters:
        if p.kind == p.VAR_POSITIONAL:
            return 3
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            count += 1
    return count


def _counts(loader: Any, limit: float | int, option: str) -> list[float]:
    """Batches per loader, as Lightning counts them: each loader of a ``CombinedLoader`` (in any mode) on its own."""
    inner = loader.combined if isinstance(loader, TrainingBatches) else loader
    if isinstance(inner, CombinedLoader):
        return [count_batches(each, limit, option) for each in inner.flattened]
    return [count_batches(loader, limit, option)]


class DataloaderIdxError(MisconfigurationException, RuntimeError):
    """Lightning raises a ``RuntimeError`` here; this is also accelplug's configuration error."""


def check_dataloader_idx(module: Any, hooks: Sequence[str], prefix: str, *, several: bool) -> None:
    """Lightning's rule for the step and batch hooks: with one loader none may require a ``dataloader_idx`` (it
    would never receive one); with several each must take it (or ``*args``)."""
    for name in hooks:
        method = getattr(module, name, None)
        try:
            parameters = inspect.signature(method).parameters if callable(method) else None
        except (TypeError, ValueError):
            continue
        if parameters is None:
            continue
        parameter = parameters.get("dataloader_idx")
        where = f"`{type(module).__name__}.{name}()`"
        if not several and parameter is not None and parameter.default is inspect.Parameter.empty:
            raise DataloaderIdxError(
                f"You provided only a single `{prefix}_dataloader`, but have included `dataloader_idx` in {where}. "
                "Either remove the argument or give it a default value i.e. `dataloader_idx=0`."
            )
        takes_any = any(p.kind is p.VAR_POSITIONAL for p in parameters.values())
        if several and parameter is None and not takes_any:
            raise DataloaderIdxError(
                f"You provided multiple `{prefix}_dataloader`, but no `dataloader_idx` argument in {where}. Try "
                "adding `dataloader_idx=0` to its signature."
            )


class EvaluationLoop:
    """Runs ``validation_step`` or ``test_step`` over one or more loaders."""

    def __init__(
        self,
        run: Run,
        loaders: Sequence[Any] | Callable[[], Sequence[Any]],
        stage: Stage,
        *,
        limit: float | int,
        progress: ProgressDisplay | None = None,
    ) -> None:
        self.run = run
        self.progress = progress
        self.stage = stage
        self.prefix = "test" if stage is Stage.TESTING else "validation"
        self.short = "test" if stage is Stage.TESTING else "val"
        self.step_context = getattr(run.precision, f"{self.short}_step_context", run.precision.forward_context)
        self._limit = limit
        # Loaders from a module or datamodule method are asked for when first needed (Lightning's order:
        # after on_sanity_check_start), so a method that builds them late still works.
        self._provider = loaders if callable(loaders) else None
        self._loaders: list[Any] | None = None if callable(loaders) else list(loaders)
        self.step_name = f"{self.prefix}_step"
        self.method: Callable[..., Any] = getattr(run.module, self.step_name)
        #: Batches seen per loader over this loop's life (a fit's validations add up): the logger step of
        #: ``on_step`` values, as in Lightning; the sanity check does not count.
        self._seen: dict[int, int] = {}
        self._recorded = False
        self._first: Any = None  # the first loader's iterator, made before the evaluation's hooks (Lightning's order)
        self.arity = step_accepts(self.method)
        #: ``validation_step(self, dataloader_iter)``: the step fetches its own batches (``_dataloader_iter.py``)
        self.fetches_itself = takes_dataloader_iter(self.method)
        if self.fetches_itself:
            warn_dataloader_iter(self.step_name)
        #: After :meth:`evaluate`: keys logged with ``add_dataloader_idx=False`` and the loader that logged them.
        self.owners: dict[str, int] = {}
        #: whether returned scalars are metrics (a plain module's are; a LightningModule logs with self.log only)
        self.returned_metrics = returns_metrics(run.module)
        #: The epoch whose validation last asked the provider (``reload_dataloaders_every_n_epochs``).
        self._loaded_epoch = -math.inf
        #: ``time.monotonic()`` when the last run ended (after its ``on_*_end`` hooks); None before one ran.
        self.ended_at: float | None = None

    def _reload_due(self) -> bool:
        """Whether this validation inside fit asks ``val_dataloader()`` again: ``reload_dataloaders_every_n_epochs``
        epochs after the last ask (as Lightning counts it; a sanity check counts only on a validating epoch)."""
        every = self.run.options.reload_dataloaders_every_n_epochs
        return bool(every) and self._provider is not None and self.run.state.current_epoch - self._loaded_epoch >= every

    @property
    def loaders(self) -> list[Any]:
        if self._loaders is None:
            assert self._provider is not None
            self._loaders = list(self._provider())
            self._note_loaded()
        if not self._recorded:  # trainer.val_dataloaders/num_val_batches... (Lightning's)
            self._recorded = True
            option = f"limit_{self.short}_batches"
            counts = [count for loader in self._loaders for count in _counts(loader, self._limit, option)]
            self.run.state.data[self.short] = (list(self._loaders), counts)
            if self.run.state.fn is TrainerFn.FITTING:  # trainer.num_sanity_val_batches: the fit's alone
                self.run.state.data[f"fit:{self.short}"] = (list(self._loaders), counts)
        return self._loaders

    def _note_loaded(self) -> None:
        state = self.run.state
        validating_epoch = validates_in_epoch(self.run.options.check_val_every_n_epoch, state.current_epoch)
        if state.stage is not RunningStage.SANITY_CHECKING or validating_epoch:
            self._loaded_epoch = state.current_epoch

    @property
    def limits(self) -> list[int | None]:
        return [batch_limit(self._limit, loader, f"limit_{self.short}_batches") for loader in self.loaders]

    # ---- entry points -------------------------------------------------------------------------------
    def run_within_fit(self) -> dict[str, float]:
        """Validation during fit: the module goes back to training mode afterwards.

        Between optimizer steps the gradients are released first (``on_validation_model_zero_grad``, whose
        default is ``zero_grad()``, as Lightning's), never inside an accumulation window: what is left in them
        is what StochasticWeightAveraging's BatchNorm pass steps with, so it must match Lightning's.
        """
        state, accumulate = self.run.state, self.run.options.accumulate_grad_batches
        stepped = not state.forward_only and (accumulate == 1 or state.batches_done % accumulate == 0)
        if state.is_last_batch or stepped:
            custom = self.run.hooks.module_hook("on_validation_model_zero_grad")
            if custom is None:
                self.run.module.zero_grad()  # the hook's default in Lightning
            else:
                self.run.hooks.run_in("on_validation_model_zero_grad", custom)
        if self._reload_due():
            self._loaders, self._recorded = None, False
        previous = self.run.state.stage
        self.run.state.stage = RunningStage.VALIDATING
        try:
            return self.evaluate(publish=True)
        finally:
            self.run.state.stage = previous

    def sanity_check(self, steps: int) -> None:
        """Lightning's sanity check: a few validation batches before training; their values are discarded."""
        hooks = self.run.hooks
        state = self.run.state
        previous = state.stage
        state.stage = RunningStage.SANITY_CHECKING
        hooks.call_callbacks("on_sanity_check_start")
        saved = (dict(state.callback_metrics), dict(state.logged_metrics), dict(state.progress_bar_metrics))
        accelerator = self.run.strategy.accelerator
        rng = capture_rng_state(accelerator)  # the check must not change what training draws (as in Lightning)
        try:
            try:
                self.evaluate(publish=False, max_batches=steps)
            finally:
                restore_rng_state(rng, accelerator)
            # still sanity checking, its values still in callback_metrics, as Lightning's hook sees them
            hooks.call_callbacks("on_sanity_check_end")
        finally:
            state.callback_metrics, state.logged_metrics, state.progress_bar_metrics = (
                saved[0],
                saved[1],
                saved[2],
            )
            state.stage = previous
        forget_sanity_check(state)  # after the hook, as Lightning resets its validation progress

    def _set_epoch(self) -> None:
        """The loaders' samplers learn the training epoch (Lightning's: for validation shuffling that follows the
        training progress)."""
        for loader in self.loaders:
            self.run.strategy.set_epoch(loader, self.run.state.epoch)

    def evaluate(self, *, publish: bool, max_batches: int | None = None) -> dict[str, float]:
        """One pass over every loader; the metrics (all loaders together) as floats.

        All of it runs under ``inference_mode`` (or ``no_grad``), the hooks and the loaders' creation included, as
        Lightning runs its evaluation loop."""
        with self._grad_context():
            return self._evaluate(publish=publish, max_batches=max_batches)

    def _evaluate(self, *, publish: bool, max_batches: int | None) -> dict[str, float]:
        hooks, module = self.run.hooks, self.run.module
        loaders, limits = self.loaders, self.limits  # asked for first, as in Lightning
        hook_names: tuple[str, ...] = (self.step_name, f"on_{self.prefix}_batch_start", f"on_{self.prefix}_batch_end")
        if self.fetches_itself:  # its batches' dataloader_idx is in what it fetches
            hook_names = hook_names[1:]
        check_dataloader_idx(module, hook_names, self.short, several=len(loaders) > 1)
        self._set_epoch()
        if not self.fetches_itself and loaders:  # the first loader's iterator before the hooks (Lightning's order)
            first_limit = limits[0] if max_batches is None or limits[0] is None else min(limits[0], max_batches)
            first_limit = max_batches if first_limit is None else first_limit
            if epoch_length(loaders[0], first_limit) != 0:
                self._first = self.run.hold_iterator(f"{self.short}/0", self._fetching(loaders[0]))
        target = eval_target(module, self.run.prepared.wrapped)
        modes = ModuleModes(module)  # each submodule's mode, given back at the end (Lightning's rule)
        if hooks.module_hook(f"on_{self.prefix}_model_eval") is None:
            target.eval()
        else:
            hooks.call_module(f"on_{self.prefix}_model_eval")  # the module's own way into eval mode
        hooks.call(f"on_{self.prefix}_start")
        if self.run.tuned_loaders is not None:  # BatchSizeFinder made them again at the size it found
            self._loaders, self.run.tuned_loaders, self._recorded = list(self.run.tuned_loaders), None, False
            self._first = None
            loaders, limits = self.loaders, self.limits
        collector = LogCollector(bar=self.run.state.progress_bar_metrics)
        self.run.router.enter(f"on_{self.prefix}_epoch_start", collector)
        hooks.call(f"on_{self.prefix}_epoch_start")
        returned: dict[str, torch.Tensor] = {}
        counts: dict[str, int] = {}
        if max_batches is not None:
            limits = [max_batches if limit is None else min(limit, max_batches) for limit in limits]
        record = EvaluationRecord(self.run.state, self.prefix)
        label = self.short if max_batches is None else "sanity check"
        try:
            if self.fetches_itself:
                record.add(self._run_iterator(limits, collector, returned, counts, label=label, publish=publish))
            else:
                self._run_loaders(limits, collector, returned, counts, record, label=label, publish=publish)
        finally:
            self.run.router.dataloader_idx = None  # the epoch hooks' values join every loader's results
        # What the steps logged is in callback_metrics before the epoch-end hooks (as Lightning's), what those
        # hooks log after them.
        # The loggers get one row with both, as Lightning writes it.
        row: dict[str, float] = {}
        metrics = finish_eval_epoch(self.run, collector, returned, counts, publish=publish, reset=False, row=row)
        self.owners = dict(collector.owners)
        self.run.router.enter(f"on_{self.prefix}_epoch_end", collector)
        hooks.call(f"on_{self.prefix}_epoch_end")
        metrics.update(finish_eval_epoch(self.run, collector, {}, {}, publish=publish, row=row))
        log_row(self.run, row)
        hooks.call(f"on_{self.prefix}_end")
        if hooks.module_hook(f"on_{self.prefix}_model_train") is None:
            modes.restore(module)
        else:
            hooks.call_module(f"on_{self.prefix}_model_train")
        # A time-based val_check_interval counts from here; read for every run (the sanity check's too), as
        # Lightning reads it, so a patched ``time.monotonic`` sees the same calls under both.
        self.ended_at = time.monotonic()
        return metrics

    # ---- batches ---------------------------------------------------------------------------------------
    def _fetching(self, loader: Any) -> Any:
        return self.run.hooks.fetching(loader, f"[_EvaluationLoop].{self.short}_next")

    def _grad_context(self) -> contextlib.AbstractContextManager[Any]:
        return grad_context(self.run)

    def _run_loader(
        self,
        loader: Any,
        index: int,
        limit: int | None,
        collector: LogCollector,
        returned: dict[str, torch.Tensor],
        counts: dict[str, int],
        *,
        publish: bool = True,
    ) -> int:
        run, hooks = self.run, self.run.hooks
        several = len(self.loaders) > 1
        suffix = f"/dataloader_idx_{index}" if several else ""
        extra = (index,) if several else ()
        batch_idx = -1
        iterator, self._first = self._first, None
        if index != 0 or iterator is None:
            iterator = run.hold_iterator(f"{self.short}/{index}", self._fetching(loader))
        batches = itertools.islice(iterator, epoch_length(loader, limit))
        del iterator  # held by the run alone (see FitLoop.run_epoch)
        for batch_idx, raw in enumerate(batches):
            batch = transfer_batch(run, raw, index)
            run.router.enter(f"on_{self.prefix}_batch_start", collector, batch)
            hooks.call(f"on_{self.prefix}_batch_start", batch, batch_idx, *extra)
            run.router.fx = f"{self.prefix}_step"
            with self.step_context(), hooks.strategy_span(self.step_name):
                output = self._step(batch, batch_idx, extra)
            self._add_returned(output, suffix, returned, counts)
            run.router.enter(f"on_{self.prefix}_batch_end", collector)
            hooks.call(f"on_{self.prefix}_batch_end", output, batch, batch_idx, *extra)
            if collector.step_values:
                self._log_step_values(collector, index, publish)
            if self.progress is not None:
                self.progress.eval_tick()
        return batch_idx + 1

    def _run_loaders(
        self,
        limits: list[int | None],
        collector: LogCollector,
        returned: dict[str, torch.Tensor],
        counts: dict[str, int],
        record: EvaluationRecord,
        *,
        label: str,
        publish: bool,
    ) -> None:
        """Every loader in turn, each to its limit."""
        progress, loaders = self.progress, self.loaders
        for index, (loader, limit) in enumerate(zip(loaders, limits, strict=True)):
            if progress is not None:
                progress.eval_start(label, epoch_length(loader, limit))
            self.run.router.dataloader_idx = index if len(loaders) > 1 else None
            record.add(self._run_loader(loader, index, limit, collector, returned, counts, publish=publish))
            if progress is not None:
                progress.eval_end()

    def _run_iterator(
        self,
        limits: list[int | None],
        collector: LogCollector,
        returned: dict[str, torch.Tensor],
        counts: dict[str, int],
        *,
        label: str,
        publish: bool,
    ) -> int:
        """A step that fetches its own batches: one iterator over every loader in turn; the batch hooks get the last
        batch fetched (``_dataloader_iter.py``). Returns the steps run."""
        run, hooks, loaders = self.run, self.run.hooks, self.loaders
        several = len(loaders) > 1
        lengths = [epoch_length(loader, limit) for loader, limit in zip(loaders, limits, strict=True)]
        fetching = [hooks.fetching(loader, f"[_EvaluationLoop].{self.short}_next") for loader in loaders]
        total = None if None in lengths else sum(n or 0 for n in lengths)
        source = DataloaderIter(chained(zip(fetching, lengths, strict=True)), total)
        if self.progress is not None:
            self.progress.eval_start(label, total)
        steps = 0
        for steps, _ in iterator_steps(source, first=1):
            index = source.dataloader_idx
            run.router.dataloader_idx = index if several else None
            run.router.enter(f"on_{self.prefix}_batch_start", collector, source.batch)
            hooks.call(f"on_{self.prefix}_batch_start", source.batch, source.batch_idx, *((index,) if several else ()))
            run.router.fx = f"{self.prefix}_step"
            try:
                with self.step_context(), hooks.strategy_span(self.step_name):
                    output = self.method(source)
            except StopIteration:  # the step found the iterator exhausted: the evaluation ends (Lightning's)
                steps -= 1
                break
            index = source.dataloader_idx
            self._add_returned(output, f"/dataloader_idx_{index}" if several else "", returned, counts)
            run.router.enter(f"on_{self.prefix}_batch_end", collector)
            extra = (index,) if several else ()
            hooks.call(f"on_{self.prefix}_batch_end", output, source.batch, source.batch_idx, *extra)
            if collector.step_values:
                self._log_step_values(collector, index, publish)
            if self.progress is not None:
                self.progress.eval_tick()
        if self.progress is not None:
            self.progress.eval_end()
        return steps

    def _add_returned(
        self, output: Any, suffix: str, returned: dict[str, torch.Tensor], counts: dict[str, int]
    ) -> None:
        """A step's returned scalars, summed per name for the epoch's mean (a plain module's; ``loss`` renamed)."""
        for name, value in output_scalars(output if self.returned_metrics else None, f"{self.short}_loss").items():
            key = name + suffix
            value = value.to(device=self.run.device, dtype=torch.float32)
            returned[key] = returned[key] + value if key in returned else value
            counts[key] = counts.get(key, 0) + 1

    def _log_step_values(self, collector: LogCollector, index: int, publish: bool) -> None:
        """``self.log(..., on_step=True)`` in an evaluation step: one logger row per batch (``name_step``
        when also on epoch), this process's values (Lightning's ``sync_dist=False`` default)."""
        values = collector.drain_step()
        if not publish:
            return
        logged = {k: float(v) for k, v in values.items() if k not in collector.step_no_logger}
        if logged:
            self.run.log_metrics(logged, self._seen.get(index, 0))
        self._seen[index] = self._seen.get(index, 0) + 1

    def _step(self, batch: Any, batch_idx: int, extra: tuple[int, ...]) -> Any:
        arguments = (batch, batch_idx, *extra)
        return self.method(*arguments[: max(1, min(self.arity, len(arguments)))])


def split_by_loader(
    metrics: dict[str, float], count: int, owners: dict[str, int] | None = None
) -> list[dict[str, float]]:
    """One result dict per loader, as ``validate``/``test`` return: a ``/dataloader_idx_N`` key goes to loader N, a
    key logged with ``add_dataloader_idx=False`` (``owners``) to the loader that logged it, any other key (logged in
    an epoch hook) to every loader."""
    if count <= 1:
        return [metrics]
    owners = owners or {}
    results: list[dict[str, float]] = [{} for _ in range(count)]
    for key, value in metrics.items():
        name, _, index = key.rpartition("/dataloader_idx_")
        if name and index.isdigit() and int(index) < count:
            results[int(index)][key] = value
        elif key in owners and owners[key] < count:
            results[owners[key]][key] = value
        else:
            for result in results:
                result[key] = value
    return results
