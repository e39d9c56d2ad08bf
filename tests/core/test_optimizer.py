"""``LightningOptimizer``: ``self.optimizers()`` returns Lightning's wrapper, of the wrapped optimizer's class too."""

from __future__ import annotations

from typing import Any

import pytest
import torch

from accelplug.core.optimizer import LightningOptimizer, do_nothing_closure
from accelplug.errors import MisconfigurationException
from accelplug.pytorch import LightningModule, Trainer
from accelplug.pytorch.core.optimizer import LightningOptimizer as at_lightnings_path


def _sgd() -> torch.optim.SGD:
    return torch.optim.SGD(torch.nn.Linear(2, 1).parameters(), lr=0.5)


def test_the_wrapper_is_an_instance_of_the_wrapped_optimizers_class() -> None:
    optimizer = _sgd()
    wrapped = LightningOptimizer(optimizer)
    assert isinstance(wrapped, torch.optim.SGD) and isinstance(wrapped, LightningOptimizer)
    assert type(wrapped).__name__ == "LightningSGD"
    assert wrapped.optimizer is optimizer
    assert at_lightnings_path is LightningOptimizer


def test_the_wrapper_reads_the_optimizers_state_through() -> None:
    optimizer = _sgd()
    wrapped = LightningOptimizer(optimizer)
    assert wrapped.param_groups is optimizer.param_groups and wrapped.defaults["lr"] == 0.5
    assert wrapped.state_dict() == optimizer.state_dict()


def test_wrapping_a_wrapper_wraps_the_optimizer_once() -> None:
    optimizer = _sgd()
    assert LightningOptimizer(LightningOptimizer(optimizer)).optimizer is optimizer


def test_step_without_a_trainer_steps_the_optimizer_and_returns_the_closures_value() -> None:
    layer = torch.nn.Linear(1, 1, bias=False)
    torch.nn.init.ones_(layer.weight)
    wrapped = LightningOptimizer(torch.optim.SGD(layer.parameters(), lr=0.5))

    def closure() -> torch.Tensor:
        wrapped.zero_grad()
        loss: torch.Tensor = layer(torch.ones(1, 1)).sum()
        loss.backward()  # type: ignore[no-untyped-call]
        return loss

    assert wrapped.step(closure).item() == 1.0
    assert layer.weight.item() == 0.5
    do_nothing_closure()  # Lightning's closure for a step without one: callable, answers nothing


def test_a_closure_that_is_not_callable_is_refused() -> None:
    with pytest.raises(MisconfigurationException, match="the closure should be callable"):
        LightningOptimizer(_sgd()).step(closure=3)  # type: ignore[arg-type]


def test_toggle_model_freezes_the_other_optimizers_parameters_during_a_fit(tmp_path: Any) -> None:
    seen: list[tuple[bool, bool]] = []

    class TwoParts(LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.automatic_optimization = False
            self.a, self.b = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> None:
            first, _ = self.optimizers()
            assert isinstance(first, LightningOptimizer) and isinstance(first, torch.optim.SGD)
            with first.toggle_model():
                seen.append((self.a.weight.requires_grad, self.b.weight.requires_grad))
            seen.append((self.a.weight.requires_grad, self.b.weight.requires_grad))

        def configure_optimizers(self) -> Any:
            return [torch.optim.SGD(self.a.parameters(), lr=0.1), torch.optim.SGD(self.b.parameters(), lr=0.1)]

        def train_dataloader(self) -> Any:
            return [torch.zeros(2)]

    trainer = Trainer(default_root_dir=tmp_path, max_epochs=1, logger=False, enable_checkpointing=False,
                      enable_progress_bar=False, enable_model_summary=False)  # fmt: skip
    trainer.fit(TwoParts())
    assert seen == [(True, False), (True, True)]
