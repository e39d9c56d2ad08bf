"""Configuration: file, environment and argument precedence; ``accelplug config`` and ``config show``."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from accelplug.accelerators import CPUAccelerator, MPSAccelerator
from accelplug.cli.reports import ConfigReport
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
    # accelerator, devices (a bad answer first: it is asked again), multi-node, machines, precision, confirm.
    # Two machines mean two processes, so no strategy question: 'single_device' cannot run them.
    answers = "cpu\nabc\n1\ny\n2\nbf16-mixed\ny\n"
    result = cli("config", input=answers)
    assert result.returncode == 0, result.stderr
    assert "Accepted forms" in result.stdout + result.stderr  # the refused answer was explained
    shown = _show(cli)
    assert {k: v for k, (v, _) in shown.items()} == {
        "accelerator": "cpu",
        "devices": "1",
        "strategy": "auto",
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


# ---- the questionnaire follows the selection rules ------------------------------------------------
needs_two_cores = pytest.mark.skipif(
    CPUAccelerator.device_count() < 2, reason="the devices question is asked only with 2+ cores"
)


def _written(cli: RunCli) -> dict[str, object]:
    return {k: v for k, (v, _) in _show(cli).items()}


@needs_two_cores
def test_devices_prompt_and_refusal_say_the_same_about_auto(cli: RunCli) -> None:
    result = cli("config", input="cpu\nabc\n1\nn\nauto\n32\ny\n")
    assert result.returncode == 0, result.stderr
    auto = f"'auto' = 1 here (not all {CPUAccelerator.device_count()})"
    question = result.stdout.split("How many cpu devices")[1].split("[auto]")[0]
    assert auto in question
    assert f"'abc' is not a devices value for cpu. Accepted forms here: {auto}" in result.stdout + result.stderr
    assert "all devices of the accelerator" not in result.stdout + result.stderr


@needs_two_cores
def test_several_devices_get_no_single_device_strategy(cli: RunCli) -> None:
    result = cli("config", input="cpu\n2\nn\nbf16\ny\n")
    assert result.returncode == 0, result.stderr
    assert "Which strategy" not in result.stdout
    assert _written(cli)["strategy"] == "auto"


@needs_two_cores
def test_one_device_may_choose_single_device(cli: RunCli) -> None:
    result = cli("config", input="cpu\n1\nn\nsingle_device\n32\ny\n")
    assert result.returncode == 0, result.stderr
    assert "Which strategy for 1 process(es) per run? [auto/single_device/ddp]" in result.stdout
    written = _written(cli)
    assert (written["strategy"], written["precision"]) == ("single_device", "32-true")


def test_precision_aliases_are_accepted_and_typos_get_a_suggestion(cli: RunCli) -> None:
    # accelerator, devices (asked only with 2+ cores), multi-node, strategy, precision typo then alias, confirm
    devices = "1\n" if CPUAccelerator.device_count() > 1 else ""
    result = cli("config", input=f"cpu\n{devices}n\nauto\nbf15\nbf16\ny\n")
    assert result.returncode == 0, result.stderr
    assert "'bf15' is not one of: " in result.stdout + result.stderr
    assert "Did you mean 'bf16'?" in result.stdout + result.stderr
    assert _written(cli)["precision"] == "bf16-mixed"


def test_the_summary_comes_before_writing_and_no_writes_nothing(cli: RunCli, config_file: Path) -> None:
    devices = "1\n" if CPUAccelerator.device_count() > 1 else ""
    result = cli("config", input=f"cpu\n{devices}n\nauto\n64\nn\n")
    assert result.returncode == 0, result.stderr
    summary = result.stdout.split("Summary:")[1]
    assert "precision    = 64-true" in summary
    assert f"Write these to {config_file}? [Y/n]" in summary
    assert "Nothing written." in result.stdout
    assert not config_file.exists()


@pytest.mark.skipif(MPSAccelerator.is_available(), reason="needs a machine where MPS is unavailable")
def test_questionnaire_refuses_a_preset_accelerator_this_machine_cannot_run(cli: RunCli) -> None:
    result = cli("config", "--accelerator", "mps", input="")
    assert result.returncode == 2
    assert result.stderr.startswith("accelplug: error: accelerator='mps' cannot be used on this machine")


@pytest.mark.parametrize(
    ("presets", "message"),
    [
        (["--devices", "2", "--strategy", "single_device"], "devices='2' asks for several"),
        (["--devices", "0,1", "--strategy", "single_device"], "devices='0,1' asks for several"),
        (["--num-nodes", "2", "--strategy", "single_device"], "num_nodes=2 asks for several"),
        (["--accelerator", "mps", "--strategy", "ddp"], "strategy='ddp' cannot run on 'mps'"),
        (["--accelerator", "mps", "--num-nodes", "3"], "does not support 'ddp'"),
        (["--accelerator", "mps", "--precision", "64"], "precision='64-true' cannot run on 'mps'"),
        (["--precision", "bf15"], "Did you mean 'bf16'?"),
    ],
)
def test_default_refuses_presets_no_machine_can_run(
    cli: RunCli, config_file: Path, presets: list[str], message: str
) -> None:
    result = cli("config", "--default", *presets)
    assert result.returncode == 2
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not config_file.exists()


def test_default_may_prepare_a_file_for_another_machine(cli: RunCli) -> None:
    result = cli("config", "--default", "--accelerator", "cuda", "--devices", "8", "--precision", "16")
    assert result.returncode == 0, result.stderr
    assert (_written(cli)["accelerator"], _written(cli)["precision"]) == ("cuda", "16-mixed")


# ---- the config file path -------------------------------------------------------------------------
def test_an_unwritable_config_path_is_one_line(cli: RunCli) -> None:
    result = cli("config", "--default", env={"ACCELPLUG_CONFIG_FILE": "/dev/null/config.toml"})
    assert result.returncode == 2
    assert result.stderr == (
        "accelplug: error: cannot write the config file /dev/null/config.toml (from ACCELPLUG_CONFIG_FILE): "
        "/dev/null is not a folder. Choose a writable path with ACCELPLUG_CONFIG_FILE=/path/to/config.toml.\n"
    )


def test_a_folder_as_config_path_is_one_line(cli: RunCli, tmp_path: Path) -> None:
    result = cli("config", "--default", env={"ACCELPLUG_CONFIG_FILE": str(tmp_path)})
    assert result.returncode == 2
    assert "that path is a folder" in result.stderr


def test_a_config_file_variable_naming_a_missing_file_is_an_error(cli: RunCli, tmp_path: Path) -> None:
    missing = tmp_path / "typo" / "config.toml"
    result = cli("config", "show", env={"ACCELPLUG_CONFIG_FILE": str(missing)})
    assert result.returncode == 2
    assert f"ACCELPLUG_CONFIG_FILE='{missing}' names a config file that does not exist" in result.stderr
    assert "accelplug config --default" in result.stderr


def test_default_creates_the_file_the_variable_names(cli: RunCli, tmp_path: Path) -> None:
    named = tmp_path / "new" / "config.toml"
    env = {"ACCELPLUG_CONFIG_FILE": str(named)}
    assert cli("config", "--default", "--precision", "bf16", env=env).returncode == 0
    assert _show(cli, env=env)["precision"] == ("bf16-mixed", f"config file {named}, line 5")


def test_load_settings_refuses_a_missing_file_named_by_the_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("ACCELPLUG_CONFIG_FILE", str(tmp_path / "nope.toml"))
    with pytest.raises(MisconfigurationException, match="names a config file that does not exist"):
        load_settings()


# ---- unknown ACCELPLUG_* variables ----------------------------------------------------------------
@pytest.fixture
def fresh_reports(monkeypatch: pytest.MonkeyPatch) -> None:
    """Forget which unknown variables this test process already reported."""
    from accelplug import envvars

    monkeypatch.setattr(envvars, "_REPORTED", set())


@pytest.mark.usefixtures("fresh_reports")
def test_load_settings_warns_once_about_an_unknown_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELPLUG_DEVICE", "2")
    with pytest.warns(UserWarning, match=r"ACCELPLUG_DEVICE is not one accelplug reads.*'ACCELPLUG_DEVICES'"):
        load_settings()
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_settings()  # already reported in this process


@pytest.mark.usefixtures("fresh_reports")
def test_only_rank_0_warns_about_unknown_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    import warnings

    monkeypatch.setenv("ACCELPLUG_DEVICE", "2")
    monkeypatch.setenv("RANK", "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        load_settings()


def test_the_cli_warns_once_about_an_unknown_variable(cli: RunCli) -> None:
    result = cli("config", "show", env={"ACCELPLUG_PRECISON": "bf16"})
    assert result.returncode == 0, result.stderr
    assert result.stderr == (
        "accelplug: warning: environment variable ACCELPLUG_PRECISON is not one accelplug reads, so it has no "
        "effect. Did you mean 'ACCELPLUG_PRECISION'?\n"
    )
