"""Run the real ``python -m accelplug`` in a child process with a controlled environment.

The child gets the parent's environment minus every ``ACCELPLUG_*`` variable, plugin autoloading off
(only the built-ins, whatever is installed), and its own user config directory in ``tmp_path``
(``HOME`` and ``XDG_CONFIG_HOME``), so no developer setting or earlier test leaks in. The config file
is found where a user's would be, in that directory, and does not exist until a test writes it;
``ACCELPLUG_CONFIG_FILE`` is unset (a test that sets it must name a file that exists, or create it).
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
def user_dirs(tmp_path: Path) -> dict[str, str]:
    """A home and config directory of the child's own (platformdirs reads both)."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path)}


@pytest.fixture
def config_file(user_dirs: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``accelplug config`` writes in the child: the user config directory's ``config.toml``."""
    from platformdirs import user_config_path

    with monkeypatch.context() as patch:
        for name, value in user_dirs.items():
            patch.setenv(name, value)
        return user_config_path("accelplug", appauthor=False) / "config.toml"


@pytest.fixture
def cli_env(user_dirs: dict[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELPLUG_")}
    env.update(user_dirs)
    env["ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD"] = "1"
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
