"""The one preparation path: a module prepared without a Trainer trains exactly as the Trainer trains it.

``accelplug.strategies.preparation`` is what a custom loop (``accelplug.fabric``) and the Trainer share; these tests
call it with nothing but a strategy, a precision and an accelerator, and compare a hand-written loop over
the prepared module with ``Trainer.fit`` on the same data.
"""

from __future__ import annotations

from typing import Any

import torch

from accelplug import Trainer
from accelplug.accelerators import CPUAccelerator
from accelplug.data.batches import make_transfer
from accelplug.precision import Float64Precision
from accelplug.strategies import SingleDeviceStrategy
from accelplug.strategies.preparation import prepare_module, setup_environment


class Regression(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        return torch.nn.functional.mse_loss(self.linear(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.05)


def _batches() -> list[tuple[torch.Tensor, torch.Tensor]]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 3, generator=generator)
    y = x @ torch.tensor([[1.0, -2.0, 0.5]]).T
    return [(x[i : i + 16], y[i : i + 16]) for i in range(0, 64, 16)]


def _fresh() -> Regression:
    torch.manual_seed(0)
    return Regression()


def test_a_module_prepared_without_a_trainer_trains_as_the_trainer_trains_it() -> None:
    device = torch.device("cpu")
    strategy, precision = SingleDeviceStrategy(), Float64Precision("cpu")
    setup_environment(strategy, CPUAccelerator(), device)
    by_hand = _fresh()
    prepared = prepare_module(strategy, by_hand, precision)
    assert prepared.module is by_hand and prepared.optim is not None
    assert by_hand.linear.weight.dtype == torch.float64  # the precision's conversion ran
    transfer = make_transfer(device, precision.param_dtype)
    (optimizer,) = prepared.optim.optimizers
    for _epoch in range(2):
        for index, batch in enumerate(_batches()):
            optimizer.zero_grad()
            prepared.step_module(transfer(batch), index).backward()
            optimizer.step()
    strategy.teardown()

    by_trainer = _fresh()
    trainer = Trainer(
        accelerator="cpu",
        precision="64-true",
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    trainer.fit(by_trainer, _batches())
    assert trainer.global_step == 8
    assert torch.equal(by_hand.linear.weight, by_trainer.linear.weight)
    assert torch.equal(by_hand.linear.bias, by_trainer.linear.bias)


def test_preparing_for_evaluation_asks_for_no_optimizers() -> None:
    asked: list[Any] = []

    class Watched(Regression):
        def configure_optimizers(self) -> torch.optim.Optimizer:
            asked.append(True)
            return super().configure_optimizers()

    strategy = SingleDeviceStrategy()
    setup_environment(strategy, CPUAccelerator(), torch.device("cpu"))
    prepared = prepare_module(strategy, Watched(), Float64Precision("cpu"), with_optimizers=False)
    assert prepared.optim is None and not asked


def test_sync_batchnorm_is_left_alone_on_one_process() -> None:
    strategy = SingleDeviceStrategy()
    setup_environment(strategy, CPUAccelerator(), torch.device("cpu"))
    module = torch.nn.Sequential(torch.nn.BatchNorm1d(3))
    module.training_step = lambda batch, batch_idx: module(batch).sum()  # type: ignore[assignment]
    prepared = prepare_module(strategy, module, Float64Precision("cpu"), with_optimizers=False, sync_batchnorm=True)
    assert isinstance(prepared.module[0], torch.nn.BatchNorm1d)
    assert not isinstance(prepared.module[0], torch.nn.SyncBatchNorm)
