"""``self.log`` inside the Trainer: values logged in a step reach ``callback_metrics`` and the results."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Trainer
from tests.modules import LinearRegression, quiet, regression_data


def test_self_log_from_a_lightning_style_module_reaches_the_metrics(tmp_path: Path) -> None:
    class LogsLikeLightning(LinearRegression):
        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            loss = super().training_step(batch, batch_idx)
            self.log("my_train_loss", loss, prog_bar=True)
            return loss

        def validation_step(self, batch: Any, batch_idx: int) -> None:  # type: ignore[override]
            x, y = batch
            self.log_dict({"my_val_mse": torch.nn.functional.mse_loss(self.linear(x), y)}, sync_dist=True)

    model, data = LogsLikeLightning(), regression_data(shuffle=False)
    trainer = Trainer(**quiet(max_epochs=2, log_every_n_steps=4, default_root_dir=tmp_path))
    trainer.fit(model, data, data)
    assert {"my_train_loss", "my_val_mse"} <= set(trainer.callback_metrics)
    (validated,) = trainer.validate(model, data, verbose=False)
    assert set(trainer.callback_metrics) == {"my_val_mse"}, "validate() starts with no metrics, as in Lightning"
    with torch.no_grad():
        expected = sum(float(torch.nn.functional.mse_loss(model.linear(x), y)) for x, y in data) / len(data)
    assert validated["my_val_mse"] == pytest.approx(expected, rel=1e-5)
    assert not hasattr(model, "log"), "the Trainer removes the log method it lent"
