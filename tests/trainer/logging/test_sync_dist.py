"""``self.log(..., sync_dist=True)`` under two gloo processes: a step value is reduced across the processes with
its ``reduce_fx`` as it is logged, as Lightning 2.6 does, so ``callback_metrics`` holds the group's value at once
(no logging step needed); an epoch value is still reduced over the epoch's batches of every process.

``ddp_fork`` runs the fit in two forks of this process; rank 0's ``callback_metrics`` come back.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from accelplug import LightningModule, Trainer
from tests.modules import regression_data


def _two_forks(tmp_path: Path, **options: int) -> Trainer:
    """A one-epoch fit on two gloo processes forked from this one, with nothing but the fit itself."""
    return Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp_fork",
        max_epochs=1,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
        **options,  # type: ignore[arg-type]
    )


class LogsRankValues(LightningModule):
    """Each step logs values that differ by rank: rank 0 logs ``batch_idx``, rank 1 ``batch_idx + 1``."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        value = float(batch_idx + self.global_rank)
        for reduce_fx in ("sum", "mean", "max", "min"):
            self.log(f"step_{reduce_fx}", value, sync_dist=True, reduce_fx=reduce_fx)
        self.log("forked", value, on_step=True, on_epoch=True, sync_dist=True)
        self.log("unsynced", value)
        x, y = batch
        return torch.nn.functional.mse_loss(self.linear(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_sync_dist_reduces_step_values_across_processes_with_their_reduce_fx(tmp_path: Path) -> None:
    # fewer batches than log_every_n_steps: no logging step reads the values back
    trainer = _two_forks(tmp_path, limit_train_batches=3)
    trainer.fit(LogsRankValues(), regression_data(n=48, batch_size=8))

    metrics = {name: float(value) for name, value in trainer.callback_metrics.items()}
    # the last step (batch 2) logged 2.0 on rank 0 and 3.0 on rank 1
    assert metrics["step_sum"] == 5.0
    assert metrics["step_mean"] == 2.5
    assert metrics["step_max"] == 3.0
    assert metrics["step_min"] == 2.0
    assert metrics["unsynced"] == 2.0, "without sync_dist a step value is this process's own"
    assert metrics["forked_step"] == 2.5
    assert metrics["forked_epoch"] == metrics["forked"] == pytest.approx((0 + 1 + 2 + 1 + 2 + 3) / 6)


class LogsByRank(LightningModule):
    """Rank 0 logs a value of its own (``rank_zero_only=True``) and every rank its rank, on the step and epoch."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(3, 1)

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        self.log("rank_step", float(self.global_rank))
        self.log("rank_epoch", float(self.global_rank), on_step=False, on_epoch=True)
        if self.global_rank == 0:
            self.log("only_rank_0", 7.0, on_step=True, on_epoch=True, rank_zero_only=True)
        x, y = batch
        return torch.nn.functional.mse_loss(self.linear(x), y)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


def test_values_without_sync_dist_stay_each_processs_own_and_one_rank_may_log_a_name_alone(tmp_path: Path) -> None:
    # Lightning keeps an unsynced value (and a rank_zero_only one) per process: rank 0 reads its own. A name that
    # only rank 0 logs must join no collective, or the fit would wait forever for rank 1.
    # every step is a logging step: the step values are read back each time
    trainer = _two_forks(tmp_path, limit_train_batches=2, log_every_n_steps=1)
    trainer.fit(LogsByRank(), regression_data(n=32, batch_size=8))

    metrics = {name: float(value) for name, value in trainer.callback_metrics.items()}
    assert metrics["rank_step"] == 0.0
    assert metrics["rank_epoch"] == 0.0
    assert metrics["only_rank_0_step"] == metrics["only_rank_0_epoch"] == 7.0


@pytest.mark.timeout(120)
def test_forking_from_a_process_holding_a_group_of_one_leaves_it_first(tmp_path: Path) -> None:
    """A process group of one left in this process (DDP on one device, a test that made one) is left before the
    fork: a forked child cannot leave a gloo group its parent made (it waited forever), and it makes its own."""
    import torch.distributed as dist

    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        trainer = _two_forks(tmp_path, limit_train_batches=2)
        trainer.fit(LogsRankValues(), regression_data(n=48, batch_size=8))
        assert trainer.global_step == 2
        assert not dist.is_initialized()
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
