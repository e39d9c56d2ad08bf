"""``EarlyStopping`` and ``LearningRateMonitor`` under Lightning 2.6 and accelplug: the same stops, the same logs."""

from __future__ import annotations

import collections
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
import torch

from accelplug.errors import MisconfigurationException

from .parity import fit_both, lightning


def _callbacks(framework: Any) -> Any:
    import importlib

    return importlib.import_module(
        "lightning.pytorch.callbacks" if framework.__name__ == "lightning" else "accelplug.callbacks"
    )


# ---- EarlyStopping ---------------------------------------------------------------------------------------------
EARLY: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "patience-on-val": ({"monitor": "val_loss", "patience": 1}, {"max_epochs": 12}, {"lr": 0.2}),
    "min-delta": ({"monitor": "val_loss", "min_delta": 0.5, "patience": 2}, {"max_epochs": 12}, {}),
    "stopping-threshold": ({"monitor": "val_loss", "stopping_threshold": 3.0}, {"max_epochs": 12}, {}),
    "divergence-threshold": (
        {"monitor": "train_loss_epoch", "mode": "max", "divergence_threshold": 4.0},
        {"max_epochs": 12},
        {},
    ),
    "not-finite": ({"monitor": "train_loss_epoch", "check_finite": True}, {"max_epochs": 6}, {"lr": 10.0}),
    "max-mode": ({"monitor": "val_loss", "mode": "max", "patience": 2}, {"max_epochs": 12}, {}),
    "on-validation-every-2-epochs": (
        {"monitor": "val_loss", "patience": 1},
        {"max_epochs": 12, "check_val_every_n_epoch": 2},
        {"lr": 0.2},
    ),
    "train-metric-at-epoch-end": (
        {"monitor": "train_loss_epoch", "patience": 1, "check_on_train_epoch_end": True},
        {"max_epochs": 12, "limit_val_batches": 0},
        {"lr": 0.2},
    ),
    "min-epochs-wins": ({"monitor": "val_loss", "patience": 1}, {"max_epochs": 12, "min_epochs": 5}, {"lr": 0.2}),
}


@pytest.mark.parametrize("case", list(EARLY))
def test_early_stopping_stops_where_lightning_stops(case: str, tmp_path: Path) -> None:
    arguments, options, module = EARLY[case]
    sides = fit_both(tmp_path, lambda f: [_callbacks(f).EarlyStopping(**arguments)], module=module, **options)
    theirs, ours = sides["lightning"], sides["accelplug"]
    a, b = theirs.callbacks[0], ours.callbacks[0]
    # (trainer.current_epoch after fit is one lower than Lightning's: issue 19's silent difference, the Trainer's)
    assert ours.trainer.global_step == theirs.trainer.global_step
    assert (b.stopped_epoch, b.wait_count) == (a.stopped_epoch, a.wait_count)
    assert (b.stopping_reason.name, b.stopping_reason.value) == (a.stopping_reason.name, a.stopping_reason.value)
    assert b.stopping_reason_message == a.stopping_reason_message
    assert float(b.best_score) == pytest.approx(float(a.best_score), nan_ok=True)
    assert b.state_key == a.state_key
    assert b.state_dict().keys() == a.state_dict().keys()


def test_a_missing_metric_raises_what_lightning_raises(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, lambda f: [_callbacks(f).EarlyStopping(monitor="val_acc")], expect_error=RuntimeError)
    assert "val_acc" in str(sides["accelplug"].error)
    assert isinstance(sides["accelplug"].error, MisconfigurationException)  # and a ValueError, accelplug's kind


def test_strict_false_ignores_a_missing_metric_as_lightning(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, lambda f: [_callbacks(f).EarlyStopping(monitor="val_acc", strict=False)], max_epochs=3)
    assert sides["accelplug"].trainer.global_step == sides["lightning"].trainer.global_step == 18


def test_early_stopping_bad_mode_names_the_close_match() -> None:
    from accelplug.callbacks import EarlyStopping

    with pytest.raises(MisconfigurationException, match="Did you mean 'min'"):
        EarlyStopping(monitor="val_loss", mode="minn")


def test_early_stopping_bad_mode_keeps_lightnings_phrase() -> None:
    from accelplug.callbacks import EarlyStopping

    phrase = "`mode` can be min, max, got minn"
    with pytest.raises(MisconfigurationException, match=phrase):
        EarlyStopping(monitor="val_loss", mode="minn")
    with pytest.raises(lightning.pytorch.utilities.exceptions.MisconfigurationException, match=phrase):
        lightning.pytorch.callbacks.EarlyStopping(monitor="val_loss", mode="minn")


# ---- LearningRateMonitor ---------------------------------------------------------------------------------------
def _recording_logger(framework: Any, root: Path) -> Any:
    if framework.__name__ == "lightning":
        base = framework.pytorch.loggers.Logger
    else:
        from accelplug.loggers import Logger as base

    class Recorder(base):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.rows: list[tuple[int | None, dict[str, float]]] = []

        @property
        def name(self) -> str:
            return "recorder"

        @property
        def version(self) -> int:
            return 0

        def log_metrics(self, metrics: dict[str, Any], step: int | None = None) -> None:
            self.rows.append((step, {k: round(float(v), 8) for k, v in metrics.items() if k.startswith("lr")}))

        def log_hyperparams(self, params: Any, *args: Any, **kwargs: Any) -> None:
            pass

    return Recorder()


LR: dict[str, tuple[dict[str, Any], dict[str, Any], dict[str, Any]]] = {
    "default-no-scheduler": ({}, {"log_every_n_steps": 2}, {}),
    "default-step-scheduler": ({}, {"log_every_n_steps": 3}, {"scheduler": True}),
    "epoch-interval": ({"logging_interval": "epoch"}, {"log_every_n_steps": 2, "max_epochs": 3}, {"scheduler": True}),
    "step-interval-momentum-decay": (
        {"logging_interval": "step", "log_momentum": True, "log_weight_decay": True},
        {"log_every_n_steps": 4},
        {"scheduler": True},
    ),
}


@pytest.mark.parametrize("case", list(LR))
def test_learning_rate_monitor_logs_what_lightning_logs(case: str, tmp_path: Path) -> None:
    arguments, options, module = LR[case]
    sides = fit_both(
        tmp_path,
        lambda f: [_callbacks(f).LearningRateMonitor(**arguments)],
        module=module,
        logger=_recording_logger,
        enable_checkpointing=False,
        **options,
    )
    theirs, ours = sides["lightning"], sides["accelplug"]
    wanted = [row for row in theirs.trainer.logger.rows if row[1]]
    assert [row for row in ours.trainer.loggers[0].rows if row[1]] == wanted
    assert len(wanted) >= 3
    a, b = theirs.callbacks[0], ours.callbacks[0]
    assert b.lrs.keys() == a.lrs.keys()
    for name, values in a.lrs.items():
        assert b.lrs[name] == pytest.approx(values), name
    assert b.last_momentum_values == a.last_momentum_values
    assert b.last_weight_decay_values == a.last_weight_decay_values
    lr_metrics = {k: float(v) for k, v in theirs.trainer.callback_metrics.items() if k.startswith("lr")}
    assert {k: float(v) for k, v in ours.trainer.callback_metrics.items() if k.startswith("lr")} == lr_metrics


def test_learning_rate_monitor_without_a_logger_is_refused_as_in_lightning(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, lambda f: [_callbacks(f).LearningRateMonitor()], expect_error=Exception)
    assert type(sides["lightning"].error).__name__ == "MisconfigurationException"
    assert isinstance(sides["accelplug"].error, MisconfigurationException)
    assert "logger" in str(sides["accelplug"].error)


def test_named_parameter_groups_get_lightnings_names() -> None:
    from lightning.pytorch.callbacks import LearningRateMonitor as Theirs

    from accelplug.callbacks import LearningRateMonitor

    layer = torch.nn.Linear(2, 2)
    optimizer = torch.optim.Adam(
        [{"params": [layer.weight], "name": "weights"}, {"params": [layer.bias], "lr": 0.5}], lr=0.1
    )
    second = torch.optim.Adam(torch.nn.Linear(2, 2).parameters())

    class Holder:
        def __init__(self) -> None:
            self.optimizers = [optimizer, second]
            self.lr_scheduler_configs: list[Any] = []

    ours = [names for _, names in LearningRateMonitor()._named(Holder())]
    theirs, _ = Theirs()._find_names_from_optimizers(Holder().optimizers, [], collections.defaultdict(int))
    assert ours == theirs == [["lr-Adam/weights", "lr-Adam/pg2"], ["lr-Adam-1"]]


# ---- DeviceStatsMonitor ----------------------------------------------------------------------------------------
def _stats_logger(framework: Any, root: Path) -> Any:
    logger = _recording_logger(framework, root)

    def log_metrics(metrics: dict[str, Any], step: int | None = None) -> None:
        names = sorted(k for k in metrics if k.startswith("DeviceStatsMonitor."))
        if names:
            logger.rows.append((step, names))

    logger.log_metrics = log_metrics
    return logger


@pytest.mark.parametrize("cpu_stats", [None, True, False])
def test_device_stats_monitor_logs_lightnings_keys_at_lightnings_steps(cpu_stats: bool | None, tmp_path: Path) -> None:
    sides = fit_both(
        tmp_path,
        lambda f: [_callbacks(f).DeviceStatsMonitor(cpu_stats=cpu_stats)],
        logger=_stats_logger,
        enable_checkpointing=False,
        log_every_n_steps=2,
    )
    theirs, ours = sides["lightning"].trainer.logger.rows, sides["accelplug"].trainer.loggers[0].rows
    assert [step for step, _ in ours] == [step for step, _ in theirs]
    if cpu_stats is False:  # on the CPU: nothing at all
        assert ours == theirs == []
        return
    for (_, our_keys), (_, their_keys) in zip(ours, theirs, strict=True):
        # Lightning's three psutil figures under each hook; accelplug's CPU adds its peak resident memory
        assert set(our_keys) - set(their_keys) == {their_keys[0].rsplit("/", 1)[0] + "/max_rss_bytes"}
        assert set(their_keys) < set(our_keys)
    hooks = {key.split("/")[0] for _, keys in ours for key in keys}
    assert hooks == {f"DeviceStatsMonitor.on_{h}" for h in ("train_batch_start", "train_batch_end")} | {
        f"DeviceStatsMonitor.on_validation_batch_{e}" for e in ("start", "end")
    }


def test_device_stats_monitor_without_a_logger_is_refused_as_in_lightning(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, lambda f: [_callbacks(f).DeviceStatsMonitor()], expect_error=Exception)
    assert type(sides["lightning"].error).__name__ == "MisconfigurationException"
    assert isinstance(sides["accelplug"].error, MisconfigurationException)
    assert "Cannot use `DeviceStatsMonitor` callback with `Trainer(logger=False)`" in str(sides["accelplug"].error)


def test_device_stats_key_names_and_prefix_helper_at_lightnings_paths() -> None:
    """Lightning's modules hold the CPU stat names as constants and the monitor's key helper; tests and callbacks
    built on DeviceStatsMonitor import them from there."""
    import lightning.pytorch.accelerators.cpu as their_cpu
    import lightning.pytorch.callbacks.device_stats_monitor as their_monitor

    import accelplug.pytorch.accelerators.cpu as our_cpu
    import accelplug.pytorch.callbacks.device_stats_monitor as our_monitor

    for name in ("_CPU_VM_PERCENT", "_CPU_PERCENT", "_CPU_SWAP_PERCENT"):
        assert getattr(our_cpu, name) == getattr(their_cpu, name)
    stats = {"a": 1.0, "b": 2.5}
    for separator in ("/", "."):
        assert our_monitor._prefix_metric_keys(stats, "p.q", separator) == their_monitor._prefix_metric_keys(
            stats, "p.q", separator
        )
    assert set(our_cpu.get_cpu_stats()) == set(their_cpu.get_cpu_stats())


def test_a_subclass_overriding_lightnings_private_steps_is_obeyed(tmp_path: Path) -> None:
    """Projects subclass Lightning's EarlyStopping and override its private steps (a criterion of their own, a skip
    rule, how the reason is logged); the same subclass, on accelplug, stops where it stops on Lightning."""

    def callbacks(framework: Any) -> list[Any]:
        class StopAtThirdCheck(_callbacks(framework).EarlyStopping):  # type: ignore[misc, name-defined]
            checks = 0
            logged: ClassVar[list[str]] = []

            def _should_skip_check(self, trainer: Any) -> bool:
                return bool(trainer.current_epoch == 0)  # never at the first epoch

            def _evaluate_stopping_criteria(self, current: torch.Tensor) -> tuple[bool, str | None]:
                type(self).checks += 1
                return type(self).checks >= 2, f"check {type(self).checks}"

            @staticmethod
            def _log_info(trainer: Any, message: str, log_rank_zero_only: bool) -> None:
                StopAtThirdCheck.logged.append(message)

        return [StopAtThirdCheck(monitor="val_loss", verbose=True)]

    sides = fit_both(tmp_path, callbacks, max_epochs=10)
    theirs, ours = sides["lightning"], sides["accelplug"]
    assert ours.trainer.global_step == theirs.trainer.global_step
    a, b = theirs.callbacks[0], ours.callbacks[0]
    assert (type(b).checks, type(b).logged) == (type(a).checks, type(a).logged) == (2, ["check 1", "check 2"])
    assert b.stopped_epoch == a.stopped_epoch == 2


def test_device_stats_monitor_without_psutil_on_the_cpu_is_refused_in_lightnings_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import accelplug
    from accelplug.callbacks import DeviceStatsMonitor
    from accelplug.loggers import CSVLogger

    monkeypatch.setitem(sys.modules, "psutil", None)  # as if not installed: importing it fails
    trainer = accelplug.Trainer(accelerator="cpu", logger=CSVLogger(tmp_path), enable_progress_bar=False)
    with pytest.raises(ModuleNotFoundError, match="`DeviceStatsMonitor` cannot log CPU stats as `psutil` is not"):
        DeviceStatsMonitor().setup(trainer, None, "fit")
    DeviceStatsMonitor(cpu_stats=False).setup(trainer, None, "fit")  # nothing to read on the CPU: accepted
