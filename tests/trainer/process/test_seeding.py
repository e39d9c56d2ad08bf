"""Seeding makes identical fits in one process draw identical numbers, the first one included.

Each case runs in a fresh process: what differed was the first fit of a process, which imported modules that
draw from Python's ``random`` at import (rich, for the model summary and the progress display) after the seed,
and imported numpy after the seed, leaving numpy's generator unseeded. Lightning imports both at
``import lightning``; ``seed_everything`` now imports them before it seeds.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.processes import child_env

_SCRIPT = textwrap.dedent(
    """
    import json, random, sys
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    framework, how, root = sys.argv[1], sys.argv[2], sys.argv[3]
    L = __import__(framework)

    class Draws(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)
            self.draws = []

        def on_train_start(self):
            import numpy  # first imported here, after the seed, as a user's data code may
            self.draws.append([random.random(), float(numpy.random.rand())])

        def training_step(self, batch, batch_idx):
            self.draws.append([random.random(), torch.rand(1).item()])
            return self.layer(torch.nn.functional.dropout(batch[0], 0.5)).pow(2).mean()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    def fit(index):
        options = dict(accelerator="cpu", max_epochs=1, default_root_dir=f"{root}/{index}")
        if how == "trainer_seed":
            options["seed"] = 42  # seeds at the start of fit, after the module is built: its weights seeded here
            torch.manual_seed(7)
        else:
            L.seed_everything(42, verbose=False)
        module = Draws()
        data = DataLoader(TensorDataset(torch.arange(64.0).reshape(16, 4) / 64), batch_size=4, shuffle=True)
        L.Trainer(**options).fit(module, data)
        return module.draws, [round(v, 6) for v in module.layer.weight.flatten().tolist()]

    print("RESULT " + json.dumps([fit(0), fit(1)]))
    """
)


def _fits(tmp_path: Path, framework: str, how: str) -> list[object]:
    script = tmp_path / "fits.py"
    script.write_text(_SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), framework, how, str(tmp_path / framework)],
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))  # type: ignore[no-any-return]


def test_two_identical_fits_with_trainer_seed_draw_the_same_numbers_in_one_process(tmp_path: Path) -> None:
    first, second = _fits(tmp_path, "accelplug", "trainer_seed")
    assert first == second


def test_the_first_fit_after_seed_everything_draws_what_lightnings_draws(tmp_path: Path) -> None:
    pytest.importorskip("lightning", reason="compared against lightning, not installed here")
    ours = _fits(tmp_path, "accelplug", "seed_everything")
    theirs = _fits(tmp_path, "lightning", "seed_everything")
    assert ours[0] == ours[1]
    assert ours == theirs
