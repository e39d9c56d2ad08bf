"""A strategy written to Lightning's ``setup_module(module)`` (one argument) sets up Fabric's modules in Lightning's
order: the precision converts, Fabric moves, the strategy's own method runs. accelplug's own form is
``setup_module(module, precision, *, move_to_device)``; a library's strategy subclass keeps Lightning's."""

from __future__ import annotations

import pytest
import torch

import accelplug
from accelplug.fabric import Fabric
from accelplug.strategies.single_device import SingleDeviceStrategy


class _LightningFormStrategy(SingleDeviceStrategy):
    def __init__(self) -> None:
        super().__init__(device="cpu")
        self.seen: list[torch.dtype] = []

    def setup_module(self, module: torch.nn.Module) -> torch.nn.Module:  # type: ignore[override]
        self.seen.append(next(module.parameters()).dtype)
        return module


def test_a_lightning_form_setup_module_gets_the_converted_module_and_training_works() -> None:
    strategy = _LightningFormStrategy()
    fabric = Fabric(accelerator="cpu", devices=1, strategy=strategy, precision="64-true")
    model = torch.nn.Linear(2, 1)
    module, optimizer = fabric.setup(model, torch.optim.SGD(model.parameters(), lr=0.1))
    assert strategy.seen == [torch.float64]  # the precision converted it before the strategy's own step
    before = model.weight.detach().clone()
    loss = module(torch.ones(4, 2, dtype=torch.float64)).sum()
    fabric.backward(loss)
    optimizer.step()
    assert not torch.equal(before, model.weight.detach())


def test_a_replaced_one_argument_setup_module_is_called_as_lightning_calls_it() -> None:
    fabric = Fabric(accelerator="cpu", devices=1)
    calls: list[torch.nn.Module] = []

    def lightning_form(module: torch.nn.Module) -> torch.nn.Module:
        calls.append(module)
        return module

    fabric.strategy.setup_module = lightning_form  # type: ignore[assignment]
    model = torch.nn.Linear(2, 2)
    fabric.setup_module(model)
    assert calls == [model]


def test_a_lightning_form_strategy_that_returns_its_own_wrapper_is_refused_naming_accelplugs_form() -> None:
    strategy = _LightningFormStrategy()
    strategy.setup_module = lambda module: torch.nn.Sequential(module)  # type: ignore[method-assign]
    fabric = Fabric(accelerator="cpu", devices=1, strategy=strategy)
    with pytest.raises(accelplug.MisconfigurationException, match=r"setup_module\(module, precision"):
        fabric.setup_module(torch.nn.Linear(2, 2))
