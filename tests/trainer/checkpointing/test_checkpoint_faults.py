"""Checkpoints under faults: a flipped byte, a writer killed mid-save, a full disk.

Real files throughout; the writer is a real process killed with SIGKILL at a random moment of its
save, and the full disk is an ``OSError(ENOSPC)`` raised by the file object's ``write`` (the OS
boundary: where a real full disk reports itself).
"""

from __future__ import annotations

import errno
import io
import os
import random
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from accelplug import MisconfigurationException, Trainer
from accelplug.callbacks import ModelCheckpoint
from accelplug.checkpoint import file as checkpoint_io
from tests.modules import LinearRegression, quiet, regression_data
from tests.processes import child_env


def _fitted(tmp_path: Path, steps: int = 4) -> Trainer:
    trainer = Trainer(**quiet(max_steps=steps, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data(n=64, batch_size=8))
    return trainer


def _flip_middle(path: Path, count: int = 64) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    for i in range(middle, middle + count):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_checkpoint_with_bytes_flipped_mid_file_is_refused_naming_it(tmp_path: Path) -> None:
    trainer = _fitted(tmp_path)
    path = trainer.save_checkpoint(tmp_path / "damaged.ckpt")
    _flip_middle(path)
    again = Trainer(**quiet(max_steps=6, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    with pytest.raises(MisconfigurationException) as caught:
        again.fit(LinearRegression(), regression_data(), ckpt_path=path)
    message = str(caught.value)
    assert str(path) in message
    assert "corrupt" in message or "cannot be read" in message


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
def test_ckpt_path_last_skips_a_damaged_newest_checkpoint_for_the_previous_good_one(tmp_path: Path) -> None:
    callback = ModelCheckpoint(every_n_train_steps=2, every_n_epochs=None, save_last=False, save_top_k=-1)
    options = quiet(max_steps=6, logger=False, default_root_dir=tmp_path, callbacks=[callback])
    Trainer(**options).fit(LinearRegression(), regression_data(n=64, batch_size=8))
    folder = callback.folder(Trainer(**options))
    files = {Path(p).name: Path(p) for p in folder.iterdir()}
    assert set(files) == {"epoch=0-step=2.ckpt", "epoch=0-step=4.ckpt", "epoch=0-step=6.ckpt"}
    _flip_middle(files["epoch=0-step=6.ckpt"])
    os.utime(files["epoch=0-step=6.ckpt"])  # still the newest file
    resumed = Trainer(**quiet(max_steps=8, logger=False, enable_checkpointing=False, default_root_dir=tmp_path))
    # the resumed Trainer leaves the ModelCheckpoint out, whose state the checkpoint holds: Lightning's advice
    with (
        pytest.warns(UserWarning, match=r"skipping .*step=6\.ckpt"),
        pytest.warns(UserWarning, match=r"Please add the following callbacks: \[.ModelCheckpoint"),
    ):
        resumed.fit(LinearRegression(), regression_data(n=64, batch_size=8), ckpt_path="auto")
    assert resumed.global_step == 8
    assert folder.name == "checkpoints"


# ---- kill -9 mid-save --------------------------------------------------------------------------------
_WRITER = textwrap.dedent(
    """
    import sys, torch
    from accelplug.checkpoint.file import atomic_save

    atomic_save({"version": 1, "w": torch.ones(4)}, sys.argv[1])
    print("FIRST-SAVED", flush=True)
    big = {"version": 2, "w": torch.randn(4_000_000)}  # 16 MB: the save takes a while
    while True:  # saves until killed, so the kill lands at a random point of some save
        atomic_save(big, sys.argv[1], with_digest=False)
    """
)


def _kill_a_writer_mid_save(target: Path, delay: float) -> None:
    # the with block closes the pipe (after the wait below)
    with subprocess.Popen(
        [sys.executable, "-c", _WRITER, str(target)], stdout=subprocess.PIPE, text=True, env=child_env()
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "FIRST-SAVED"
            time.sleep(delay)
            child.kill()  # SIGKILL: no handler, no cleanup
        finally:
            child.wait(timeout=30)


@pytest.mark.slow
def test_kill_9_at_a_random_moment_of_a_save_leaves_a_readable_file_and_the_next_save_cleans_up(
    tmp_path: Path,
) -> None:
    target = tmp_path / "model.ckpt"
    rng = random.Random(12)
    leftovers: list[Path] = []
    for _attempt in range(10):  # until a kill lands inside the write (most do: the writer saves non-stop)
        _kill_a_writer_mid_save(target, rng.uniform(0.05, 1.5))
        state = torch.load(target, weights_only=True)  # the previous or the new file, never a torn one
        assert state["version"] in (1, 2)
        assert state["version"] == 2 or state["sha256"] == checkpoint_io.content_digest(state)
        leftovers = list(tmp_path.glob(".model.ckpt.*.tmp"))
        if leftovers:
            break
    assert leftovers, "no kill landed inside a save in 10 tries"
    checkpoint_io.atomic_save({"version": 3, "w": torch.zeros(2)}, target)
    assert list(tmp_path.glob(".*.tmp")) == [], f"the next save must remove the killed writer's {leftovers}"
    assert torch.load(target, weights_only=True)["version"] == 3


def test_a_temporary_file_of_a_live_writer_is_left_alone(tmp_path: Path) -> None:
    mine = tmp_path / f".model.ckpt.{os.getppid()}.abc.tmp"  # the parent process is alive
    mine.write_bytes(b"partial")
    checkpoint_io.atomic_save({"w": torch.zeros(1)}, tmp_path / "model.ckpt")
    assert mine.exists()


# ---- a full disk ---------------------------------------------------------------------------------------
class _FullDisk(io.RawIOBase):
    """A file object whose ``write`` fails with ENOSPC after ``room`` bytes, like a disk filling up."""

    def __init__(self, real: Any, room: int) -> None:
        self.real, self.room = real, room

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        size = len(memoryview(data))
        if size > self.room:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= size
        return int(self.real.write(data))

    def flush(self) -> None:
        self.real.flush()

    def fileno(self) -> int:
        return int(self.real.fileno())

    def close(self) -> None:
        super().close()  # flushes through to the real file first
        self.real.close()


@pytest.mark.parametrize("room", [0, 200, 5000])
def test_a_full_disk_says_no_space_names_the_folder_and_keeps_the_previous_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, room: int
) -> None:
    trainer = _fitted(tmp_path)
    path = trainer.save_checkpoint(tmp_path / "run.ckpt")
    before = path.read_bytes()
    real_fdopen = os.fdopen
    monkeypatch.setattr(checkpoint_io.os, "fdopen", lambda fd, mode: _FullDisk(real_fdopen(fd, mode), room))
    with pytest.raises(OSError, match="no space left on the device holding") as caught:
        trainer.save_checkpoint(path)
    assert caught.value.errno == errno.ENOSPC
    assert str(tmp_path) in str(caught.value)
    assert "the previous checkpoint is intact" in str(caught.value)
    assert path.read_bytes() == before
    assert list(tmp_path.glob(".*.tmp")) == [], "the failed save removed its temporary file"
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # the checkpoint stands inside an epoch of a plain loader: Lightning's advice, which is not the point here
        warnings.filterwarnings("ignore", "You're resuming from a checkpoint that ended before the epoch ended")
        warnings.filterwarnings("ignore", "You defined a `validation_step` but have no `val_dataloader`")
        Trainer(**quiet(max_steps=6, logger=False, enable_checkpointing=False)).fit(
            LinearRegression(), regression_data(n=64, batch_size=8), ckpt_path=path
        )
