"""What ``on_train_batch_end`` receives as ``outputs``, against Lightning 2.6: always a dict, the loss detached.

A callback written for Lightning reads ``outputs["loss"]``; a returned tensor handed over as it is broke that, and
kept the step's whole graph alive until the hook returned.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

import accelplug

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
    assert ours == _outputs_seen(lightning.pytorch, returns, manual)
    assert isinstance(ours[0], dict)
    if returns != "none":
        assert ours[0]["loss"] == ("tensor", False)
