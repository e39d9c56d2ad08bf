"""Two ways to run the command line: in this process (``cli``) and as a real ``python -m accelplug`` (``cli_process``).

Both give a ``subprocess.CompletedProcess`` (return code, stdout, stderr as text), so a test reads the same
whichever it uses.

``cli`` calls :func:`accelplug.cli.main`, the function the console script and ``python -m accelplug`` call,
in this process (``running.run_in_process`` says how, and what it resets between calls). It is what the
sweeps use: no torch import per case.

``cli_process`` is the real entry point, for the smoke tests (one per command and one bad-input case in
``test_entry_point.py``) and for what only a process shows: plugins found on a ``PYTHONPATH``, workers
started by torchrun, a terminal, CUDA never initialised.

Both get the test's environment minus every ``ACCELPLUG_*`` variable, plugin autoloading off (only the
built-ins, whatever is installed), and a user config directory of their own in ``tmp_path`` (``HOME`` and
``XDG_CONFIG_HOME``), so no developer setting or earlier test leaks in. The config file is found where a
user's would be, in that directory, and does not exist until a test writes it; ``ACCELPLUG_CONFIG_FILE`` is
unset (a test that sets it must name a file that exists, or create it).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .running import run_in_process

REPO = Path(__file__).resolve().parents[2]

RunCli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def user_dirs(tmp_path: Path) -> dict[str, str]:
    """A home and config directory of the command's own (platformdirs reads both)."""
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path)}


@pytest.fixture
def config_file(user_dirs: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where ``accelplug config`` writes: the user config directory's ``config.toml``."""
    from platformdirs import user_config_path

    with monkeypatch.context() as patch:
        for name, value in user_dirs.items():
            patch.setenv(name, value)
        return user_config_path("accelplug", appauthor=False) / "config.toml"


@pytest.fixture
def cli_env(user_dirs: dict[str, str]) -> dict[str, str]:
    """The whole environment a command starts with (a test may change it before calling ``cli``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ACCELPLUG_")}
    env.update(user_dirs)
    env["ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env["COLUMNS"] = "200"  # rich tables: no wrapping inside the words the tests look for
    return env


@pytest.fixture
def cli_process(cli_env: dict[str, str]) -> RunCli:
    """``cli_process("list", "--json", env={...}, input="...")``: a real ``python -m accelplug`` process."""

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


@pytest.fixture
def cli(cli_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RunCli:
    """``cli("list", "--json", env={...}, input="...")``: ``accelplug.cli.main`` run in this process.

    ``env`` is added to ``cli_env`` for the one call, as a child's environment would be; the working folder
    is the test's ``tmp_path`` (``bench`` writes its default folder there). ``timeout`` is accepted for the
    same calls as ``cli_process``; pytest-timeout bounds an in-process call.
    """
    monkeypatch.chdir(tmp_path)

    def run(
        *args: str, env: dict[str, str] | None = None, input: str | None = None, timeout: float | None = None
    ) -> subprocess.CompletedProcess[str]:
        del timeout
        return run_in_process(args, env={**cli_env, **(env or {})}, input=input)

    return run
