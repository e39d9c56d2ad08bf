"""How DDP shares each stage's samples out, on two real gloo processes, in Lightning 2.6.6 and in accelplug.

``predict`` shares a loader out without padding (Lightning's ``UnrepeatedDistributedSamplerWrapper`` around the
loader's own sampler): each of 11 samples is predicted exactly once, rank 0 gets six and rank 1 five, and the
batches keep every sample even when the loader says ``drop_last=True``. A ``BasePredictionWriter`` is told each
batch's dataset indices. A standalone ``validate`` pads the shares instead (torch's ``DistributedSampler``: six
each, one sample seen twice) and warns about it. ``use_distributed_sampler=False`` leaves the loader alone: every
rank predicts all 11. Nothing is returned from forks: ``return_predictions`` defaults to False there, and True is
refused.

Each framework runs every case in forks of this process (``ddp_fork``), once for the module; each rank writes what
it saw to a file.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, Sampler, TensorDataset

import accelplug

lightning = pytest.importorskip("lightning", reason="the runs are compared with lightning's, not installed here")

SAMPLES = 11


class Reversed(Sampler[int]):
    """A sampler of the user's: the dataset backwards (its order must survive the sharing out)."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.n - 1, -1, -1))

    def __len__(self) -> int:
        return self.n


def _loaders() -> dict[str, DataLoader[Any]]:
    data = TensorDataset(torch.arange(SAMPLES).unsqueeze(1))
    return {
        "drop_last": DataLoader(data, batch_size=2, drop_last=True),
        "own_sampler": DataLoader(data, batch_size=2, sampler=Reversed(SAMPLES)),
    }


def _run(framework: Any, folder: Path) -> dict[str, Any]:
    """Every case in ``framework``; what each rank saw, read back from its files."""

    class Echo(framework.LightningModule):  # type: ignore[misc, name-defined]
        """Predicts (and validates on) each sample's own index."""

        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(1, 1)
            self.seen: list[int] = []

        def predict_step(self, batch: Any, batch_idx: int) -> list[int]:
            return [int(value) for value in batch[0].flatten()]

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            self.seen.extend(int(value) for value in batch[0].flatten())

    class Writer(framework.pytorch.callbacks.BasePredictionWriter):  # type: ignore[misc, name-defined]
        """Each rank writes its predictions, the indices it was told and the warnings it caught."""

        def __init__(self, case: str, caught: list[warnings.WarningMessage]) -> None:
            super().__init__("batch_and_epoch")
            self.case, self.caught, self.batches = case, caught, []  # type: list[Any]

        def write_on_batch_end(self, trainer: Any, module: Any, prediction: Any, indices: Any, *_: Any) -> None:
            self.batches.append(list(indices))

        def write_on_epoch_end(self, trainer: Any, module: Any, predictions: Any, indices: Any) -> None:
            self._dump(trainer, {"predictions": predictions, "epoch_indices": indices[0], "batches": self.batches})

        def on_validation_end(self, trainer: Any, module: Any) -> None:
            self._dump(trainer, {"seen": module.seen})

        def _dump(self, trainer: Any, facts: dict[str, Any]) -> None:
            facts["warnings"] = [str(w.message) for w in self.caught if "DistributedSampler" in str(w.message)]
            (folder / f"{self.case}.{trainer.global_rank}.json").write_text(json.dumps(facts))

    def trainer(case: str, caught: list[warnings.WarningMessage], **options: Any) -> Any:
        return framework.Trainer(
            accelerator="cpu", devices=2, strategy="ddp_fork", logger=False, enable_checkpointing=False,
            enable_progress_bar=False, enable_model_summary=False, callbacks=[Writer(case, caught)],
            default_root_dir=folder, **options,
        )  # fmt: skip

    returned = {}
    for case, loader in _loaders().items():
        returned[case] = trainer(case, []).predict(Echo(), loader)
    returned["undistributed"] = trainer("undistributed", [], use_distributed_sampler=False).predict(
        Echo(), _loaders()["drop_last"]
    )
    with warnings.catch_warnings(record=True) as caught:  # the forks inherit the recording, their callback reads it
        warnings.simplefilter("always")
        trainer("validate", caught).validate(Echo(), _loaders()["drop_last"], verbose=False)
    ranks = {
        case: [json.loads((folder / f"{case}.{rank}.json").read_text()) for rank in (0, 1)]
        for case in ("drop_last", "own_sampler", "undistributed", "validate")
    }
    return {"returned": returned, "ranks": ranks}


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    with warnings.catch_warnings():
        # Lightning's own advice for these tiny runs, which the comparison does not look at
        warnings.filterwarnings("ignore", module=r"lightning\.")
        return {
            name: _run(framework, tmp_path_factory.mktemp(name))
            for name, framework in (("lightning", lightning), ("accelplug", accelplug))
        }


def _flat(batches: list[list[int]]) -> list[int]:
    return [index for batch in batches for index in batch]


@pytest.mark.slow
def test_predict_gives_each_sample_to_exactly_one_rank_without_padding(runs: dict[str, dict[str, Any]]) -> None:
    ranks = runs["accelplug"]["ranks"]["drop_last"]
    per_rank = [_flat(rank["predictions"]) for rank in ranks]
    assert per_rank == [[0, 2, 4, 6, 8, 10], [1, 3, 5, 7, 9]]  # every other sample; the odd one out is not repeated
    assert sorted(per_rank[0] + per_rank[1]) == list(range(SAMPLES))
    # the loader's drop_last=True is not honoured: the last, short batch of rank 1 is predicted too
    assert ranks[1]["predictions"][-1] == [9]
    assert ranks == runs["lightning"]["ranks"]["drop_last"]


@pytest.mark.slow
def test_predict_tells_the_writer_each_batchs_dataset_indices(runs: dict[str, dict[str, Any]]) -> None:
    for rank in runs["accelplug"]["ranks"]["drop_last"] + runs["accelplug"]["ranks"]["own_sampler"]:
        # the module predicts each sample's own index, so the indices are the predictions
        assert rank["batches"] == rank["epoch_indices"] == rank["predictions"]


@pytest.mark.slow
def test_predict_shares_out_the_order_of_the_loaders_own_sampler(runs: dict[str, dict[str, Any]]) -> None:
    ranks = runs["accelplug"]["ranks"]["own_sampler"]
    assert [_flat(rank["predictions"]) for rank in ranks] == [[10, 8, 6, 4, 2, 0], [9, 7, 5, 3, 1]]
    assert ranks == runs["lightning"]["ranks"]["own_sampler"]


@pytest.mark.slow
def test_predict_under_a_forking_strategy_returns_nothing(runs: dict[str, dict[str, Any]]) -> None:
    # the forks' predictions are not sent back: writers get them (Lightning's return_predictions default there)
    assert (
        runs["accelplug"]["returned"] == runs["lightning"]["returned"] == dict.fromkeys(runs["accelplug"]["returned"])
    )


def test_return_predictions_under_a_forking_strategy_is_refused_before_any_process_starts(tmp_path: Path) -> None:
    trainer = accelplug.Trainer(
        accelerator="cpu", devices=2, strategy="ddp_fork", logger=False, default_root_dir=tmp_path
    )
    with pytest.raises(accelplug.MisconfigurationException) as refused:
        trainer.predict(torch.nn.Linear(1, 1), _loaders()["drop_last"], return_predictions=True)
    assert "`return_predictions` should be set to `False` when using the strategies that spawn or fork" in str(
        refused.value
    )
    # the type Lightning's caller gets, which finds out inside the started processes
    assert isinstance(refused.value, torch.multiprocessing.ProcessRaisedException)


@pytest.mark.slow
def test_without_the_distributed_sampler_every_rank_predicts_every_sample(runs: dict[str, dict[str, Any]]) -> None:
    ranks = runs["accelplug"]["ranks"]["undistributed"]
    assert [_flat(rank["predictions"]) for rank in ranks] == [list(range(SAMPLES))] * 2
    assert ranks == runs["lightning"]["ranks"]["undistributed"]


@pytest.mark.slow
def test_validate_pads_the_shares_and_warns_that_samples_repeat(runs: dict[str, dict[str, Any]]) -> None:
    ranks = runs["accelplug"]["ranks"]["validate"]
    # torch's DistributedSampler: 6 each, sample 0 seen twice; the loader's drop_last=True drops nothing of 6
    assert [rank["seen"] for rank in ranks] == [[0, 2, 4, 6, 8, 10], [1, 3, 5, 7, 9, 0]]
    assert len(ranks[0]["warnings"]) == 1
    assert (
        "During `trainer.validate()`, it is recommended to use `Trainer(devices=1, num_nodes=1)`"
        in (ranks[0]["warnings"][0])
    )
    assert ranks[1]["warnings"] == []  # rank zero only
    lightnings = runs["lightning"]["ranks"]["validate"]
    assert [rank["seen"] for rank in lightnings] == [rank["seen"] for rank in ranks]
    assert [len(rank["warnings"]) for rank in lightnings] == [1, 0]
