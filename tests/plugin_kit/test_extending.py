"""A precision and a strategy from a separately installed plugin train through the same seams as the built-ins.

The plugin (``tests/plugin_dists/accelplug-testplugin-extension``) adds each with one file and one
registration line in its ``register_precisions``/``register_strategies`` hook; it is pip-installed and
found through its entry point, never imported by path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

_TRAIN = """
import json, torch
from accelplug import Trainer
from tests.modules import LinearRegression, regression_data

def train(**options):
    torch.manual_seed(0)
    model = LinearRegression()
    Trainer(accelerator="cpu", devices=1, max_epochs=2, enable_progress_bar=False, logger=False,
            enable_checkpointing=False, num_sanity_val_steps=0, **options).fit(model, regression_data(seed=1))
    return [v for p in model.parameters() for v in p.detach().flatten().tolist()]

from ap_test_extension.static_scale import StaticScalePrecision
from ap_test_extension.traced_strategy import TracedStrategy

plain = train(precision="32-true")
scaled = train(precision="static-scale", strategy="traced")
print(json.dumps({"plain": plain, "scaled": scaled, "backward_calls": StaticScalePrecision.backward_calls,
                  "strategy_calls": TracedStrategy.calls}))
"""


def test_a_plugin_precision_and_strategy_are_used_in_the_preparation_order(plugin_site: Path, run_python: Any) -> None:
    result = run_python(_TRAIN, pythonpath=plugin_site, env={"ACCELPLUG_PLUGINS": "extension"})
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report["backward_calls"] == 16, "2 epochs of 8 batches go through the plugin precision's backward"
    assert report["strategy_calls"] == ["setup_environment", "wrap_module(on cpu)", "setup_optimizers", "teardown"]
    assert report["scaled"] == pytest.approx(report["plain"], rel=1e-6, abs=1e-7), "a power-of-two scale is exact"


def test_a_single_device_plugin_strategy_is_refused_for_two_devices(plugin_site: Path, run_python: Any) -> None:
    code = "from accelplug import Trainer\nTrainer(accelerator='cpu', strategy='traced', devices=2)"
    result = run_python(code, pythonpath=plugin_site, env={"ACCELPLUG_PLUGINS": "extension"})
    assert result.returncode != 0
    assert "MisconfigurationException" in result.stderr and "uses one device" in result.stderr
