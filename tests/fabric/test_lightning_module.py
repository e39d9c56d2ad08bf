"""A ``LightningModule`` set up by ``fabric.setup``: its Trainer-facing methods work through the Fabric.

``self.optimizers()``, ``self.manual_backward``, ``self.clip_gradients``, ``self.log``, ``self.logger(s)`` and
``self.trainer`` reach the Fabric, as with Lightning's Fabric, so one module serves a Trainer and a hand-written
loop; the same manual-optimization step gives Lightning Fabric's weights and logged values.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

import accelplug
from accelplug.fabric import Fabric
from tests.callbacks.parity import quiet_lightning


class _Recorder:
    """A logger that keeps what it is given."""

    def __init__(self) -> None:
        self.logged: list[dict[str, Any]] = []

    def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
        self.logged.append(dict(metrics))


def _manual_module(base: type) -> Any:
    """A manual-optimization module built on ``base`` (accelplug's or Lightning's ``LightningModule``)."""

    class Manual(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.automatic_optimization = False
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch: torch.Tensor) -> None:
            opt = self.optimizers()
            loss = self.layer(batch).pow(2).mean()
            opt.zero_grad()
            self.manual_backward(loss)
            self.clip_gradients(opt, gradient_clip_val=0.05, gradient_clip_algorithm="norm")
            opt.step()
            self.log("loss", loss)

    return Manual()


def _run(fabric_cls: type, base: type) -> tuple[list[float], list[dict[str, Any]]]:
    recorder = _Recorder()
    fabric = fabric_cls(accelerator="cpu", devices=1, loggers=recorder)
    torch.manual_seed(0)
    module = _manual_module(base)
    model, _ = fabric.setup(module, torch.optim.SGD(module.parameters(), lr=0.5))
    batch = torch.randn(8, 4, generator=torch.Generator().manual_seed(1))
    for _ in range(3):
        model.training_step(batch)
    return model.layer.weight.flatten().tolist(), recorder.logged


def test_a_manual_step_under_fabric_gives_lightning_fabrics_weights_and_logs() -> None:
    lightning = pytest.importorskip("lightning", reason="the comparison runs Lightning Fabric")
    ours = _run(Fabric, accelplug.LightningModule)
    with quiet_lightning():
        theirs = _run(lightning.fabric.Fabric, lightning.pytorch.LightningModule)
    assert ours[0] == theirs[0]
    assert [{k: float(v) for k, v in d.items()} for d in ours[1]] == theirs[1]


def test_self_trainer_under_fabric_answers_with_the_fabrics_attributes() -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    model = fabric.setup(accelplug.LightningModule())
    assert model.trainer.global_rank == 0 and model.trainer.world_size == 1
    with pytest.raises(AttributeError, match=r"`self.trainer.current_epoch` but this attribute is not available"):
        _ = model.trainer.current_epoch


def test_self_logger_is_the_fabrics_first_logger() -> None:
    recorder = _Recorder()
    assert Fabric(accelerator="cpu", devices=1, loggers=recorder).setup(accelplug.LightningModule()).logger is recorder
    model = Fabric(accelerator="cpu", devices=1).setup(accelplug.LightningModule())
    assert model.loggers == []
    with pytest.raises(IndexError):
        _ = model.logger


def test_self_log_under_fabric_refuses_what_no_logger_takes() -> None:
    model = Fabric(accelerator="cpu", devices=1, loggers=_Recorder()).setup(accelplug.LightningModule())
    with pytest.raises(ValueError, match="`list` values cannot be logged"):
        model.log("x", [1])
    with pytest.raises(ValueError, match="nested dictionaries cannot be logged"):
        model.log_dict({"x": {"y": 1}})


def test_fabric_call_runs_the_hooks_of_a_module_it_set_up_once() -> None:
    calls: list[str] = []

    class Hooked(accelplug.LightningModule):
        def on_train_start(self) -> None:
            calls.append("on_train_start")

    fabric = Fabric(accelerator="cpu", devices=1)
    module = Hooked()
    fabric.setup(module)
    fabric.setup(module)
    fabric.call("on_train_start")
    assert calls == ["on_train_start"]


def test_an_ensembles_inner_modules_see_the_trainer_given_to_it() -> None:
    ensemble, inner = accelplug.LightningModule(), accelplug.LightningModule()
    ensemble.inner = inner
    trainer = object()
    ensemble.trainer = trainer
    assert inner.trainer is trainer
