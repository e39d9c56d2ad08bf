"""Why a fit stopped, as ``trainer.stop_reason`` tells (``accelplug.trainer.state.StopReason``), and where it stopped.

Where the stop is Lightning's (a limit, ``should_stop`` set by a callback, early stopping) the batches run are
compared with Lightning 2.6.6's; the reason itself is accelplug's record, which Lightning does not keep.
"""

from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.pytorch.callbacks import Callback
from accelplug.trainer.state import StopReason
from tests.trainer.loops.both import Record, fit_both, fit_one, loader, recording_module


@pytest.mark.parametrize(
    ("options", "reason"),
    [
        pytest.param({"max_steps": 5}, StopReason.MAX_STEPS, id="max_steps"),
        pytest.param({"max_epochs": 2}, StopReason.MAX_EPOCHS, id="max_epochs"),
        pytest.param({"max_steps": 100, "max_epochs": 2}, StopReason.MAX_EPOCHS, id="max_epochs before max_steps"),
        pytest.param({"fast_dev_run": 2}, StopReason.FAST_DEV_RUN, id="fast_dev_run"),
    ],
)
def test_a_limit_reached_is_the_stop_reason(tmp_path: Path, options: dict[str, Any], reason: StopReason) -> None:
    _, trainer = fit_one(accelplug, tmp_path, **options)
    assert trainer.stop_reason is reason


def test_max_time_stops_at_a_batch_boundary_with_its_reason(tmp_path: Path) -> None:
    class Slow(accelplug.Callback):
        def on_train_batch_end(self, *args: Any) -> None:
            time.sleep(0.1)

    record, trainer = fit_one(
        accelplug, tmp_path, max_epochs=2, max_time={"seconds": 0.5}, callbacks=lambda _: [Slow()]
    )
    assert trainer.stop_reason is StopReason.MAX_TIME
    assert 1 <= trainer.global_step < 16
    assert trainer.global_step == len(record.batches)  # no batch was left half done


def _stopping_callback(framework: Any) -> list[Any]:
    class StopAtStep3(framework.Callback):  # type: ignore[misc, name-defined]
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            if trainer.global_step == 3:
                trainer.should_stop = True

    return [StopAtStep3()]


def test_should_stop_set_by_a_callback_stops_where_lightning_stops_and_is_a_request(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=3, callbacks=_stopping_callback)
    assert records["accelplug"].story == records["lightning"].story
    _, trainer = fit_one(accelplug, tmp_path / "again", max_epochs=3, callbacks=_stopping_callback)
    assert trainer.stop_reason is StopReason.REQUESTED


def _early_stopping(framework: Any) -> list[Any]:
    # min_delta no step can reach: the first validation sets the best, the next one ends the fit
    return [framework.pytorch.callbacks.EarlyStopping(monitor="val_loss", patience=1, min_delta=100.0)]


def test_early_stopping_stops_where_lightning_stops_and_is_a_request(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=5, callbacks=_early_stopping)
    assert records["accelplug"].current_epoch == 2
    assert records["accelplug"].story == records["lightning"].story
    _, trainer = fit_one(accelplug, tmp_path / "again", max_epochs=5, callbacks=_early_stopping)
    assert trainer.stop_reason is StopReason.REQUESTED


def test_a_non_finite_loss_stops_the_fit_when_asked_and_says_so(tmp_path: Path) -> None:
    with pytest.warns(RuntimeWarning, match=r"the training loss is nan at step 3.*Stopping \(nonfinite_loss='stop'\)"):
        _, trainer = fit_one(
            accelplug, tmp_path, max_epochs=2, nonfinite_loss="stop", log_every_n_steps=1, module={"nan_from_step": 2}
        )
    assert trainer.stop_reason is StopReason.NON_FINITE_LOSS
    assert trainer.global_step == 3


def test_sigterm_finishes_the_step_writes_a_checkpoint_and_exits_143(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real SIGTERM sent to this process from inside ``training_step``; fit's handler is this process's only
    while it trains (the one before comes back)."""
    before = signal.getsignal(signal.SIGTERM)
    trainer = accelplug.Trainer(
        accelerator="cpu",
        max_epochs=2,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )

    with pytest.raises(SystemExit) as exit_:
        trainer.fit(recording_module(accelplug, Record(), validation=False, signal_at_step=2), loader())
    assert exit_.value.code == 143
    assert trainer.stop_reason is StopReason.SIGNAL
    assert trainer.global_step == 3  # the step under way when the signal came was finished
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("accelplug: SIGTERM: stopped after step 3; checkpoint saved to ")
    checkpoint = next(tmp_path.rglob("last.ckpt"))
    assert str(checkpoint) in line
    assert torch.load(checkpoint, weights_only=True)["loop"]["global_step"] == 3
    assert signal.getsignal(signal.SIGTERM) is before


def test_state_status_says_running_during_a_call_and_finished_after_it_as_lightnings(tmp_path: Path) -> None:
    lightning = pytest.importorskip("lightning")

    seen: dict[str, list[Any]] = {}
    for name, framework in (("lightning", lightning), ("accelplug", accelplug)):
        _, trainer = fit_one(framework, tmp_path / name, max_steps=1, module={})
        seen[name] = [trainer.state.status.value, trainer.state.finished, trainer.state.stopped, trainer.interrupted]
    assert seen["lightning"] == ["finished", True, True, False]
    assert seen["accelplug"] == seen["lightning"]


def test_a_call_that_raised_leaves_the_trainer_interrupted_not_finished(tmp_path: Path) -> None:
    model = recording_module(accelplug, Record())
    model.training_step = lambda *args: (_ for _ in ()).throw(ValueError("boom"))  # type: ignore[method-assign]
    trainer = accelplug.Trainer(logger=False, enable_checkpointing=False, max_steps=1, default_root_dir=tmp_path)
    with pytest.raises(ValueError, match="boom"):
        trainer.fit(model, loader())
    assert (trainer.state.status.value, trainer.state.finished, trainer.interrupted) == ("interrupted", False, True)


def test_a_stop_requested_before_min_epochs_says_once_that_training_continues(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    class StopAtOnce(Callback):
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            trainer.should_stop = True  # every batch asks: Lightning's line is still given once

    with caplog.at_level("INFO", logger="accelplug.trainer"):
        _, trainer = fit_one(
            accelplug, tmp_path, val=None, callbacks=lambda _: [StopAtOnce()], min_epochs=3, max_epochs=10
        )
    line = "Trainer was signaled to stop but the required `min_epochs=3` or `min_steps=None` has not been met."
    assert [record.message for record in caplog.records].count(line + " Training will continue...") == 1
    assert trainer.current_epoch == 3
