"""The CSV logger the Trainer opens by default: ``metrics.csv`` under ``default_root_dir``."""

from __future__ import annotations

import csv
from pathlib import Path

from accelplug import Trainer
from tests.modules import LinearRegression, quiet, regression_data


def test_metrics_are_written_to_csv_under_default_root_dir(tmp_path: Path) -> None:
    trainer = Trainer(**quiet(max_epochs=2, log_every_n_steps=2, default_root_dir=tmp_path))
    data = regression_data()
    trainer.fit(LinearRegression(), data, data)
    assert trainer.metrics_path is not None
    assert trainer.metrics_path.is_relative_to(tmp_path)
    rows = list(csv.DictReader(trainer.metrics_path.open()))
    train_losses = [float(r["train_loss"]) for r in rows if r["train_loss"]]
    assert len(train_losses) == 8  # 16 steps, every 2nd logged
    assert [r for r in rows if r["val_loss"]], "validation metrics are logged at each epoch end"
    assert train_losses[-1] < train_losses[0]
