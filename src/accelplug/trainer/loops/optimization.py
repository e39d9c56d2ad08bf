"""One training batch's optimisation: automatic (Lightning's closure and hooks) or manual.

Automatic optimisation follows Lightning 2.x's order exactly: ``optimizer_step`` is called with a closure; the
closure runs ``training_step``, then (at the start of an accumulation window) ``on_before_zero_grad`` and
``optimizer_zero_grad``, then ``on_before_backward``, ``backward`` and ``on_after_backward``; after the closure come
``on_before_optimizer_step``, gradient clipping and the step itself. The torch optimizer receives the closure, so
LBFGS-style optimizers that re-evaluate work.

The optimizers the module sees (``self.optimizers()``) are :class:`ManagedOptimizer` proxies: their ``step`` goes
through the precision (a gradient scaler) and counts optimizer steps for manual runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import inspect
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from ...errors import MisconfigurationException
from ._losses import explain_backward, loss_of, refuse_skipping
from ._managed_optimizer import ManagedOptimizer
from ._precision_steps import PluginSteps
from ._transfer import transfer_batch

if TYPE_CHECKING:
    from .._run import Run
    from ._limits import Limits

__all__ = ["ManagedOptimizer", "Optimization", "loss_of"]

_PER_BATCH_HOOKS = (
    "on_train_batch_start",
    "on_before_zero_grad",
    "on_before_backward",
    "on_after_backward",
    "on_before_optimizer_step",
)
_OVERRIDABLE = (
    "optimizer_step",
    "optimizer_zero_grad",
    "backward",
    "configure_gradient_clipping",
    "transfer_batch_to_device",
    "on_before_batch_transfer",
    "on_after_batch_transfer",
)


class Optimization:
    """The optimizers, schedulers, precision and hooks one fit steps with."""

    def __init__(self, run: Run) -> None:
        options = run.options
        self.run = run
        self.module = run.module
        assert run.optim is not None
        self.optimizers = run.optim.optimizers
        self.schedulers = run.optim.schedulers
        self.managed = [ManagedOptimizer(o, step=self.optimizer_step, module=run.module) for o in self.optimizers]
        self.precision = run.precision
        self.strategy = run.strategy
        self.hooks = run.hooks
        self.step_fn: Callable[[Any, int], Any] = run.prepared.step_module
        self.wrapped = run.prepared.wrapped
        self.accumulate = options.accumulate_grad_batches
        self.clip_val = options.gradient_clip_val
        self.clip_algorithm = options.gradient_clip_algorithm
        self.given_clip_algorithm: str | None = run.trainer.gradient_clip_algorithm  # None unless given (the hook's)
        self.autocast = self.precision.uses_autocast
        self.forward_context = getattr(self.precision, "train_step_context", self.precision.forward_context)
        #: Set when a Lightning precision plugin rewrote a step method: it then drives backward and step.
        self.plugin_steps = PluginSteps(self) if getattr(self.precision, "takes_over_steps", False) else None
        self.automatic = bool(getattr(self.module, "automatic_optimization", True))
        self.stepped = False
        self.manual_steps = 0
        self.nonfinite = options.nonfinite_loss

    # ---- which path --------------------------------------------------------------------------------
    def can_go_fast(self) -> bool:
        """True when nothing has to run between forward, backward and step (see FitLoop.fast_batch)."""
        if any(self.hooks.get(name) for name in _PER_BATCH_HOOKS):
            return False
        if any(self.hooks.module_hook(name) is not None for name in _OVERRIDABLE):
            return False
        distributed_accumulation = self.wrapped is not None and self.accumulate > 1
        own_step = self.strategy.customizes_optimizer_step
        if self.precision.needs_help_with_steps or self.clip_val or distributed_accumulation or own_step:
            return False
        return all(_steps_without_closure(optimizer) for optimizer in self.optimizers)

    def boundary(self, batch_idx: int, epoch_length: int | None) -> bool:
        """Whether this batch ends an accumulation window (an optimizer step follows it)."""
        if self.accumulate == 1:
            return True
        return (batch_idx + 1) % self.accumulate == 0 or (epoch_length is not None and batch_idx + 1 == epoch_length)

    def follow_accumulation(self, limits: Limits, factor: int | None) -> Limits:
        """At an epoch's start: take ``trainer.accumulate_grad_batches`` once set (GradientAccumulationScheduler)."""
        if not factor or factor == self.accumulate:
            return limits
        self.accumulate = factor
        return dataclasses.replace(limits, accumulate=factor)

    # ---- pieces ------------------------------------------------------------------------------------
    def backward_plain(self, loss: torch.Tensor, step: int) -> None:
        try:
            loss.backward()  # type: ignore[no-untyped-call]
        except RuntimeError as exc:
            raise explain_backward(loss, step, exc) from exc

    def transfer_with_hooks(self, batch: Any, dataloader_idx: int = 0) -> Any:
        return transfer_batch(self.run, batch, dataloader_idx)

    # ---- automatic optimisation --------------------------------------------------------------------
    def automatic_step(self, batch: Any, batch_idx: int, epoch: int, epoch_length: int | None) -> Any:
        """One batch of automatic optimisation; ``self.stepped`` says whether the optimizers stepped."""
        result: dict[str, Any] = {}
        window_start = self.accumulate == 1 or batch_idx % self.accumulate == 0
        boundary = self.boundary(batch_idx, epoch_length)

        @torch.enable_grad()  # an optimizer whose step runs under no_grad (Hugging Face's AdamW) still trains
        def closure() -> torch.Tensor | None:
            result["output"] = output = self.forward(batch, batch_idx)
            loss = loss_of(output)
            if loss is None:
                refuse_skipping(self.strategy.world_size)
            if window_start:
                for optimizer in self.optimizers:
                    self.hooks.call("on_before_zero_grad", optimizer)
                    self._zero_grad(epoch, batch_idx, optimizer)
            if loss is None:
                return None
            if self.accumulate > 1:
                loss = loss / self.accumulate
            self.backward(loss, step=self.run.state.global_step)
            return loss.detach()

        self.stepped = False
        if not boundary:
            with self.strategy.no_gradient_sync(self.wrapped):
                closure()
            return result.get("output")
        self.step_optimizers(epoch, batch_idx, closure)
        if "output" not in result:
            raise MisconfigurationException(
                "The closure hasn't been executed: no training_step ran for this batch. HINT: call "
                "`optimizer_closure()` in your `optimizer_step` hook (or pass it on: `optimizer.step(closure="
                "optimizer_closure)`), and make sure your optimizer's `step(closure)` calls it."
            )
        return result.get("output")

    def step_optimizers(self, epoch: int, batch_idx: int, closure: Callable[[], Any]) -> None:
        """Every optimizer steps (via the module's ``optimizer_step`` if it has one); the first runs ``closure``."""
        custom_step = self.hooks.module_hook("optimizer_step")
        for index, managed in enumerate(self.managed):
            run_closure = closure if index == 0 else _no_closure
            if custom_step is not None:
                self.hooks.run_in("optimizer_step", custom_step, epoch, batch_idx, managed, run_closure)
            else:
                managed.step(closure=run_closure)
        self.precision.update()
        self.stepped = True

    def forward(self, batch: Any, batch_idx: int) -> Any:
        router = self.run.router
        router.fx = "training_step"
        with self.hooks.strategy_span("training_step"):
            if self.autocast:
                with self.forward_context():
                    return self.step_fn(batch, batch_idx)
            return self.step_fn(batch, batch_idx)

    def _zero_grad(self, epoch: int, batch_idx: int, optimizer: torch.optim.Optimizer) -> None:
        custom = self.hooks.module_hook("optimizer_zero_grad")
        if custom is not None:
            self.hooks.run_in("optimizer_zero_grad", custom, epoch, batch_idx, optimizer)
        else:
            optimizer.zero_grad()

    def backward(self, loss: torch.Tensor, *args: Any, step: int, **kwargs: Any) -> None:
        """``on_before_backward``, backward (the module's ``backward`` hook when defined), ``on_after_backward``;
        ``args``/``kwargs`` are ``manual_backward``'s extra arguments, passed on to ``loss.backward``."""
        if self.plugin_steps is not None:
            return self.plugin_steps.backward(loss, step)
        self.hooks.call("on_before_backward", loss)
        custom = self.hooks.module_hook("backward")
        try:
            with self.hooks.strategy_span("backward"):
                if custom is not None:
                    hook = functools.partial(custom, **kwargs) if kwargs else custom
                    self.hooks.run_in("backward", hook, loss, *args)
                else:
                    self.strategy.backward(loss, self.precision, *args, **kwargs)
        except RuntimeError as exc:
            raise explain_backward(loss, step, exc) from exc
        self.hooks.call("on_after_backward")

    def manual_backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        """``self.manual_backward(loss, ...)``: the backward hooks and the precision, as automatic optimisation does;
        the extra arguments (``retain_graph=True``...) reach ``loss.backward``, as in Lightning."""
        self.strategy.pre_backward(loss)
        self.backward(loss, *args, step=self.run.state.global_step, **kwargs)

    def optimizer_step(self, optimizer: torch.optim.Optimizer, closure: Callable[[], Any] | None) -> Any:
        """What ``ManagedOptimizer.step`` does: closure, hooks, clipping, then the precision-aware step."""

        def wrapped_closure() -> Any:
            value = closure() if closure is not None else None
            self._after_closure(optimizer)
            return value

        # manual optimisation: Lightning times the step itself as "optimizer_step"
        with self.hooks.span("optimizer_step") if not self.automatic else contextlib.nullcontext():
            if self.plugin_steps is not None:  # the plugin runs the closure, then calls _after_closure back
                value = self.strategy.optimizer_step(optimizer, closure, self.precision)
            elif self.precision.needs_help_with_steps:
                value = wrapped_closure()
                self.strategy.optimizer_step(optimizer, None, self.precision)
            else:
                value = self.strategy.optimizer_step(optimizer, wrapped_closure, self.precision)
        if not self.automatic:
            self.precision.update()
            self.manual_steps += 1
            # counted as it happens, as Lightning's: the rest of ``training_step`` sees the step in ``global_step``
            self.run.state.global_step += 1
        return value

    def _after_closure(self, optimizer: torch.optim.Optimizer) -> None:
        self.precision.unscale(optimizer)
        self.hooks.call("on_before_optimizer_step", optimizer)
        if not self.automatic:
            return
        custom = self.hooks.module_hook("configure_gradient_clipping")
        if custom is not None:
            # by keyword and as given (None unless set), as Lightning calls it
            clip = functools.partial(
                custom, gradient_clip_val=self.clip_val, gradient_clip_algorithm=self.given_clip_algorithm
            )
            self.hooks.run_in("configure_gradient_clipping", clip, optimizer)
        elif self.clip_val or self.plugin_steps is not None:
            self.clip_gradients(optimizer, self.clip_val, self.clip_algorithm)

    def clip_gradients(self, optimizer: Any, value: float | None, algorithm: str | None) -> None:
        raw = optimizer.optimizer if isinstance(optimizer, ManagedOptimizer) else optimizer
        if self.plugin_steps is not None:  # Lightning asks the plugin at every step, clipping or not
            return self.plugin_steps.clip_gradients(raw, float(value or 0.0), algorithm or "norm")
        if not value:
            return
        self.strategy.clip_gradients(self.module, raw, float(value), algorithm or "norm")

    # ---- manual optimisation -------------------------------------------------------------------------
    def manual_step(self, batch: Any, batch_idx: int) -> Any:
        return self.forward(batch, batch_idx)

    # ---- schedulers and losses -----------------------------------------------------------------------
    def step_schedulers(
        self, interval: str, count: int, metrics: dict[str, Any], *, plateau: bool | None = None
    ) -> None:
        """Step the schedulers of ``interval`` due at ``count``; ``plateau`` picks monitored ones or the others."""
        if not self.automatic:
            return  # in manual optimization the module steps its schedulers, as in Lightning
        for config in self.schedulers:
            if config.interval != interval or count % config.frequency:
                continue
            monitored = config.monitor is not None
            if plateau is not None and monitored != plateau:
                continue
            custom = self.hooks.module_hook("lr_scheduler_step")
            value = self._monitored(config.monitor, config.strict, metrics) if monitored else None
            if monitored and value is None:
                continue
            if custom is not None:
                self.hooks.run_in("lr_scheduler_step", custom, config.scheduler, value)
            elif monitored:
                config.scheduler.step(value)
            else:
                config.scheduler.step()
            state = self.run.state  # counted for Lightning's ``scheduler_progress``
            state.scheduler_steps += 1
            state.scheduler_steps_in_epoch += 1

    def _monitored(self, monitor: str | None, strict: bool, metrics: dict[str, Any]) -> Any:
        assert monitor is not None
        if monitor in metrics:
            value = metrics[monitor]
            return float(value) if isinstance(value, torch.Tensor) else value
        if strict:
            raise MisconfigurationException(
                f"ReduceLROnPlateau conditioned on metric {monitor} which is not available. Available metrics are: "
                f"{sorted(metrics)}. Log it with "
                f"self.log({monitor!r}, value) in training_step or validation_step, or set 'strict': False."
            )
        warnings.warn(
            f"ReduceLROnPlateau conditioned on metric {monitor} which is not available but strict is set to `False`. "
            f"Skipping learning rate update (logged metrics: {sorted(metrics)}).",
            RuntimeWarning,
            stacklevel=2,
        )
        return None

    def check_finite(self, metrics: dict[str, float]) -> None:
        """At logging steps (values already read back): warn about, or stop on, a NaN/inf loss."""
        loss = metrics.get("train_loss")
        if loss is None or self.nonfinite == "ignore" or (loss == loss and abs(loss) != float("inf")):
            return
        step = self.run.state.global_step
        message = (
            f"the training loss is {loss} at step {step}: training is diverging (learning rate too high, bad "
            "data, or a float16 overflow). Lower the learning rate, clip gradients (gradient_clip_val=1.0), "
            "or use precision='bf16-mixed'."
        )
        if self.nonfinite == "raise":
            raise FloatingPointError(message)
        if self.nonfinite == "stop":
            from ..state import StopReason

            self.run.state.should_stop = True
            self.run.state.stop_reason = StopReason.NON_FINITE_LOSS
            message += " Stopping (nonfinite_loss='stop')."
        warnings.warn(message, RuntimeWarning, stacklevel=2)


def _no_closure() -> None:
    return None


def _steps_without_closure(optimizer: torch.optim.Optimizer) -> bool:
    """Whether the lean path may call ``optimizer.step()`` after its own backward: one of torch's optimizers whose
    closure is optional. LBFGS needs its closure, and a custom ``step`` may not call the closure it is given, which
    the general path notices (Lightning's check)."""
    step = type(optimizer).step
    if not (getattr(step, "__module__", None) or "").startswith("torch.optim"):
        return False
    try:
        closure = inspect.signature(step).parameters.get("closure")
    except (TypeError, ValueError):  # no signature to read: take the general path, which passes the closure
        return False
    return closure is None or closure.default is not inspect.Parameter.empty
