"""A validation, test or prediction loader that shuffles gets Lightning's advice, under both frameworks alike."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch

from tests.callbacks.parity import quiet_lightning
from tests.trainer.loops.both import FRAMEWORKS, Record, loader, recording_module

pytestmark = pytest.mark.filterwarnings(
    # Lightning's advice about worker processes for the tiny in-memory loaders these tests use
    "ignore:The '.*dataloader' does not have many workers:UserWarning",
    r"ignore:The number of training batches \(\d+\) is smaller than the logging interval",
)

ADVICE = "sampler has shuffling enabled, it is strongly recommended that you turn shuffling off"


def _advice(framework: Any, tmp_path: Path, call: str, shuffle: bool) -> list[str]:
    """The shuffling advice ``framework``'s Trainer gives for one call whose other loaders do not shuffle."""
    module = recording_module(framework, Record())
    module.test_step = module.validation_step
    module.predict_step = lambda batch, batch_idx: module(batch[0])
    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        default_root_dir=tmp_path,
    )
    evaluated = loader(16, seed=1, shuffle=shuffle)
    with warnings.catch_warnings(record=True) as caught, quiet_lightning(framework):
        warnings.simplefilter("always")
        if call == "fit":
            trainer.fit(module, loader(), evaluated)
        else:
            getattr(trainer, call)(module, evaluated, **({"return_predictions": True} if call == "predict" else {}))
    return [str(w.message) for w in caught if ADVICE in str(w.message)]


@pytest.mark.parametrize("call", ["fit", "validate", "test", "predict"])
def test_a_shuffling_evaluation_loader_gets_lightnings_advice_once(tmp_path: Path, call: str) -> None:
    told = {name: _advice(framework, tmp_path / name, call, shuffle=True) for name, framework in FRAMEWORKS.items()}
    prefix = {"fit": "val", "validate": "val"}.get(call, call)
    assert told["accelplug"] == told["lightning"]
    assert told["accelplug"] and all(m.startswith(f"Your `{prefix}_dataloader`'s") for m in told["accelplug"])


@pytest.mark.parametrize("call", ["fit", "test"])
def test_an_evaluation_loader_in_order_gets_no_advice(tmp_path: Path, call: str) -> None:
    assert _advice(FRAMEWORKS["accelplug"], tmp_path, call, shuffle=False) == []


def test_the_advice_reads_a_batch_samplers_own_sampler() -> None:
    from accelplug.data.loaders import is_shuffled

    data = loader(16).dataset
    batches = torch.utils.data.BatchSampler(torch.utils.data.RandomSampler(data), batch_size=4, drop_last=False)  # type: ignore[arg-type]
    assert is_shuffled(torch.utils.data.DataLoader(data, batch_sampler=batches))
    assert not is_shuffled(torch.utils.data.DataLoader(data, batch_size=4))
    assert not is_shuffled([torch.zeros(2)])
