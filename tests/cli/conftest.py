"""Run the real ``python -m accelplug`` in a child process with a controlled environment.

The child gets the parent's environment minus every ``ACCELPLUG_*`` variable, plugin autoloading off
(only the built-ins, whatever is installed), and its own config file path in ``tmp_path``, so no
developer setting or earlier test leaks in.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

RunCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    return tmp_path / "accelplug" / "config.toml"


@pytest.fixture
def cli_env(config_file: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELPLUG_")}
    env["ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["ACCELPLUG_CONFIG_FILE"] = str(config_file)
    env["COLUMNS"] = "200"  # rich tables: no wrapping inside the words the tests look for
    return env


@pytest.fixture
def cli(cli_env: dict[str, str]) -> RunCli:
    """``cli("list", "--json", env={...}, input="...")`` -> CompletedProcess (text, captured)."""

    def run(
        *args: str, env: dict[str, str] | None = None, input: str | None = None, timeout: float = 180
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "accelplug", *args],
            env={**cli_env, **(env or {})},
            input=input,
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=REPO,
        )

    return run
