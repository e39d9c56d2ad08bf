"""Mixed precision without autocast's weight-cast cache, as Lightning 2.6's Trainer runs it.

``torch.autocast`` keeps a low-precision copy of each weight for as long as its context lasts. A
``training_step`` under manual optimization may step one optimizer and then run a forward again (a GAN's
generator, then its discriminator on the new fakes): with the cache on, that second forward reuses the copies
made before the step and computes with the old weights. Lightning's Trainer turns the cache off
(``cache_enabled=False``); so does accelplug's, and the same script gives the same numbers under both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


def _two_optimizer_module(framework: Any) -> Any:
    class StepThenForwardAgain(framework.LightningModule):  # type: ignore[misc, name-defined]
        """Steps the first optimizer, then runs the same layer again in the same ``training_step``."""

        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.shared = torch.nn.Linear(4, 4)
            self.head = torch.nn.Linear(4, 1)
            self.automatic_optimization = False
            self.outputs: list[list[float]] = []

        def training_step(self, batch: Any, batch_idx: int) -> None:
            first, second = self.optimizers()
            (x,) = batch
            before = self.shared(x)
            loss = before.pow(2).mean()
            first.zero_grad()
            self.manual_backward(loss)
            first.step()
            after = self.shared(x)  # must see the weights first.step() just changed
            head_loss = self.head(after).pow(2).mean()
            second.zero_grad()
            self.manual_backward(head_loss)
            second.step()
            self.outputs.append([float(before.detach().float().sum()), float(after.detach().float().sum())])

        def configure_optimizers(self) -> Any:
            return [
                torch.optim.SGD(self.shared.parameters(), lr=0.5),
                torch.optim.SGD(self.head.parameters(), lr=0.5),
            ]

    return StepThenForwardAgain()


def _fit(framework: Any, root: Path) -> Any:
    module = _two_optimizer_module(framework)
    x = torch.randn(24, 4, generator=torch.Generator().manual_seed(1))
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        precision="bf16-mixed",
        max_epochs=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        default_root_dir=root,
    )
    with quiet_lightning(framework):
        trainer.fit(module, DataLoader(TensorDataset(x), batch_size=8))
    return module


def test_a_forward_after_an_optimizer_step_in_one_training_step_sees_the_new_weights(tmp_path: Path) -> None:
    ours = _fit(accelplug, tmp_path / "accelplug")
    theirs = _fit(lightning, tmp_path / "lightning")
    assert ours.outputs == theirs.outputs
    assert all(before != after for before, after in ours.outputs)  # the step changed what the layer computes
    for name, value in theirs.state_dict().items():
        torch.testing.assert_close(ours.state_dict()[name], value, rtol=0, atol=0)


def test_the_trainers_autocast_context_keeps_no_weight_casts() -> None:
    layer = torch.nn.Linear(4, 4)
    x = torch.ones(1, 4)
    context = accelplug.plugins.MixedPrecision("bf16-mixed", "cpu").autocast_context_manager()
    with context:
        before = layer(x)
        with torch.no_grad():
            layer.weight.add_(1.0)
        after = layer(x)
    assert not torch.equal(before, after)


def _reuses_weight_casts_in_fabric_autocast(framework: Any) -> bool:
    fabric = framework.Fabric(accelerator="cpu", devices=1, precision="bf16-mixed")
    layer = torch.nn.Linear(4, 4)
    x = torch.ones(1, 4)
    with fabric.autocast():
        before = layer(x)
        with torch.no_grad():
            layer.weight.add_(1.0)
        after = layer(x)
    return torch.equal(before, after)


def test_fabric_autocast_keeps_torchs_weight_cast_cache_as_lightning_fabric_does() -> None:
    # Lightning Fabric's context is torch's default one: within one context a changed weight is not cast again
    with quiet_lightning():
        assert _reuses_weight_casts_in_fabric_autocast(accelplug) == _reuses_weight_casts_in_fabric_autocast(lightning)
    assert _reuses_weight_casts_in_fabric_autocast(accelplug)
