"""Lightning Fabric's ``ThroughputMonitor`` (``lightning.fabric.utilities.throughput``) next to Lightning's own."""

from __future__ import annotations

import importlib
from typing import Any
from unittest import mock

import pytest

import accelplug

lightning = pytest.importorskip("lightning", reason="the rows are compared with Lightning Fabric's")


def _logged_rows(framework: Any) -> list[Any]:
    logger = mock.Mock()
    fabric = framework.Fabric(accelerator="cpu", devices=1, loggers=logger)
    path = f"{framework.__name__}.fabric.utilities.throughput"
    # code written for Lightning gives the device its peak FLOPs by replacing the function at this path
    with mock.patch(f"{path}.get_available_flops", return_value=100):
        monitor = importlib.import_module(path).ThroughputMonitor(fabric, window_size=4, separator="|")
    lengths = 0
    for batches in range(1, 6):
        lengths += 6
        monitor.update(time=batches + 0.5, batches=batches, samples=3 * batches, lengths=lengths, flops=10)
        monitor.compute_and_log()
    return logger.log_metrics.mock_calls


def test_peak_flops_replaced_at_lightnings_path_give_the_mfu_lightning_fabric_logs() -> None:
    ours, theirs = _logged_rows(accelplug), _logged_rows(lightning)
    assert ours[-1].kwargs["metrics"]["device|mfu"] == 0.1
    assert ours == theirs
