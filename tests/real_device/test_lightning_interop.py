"""One plugin, three audiences: Lightning 2.6's own Trainer and Fabric on accelplug's accelerators.

After the documented opt-in line (``register_with_lightning()``), plain Lightning code names an accelplug
accelerator; ``lightning_child.py`` runs it and Lightning's own ``accelerator="cpu"`` on the same data. On the
real device (the bridge to torchvulkan) and on the ``example`` plugin (an accelplug accelerator on the host CPU).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.warm_python import WarmPython

from .conftest import run_child
from .vulkan import REPO, Device, plugin_env, plugin_site

Report = dict[str, Any]


@pytest.fixture(scope="module")
def on_vulkan(vulkan: Device, device_python: WarmPython, tmp_path_factory: pytest.TempPathFactory) -> Report:
    return run_child(device_python, vulkan, "lightning_child.py", str(tmp_path_factory.mktemp("lightning")), "--vulkan")


@pytest.fixture(scope="module")
def on_example_plugin(device_python: WarmPython, tmp_path_factory: pytest.TempPathFactory) -> Report:
    """No device needed: the example plugin's accelerator runs on the host CPU."""
    site = plugin_site(tmp_path_factory.getbasetemp())
    result = device_python.run(
        [str(Path(__file__).parent / "lightning_child.py"), str(tmp_path_factory.mktemp("lightning"))],
        env=plugin_env(site), timeout=600, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-5000:]
    report: Report = json.loads(result.stdout.strip().splitlines()[-1])
    return report


def test_the_opt_in_registers_every_accelplug_name_lightning_lacks_once(on_example_plugin: Report) -> None:
    assert on_example_plugin["registered"] == ["example", "torch_accelerator"]
    assert on_example_plugin["again"] == []


def test_lightnings_trainer_trains_on_the_real_device_with_its_cpu_losses(on_vulkan: Report) -> None:
    run, cpu = on_vulkan["trainer"], on_vulkan["trainer/lightning-cpu"]
    assert (run["accelerator"], run["root_device"], run["batch_devices"]) == (
        "LightningTorchAcceleratorBridge", "vulkan:0", ["vulkan:0"]
    )  # fmt: skip
    assert run["losses"] == pytest.approx(cpu["losses"], rel=1e-5)


def test_lightnings_fabric_trains_on_the_real_device_with_its_cpu_losses(on_vulkan: Report) -> None:
    run = on_vulkan["fabric"]
    assert (run["device"], run["accelerator"]) == ("vulkan:0", "LightningTorchAcceleratorBridge")
    assert run["losses"] == pytest.approx(on_vulkan["fabric/lightning-cpu"]["losses"], rel=1e-5)


def test_lightnings_trainer_and_fabric_run_a_cpu_plugin_with_their_own_cpu_losses(on_example_plugin: Report) -> None:
    assert on_example_plugin["trainer"]["accelerator"] == "LightningExampleAccelerator"
    assert on_example_plugin["trainer"]["losses"] == on_example_plugin["trainer/lightning-cpu"]["losses"]
    assert on_example_plugin["fabric"]["accelerator"] == "LightningExampleAccelerator"
    assert on_example_plugin["fabric"]["losses"] == on_example_plugin["fabric/lightning-cpu"]["losses"]


def test_lightnings_trainer_with_its_single_device_strategy_named_trains_as_with_auto(on_vulkan: Report) -> None:
    named, auto = on_vulkan["trainer/single-strategy"], on_vulkan["trainer"]
    assert (named["root_device"], named["batch_devices"]) == ("vulkan:0", ["vulkan:0"])
    assert named["losses"] == auto["losses"]


def test_fabric_on_one_device_with_strategy_auto_is_refused_not_trained_on_the_cpu(on_vulkan: Report) -> None:
    assert on_vulkan["refused/fabric-auto-strategy"] == (
        "MisconfigurationException: Lightning placed this run of accelerator 'torch_accelerator' on 'cpu': with "
        "strategy='auto' and one device, Lightning 2.x gives an accelerator it does not know by type a single-device "
        "strategy on the CPU. Pass strategy='single_torch_accelerator' (registered by accelplug's "
        "register_with_lightning) to run on 'vulkan', or accelerator='cpu' to train on the CPU."
    )


def test_lightnings_cuda_autocast_for_a_foreign_device_is_refused_naming_the_plugin_to_pass(on_vulkan: Report) -> None:
    assert "Pass plugins=[MixedPrecision('16-mixed', device='vulkan')]" in on_vulkan["refused/16-mixed"]


def test_float16_mixed_through_lightnings_own_plugin_trains_on_the_device(on_vulkan: Report) -> None:
    run = on_vulkan["16-mixed/plugin"]
    assert run["root_device"] == "vulkan:0"
    assert run["losses"] == pytest.approx(on_vulkan["16-mixed/plugin/lightning-cpu"]["losses"], rel=1e-3)


def test_bfloat16_autocast_the_backend_lacks_is_refused(on_vulkan: Report) -> None:
    assert on_vulkan["refused/bf16-plugin"] == (
        "MisconfigurationException: precision='bf16-mixed' cannot run on 'torch_accelerator': torch's autocast on "
        "'vulkan' accepts float16 only (the backend's get_amp_supported_dtype()), not bfloat16."
    )


@pytest.mark.parametrize("report", ["on_vulkan", "on_example_plugin"])
def test_a_bad_devices_value_gets_accelplugs_message(report: str, request: pytest.FixtureRequest) -> None:
    message: str = request.getfixturevalue(report)["refused/devices=3"]
    assert message.startswith("MisconfigurationException: devices=3 is not valid for accelerator")
    assert "Accepted forms:" in message
