"""``AsyncCheckpointIO``: real background threads writing real files while training goes on, real signals."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import Callback, Trainer
from accelplug.checkpoint import BackgroundSaveError
from accelplug.plugins import AsyncCheckpointIO, TorchCheckpointIO
from tests.modules import LinearRegression, quiet, regression_data
from tests.processes import REPO, child_env


class SlowIO(TorchCheckpointIO):
    """accelplug's writer, made slow so training visibly goes on while a file is written."""

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def save_checkpoint(self, checkpoint: dict[str, Any], path: Any, storage_options: Any = None) -> None:
        time.sleep(self.delay)
        super().save_checkpoint(checkpoint, path, storage_options)


class SaveAt(Callback):
    """Asks for a checkpoint at one step and keeps a copy of the weights of that moment."""

    def __init__(self, step: int, path: Path) -> None:
        self.step, self.path, self.weights = step, path, None

    def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
        if trainer.global_step == self.step:
            self.weights = {k: v.clone() for k, v in pl_module.state_dict().items()}
            trainer.save_checkpoint(self.path)


def _fit(io: Any, *callbacks: Any, steps: int = 8) -> Trainer:
    trainer = Trainer(
        **quiet(max_steps=steps, logger=False, enable_checkpointing=False), plugins=[io], callbacks=list(callbacks)
    )
    trainer.fit(LinearRegression(), regression_data())
    return trainer


def _without_digest(state: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k != "sha256"}


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and torch.equal(a, b)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(map(_equal, a, b))
    return bool(a == b)


def test_the_background_file_holds_what_a_synchronous_save_writes(tmp_path: Path) -> None:
    trainer = _fit(TorchCheckpointIO())
    trainer.save_checkpoint(tmp_path / "sync.ckpt")
    trainer.strategy.checkpoint_io = AsyncCheckpointIO()
    trainer.save_checkpoint(tmp_path / "async.ckpt")
    trainer.strategy.checkpoint_io.teardown()
    io = TorchCheckpointIO()
    sync, background = io.load_checkpoint(tmp_path / "sync.ckpt"), io.load_checkpoint(tmp_path / "async.ckpt")
    assert _equal(_without_digest(sync), _without_digest(background))
    assert sync["sha256"] == background["sha256"]


def test_the_file_holds_the_weights_of_the_step_it_was_asked_at_while_training_went_on(tmp_path: Path) -> None:
    saver = SaveAt(2, tmp_path / "step2.ckpt")
    io = AsyncCheckpointIO(SlowIO(0.4))
    started = time.perf_counter()
    trainer = _fit(io, saver, steps=12)
    assert time.perf_counter() - started >= 0.4, "fit waited for the slow save at its end"
    saved = TorchCheckpointIO().load_checkpoint(tmp_path / "step2.ckpt")
    assert saved["loop"]["global_step"] == 2
    assert _equal(saved["state_dict"], saver.weights)
    final = trainer.lightning_module.state_dict()
    assert not _equal(final, saver.weights), "training changed the weights after the save was asked"


def test_the_end_of_fit_waits_for_the_last_save(tmp_path: Path) -> None:
    io = AsyncCheckpointIO(SlowIO(0.5))
    _fit(io, SaveAt(8, tmp_path / "last.ckpt"), steps=8)  # asked at the very last step
    assert not io.saving
    assert TorchCheckpointIO().load_checkpoint(tmp_path / "last.ckpt")["loop"]["global_step"] == 8


def test_a_failing_background_save_stops_the_fit_at_the_next_step_naming_the_file(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the checkpoint folder should be")
    target = blocker / "ckpts" / "step2.ckpt"
    steps_seen: list[int] = []

    class Count(Callback):
        def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
            steps_seen.append(trainer.global_step)

    with pytest.raises(BackgroundSaveError, match=r"not-a-folder/ckpts/step2\.ckpt") as caught:
        _fit(AsyncCheckpointIO(), SaveAt(2, target), Count(), steps=200)
    assert isinstance(caught.value.__cause__, OSError)
    assert max(steps_seen) < 50, f"the fit went on to step {max(steps_seen)} after the failed save"


def test_a_failed_save_is_raised_at_the_next_save_and_once(tmp_path: Path) -> None:
    io = AsyncCheckpointIO()
    blocker = tmp_path / "file"
    blocker.write_text("x")
    io.save_checkpoint({"w": torch.ones(2)}, blocker / "a.ckpt")
    with pytest.raises(BackgroundSaveError, match=r"a\.ckpt"):
        io.save_checkpoint({"w": torch.ones(2)}, tmp_path / "b.ckpt")
    io.save_checkpoint({"w": torch.ones(2)}, tmp_path / "b.ckpt")
    io.teardown()
    assert torch.equal(TorchCheckpointIO().load_checkpoint(tmp_path / "b.ckpt")["w"], torch.ones(2))


_SCRIPT = """
import sys, time
from accelplug import Callback, Trainer
from accelplug.plugins import AsyncCheckpointIO, TorchCheckpointIO
from tests.modules import LinearRegression, quiet, regression_data

class Slow(TorchCheckpointIO):
    def save_checkpoint(self, checkpoint, path, storage_options=None):
        time.sleep(0.5)  # the signal's checkpoint is still being written when the loop ends
        super().save_checkpoint(checkpoint, path, storage_options)

class Ready(Callback):
    def on_train_batch_end(self, trainer, *args):
        time.sleep(0.02)
        if trainer.global_step == 5:
            print("READY", flush=True)

trainer = Trainer(**quiet(max_steps=100000, logger=False), default_root_dir=sys.argv[1],
                  plugins=[AsyncCheckpointIO(Slow())], callbacks=[Ready()])
trainer.fit(LinearRegression(), regression_data())
"""


def test_sigterm_mid_fit_leaves_a_complete_last_checkpoint(tmp_path: Path) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _SCRIPT, str(tmp_path)],
        env=child_env(pythonpath=REPO),
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    assert child.stdout.readline().startswith("READY")
    child.send_signal(signal.SIGTERM)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 143, err
    last = next(tmp_path.rglob("last.ckpt"))
    state = TorchCheckpointIO().load_checkpoint(last)  # verifies the SHA-256 of the whole file
    assert state["loop"]["global_step"] >= 5 and "state_dict" in state
