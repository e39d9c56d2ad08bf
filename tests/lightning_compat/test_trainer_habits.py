"""The Trainer arguments Lightning users type out of habit work with Lightning's meaning, or are refused clearly."""

from __future__ import annotations

import datetime
import time
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug as L
from accelplug import MisconfigurationException
from accelplug.errors import PossibleUserWarning

# These fits use loaders of a few batches: the advice that an epoch is shorter than the logging interval
# (Lightning's, given by both frameworks) is not what the tests are about.
pytestmark = pytest.mark.filterwarnings(
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval"
)


class Counting(L.LightningModule):
    """Counts what ran: training batches, validation batches, test batches, epochs."""

    def __init__(self, sleep: float = 0.0) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
        self.sleep = sleep
        self.train_batches: list[tuple[int, int]] = []
        self.val_batches = 0
        self.test_batches = 0
        self.grad_enabled_in_validation: list[bool] = []
        self.inference_in_validation: list[bool] = []

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        if self.sleep:
            time.sleep(self.sleep)
        self.train_batches.append((self.current_epoch, batch_idx))
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        self.val_batches += 1
        self.grad_enabled_in_validation.append(torch.is_grad_enabled())
        self.inference_in_validation.append(torch.is_inference_mode_enabled())
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

    def test_step(self, batch: Any, batch_idx: int) -> None:
        self.test_batches += 1

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=0.01)


def _data(n: int = 64, batch_size: int = 8, shuffle: bool = False) -> DataLoader[Any]:
    x = torch.randn(n, 2, generator=torch.Generator().manual_seed(0))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=batch_size, shuffle=shuffle)


def _trainer(tmp_path: Path, **options: Any) -> L.Trainer:
    return L.Trainer(accelerator="cpu", enable_progress_bar=False, default_root_dir=tmp_path, **options)


def test_fast_dev_run_runs_one_batch_of_each_stage_and_writes_nothing(tmp_path: Path) -> None:
    model = Counting()
    trainer = _trainer(tmp_path, fast_dev_run=True, max_epochs=50)
    trainer.fit(model, _data(), _data())
    trainer.test(model, _data(), verbose=False)
    assert (model.train_batches, model.val_batches, model.test_batches) == ([(0, 0)], 1, 1)
    assert not (tmp_path / "lightning_logs").exists(), "no logs or checkpoints in a fast dev run"


def test_fast_dev_run_with_a_number_runs_that_many_batches(tmp_path: Path) -> None:
    model = Counting()
    _trainer(tmp_path, fast_dev_run=3).fit(model, _data(), _data())
    assert len(model.train_batches) == 3 and model.val_batches == 3


def test_overfit_batches_trains_and_validates_on_the_same_first_batches_unshuffled(tmp_path: Path) -> None:
    model = Counting()
    trainer = _trainer(tmp_path, overfit_batches=2, max_epochs=3, num_sanity_val_steps=0)
    with pytest.warns(UserWarning, match="You requested to overfit but enabled train dataloader shuffling"):
        trainer.fit(model, _data(shuffle=True), _data())
    assert model.train_batches == [(e, i) for e in range(3) for i in range(2)]
    assert model.val_batches == 3 * 2


def test_num_sanity_val_steps_runs_that_many_batches_before_training(tmp_path: Path) -> None:
    model = Counting()
    _trainer(tmp_path, num_sanity_val_steps=3, max_epochs=1, limit_train_batches=1).fit(model, _data(), _data())
    assert model.val_batches == 3 + 8


def test_min_epochs_holds_back_an_early_stop(tmp_path: Path) -> None:
    class StopAtOnce(L.Callback):
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            trainer.should_stop = True

    model = Counting()
    _trainer(tmp_path, min_epochs=2, max_epochs=10, callbacks=[StopAtOnce()]).fit(model, _data())
    assert {epoch for epoch, _ in model.train_batches} == {0, 1}


def test_min_steps_holds_back_an_early_stop(tmp_path: Path) -> None:
    class StopAtOnce(L.Callback):
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            trainer.should_stop = True

    trainer = _trainer(tmp_path, min_steps=5, max_epochs=10, callbacks=[StopAtOnce()])
    trainer.fit(Counting(), _data())
    assert trainer.global_step == 5


@pytest.mark.parametrize("max_time", ["00:00:00:01", datetime.timedelta(seconds=1), {"seconds": 1}])
def test_max_time_ends_the_fit_at_a_batch_boundary(tmp_path: Path, max_time: Any) -> None:
    started = time.monotonic()
    trainer = _trainer(tmp_path, max_time=max_time, max_epochs=1000, enable_checkpointing=False)
    trainer.fit(Counting(sleep=0.05), _data())
    assert 1.0 <= time.monotonic() - started < 3.0
    assert trainer.stop_reason is not None and trainer.stop_reason.name == "MAX_TIME"


def test_max_epochs_minus_one_means_no_epoch_limit(tmp_path: Path) -> None:
    trainer = _trainer(tmp_path, max_epochs=-1, max_steps=20)
    trainer.fit(Counting(), _data())
    assert trainer.global_step == 20 and trainer.current_epoch == 3  # epoch 2, left, counts as done


def test_deterministic_switches_torch_to_deterministic_algorithms(tmp_path: Path) -> None:
    try:
        _trainer(tmp_path, deterministic=True, max_steps=1).fit(Counting(), _data())
        assert torch.are_deterministic_algorithms_enabled()
    finally:
        torch.use_deterministic_algorithms(False)


def test_benchmark_sets_cudnn_benchmark(tmp_path: Path) -> None:
    previous = torch.backends.cudnn.benchmark
    try:
        _trainer(tmp_path, benchmark=True, max_steps=1).fit(Counting(), _data())
        assert torch.backends.cudnn.benchmark is True
    finally:
        torch.backends.cudnn.benchmark = previous


def test_enable_model_summary_false_prints_no_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    L.Trainer(accelerator="cpu", max_steps=1, default_root_dir=tmp_path, enable_model_summary=False).fit(
        Counting(), _data()
    )
    err = capsys.readouterr().err
    assert "accelplug: cpu" in err and "Trainable params" not in err


def test_inference_mode_decides_how_evaluation_runs(tmp_path: Path) -> None:
    for inference_mode in (True, False):
        model = Counting()
        _trainer(tmp_path, inference_mode=inference_mode).validate(model, _data(), verbose=False)
        assert set(model.inference_in_validation) == {inference_mode}
        assert set(model.grad_enabled_in_validation) == {False}


def test_detect_anomaly_names_the_operation_that_produced_nan(tmp_path: Path) -> None:
    class ProducesNaN(Counting):
        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return (self.layer(batch[0]) * torch.tensor(float("nan"))).sqrt().sum()

    # torch announces anomaly mode when it is switched on, then names the operation
    with (
        pytest.raises(RuntimeError, match="returned nan values"),
        pytest.warns(UserWarning, match="Anomaly Detection has been enabled"),
        pytest.warns(UserWarning, match="Error detected"),
    ):
        _trainer(tmp_path, detect_anomaly=True, max_steps=1).fit(ProducesNaN(), _data())


def test_reload_dataloaders_every_n_epochs_asks_the_module_again(tmp_path: Path) -> None:
    class Reloading(Counting):
        calls = 0

        def train_dataloader(self) -> Any:
            type(self).calls += 1
            return _data()

    model = Reloading()
    _trainer(tmp_path, reload_dataloaders_every_n_epochs=1, max_epochs=3).fit(model)
    assert Reloading.calls == 3


def test_a_logger_object_receives_metrics_hyperparameters_and_finalize(tmp_path: Path) -> None:
    class Recording:
        def __init__(self) -> None:
            self.metrics: list[dict[str, float]] = []
            self.hparams: list[dict[str, Any]] = []
            self.status: list[str] = []

        def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
            self.metrics.append(dict(metrics))

        def log_hyperparams(self, params: dict[str, Any]) -> None:
            self.hparams.append(dict(params))

        def finalize(self, status: str) -> None:
            self.status.append(status)

    class WithHparams(Counting):
        def __init__(self, width: int = 3) -> None:
            super().__init__()
            self.save_hyperparameters()

    logger = Recording()
    trainer = _trainer(tmp_path, logger=logger, max_epochs=2, log_every_n_steps=4)
    trainer.fit(WithHparams(), _data(), _data())
    assert trainer.logger is logger
    assert logger.hparams == [{"width": 3}]
    assert sum("val_loss" in m for m in logger.metrics) == 2
    assert logger.status == ["success"]


def test_lightnings_own_csv_logger_object_works_too(tmp_path: Path) -> None:
    pytest.importorskip("lightning")
    from lightning.pytorch.loggers import CSVLogger

    logger = CSVLogger(str(tmp_path), name="lit")
    _trainer(tmp_path, logger=logger, max_epochs=1, log_every_n_steps=1).fit(Counting(), _data(), _data())
    logger.save()
    assert "val_loss" in Path(logger.log_dir, "metrics.csv").read_text()


def test_use_distributed_sampler_false_keeps_the_loader_as_given(tmp_path: Path) -> None:
    trainer = _trainer(tmp_path, use_distributed_sampler=False, max_steps=1)
    trainer.fit(Counting(), _data())
    assert trainer.options.use_distributed_sampler is False


def test_barebones_writes_nothing_and_shows_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    L.Trainer(accelerator="cpu", barebones=True, max_epochs=1, default_root_dir=tmp_path).fit(Counting(), _data())
    assert capsys.readouterr().err == ""
    assert not (tmp_path / "lightning_logs").exists()


@pytest.mark.parametrize(
    ("option", "value", "alternative"),
    [
        ("profiler", "simpel", "'simple'"),
        ("plugins", ["something"], "precision="),
        ("model_registry", "hub/name", "no model registry"),
    ],
)
def test_unsupported_lightning_arguments_are_refused_with_the_alternative(
    option: str, value: Any, alternative: str
) -> None:
    with pytest.raises(MisconfigurationException) as caught:
        L.Trainer(accelerator="cpu", **{option: value})
    assert f"{option}=" in str(caught.value) and alternative in str(caught.value)


@pytest.mark.parametrize(("typo", "meant"), [("max_epoch", "max_epochs"), ("gpus", "devices"), ("auto_lr_find", None)])
def test_an_unknown_argument_is_named_with_the_closest_option(typo: str, meant: str | None) -> None:
    with pytest.raises(MisconfigurationException, match=f"unexpected keyword argument '{typo}'") as caught:
        L.Trainer(accelerator="cpu", **{typo: 1})
    if meant is not None and typo != "gpus":
        assert f"Did you mean '{meant}'" in str(caught.value)


def test_lightning_1x_epoch_end_hooks_are_refused_at_class_definition() -> None:
    with pytest.raises(
        MisconfigurationException, match=r"validation_epoch_end\(\) is a Lightning 1.x hook.*on_validation_epoch_end"
    ):

        class Old(L.LightningModule):
            def validation_epoch_end(self, outputs: Any) -> None: ...


def test_a_refused_1x_hook_is_the_not_implemented_error_lightning_raises() -> None:
    with pytest.raises(NotImplementedError, match=r"support for `training_epoch_end` has been removed in v2\.0\.0"):

        class Old(L.LightningModule):
            def training_epoch_end(self, outputs: Any) -> None: ...


def test_a_1x_hook_lightning_never_calls_is_accepted_with_a_warning_and_never_called(tmp_path: Path) -> None:
    """A library built on Lightning may keep ``on_epoch_end`` as a no-op for its subclasses (pytorch-forecasting's
    ``BaseModel`` does): Lightning 2 accepts the class and never calls it."""
    with pytest.warns(
        PossibleUserWarning, match=r"OldStyle.on_epoch_end\(\) is a Lightning 1.x hook .* never calls it"
    ):

        class OldStyle(Counting):
            def on_epoch_end(self) -> None:
                raise AssertionError("Lightning 2 never calls on_epoch_end")

    _trainer(tmp_path, max_epochs=1, limit_train_batches=2).fit(OldStyle(), _data())


def test_logging_where_lightning_forbids_it_is_refused(tmp_path: Path) -> None:
    class LogsInFitStart(Counting):
        def on_fit_start(self) -> None:
            self.log("x", 1.0)

    with pytest.raises(MisconfigurationException, match="inside `on_fit_start`"):
        _trainer(tmp_path, max_steps=1).fit(LogsInFitStart(), _data())


def test_on_step_logging_in_an_epoch_hook_is_refused(tmp_path: Path) -> None:
    class StepInEpochEnd(Counting):
        def on_train_epoch_end(self) -> None:
            self.log("x", 1.0, on_step=True)

    with pytest.raises(MisconfigurationException, match="on_step=True"):
        _trainer(tmp_path, max_epochs=1).fit(StepInEpochEnd(), _data())


def test_lr_and_device_stats_monitors_write_to_the_logger(tmp_path: Path) -> None:
    import csv

    class Scheduled(Counting):
        def configure_optimizers(self) -> Any:
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            return {"optimizer": optimizer, "lr_scheduler": torch.optim.lr_scheduler.StepLR(optimizer, 1, 0.5)}

    callbacks = [L.LearningRateMonitor(logging_interval="epoch"), L.DeviceStatsMonitor()]
    trainer = _trainer(tmp_path, max_epochs=3, log_every_n_steps=4, callbacks=callbacks, logger=L.CSVLogger(tmp_path))
    trainer.fit(Scheduled(), _data())
    assert trainer.metrics_path is not None
    with trainer.metrics_path.open() as file:
        rows = list(csv.DictReader(file))
    assert [float(r["lr-SGD"]) for r in rows if r.get("lr-SGD")] == [0.1, 0.05, 0.025]
    peak = "DeviceStatsMonitor.on_train_batch_end/max_rss_bytes"  # Lightning's key scheme, accelplug's CPU figure
    assert any(float(r[peak]) > 1e6 for r in rows if r.get(peak))
