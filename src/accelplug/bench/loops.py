"""The two loops a benchmark round runs on the same model and data: accelplug's Trainer and a hand-written one.

:func:`trainer_round` is what a user gets: ``Trainer.fit`` for training, ``Trainer.validate`` for
evaluation, on a :class:`BenchModule` (a plain ``torch.nn.Module`` with ``training_step``,
``validation_step`` and ``configure_optimizers``), with the logger, checkpointing, the model summary,
the sanity check and the Trainer's own progress bar off, so nothing but the loop runs per step. The
data is one batch made on the device beforehand, repeated (a list of batches is a loader the Trainer
accepts), so the input pipeline is not what is measured.

:func:`baseline_round` is the loop a careful user writes by hand with torch alone, step for step
the same work: zero the gradients, forward under the precision's autocast, backward (through a
``GradScaler`` for float16), step; evaluation under ``torch.inference_mode`` summing the loss
on the device. It imports nothing from the Trainer, so ``--baseline`` measures the Trainer's overhead.
"""

from __future__ import annotations

import contextlib
from typing import Any, Literal

import torch
from torch import nn

from ..errors import MisconfigurationException
from ..precision import BUILTIN_PRECISIONS
from .models import Workload
from .timing import StepTimer, StepWindow

__all__ = [
    "BASELINE_PRECISIONS",
    "BenchModule",
    "Phase",
    "baseline_round",
    "make_batch",
    "torch_setting",
    "trainer_round",
]

Phase = Literal["train", "eval"]

#: SGD with momentum, as in the PyTorch MPS launch post's training loops; the same for both loops.
LEARNING_RATE = 1e-3
MOMENTUM = 0.9

#: The precisions the hand-written loop reproduces with torch alone: the built-ins, from what their classes
#: declare (parameter dtype, autocast dtype, loss scaling). A plugin's precision may do more, so
#: ``--baseline`` refuses it.
BASELINE_PRECISIONS: tuple[str, ...] = tuple(cls.name for cls in BUILTIN_PRECISIONS)


def torch_setting(precision: str, device_type: str) -> tuple[torch.dtype | None, torch.dtype | None, bool]:
    """(parameter dtype, autocast dtype, GradScaler?) of a built-in precision on ``device_type``."""
    cls = next(c for c in BUILTIN_PRECISIONS if c.name == precision)
    plan = cls(device_type)
    autocast = plan.uses_autocast and plan.param_dtype is None  # a true precision's context sets the dtype only
    return plan.param_dtype, plan.compute_dtype if autocast else None, plan.scaler is not None


class BenchModule(nn.Module):
    """A workload's model in the Trainer's protocol: cross-entropy on random labels, SGD with momentum."""

    def __init__(self, workload: Workload, model: nn.Module) -> None:
        super().__init__()
        self.model = model
        self.logits_of = workload.forward

    def loss(self, batch: tuple[Any, torch.Tensor]) -> torch.Tensor:
        inputs, labels = batch
        return nn.functional.cross_entropy(self.logits_of(self.model, inputs), labels)

    def training_step(self, batch: tuple[Any, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self.loss(batch)

    def validation_step(self, batch: tuple[Any, torch.Tensor], batch_idx: int) -> torch.Tensor:
        return self.loss(batch)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)


def make_batch(workload: Workload, device: torch.device, float_dtype: torch.dtype | None) -> tuple[Any, torch.Tensor]:
    """One batch on ``device``: floating inputs already in the precision's parameter dtype and, for CNNs
    on an accelerator, in channels_last, so neither loop converts anything per step."""
    inputs = workload.make_inputs(workload.batch_size, device)
    if isinstance(inputs, torch.Tensor) and inputs.is_floating_point():
        if float_dtype is not None:
            inputs = inputs.to(float_dtype)
        if workload.is_cnn and device.type != "cpu":
            inputs = inputs.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, workload.num_classes, (workload.batch_size,), device=device)
    return inputs, labels


def trainer_round(
    phase: Phase, module: BenchModule, batch: Any, accelerator: str, precision: str, window: StepWindow
) -> None:
    """One ``fit`` (train) or ``validate`` (eval) over ``window.total`` copies of ``batch``."""
    from ..trainer import Trainer

    trainer = Trainer(
        accelerator=accelerator,
        devices=1,
        precision=precision,
        max_epochs=1,
        max_steps=window.total,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        callbacks=[StepTimer(window)],
    )
    batches = [batch] * window.total
    if phase == "train":
        trainer.fit(module, train_dataloaders=batches)
    else:
        trainer.validate(module, dataloaders=batches, verbose=False)


def baseline_round(phase: Phase, module: BenchModule, batch: Any, precision: str, window: StepWindow) -> None:
    """The hand-written loop over ``window.total`` steps of ``batch`` (see the module docstring)."""
    if precision not in BASELINE_PRECISIONS:
        raise MisconfigurationException(
            f"--baseline: the hand-written loop knows torch's own precisions ({', '.join(BASELINE_PRECISIONS)}), "
            f"not {precision!r}, which a plugin adds; run without --baseline."
        )
    device = window.device
    param_dtype, autocast_dtype, scaled = torch_setting(precision, device.type)
    model, logits_of = module.model, module.logits_of
    inputs, labels = batch
    model.to(device=device, dtype=param_dtype)  # already there after a Trainer round: a no-op then

    def forward_context() -> contextlib.AbstractContextManager[Any]:
        if autocast_dtype is None:
            return contextlib.nullcontext()
        return torch.autocast(device.type, dtype=autocast_dtype)

    window.begin()
    if phase == "train":
        model.train()
        optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE, momentum=MOMENTUM)
        scaler = torch.amp.GradScaler(device.type) if scaled else None
        for _ in range(window.total):
            optimizer.zero_grad(set_to_none=True)
            with forward_context():
                loss = nn.functional.cross_entropy(logits_of(model, inputs), labels)
            if scaler is None:
                loss.backward()  # type: ignore[no-untyped-call]  # torch leaves it unannotated
                optimizer.step()
            else:
                scaler.scale(loss).backward()  # type: ignore[no-untyped-call]
                scaler.step(optimizer)
                scaler.update()
            window.step_done()
        return
    model.eval()
    total = torch.zeros((), device=device)
    with torch.inference_mode():
        for _ in range(window.total):
            with forward_context():
                loss = nn.functional.cross_entropy(logits_of(model, inputs), labels)
            total += loss.float()
            window.step_done()
    total.item()  # the mean is read back after the window, as the Trainer reads its val_loss
