"""How long a fit runs: the epoch and step limits, the batch limits and the debugging shortcuts, as Lightning 2.6.6.

Each case fits the same recording module under both frameworks (``both.fit_both``: 8 training batches, 4
validation batches) and compares what the loop did: every training batch (epoch, index, step before it), every
validation run, every epoch end, the counters afterwards and the weights.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import accelplug
from accelplug.errors import MisconfigurationException
from tests.trainer.loops.both import assert_same_weights, fit_both, fit_one


@pytest.mark.parametrize(
    "options",
    [
        pytest.param({"max_epochs": 2}, id="max_epochs=2 runs two whole epochs"),
        pytest.param({"max_steps": 5}, id="max_steps=5 ends inside the first epoch"),
        pytest.param({"max_steps": 5, "max_epochs": -1}, id="max_epochs=-1 leaves max_steps alone to end it"),
        pytest.param({"max_steps": 10, "max_epochs": 3}, id="max_steps ends the fit before max_epochs"),
        pytest.param({"max_steps": 40, "max_epochs": 2}, id="max_epochs ends the fit before max_steps"),
        pytest.param({"max_epochs": 0}, id="max_epochs=0 trains nothing"),
        pytest.param({"max_epochs": 2, "limit_train_batches": 3}, id="limit_train_batches int"),
        pytest.param({"max_epochs": 2, "limit_train_batches": 0.5}, id="limit_train_batches fraction"),
        pytest.param({"max_epochs": 1, "limit_train_batches": 0.3}, id="limit_train_batches fraction rounds down"),
        pytest.param({"max_epochs": 2, "limit_val_batches": 2}, id="limit_val_batches int"),
        pytest.param({"max_epochs": 1, "limit_val_batches": 0.5}, id="limit_val_batches fraction"),
        pytest.param({"max_epochs": 1, "limit_val_batches": 0}, id="limit_val_batches=0 skips validation"),
        pytest.param({"fast_dev_run": True}, id="fast_dev_run=True runs one batch of each"),
        pytest.param({"fast_dev_run": 3}, id="fast_dev_run=3 runs three batches of each"),
        pytest.param({"max_epochs": 2, "overfit_batches": 2}, id="overfit_batches int"),
        pytest.param({"max_epochs": 1, "overfit_batches": 0.25}, id="overfit_batches fraction"),
    ],
)
def test_the_fit_runs_the_batches_lightning_runs(tmp_path: Path, options: dict[str, Any]) -> None:
    records = fit_both(tmp_path, **options)
    assert records["accelplug"].story == records["lightning"].story
    assert_same_weights(records)


@pytest.mark.parametrize(
    ("options", "stop_at_step"),
    [
        pytest.param({"max_epochs": 4}, 2, id="a requested stop ends the epoch at once"),
        pytest.param({"max_epochs": 4, "min_epochs": 3}, 2, id="min_epochs holds a requested stop back"),
        pytest.param({"max_epochs": 4, "min_steps": 12}, 2, id="min_steps holds a requested stop back"),
    ],
)
def test_min_epochs_and_min_steps_hold_a_requested_stop_as_lightning(
    tmp_path: Path, options: dict[str, Any], stop_at_step: int
) -> None:
    records = fit_both(tmp_path, module={"stop_at_step": stop_at_step}, **options)
    assert records["accelplug"].story == records["lightning"].story


def test_max_steps_counts_optimizer_steps_not_batches_under_accumulation(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_steps=4, accumulate_grad_batches=3)
    assert records["accelplug"].story == records["lightning"].story
    assert records["accelplug"].global_step == 4
    assert len(records["accelplug"].batches) == 11  # 8 batches = 3 steps (the last window short), then 3 more


def test_a_batch_limit_that_cuts_an_accumulation_window_steps_on_the_epochs_last_batch(tmp_path: Path) -> None:
    records = fit_both(tmp_path, max_epochs=2, accumulate_grad_batches=2, limit_train_batches=5)
    assert records["accelplug"].story == records["lightning"].story
    assert records["accelplug"].global_step == 6  # 3 steps an epoch: 2 + 2 + the 5th batch alone


def test_a_fraction_limit_on_a_loader_without_length_asks_for_a_number_of_batches(tmp_path: Path) -> None:
    import torch

    class Stream(torch.utils.data.IterableDataset[tuple[torch.Tensor, torch.Tensor]]):
        def __iter__(self) -> Any:
            for _ in range(8):
                yield torch.zeros(2), torch.zeros(1)

    def stream() -> torch.utils.data.DataLoader[Any]:
        return torch.utils.data.DataLoader(Stream(), batch_size=4)

    with pytest.raises(MisconfigurationException, match=r"limit_train_batches=0.5 is a fraction of an epoch"):
        fit_one(accelplug, tmp_path, train=stream, val=None, max_epochs=1, limit_train_batches=0.5)


@pytest.mark.parametrize("mode", ["min_size", "max_size_cycle", "max_size"])
def test_evaluation_counts_each_loader_of_a_combined_loader_and_no_sanity_check_as_lightning(
    tmp_path: Path, mode: str
) -> None:
    """``num_val_batches`` has one count per loader of a ``CombinedLoader`` (whatever its mode, as Lightning counts
    them); ``num_sanity_val_batches`` is the fit's alone, so ``validate`` leaves it empty."""
    from tests.callbacks.parity import quiet_lightning
    from tests.trainer.loops.both import FRAMEWORKS

    counts = {}
    for name, framework in FRAMEWORKS.items():

        class Quiet(framework.LightningModule):  # type: ignore[misc, name-defined]
            def validation_step(self, batch: Any, batch_idx: int) -> None:
                pass

        combined = framework.pytorch.utilities.CombinedLoader({"a": [0, 1, 2], "b": [3, 4]}, mode)
        trainer = framework.Trainer(default_root_dir=tmp_path / name, logger=False, enable_progress_bar=False)
        with quiet_lightning(framework):
            trainer.validate(Quiet(), combined, verbose=False)
        counts[name] = (trainer.num_val_batches, trainer.num_sanity_val_batches)
    assert counts["accelplug"] == counts["lightning"] == ([3, 2], [])
