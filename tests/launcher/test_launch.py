"""``accelplug launch`` for real: worker processes started through torchrun's agent on gloo."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

from tests.processes import REPO, child_env

pytestmark = pytest.mark.slow

DDP_EXAMPLE = REPO / "examples" / "ddp_example.py"


def _accelplug(*args: str, env: dict[str, str] | None = None, pythonpath: Path | None = None, timeout: float = 180):
    return subprocess.run(
        [sys.executable, "-m", "accelplug", *args],
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1", **(env or {})}, pythonpath=pythonpath),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=REPO,
    )


def test_two_process_ddp_on_gloo_leaves_identical_weights_on_both_ranks(tmp_path: Path) -> None:
    out = tmp_path / "weights.pt"
    result = _accelplug(
        "launch", "--cpu", "--devices", "2", str(DDP_EXAMPLE),
        "--max-epochs", "2", "--out", str(out), "--root-dir", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "world size 2" in result.stdout
    rank0 = torch.load(f"{out}.rank0", weights_only=True)
    rank1 = torch.load(f"{out}.rank1", weights_only=True)
    assert rank0.keys() == rank1.keys()
    for name in rank0:
        assert torch.equal(rank0[name], rank1[name]), name
    untrained = torch.nn.Linear(8, 32).weight.shape
    assert rank0["net.0.weight"].shape == untrained
    event_files = list(tmp_path.glob("lightning_logs/version_*/events.out.tfevents.*"))  # the default logger's
    assert len(event_files) == 1, "only rank 0 writes logs"
    assert len(list(tmp_path.glob("lightning_logs/version_*"))) == 1, "all ranks share one run folder"
    # Lightning's default ModelCheckpoint: the newest epoch's file, no last.ckpt
    assert [p.name for p in (event_files[0].parent / "checkpoints").iterdir()] == ["epoch=1-step=16.ckpt"]


def test_a_crashing_rank_ends_the_whole_job_fast_with_its_error(tmp_path: Path) -> None:
    started = time.monotonic()
    result = _accelplug(
        "launch", "--cpu", "--devices", "2", str(DDP_EXAMPLE), "--crash-rank", "1", "--root-dir", str(tmp_path),
        timeout=60,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    assert result.returncode != 0
    assert "this rank fails on purpose at batch 3" in result.stderr
    assert "rank 1 failed" in result.stderr
    assert elapsed < 30, f"the job took {elapsed:.1f}s to fail"


def test_a_job_leaves_no_log_folder_in_the_temporary_folder(tmp_path: Path) -> None:
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    script = tmp_path / "fails.py"
    script.write_text("import os, sys\nsys.exit(3 if os.environ['RANK'] == '1' else 0)\n")
    result = _accelplug("launch", "--cpu", "--devices", "2", str(script), env={"TMPDIR": str(temporary)}, timeout=60)
    assert result.returncode == 3 and "rank 1 failed (exit code 3)" in result.stderr, result.stderr
    assert not list(temporary.iterdir()), "torchrun's per-job log folder (/tmp/torchelastic_*) was left behind"


_REPORT = "from accelplug import Trainer\nprint('CHOSEN', Trainer().accelerator.name)\n"


def test_launch_cpu_makes_auto_choose_the_cpu_over_a_plugin_accelerator(tmp_path: Path, plugin_site: Path) -> None:
    script = tmp_path / "report.py"
    script.write_text(_REPORT)
    env = {"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "", "ACCELPLUG_PLUGINS": "fakegpu"}
    plain = _accelplug("launch", "--devices", "1", str(script), env=env, pythonpath=plugin_site)
    forced = _accelplug("launch", "--cpu", str(script), env=env, pythonpath=plugin_site)
    assert plain.returncode == 0, plain.stderr
    assert "CHOSEN fakegpu" in plain.stdout, "without --cpu, auto prefers the plugin accelerator"
    assert forced.returncode == 0, forced.stderr
    assert "CHOSEN cpu" in forced.stdout


def test_launch_passes_arguments_after_the_script_to_it(tmp_path: Path) -> None:
    script = tmp_path / "echo.py"
    script.write_text("import os, sys\nprint('ARGS', sys.argv[1:], os.environ['WORLD_SIZE'])\n")
    result = _accelplug("launch", "--cpu", str(script), "--devices", "7", "-x")
    assert result.returncode == 0, result.stderr
    assert "ARGS ['--devices', '7', '-x'] 1" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--cpu", "--accelerator", "cuda"], "contradict"),
        (["--devices", "0"], "devices=0"),
        (["--accelerator", "nosuch"], "nosuch"),
        (["--nnodes", "2"], "--master-addr and --master-port"),
        (["--nnodes", "2", "--node-rank", "2", "--master-addr", "h", "--master-port", "29500"], "--node-rank=2"),
    ],
)
def test_launch_configuration_errors_exit_2_with_a_message(tmp_path: Path, args: list[str], message: str) -> None:
    script = tmp_path / "noop.py"
    script.write_text("")
    result = _accelplug("launch", *args, str(script))
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_ddp_trainer_in_plain_python_relaunches_itself(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        textwrap.dedent(
            """
            import os
            import torch
            from torch.utils.data import DataLoader, TensorDataset
            from accelplug import Trainer

            class M(torch.nn.Module):
                def __init__(self):
                    super().__init__()
                    self.lin = torch.nn.Linear(2, 1)
                def training_step(self, batch, i):
                    return self.lin(batch[0]).pow(2).mean()
                def configure_optimizers(self):
                    return torch.optim.SGD(self.parameters(), lr=0.1)

            trainer = Trainer(accelerator="cpu", devices=2, strategy="ddp", max_steps=2, enable_progress_bar=False,
                              logger=False, enable_checkpointing=False)
            trainer.fit(M(), DataLoader(TensorDataset(torch.randn(16, 2)), batch_size=4))
            os.write(1, f"RANK {trainer.global_rank} OF {trainer.world_size}\\n".encode())  # one atomic write
            """
        )
    )
    result = subprocess.run(
        [sys.executable, str(script)], env=child_env(), capture_output=True, text=True, timeout=180, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert sorted(line for line in result.stdout.splitlines() if line.startswith("RANK")) == [
        "RANK 0 OF 2",
        "RANK 1 OF 2",
    ]
