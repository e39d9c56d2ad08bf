"""Lightning Fabric's forms of the precision plugins and strategy constructors, beside the Trainer's.

Lightning Fabric's strategies take the precision as ``precision=`` (the Trainer's take ``precision_plugin=``), and
its plugins step with ``optimizer_step(optimizer, **kwargs)`` (no model, no closure) and run
``backward(tensor, module, *args)`` (the loss scaled, then its own backward with ``args``). A ``16-mixed`` plugin always
holds torch's ``GradScaler`` (turned off where the device's runtime is missing), and a device given as some other
object is kept until autocast needs it. Found by Lightning's ``tests_fabric/plugins/precision`` and
``tests_fabric/strategies/test_strategy.py``; each case here is compared with Lightning itself.
"""

from __future__ import annotations

import warnings
from typing import Any
from unittest.mock import Mock

import pytest
import torch

import accelplug.fabric as af
from accelplug.errors import MisconfigurationException

lightning_fabric = pytest.importorskip("lightning.fabric", reason="compared with Lightning, not installed here")

FRAMEWORKS = {"lightning": lightning_fabric, "accelplug": af}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_sixteen_mixed_plugin_holds_torchs_scaler_whatever_its_device(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: "GradScaler is enabled, but CUDA is not available"
        on_cuda = fw.plugins.MixedPrecision("16-mixed", "cuda")
        on_something = fw.plugins.MixedPrecision("16-mixed", device=Mock())
    assert isinstance(on_cuda.scaler, torch.amp.GradScaler)
    assert isinstance(on_something.scaler, torch.amp.GradScaler)
    assert fw.plugins.MixedPrecision("bf16-mixed", device=Mock()).scaler is None


def test_a_scaler_turned_off_for_a_missing_runtime_lets_the_loss_through_unscaled() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plugin = af.plugins.MixedPrecision("16-mixed", "cuda")
    if plugin.scaler.is_enabled():
        pytest.skip("this machine has CUDA: the scaler is on")
    assert plugin.numerics.scaler is None  # the step runs as without a scaler


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize("precision", ["16-mixed", "bf16-mixed"])
def test_fabrics_optimizer_step_steps_with_the_optimizer_alone(framework: str, precision: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plugin = fw.plugins.MixedPrecision(precision, "cpu")
    plugin.scaler = Mock() if precision == "16-mixed" else None
    optimizer = Mock()
    plugin.optimizer_step(optimizer, keyword="arg")
    if precision == "16-mixed":
        plugin.scaler.step.assert_called_once_with(optimizer, keyword="arg")
        plugin.scaler.update.assert_called_once()
        optimizer.step.assert_not_called()
    else:
        optimizer.step.assert_called_once_with(keyword="arg")


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_base_and_fsdp_plugins_step_the_optimizer_alone_too(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    for plugin in (fw.plugins.Precision(), fw.plugins.FSDPPrecision("bf16-mixed")):
        optimizer = Mock()
        plugin.optimizer_step(optimizer, lr_kwargs={})
        optimizer.step.assert_called_once_with(lr_kwargs={})


@pytest.mark.parametrize(
    ("make", "dtype"),
    [
        (lambda fw: fw.plugins.HalfPrecision("bf16-true"), torch.bfloat16),
        (lambda fw: fw.plugins.MixedPrecision("bf16-mixed", "cpu"), torch.bfloat16),
        (lambda fw: fw.plugins.FSDPPrecision("16-true"), torch.float16),
        (lambda fw: fw.plugins.FSDPPrecision("32-true"), torch.float32),
    ],
)
@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_input_dtype_is_lightnings_private_attribute(framework: str, make: Any, dtype: torch.dtype) -> None:
    assert make(FRAMEWORKS[framework])._desired_input_dtype == dtype


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(
    ("precision", "dtype"), [("32-true", torch.float32), ("16-mixed", torch.float16), ("bf16-true", torch.bfloat16)]
)
def test_deepspeeds_dtype_is_lightnings_private_attribute(framework: str, precision: str, dtype: torch.dtype) -> None:
    assert FRAMEWORKS[framework].plugins.DeepSpeedPrecision(precision)._desired_dtype == dtype


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_fabrics_strategies_take_the_precision_as_precision(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    double = fw.plugins.DoublePrecision()
    assert fw.strategies.SingleDeviceStrategy(device="cpu", precision=double).precision is double
    assert fw.strategies.DDPStrategy(precision=double).precision is double
    fsdp = fw.strategies.FSDPStrategy(
        accelerator=None, parallel_devices=[torch.device("cpu")], precision=fw.plugins.FSDPPrecision("32-true")
    )
    assert fsdp.parallel_devices == [torch.device("cpu")]
    with pytest.raises(TypeError, match="can only work with the `FSDPPrecision"):
        fw.strategies.FSDPStrategy(precision=fw.plugins.HalfPrecision())


def test_both_names_of_the_precision_at_once_are_refused() -> None:
    with pytest.raises(MisconfigurationException, match=r"precision_plugin=.*precision=.*pass one of them"):
        af.strategies.DDPStrategy(precision_plugin=af.plugins.DoublePrecision(), precision=af.plugins.Precision())


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_module_init_context_builds_in_the_strategys_precision(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    strategy = fw.strategies.SingleDeviceStrategy(device="cpu", precision=fw.plugins.DoublePrecision())
    with strategy.module_init_context():
        module = torch.nn.Linear(2, 2)
    assert module.weight.dtype == torch.float64


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_fabric_runs_with_the_precision_its_strategy_was_built_with(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    strategy = fw.strategies.SingleDeviceStrategy(device="cpu", precision=fw.plugins.DoublePrecision())
    fabric = fw.Fabric(accelerator="cpu", strategy=strategy)
    module = fabric.setup_module(torch.nn.Linear(2, 2))
    assert next(module.parameters()).dtype == torch.float64


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_fabrics_backward_scales_the_loss_of_a_plain_module_and_passes_its_arguments(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    plugin = fw.plugins.MixedPrecision("16-mixed", "cpu", scaler=torch.amp.GradScaler("cpu", init_scale=4.0))
    module = torch.nn.Linear(2, 1, bias=False)
    torch.nn.init.ones_(module.weight)
    loss = module(torch.ones(1, 2)).sum()
    plugin.backward(loss, module, None, True)  # Fabric's form: the loss's own backward(gradient, retain_graph)
    assert module.weight.grad is not None
    assert torch.equal(module.weight.grad, torch.full((1, 2), 4.0))  # scaled by init_scale
    deepspeed = fw.plugins.DeepSpeedPrecision("32-true")
    engine = Mock()
    deepspeed.backward(loss, engine, "positional-arg", keyword="arg")
    engine.backward.assert_called_once_with(loss, "positional-arg", keyword="arg")
