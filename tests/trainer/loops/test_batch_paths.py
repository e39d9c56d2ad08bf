"""The three ways a training batch goes (``FitLoop.fast_batch``, ``general_batch``, ``manual_batch``), each chosen
once per fit, and the compiled fit's first batch that is timed and then hands over to the chosen path.

Which path ran is observed by spying on the loop's methods (``mocker.spy`` calls through); what the path did is
compared with Lightning 2.6.6 on the same module: the weights after the fit and the loop's record (``both.py``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from pytest_mock import MockerFixture

import accelplug
from accelplug.trainer.loops import _compile_time
from accelplug.trainer.loops.fit import FitLoop
from tests.trainer.loops.both import assert_same_weights, fit_both, fit_one

PATHS = ("fast_batch", "general_batch", "manual_batch")


def _spy_paths(mocker: MockerFixture) -> dict[str, Any]:
    return {name: mocker.spy(FitLoop, name) for name in PATHS}


def _calls(spies: dict[str, Any]) -> dict[str, int]:
    return {name: spy.call_count for name, spy in spies.items()}


def test_a_plain_module_takes_the_lean_path_for_every_batch(tmp_path: Path, mocker: MockerFixture) -> None:
    spies = _spy_paths(mocker)
    fit_one(accelplug, tmp_path, max_epochs=1)
    assert _calls(spies) == {"fast_batch": 8, "general_batch": 0, "manual_batch": 0}


def test_the_lean_path_trains_as_lightning(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=2)
    assert records["accelplug"].story == records["lightning"].story
    assert_same_weights(records)


def test_the_lean_path_accumulates_with_a_short_last_window_as_lightning(tmp_path: Path, mocker: MockerFixture) -> None:
    spies = _spy_paths(mocker)
    records = fit_both(tmp_path, max_epochs=2, accumulate_grad_batches=3)  # 8 batches: windows of 3, 3 and 2
    assert _calls(spies)["fast_batch"] == 16
    assert records["accelplug"].global_step == records["lightning"].global_step == 6
    assert_same_weights(records)


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"module": {"hooks": True}}, id="a per-batch hook"),
        pytest.param({"gradient_clip_val": 0.05}, id="gradient clipping"),
    ],
)
def test_a_hook_or_clipping_takes_the_general_path(
    tmp_path: Path, mocker: MockerFixture, options: dict[str, Any]
) -> None:
    spies = _spy_paths(mocker)
    fit_one(accelplug, tmp_path, max_epochs=1, **options)
    assert _calls(spies) == {"fast_batch": 0, "general_batch": 8, "manual_batch": 0}


def test_the_general_path_accumulates_as_lightning(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=2, accumulate_grad_batches=3, module={"hooks": True})
    assert records["accelplug"].story == records["lightning"].story
    assert_same_weights(records)


def test_the_lean_and_the_general_path_reach_the_same_weights(tmp_path: Path) -> None:
    lean, _ = fit_one(accelplug, tmp_path / "lean", max_epochs=2, accumulate_grad_batches=3)
    general, _ = fit_one(
        accelplug, tmp_path / "general", max_epochs=2, accumulate_grad_batches=3, module={"hooks": True}
    )
    for a, b in zip(lean.weights, general.weights, strict=True):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("algorithm", ["norm", "value"])
def test_gradient_clipping_clips_as_lightning(tmp_path: Path, algorithm: str) -> None:
    # lr=1.0: unclipped, these gradients would move the weights far more than the clipped ones do
    records = fit_both(
        tmp_path, max_epochs=1, gradient_clip_val=0.05, gradient_clip_algorithm=algorithm, module={"lr": 1.0}
    )
    unclipped, _ = fit_one(accelplug, tmp_path / "unclipped", max_epochs=1, module={"lr": 1.0})
    assert_same_weights(records)
    assert not torch.allclose(records["accelplug"].weights[0], unclipped.weights[0])


def test_on_train_batch_start_returning_minus_one_skips_the_rest_of_the_epoch_as_lightning(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=2, module={"skip_from_batch": 3})
    assert [b[2] for b in records["accelplug"].batches] == [0, 1, 2, 0, 1, 2]
    assert records["accelplug"].story == records["lightning"].story
    assert_same_weights(records)


def test_on_train_batch_start_returning_minus_one_at_the_first_batch_ends_each_epoch_untrained_as_lightning(
    tmp_path: Path,
) -> None:
    records = fit_both(tmp_path, max_epochs=2, module={"skip_from_batch": 0})
    assert records["accelplug"].batches == [] and records["accelplug"].epoch_ends == [
        ("epoch_end", 0, 0),
        ("epoch_end", 1, 0),
    ]
    assert records["accelplug"].story == records["lightning"].story


def test_manual_optimization_takes_the_manual_path_and_counts_every_optimizer_step_as_lightning(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    spies = _spy_paths(mocker)
    records = fit_both(tmp_path, max_epochs=2, module={"manual": True})
    assert _calls(spies) == {"fast_batch": 0, "general_batch": 0, "manual_batch": 16}
    assert records["accelplug"].global_step == 32  # two optimizers stepped per batch: two steps each
    assert records["accelplug"].story == records["lightning"].story
    assert_same_weights(records)


def test_manual_optimization_stops_at_max_steps_counted_per_optimizer_step_as_lightning(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_steps=5, module={"manual": True})
    assert records["accelplug"].story == records["lightning"].story


def test_a_compiled_fit_times_its_first_batch_once_and_then_calls_the_path_itself(
    tmp_path: Path, mocker: MockerFixture
) -> None:
    synchronized = mocker.spy(_compile_time, "_synchronize")  # the timing's one device synchronisation
    spies = _spy_paths(mocker)
    record, trainer = fit_one(accelplug, tmp_path, max_epochs=1, compile={"backend": "eager"})
    assert synchronized.call_count == 1
    assert trainer.state.compile_seconds is not None and trainer.state.compile_seconds > 0
    assert _calls(spies)["fast_batch"] == 8  # the first batch through the timing wrapper, the other 7 directly
    assert record.global_step == 8
