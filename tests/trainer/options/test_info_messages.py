"""The INFO lines Lightning's Trainer gives for a limit of one batch (``1``) against the whole epoch (``1.0``), and
for ``fast_dev_run``: the same lines, on the ``accelplug.trainer`` logger, and none for the defaults."""

from __future__ import annotations

import logging
from typing import Any

import pytest

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


def _lines(framework: Any, caplog: pytest.LogCaptureFixture, **options: Any) -> list[str]:
    caplog.clear()
    # quiet_lightning(framework) hides Lightning's warnings; its INFO lines are what this test reads
    with quiet_lightning(framework), caplog.at_level(logging.INFO), caplog.at_level(logging.INFO, "lightning.pytorch"):
        framework.Trainer(logger=False, enable_progress_bar=False, **options)
    return [
        r.getMessage().rstrip(".")
        for r in caplog.records
        if "configured so" in r.getMessage() or "fast_dev_run" in r.getMessage()
    ]


@pytest.mark.parametrize(
    "options",
    [
        {"limit_train_batches": 1},
        {"limit_train_batches": 1.0},
        {"limit_val_batches": 1},
        {"limit_test_batches": 1.0},
        {"limit_predict_batches": 1},
        {"overfit_batches": 1.0},
        {"overfit_batches": 1, "limit_val_batches": 1, "limit_test_batches": 1},
        {"val_check_interval": 1},
        {"val_check_interval": 1.0},
        {"fast_dev_run": True, "limit_val_batches": 1},
        {},
    ],
    ids=lambda options: ",".join(f"{k}={v}" for k, v in options.items()) or "defaults",
)
def test_the_trainer_says_what_a_limit_of_one_means_as_lightning_does(
    caplog: pytest.LogCaptureFixture, options: dict[str, Any]
) -> None:
    ours = _lines(accelplug, caplog, **options)
    assert ours == _lines(lightning, caplog, **options)
    assert bool(ours) == bool(options)
