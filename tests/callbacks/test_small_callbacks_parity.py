"""``LambdaCallback`` and ``OnExceptionCheckpoint`` under Lightning 2.6 and accelplug: same calls, same files."""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.errors import MisconfigurationException

from .parity import fit_both, lightning


def _callbacks(framework: Any) -> Any:
    return importlib.import_module(
        "lightning.pytorch.callbacks" if framework.__name__ == "lightning" else "accelplug.callbacks"
    )


def test_lambda_callback_calls_its_functions_as_lightning(tmp_path: Path) -> None:
    calls: dict[str, list[tuple[str, int]]] = {"lightning": [], "accelplug": []}

    def make(framework: Any) -> list[Any]:
        seen = calls[framework.__name__]
        return [
            _callbacks(framework).LambdaCallback(
                on_fit_start=lambda trainer, module: seen.append(("fit_start", trainer.global_step)),
                on_train_epoch_end=lambda trainer, module: seen.append(("epoch_end", trainer.global_step)),
                on_train_batch_end=lambda trainer, module, out, batch, i: seen.append(("batch_end", i)),
                on_validation_end=lambda trainer, module: seen.append(("val_end", trainer.global_step)),
            )
        ]

    fit_both(tmp_path, make, max_epochs=2)
    assert calls["accelplug"] == calls["lightning"]
    assert len(calls["accelplug"]) == 1 + 2 * (6 + 2)


def test_lambda_callback_refuses_what_is_not_a_function() -> None:
    with pytest.raises(MisconfigurationException, match="on_fit_start=3"):
        accelplug.callbacks.LambdaCallback(on_fit_start=3)  # type: ignore[arg-type, attr-defined]


@contextlib.contextmanager
def _first_fit_with_on_exception_checkpoint() -> Iterator[None]:
    """With an OnExceptionCheckpoint, both frameworks' fit() look for a "last" checkpoint to resume from and say so
    twice (tests/trainer/checkpointing/test_ckpt_path.py asserts it); a first fit finds none."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=r"`\.fit\(ckpt_path=None\)` was called without a model\. The last")
        warnings.filterwarnings("ignore", message=r'\.fit\(ckpt_path="last"\) is set, but there is no last checkpoint')
        yield


def test_on_exception_checkpoint_keeps_the_failing_state_as_lightning(tmp_path: Path) -> None:
    def make(framework: Any) -> list[Any]:
        return [_callbacks(framework).OnExceptionCheckpoint(tmp_path / framework.__name__ / "crash")]

    with _first_fit_with_on_exception_checkpoint():
        sides = fit_both(tmp_path, make, module={"fail_at_step": 8}, expect_error=RuntimeError)
    files = {name: side.files() for name, side in sides.items()}
    assert files["accelplug"] == files["lightning"] == {"crash/on_exception.ckpt"}
    ours = torch.load(sides["accelplug"].callbacks[0].ckpt_path, weights_only=False)
    theirs = torch.load(sides["lightning"].callbacks[0].ckpt_path, weights_only=False)
    assert ours["global_step"] == theirs["global_step"] == 8
    for name, value in theirs["state_dict"].items():
        assert torch.allclose(ours["state_dict"][name], value), name


def test_on_exception_checkpoint_leaves_nothing_after_a_clean_fit(tmp_path: Path) -> None:
    def make(framework: Any) -> list[Any]:
        return [_callbacks(framework).OnExceptionCheckpoint(tmp_path / framework.__name__ / "crash")]

    with _first_fit_with_on_exception_checkpoint():
        sides = fit_both(tmp_path, make)
    assert sides["accelplug"].files() == sides["lightning"].files() == set()


def test_on_exception_checkpoint_needs_a_file_name(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="filename"):
        lightning.pytorch.callbacks.OnExceptionCheckpoint(tmp_path, filename="")
    with pytest.raises(MisconfigurationException, match="filename"):
        accelplug.callbacks.OnExceptionCheckpoint(tmp_path, filename="")  # type: ignore[attr-defined]


# ---- Timer -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("interval", ["step", "epoch"])
def test_an_elapsed_timer_stops_fit_where_lightnings_stops(interval: str, tmp_path: Path) -> None:
    def make(framework: Any) -> list[Any]:
        return [_callbacks(framework).Timer(duration=timedelta(0), interval=interval, verbose=False)]

    sides = fit_both(tmp_path, make, max_epochs=3)
    theirs, ours = sides["lightning"], sides["accelplug"]
    assert ours.trainer.global_step == theirs.trainer.global_step
    timer, their_timer = ours.callbacks[0], theirs.callbacks[0]
    assert timer.state_dict().keys() == their_timer.state_dict().keys()
    assert timer.state_dict()["time_elapsed"].keys() == their_timer.state_dict()["time_elapsed"].keys()
    # A zero duration stops before training starts under both (no on_train_start: nothing elapsed).
    assert (timer.start_time("train") is None) == (their_timer.start_time("train") is None)
    assert (timer.time_elapsed("train") > 0) == (their_timer.time_elapsed("train") > 0)
    assert timer.time_remaining() is not None and timer.time_remaining() <= 0


def test_a_timer_without_duration_measures_without_stopping(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, lambda f: [_callbacks(f).Timer()], max_epochs=2)
    assert sides["accelplug"].trainer.global_step == sides["lightning"].trainer.global_step == 12
    timer = sides["accelplug"].callbacks[0]
    assert timer.time_remaining() is None
    assert timer.end_time("validate") >= timer.start_time("validate") > timer.start_time("train")


@pytest.mark.parametrize("duration", ["00:01:30:05", {"hours": 2, "minutes": 3}, timedelta(seconds=90), None], ids=str)
def test_timer_durations_read_as_lightnings(duration: Any) -> None:
    ours = accelplug.callbacks.Timer(duration=duration)  # type: ignore[attr-defined]
    theirs = lightning.pytorch.callbacks.Timer(duration=duration)
    assert ours.time_remaining() == theirs.time_remaining()


@pytest.mark.parametrize("arguments", [{"duration": "1:30"}, {"interval": "stpe"}, {"duration": {"hour": 1}}])
def test_timer_refuses_bad_arguments(arguments: dict[str, Any]) -> None:
    with pytest.raises(MisconfigurationException, match="Timer"):
        accelplug.callbacks.Timer(**arguments)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("arguments", "phrase"),
    [({"duration": "6:00:00"}, "format DD:HH:MM:SS"), ({"interval": "stpe"}, "Unsupported parameter value")],
)
def test_timer_refusals_keep_lightnings_phrase(arguments: dict[str, Any], phrase: str) -> None:
    with pytest.raises(lightning.pytorch.utilities.exceptions.MisconfigurationException, match=phrase):
        lightning.pytorch.callbacks.Timer(**arguments)
    with pytest.raises(MisconfigurationException, match=phrase):
        accelplug.callbacks.Timer(**arguments)  # type: ignore[attr-defined]


def test_a_resumed_timer_keeps_its_training_time() -> None:
    timer = accelplug.callbacks.Timer(duration="00:00:01:00")  # type: ignore[attr-defined]
    their_timer = lightning.pytorch.callbacks.Timer(duration="00:00:01:00")
    state = {"time_elapsed": {"train": 42.0, "validate": 3.0}}
    timer.load_state_dict(state)
    their_timer.load_state_dict(state)
    assert timer.time_elapsed() == their_timer.time_elapsed() == 42.0
    assert timer.time_remaining() == their_timer.time_remaining() == 18.0
