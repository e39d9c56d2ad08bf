"""The same module under Lightning 2.x and under accelplug: identical hook order and identical per-step losses.

Runs only where ``lightning`` is installed (the ``test`` extra installs it, with the CPU torch kept by
``constraints.txt``); elsewhere it is skipped with that reason.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import pytest

import accelplug

from .recording import make_callback, make_module

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

CASES = {
    "fit": {},
    "fit-with-scheduler": {"scheduler": True},
    "fit-manual-optimization": {"manual": True},
    "fit-accumulating-2": {"accumulate_grad_batches": 2},
    "validate": {},
    "test": {},
    "predict": {},
}


def _run(framework: Any, case: str) -> tuple[list[str], list[float]]:
    options = dict(CASES[case])
    module_options = {k: options.pop(k) for k in ("manual", "scheduler") if k in options}
    calls: list[str] = []
    module = make_module(framework.LightningModule, calls, **module_options)
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[make_callback(framework.Callback, calls)],
        **options,
    )
    method = getattr(trainer, case.split("-")[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if case in ("validate", "test"):
            method(module, verbose=False)
        else:
            method(module)
    return calls, module.losses


@pytest.fixture(autouse=True)
def _quiet_lightning() -> Any:
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    yield


@pytest.mark.parametrize("case", list(CASES))
def test_hooks_run_in_lightnings_order_with_identical_losses(case: str) -> None:
    expected_calls, expected_losses = _run(lightning, case)
    calls, losses = _run(accelplug, case)
    assert calls == expected_calls
    assert losses == expected_losses, "per-step losses differ from Lightning's"
    assert len(calls) > 20
