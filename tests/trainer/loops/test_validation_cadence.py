"""When a fit validates: ``val_check_interval`` and ``check_val_every_n_epoch``, alone and together, as Lightning 2.6.6.

Lightning's rules (``_TrainingEpochLoop._should_check_val_fx``): validation runs only in the epochs that
``check_val_every_n_epoch`` picks; inside them every ``val_check_interval`` batches of the epoch, or, with
``check_val_every_n_epoch=None``, every ``val_check_interval`` batches counted across epochs; a requested stop
validates first, in those epochs only.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import accelplug
from accelplug.errors import MisconfigurationException
from tests.trainer.loops.both import FRAMEWORKS, fit_both, fit_one


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"max_epochs": 2}, id="once at each epoch end by default"),
        pytest.param({"max_epochs": 2, "val_check_interval": 3}, id="every 3 batches of each epoch"),
        pytest.param({"max_epochs": 1, "val_check_interval": 0.25}, id="every quarter epoch"),
        pytest.param({"max_epochs": 1, "val_check_interval": 0.3}, id="a fraction rounds down to whole batches"),
        pytest.param({"max_epochs": 1, "val_check_interval": 0.0}, id="zero: after every batch, as Lightning reads it"),
        pytest.param({"max_epochs": 2, "val_check_interval": 1.0}, id="1.0 is the epoch end"),
        pytest.param({"max_epochs": 4, "check_val_every_n_epoch": 2}, id="every second epoch"),
        pytest.param({"max_epochs": 2, "check_val_every_n_epoch": 3}, id="never when no epoch is due"),
    ],
)
def test_validation_runs_when_lightnings_does(tmp_path: Path, options: dict[str, Any]) -> None:
    records = fit_both(tmp_path, **options)
    assert records["accelplug"].validations == records["lightning"].validations
    assert records["accelplug"].story == records["lightning"].story


@pytest.mark.parametrize(
    "interval",
    [pytest.param(0.5, id="a fraction of the epoch"), pytest.param(4, id="a number of batches")],
)
def test_check_val_every_n_epoch_also_picks_the_epochs_of_validation_within_an_epoch(
    tmp_path: Path, interval: float
) -> None:
    records = fit_both(tmp_path, max_epochs=2, check_val_every_n_epoch=2, val_check_interval=interval)
    assert records["lightning"].validations == [("val", 1, 12, 4), ("val", 1, 16, 4)]
    assert records["accelplug"].validations == records["lightning"].validations


def test_without_check_val_every_n_epoch_validation_still_runs_once_an_epoch(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=2, check_val_every_n_epoch=None)
    assert records["lightning"].validations == [("val", 0, 8, 4), ("val", 1, 16, 4)]
    assert records["accelplug"].validations == records["lightning"].validations


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"max_epochs": 3, "val_check_interval": 5}, id="5 batches across 8-batch epochs"),
        pytest.param({"max_epochs": 3, "val_check_interval": 10}, id="more batches than an epoch has"),
        pytest.param(
            {"max_epochs": 4, "val_check_interval": 5, "limit_train_batches": 3}, id="counting limited epochs"
        ),
    ],
)
def test_without_check_val_every_n_epoch_the_interval_counts_batches_across_epochs(
    tmp_path: Path, options: dict[str, Any]
) -> None:
    records = fit_both(tmp_path, check_val_every_n_epoch=None, **options)
    assert records["lightning"].validations, "the case must validate at least once"
    assert records["accelplug"].validations == records["lightning"].validations


def test_a_requested_stop_validates_first_in_an_epoch_due_for_validation(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=2, val_check_interval=3, module={"stop_at_step": 4})
    assert (
        records["accelplug"].validations
        == records["lightning"].validations
        == [
            ("val", 0, 3, 4),
            ("val", 0, 5, 4),
        ]
    )


def test_a_requested_stop_in_an_epoch_not_due_for_validation_does_not_validate(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=4, check_val_every_n_epoch=2, module={"stop_at_step": 2})
    assert records["lightning"].validations == []
    assert records["accelplug"].story == records["lightning"].story


def test_a_requested_stop_validates_first_when_counting_across_epochs(tmp_path: Path) -> None:
    records = fit_both(
        tmp_path, max_epochs=3, val_check_interval=3, check_val_every_n_epoch=None, module={"stop_at_step": 9}
    )
    assert records["accelplug"].validations == records["lightning"].validations


def test_an_interval_longer_than_the_epoch_is_refused_when_validating_every_epoch(tmp_path: Path) -> None:
    # Lightning raises a ValueError with this phrase; accelplug's MisconfigurationException is a ValueError too.
    with pytest.raises(ValueError, match="must be less than or equal to the number of the training batches") as info:
        fit_one(accelplug, tmp_path, max_epochs=2, val_check_interval=10)
    assert isinstance(info.value, MisconfigurationException)
    assert "val_check_interval=10" in str(info.value) and "check_val_every_n_epoch=None" in str(info.value)


def test_an_interval_longer_than_the_epoch_is_fine_without_validation(tmp_path: Path) -> None:
    record, trainer = fit_one(accelplug, tmp_path, max_epochs=1, val_check_interval=10, limit_val_batches=0)
    assert (record.validations, trainer.global_step) == ([], 8)


def test_a_fraction_interval_without_check_val_every_n_epoch_is_refused_when_the_trainer_is_built() -> None:
    # the value named, and Lightning's key phrase
    with pytest.raises(MisconfigurationException, match=r"val_check_interval=0.5 is a fraction") as info:
        accelplug.Trainer(val_check_interval=0.5, check_val_every_n_epoch=None)
    assert "`val_check_interval` should be an integer or a time-based duration" in str(info.value)


class _Clock:
    """A ``time.monotonic`` that moves only when a training batch ends: one second per batch, so a time-based
    ``val_check_interval`` picks the same batches in every run and under both frameworks."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def callback(self, framework: Any) -> Any:
        clock = self

        class Tick(framework.Callback):  # type: ignore[misc, name-defined]
            def on_train_batch_end(self, *args: Any) -> None:
                clock.now += 1.0

        return Tick()


@pytest.mark.parametrize(
    "interval",
    [
        pytest.param("00:00:00:03", id="a DD:HH:MM:SS string"),
        pytest.param({"seconds": 3}, id="a dict of timedelta arguments"),
        pytest.param(__import__("datetime").timedelta(seconds=3), id="a timedelta"),
    ],
)
def test_a_duration_as_val_check_interval_validates_every_that_much_training_time(
    tmp_path: Path, interval: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr("time.monotonic", clock)
    records = fit_both(tmp_path, max_epochs=2, val_check_interval=interval, callbacks=lambda fw: [clock.callback(fw)])
    assert records["lightning"].validations, "the case must validate"
    assert records["accelplug"].validations == records["lightning"].validations


def test_a_duration_as_val_check_interval_is_gated_by_check_val_every_n_epoch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = _Clock()
    monkeypatch.setattr("time.monotonic", clock)
    records = fit_both(
        tmp_path,
        max_epochs=4,
        check_val_every_n_epoch=2,
        val_check_interval="00:00:00:05",
        callbacks=lambda fw: [clock.callback(fw)],
    )
    assert {epoch for _, epoch, _, _ in records["lightning"].validations} == {1, 3}
    assert records["accelplug"].validations == records["lightning"].validations


class _CountingClock:
    """A ``time.monotonic`` that moves one second at every read: which validations run then depends on exactly
    where the Trainer reads the clock, so equal records mean the same reads in the same places."""

    def __init__(self) -> None:
        self.reads = 0

    def __call__(self) -> float:
        self.reads += 1
        return float(self.reads)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"check_val_every_n_epoch": None, "val_check_interval": "00:00:00:03"}, id="every epoch"),
        pytest.param({"check_val_every_n_epoch": 2, "val_check_interval": "00:00:00:02"}, id="every second epoch"),
    ],
)
def test_a_time_based_interval_reads_the_clock_where_lightning_reads_it(
    tmp_path: Path, options: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # After the sanity check's end, once as training starts, at each batch end of a validating epoch and after each
    # validation; never in an epoch check_val_every_n_epoch leaves out, nor for the progress bar.
    reads, validations = {}, {}
    for name, framework in FRAMEWORKS.items():
        clock = _CountingClock()
        monkeypatch.setattr("time.monotonic", clock)
        record, _ = fit_one(
            framework, tmp_path / name, max_epochs=4, limit_train_batches=4, num_sanity_val_steps=1, **options
        )
        monkeypatch.undo()
        reads[name], validations[name] = clock.reads, record.validations
    assert validations["lightning"], "the case must validate"
    assert validations["accelplug"] == validations["lightning"]
    assert reads["accelplug"] == reads["lightning"]


def test_a_duration_as_val_check_interval_leaves_no_batch_schedule() -> None:
    trainer = accelplug.Trainer(val_check_interval={"minutes": 5}, logger=False)
    assert trainer.val_check_interval.total_seconds() == 300  # type: ignore[union-attr]


def test_a_malformed_duration_is_refused_naming_the_forms_accepted() -> None:
    with pytest.raises(MisconfigurationException, match="DD:HH:MM:SS"):
        accelplug.Trainer(val_check_interval="5 minutes")
