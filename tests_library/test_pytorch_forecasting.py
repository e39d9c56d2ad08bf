"""A real library built on Lightning, trained on accelplug through the redirect, against its results under Lightning.

pytorch-forecasting (time series) subclasses ``lightning.pytorch.LightningModule`` inside the library
(``BaseModel``), builds its own ``Trainer`` in ``predict``, and imports Lightning's type aliases and
``get_init_args``. Each model trains once under Lightning 2.6.6 and once under accelplug (``accelplug.interop``),
each in its own process, on the same seeded data: the metrics, the predictions and the loop counts must agree.

Run by ``nox -s library`` (its own environment: the library pins pandas below the main environment's).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent


def train(framework: str, model: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(HERE / "forecasting_run.py"), framework, model],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"{framework} {model}:\n{done.stderr[-4000:]}"
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.fixture(scope="module", params=["nbeats", "deepar"])
def runs(request: pytest.FixtureRequest) -> dict[str, dict[str, Any]]:
    return {framework: train(framework, request.param) for framework in ("lightning", "accelplug")}


def test_the_librarys_trainer_is_accelplugs_under_the_redirect(runs: dict[str, dict[str, Any]]) -> None:
    assert runs["lightning"]["trainer_module"].startswith("lightning.pytorch")
    assert runs["accelplug"]["trainer_module"].startswith("accelplug.")


def test_the_same_metric_names_are_recorded(runs: dict[str, dict[str, Any]]) -> None:
    assert sorted(runs["accelplug"]["metrics"]) == sorted(runs["lightning"]["metrics"])


def test_the_metrics_agree(runs: dict[str, dict[str, Any]]) -> None:
    theirs, ours = runs["lightning"]["metrics"], runs["accelplug"]["metrics"]
    differing = {
        name: (theirs[name], ours.get(name))
        for name in theirs
        if ours.get(name) is None or not math.isclose(ours[name], theirs[name], rel_tol=1e-4, abs_tol=1e-5)
    }
    assert not differing


def test_the_predictions_and_loop_counts_agree(runs: dict[str, dict[str, Any]]) -> None:
    theirs, ours = runs["lightning"], runs["accelplug"]
    assert (ours["epoch"], ours["step"], ours["prediction_shape"]) == (
        theirs["epoch"],
        theirs["step"],
        theirs["prediction_shape"],
    )
    assert math.isclose(ours["prediction_sum"], theirs["prediction_sum"], rel_tol=1e-4, abs_tol=1e-3)
