"""Lightning's INFO lines that scripts and their tests read from the log, in Lightning's words.

They go to the ``accelplug.trainer`` logger (shown where a script configures ``logging``); what each says is
compared with the line Lightning 2.6 writes for the same run.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from pytest_mock import MockerFixture

import accelplug
import accelplug.accelerators.cuda as cuda_module
from accelplug.errors import PossibleUserWarning
from accelplug.hardware import _nvml
from accelplug.precision.mixed import announce_amp
from tests.modules import LinearRegression, regression_data

QUIET: dict[str, Any] = {
    "logger": False,
    "enable_progress_bar": False,
    "enable_model_summary": False,
    "enable_checkpointing": False,
}


def _lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "accelplug.trainer"]


def test_a_trainer_says_whether_a_gpu_and_a_tpu_are_available_and_used(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="accelplug.trainer"):
        accelplug.Trainer(accelerator="cpu", **QUIET)
    assert _lines(caplog) == ["GPU available: False, used: False", "TPU available: False, using: 0 TPU cores"]


@pytest.fixture
def cuda_counted_afresh() -> Iterator[None]:
    """CUDA's count is read once per process: read again while a test fakes it, and once more after."""
    cuda_module._probe_cached.cache_clear()
    yield
    cuda_module._probe_cached.cache_clear()


@pytest.mark.usefixtures("cuda_counted_afresh")
def test_a_gpu_left_unused_is_named_and_warned_about(caplog: pytest.LogCaptureFixture, mocker: MockerFixture) -> None:
    # This machine has no GPU: a CUDA build and one GPU are what the CUDA accelerator reads (torch, NVML).
    mocker.patch.object(torch.version, "cuda", "12.8")
    mocker.patch.object(_nvml, "visible_gpus", return_value=[_nvml.GpuInfo(0, 0, "H100", "GPU-0", 80 << 30)])
    with (
        caplog.at_level(logging.INFO, logger="accelplug.trainer"),
        pytest.warns(PossibleUserWarning, match=r"^GPU available but not used\. You can set it by doing") as seen,
    ):
        accelplug.Trainer(accelerator="cpu", **QUIET)
    assert _lines(caplog)[0] == "GPU available: True (cuda), used: False"
    assert seen[0].filename == __file__  # pointed at the line that made the Trainer


def test_a_fit_says_which_limit_ended_it(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    with caplog.at_level(logging.INFO, logger="accelplug.trainer"):
        accelplug.Trainer(default_root_dir=tmp_path, max_epochs=1, **QUIET).fit(
            LinearRegression(), regression_data(n=64)
        )
        accelplug.Trainer(default_root_dir=tmp_path, max_steps=3, **QUIET).fit(
            LinearRegression(), regression_data(n=64)
        )
    stops = [line for line in _lines(caplog) if line.startswith("`Trainer.fit` stopped")]
    assert stops == ["`Trainer.fit` stopped: `max_epochs=1` reached.", "`Trainer.fit` stopped: `max_steps=3` reached."]


def test_a_checkpoint_read_is_announced_before_and_after(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    trainer = accelplug.Trainer(default_root_dir=tmp_path, max_epochs=1, **QUIET)
    trainer.fit(LinearRegression(), regression_data(n=64))
    path = tmp_path / "saved.ckpt"
    trainer.save_checkpoint(path)
    with caplog.at_level(logging.INFO, logger="accelplug.trainer"):
        accelplug.Trainer(default_root_dir=tmp_path, max_epochs=2, **QUIET).fit(
            LinearRegression(), regression_data(n=64), ckpt_path=path
        )
        accelplug.Trainer(default_root_dir=tmp_path, **QUIET).validate(
            LinearRegression(), regression_data(n=64, shuffle=False), ckpt_path=path, verbose=False
        )
    restores = [line for line in _lines(caplog) if "checkpoint" in line]
    assert restores == [
        f"Restoring states from the checkpoint path at {path}",
        f"Restored all states from the checkpoint at {path}",
        f"Restoring states from the checkpoint path at {path}",
        f"Loaded model weights from the checkpoint at {path}",
    ]


def test_a_run_under_autocast_says_so(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        accelplug.Trainer(accelerator="cpu", precision="bf16-mixed", **QUIET)
        accelplug.Fabric(accelerator="cpu", precision="bf16-mixed")
        accelplug.Trainer(accelerator="cpu", precision="32-true", **QUIET)
    said = [(r.name, r.getMessage()) for r in caplog.records if "Automatic Mixed Precision" in r.getMessage()]
    line = "Using bfloat16 Automatic Mixed Precision (AMP)"
    assert said == [("accelplug.trainer", line), ("accelplug.fabric", line)]


def test_float16_autocast_keeps_the_trainers_and_fabrics_own_spelling(caplog: pytest.LogCaptureFixture) -> None:
    # float16 autocast needs a GPU; the words are Lightning's Trainer's ("16bit") and Fabric's ("16-bit").
    with caplog.at_level(logging.INFO):
        announce_amp("16-mixed", "accelplug.trainer")
        announce_amp("16-mixed", "accelplug.fabric", sixteen="16-bit")
    assert [r.getMessage() for r in caplog.records] == [
        "Using 16bit Automatic Mixed Precision (AMP)",
        "Using 16-bit Automatic Mixed Precision (AMP)",
    ]
