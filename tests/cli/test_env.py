"""``accelplug env``: a bug-report environment, Markdown by default, JSON validated by its model."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from accelplug import _nvml
from accelplug.cli import env_cmd
from accelplug.cli.models import EnvReport

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def test_env_json_validates_and_never_initialises_cuda(cli: RunCli, config_file: Path) -> None:
    result = cli("env", "--json", env={"CUDA_VISIBLE_DEVICES": "0", "SECRET_TOKEN": "x"})
    assert result.returncode == 0, result.stderr
    report = EnvReport.model_validate_json(result.stdout)
    assert report.torch.cuda_initialized is False
    assert report.platform.cpu_count and report.platform.cpu_count >= 1
    assert report.platform.memory_total_bytes and report.platform.memory_total_bytes > 0
    assert {a.name for a in report.accelerators} >= {"cpu", "cuda", "mps"}
    assert report.environment["CUDA_VISIBLE_DEVICES"] == "0"
    assert report.environment["ACCELPLUG_CONFIG_FILE"] == str(config_file)
    assert "SECRET_TOKEN" not in report.environment
    assert report.config.path == str(config_file)
    assert report.config.exists is False
    assert report.plugins[0].plugin == "builtin"


def test_env_markdown_has_every_section(cli: RunCli) -> None:
    result = cli("env")
    assert result.returncode == 0, result.stderr
    for heading in (
        "## accelplug environment",
        "### Accelerators",
        "### Plugins",
        "### Environment variables",
        "### Configuration",
    ):
        assert heading in result.stdout
    assert "- torch: " in result.stdout
    assert "Rosetta-translated: no" in result.stdout


def test_env_still_reports_when_the_config_file_is_broken(cli: RunCli, config_file: Path) -> None:
    config_file.parent.mkdir(parents=True)
    config_file.write_text("devices = [\n", encoding="utf-8")
    result = cli("env", "--json")
    assert result.returncode == 0, result.stderr
    report = EnvReport.model_validate_json(result.stdout)
    assert report.config.error is not None
    assert "not valid TOML" in report.config.error


def test_env_lists_gpu_names_and_memory_from_nvml(mocker: MockerFixture) -> None:
    gpus = [_nvml.GpuInfo(0, 1, "NVIDIA H100 80GB HBM3", "GPU-abc", 80 * 2**30)]
    mocker.patch.object(_nvml, "visible_gpus", return_value=gpus)
    from accelplug.accelerators import CUDAAccelerator

    info = env_cmd._accelerator_env(CUDAAccelerator)
    assert [(d.index, d.name, d.total_memory_bytes) for d in info.devices] == [(0, "NVIDIA H100 80GB HBM3", 80 * 2**30)]
    assert info.details["physical_indices"] == "1"


def test_env_markdown_shows_device_lines(mocker: MockerFixture) -> None:
    gpus = [_nvml.GpuInfo(0, 0, "NVIDIA H100 80GB HBM3", "GPU-abc", 80 * 2**30)]
    mocker.patch.object(_nvml, "visible_gpus", return_value=gpus)
    text = env_cmd.to_markdown(env_cmd.collect())
    assert "cuda:0 NVIDIA H100 80GB HBM3, 80.0 GiB" in text


@pytest.mark.parametrize("name", ["ACCELPLUG_PLUGINS", "NCCL_DEBUG", "PYTORCH_ENABLE_MPS_FALLBACK"])
def test_env_reports_relevant_variables(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    monkeypatch.setenv(name, "1")
    assert env_cmd.collect().environment[name] == "1"
