"""Batches, samples, items and FLOPs per second, logged as a fit, validation, test or prediction runs: Lightning's
``ThroughputMonitor`` callback, over :class:`accelplug.measure.throughput.Throughput`.

Keys are ``<stage>/<metric>`` with Lightning's stage names (``train``, ``validate``, ``test``, ``predict``), e.g.
``train/device/batches_per_sec``; rates appear once ``window_size`` batches (100 unless given) were seen.
Training values are logged at the logging steps (``log_every_n_steps``, after an optimizer step) at step
``global_step - 1`` with the epoch, as Lightning does; evaluation values at every ``log_every_n_steps``-th batch
of a run, at the step Lightning's evaluation loops count: a fit's validation batches since its training epoch
began, and the batches of every ``validate``/``test``/``predict`` call so far. The time spent validating is left
out of the training rates. Only global rank 0 measures and logs. ``device/flops_per_sec`` and ``device/mfu``
need a ``flops_per_batch`` attribute on the module (see :func:`accelplug.measure.flops.measure_flops`).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from typing import Any

import torch

from .._import_paths import seen_at
from ..errors import MisconfigurationException
from ..hardware.runtime import synchronize
from ..measure.throughput import Throughput, get_available_flops, precision_compute_dtype
from .base import Callback

__all__ = ["ThroughputMonitor"]


#: Lightning's public path of this callback's module, which also holds the ``get_available_flops`` it calls. Code
#: written for Lightning replaces the function there (``mock.patch("lightning.pytorch.callbacks.throughput_monitor.
#: get_available_flops", return_value=...)``) to give a device its peak FLOPs; ``setup`` reads the function from
#: that module, when it is loaded, so the replacement is used.
_PUBLIC_PATH = "accelplug.pytorch.callbacks.throughput_monitor"


def _available_flops(device: torch.device, dtype: torch.dtype | str) -> int | None:
    found: Callable[..., int | None] = seen_at(_PUBLIC_PATH, "get_available_flops", get_available_flops)
    return found(device, dtype)


class ThroughputMonitor(Callback):
    """Log throughput; ``batch_size_fn(batch)`` gives a batch's samples, ``length_fn(batch)`` its items (tokens),
    ``**kwargs`` go to :class:`Throughput` (``window_size``, ``separator``)."""

    def __init__(
        self, batch_size_fn: Callable[[Any], int], length_fn: Callable[[Any], int] | None = None, **kwargs: Any
    ) -> None:
        super().__init__()
        if not callable(batch_size_fn):
            raise MisconfigurationException(
                f"batch_size_fn={batch_size_fn!r} is not callable: give a function batch -> number of samples, "
                "e.g. lambda batch: batch[0].size(0)."
            )
        if length_fn is not None and not callable(length_fn):
            raise MisconfigurationException(f"length_fn={length_fn!r} is not callable: a function batch -> items.")
        Throughput(**kwargs)  # the keyword arguments checked now, not at the first batch
        self.kwargs = kwargs
        self.batch_size_fn = batch_size_fn
        self.length_fn = length_fn
        self.available_flops: int | None = None
        self._throughputs: dict[str, Throughput] = {}
        self._t0s: dict[str, float] = {}
        self._lengths: dict[str, int] = {}
        self._samples: dict[str, int] = {}
        self._batches: dict[str, int] = {}
        self._run_batches: dict[str, int] = {}
        #: the logger step of evaluation rows, per ``"fit:validate"`` or call stage (see the module's doc)
        self._eval_steps: dict[str, int] = {}
        self._module_has_flops: bool | None = None
        self._last_step = 0

    def setup(self, trainer: Any, pl_module: torch.nn.Module, stage: str) -> None:
        dtype = precision_compute_dtype(trainer.precision)
        self.available_flops = _available_flops(trainer.strategy.root_device, dtype)
        self._throughputs = {}

    def _start(self, trainer: Any, stage: str) -> None:
        if stage not in self._throughputs:
            self._throughputs[stage] = Throughput(
                available_flops=self.available_flops, world_size=trainer.world_size, **self.kwargs
            )
        if _fitting(trainer) or stage not in self._samples:
            self._throughputs[stage].reset()
            self._lengths[stage] = self._samples[stage] = self._batches[stage] = 0
        self._run_batches[stage] = 0
        self._t0s[stage] = time.perf_counter()

    @torch.inference_mode()
    def _update(self, trainer: Any, pl_module: torch.nn.Module, batch: Any, stage: str) -> None:
        throughput = self._throughputs[stage]
        synchronize(trainer.strategy.root_device)  # queued work counts: any device, through its capability probe
        elapsed = time.perf_counter() - self._t0s[stage]
        if self.length_fn is not None:
            self._lengths[stage] += self.length_fn(batch)
        if self._module_has_flops is None:
            self._module_has_flops = hasattr(pl_module, "flops_per_batch")
            if not self._module_has_flops:
                warnings.warn(
                    "When using the `ThroughputMonitor`, you need to define a `flops_per_batch` attribute or property"
                    f" in {type(pl_module).__name__} to compute the FLOPs.",
                    stacklevel=1,  # the caller is a hook behind torch's no_grad wrapper: this line says more
                )
        flops = getattr(pl_module, "flops_per_batch", None) if self._module_has_flops else None
        self._samples[stage] += self.batch_size_fn(batch)
        self._batches[stage] += 1
        self._run_batches[stage] += 1
        throughput.update(
            time=elapsed,
            batches=self._batches[stage],
            samples=self._samples[stage],
            lengths=None if self.length_fn is None else self._lengths[stage],
            flops=flops,
        )

    def _log(self, trainer: Any, stage: str, due: int, step: int, epoch: int | None) -> None:
        every = trainer.log_every_n_steps
        if not every or not (due % every == 0 or trainer.should_stop):
            return
        loggers = trainer.loggers
        if not loggers:
            return
        throughput = self._throughputs[stage]
        metrics = {f"{stage}{throughput.separator}{k}": v for k, v in throughput.compute().items()}
        trainer.logged_metrics.update(metrics)
        row = metrics if epoch is None else {**metrics, "epoch": epoch}
        for logger in loggers:
            logger.log_metrics(metrics=row, step=step)  # by keyword, as Lightning calls it
            logger.save()

    # ---- training ----------------------------------------------------------------------------------------
    def on_train_start(self, trainer: Any, *_: Any) -> None:
        if trainer.is_global_zero:
            self._start(trainer, "train")
            self._last_step = trainer.global_step

    def on_train_batch_end(self, trainer: Any, pl_module: torch.nn.Module, outputs: Any, batch: Any, *_: Any) -> None:
        if not trainer.is_global_zero:
            return
        self._update(trainer, pl_module, batch, "train")
        step = trainer.global_step
        if step != self._last_step:  # the optimizers stepped (not inside an accumulation window)
            self._last_step = step
            self._log(trainer, "train", step, step - 1, trainer.current_epoch)

    def on_train_epoch_start(self, trainer: Any, *_: Any) -> None:
        self._eval_steps.pop("fit:validate", None)  # the fit's validation counts its batches anew each epoch

    # ---- evaluation ---------------------------------------------------------------------------------------
    def on_validation_start(self, trainer: Any, *_: Any) -> None:
        if trainer.is_global_zero and not trainer.sanity_checking:
            self._start(trainer, "validate")

    def on_validation_batch_end(
        self, trainer: Any, pl_module: torch.nn.Module, outputs: Any, batch: Any, *_: Any, **__: Any
    ) -> None:
        if trainer.is_global_zero and not trainer.sanity_checking:
            self._evaluated(trainer, pl_module, batch, "validate")

    def on_validation_end(self, trainer: Any, *_: Any) -> None:
        if not trainer.is_global_zero or trainer.sanity_checking or not _fitting(trainer):
            return
        if "train" not in self._t0s or "validate" not in self._t0s:
            return
        train_times = self._throughputs["train"]._time
        val_times = self._throughputs["validate"]._time
        trained_until = self._t0s["train"] + (train_times[-1] if train_times else 0.0)
        gap = self._t0s["validate"] - trained_until
        self._t0s["train"] += gap + (val_times[-1] if val_times else 0.0)  # validation's time is not training's

    def on_test_start(self, trainer: Any, *_: Any) -> None:
        if trainer.is_global_zero:
            self._start(trainer, "test")

    def on_test_batch_end(
        self, trainer: Any, pl_module: torch.nn.Module, outputs: Any, batch: Any, *_: Any, **__: Any
    ) -> None:
        if trainer.is_global_zero:
            self._evaluated(trainer, pl_module, batch, "test")

    def on_predict_start(self, trainer: Any, *_: Any) -> None:
        if trainer.is_global_zero:
            self._start(trainer, "predict")

    def on_predict_batch_end(
        self, trainer: Any, pl_module: torch.nn.Module, outputs: Any, batch: Any, *_: Any, **__: Any
    ) -> None:
        if trainer.is_global_zero:
            self._evaluated(trainer, pl_module, batch, "predict")

    def _evaluated(self, trainer: Any, pl_module: torch.nn.Module, batch: Any, stage: str) -> None:
        self._update(trainer, pl_module, batch, stage)
        key = f"fit:{stage}" if _fitting(trainer) else stage
        self._eval_steps[key] = self._eval_steps.get(key, 0) + 1
        self._log(trainer, stage, self._run_batches[stage], self._eval_steps[key], None)


def _fitting(trainer: Any) -> bool:
    fn = trainer.state.fn
    return bool(getattr(fn, "value", fn) == "fit")
