"""``Trainer(max_time=...)`` adds Lightning's ``Timer`` to ``trainer.callbacks`` (checked after every step); a
``Timer`` of the user's governs instead, and ``max_time`` is then ignored with Lightning's INFO line."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.callbacks.parity import make_module, quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS


def _trainer(framework: Any, tmp_path: Path, **options: Any) -> Any:
    settings = {"accelerator": "cpu", "logger": False, "enable_progress_bar": False, "default_root_dir": tmp_path}
    return framework.Trainer(**{**settings, **options})


def _timers(trainer: Any, framework: Any) -> list[Any]:
    return [c for c in trainer.callbacks if isinstance(c, framework.pytorch.callbacks.Timer)]


@pytest.mark.parametrize("max_time", [{"seconds": 1337}, "00:00:22:17"])
def test_max_time_adds_a_step_timer_with_its_duration_as_lightning_does(tmp_path: Path, max_time: Any) -> None:
    found = {}
    for name, framework in FRAMEWORKS.items():
        trainer = _trainer(framework, tmp_path / name, max_time=max_time, enable_model_summary=False)
        (timer,) = _timers(trainer, framework)
        found[name] = (timer._duration, timer._interval, timer.time_remaining())
        assert type(trainer.callbacks[0]).__name__ == "Timer"  # before the checkpointing callback
    assert found["accelplug"] == found["lightning"] == (1337.0, "step", 1337.0)


def test_no_max_time_adds_no_timer(tmp_path: Path) -> None:
    for name, framework in FRAMEWORKS.items():
        assert _timers(_trainer(framework, tmp_path / name), framework) == []


def test_a_given_timer_governs_and_max_time_is_ignored(tmp_path: Path) -> None:
    steps = {}
    for name, framework in FRAMEWORKS.items():
        timer = framework.pytorch.callbacks.Timer()  # no duration: no time limit at all
        trainer = _trainer(framework, tmp_path / name, max_time={"milliseconds": 1}, max_epochs=2, callbacks=[timer])
        assert _timers(trainer, framework) == [timer]
        with quiet_lightning(framework):
            trainer.fit(make_module(framework))
        steps[name] = trainer.global_step
    assert steps["accelplug"] == steps["lightning"] == 12  # two whole epochs of 6 batches: 1 ms was not a limit


def test_the_ignored_max_time_is_announced_on_the_trainers_logger(tmp_path: Path) -> None:
    import accelplug

    lines: list[str] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = lambda record: lines.append(record.getMessage())  # type: ignore[method-assign]
    log = logging.getLogger("accelplug.trainer")
    log.addHandler(handler)
    previous = log.level
    log.setLevel(logging.INFO)
    try:
        _trainer(accelplug, tmp_path, max_time={"seconds": 5}, callbacks=[accelplug.Timer()])
        _trainer(accelplug, tmp_path, max_time={"seconds": 5})
    finally:
        log.removeHandler(handler)
        log.setLevel(previous)
    assert lines.count("Ignoring `Trainer(max_time=...)`, callbacks list already contains a Timer.") == 1  # Lightning's
