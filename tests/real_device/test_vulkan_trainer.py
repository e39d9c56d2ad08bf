"""accelplug's Trainer and Fabric on a real out-of-tree device, through the plugin API only.

The device is torchvulkan's ``vulkan`` on Mesa's lavapipe, reached through the ``accelplug-torch-accelerator``
bridge installed by pip; each run is compared with the same model on the same data on the CPU, in the same
child process (``vulkan_child.py``). float32 kernels on the two devices round differently in the last bits, so
losses are compared to a relative 1e-5; float16 autocast to 1e-3.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug

from .models import Regressor, loader

Scenario = Callable[..., dict[str, Any]]
DEVICE = "torch_accelerator"


def test_fit_runs_on_the_device_and_reaches_the_cpus_losses(scenario: Scenario) -> None:
    run = scenario("stages")
    device, cpu = run[DEVICE], run["cpu"]
    assert (device["root_device"], device["param_device"]) == ("vulkan:0", "vulkan:0")
    assert device["batch_devices"] == ["vulkan"]
    assert device["fit_losses"] == pytest.approx(cpu["fit_losses"], rel=1e-5)


def test_validate_and_test_give_the_cpus_metrics(scenario: Scenario) -> None:
    run = scenario("stages")
    assert run[DEVICE]["validate"][0]["val_loss"] == pytest.approx(run["cpu"]["validate"][0]["val_loss"], rel=1e-5)
    assert run[DEVICE]["test"][0]["test_loss"] == pytest.approx(run["cpu"]["test"][0]["test_loss"], rel=1e-5)


def test_predict_gives_the_cpus_outputs(scenario: Scenario) -> None:
    run = scenario("stages")
    assert len(run[DEVICE]["predict"]) == 64
    assert run[DEVICE]["predict"] == pytest.approx(run["cpu"]["predict"], rel=1e-5, abs=1e-6)


def test_a_checkpoint_written_on_the_device_resumes_on_the_cpu_and_back(scenario: Scenario) -> None:
    """Device (3 epochs) -> CPU (epoch 4) -> device (epoch 5) gives the losses of the CPU resuming itself."""
    checkpoint = scenario("stages")["checkpoint"]
    reference = checkpoint["reference_losses"]
    assert checkpoint["device_to_cpu_losses"] == pytest.approx(reference[:4], rel=1e-5)
    assert checkpoint["cpu_to_device_losses"] == pytest.approx(reference[4:], rel=1e-5)
    assert checkpoint["cpu_to_device_param_device"] == "vulkan:0"


def test_the_devices_checkpoint_resumes_where_the_backend_is_not_installed(scenario: Scenario, tmp_path: Path) -> None:
    """This test process has no torchvulkan: accelplug's Trainer resumes the device's file on the CPU here."""
    run = scenario("stages")
    accelplug.seed_everything(0)
    model = Regressor()
    trainer = accelplug.Trainer(
        accelerator="cpu", max_epochs=4, logger=False, enable_checkpointing=False, enable_progress_bar=False,
        enable_model_summary=False, default_root_dir=str(tmp_path),
    )  # fmt: skip
    trainer.fit(model, loader(), ckpt_path=Path(run["folder"]) / f"{DEVICE}-epoch3.ckpt")
    assert model.losses == pytest.approx(run["checkpoint"]["reference_losses"][:4], rel=1e-5)


def test_the_devices_checkpoint_holds_its_rng_state(scenario: Scenario) -> None:
    saved = torch.load(
        Path(scenario("stages")["folder"]) / f"{DEVICE}-epoch3.ckpt", map_location="cpu", weights_only=True
    )
    assert saved["rng"]["device"]["accelerator"] == DEVICE
    assert isinstance(saved["rng"]["device"]["state"], torch.Tensor)


def test_fabric_trains_on_the_device_with_the_cpus_losses(scenario: Scenario) -> None:
    run = scenario("fabric")
    assert run[DEVICE]["device"] == "vulkan:0"
    assert run[DEVICE]["losses"] == pytest.approx(run["cpu"]["losses"], rel=1e-5)


def test_float16_mixed_runs_where_the_backends_autocast_takes_float16(scenario: Scenario) -> None:
    run = scenario("precisions")
    assert run["supported"] == ["32-true", "16-mixed"]
    assert run[f"16-mixed/{DEVICE}"] == pytest.approx(run["16-mixed/cpu"], rel=1e-3)


def test_bf16_mixed_is_refused_naming_the_backend_and_what_it_lacks(scenario: Scenario) -> None:
    message = scenario("precisions")["refused/bf16-mixed"]
    assert message.startswith("precision='bf16-mixed' cannot run on 'torch_accelerator': torch's autocast on 'vulkan'")
    assert "accepts float16 only" in message and "It supports: '32-true', '16-mixed'." in message


@pytest.mark.parametrize("precision", ["64-true", "bf16-true"])
def test_precisions_the_bridge_does_not_promise_are_refused(scenario: Scenario, precision: str) -> None:
    message = scenario("precisions")[f"refused/{precision}"]
    assert message == f"precision={precision!r} cannot run on 'torch_accelerator'. It supports: '32-true', '16-mixed'."


def test_compile_is_refused_before_anything_runs_naming_what_the_backend_lacks(scenario: Scenario) -> None:
    message = scenario("compiling")["compile=True"]
    assert message.startswith("compile=... cannot run on 'vulkan': torch.compile's default backend, Inductor, has no")
    assert "compile={'backend': 'aot_eager'}" in message


def test_the_statistics_callback_logs_the_backends_own_memory_figures(scenario: Scenario) -> None:
    columns = scenario("optional_parts")["logged_columns"]
    # Lightning's keys: DeviceStatsMonitor.<hook>/<the backend's memory_stats name>
    assert "DeviceStatsMonitor.on_train_batch_end/allocated_bytes.all.current" in columns


def test_what_the_backend_has_and_lacks_is_recorded_after_a_full_fit(scenario: Scenario) -> None:
    """torch.accelerator.empty_cache() raises on this backend; the bridge asks torch.vulkan's own, so teardown
    works; a pinned loader gets pageable memory back, so pinning is dropped instead of pretended."""
    found = scenario("optional_parts")["capabilities"]
    assert found["empty_cache"]["detail"] == "empty_cache: yes (torch.vulkan.empty_cache)"
    assert found["memory_stats"]["detail"] == "memory_stats: yes (torch.vulkan.memory_stats)"
    assert found["rng_state"]["available"] is True
    assert found["pinned_memory"]["detail"].startswith("pinned_memory: no (Tensor.pin_memory raised")
    assert found["autocast"]["detail"] == "autocast: yes (float16)"


def test_a_pinned_loader_trains_with_the_cpus_losses(scenario: Scenario) -> None:
    assert scenario("optional_parts")["losses"] == pytest.approx(scenario("stages")["cpu"]["fit_losses"], rel=1e-5)
