"""Lightning's public strategy methods that user code calls on ``trainer.strategy``: ``broadcast`` (from any rank),
``reduce``, ``reduce_boolean_decision``, ``model``, ``optimizers``, ``batch_to_device`` and
``lightning_module_state_dict``, on one process beside Lightning 2.6 and on two real gloo processes."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning
from tests.processes import child_env
from tests.warm_python import WarmPython

lightning = pytest.importorskip("lightning", reason="compared with Lightning, not installed here")


def _answers(framework: Any, tmp_path: Path) -> dict[str, Any]:
    """What a module's hooks read from its strategy during a one-process fit."""
    seen: dict[str, Any] = {}

    class Reads(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch[0]).sum()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def transfer_batch_to_device(self, batch: Any, device: torch.device, dataloader_idx: int) -> Any:
            if isinstance(batch, dict) and "probe" in batch:
                return {"moved_by_hook": batch["probe"]}
            return super().transfer_batch_to_device(batch, device, dataloader_idx)

        def on_train_start(self) -> None:
            strategy = self.trainer.strategy
            seen["broadcast"] = strategy.broadcast({"a": 1})
            seen["reduce"] = strategy.reduce(torch.tensor([2.0, 4.0])).tolist()
            seen["reduce_sum"] = strategy.reduce(torch.tensor(3.0), reduce_op="sum").item()
            seen["reduce_other"] = strategy.reduce("not a tensor")
            seen["decision"] = (strategy.reduce_boolean_decision(True), strategy.reduce_boolean_decision(False))
            seen["model_is_module"] = strategy.model is self
            seen["optimizers"] = [type(o).__name__ for o in strategy.optimizers]
            seen["same_optimizers"] = strategy.optimizers[0] is self.trainer.optimizers[0]
            seen["state_keys"] = sorted(strategy.lightning_module_state_dict())
            seen["batch"] = strategy.batch_to_device({"probe": torch.zeros(1)})

    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(2, 2)), batch_size=2)
    trainer = framework.Trainer(
        accelerator="cpu", devices=1, max_steps=1, logger=False, enable_progress_bar=False,
        enable_model_summary=False, enable_checkpointing=False, default_root_dir=tmp_path,
    )  # fmt: skip
    with quiet_lightning(framework):
        trainer.fit(Reads(), loader)
    return seen


def test_one_process_answers_as_lightnings_strategy(tmp_path: Path) -> None:
    got = _answers(accelplug, tmp_path / "accelplug")
    expected = _answers(lightning, tmp_path / "lightning")
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        if key == "batch":
            assert isinstance(got[key], dict) and torch.equal(got[key]["moved_by_hook"], value["moved_by_hook"])
        else:
            assert got[key] == value, key
    assert got["optimizers"] == ["SGD"] and got["decision"] == (True, False)


def test_an_unknown_reduction_is_refused_naming_the_close_one() -> None:
    strategy = accelplug.Trainer(accelerator="cpu", logger=False).strategy
    with pytest.raises(MisconfigurationException, match=r"reduce_op='summ'.*Accepted.*'sum'"):
        strategy.reduce(torch.tensor(1.0), reduce_op="summ")


SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import torch
    import accelplug as L

    warnings.simplefilter("ignore")
    out = sys.argv[1]

    class Reads(L.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

        def on_train_start(self):
            strategy, rank = self.trainer.strategy, self.global_rank
            seen = {
                "from_rank_1": strategy.broadcast(f"chosen by {rank}", src=1),
                "from_rank_0": strategy.broadcast(f"chosen by {rank}"),
                "mean": strategy.reduce(torch.tensor(float(rank))).item(),
                "sum": strategy.reduce(torch.tensor(float(rank) + 1), reduce_op="sum").item(),
                "max": strategy.reduce(torch.tensor(float(rank)), reduce_op="max").item(),
                "all_true": strategy.reduce_boolean_decision(rank == 0),
                "any_true": strategy.reduce_boolean_decision(rank == 0, all=False),
                "model_is_ddp": isinstance(strategy.model, torch.nn.parallel.DistributedDataParallel),
            }
            with open(f"{out}.{rank}", "w") as file:
                json.dump(seen, file)

    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.ones(4, 2)), batch_size=2)
    trainer = L.Trainer(accelerator="cpu", devices=2, strategy="ddp", max_steps=1, logger=False,
                        enable_progress_bar=False, enable_model_summary=False, enable_checkpointing=False)
    trainer.fit(Reads(), loader)
    """
)


@pytest.mark.timeout(300)
def test_two_gloo_processes_broadcast_from_either_rank_and_reduce(fit_python: WarmPython, tmp_path: Path) -> None:
    script = tmp_path / "reads.py"
    script.write_text(SCRIPT)
    out = tmp_path / "seen"
    done = fit_python.run([str(script), str(out)], cwd=tmp_path, env=child_env(), timeout=240)
    assert done.returncode == 0, done.stderr[-4000:]
    ranks = [json.loads(Path(f"{out}.{rank}").read_text()) for rank in (0, 1)]
    assert (
        ranks[0]
        == ranks[1]
        == {
            "from_rank_1": "chosen by 1",
            "from_rank_0": "chosen by 0",
            "mean": 0.5,
            "sum": 3.0,
            "max": 1.0,
            "all_true": False,
            "any_true": True,
            "model_is_ddp": True,
        }
    )
