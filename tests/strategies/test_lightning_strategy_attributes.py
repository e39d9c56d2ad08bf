"""Lightning's attributes of a strategy and a precision a Trainer holds, compared with Lightning itself.

``trainer.strategy.accelerator`` is the run's accelerator from the Trainer's construction on (so Lightning's
argument-less ``strategy.setup_environment()`` works), ``strategy.model`` and ``strategy.optimizers`` can be
assigned, and the precision a name selects is an instance of the plugin class Lightning makes for that name
(``isinstance(trainer.precision_plugin, MixedPrecision)``). Found by Lightning's ``tests_pytorch/strategies``
(``test_ddp.py``, ``test_single_device.py``, ``test_model_parallel.py``) and ``plugins/test_amp_plugins.py``.
"""

from __future__ import annotations

from typing import Any
from unittest.mock import Mock

import pytest
import torch

import accelplug.pytorch as ap

from ..callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning.pytorch", reason="compared with Lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": ap}
QUIET = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False, "enable_model_summary": False}


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("strategy", ["auto", "ddp"])
def test_the_strategys_accelerator_is_the_runs_from_the_trainers_construction_on(framework: str, strategy: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    with quiet_lightning():
        trainer = fw.Trainer(accelerator="cpu", devices=1, strategy=strategy, **QUIET)
    assert isinstance(trainer.strategy.accelerator, fw.accelerators.CPUAccelerator)
    assert trainer.strategy.root_device == torch.device("cpu")


def test_setup_environment_without_arguments_runs_on_the_trainers_accelerator() -> None:
    with quiet_lightning():
        trainer = ap.Trainer(accelerator="cpu", devices=1, **QUIET)
    trainer.strategy.setup_environment()  # Lightning's form: no arguments
    assert trainer.strategy.root_device == torch.device("cpu")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_strategys_model_and_optimizers_can_be_assigned(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    strategy = fw.strategies.SingleDeviceStrategy("cpu")
    module = torch.nn.Linear(2, 2)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    strategy.model = module
    strategy.optimizers = [optimizer]
    assert strategy.model is module
    assert strategy.optimizers == [optimizer]


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(
    ("precision", "plugin_class"),
    [("bf16-mixed", "MixedPrecision"), ("bf16-true", "HalfPrecision"), ("64-true", "DoublePrecision")],
)
def test_the_precision_a_name_selects_is_an_instance_of_lightnings_plugin_class(
    framework: str, precision: str, plugin_class: str
) -> None:
    fw: Any = FRAMEWORKS[framework]
    with quiet_lightning():
        trainer = fw.Trainer(accelerator="cpu", precision=precision, **QUIET)
    assert isinstance(trainer.precision_plugin, getattr(fw.plugins, plugin_class))
    assert isinstance(trainer.precision_plugin, fw.plugins.Precision)
    others = {"MixedPrecision", "HalfPrecision", "DoublePrecision"} - {plugin_class}
    assert not any(isinstance(trainer.precision_plugin, getattr(fw.plugins, name)) for name in others)


def test_a_built_in_precision_is_no_plugin_to_the_trainers_own_checks() -> None:
    """The virtual subclasses answer ``isinstance`` only: FSDP still takes ``precision="bf16-mixed"`` (a plugin other
    than ``FSDPPrecision`` is what it refuses), and a built-in is never taken for a plugin that rewrote a step."""
    from accelplug.precision import BF16MixedPrecision
    from accelplug.precision.lightning.base import is_plugin

    numerics = BF16MixedPrecision("cpu")
    assert isinstance(numerics, ap.plugins.MixedPrecision) and not is_plugin(numerics)
    strategy = ap.strategies.FSDPStrategy()
    strategy.precision_plugin = numerics
    assert strategy.precision_plugin is numerics
    with pytest.raises(TypeError, match="can only work with the `FSDPPrecision"):
        strategy.precision_plugin = ap.plugins.MixedPrecision("bf16-mixed", "cpu")


@pytest.mark.parametrize("framework", ["lightning", "accelplug"])
def test_fabrics_all_reduce_and_module_to_device_on_one_device(framework: str) -> None:
    import lightning.fabric.strategies

    import accelplug.fabric.strategies

    fabric_strategies: Any = {"lightning": lightning.fabric.strategies, "accelplug": accelplug.fabric.strategies}
    fabric_strategies = fabric_strategies[framework]
    strategy = fabric_strategies.SingleDeviceStrategy("cpu")
    tensor = torch.tensor([1.0, 2.0])
    assert strategy.all_reduce(tensor) is tensor  # one process: the tensor as it is
    assert strategy.all_reduce(tensor, reduce_op="sum") is tensor
    module = torch.nn.Linear(2, 2).to(torch.float64)
    strategy.module_to_device(module)
    assert next(module.parameters()).device == torch.device("cpu")
    placed_when_sharded = Mock(spec=torch.nn.Module)
    fabric_strategies.FSDPStrategy().module_to_device(placed_when_sharded)  # FSDP places it when it shards
    placed_when_sharded.to.assert_not_called()


class _Fruit:
    count = 1

    def state_dict(self) -> dict[str, int]:
        return {"count": self.count}

    def load_state_dict(self, state_dict: dict[str, int]) -> None:
        self.count = state_dict["count"]


@pytest.mark.parametrize("framework", ["lightning", "accelplug"])
def test_an_object_with_its_own_state_is_stateful_and_saved_through_it(framework: str, tmp_path: Any) -> None:
    import importlib

    types: Any = importlib.import_module(f"{framework}.fabric.utilities.types")
    strategies: Any = importlib.import_module(f"{framework}.fabric.strategies")
    fruit = _Fruit()
    fruit.count = 100
    assert isinstance(fruit, types._Stateful) and not isinstance(object(), types._Stateful)
    strategy = strategies.SingleDeviceStrategy()
    strategy.save_checkpoint(tmp_path / "checkpoint.ckpt", {"fruit": fruit})
    fresh = _Fruit()
    strategy.load_checkpoint(tmp_path / "checkpoint.ckpt", {"fruit": fresh})
    assert fresh.count == 100


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(
    ("asked", "device", "backend"), [("foo", "cpu", "foo"), (None, "cuda:0", "nccl"), (None, "cpu", "gloo")]
)
def test_the_process_group_backend_is_known_before_any_setup(
    framework: str, asked: str | None, device: str, backend: str
) -> None:
    """Lightning's ``_get_process_group_backend()``; a subclass that sets its device before the base's ``__init__``
    keeps it, as with Lightning's base, which sets none."""
    fw: Any = FRAMEWORKS[framework]

    class OnDevice(fw.strategies.DDPStrategy):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            self._root_device = torch.device(device)
            super().__init__(process_group_backend=asked)

        @property
        def root_device(self) -> torch.device:
            return self._root_device  # type: ignore[no-any-return]

    assert OnDevice()._get_process_group_backend() == backend


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_single_device_strategy_has_no_launcher(framework: str) -> None:
    """Lightning's ``strategy.launcher`` is None for one process on one device (code checks it before launching)."""
    fw: Any = FRAMEWORKS[framework]
    with quiet_lightning():
        trainer = fw.Trainer(accelerator="cpu", devices=1, **QUIET)
    assert type(trainer.strategy).__name__ == "SingleDeviceStrategy"
    assert trainer.strategy.launcher is None
    assert fw.strategies.SingleDeviceStrategy(device="cpu").launcher is None
