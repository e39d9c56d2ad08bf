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
    # Read at each framework's own loggers, whatever the tests before this one in the process left behind:
    # Lightning stops ``lightning.pytorch`` propagating to the root (where caplog listens) when it is first
    # imported while the root has no handler, quiet_lightning() and others raise the ``lightning.*`` levels,
    # and a library's ``logging.config.dictConfig`` disables every logger that existed before it.
    names = ("accelplug", "lightning", "lightning.pytorch", "lightning.fabric", "lightning_fabric")
    framework_loggers = [logging.getLogger(name) for name in names]
    every_logger = [
        logger
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger) and name.split(".")[0] in {n.split(".")[0] for n in names}
    ]
    saved = [(logger, logger.level, logger.disabled) for logger in every_logger + framework_loggers]
    for logger in every_logger:
        logger.disabled = False
        logger.setLevel(logging.NOTSET)
    for logger in framework_loggers:
        logger.setLevel(logging.INFO)
        logger.addHandler(caplog.handler)
    try:
        # quiet_lightning(framework) hides Lightning's warnings; its INFO lines are what this test reads
        with quiet_lightning(framework), caplog.at_level(logging.INFO):
            for logger in framework_loggers:  # quiet_lightning raised two of them again
                logger.setLevel(logging.INFO)
            framework.Trainer(logger=False, enable_progress_bar=False, **options)
    finally:
        for logger in framework_loggers:
            logger.removeHandler(caplog.handler)
        for logger, level, disabled in saved:
            logger.setLevel(level)
            logger.disabled = disabled
    records = {id(r): r for r in caplog.records}.values()  # a record that also propagates to the root: once
    messages = [r.getMessage().rstrip(".") for r in records]
    return [m for m in messages if "configured so" in m or "fast_dev_run" in m]


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
