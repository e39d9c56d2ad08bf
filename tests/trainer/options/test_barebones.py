"""``barebones=True``: what it turns off may not be asked for, and it says what it turned off (Lightning 2.6.6)."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import accelplug

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("enable_checkpointing", True),
        ("logger", True),
        ("enable_progress_bar", True),
        ("enable_model_summary", True),
        ("log_every_n_steps", 1),
        ("num_sanity_val_steps", 1),
        ("fast_dev_run", 1),
        ("detect_anomaly", True),
        ("profiler", "simple"),
    ],
)
def test_an_option_barebones_turns_off_is_refused_as_lightning_refuses_it(option: str, value: Any) -> None:
    phrase = rf"`Trainer\(barebones=True, {option}={value!r}\)` was passed"
    with pytest.raises(ValueError, match=phrase):
        lightning.Trainer(barebones=True, **{option: value})
    with pytest.raises(accelplug.MisconfigurationException, match=phrase) as info:
        accelplug.Trainer(barebones=True, **{option: value})
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(("option", "value"), [("logger", False), ("num_sanity_val_steps", 0), ("profiler", None)])
def test_options_that_agree_with_barebones_are_accepted(option: str, value: Any) -> None:
    assert accelplug.Trainer(barebones=True, **{option: value}).barebones


def test_barebones_says_at_info_level_that_it_is_on(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        trainer = accelplug.Trainer(barebones=True)
    assert "running in `Trainer(barebones=True)` mode" in caplog.text
    assert not trainer.loggers and not trainer.checkpoint_callbacks and not trainer.num_sanity_val_steps
