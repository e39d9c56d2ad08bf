"""Where ``self.log`` may be called and where its values show, by Lightning 2.6's rules (issue 29's fixes)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Trainer
from accelplug.demos.boring_classes import BoringModel
from accelplug.errors import MisconfigurationException
from accelplug.loggers import CSVLogger, DummyLogger, Logger


def _trainer(tmp_path: Path, **options: Any) -> Trainer:
    settings = {
        "default_root_dir": tmp_path,
        "accelerator": "cpu",
        "devices": 1,
        "max_epochs": 1,
        "limit_train_batches": 2,
        "limit_val_batches": 1,
        "limit_test_batches": 1,
        "limit_predict_batches": 1,
        "enable_progress_bar": False,
        "enable_model_summary": False,
        "enable_checkpointing": False,
        "logger": False,
        **options,
    }
    return Trainer(**settings)


def test_logging_in_setup_is_refused_as_lightning_refuses_it(tmp_path: Path) -> None:
    class LogsInSetup(BoringModel):
        def setup(self, stage: str) -> None:
            self.log("in_setup", 1.0)

    with pytest.raises(MisconfigurationException, match=r"You can't `self\.log"):
        _trainer(tmp_path).fit(LogsInSetup())


def test_logging_in_lr_scheduler_step_is_refused(tmp_path: Path) -> None:
    class LogsInSchedulerStep(BoringModel):
        def lr_scheduler_step(self, scheduler: Any, metric: Any) -> None:
            self.log("in_scheduler_step", 1.0)

    with pytest.raises(MisconfigurationException, match=r"You can't `self\.log\(\)` inside `lr_scheduler_step`"):
        _trainer(tmp_path).fit(LogsInSchedulerStep())


def test_logging_while_predicting_says_prediction_collects_nothing(tmp_path: Path) -> None:
    class LogsInPredictStep(BoringModel):
        def predict_step(self, batch: Any, batch_idx: int, dataloader_idx: int = 0) -> Any:
            self.log("in_predict", 1.0)
            return super().predict_step(batch, batch_idx)

    with pytest.raises(MisconfigurationException, match="result collection is not registered yet"):
        _trainer(tmp_path).predict(LogsInPredictStep())


def test_setup_and_teardown_receive_lightnings_stage_enum(tmp_path: Path) -> None:
    stages: list[Any] = []

    class RecordsStages(BoringModel):
        def setup(self, stage: str) -> None:
            stages.append(stage)

        def teardown(self, stage: str) -> None:
            stages.append(stage)

    _trainer(tmp_path).fit(RecordsStages())
    assert stages == ["fit", "fit"]
    assert all(stage.value == "fit" for stage in stages)  # type: ignore[attr-defined]


def test_barebones_drops_logged_values_with_lightnings_warning(tmp_path: Path) -> None:
    class LogsEveryStep(BoringModel):
        def training_step(self, batch: Any, batch_idx: int) -> Any:
            self.log("dropped", 1.0)
            return super().training_step(batch, batch_idx)

    trainer = Trainer(
        default_root_dir=tmp_path, barebones=True, max_steps=1, accelerator="cpu", devices=1, limit_val_batches=0
    )
    with pytest.warns(UserWarning, match=r"barebones=True\)` is configured"):
        trainer.fit(LogsEveryStep())
    assert "dropped" not in trainer.callback_metrics
    assert trainer.log_every_n_steps == 0


def test_logged_metrics_show_each_steps_value_between_logging_steps(tmp_path: Path) -> None:
    class LogsBatchIndex(BoringModel):
        def training_step(self, batch: Any, batch_idx: int) -> Any:
            self.log("index", float(batch_idx))
            return super().training_step(batch, batch_idx)

    trainer = _trainer(tmp_path, limit_val_batches=0)  # 2 batches, log_every_n_steps 50: no logging step
    trainer.fit(LogsBatchIndex())
    assert {k: float(v) for k, v in trainer.logged_metrics.items()} == {"index": 1.0}


def test_a_metric_logged_on_step_only_is_reset_at_the_epochs_end(tmp_path: Path) -> None:
    torchmetrics = pytest.importorskip("torchmetrics")

    class LogsAStepMetric(BoringModel):
        def __init__(self) -> None:
            super().__init__()
            self.total = torchmetrics.SumMetric()

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            self.total(torch.tensor(1.0))
            self.log("total", self.total, on_step=True, on_epoch=False)
            return super().training_step(batch, batch_idx)

    model = LogsAStepMetric()
    _trainer(tmp_path, limit_val_batches=0).fit(model)
    assert model.total.update_count == 0


def test_a_logged_metric_whose_compute_returns_no_tensor_is_refused_with_its_name(tmp_path: Path) -> None:
    torchmetrics = pytest.importorskip("torchmetrics")

    class TwoValues(torchmetrics.Metric):
        def update(self) -> None:
            pass

        def compute(self) -> Any:
            return torch.tensor(1.0), torch.tensor(2.0)

    class LogsIt(BoringModel):
        def __init__(self) -> None:
            super().__init__()
            self.pair = TwoValues()

        def on_train_start(self) -> None:
            self.log("pair", self.pair)

    # Lightning raises ValueError here (its type, so a user's `except ValueError` still catches it)
    with pytest.raises(ValueError, match=r"`\.compute\(\)` return of the metric logged as 'pair' must be a tensor"):
        _trainer(tmp_path, limit_val_batches=0).fit(LogsIt())


def test_an_evaluation_epoch_writes_one_logger_row_with_the_epoch_end_values(tmp_path: Path) -> None:
    rows: list[dict[str, float]] = []

    class Rows(Logger):
        name, version = "rows", 0

        def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
            rows.append(dict(metrics))

        def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
            pass

    class LogsInStepAndEpochEnd(BoringModel):
        def test_step(self, batch: Any, batch_idx: int) -> Any:
            self.log("per_step", 1.0)
            return super().test_step(batch, batch_idx)

        def on_test_epoch_end(self) -> None:
            self.log("at_end", 2.0)

    _trainer(tmp_path, logger=Rows()).test(LogsInStepAndEpochEnd(), verbose=False)
    assert rows == [{"per_step": 1.0, "at_end": 2.0, "epoch": 0}]


def test_fast_dev_run_puts_a_dummy_logger_in_place_of_the_configured_one(tmp_path: Path) -> None:
    trainer = Trainer(default_root_dir=tmp_path, fast_dev_run=True, logger=CSVLogger(tmp_path), accelerator="cpu")
    trainer.fit(BoringModel())
    assert isinstance(trainer.logger, DummyLogger)
    trainer.logger.experiment.anything("goes", 1)  # user code that writes to the experiment keeps working
    assert not (tmp_path / "lightning_logs").exists()
    assert Trainer(fast_dev_run=True, logger=False, accelerator="cpu").logger is None


def test_sanity_check_values_are_visible_in_its_validation_end_hooks_only(tmp_path: Path) -> None:
    seen: dict[str, dict[str, float]] = {}

    class Watches(BoringModel):
        def validation_step(self, batch: Any, batch_idx: int) -> Any:
            self.log("checked", 5.0, prog_bar=True)
            return super().validation_step(batch, batch_idx)

        def on_validation_end(self) -> None:
            if self.trainer.sanity_checking:
                seen["sanity"] = dict(self.trainer.progress_bar_metrics)

        def on_train_start(self) -> None:
            seen["after"] = dict(self.trainer.progress_bar_metrics)

    _trainer(tmp_path, num_sanity_val_steps=1).fit(Watches())
    assert seen == {"sanity": {"checked": 5.0}, "after": {}}


def test_log_every_n_steps_zero_logs_no_step_but_the_epochs_as_lightning(tmp_path: Path) -> None:
    """``log_every_n_steps=0`` is Lightning's way to log no training step; epoch values are still logged and
    ``callback_metrics`` still fill. The CSV rows of both frameworks say so."""
    import csv

    lightning = pytest.importorskip("lightning")
    from lightning.pytorch.demos.boring_classes import BoringModel as TheirBoringModel
    from lightning.pytorch.loggers import CSVLogger as TheirCSVLogger

    import accelplug

    rows: dict[str, list[dict[str, str]]] = {}
    for name, framework in {"lightning": lightning, "accelplug": accelplug}.items():
        base, logger_class = (TheirBoringModel, TheirCSVLogger) if name == "lightning" else (BoringModel, CSVLogger)

        class Logs(base):  # type: ignore[misc, valid-type]
            def training_step(self, batch: Any, batch_idx: int) -> Any:
                self.log("step_value", float(batch_idx))
                self.log("epoch_value", float(batch_idx), on_step=False, on_epoch=True)
                return super().training_step(batch, batch_idx)

        logger = logger_class(tmp_path / name)
        trainer = framework.Trainer(
            default_root_dir=tmp_path / name,
            logger=logger,
            log_every_n_steps=0,
            max_epochs=2,
            limit_train_batches=3,
            limit_val_batches=0,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
        )
        trainer.fit(Logs())
        assert trainer.log_every_n_steps == 0
        assert "epoch_value" in trainer.callback_metrics
        with open(Path(logger.log_dir) / "metrics.csv") as handle:
            rows[name] = list(csv.DictReader(handle))
    assert rows["accelplug"] == rows["lightning"]
    assert len(rows["accelplug"]) == 2 and all("step_value" not in row for row in rows["accelplug"])
