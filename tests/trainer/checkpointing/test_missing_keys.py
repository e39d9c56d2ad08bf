"""A checkpoint dictionary that lacks a key loading needs is refused as Lightning 2.6 refuses it: a ``KeyError``
naming the key (``pytorch-lightning_version``, ``state_dict``) or saying what it tried to restore, by
``LightningModule.load_from_checkpoint``, ``LightningDataModule.load_from_checkpoint`` and ``fit(ckpt_path=...)``.
accelplug's is a ``MisconfigurationException`` too, and explains itself. Each case runs under both frameworks.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import FRAMEWORKS, quiet_lightning


def _classes(framework: Any) -> tuple[type, type]:
    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            return self.layer(batch[0]).sum()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class Data(framework.LightningDataModule):  # type: ignore[misc, name-defined]
        def train_dataloader(self) -> Any:
            return DataLoader(TensorDataset(torch.ones(2, 1)), batch_size=2)

    return Module, Data


def _weights() -> dict[str, torch.Tensor]:
    return {"layer.weight": torch.ones(1, 1), "layer.bias": torch.zeros(1)}


CASES = {
    "a plain state_dict dict": ({"state_dict": _weights(), "epoch": 0, "global_step": 0}, "pytorch-lightning_version"),
    "no state_dict": ({"pytorch-lightning_version": "2.6.6"}, "state_dict"),
}


def _load(framework: Any, what: str, path: Path) -> None:
    module, data = _classes(framework)
    if what == "module":
        module.load_from_checkpoint(path)  # type: ignore[attr-defined]
    elif what == "datamodule":
        data.load_from_checkpoint(path)  # type: ignore[attr-defined]
    else:
        trainer = framework.Trainer(
            accelerator="cpu", devices=1, max_epochs=2, logger=False, enable_checkpointing=False,
            enable_progress_bar=False, enable_model_summary=False, default_root_dir=path.parent,
        )  # fmt: skip
        trainer.fit(module(), data(), ckpt_path=path)


@pytest.mark.parametrize("what", ["module", "datamodule", "fit"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("name", FRAMEWORKS)
def test_a_checkpoint_missing_a_key_is_a_key_error_naming_it(name: str, case: str, what: str, tmp_path: Path) -> None:
    checkpoint, key = CASES[case]
    if case == "no state_dict" and what == "datamodule":
        key = ""  # a datamodule needs no weights: loaded as in Lightning
    path = tmp_path / "given.ckpt"
    torch.save(checkpoint, path)
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)
    with quiet_lightning(FRAMEWORKS[name]):
        if not key:
            _load(FRAMEWORKS[name], what, path)
            return
        with pytest.raises(KeyError, match=key) as refused:
            _load(FRAMEWORKS[name], what, path)
    assert name == "lightning" or isinstance(refused.value, MisconfigurationException)


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_resuming_a_weights_only_checkpoint_is_lightnings_key_error(name: str, tmp_path: Path) -> None:
    path = tmp_path / "weights.ckpt"
    torch.save({"pytorch-lightning_version": "2.6.6", "state_dict": _weights(), "epoch": 0, "global_step": 0}, path)
    with (
        quiet_lightning(FRAMEWORKS[name]),
        pytest.raises(KeyError, match="checkpoint contains only the model") as refused,
    ):
        _load(FRAMEWORKS[name], "fit", path)
    assert name == "lightning" or isinstance(refused.value, MisconfigurationException)


def test_a_file_of_accelplugs_own_format_without_a_release_still_loads(tmp_path: Path) -> None:
    import accelplug
    from accelplug.checkpoint.file import FORMAT_KEY

    path = tmp_path / "fabric.ckpt"
    torch.save({FORMAT_KEY: 2, "state_dict": _weights()}, path)  # accelplug's format, no Lightning release
    module = _classes(accelplug)[0].load_from_checkpoint(path)  # type: ignore[attr-defined]
    assert torch.equal(module.layer.weight, torch.ones(1, 1))
