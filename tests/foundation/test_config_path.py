"""Where ``Trainer()`` looks for the config file: the folder platformdirs names, found without importing it.

``accelplug.envvars.config_path`` answers on Linux from ``XDG_CONFIG_HOME``/``HOME`` itself (platformdirs'
import is a large share of start-up, issue 28) and asks platformdirs elsewhere; these tests hold the two
answers equal on this machine, so a platformdirs release that changes its Linux rule is noticed.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from platformdirs import user_config_path

from accelplug.envvars import config_path

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="the platformdirs-free answer is Linux's")


def _platformdirs_answer() -> Path:
    return user_config_path("accelplug", appauthor=False) / "config.toml"


@pytest.mark.parametrize("xdg", ["absolute", "absolute/", "relative", "", None])
def test_the_config_file_is_where_platformdirs_puts_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, xdg: str | None
) -> None:
    monkeypatch.delenv("ACCELPLUG_CONFIG_FILE", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    if xdg is None:
        monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    else:
        monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / xdg) if xdg.startswith("absolute") else xdg)
    assert config_path() == _platformdirs_answer()


def test_a_relative_home_is_left_to_platformdirs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ACCELPLUG_CONFIG_FILE", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("HOME", "not/absolute")
    assert config_path() == _platformdirs_answer()


def test_the_variable_naming_a_file_wins(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("ACCELPLUG_CONFIG_FILE", str(tmp_path / "mine.toml"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    assert config_path() == tmp_path / "mine.toml"
