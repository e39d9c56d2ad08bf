"""``accelplug env``: a bug-report environment, Markdown by default, JSON validated by its model."""

from __future__ import annotations

import importlib.metadata
import platform
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pytest_mock import MockerFixture

from accelplug.cli import env_cmd
from accelplug.cli.reports import EnvReport
from accelplug.hardware import _nvml

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def test_env_json_validates_and_never_initialises_cuda(cli_process: RunCli, config_file: Path) -> None:
    """A process of its own (the command's smoke test): CUDA state and ``CUDA_VISIBLE_DEVICES`` are per process."""
    config_file.parent.mkdir(parents=True)
    env = {"CUDA_VISIBLE_DEVICES": "0", "SECRET_TOKEN": "x", "ACCELPLUG_CONFIG_FILE": str(config_file)}
    result = cli_process("env", "--json", env=env)
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


# ---- what collect_env and accelerate env show ------------------------------------------------------
def test_env_json_has_os_cpu_libraries_and_package_versions(cli: RunCli) -> None:
    import torch

    result = cli("env", "--json")
    assert result.returncode == 0, result.stderr
    report = EnvReport.model_validate_json(result.stdout)
    p, t = report.platform, report.torch
    if platform.system() == "Linux":
        assert p.os_name == platform.freedesktop_os_release()["PRETTY_NAME"]
        assert p.libc is not None and p.libc.startswith("glibc ")
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            models = {line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")}
        assert p.cpu_model in models or (not models and p.cpu_model)
    assert report.packages["pluggy"] == importlib.metadata.version("pluggy")
    assert report.packages["numpy"] == importlib.metadata.version("numpy")
    assert {"lightning", "accelerate", "transformers", "torchvision", "torchmetrics"} <= set(report.packages)
    assert t.num_threads is not None and t.num_threads >= 1
    assert t.cuda_build == torch.version.cuda
    if torch.version.cuda is None and torch.version.hip is None:
        assert (t.cudnn, t.nccl) == (None, None)
    assert t.cuda_initialized is False


def test_env_markdown_has_packages_gpu_stack_and_os(cli: RunCli) -> None:
    result = cli("env")
    assert result.returncode == 0, result.stderr
    assert "### Packages" in result.stdout
    assert f"- pluggy: {importlib.metadata.version('pluggy')}" in result.stdout
    assert "- not installed: " in result.stdout or "lightning:" in result.stdout
    assert "- CPU: " in result.stdout and "logical CPUs, memory: " in result.stdout
    assert "- OS: " in result.stdout
    assert "NVIDIA driver: " in result.stdout


def test_env_reports_unknown_accelplug_variables(cli: RunCli) -> None:
    result = cli("env", "--json", env={"ACCELPLUG_DEVICE": "2"})
    assert result.returncode == 0, result.stderr
    report = EnvReport.model_validate_json(result.stdout)
    assert any("ACCELPLUG_DEVICE is not one accelplug reads" in w and "ACCELPLUG_DEVICES" in w for w in report.warnings)
    assert "### Warnings" in cli("env", env={"ACCELPLUG_DEVICE": "2"}).stdout


@pytest.mark.parametrize(
    ("first_line", "version"),
    [
        (
            "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024",
            "550.54.15",
        ),
        (
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build  (dvs-builder@U16)",
            "570.86.15",
        ),
        ("NVRM version: NVIDIA UNIX aarch64 Kernel Module  535.161.08  Tue Jan 23 2024", "535.161.08"),
        ("something else entirely", None),
    ],
)
def test_nvidia_driver_version_is_read_from_the_drivers_file(tmp_path: Path, first_line: str, version: str) -> None:
    path = tmp_path / "version"
    path.write_text(f"{first_line}\nGCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n")
    assert env_cmd.nvidia_driver_version(path) == version


def test_no_driver_file_and_no_nvml_binding_means_no_driver(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # nvidia-ml-py not installed
    assert env_cmd.nvidia_driver_version(tmp_path / "missing") is None


def test_a_cuda_build_shows_runtime_cudnn_nccl_and_driver(mocker: MockerFixture) -> None:
    # This machine has no CUDA build of torch: the library queries torch answers are mocked at torch's boundary.
    import torch

    mocker.patch.object(torch.version, "cuda", "12.8")
    mocker.patch.object(torch.backends.cudnn, "is_available", return_value=True)
    mocker.patch.object(torch.backends.cudnn, "version", return_value=90100)
    mocker.patch.object(torch.cuda.nccl, "version", return_value=(2, 21, 5))
    mocker.patch.object(env_cmd, "nvidia_driver_version", return_value="550.54.15")
    report = env_cmd.collect()
    assert (report.torch.cudnn, report.torch.nccl, report.platform.nvidia_driver) == ("9.1.0", "2.21.5", "550.54.15")
    text = env_cmd.to_markdown(report)
    assert "- CUDA runtime: 12.8, cuDNN: 9.1.0, NCCL: 2.21.5, NVIDIA driver: 550.54.15" in text


@pytest.mark.parametrize(("number", "text"), [(90100, "9.1.0"), (90300, "9.3.0"), (8902, "8.9.2"), (8700, "8.7.0")])
def test_cudnn_version_numbers_are_spelt_as_cudnn_does(mocker: MockerFixture, number: int, text: str) -> None:
    import torch

    mocker.patch.object(torch.backends.cudnn, "is_available", return_value=True)
    mocker.patch.object(torch.backends.cudnn, "version", return_value=number)
    assert env_cmd._cudnn_version(torch) == text


#: What srun gives task 1 of 2 on two nodes (tests/environments/captured.py has the full capture).
SRUN_TASK = {
    "SLURM_NTASKS": "2",
    "SLURM_PROCID": "1",
    "SLURM_LOCALID": "0",
    "SLURM_NODEID": "1",
    "SLURM_NNODES": "2",
    "SLURM_STEP_ID": "0",
    "SLURM_JOB_ID": "1234",
    "SLURM_JOB_NAME": "python",
    "SLURM_NODELIST": "gpu[07-08]",
}


def test_env_shows_the_cluster_environment_that_started_the_process(cli: RunCli) -> None:
    result = cli("env", "--json", env=SRUN_TASK)
    assert result.returncode == 0, result.stderr
    cluster = EnvReport.model_validate_json(result.stdout).cluster_environment
    assert (cluster.detected, cluster.plugin) == ("slurm", "builtin")
    assert (cluster.world_size, cluster.global_rank, cluster.local_rank, cluster.node_rank) == (2, 1, 0, 1)
    assert (cluster.main_address, cluster.main_port) == ("gpu07", 16234)
    assert cluster.registered == ["torchrun", "slurm", "lsf", "mpi", "kubeflow"]
    markdown = cli("env", env=SRUN_TASK).stdout
    assert "- **slurm** (plugin builtin): Slurm: tasks started by srun" in markdown
    assert "- this process: rank 1 of 2, local rank 0, node 1; rendezvous gpu07:16234" in markdown
    assert "- `SLURM_NODELIST=gpu[07-08]`" in markdown


def test_env_says_when_no_scheduler_started_the_process(cli: RunCli, cli_env: dict[str, str]) -> None:
    for name in [n for n in cli_env if n.startswith(("SLURM_", "OMPI_", "PMI_", "JSM_", "TORCHELASTIC_"))]:
        del cli_env[name]  # in case the suite itself runs inside a job
    result = cli("env")
    assert result.returncode == 0, result.stderr
    section = result.stdout.split("### Cluster environment")[1].split("###")[0]
    assert "- none: no scheduler or launcher started this process" in section
    assert "- asked in this order: torchrun, slurm, lsf, mpi, kubeflow" in section


def test_env_reports_a_contradictory_launcher_variable_instead_of_failing(cli: RunCli) -> None:
    result = cli("env", "--json", env={**SRUN_TASK, "SLURM_PROCID": "2"})
    assert result.returncode == 0, result.stderr
    cluster = EnvReport.model_validate_json(result.stdout).cluster_environment
    assert cluster.detected == "slurm"
    assert cluster.error is not None and "SLURM_PROCID=2 contradicts SLURM_NTASKS=2" in cluster.error
    assert cluster.global_rank is None
