"""The CLI's shape: help everywhere, version, exit codes, no torch for --help."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable

import pytest

from accelplug import __version__

RunCli = Callable[..., subprocess.CompletedProcess[str]]

COMMANDS = ("list", "env", "config", "bench", "launch", "demo")


def test_help_names_every_command(cli: RunCli) -> None:
    result = cli("--help")
    assert result.returncode == 0, result.stderr
    for command in COMMANDS:
        assert command in result.stdout


@pytest.mark.parametrize("command", [*COMMANDS, "config show"])
def test_every_command_has_help(cli: RunCli, command: str) -> None:
    result = cli(*command.split(), "--help")
    assert result.returncode == 0, result.stderr
    assert "Usage:" in result.stdout


def test_version_prints_the_package_version(cli: RunCli) -> None:
    result = cli("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"accelplug {__version__}"


def test_building_the_cli_does_not_import_torch() -> None:
    code = "import sys; import accelplug.cli.app; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_unknown_command_exits_2(cli: RunCli) -> None:
    assert cli("lst").returncode == 2


def test_configuration_error_is_one_line_on_stderr_without_traceback(cli: RunCli) -> None:
    result = cli("bench", "--quick", "--accelerators", "cdua")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.startswith("accelplug: error: ")
    assert len(result.stderr.strip().splitlines()) == 1
    assert "Did you mean 'cuda'?" in result.stderr


def test_debug_shows_the_traceback(cli: RunCli) -> None:
    result = cli("--debug", "bench", "--quick", "--accelerators", "cdua")
    assert result.returncode == 2
    assert "Traceback" in result.stderr
    assert "MisconfigurationException" in result.stderr
