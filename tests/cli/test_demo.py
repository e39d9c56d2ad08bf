"""``accelplug demo`` trains a real classifier well enough to pass its accuracy bar."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from accelplug.demos.classifier import ACCURACY_BAR, run_demo
from tests.processes import REPO, child_env


@pytest.mark.slow
def test_demo_beats_the_accuracy_bar_and_reports_its_files(tmp_path: Path) -> None:
    result = run_demo(cpu=True, max_epochs=8, root_dir=tmp_path)
    assert result.accuracy > ACCURACY_BAR
    assert result.accelerator == "cpu"
    assert result.checkpoint is not None and result.checkpoint.is_file()
    assert result.metrics_csv is not None and result.metrics_csv.is_file()


@pytest.mark.slow
def test_demo_command_explains_the_choice_and_exits_0(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "accelplug", "demo", "--cpu", "--max-epochs", "6", "--root-dir", str(tmp_path)],
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        capture_output=True,
        text=True,
        timeout=180,
        cwd=REPO,
    )
    assert result.returncode == 0, result.stderr
    assert "why: 'cpu' was requested" in result.stdout
    assert "validation accuracy" in result.stdout
    assert str(tmp_path) in result.stdout


def test_demo_without_scikit_learn_says_which_extra_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug import MisconfigurationException

    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.datasets", None)
    with pytest.raises(MisconfigurationException, match=r'pip install "accelplug\[demo\]"'):
        run_demo(cpu=True, max_epochs=1)
