"""Configuration: file, environment and argument precedence; ``accelplug config`` and ``config show``."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from accelplug.accelerators import CPUAccelerator, MPSAccelerator
from accelplug.cli.models import ConfigReport
from accelplug.config import load_settings
from accelplug.errors import MisconfigurationException

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def _show(cli: RunCli, env: dict[str, str] | None = None) -> dict[str, tuple[object, str]]:
    result = cli("config", "show", "--json", env=env)
    assert result.returncode == 0, result.stderr
    report = ConfigReport.model_validate_json(result.stdout)
    return {s.key: (s.value, s.source) for s in report.settings}


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_show_without_a_file_gives_builtin_defaults(cli: RunCli) -> None:
    shown = _show(cli)
    assert shown["accelerator"] == ("auto", "built-in default")
    assert shown["precision"] == ("32-true", "built-in default")
    assert shown["num_nodes"] == (1, "built-in default")


def test_default_then_show_round_trips_through_the_file(cli: RunCli, config_file: Path) -> None:
    written = cli("config", "--default", "--devices", "2", "--precision", "bf16", "--num-nodes", "2")
    assert written.returncode == 0, written.stderr
    assert config_file.exists()
    shown = _show(cli)
    assert shown["devices"] == ("2", f"config file {config_file}, line 3")
    assert shown["precision"] == ("bf16-mixed", f"config file {config_file}, line 5")
    assert shown["num_nodes"][0] == 2
    assert shown["accelerator"][0] == "auto"


def test_show_table_names_the_file_and_sources(cli: RunCli, config_file: Path) -> None:
    cli("config", "--default")
    result = cli("config", "show")
    assert result.returncode == 0, result.stderr
    assert f"config file: {config_file} (found)" in result.stdout
    assert "line 2" in result.stdout


def test_environment_variable_beats_the_file(cli: RunCli, config_file: Path) -> None:
    _write(config_file, 'devices = "1"\nprecision = "bf16-mixed"\n')
    shown = _show(cli, env={"ACCELPLUG_DEVICES": "2"})
    assert shown["devices"] == ("2", "environment variable ACCELPLUG_DEVICES='2'")
    assert shown["precision"] == ("bf16-mixed", f"config file {config_file}, line 2")


def test_accelerator_variable_is_the_one_selection_honours(cli: RunCli) -> None:
    assert _show(cli, env={"ACCELPLUG_ACCELERATOR": "cpu"})["accelerator"][0] == "cpu"


def test_explicit_argument_beats_environment_and_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    _write(path, "devices = 1\nnum_nodes = 3\n")
    monkeypatch.setenv("ACCELPLUG_CONFIG_FILE", str(path))
    monkeypatch.setenv("ACCELPLUG_DEVICES", "2")
    settings = load_settings(devices="0,1", strategy=None)
    assert settings.devices == "0,1"
    assert settings.num_nodes == 3
    assert settings.strategy == "auto"  # None means "not given"


def test_malformed_toml_names_file_and_line(cli: RunCli, config_file: Path) -> None:
    _write(config_file, 'accelerator = "cpu"\ndevices = 2 2\n')
    result = cli("config", "show")
    assert result.returncode == 2
    assert str(config_file) in result.stderr
    assert "line 2" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_key_names_file_key_line_and_suggestion(cli: RunCli, config_file: Path) -> None:
    _write(config_file, 'accelerator = "cpu"\n\nprecison = "bf16"\n')
    result = cli("config", "show")
    assert result.returncode == 2
    assert f"config file {config_file}, line 3: unknown key 'precison'" in result.stderr
    assert "Did you mean 'precision'?" in result.stderr


def test_a_table_in_the_file_is_rejected(cli: RunCli, config_file: Path) -> None:
    _write(config_file, "[trainer]\ndevices = 2\n")
    result = cli("config", "show")
    assert result.returncode == 2
    assert "[trainer] is a table" in result.stderr


def test_bad_value_in_the_file_names_key_and_line(cli: RunCli, config_file: Path) -> None:
    _write(config_file, 'devices = "two"\n')
    result = cli("config", "show")
    assert result.returncode == 2
    assert f"devices='two' (from config file {config_file}, line 1) is invalid" in result.stderr


def test_non_numeric_devices_option_is_refused_before_writing(cli: RunCli, config_file: Path) -> None:
    result = cli("config", "--default", "--devices", "abc")
    assert result.returncode == 2
    assert "devices='abc'" in result.stderr
    assert "Accepted forms" in result.stderr
    assert not config_file.exists()


def test_non_numeric_devices_variable_names_the_variable(cli: RunCli) -> None:
    result = cli("config", "show", env={"ACCELPLUG_DEVICES": "abc"})
    assert result.returncode == 2
    assert "environment variable ACCELPLUG_DEVICES='abc'" in result.stderr


def test_default_repairs_a_broken_file(cli: RunCli, config_file: Path) -> None:
    _write(config_file, "this is not toml\n")
    assert cli("config", "--default").returncode == 0
    assert _show(cli)["devices"][0] == "auto"


@pytest.mark.skipif(CPUAccelerator.device_count() < 2, reason="the devices question is asked only with 2+ cores")
def test_questionnaire_answered_on_stdin_writes_the_file(cli: RunCli, config_file: Path) -> None:
    # accelerator, devices (a bad answer first: it is asked again), strategy, precision, multi-node, machines
    answers = "cpu\nabc\n1\nsingle_device\nbf16-mixed\ny\n2\n"
    result = cli("config", input=answers)
    assert result.returncode == 0, result.stderr
    assert "Accepted forms" in result.stdout + result.stderr  # the refused answer was explained
    shown = _show(cli)
    assert {k: v for k, (v, _) in shown.items()} == {
        "accelerator": "cpu",
        "devices": "1",
        "strategy": "single_device",
        "precision": "bf16-mixed",
        "mps_fallback": False,
        "num_nodes": 2,
    }


@pytest.mark.skipif(MPSAccelerator.is_available(), reason="needs a machine where MPS is unavailable")
def test_questionnaire_offers_only_available_accelerators(cli: RunCli) -> None:
    result = cli("config", input="mps\n")  # MPS is not available on this test machine
    assert result.returncode != 0
    assert "'mps' is not one of: auto, " in result.stdout + result.stderr


def test_unknown_setting_name_is_refused() -> None:
    with pytest.raises(MisconfigurationException, match="Did you mean 'devices'"):
        load_settings(device="2")
