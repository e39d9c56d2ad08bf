"""The same tiny fit under Lightning 2.6.6 and accelplug, with a record of what the loop did in each.

``fit_both(**trainer_options)`` builds one recording module per framework (same seed, same weights), fits it on
the same 8 training batches (and 4 validation batches) with the same options, and answers a :class:`Record` per
framework: which training batches ran (epoch, batch index, global step before it), when validation ran and over
how many batches, the epoch ends, the counters afterwards and the final weights. A test compares the two records,
or one of their fields, directly. Each fit takes a few milliseconds of training: the cost is the Trainer itself.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

FRAMEWORKS: dict[str, Any] = {"lightning": lightning, "accelplug": accelplug}

#: Batches of 4 samples: 8 for training, 4 for validation unless a test asks otherwise.
TRAIN_SAMPLES, VAL_SAMPLES, BATCH = 32, 16, 4


def loader(n: int = TRAIN_SAMPLES, seed: int = 0, shuffle: bool = False) -> DataLoader[Any]:
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(seed))
    y = x @ torch.tensor([[1.5], [-2.0]]) + 0.3
    return DataLoader(TensorDataset(x, y), batch_size=BATCH, shuffle=shuffle)


@dataclass
class Record:
    """What one framework's loop did in one fit."""

    #: ("train", epoch, batch_idx, global_step before the batch) per training batch.
    batches: list[tuple[str, int, int, int]] = field(default_factory=list)
    #: ("val", epoch, global_step, batches validated) per validation run (not the sanity check).
    validations: list[tuple[str, int, int, int]] = field(default_factory=list)
    #: ("epoch_end", epoch, global_step) per training epoch end.
    epoch_ends: list[tuple[str, int, int]] = field(default_factory=list)
    current_epoch: int = -1
    global_step: int = -1
    weights: list[torch.Tensor] = field(default_factory=list)

    @property
    def story(self) -> dict[str, Any]:
        """Everything but the weights, for one equality assertion with a readable diff."""
        return {
            "batches": self.batches,
            "validations": self.validations,
            "epoch_ends": self.epoch_ends,
            "current_epoch": self.current_epoch,
            "global_step": self.global_step,
        }


def recording_module(framework: Any, record: Record, *, validation: bool = True, **extra: Any) -> Any:
    """A linear regression on ``framework``'s ``LightningModule`` that writes what the loop asks of it to ``record``.

    ``extra``: ``manual=True`` (two optimizers stepped by hand), ``stop_at_step=N`` (``trainer.should_stop`` set at
    step N), ``hooks=True`` (an ``on_before_backward`` hook: the loop can no longer take its lean path),
    ``skip_from_batch=N`` (``on_train_batch_start`` returns -1 from batch N on), ``signal_at_step=N`` (a real
    SIGTERM to this process at step N), ``nan_from_step=N`` (a NaN loss from step N on), ``lr``.
    """

    class Recorded(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(2, 1)
            self.automatic_optimization = not extra.get("manual", False)
            self.val_batches = 0

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.layer(x)  # type: ignore[no-any-return]

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            record.batches.append(("train", self.current_epoch, batch_idx, self.global_step))
            if extra.get("stop_at_step") == self.global_step:
                self.trainer.should_stop = True
            if extra.get("signal_at_step") == self.global_step:
                os.kill(os.getpid(), signal.SIGTERM)
            loss = torch.nn.functional.mse_loss(self(batch[0]), batch[1])
            if extra.get("nan_from_step", float("inf")) <= self.global_step:
                loss = loss * float("nan")
            if self.automatic_optimization:
                return loss
            for optimizer in self.optimizers():
                optimizer.zero_grad()
            self.manual_backward(loss)
            for optimizer in self.optimizers():
                optimizer.step()
            return None

        def on_train_epoch_end(self) -> None:
            record.epoch_ends.append(("epoch_end", self.current_epoch, self.global_step))

        def configure_optimizers(self) -> Any:
            lr = extra.get("lr", 0.05)
            if extra.get("manual", False):
                return [
                    torch.optim.SGD([self.layer.weight], lr=lr, momentum=0.9),
                    torch.optim.SGD([self.layer.bias], lr=lr),
                ]
            return torch.optim.SGD(self.parameters(), lr=lr, momentum=0.9)

    if extra.get("hooks", False):

        def on_before_backward(self: Any, loss: torch.Tensor) -> None:
            assert loss.requires_grad

        Recorded.on_before_backward = on_before_backward

    if "skip_from_batch" in extra:

        def on_train_batch_start(self: Any, batch: Any, batch_idx: int) -> int | None:
            return -1 if batch_idx >= extra["skip_from_batch"] else None

        Recorded.on_train_batch_start = on_train_batch_start

    if validation:

        def validation_step(self: Any, batch: Any, batch_idx: int) -> None:
            self.val_batches += 1
            self.log("val_loss", torch.nn.functional.mse_loss(self(batch[0]), batch[1]))

        def on_validation_epoch_end(self: Any) -> None:
            if not self.trainer.sanity_checking:
                record.validations.append(("val", self.current_epoch, self.global_step, self.val_batches))
            self.val_batches = 0

        Recorded.validation_step = validation_step
        Recorded.on_validation_epoch_end = on_validation_epoch_end
    return Recorded()


def fit_one(
    framework: Any,
    tmp_path: Path,
    *,
    module: dict[str, Any] | None = None,
    train: Callable[[], DataLoader[Any]] = loader,
    val: Callable[[], DataLoader[Any]] | None = lambda: loader(VAL_SAMPLES, seed=1),
    callbacks: Callable[[Any], list[Any]] | None = None,
    ckpt_path: str | Path | None = None,
    **options: Any,
) -> tuple[Record, Any]:
    """Fit a recording module with ``framework`` (from ``ckpt_path`` if given); the record and the trainer."""
    record = Record()
    settings = {
        "accelerator": "cpu",
        "devices": 1,
        "logger": False,
        "enable_checkpointing": False,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "num_sanity_val_steps": 0,
        "default_root_dir": tmp_path,
        **options,
    }
    trainer = framework.Trainer(callbacks=callbacks(framework) if callbacks else None, **settings)
    model = recording_module(framework, record, validation=val is not None, **(module or {}))
    with quiet_lightning(framework):
        trainer.fit(model, train(), val() if val is not None else None, ckpt_path=ckpt_path)
    record.current_epoch, record.global_step = trainer.current_epoch, trainer.global_step
    record.weights = [p.detach().clone() for p in model.parameters()]
    return record, trainer


def fit_both(tmp_path: Path, **kwargs: Any) -> dict[str, Record]:
    """:func:`fit_one` under each framework, in folders of their own: ``{"lightning": ..., "accelplug": ...}``."""
    return {name: fit_one(framework, tmp_path / name, **kwargs)[0] for name, framework in FRAMEWORKS.items()}


def assert_same_weights(records: dict[str, Record]) -> None:
    for ours, theirs in zip(records["accelplug"].weights, records["lightning"].weights, strict=True):
        torch.testing.assert_close(ours, theirs)
