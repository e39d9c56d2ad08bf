"""A datamodule's ``state_dict`` goes into the checkpoint and comes back through its ``load_state_dict`` when a
call loads that checkpoint (a resumed fit, and validate/test with ``ckpt_path``), as in Lightning 2.6.6."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.callbacks.parity import FRAMEWORKS, data, make_module, quiet_lightning


def _datamodule(framework: Any, loaded: list[tuple[str, Any]]) -> Any:
    class Counting(framework.LightningDataModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.batches_made = 0

        def train_dataloader(self) -> Any:
            self.batches_made += 1
            return data()

        def val_dataloader(self) -> Any:
            return data(n=16)

        def state_dict(self) -> dict[str, Any]:
            return {"batches_made": self.batches_made}

        def load_state_dict(self, state_dict: dict[str, Any]) -> None:
            loaded.append((self.trainer.state.fn.value, dict(state_dict)))

    return Counting()


def _trainer(framework: Any, root: Path, **options: Any) -> Any:
    return framework.Trainer(
        accelerator="cpu",
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=root,
        **options,
    )


@pytest.mark.filterwarnings(  # on purpose: the resumed Trainer leaves out the ModelCheckpoint that saved the file
    "ignore:Be aware that when using `ckpt_path`, callbacks used to create the checkpoint:UserWarning"
)
@pytest.mark.parametrize("call", ["fit", "validate"])
def test_a_call_from_a_checkpoint_gives_the_datamodule_its_saved_state(tmp_path: Path, call: str) -> None:
    loaded: dict[str, list[tuple[str, Any]]] = {name: [] for name in FRAMEWORKS}
    for name, framework in FRAMEWORKS.items():
        root = tmp_path / name
        first = _trainer(framework, root, max_epochs=1, limit_train_batches=2, limit_val_batches=1)
        with quiet_lightning(framework):
            first.fit(make_module(framework), datamodule=_datamodule(framework, loaded[name]))
            again = _trainer(
                framework, root, max_epochs=2, limit_train_batches=2, limit_val_batches=1, enable_checkpointing=False
            )
            path = first.checkpoint_callback.best_model_path
            datamodule = _datamodule(framework, loaded[name])
            getattr(again, call)(make_module(framework), datamodule=datamodule, ckpt_path=path)
    assert loaded["lightning"] == [(call, {"batches_made": 1})]
    assert loaded["accelplug"] == loaded["lightning"]
