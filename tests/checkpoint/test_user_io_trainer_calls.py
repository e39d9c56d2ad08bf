"""The Trainer calls a user's CheckpointIO as Lightning's does: the ``ckpt_path`` as given (a str stays a str) and
``weights_only`` as given (None by default)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import lightning.pytorch as lpt
import lightning.pytorch.plugins as lplugins

import accelplug as ap
import accelplug.plugins as aplugins


def _calls(root: Any, plugins: Any, folder: Path) -> list[Any]:
    log: list[Any] = []

    class Recording(plugins.TorchCheckpointIO):  # type: ignore[misc, name-defined]
        def load_checkpoint(self, path: Any, map_location: Any = None, weights_only: Any = None) -> Any:
            log.append((type(path).__name__, os.path.basename(str(path)), weights_only))
            return super().load_checkpoint(path, map_location=map_location, weights_only=False)

    def trainer(epochs: int) -> Any:
        return root.Trainer(
            default_root_dir=folder,
            max_epochs=epochs,
            limit_train_batches=1,
            limit_val_batches=0,
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
            plugins=[Recording()],
        )

    from lightning.pytorch.demos.boring_classes import BoringModel

    path = os.path.join(folder, f"{root.__name__}.ckpt")
    first = trainer(1)
    first.fit(BoringModel())
    first.save_checkpoint(path)
    trainer(2).fit(BoringModel(), ckpt_path=path)
    trainer(2).fit(BoringModel(), ckpt_path=Path(path), weights_only=False)
    return log


def test_a_users_checkpoint_io_reads_the_ckpt_path_and_weights_only_as_given(tmp_path: Path) -> None:
    ours = _calls(ap, aplugins, tmp_path)
    theirs = _calls(lpt, lplugins, tmp_path)
    assert [(kind, w) for kind, _, w in ours] == [(kind, w) for kind, _, w in theirs]
    assert [(kind, w) for kind, _, w in ours] == [("str", None), ("PosixPath", False)]
