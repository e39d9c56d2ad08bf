"""Strategy methods a subclass written for Lightning overrides, honoured by accelplug's Trainer as Lightning's does.

Found by Lightning's ``strategies/test_custom_strategy.py``: a strategy that restores optimizers itself answers
``lightning_restore_optimizer = False``, and Lightning's ``load_optimizer_state_dict(checkpoint)`` takes the
whole checkpoint (accelplug's own form takes one optimizer and its state).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from accelplug import Trainer
from accelplug.pytorch.strategies import SingleDeviceStrategy
from tests.modules import LinearRegression, quiet, regression_data


def _checkpoint(tmp_path: Path) -> Path:
    trainer = Trainer(**quiet(max_steps=2, default_root_dir=tmp_path, enable_checkpointing=False, log_every_n_steps=1))
    trainer.fit(LinearRegression(), regression_data())
    path = tmp_path / "resume.ckpt"
    trainer.save_checkpoint(path)
    return path


class LightningFormStrategy(SingleDeviceStrategy):
    """Lightning's form: one call with the whole checkpoint; optionally restores nothing through the Trainer."""

    def __init__(self, restore: bool) -> None:
        super().__init__("cpu")
        self.restore = restore
        self.received: list[Mapping[str, Any]] = []

    @property
    def lightning_restore_optimizer(self) -> bool:
        return self.restore

    def load_optimizer_state_dict(self, checkpoint: Mapping[str, Any]) -> None:  # type: ignore[override]
        self.received.append(checkpoint)


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
@pytest.mark.parametrize("restore", [True, False])
def test_lightnings_load_optimizer_state_dict_gets_the_whole_checkpoint_unless_the_strategy_restores_itself(
    restore: bool, tmp_path: Path
) -> None:
    path = _checkpoint(tmp_path)
    strategy = LightningFormStrategy(restore)
    Trainer(
        **quiet(
            max_steps=3, default_root_dir=tmp_path, strategy=strategy, enable_checkpointing=False, log_every_n_steps=1
        )
    ).fit(LinearRegression(), regression_data(), ckpt_path=path)
    assert len(strategy.received) == (1 if restore else 0)
    if restore:
        assert set(strategy.received[0]) >= {"optimizer_states", "state_dict"}
