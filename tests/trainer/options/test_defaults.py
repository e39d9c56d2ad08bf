"""The Trainer reads its defaults like launch and demo: argument > ACCELPLUG_* > config file > built-in."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import accelplug
from accelplug import MisconfigurationException, Trainer


@pytest.fixture
def config_file(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    path = tmp_path / "config.toml"
    path.write_text('precision = "64"\nstrategy = "single_device"\ndevices = "1"\n')
    monkeypatch.setenv("ACCELPLUG_CONFIG_FILE", str(path))
    return path


def test_built_in_defaults_without_settings() -> None:
    trainer = Trainer(accelerator="cpu")
    assert trainer.precision == "32-true"
    assert trainer.origins["precision"] == "built-in default"


def test_the_config_file_beats_the_built_in_default(config_file: Path) -> None:
    trainer = Trainer(accelerator="cpu")
    assert trainer.precision == "64-true"
    assert trainer.origins["precision"].startswith(f"config file {config_file}")


def test_an_environment_variable_beats_the_config_file(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELPLUG_PRECISION", "bf16")
    trainer = Trainer(accelerator="cpu")
    assert trainer.precision == "bf16-mixed"
    assert trainer.origins["precision"] == "environment variable ACCELPLUG_PRECISION='bf16'"


def test_an_argument_beats_everything(config_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELPLUG_PRECISION", "bf16")
    trainer = Trainer(accelerator="cpu", precision="32-true")
    assert trainer.precision == "32-true"
    assert trainer.origins["precision"] == "argument"


def test_the_accelerator_from_the_environment_is_chosen_by_auto_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ACCELPLUG_ACCELERATOR", "cpu")
    trainer = Trainer()
    assert trainer.accelerator.name == "cpu"
    assert "ACCELPLUG_ACCELERATOR='cpu'" in trainer.selection.reason


def test_a_bad_saved_value_names_where_it_came_from(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELPLUG_PRECISION", "bf17")
    with pytest.raises(MisconfigurationException, match=r"ACCELPLUG_PRECISION.*bf17.*Did you mean 'bf16'"):
        Trainer(accelerator="cpu")


# a fit of 8 batches under the default log_every_n_steps: Lightning's hint about it is not what this test checks
@pytest.mark.filterwarnings(r"ignore:The number of training batches \(8\) is smaller than the logging interval")
def test_the_start_up_line_says_where_a_saved_value_came_from(
    config_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.modules import LinearRegression, regression_data

    trainer = Trainer(accelerator="cpu", max_steps=1, default_root_dir=tmp_path, enable_model_summary=False)
    trainer.fit(LinearRegression(), regression_data())
    err = capsys.readouterr().err
    assert f"precision 64-true (from config file {config_file}" in err
    assert os.environ["ACCELPLUG_CONFIG_FILE"] == str(config_file)


def test_lightnings_pl_trainer_variables_default_the_arguments_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    lightning = pytest.importorskip("lightning")
    monkeypatch.setenv("PL_TRAINER_LOGGER", "False")
    monkeypatch.setenv("PL_TRAINER_MAX_STEPS", "7")
    for framework in (lightning, accelplug):
        trainer = framework.Trainer(enable_checkpointing=False)
        assert (trainer.logger, trainer.max_steps) == (None, 7), framework.__name__


def test_an_argument_passed_wins_over_a_pl_trainer_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PL_TRAINER_MAX_STEPS", "7")
    assert accelplug.Trainer(max_steps=42, logger=False).max_steps == 42
