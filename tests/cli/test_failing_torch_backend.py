"""A device backend torch autoloads and that raises: ``import torch`` fails, accelplug says which and why.

``tests/plugin_dists/torch_backends/accelplug-testbackend-fails`` is a real distribution whose entry point in
group ``torch.backends`` raises the ``OSError`` a backend missing its driver library raises. It is pip-installed
into a folder of its own (not the shared plugin site: every ``import torch`` there would fail) and put on the
child's ``PYTHONPATH``, where torch finds it exactly as after ``pip install``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.plugin_kit.sites import install_site

RunCli = Callable[..., subprocess.CompletedProcess[str]]

DIST = Path(__file__).resolve().parents[1] / "plugin_dists" / "torch_backends" / "accelplug-testbackend-fails"
FAILED_PLUGIN = "torch.backends:failing_device"
ERROR = "OSError: libfakedevice.so.3: cannot open shared object file"


@pytest.fixture(scope="module")
def failing_backend_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return install_site(tmp_path_factory.mktemp("failing_torch_backend"), [DIST])


@pytest.fixture
def env(failing_backend_site: Path) -> dict[str, str]:
    return {"PYTHONPATH": str(failing_backend_site)}


def test_the_backend_really_breaks_import_torch(env: dict[str, str], cli_env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import torch"], env={**cli_env, **env}, capture_output=True, text=True, timeout=120
    )
    assert result.returncode != 0
    assert "Failed to load the backend extension: failing_device" in result.stderr


def test_import_accelplug_survives_it(env: dict[str, str], cli_env: dict[str, str]) -> None:
    result = subprocess.run(
        [sys.executable, "-c", "import accelplug; print(accelplug.__name__)"],
        env={**cli_env, **env}, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert (result.returncode, result.stdout.strip()) == (0, "accelplug"), result.stderr


def test_list_names_the_distribution_and_the_error(cli_process: RunCli, env: dict[str, str]) -> None:
    result = cli_process("list", "--json", env=env)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    failed = {f["plugin"]: f for f in report["failed_plugins"]}
    assert failed[FAILED_PLUGIN]["distribution"] == "accelplug-testbackend-fails"
    assert failed[FAILED_PLUGIN]["version"] == "1.0.0"
    assert ERROR in failed[FAILED_PLUGIN]["error"]
    assert "TORCH_DEVICE_BACKEND_AUTOLOAD=0" in failed[FAILED_PLUGIN]["error"]
    assert "cpu" in report["available"]


def test_env_reports_it_among_the_failed_plugins(cli_process: RunCli, env: dict[str, str]) -> None:
    result = cli_process("env", env=env)
    assert result.returncode == 0, result.stderr
    line = f"- FAILED {FAILED_PLUGIN} (accelplug-testbackend-fails): torch's device-backend autoloading"
    assert line in result.stdout
    assert ERROR in result.stdout


def test_any_other_command_stops_with_the_facts_and_exit_2(cli_process: RunCli, env: dict[str, str]) -> None:
    result = cli_process("bench", "--quick", env=env)
    assert result.returncode == 2
    assert result.stderr.startswith("accelplug: error: torch's device-backend autoloading failed on entry point")
    assert "accelplug-testbackend-fails 1.0.0" in result.stderr
    assert "Traceback" not in result.stderr
