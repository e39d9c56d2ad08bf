"""What the plugin answers before any run: availability, its reasons, device counts, precisions.

These answers come from package metadata and environment variables (``PJRT_DEVICE``,
``CPU_NUM_DEVICES``), read when asked, so each test sets the variables it is about. Most run in any
environment; the few that need torch_xla to be installed say so and skip without it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from accelplug_xla import TPUAccelerator, XLAAccelerator, environment

from accelplug import MisconfigurationException

XLA_PROBLEM = environment.torch_xla_problem()
needs_torch_xla = pytest.mark.skipif(XLA_PROBLEM is not None, reason=f"needs torch_xla: {XLA_PROBLEM}")


@pytest.fixture
def cpu_pjrt(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(environment.PJRT_DEVICE_ENV, "CPU")
    monkeypatch.delenv(environment.CPU_NUM_DEVICES_ENV, raising=False)


# ---- torch_xla itself -----------------------------------------------------------------------------------
def test_without_torch_xla_both_accelerators_say_how_to_install_it() -> None:
    if XLA_PROBLEM is None:
        pytest.skip("torch_xla is installed for this torch here")
    for cls in (XLAAccelerator, TPUAccelerator):
        assert not cls.is_available()
        assert cls.device_count() == 0
        reason = cls.unavailable_reason() or ""
        assert reason.startswith("torch_xla ")
        assert "pip install torch==" in reason or "pip install 'torch==" in reason


def test_a_torch_xla_built_for_another_torch_is_named_with_the_matching_pair() -> None:
    problem = environment.version_problem("2.9.0", "2.13.0+cpu") or ""
    assert "torch_xla 2.9.0 is built for torch 2.9.x, but torch 2.13.0+cpu is installed" in problem
    assert "pip install 'torch==2.9.*' torch_xla==2.9.0" in problem


def test_a_torch_xla_of_the_same_torch_release_is_accepted() -> None:
    assert environment.version_problem("2.9.0", "2.9.1+cu128") is None
    assert environment.version_problem("2.8.1", "2.8.0") is None


def test_class_level_queries_import_no_torch_xla() -> None:
    """``accelerator="auto"`` asks every plugin: XLA's answers must not cost torch_xla's import (seconds)."""
    code = (
        "import sys, json\n"
        "from accelplug_xla import XLAAccelerator, TPUAccelerator\n"
        "answers = [(c.is_available(), c.unavailable_reason(), c.device_count(), c.supported_strategies(),\n"
        "            c.supported_precisions()) for c in (XLAAccelerator, TPUAccelerator)]\n"
        "print(json.dumps({'imported': 'torch_xla' in sys.modules, 'xla_available': answers[0][0]}))\n"
    )
    env = {**os.environ, environment.PJRT_DEVICE_ENV: "CPU"}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout.strip().splitlines()[-1])
    assert report == {"imported": False, "xla_available": XLA_PROBLEM is None}


# ---- PJRT_DEVICE ------------------------------------------------------------------------------------------
@needs_torch_xla
def test_unset_pjrt_device_is_unavailable_with_the_setting_to_use(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(environment.PJRT_DEVICE_ENV, raising=False)
    if environment.pjrt_devices().device_type == "TPU":
        pytest.skip("a TPU VM: torch_xla picks the TPU without PJRT_DEVICE")
    assert not XLAAccelerator.is_available()
    assert "PJRT_DEVICE is not set" in (XLAAccelerator.unavailable_reason() or "")
    assert "PJRT_DEVICE=CPU" in (XLAAccelerator.unavailable_reason() or "")


@needs_torch_xla
def test_lowercase_pjrt_device_is_refused_as_torch_xla_refuses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(environment.PJRT_DEVICE_ENV, "cpu")
    reason = XLAAccelerator.unavailable_reason() or ""
    assert "PJRT_DEVICE='cpu'" in reason and "set PJRT_DEVICE=CPU" in reason


@needs_torch_xla
@pytest.mark.parametrize(("value", "hint"), [("TPX", "did you mean 'TPU'?"), ("NEURON", "supports 'CPU', 'TPU'")])
def test_an_unsupported_pjrt_device_names_the_supported_ones(
    monkeypatch: pytest.MonkeyPatch, value: str, hint: str
) -> None:
    monkeypatch.setenv(environment.PJRT_DEVICE_ENV, value)
    reason = XLAAccelerator.unavailable_reason() or ""
    assert f"PJRT_DEVICE={value!r}" in reason and hint in reason


@needs_torch_xla
def test_pjrt_device_tpu_without_tpu_chips_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(environment.PJRT_DEVICE_ENV, "TPU")
    if environment.pjrt_devices().count:
        pytest.skip("this machine has TPU chips")
    for cls in (XLAAccelerator, TPUAccelerator):
        assert "no TPU chip is attached" in (cls.unavailable_reason() or "")


@needs_torch_xla
def test_tpu_on_the_cpu_client_points_at_the_xla_accelerator(cpu_pjrt: None) -> None:
    assert XLAAccelerator.is_available()
    assert not TPUAccelerator.is_available()
    assert "use accelerator='xla'" in (TPUAccelerator.unavailable_reason() or "")


# ---- devices ------------------------------------------------------------------------------------------------
@needs_torch_xla
def test_the_cpu_client_has_one_device_unless_cpu_num_devices_says_more(
    cpu_pjrt: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert XLAAccelerator.device_count() == 1
    monkeypatch.setenv(environment.CPU_NUM_DEVICES_ENV, "3")
    assert XLAAccelerator.device_count() == 3
    assert XLAAccelerator.parse_devices("auto") == [0], "one device per process"
    assert XLAAccelerator.parse_devices([2]) == [2]
    with pytest.raises(MisconfigurationException, match=r"\[3\]"):
        XLAAccelerator.parse_devices([3])


@needs_torch_xla
@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_bad_cpu_num_devices_makes_xla_unavailable_naming_it(
    cpu_pjrt: None, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv(environment.CPU_NUM_DEVICES_ENV, value)
    assert not XLAAccelerator.is_available()
    assert f"CPU_NUM_DEVICES={value!r}" in (XLAAccelerator.unavailable_reason() or "")


# ---- strategies and precisions --------------------------------------------------------------------------------
def test_the_only_strategy_is_single_xla() -> None:
    assert XLAAccelerator.supported_strategies() == ("single_xla",)
    assert TPUAccelerator.supported_strategies() == ("single_xla",)


def test_float64_is_offered_on_the_cpu_client_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(environment.PJRT_DEVICE_ENV, "CPU")
    assert XLAAccelerator.supported_precisions() == ("32-true", "bf16-mixed", "bf16-true", "64-true")
    monkeypatch.setenv(environment.PJRT_DEVICE_ENV, "TPU")
    assert "64-true" not in XLAAccelerator.supported_precisions()


def test_auto_prefers_tpus_to_every_gpu_and_never_picks_xla_on_the_cpu() -> None:
    from accelplug.accelerators import CPUAccelerator, CUDAAccelerator

    assert TPUAccelerator.auto_priority > CUDAAccelerator.auto_priority
    assert XLAAccelerator.auto_priority < CPUAccelerator.auto_priority


# ---- the command line --------------------------------------------------------------------------------------------
@needs_torch_xla
def test_accelplug_list_shows_both_accelerators_from_this_plugin() -> None:
    env = {**os.environ, environment.PJRT_DEVICE_ENV: "CPU"}
    env.pop("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", None)
    result = subprocess.run(
        [sys.executable, "-m", "accelplug", "list", "--json"], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)["accelerators"]}
    xla, tpu = rows["xla"], rows["tpu"]
    assert (xla["plugin"], xla["distribution"]) == ("xla", "accelplug-xla")
    assert xla["available"] is True and xla["device_count"] == 1
    assert xla["strategies"] == ["single_xla"]
    assert tpu["available"] is False and "use accelerator='xla'" in tpu["reason"]
