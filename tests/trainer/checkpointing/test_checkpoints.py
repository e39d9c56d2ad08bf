"""Checkpoints: atomic writes, exact resumption, weights-only loading (the callback: tests/callbacks)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

from accelplug import MisconfigurationException, Trainer
from tests.modules import NoisyNet, quiet, regression_data


def _fresh_model() -> NoisyNet:
    torch.manual_seed(123)
    return NoisyNet()


def _options(tmp_path: Path, **extra: object) -> dict[str, object]:
    return quiet(seed=7, accumulate_grad_batches=2, logger=False, enable_checkpointing=False, **extra)


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
@pytest.mark.parametrize("stop_at", [5, 8], ids=["epoch-boundary", "mid-epoch"])
def test_resume_from_checkpoint_equals_uninterrupted_run_bit_for_bit(tmp_path: Path, stop_at: int) -> None:
    # 100 samples in batches of 12 -> 9 batches, 5 optimizer steps per epoch with accumulation 2
    # (the last one at the epoch's end): step 5 closes epoch 0, step 8 is inside epoch 1.
    def data() -> torch.utils.data.DataLoader[object]:
        return regression_data(n=100, batch_size=12)

    uninterrupted = _fresh_model()
    Trainer(**_options(tmp_path, max_steps=14)).fit(uninterrupted, data())

    first = _fresh_model()
    trainer = Trainer(**_options(tmp_path, max_steps=stop_at))
    trainer.fit(first, data())
    path = trainer.save_checkpoint(tmp_path / "stop.ckpt")
    torch.rand(5)  # the resumed run must not depend on what this process did since

    resumed = _fresh_model()
    Trainer(**_options(tmp_path, max_steps=14)).fit(resumed, data(), ckpt_path=path)
    for name, value in uninterrupted.state_dict().items():
        assert torch.equal(value, resumed.state_dict()[name]), name


def test_checkpoint_holds_every_piece_of_state_and_loads_weights_only(tmp_path: Path) -> None:
    trainer = Trainer(**_options(tmp_path, max_steps=3))
    trainer.fit(_fresh_model(), regression_data())
    path = trainer.save_checkpoint(tmp_path / "a.ckpt")
    state = torch.load(path, weights_only=True)
    assert {"state_dict", "optimizer_states", "lr_schedulers", "loop", "rng", "epoch_start_rng"} <= set(state)
    assert state["loop"]["global_step"] == 3
    assert {"torch", "python", "numpy"} <= set(state["rng"])


def test_resuming_a_file_that_is_not_a_checkpoint_is_explained(tmp_path: Path) -> None:
    path = tmp_path / "weights.pt"
    torch.save({"w": torch.zeros(1)}, path)
    with pytest.raises(MisconfigurationException, match="not an accelplug checkpoint"):
        Trainer(**_options(tmp_path, max_steps=1)).fit(_fresh_model(), regression_data(), ckpt_path=path)


def test_save_checkpoint_before_fit_is_explained() -> None:
    with pytest.raises(MisconfigurationException, match=r"during or after trainer\.fit"):
        Trainer(accelerator="cpu").save_checkpoint("x.ckpt")


_KILLED_MID_SAVE = textwrap.dedent(
    """
    import io, sys, time, torch
    from accelplug.checkpoint import file as checkpoint

    checkpoint.atomic_save({"version": 1, "w": torch.ones(4)}, sys.argv[1])
    real_save = torch.save

    def slow_save(obj, handle):
        buffer = io.BytesIO()
        real_save(obj, buffer)
        data = buffer.getvalue()
        handle.write(data[: len(data) // 2])
        handle.flush()
        print("HALF-WRITTEN", flush=True)
        time.sleep(60)
        handle.write(data[len(data) // 2 :])

    checkpoint.torch.save = slow_save
    checkpoint.atomic_save({"version": 2, "w": torch.zeros(100_000)}, sys.argv[1])
    """
)


@pytest.mark.slow
def test_atomic_save_keeps_the_previous_file_when_killed_mid_write(tmp_path: Path) -> None:
    target = tmp_path / "model.ckpt"
    # the with block closes the pipe (after the wait below)
    with subprocess.Popen(
        [sys.executable, "-c", _KILLED_MID_SAVE, str(target)], stdout=subprocess.PIPE, text=True
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline().strip() == "HALF-WRITTEN"
            child.kill()  # SIGKILL: no cleanup handler runs
        finally:
            child.wait(timeout=30)
    state = torch.load(target, weights_only=True)
    assert state["version"] == 1
    assert torch.equal(state["w"], torch.ones(4))
