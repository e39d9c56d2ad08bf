"""What a person sees: a rich display under a real terminal, plain non-repeating lines when piped."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from accelplug.trainer.display.progress import PlainProgressDisplay
from tests.processes import REPO, child_env

pytestmark = pytest.mark.slow

_SCRIPT = textwrap.dedent(
    """
    import time, torch, accelplug as L
    from torch.utils.data import DataLoader, TensorDataset

    class Model(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.net = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            time.sleep(0.03)  # slow enough for the display thread to draw a few frames
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.net(x), y)
            self.log("mse", loss, prog_bar=True)
            return loss

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val_mse", torch.nn.functional.mse_loss(self.net(x), y), prog_bar=True)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.05)

    x = torch.randn(192, 4)
    data = DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=16)
    L.Trainer(accelerator="cpu", max_epochs=2, log_every_n_steps=2, default_root_dir={root!r}).fit(Model(), data, data)
    """
)
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "train.py"
    path.write_text(_SCRIPT.format(root=str(tmp_path)))
    return path


def _run_in_terminal(script: Path) -> str:
    """Run ``script`` with a pseudo-terminal as its stdin/stdout/stderr; everything it drew."""
    master, slave = pty.openpty()
    env = child_env({"COLUMNS": "140", "TERM": "xterm-256color"})
    child = subprocess.Popen([sys.executable, str(script)], stdin=slave, stdout=slave, stderr=slave, env=env, cwd=REPO)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed the terminal
                break
            if not data:
                break
            chunks.append(data)
        elif child.poll() is not None:
            break
    os.close(master)
    assert child.wait(timeout=30) == 0, b"".join(chunks).decode(errors="replace")[-2000:]
    return b"".join(chunks).decode(errors="replace")


def test_a_terminal_gets_epoch_bars_with_rate_eta_metrics_and_a_summary(tmp_path: Path) -> None:
    drawn = _run_in_terminal(_script(tmp_path))
    text = _ANSI.sub("", drawn).replace("\r", "\n")
    assert "\x1b[" in drawn, "a terminal gets rich's escape sequences"
    assert re.search(r"accelplug: cpu \[0\] because .*precision 32-true; strategy single_device; logs in ", text)
    assert "Trainable params" in text, "the model summary is printed first"
    assert re.search(r"Epoch 1/2 .*━.* \d+/12 .*it/s", text), "a bar per epoch: batches, rate"
    assert re.search(r"Epoch 1/2 .*< 0:00:0\d", text), "with the time remaining"
    assert re.search(r"mse=\d", text), "prog_bar metrics beside the bar"
    assert re.search(r"Epoch 2/2 12/12 in 0:00:0\d, [\d.]+it/s .*val_mse=\d", text), (
        "each finished epoch stays as a line"
    )


def test_a_pipe_gets_one_plain_line_per_epoch_and_no_escape_codes(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(_script(tmp_path))], capture_output=True, text=True, env=child_env(), cwd=REPO, timeout=180
    )
    assert result.returncode == 0, result.stderr
    assert "\x1b[" not in result.stderr
    epoch_lines = [line for line in result.stderr.splitlines() if line.startswith("epoch ")]
    assert [line.split(":")[0] for line in epoch_lines] == ["epoch 0 done at step 12", "epoch 1 done at step 24"]
    assert all("mse=" in line and "val_mse=" in line for line in epoch_lines)
    assert epoch_lines[0] != epoch_lines[1], "each epoch's line has that epoch's values"


def test_plain_progress_prints_a_line_only_when_the_epoch_moved(capsys: pytest.CaptureFixture[str]) -> None:
    progress = PlainProgressDisplay()
    progress.every_s = 0.05
    progress.start(None, 0, 3)
    progress.epoch_start(0, 100)
    for _ in range(10):
        progress.tick(0, None)
    time.sleep(0.3)  # several refresh periods, but one change
    progress.stop()
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("Epoch 1/3")]
    assert lines == [lines[0]] and lines[0].startswith("Epoch 1/3: 10/100 batches, ")
