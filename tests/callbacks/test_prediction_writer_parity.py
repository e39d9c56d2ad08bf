"""BasePredictionWriter against Lightning 2.6: the same calls with the same batch indices and predictions, for
each write interval and for one or two loaders, the files a writer saves, and the refusals."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader

from accelplug.callbacks import BasePredictionWriter
from accelplug.errors import MisconfigurationException

from .parity import FRAMEWORKS, make_module


def _writer(framework: Any, interval: str, calls: list[Any], folder: Path) -> Any:
    class Writer(framework.pytorch.callbacks.BasePredictionWriter):  # type: ignore[misc, name-defined]
        def write_on_batch_end(self, trainer: Any, m: Any, prediction: Any, indices: Any, batch: Any, i: int, d: int):
            calls.append(("batch", list(indices), i, d, prediction.tolist()))
            torch.save(prediction, folder / f"{d}_{i}.pt")

        def write_on_epoch_end(self, trainer: Any, m: Any, predictions: Any, indices: Any) -> None:
            flat = predictions if isinstance(predictions[0], list) else [predictions]
            calls.append(("epoch", indices, [[p.tolist() for p in loader] for loader in flat]))
            torch.save(indices, folder / "batch_indices.pt")

    return Writer(interval)


@pytest.mark.parametrize("interval", ["batch", "epoch", "batch_and_epoch"])
@pytest.mark.parametrize("loaders", [1, 2])
def test_writer_calls_match_lightning(tmp_path: Path, interval: str, loaders: int) -> None:
    x = torch.randn(10, 4, generator=torch.Generator().manual_seed(0))
    found: dict[str, Any] = {}
    for name, framework in FRAMEWORKS.items():
        folder = tmp_path / name
        folder.mkdir()
        calls: list[Any] = []
        trainer = framework.Trainer(
            accelerator="cpu",
            logger=False,
            enable_progress_bar=False,
            callbacks=[_writer(framework, interval, calls, folder)],
            default_root_dir=folder,
        )
        dataloaders = [DataLoader(x, batch_size=4), DataLoader(x[:7], batch_size=3)][:loaders]
        returned = trainer.predict(make_module(framework), dataloaders, return_predictions=False)
        files = sorted(p.name for p in folder.iterdir() if p.suffix == ".pt")
        found[name] = (calls, returned, files, trainer.predict_loop.predictions)
    assert found["accelplug"] == found["lightning"]


def test_bad_write_interval() -> None:
    with pytest.raises(MisconfigurationException, match="Did you mean 'epoch'"):
        BasePredictionWriter("epoc")  # type: ignore[arg-type]
