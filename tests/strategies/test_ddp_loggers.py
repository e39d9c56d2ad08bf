"""Two gloo processes agree on the loggers' version folder, whatever each rank knew of it beforehand.

A ``ModelCheckpoint`` with its own ``dirpath`` used to fix the loggers' version on rank 0 only, so rank 0 skipped
the version broadcast that rank 1 made: rank 1's broadcast met rank 0's next one (the log folder) and ``fit``
crashed with ``TypeError: 'PosixPath' object is not iterable``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.processes import REPO, child_env

SCRIPT = textwrap.dedent(
    """
    import json, sys
    import torch
    import accelplug as L
    from accelplug.callbacks import ModelCheckpoint

    class Tiny(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).pow(2).mean()

        def validation_step(self, batch, batch_idx):
            self.log("score", self.layer(batch[0]).mean(), sync_dist=True)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    if __name__ == "__main__":
        root = sys.argv[1]
        data = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(16, 4)), batch_size=4)
        trainer = L.Trainer(
            accelerator="cpu", devices=2, strategy="ddp", max_epochs=1, limit_train_batches=2, limit_val_batches=1,
            callbacks=[ModelCheckpoint(dirpath=root + "/checkpoints")], default_root_dir=root,
            enable_progress_bar=False, enable_model_summary=False,
        )
        trainer.fit(Tiny(), data, data)
        with open(f"{root}/rank{trainer.global_rank}.json", "w") as out:
            json.dump({"log_dir": trainer.log_dir, "version": trainer.logger.version}, out)
    """
)


@pytest.mark.timeout(300)
def test_ranks_agree_on_the_log_folder_when_a_checkpoint_callback_has_its_own_dirpath(tmp_path: Path) -> None:
    script = tmp_path / "fit.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        [sys.executable, str(script), str(tmp_path)],
        cwd=REPO,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = [json.loads((tmp_path / f"rank{rank}.json").read_text()) for rank in (0, 1)]
    assert ranks[0] == ranks[1]
    assert ranks[0]["version"] == 0
    assert sorted(p.name for p in (tmp_path / "checkpoints").iterdir()) == ["epoch=0-step=2.ckpt"]
    assert sorted(p.name for p in (tmp_path / "lightning_logs").iterdir()) == ["version_0"]
