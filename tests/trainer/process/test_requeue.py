"""Slurm's requeue signal in one process: a chosen signal saves ``hpc_ckpt_N.ckpt``, and the next fit resumes exactly.

The end to end run (two ranks, a real ``scontrol requeue``, the job started again by Slurm) is
``tests/clusters/test_slurm_training.py``; here a Slurm task of one is simulated with srun's
variables, and ``scontrol`` is kept off ``PATH`` so the failing requeue is reported, not hidden.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Callback, Trainer
from accelplug.environments import SLURMEnvironment
from tests.environments.captured import SRUN_TASK_1, launcher_variables
from tests.modules import LinearRegression, quiet, regression_data

#: One srun task of a job of one.
SRUN_ALONE = {
    **SRUN_TASK_1,
    "SLURM_NTASKS": "1",
    "SLURM_NPROCS": "1",
    "SLURM_PROCID": "0",
    "SLURM_LOCALID": "0",
    "SLURM_GTIDS": "0",
    "SLURM_STEP_NUM_TASKS": "1",
    "SLURM_STEP_TASKS_PER_NODE": "1",
    "SLURM_TASKS_PER_NODE": "1",
    "SLURM_JOB_ID": "77",
}


@pytest.fixture(autouse=True)
def slurm_task(tmp_path: Path) -> Iterator[None]:
    before = dict(os.environ)
    for name in launcher_variables():
        del os.environ[name]
    os.environ.update(SRUN_ALONE)
    os.environ["PATH"] = str(tmp_path / "no-scontrol-here")
    yield
    os.environ.clear()
    os.environ.update(before)


class SignalAt(Callback):
    def __init__(self, step: int, signum: int) -> None:
        self.step, self.signum = step, signum

    def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
        if trainer.global_step == self.step:
            signal.raise_signal(self.signum)


def _trainer(root: Path, **options: Any) -> Trainer:
    return Trainer(**quiet(max_epochs=2, default_root_dir=root, logger=False, log_every_n_steps=1, **options))


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
def test_the_requeue_signal_saves_an_hpc_checkpoint_and_the_next_fit_resumes_to_the_same_weights(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch.manual_seed(0)
    uninterrupted = LinearRegression()
    _trainer(tmp_path / "whole").fit(uninterrupted, regression_data())

    root = tmp_path / "requeued"
    environment = SLURMEnvironment(requeue_signal=signal.SIGUSR2)
    torch.manual_seed(0)
    first = LinearRegression()
    with pytest.raises(SystemExit) as stopped:
        _trainer(root, plugins=[environment], callbacks=[SignalAt(3, signal.SIGUSR2)]).fit(first, regression_data())
    assert stopped.value.code == 128 + signal.SIGUSR2
    assert [p.name for p in root.glob("hpc_ckpt_*.ckpt")] == ["hpc_ckpt_1.ckpt"]
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line == (
        f"accelplug: SIGUSR2: stopped after step 3; checkpoint saved to {root / 'hpc_ckpt_1.ckpt'}; "
        "requeueing failed: cannot requeue the job: `scontrol` is not on PATH in this process."
    )

    resumed = LinearRegression()  # fresh weights: everything comes from the checkpoint
    trainer = _trainer(root, plugins=[SLURMEnvironment()])
    trainer.fit(resumed, regression_data())  # ckpt_path=None in a Slurm task: the newest hpc checkpoint
    assert trainer.global_step == 16
    for name, value in uninterrupted.state_dict().items():
        assert torch.equal(resumed.state_dict()[name], value), name


def test_without_auto_requeue_the_signal_is_left_alone(tmp_path: Path) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGUSR2, lambda signum, frame: received.append(signum))
    try:
        trainer = _trainer(
            tmp_path,
            plugins=[SLURMEnvironment(auto_requeue=False, requeue_signal=signal.SIGUSR2)],
            callbacks=[SignalAt(3, signal.SIGUSR2)],
        )
        trainer.fit(LinearRegression(), regression_data())
    finally:
        signal.signal(signal.SIGUSR2, previous)
    assert received == [signal.SIGUSR2] and trainer.global_step == 16
    assert not list(tmp_path.glob("hpc_ckpt_*"))


def test_the_requeue_arguments_are_lightnings() -> None:
    from lightning.fabric.plugins.environments import SLURMEnvironment as Theirs

    for options in ({}, {"auto_requeue": False}, {"requeue_signal": signal.SIGUSR2}):
        mine, theirs = SLURMEnvironment(**options), Theirs(**options)
        assert (mine.auto_requeue, mine.requeue_signal) == (theirs.auto_requeue, theirs.requeue_signal)
