"""SIGTERM and SIGINT during fit: a checkpoint, one line, exit 143/130; resuming matches an uninterrupted run.

The process tests send real signals to a real ``fit`` (``scripts/survivor.py``, started cold); the runs they
compare with, which no signal reaches, are forked from the session's ``fit_python``. The in-process ones
send the signal to the test process itself, from inside the loop, to look at the stop's details.
"""

from __future__ import annotations

import csv
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Callback, Trainer
from accelplug.callbacks import ModelCheckpoint
from accelplug.trainer.state import StopReason
from tests.modules import LinearRegression, quiet, regression_data
from tests.processes import child_env
from tests.warm_python import WarmPython

SURVIVOR = Path(__file__).resolve().parents[2] / "scripts" / "survivor.py"
STEPS = 40
_LINE = re.compile(r"^accelplug: (SIGTERM|SIGINT): stopped after step (\d+); checkpoint saved to (\S+); resume with ")


def _survivor(root: Path, *args: str) -> list[str]:
    return [sys.executable, str(SURVIVOR), "--root-dir", str(root), "--max-steps", str(STEPS), *args]


def _digest(stdout: str) -> str:
    done = [line for line in stdout.splitlines() if line.startswith("DONE")]
    assert len(done) == 1, stdout
    assert f"step={STEPS}" in done[0], done[0]
    return done[0].split("weights=")[1]


def _finish(python: WarmPython, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The fit run to its end in a child of ``python`` (no signal in it: a process of its own, not a cold one)."""
    result = python.run(_survivor(root, *args)[1:], env=child_env(), cwd=root, timeout=120)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture(scope="module")
def uninterrupted(fit_python: WarmPython, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The final weights' digest of the same fit run to the end without a signal."""
    return _digest(_finish(fit_python, tmp_path_factory.mktemp("uninterrupted")).stdout)


def _interrupt(root: Path, signum: int, *args: str) -> tuple[subprocess.Popen[str], str, str]:
    """Start the fit, send ``signum`` once it reached step 5, and return (process, stdout, stderr)."""
    child = subprocess.Popen(
        _survivor(root, "--ready-step", "5", "--step-sleep", "0.05", *args),
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    ready = child.stdout.readline()
    assert ready.startswith("READY"), ready
    child.send_signal(signum)
    out, err = child.communicate(timeout=120)
    return child, ready + out, err


def _reported(err: str) -> list[str]:
    """What the interrupted run wrote to stderr besides the Trainer's start-up INFO lines (Lightning's, shown as
    Lightning shows them): the one line of the stop."""
    return [line for line in err.strip().splitlines() if not line.startswith(("GPU available:", "TPU available:"))]


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)], ids=["SIGTERM", "SIGINT"])
def test_a_signal_mid_fit_checkpoints_exits_with_one_line_and_resuming_equals_an_uninterrupted_run(
    tmp_path: Path, request: pytest.FixtureRequest, fit_python: WarmPython, signum: int, code: int
) -> None:
    child, out, err = _interrupt(tmp_path, signum)
    assert child.returncode == code, err
    lines = _reported(err)
    assert len(lines) == 1, err
    assert "Traceback" not in err
    match = _LINE.match(lines[0])
    assert match, lines[0]
    name, step, path = match.group(1), int(match.group(2)), Path(match.group(3))
    assert name == signal.Signals(signum).name
    assert 5 <= step < STEPS
    assert path == tmp_path / "lightning_logs" / "version_0" / "checkpoints" / "last.ckpt"
    state = torch.load(path, weights_only=True)
    assert state["loop"]["global_step"] == step
    assert f"STOPPED rank=0 step={step} by=FitInterrupted" in out, "on_exception ran"
    assert "DONE" not in out, "fit ended the process: the script after fit did not run"
    with (path.parent.parent / "metrics.csv").open() as file:
        rows = list(csv.DictReader(file))  # Lightning's sorted columns
    assert rows[0]["step"] == "4", "the metrics logged before the signal were flushed (Lightning's step: 4)"
    if signum == signal.SIGINT:
        return  # the same stop and checkpoint as SIGTERM's; resuming it once is enough
    # the new Trainer logs to version_1: "auto" (the line's advice) finds the file in version_0, and says so
    resumed = _finish(fit_python, tmp_path, "--ckpt-path", "auto")
    assert f"resuming from {path} (step {step})" in resumed.stderr
    assert _digest(resumed.stdout) == request.getfixturevalue("uninterrupted")


@pytest.mark.slow
def test_a_second_sigint_during_the_checkpoint_write_stops_at_once_and_leaves_the_previous_file(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "ckpts"
    slow = ("--every-n-steps", "2", "--dirpath", str(folder), "--slow-interrupt-save")
    child = subprocess.Popen(
        _survivor(tmp_path, "--ready-step", "5", "--step-sleep", "0.05", *slow),
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().startswith("READY")
    child.send_signal(signal.SIGINT)
    assert child.stdout.readline().strip() == "SAVING", "the checkpoint write began"
    previous = torch.load(folder / "last.ckpt", weights_only=True)
    child.send_signal(signal.SIGINT)
    _out, err = child.communicate(timeout=60)
    assert child.returncode == 130, err
    lines = _reported(err)
    assert len(lines) == 1, err
    assert lines[0].startswith("accelplug: SIGINT again: stopped at once, without writing a checkpoint")
    now = torch.load(folder / "last.ckpt", weights_only=True)
    assert now["loop"] == previous["loop"], "the half-written save never replaced the file"
    assert list(folder.glob(".*.tmp")) == [], "the interrupted save removed its temporary file"


# ---- in-process: the stop's details -----------------------------------------------------------------
class _SignalAt(Callback):
    """Sends ``signum`` to this very process after batch ``at`` (the loop is the main thread's)."""

    def __init__(self, at: int, signum: int = signal.SIGTERM) -> None:
        self.at, self.signum = at, signum
        self.handlers: list[Any] = []

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        self.handlers.append(signal.getsignal(self.signum))
        if batch_idx == self.at and trainer.current_epoch == 0:
            os.kill(os.getpid(), self.signum)


@pytest.fixture
def own_handler() -> Iterator[Any]:
    """A handler of the test's own installed for SIGTERM, to check fit puts it back."""

    def mine(signum: int, frame: Any) -> None:
        raise AssertionError("fit should have handled this signal")

    previous = signal.signal(signal.SIGTERM, mine)
    yield mine
    signal.signal(signal.SIGTERM, previous)


def test_the_stop_waits_for_the_accumulation_window_and_fit_restores_the_handler(
    tmp_path: Path, own_handler: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    signaller = _SignalAt(at=1)
    trainer = Trainer(
        **quiet(max_steps=50, accumulate_grad_batches=3, min_steps=40, logger=False, default_root_dir=tmp_path,
                callbacks=[signaller])
    )  # fmt: skip
    with pytest.raises(SystemExit) as stopped:
        trainer.fit(LinearRegression(), regression_data(n=256, batch_size=8))
    assert stopped.value.code == 143
    assert trainer.interrupted and trainer.stop_reason is StopReason.SIGNAL
    assert trainer.global_step == 1, "stopped at the end of the first window, not after batch 1; min_steps ignored"
    assert signal.getsignal(signal.SIGTERM) is own_handler, "the previous handler is back"
    assert own_handler not in signaller.handlers, "fit had its own handler installed while training"
    saved = torch.load(trainer.checkpoint_callback.last_model_path, weights_only=True)  # type: ignore[union-attr]
    assert saved["loop"]["batches_done"] == 3
    assert capsys.readouterr().err.count("\n") == 1


class _SignalAtFitEnd(Callback):
    def on_fit_end(self, trainer: Any, pl_module: Any) -> None:
        os.kill(os.getpid(), signal.SIGTERM)


def test_a_signal_too_late_to_stop_the_loop_reaches_the_previous_handler_when_fit_ends(tmp_path: Path) -> None:
    received: list[int] = []
    previous = signal.signal(signal.SIGTERM, lambda signum, frame: received.append(signum))
    try:
        trainer = Trainer(**quiet(max_steps=3, logger=False, default_root_dir=tmp_path, callbacks=[_SignalAtFitEnd()]))
        trainer.fit(LinearRegression(), regression_data(n=64, batch_size=8))
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert trainer.global_step == 3 and not trainer.interrupted
    assert received == [signal.SIGTERM], "delivered once fit was done, not swallowed"


def test_fit_in_another_thread_installs_no_handler_and_trains(tmp_path: Path, own_handler: Any) -> None:
    trainer = Trainer(**quiet(max_steps=3, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    errors: list[BaseException] = []

    def fit() -> None:
        try:
            trainer.fit(LinearRegression(), regression_data(n=64, batch_size=8))
        except BaseException as exc:
            errors.append(exc)

    worker = threading.Thread(target=fit)
    worker.start()
    worker.join(timeout=60)
    assert errors == [] and trainer.global_step == 3
    assert signal.getsignal(signal.SIGTERM) is own_handler


def test_without_a_checkpoint_callback_the_signal_checkpoint_goes_to_the_run_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    trainer = Trainer(
        **quiet(max_steps=50, enable_checkpointing=False, logger=False, default_root_dir=tmp_path,
                callbacks=[_SignalAt(at=2, signum=signal.SIGINT)])
    )  # fmt: skip
    with pytest.raises(SystemExit) as stopped:
        trainer.fit(LinearRegression(), regression_data(n=256, batch_size=8))
    assert stopped.value.code == 130
    # without a logger the run folder (trainer.log_dir) is default_root_dir, as in Lightning
    target = tmp_path / "checkpoints" / "last.ckpt"
    assert torch.load(target, weights_only=True)["loop"]["global_step"] == 3
    assert f"checkpoint saved to {target}" in capsys.readouterr().err


# ---- restarts and ckpt_path="auto" -------------------------------------------------------------------
#: a second fit into the first one's checkpoint folder (resuming from it) is warned about, as Lightning warns
NOT_EMPTY = r"Checkpoint directory .*checkpoints exists and is not empty"


def _auto_trainer(root: Path, steps: int) -> Trainer:
    callback = ModelCheckpoint(every_n_train_steps=2, every_n_epochs=None)
    return Trainer(**quiet(max_steps=steps, logger=False, default_root_dir=root, callbacks=[callback], seed=0))


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
def test_ckpt_path_auto_starts_fresh_without_a_checkpoint_and_resumes_with_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = _auto_trainer(tmp_path, 4)
    first.fit(LinearRegression(), regression_data(n=64, batch_size=8), ckpt_path="auto")
    assert first.global_step == 4
    assert "no checkpoint under" in capsys.readouterr().err
    second = _auto_trainer(tmp_path, 6)
    with pytest.warns(UserWarning, match=NOT_EMPTY):
        second.fit(LinearRegression(), regression_data(n=64, batch_size=8), ckpt_path="auto")
    assert second.global_step == 6
    line = capsys.readouterr().err.strip()
    assert line.startswith('accelplug: ckpt_path="auto": resuming from ') and line.endswith("(step 4).")


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
def test_a_restarted_worker_resumes_from_the_previous_attempts_checkpoint_by_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    torch.manual_seed(0)
    uninterrupted = LinearRegression()
    _auto_trainer(tmp_path / "whole", 6).fit(uninterrupted, regression_data(n=64, batch_size=8))
    torch.manual_seed(0)
    _auto_trainer(tmp_path, 4).fit(LinearRegression(), regression_data(n=64, batch_size=8))  # attempt 0
    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "1")
    torch.manual_seed(0)
    resumed = LinearRegression()
    restarted = _auto_trainer(tmp_path, 6)  # a fresh Trainer: a new version_N folder
    with pytest.warns(UserWarning, match=NOT_EMPTY):
        restarted.fit(resumed, regression_data(n=64, batch_size=8))
    line = capsys.readouterr().err.strip()
    assert re.fullmatch(
        r"accelplug: restart 1 of this job \(TORCHELASTIC_RESTART_COUNT=1\): resuming from "
        r".*/checkpoints/epoch=0-step=4\.ckpt \(step 4\)\.",  # logger=False: Lightning's root/checkpoints
        line,
    ), line
    for name, value in uninterrupted.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[name]), name


def test_a_restarted_worker_with_no_checkpoint_trains_from_the_start_and_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TORCHELASTIC_RESTART_COUNT", "2")
    trainer = _auto_trainer(tmp_path, 2)
    trainer.fit(LinearRegression(), regression_data(n=64, batch_size=8))
    assert trainer.global_step == 2
    assert "restart 2 of this job (TORCHELASTIC_RESTART_COUNT=2): no checkpoint under" in capsys.readouterr().err
