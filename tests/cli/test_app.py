"""The CLI's shape: help everywhere, version, exit codes, no torch for --help."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

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


@pytest.mark.parametrize("command", ["", *COMMANDS, "config show"])
def test_help_has_no_type_placeholders(cli: RunCli, command: str) -> None:
    result = cli(*command.split(), "--help")
    assert result.returncode == 0, result.stderr
    assert "<bool>" not in result.stdout  # a switch takes no value, so it shows none
    usage = result.stdout.splitlines()[0]
    assert usage.startswith("Usage: accelplug")
    assert "{" not in usage and "<" not in usage


def test_usage_errors_are_one_line_naming_the_help_to_read(cli: RunCli) -> None:
    result = cli("list", "--jsn")
    assert result.returncode == 2
    assert result.stderr == (
        "accelplug: error: No such option: --jsn. Did you mean --json? See 'accelplug list --help'.\n"
    )


def test_no_arguments_prints_the_help(cli: RunCli) -> None:
    result = cli()
    assert result.returncode == 2
    assert "Commands:" in result.stderr and "launch" in result.stderr


def test_help_offers_shell_completion(cli: RunCli) -> None:
    result = cli("--help")
    assert "--install-completion" in result.stdout
    assert "--show-completion" in result.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash to run the installed completion script")
def test_installed_bash_completion_completes_commands_and_options(cli_process: RunCli, cli_env: dict[str, str]) -> None:
    home = Path(cli_env["HOME"])
    installed = cli_process("--install-completion", "bash")
    assert installed.returncode == 0, installed.stderr
    script = home / ".bash_completions" / "accelplug.sh"
    assert f"source '{script}'" in (home / ".bashrc").read_text()
    bin_dir = Path(sys.executable).parent  # where the `accelplug` console script lives

    def complete(*words: str) -> list[str]:
        line = " ".join(f"'{w}'" for w in words)
        shell = (
            f"source '{script}'; COMP_WORDS=({line}); COMP_CWORD={len(words) - 1}; "
            '_accelplug_completion accelplug; printf "%s\\n" "${COMPREPLY[@]}"'
        )
        env = {**cli_env, "PATH": f"{bin_dir}:{cli_env.get('PATH', '')}"}
        out = subprocess.run(["bash", "-c", shell], env=env, capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert out.stderr == ""
        return out.stdout.split()

    assert complete("accelplug", "la") == ["launch"]
    cli_env["ACCELPLUG_DEVICE"] = "2"  # a typo's warning must not reach the terminal while completing
    assert complete("accelplug", "li") == ["list"]
    assert "show" in complete("accelplug", "config", "")
    assert complete("accelplug", "launch", "--nproc") == ["--nproc-per-node"]
    assert "--max-restarts" in complete("accelplug", "launch", "--max")
