"""What ``on_train_batch_end`` receives as ``outputs``, against Lightning 2.6: always a dict, the loss detached.

A callback written for Lightning reads ``outputs["loss"]``; a returned tensor handed over as it is broke that, and
kept the step's whole graph alive until the hook returned.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="compared with Lightning's hook arguments, not installed here")


def _describe(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return ("tensor", value.requires_grad)
    if isinstance(value, dict):
        return {key: _describe(item) for key, item in value.items()}
    return value


def _outputs_seen(framework: Any, returns: str, manual: bool) -> list[Any]:
    seen: list[Any] = []

    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)
            self.automatic_optimization = not manual

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            loss = self.layer(batch[0]).sum()
            if manual:
                optimizer = self.optimizers()
                optimizer.zero_grad()
                self.manual_backward(loss)
                optimizer.step()
            return {"tensor": loss, "dict": {"loss": loss, "extra": loss * 2, "count": 3}, "none": None}[returns]

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
            seen.append(_describe(outputs))

    trainer = framework.Trainer(
        accelerator="cpu",
        max_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(4, 2)), batch_size=2)
    trainer.fit(Module(), data)
    return seen


@pytest.mark.parametrize("manual", [False, True], ids=["automatic", "manual"])
@pytest.mark.parametrize("returns", ["tensor", "dict", "none"])
def test_batch_end_outputs_are_lightnings(returns: str, manual: bool) -> None:
    ours = _outputs_seen(accelplug, returns, manual)
    with quiet_lightning(lightning):  # Lightning's own advice on a None step (LIGHTNING_ONLY_WARNINGS)
        assert ours == _outputs_seen(lightning.pytorch, returns, manual)
    assert isinstance(ours[0], dict)
    if returns != "none":
        assert ours[0]["loss"] == ("tensor", False)


def _none_batches_seen(framework: Any) -> list[Any]:
    """The hooks' view of a fit whose loader yields ``None`` for every other batch (a collate_fn that drops some)."""
    seen: list[Any] = []

    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            seen.append(("step", batch_idx))
            return self.layer(batch[0]).sum()

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
            seen.append(("end", batch_idx, _describe(outputs), batch is None, self.global_step))

    calls = iter(range(100))

    def every_other(samples: list[Any]) -> Any:
        return None if next(calls) % 2 == 0 else torch.utils.data.default_collate(samples)

    data = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(8, 2)), batch_size=2, collate_fn=every_other
    )
    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        log_every_n_steps=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    with pytest.warns(UserWarning, match="train_dataloader yielded None"):
        trainer.fit(Module(), data)
    return seen


def test_a_none_batch_skips_its_step_and_ends_with_none_outputs_as_in_lightning() -> None:
    ours = _none_batches_seen(accelplug)
    assert ours == _none_batches_seen(lightning.pytorch)
    assert ours[:2] == [("end", 0, None, True, 0), ("step", 1)]
