"""The progress display a fit picks: plain lines when stderr is no terminal, a rich bar on one."""

from __future__ import annotations

from pathlib import Path

import pytest

from accelplug import Trainer
from tests.modules import LinearRegression, regression_data


def test_progress_is_plain_lines_when_output_is_not_a_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trainer = Trainer(accelerator="cpu", max_epochs=2, default_root_dir=tmp_path, log_every_n_steps=1)
    trainer.fit(LinearRegression(), regression_data())
    err = capsys.readouterr().err
    assert "epoch 0 done at step 8: train_loss=" in err
    assert "epoch 1 done at step 16" in err


def test_progress_is_a_rich_bar_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    from accelplug.trainer.display.progress import RichProgressDisplay, make_progress

    monkeypatch.setattr("sys.stderr.isatty", lambda: True)
    assert isinstance(make_progress(True), RichProgressDisplay)
