"""The process group accelplug creates is destroyed when a script ends cleanly, and only that one.

torch 2.13's gloo aborts a process at interpreter shutdown ("terminate called without an active
exception", exit -6) when a group's C++ object outlives the interpreter, so a job that trained
correctly could be reported as a failed rank (measured: 4 of 40 two-process launches of
examples/fsdp_example.py before the release, 0 of 40 after).
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch.distributed as dist

from accelplug.strategies import ddp
from tests.processes import child_env


@pytest.fixture
def group_of_one() -> Iterator[None]:
    """A gloo group of one in this process; whatever the test leaves of it is released after."""
    ddp._OWN_GROUPS.clear()
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)  # type: ignore[attr-defined]
    yield
    ddp._OWN_GROUPS.clear()
    if dist.is_initialized():
        dist.destroy_process_group()


@pytest.mark.usefixtures("group_of_one")
def test_an_adopted_group_is_destroyed_at_a_clean_exit() -> None:
    ddp.adopt_process_group()
    ddp._release_at_clean_exit()
    assert not dist.is_initialized()


@pytest.mark.usefixtures("group_of_one")
def test_a_group_the_user_created_is_left_alone() -> None:
    ddp._release_at_clean_exit()
    assert dist.is_initialized()


@pytest.mark.usefixtures("group_of_one")
def test_a_process_leaving_on_an_unhandled_exception_keeps_its_group(monkeypatch: pytest.MonkeyPatch) -> None:
    ddp.adopt_process_group()
    monkeypatch.setattr(sys, "last_value", RuntimeError("training failed"), raising=False)
    ddp._release_at_clean_exit()
    assert dist.is_initialized()


SCRIPT = textwrap.dedent(
    """
    import atexit, os, sys
    import torch, torch.distributed as dist

    # Registered first, so it runs after accelplug's own exit hook (atexit runs last-in, first-out).
    atexit.register(lambda: open(os.path.join(sys.argv[1], "rank" + os.environ["RANK"]), "w").write(
        str(dist.is_initialized())))

    import accelplug as L

    class Tiny(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).pow(2).mean()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    data = torch.utils.data.TensorDataset(torch.randn(16, 4))
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy=sys.argv[2], max_steps=2, logger=False,
                        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(Tiny(), torch.utils.data.DataLoader(data, batch_size=4))
    """
)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["ddp", "fsdp"])
def test_a_launched_job_has_no_process_group_left_at_interpreter_shutdown(tmp_path: Path, strategy: str) -> None:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    result = subprocess.run(
        [sys.executable, "-m", "accelplug", "launch", "--cpu", "--devices", "2", str(script), str(tmp_path), strategy],
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        capture_output=True,
        text=True,
        timeout=180,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert [(tmp_path / f"rank{rank}").read_text() for rank in (0, 1)] == ["False", "False"]
