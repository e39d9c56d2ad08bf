"""Every mistake a Fabric user can make is a ``MisconfigurationException`` naming the value, what is accepted,
and a close match when there is one (where Lightning Fabric raises TypeError, ValueError or RuntimeError)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader

from accelplug import MisconfigurationException
from accelplug.fabric import Fabric
from accelplug.fabric.strategies import DDPStrategy, FSDPStrategy
from tests.callbacks.parity import quiet_lightning

from . import loops


@pytest.fixture(autouse=True)
def _quiet() -> Any:
    with quiet_lightning():  # Lightning's own warnings only: accelplug's stay visible
        yield


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"strategy": "dpp"}, "Did you mean 'ddp'"),
        ({"accelerator": "cpuu"}, "Did you mean 'cpu'"),
        ({"precision": "bf16-mixd"}, "bf16-mixed"),
        ({"devices": 0}, "devices=0"),
        ({"num_nodes": 0}, "num_nodes=0"),
        ({"plugins": "bf16"}, "plugins='bf16'"),
        ({"plugins": object()}, "is not a plugin object accelplug uses"),
        ({"loggers": [object()]}, "has no log_metrics"),
        ({"callbacks": "print"}, "callbacks='print'"),
        ({"strategy": FSDPStrategy}, "is a class; pass an instance"),
    ],
)
def test_bad_constructor_arguments_are_named(options: dict[str, Any], words: str) -> None:
    with pytest.raises(MisconfigurationException, match=words):
        Fabric(**{"accelerator": "cpu", **options})


def test_precision_twice_and_unknown_fsdp_options_are_refused() -> None:
    from accelplug.fabric.plugins import BF16MixedPrecision

    with pytest.raises(MisconfigurationException, match="both choose a precision"):
        Fabric(accelerator="cpu", precision="32-true", plugins=BF16MixedPrecision("cpu"))
    with pytest.raises(MisconfigurationException, match="Did you mean 'cpu_offload'"):
        FSDPStrategy(cpu_offlaod=True)
    with pytest.raises(MisconfigurationException, match="use_orig_params"):
        FSDPStrategy(use_orig_params=False)


def _fabric() -> Fabric:
    return Fabric(accelerator="cpu", devices=1)


def test_setting_up_a_wrapper_again_or_with_foreign_optimizers_is_refused() -> None:
    fabric = _fabric()
    net = loops.Net()
    model = fabric.setup(net)
    with pytest.raises(ValueError, match="A model should be passed only once to the `setup` method"):
        fabric.setup(model)
    with pytest.raises(MisconfigurationException, match="A model should be passed only once to the `setup_module`"):
        fabric.setup_module(model)
    assert fabric.setup_module(net).module is net  # the module itself again: accepted, as in Lightning
    other = loops.Net()
    foreign = torch.optim.SGD(loops.Net().parameters(), lr=0.1)
    with pytest.raises(MisconfigurationException, match=r"optimizer 0 \(SGD\) steps none of the parameters of Net"):
        fabric.setup(other, foreign)
    with pytest.raises(MisconfigurationException, match="optimizer 1 is a str"):
        fabric.setup(other, torch.optim.SGD(other.parameters(), lr=0.1), "adam")
    third = loops.Net()
    _, opt = fabric.setup(third, torch.optim.SGD(third.parameters(), lr=0.1))
    with pytest.raises(ValueError, match="An optimizer should be passed only once to the `setup_optimizers` method"):
        fabric.setup_optimizers(opt)
    with pytest.raises(MisconfigurationException, match="`setup_optimizers` requires at least one optimizer"):
        fabric.setup_optimizers()
    with pytest.raises(MisconfigurationException, match=r"expected a torch\.nn\.Module, got a str"):
        fabric.setup("model")


def test_dataloader_mistakes_are_refused() -> None:
    fabric = _fabric()
    loader = fabric.setup_dataloaders(DataLoader(loops.dataset(4)))
    with pytest.raises(ValueError, match="A dataloader should be passed only once to the `setup_dataloaders`"):
        fabric.setup_dataloaders(loader)
    with pytest.raises(TypeError, match=r"Only PyTorch DataLoader are currently supported.*dataloader 1 is a list"):
        fabric.setup_dataloaders(DataLoader(loops.dataset(4)), [1, 2])
    with pytest.raises(MisconfigurationException, match="`setup_dataloaders` requires at least one dataloader"):
        fabric.setup_dataloaders()


def test_step_mistakes_are_refused() -> None:
    fabric = _fabric()
    net = loops.Net()
    model, opt = fabric.setup(net, torch.optim.SGD(net.parameters(), lr=0.1))
    with pytest.raises(MisconfigurationException, match="Only one of `clip_val` or `max_norm` can be set"):
        fabric.clip_gradients(model, opt, clip_val=1.0, max_norm=1.0)
    with pytest.raises(MisconfigurationException, match="You have to specify either `clip_val` or `max_norm`"):
        fabric.clip_gradients(model, opt)
    with pytest.raises(MisconfigurationException, match="expected the optimizer"):
        fabric.clip_gradients(model, "opt", max_norm=1.0)
    with pytest.raises(TypeError, match="You need to set up the model first"):
        fabric.no_backward_sync(net)
    with pytest.raises(MisconfigurationException, match=r"reduce_op='avgg'.*Did you mean 'avg'"):
        fabric.all_reduce(torch.ones(1), reduce_op="avgg")
    with pytest.raises(IndexError, match="no loggers were given"):
        _ = fabric.logger
    with pytest.raises(ValueError, match="does not contain a single element, thus it cannot be converted to a scalar"):
        fabric.log_dict({"pair": torch.ones(2)})


def test_launching_what_a_called_function_returned_is_refused_as_lightning_refuses_it() -> None:
    """``fabric.launch(train(fabric))`` passes ``train``'s ``None``: not taken for "no function"."""
    import lightning.fabric as lightning_fabric

    def train(fabric: object) -> None:
        pass

    for framework in (lightning_fabric.Fabric, Fabric):
        with pytest.raises(TypeError, match="needs to be a callable, but got None"):
            framework(accelerator="cpu", devices=1).launch(train(None))  # type: ignore[func-returns-value]
    assert _fabric().launch() is None  # no function at all: the processes come up, nothing runs


def test_launch_mistakes_and_a_distributed_strategy_used_before_launch_are_refused() -> None:
    fabric = _fabric()
    with pytest.raises(TypeError, match=r"needs to be a callable, but got 42: pass it uncalled"):
        fabric.launch(42)  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match="needs to take at least one argument"):
        fabric.launch(lambda: None)
    ddp = Fabric(accelerator="cpu", devices=2, strategy="ddp")
    with pytest.raises(MisconfigurationException, match=r"call fabric.launch\(\) first"):
        ddp.setup(loops.Net())
    with pytest.raises(MisconfigurationException, match=r"call fabric.launch\(\) first"):
        ddp.barrier()
    spawn = Fabric(accelerator="cpu", devices=2, strategy="ddp_spawn")
    with pytest.raises(MisconfigurationException, match="starts its processes from a function"):
        spawn.launch()


def test_a_tensorboard_logger_without_tensorboard_says_what_to_install(tmp_path: Any) -> None:
    import importlib.util

    from accelplug.fabric.loggers import TensorBoardLogger

    if importlib.util.find_spec("tensorboard") is not None:
        logger = TensorBoardLogger(tmp_path)
        Fabric(accelerator="cpu", loggers=logger).log("x", 1.0, step=0)
        logger.finalize("success")
        assert any(p.name.startswith("events.out") for p in Path(logger.log_dir).iterdir())
        return
    with pytest.raises(MisconfigurationException, match="pip install tensorboard"):
        TensorBoardLogger(tmp_path)


def test_strategy_dp_on_the_cpu_is_ddp_with_lightnings_warning() -> None:
    with pytest.warns(UserWarning, match=r"'dp' is not supported on CPUs, hence setting `strategy='ddp'`"):
        fabric = Fabric(accelerator="cpu", strategy="dp", devices=2)
    assert isinstance(fabric.strategy, DDPStrategy)


@pytest.mark.parametrize("name", ["DeepSpeedStrategy", "XLAStrategy"])
def test_setup_optimizers_is_refused_where_model_and_optimizers_are_set_up_together(name: str) -> None:
    from unittest.mock import Mock

    import accelplug.fabric.strategies as strategies
    from accelplug.fabric.fabric import _check_separate_setup

    engine = Mock(spec=getattr(strategies, name))  # DeepSpeed and XLA cannot be installed on this machine
    with pytest.raises(RuntimeError, match=f"The `{name}` requires the model and optimizer.s. to be set up jointly"):
        _check_separate_setup(engine)
    _check_separate_setup(strategies.DDPStrategy(accelerator="cpu"))  # the others prepare optimizers on their own
