"""Bad plugin switches and Unicode digits on the command line: exit code 2 and one line, no traceback."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def _one_line_refusal(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("accelplug: error: "), result.stderr
    for needle in needles:
        assert needle in lines[0]


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD", "maybe"),
        ("ACCELPLUG_TRACE_PLUGINS", "sometimes"),
        ("ACCELPLUG_PLUGIN_TIMEOUT_S", "soon"),
    ],
)
def test_list_refuses_an_unclear_plugin_switch(cli: RunCli, variable: str, value: str) -> None:
    _one_line_refusal(cli("list", "--json", env={variable: value}), f"{variable}={value!r}", "expected")


@pytest.mark.parametrize("devices", ["²", "1,²", "٣"])
def test_launch_refuses_unicode_digits(cli: RunCli, tmp_path: Path, devices: str) -> None:
    script = tmp_path / "train.py"
    script.write_text("print('never run')\n")
    result = cli("launch", "--cpu", "--devices", devices, str(script))
    _one_line_refusal(result, f"devices={devices!r}", "Accepted forms")
    assert "never run" not in result.stdout


def test_config_refuses_unicode_digits(cli: RunCli, config_file: Path) -> None:
    _one_line_refusal(cli("config", "--default", "--devices", "²"), "devices='²'", "ASCII digits")
    assert not config_file.exists()
