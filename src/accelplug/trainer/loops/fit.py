"""The training loop: epochs of batches until a limit or a stop request, with validation in between.

:meth:`FitLoop.run` is the story (the map of it is this package's docstring); the limits, the epoch length, the
stopping rules and the validation cadence are worked out once, in :class:`.limits.Limits`. A batch takes one of three
paths, chosen once per fit: :meth:`FitLoop.fast_batch` (nothing has to run between forward, backward and step: a few
attribute reads per step, the loss stays on the device), :meth:`FitLoop.general_batch` (Lightning's automatic
optimisation, every hook in Lightning's order) or :meth:`FitLoop.manual_batch` (``automatic_optimization = False``).
Resuming exactly is :mod:`._resume`; how SIGTERM/SIGINT stop the loop with no work per step is
:mod:`accelplug.trainer.process.interrupts`.
"""

from __future__ import annotations

import contextlib
import sys
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from ...callbacks.timer import Timer
from ...data.workers import warn_spawned_workers
from ...errors import MisconfigurationException
from ..checkpointing.format import capture_rng_state, restore_rng_state
from ..display.progress import ProgressDisplay
from ..logging.collector import LogCollector
from ..state import StopReason
from ._compile_time import timed_first_batch
from ._counters import leave_epoch, start_training_epoch
from ._dataloader_iter import (
    DataloaderIter,
    iterator_steps,
    single_loader,
    takes_dataloader_iter,
    warn_dataloader_iter,
)
from ._forward_only import ForwardOnly
from ._limits import Limits
from ._losses import check_manual_output, explain_backward, loss_of, refuse_skipping
from ._modes import warn_if_modules_in_eval_mode
from ._readback import epoch_line, finish_train_epoch, latest_loss, log_train_row, read_step_metrics
from ._resume import epoch_batches, loader_position, resume_position
from ._transfer import SKIP_REST_OF_EPOCH
from .optimization import Optimization

if TYPE_CHECKING:
    from .._run import Run
    from ..process.interrupts import SignalGuard
    from .evaluation import EvaluationLoop

__all__ = ["NO_BATCH", "FitLoop"]

#: What a batch "step" gives when the loader yielded ``None``: ``on_train_batch_end`` then gets ``None``.
NO_BATCH = object()


class FitLoop:
    """Drives one ``fit``: owns the limits, the batch path and the step-level logging."""

    def __init__(
        self,
        run: Run,
        train_loader: Any,
        val_loop: EvaluationLoop | None,
        progress: ProgressDisplay,
        resume: dict[str, Any] | None = None,
        *,
        signals: SignalGuard | None = None,
    ) -> None:
        self.run_, self.state, self.hooks = run, run.state, run.hooks
        self.loader, self.val_loop, self.progress = train_loader, val_loop, progress
        self.signals = signals  # under DDP its stop flags ride on the logging step's all-reduce
        self.resume = resume
        self.reload: Callable[[], Any] | None = None  # what made the loader (reload_dataloaders_every_n_epochs)
        timer = any(isinstance(c, Timer) for c in run.hooks.callbacks)
        self.limits = Limits.for_fit(run.options, train_loader, validating=val_loop is not None, timer=timer)
        self.opt = Optimization(run)
        self.collector = LogCollector(
            live=run.state.callback_metrics, bar=run.state.progress_bar_metrics, logged=run.state.logged_metrics
        )
        # the clock is read only for a limit or a cadence that needs it (a user's patched clock sees Lightning's reads)
        self.started = time.monotonic() if self.limits.max_time_s is not None else 0.0
        self._last_loss: float | None = None
        self._epoch_has_batches = self._epoch_schedulers_stepped = False
        #: step-interval ReduceLROnPlateau schedulers wait for the batch's validation (Lightning's order): the
        #: count their frequency is checked against (the batch's index in the epoch, plus one), 0 when none is due
        self._plateau_step_due = 0
        self._log_on_stop = not run.strategy.is_distributed
        self._batch_end_hooks: tuple[Callable[..., Any], ...] = ()
        self._last_output: Any = None
        self._tick = progress.tick if type(progress) is not ProgressDisplay else None  # nothing to call when hidden
        self._val_every: int | None = None  # this epoch's: None when check_val_every_n_epoch skips it
        self._val_offset = 0  # batches before this epoch, when val_check_interval counts across epochs
        self._val_every_s: float | None = None  # this epoch's time-based val_check_interval (seconds)
        self._last_val = 0.0  # time.monotonic() at the last validation's end or the start of training
        #: ``training_step(self, dataloader_iter)``: each step fetches its own batches (``_dataloader_iter.py``)
        self._warned_no_batch = False
        self._first_iterator: Any = None  # the fit's first epoch's, made before on_train_start (Lightning's)
        self.fetches_itself = takes_dataloader_iter(getattr(run.module, "training_step", None))
        if self.fetches_itself:
            warn_dataloader_iter("training_step")
            run.router.sizeless_training = True  # no batch to size a logged value by: the user gives batch_size
        self.batch_step: Callable[[Any, int], Any] = self._choose_batch_path()

    # ---- the story -------------------------------------------------------------------------------
    def run(self) -> StopReason:
        """Train until a limit or a stop request; returns why it stopped."""
        epoch, skip, saved_rng = resume_position(self.state, self.resume, self.opt)
        if self.resume is not None:
            skip = loader_position(
                self.resume,
                self.loader,
                skip,
                length=self.limits.epoch_length,
                accumulate=self.opt.accumulate,
                global_step=self.state.global_step,
            )
        if self.limits.val_every_s is not None:  # a time-based val_check_interval counts from here (Lightning's)
            self._last_val = time.monotonic()
        if self._finished(epoch):  # a Trainer that already reached its limits: Lightning skips training
            return self.state.stop_reason or StopReason.MAX_EPOCHS
        warn_if_modules_in_eval_mode(self.run_.module)  # which stay so: Lightning never calls .train() on them
        self._first_iterator = self._make_iterator(epoch, resumed=self.resume is not None)
        self.run_.router.enter("on_train_start", self.collector)  # its values join the first epoch's (Lightning's)
        self.hooks.call("on_train_start")
        while not self._finished(epoch):
            with self.hooks.span("run_training_epoch"):
                self.run_epoch(epoch, skip, saved_rng)
            skip, saved_rng = 0, None
            if not self.state.epoch_done:
                break  # stopped inside the epoch
            epoch += 1
        self.hooks.call("on_train_end")
        return self.state.stop_reason or StopReason.MAX_EPOCHS

    def run_epoch(self, epoch: int, skip: int = 0, saved_rng: dict[str, Any] | None = None) -> None:
        """One epoch: its batches and the validation due inside it, then the epoch-end work."""
        state, after = self.state, self._after_batch
        timed, max_steps = self.limits.max_time_s is not None, self.limits.max_steps
        max_steps = sys.maxsize if max_steps is None else max_steps
        steps_before = state.global_step
        self._start_epoch(epoch, skip)
        stopped = skipped = False
        length = self.limits.epoch_length
        if state.forward_only and self.opt.automatic:  # a callback's BatchNorm pass (forward_only.py)
            self.batch_step = ForwardOnly(self, self.batch_step)
        if self.fetches_itself:
            loader = self.hooks.fetching(self.loader, "[_TrainingEpochLoop].train_dataloader_next")
            batches: Any = self._iterator_epoch(loader, skip, saved_rng, length)
        else:
            iterator = self._first_iterator if self._first_iterator is not None else self._make_iterator(epoch)
            self._first_iterator = None
            batches = epoch_batches(iterator, skip, saved_rng, length, self.run_.strategy.accelerator, state)
            del iterator  # held by the run alone, so that a failure's traceback does not keep the workers alive
        for batch_idx, batch in batches:
            state.batches_taken = batch_idx + 1  # Lightning's ``batch_idx`` while the batch runs (the views read it)
            # batch_step read each time: a compiled fit swaps it after one batch; a None batch: the loader had nothing
            # for this step (a collate_fn that drops bad samples)
            output = self.batch_step(batch, batch_idx) if batch is not None else self._no_batch()
            if output is SKIP_REST_OF_EPOCH:  # the module ended the epoch: Lightning then skips its validation
                skipped = self._epoch_has_batches = state.is_last_batch = True  # the epoch's last, as Lightning's
                break
            after(output, batch, batch_idx)
            # the common case decided here, without a call or a clock read
            if (state.should_stop or timed or state.global_step >= max_steps) and self._stop_within_epoch():
                stopped = True
                break
        self.batch_step = getattr(self.batch_step, "normal_path", self.batch_step)  # a pass ends with its epoch
        self._end_epoch(epoch, complete=not stopped, validate=not skipped)
        self.limits.check_progress(self.state, epoch, steps_before)

    # ---- the three batch paths ----------------------------------------------------------------------
    def _choose_batch_path(self) -> Callable[[Any, int], Any]:
        # Once per fit, so a step costs one call: the lean path unless something must run between the steps.
        fast = self.fast_batch if self.opt.can_go_fast() else self.general_batch
        path: Callable[[Any, int], Any] = fast if self.opt.automatic else self.manual_batch
        if self.fetches_itself:
            path = self.iterator_batch
        if self.run_.prepared.compiled:  # the first (compiling) step timed once, then the path itself
            return timed_first_batch(path, self.run_, on_timed=lambda seconds: self._take(path, seconds))
        return path

    def _take(self, path: Callable[[Any, int], Any], compile_seconds: float) -> None:
        self.state.compile_seconds, self.batch_step = compile_seconds, path

    def fast_batch(self, batch: Any, batch_idx: int) -> Any:
        """The lean path (see the module docstring): transfer, forward, backward, step."""
        opt = self.opt
        batch = self.run_.transfer(batch)
        router = self.run_.router
        router.fx, router.collector, router.batch, router.batch_size = "training_step", self.collector, batch, None
        accumulate = opt.accumulate
        if accumulate == 1 or batch_idx % accumulate == 0:
            for optimizer in opt.optimizers:
                optimizer.zero_grad()
        if opt.autocast:
            with opt.forward_context():
                output = opt.step_fn(batch, batch_idx)
        else:
            output = opt.step_fn(batch, batch_idx)
        loss = output if type(output) is torch.Tensor else loss_of(output)
        if loss is not None:
            if accumulate > 1:
                loss = loss / accumulate
            try:
                loss.backward()  # type: ignore[no-untyped-call]
            except RuntimeError as exc:
                raise explain_backward(loss, self.state.global_step, exc) from exc
        else:
            refuse_skipping(self.run_.strategy.world_size)
        if accumulate == 1 or opt.boundary(batch_idx, self.limits.epoch_length):
            for optimizer in opt.optimizers:
                optimizer.step()
            self._optimizer_stepped(batch_idx)
        return output

    def general_batch(self, batch: Any, batch_idx: int) -> Any:
        """Lightning's automatic optimisation, every hook in Lightning's order."""
        batch = self._batch_start(batch, batch_idx)
        if batch is SKIP_REST_OF_EPOCH:
            return batch
        return self._automatic(batch, batch_idx)

    def _automatic(self, batch: Any, batch_idx: int) -> Any:
        with self.hooks.span("run_training_batch"):
            output = self.opt.automatic_step(batch, batch_idx, self.state.current_epoch, self.limits.epoch_length)
        if self.opt.stepped:
            self._optimizer_stepped(batch_idx)
        return output

    def manual_batch(self, batch: Any, batch_idx: int) -> Any:
        """``automatic_optimization = False``: ``training_step`` steps its own optimizers."""
        batch = self._batch_start(batch, batch_idx)
        if batch is SKIP_REST_OF_EPOCH:
            return batch
        return self._manual(batch, batch_idx)

    def _manual(self, batch: Any, batch_idx: int) -> Any:
        steps_before = self.opt.manual_steps
        output = None
        with self.hooks.span("run_training_batch"), contextlib.suppress(StopIteration):  # the batch ends (Lightning)
            output = self.opt.manual_step(batch, batch_idx)
        check_manual_output(output)
        self.state.count_batch()  # Lightning counts every manual batch for its loggers, stepped or not
        if self.opt.manual_steps != steps_before:  # global_step counted each step as it came (optimizer_step)
            self._optimizer_stepped(batch_idx, count=0, batch=False)
        return output

    def iterator_batch(self, source: DataloaderIter, step_idx: int) -> Any:
        """One ``training_step(dataloader_iter)`` step: no transfer (the step fetches and moves its batches); the
        batch hooks get the last batch fetched. A ``StopIteration`` out of an automatic step ends the epoch, as
        ``on_train_batch_start`` returning -1 does; a manual step's ends only its step (Lightning's rules)."""
        state = self.state
        state.is_last_batch = source.done
        batch, batch_idx = source.batch, source.batch_idx
        self.run_.router.enter("on_train_batch_start", self.collector, batch)
        self.hooks.call_callbacks("on_train_batch_start", batch, batch_idx)
        if self.hooks.call_module("on_train_batch_start", batch, batch_idx) == -1:
            return SKIP_REST_OF_EPOCH
        if not self.opt.automatic:
            output = self._manual(source, step_idx)
        else:
            try:
                output = self._automatic(source, step_idx)
            except StopIteration:
                return SKIP_REST_OF_EPOCH
        state.is_last_batch = source.done
        return output

    def _iterator_epoch(self, loader: Any, skip: int, saved_rng: dict[str, Any] | None, length: int | None) -> Any:
        """The steps of an epoch whose ``training_step`` fetches its own batches. A resumed epoch's data starts over
        (the steps done cannot say how many batches they took), its step count goes on."""
        if saved_rng is not None:
            restore_rng_state(saved_rng, self.run_.strategy.accelerator)
        source = DataloaderIter(single_loader(loader, length), length)
        return iterator_steps(source, first=skip)

    def _no_batch(self) -> Any:
        """A ``None`` batch: no step and no ``on_train_batch_start``; ``on_train_batch_end`` gets ``None`` as the
        outputs and the batch (Lightning's handling, and its warning once a fit)."""
        if not self._warned_no_batch:
            self._warned_no_batch = True
            warnings.warn(
                "train_dataloader yielded None for a batch: its training step is skipped (if the loader or its "
                "collate_fn returns None on purpose, ignore this warning).",
                UserWarning,
                stacklevel=3,
            )
        return NO_BATCH

    def _batch_start(self, batch: Any, batch_idx: int) -> Any:
        """Transfer hooks, then ``on_train_batch_start``: the batch, or SKIP_REST_OF_EPOCH when the module said -1."""
        batch = self.opt.transfer_with_hooks(batch)
        self.run_.router.enter("on_train_batch_start", self.collector, batch)
        self.hooks.call_callbacks("on_train_batch_start", batch, batch_idx)
        skip = self.hooks.call_module("on_train_batch_start", batch, batch_idx) == -1
        return SKIP_REST_OF_EPOCH if skip else batch

    # ---- around each batch ---------------------------------------------------------------------------
    def _optimizer_stepped(self, batch_idx: int, count: int = 1, *, batch: bool = True) -> None:
        """After the optimizers stepped: count, step-interval schedulers, and (last batch) epoch ones."""
        state = self.state
        state.global_step += count
        if batch:  # manual optimisation counts every batch itself (manual_batch)
            state.count_batch()
        if not self.opt.schedulers:
            return
        # a step-interval frequency counts the epoch's batches, as Lightning's does (not global_step)
        self.opt.step_schedulers("step", batch_idx + 1, state.callback_metrics, plateau=False)
        self._plateau_step_due = batch_idx + 1
        length = self.limits.epoch_length
        if length is not None and batch_idx + 1 >= length and not self._epoch_schedulers_stepped:
            self.opt.step_schedulers("epoch", state.current_epoch + 1, state.callback_metrics, plateau=False)
            self._epoch_schedulers_stepped = True

    def _after_batch(self, output: Any, batch: Any, batch_idx: int) -> None:
        state = self.state
        state.batches_done, self._last_output, self._epoch_has_batches = batch_idx + 1, output, True
        hooks = self._batch_end_hooks
        if hooks:
            self.run_.router.enter("on_train_batch_end", self.collector)
            outputs = _batch_end_outputs(output)
            for hook in hooks:
                hook(outputs, batch, batch_idx)
        # Lightning's cadence; at a stop request too, on one process only (under DDP the read-back is a collective)
        log_every, stopping = self.limits.log_every, state.should_stop and self._log_on_stop
        if state.stepped_in_batch and (state.batches_stepped % log_every == 0 or stopping):
            self._log_step(output)
        if self._tick is not None:
            self._tick(state.global_step, self._last_loss)
        every = self._val_every
        if every is not None:
            if self.val_loop is not None and (self._val_offset + batch_idx + 1) % every == 0:
                self._validate()
        elif self._val_every_s is not None and time.monotonic() - self._last_val >= self._val_every_s:
            self._validate()
        length = self.limits.epoch_length
        if self._plateau_step_due and (length is None or batch_idx + 1 < length):  # the last: after its validation
            self._step_plateau_schedulers()
        state.stepped_in_batch = 0

    def _step_plateau_schedulers(self) -> None:
        count, self._plateau_step_due = self._plateau_step_due, 0
        self.opt.step_schedulers("step", count, self.state.callback_metrics, plateau=True)

    def _log_step(self, output: Any) -> None:
        """At a logging step: read back (and average across processes) the step values, in one go."""
        signals = self.signals  # under DDP its stop flags ride on this all-reduce (see process.interrupts)
        metrics = read_step_metrics(self.run_, self.collector, output, signals.flags() if signals else None)
        if signals is not None:
            signals.agree(metrics)
        self._last_loss = metrics.get("train_loss", self._last_loss)
        self.progress.show_metrics(self.state.progress_bar_metrics)
        self.opt.check_finite(metrics)

    def _finished(self, epoch: int) -> bool:
        return self.limits.finished(self.state, self._elapsed(), epoch)

    def _elapsed(self) -> float:
        """Seconds since the fit started, for ``max_time``; without it no clock read."""
        return time.monotonic() - self.started if self.limits.max_time_s is not None else 0.0

    def _stop_within_epoch(self) -> bool:
        state, limits = self.state, self.limits
        reason = limits.stop_reason(state, self._elapsed(), within_epoch=True)
        if reason is None:
            return False
        state.stop_reason, state.should_stop = reason, True
        length = limits.epoch_length
        if length is not None and state.batches_done >= length:
            return False  # the epoch is complete anyway
        if reason is StopReason.REQUESTED and self.val_loop is not None and limits.validates_in(state.current_epoch):
            self._validate()  # Lightning validates before honouring a requested stop
        return True

    def _make_iterator(self, epoch: int, *, resumed: bool = False) -> Any:
        """The epoch's batch iterator, made (with the loader's workers, and the random draws ``iter()`` takes) where
        Lightning makes it: the first epoch of a fit's before ``on_train_start``, a later one's after
        ``on_train_epoch_start``. None where the steps fetch their own batches (``_iterator_epoch``).

        The random state it is made with is the epoch's start state that a checkpoint keeps (``_resume.py``): a
        resumed epoch's iterator is made from it again. A resumed fit tells the sampler its epoch first as well:
        Lightning's is told after ``iter()``, too late for a loader with workers, which draws its order then.
        """
        if self.fetches_itself:
            return None
        if resumed and epoch > 0:
            self.run_.strategy.set_epoch(self.loader, epoch)
        self.state.epoch_start_rng = capture_rng_state(self.run_.strategy.accelerator)
        loader = self.hooks.fetching(self.loader, "[_TrainingEpochLoop].train_dataloader_next")
        return self.run_.hold_iterator("train", loader)

    def _start_epoch(self, epoch: int, skip: int) -> None:
        state = self.state
        every = self.run_.options.reload_dataloaders_every_n_epochs
        # a fit's first epoch uses the loader the fit just made (and its iterator, made before on_train_start)
        first = self._first_iterator is not None
        if self.reload is not None and every and epoch > 0 and epoch % every == 0 and not first:
            fresh = self.reload()
            warn_spawned_workers([fresh], "train_dataloader")
            self.loader = self.run_.prepare_loader(fresh, train=True)
            state.train_loader = self.loader
        state.begin_epoch(epoch, skip)
        length = self.limits.epoch_length
        self._epoch_schedulers_stepped = skip > 0 and length is not None and skip >= length
        self._epoch_has_batches = skip > 0
        self.run_.strategy.set_epoch(self.loader, epoch)
        if self.fetches_itself:
            state.epoch_start_rng = capture_rng_state(self.run_.strategy.accelerator)
        self._batch_end_hooks = self.hooks.get("on_train_batch_end")
        if self.fetches_itself:  # they get the last batch fetched, not the step's iterator
            self._batch_end_hooks = tuple(_with_last_fetched(hook) for hook in self._batch_end_hooks)
        if skip == 0:  # an epoch resumed in its middle already started (Lightning calls the hook once per epoch)
            self.run_.router.enter("on_train_epoch_start", self.collector)
            self.hooks.call("on_train_epoch_start")
            start_training_epoch(state)  # after the hook, which still reads the last epoch's (Lightning's order)
        self.limits = limits = self.opt.follow_accumulation(self.limits, state.accumulate_grad_batches)
        self._val_every = limits.val_every if limits.validates_in(epoch) else None
        self._val_every_s = limits.val_every_s if limits.validates_in(epoch) else None
        self._val_offset = state.batches_before_epoch if limits.check_val_every_n_epoch is None else 0
        self.progress.epoch_start(epoch, self.limits.epoch_length)

    def _end_epoch(self, epoch: int, *, complete: bool, validate: bool = True) -> None:
        """Validation at the epoch's end, the epoch hooks, metrics and schedulers (after a stop inside the epoch, the
        hooks only, as in Lightning: the epoch stays not done, so a resume finishes it; after ``on_train_batch_start``
        returned -1, all but the validation)."""
        state = self.state
        if not self._epoch_has_batches:  # an iterable that yielded nothing this epoch: Lightning ends the epoch
            if self.limits.max_epochs is None:  # ... and would start empty epochs forever
                raise MisconfigurationException(self.limits.explain_empty_epoch(epoch, loader=self.loader))
            validate = False  # Lightning validates after a batch only
        if complete:
            if validate and self.val_loop is not None and self.limits.validate_at_epoch_end(epoch):
                state.stepped_in_batch = min(state.batches_stepped, 1)  # Lightning validates before counting it
                self._validate()
                state.stepped_in_batch = 0
            if self._plateau_step_due:
                self._step_plateau_schedulers()
            if not self._epoch_schedulers_stepped:
                self.opt.step_schedulers("epoch", epoch + 1, state.callback_metrics, plateau=False)
            state.epoch_done = True
        row: dict[str, float] = {}  # the epoch's one logger row, written after the hooks (Lightning's)
        finish_train_epoch(self.run_, self.collector, reset=False, row=row)
        self._last_loss = latest_loss(self.run_, self._last_output, self._last_loss)
        self.run_.router.enter("on_train_epoch_end", self.collector)
        self.hooks.call_callbacks("on_train_epoch_end", monitoring=False)
        self.hooks.call_module("on_train_epoch_end")
        finish_train_epoch(self.run_, self.collector, row=row)  # values the epoch-end hooks logged
        self.hooks.call_callbacks("on_train_epoch_end", monitoring=True)
        if complete:
            self.opt.step_schedulers("epoch", epoch + 1, state.callback_metrics, plateau=True)
            state.epoch_schedulers_done = True
        log_train_row(self.run_, row)
        self.progress.epoch_end(state.global_step, epoch, epoch_line(state, self._last_loss))
        self.progress.show_metrics(state.progress_bar_metrics)
        self.run_.flush_loggers()
        leave_epoch(state, self.opt.accumulate, self.opt.automatic, complete)  # epoch_left, and the totals

    def _validate(self) -> None:
        assert self.val_loop is not None
        self.val_loop.run_within_fit()
        if self.val_loop.ended_at is not None:  # the time-based cadence restarts when a validation ends
            self._last_val = self.val_loop.ended_at
        self.run_.router.enter("training_step", self.collector)


def _with_last_fetched(hook: Callable[..., Any]) -> Callable[..., Any]:
    def called(outputs: Any, source: DataloaderIter, step_idx: int) -> Any:
        return hook(outputs, source.batch, source.batch_idx)

    return called


def _batch_end_outputs(output: Any) -> Any:
    """What ``on_train_batch_end`` receives, as Lightning hands it over: always a dict, its ``"loss"`` detached from
    the graph (a returned tensor is ``{"loss": ...}``, None is ``{}``); other values as returned."""
    if output is None:
        return {}
    if output is NO_BATCH:
        return None
    if isinstance(output, torch.Tensor):
        return {"loss": output.detach()}
    if isinstance(output, dict) and isinstance(output.get("loss"), torch.Tensor):
        return {**output, "loss": output["loss"].detach()}
    return output
