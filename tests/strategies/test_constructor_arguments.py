"""What a strategy built with Lightning's constructor arguments makes the Trainer do, as Lightning's does.

Lightning's connector takes ``precision_plugin=``, ``cluster_environment=`` and ``parallel_devices=`` from a
strategy instance: they are what the run uses, and giving one to both the strategy and the Trainer is refused.
Found by Lightning's own tests (``strategies/test_common.py``, ``plugins/test_cluster_integration.py``) and by
projects that build ``DDPStrategy(accelerator=..., parallel_devices=...)`` themselves.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch

import accelplug.pytorch as ap
from accelplug.errors import MisconfigurationException
from accelplug.pytorch.plugins import DoublePrecision, HalfPrecision, Precision
from accelplug.pytorch.plugins.environments import LightningEnvironment
from accelplug.pytorch.strategies import DDPStrategy, SingleDeviceStrategy

from ..callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning.pytorch", reason="compared with Lightning, not installed here")

FRAMEWORKS = {"lightning": lightning, "accelplug": ap}
QUIET = {"logger": False, "enable_checkpointing": False, "enable_progress_bar": False, "enable_model_summary": False}


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_precision_plugin_given_to_the_strategy_is_the_one_the_trainer_runs(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    plugin = fw.plugins.DoublePrecision()
    with quiet_lightning():
        trainer = fw.Trainer(strategy=fw.strategies.SingleDeviceStrategy("cpu", precision_plugin=plugin), **QUIET)
    assert trainer.precision_plugin is plugin
    assert trainer.strategy.precision_plugin is plugin
    assert trainer.precision == "64-true"


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_a_precision_plugin_in_both_the_strategy_and_plugins_is_refused(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    strategy = fw.strategies.SingleDeviceStrategy("cpu", precision_plugin=fw.plugins.DoublePrecision())
    with quiet_lightning(), pytest.raises(Exception, match="precision set through both strategy class and plugins"):
        fw.Trainer(strategy=strategy, plugins=[fw.plugins.DoublePrecision()], **QUIET)


def test_parallel_devices_choose_the_accelerator_and_how_many_processes() -> None:
    strategy = DDPStrategy(parallel_devices=[torch.device("cpu"), torch.device("cpu")])
    trainer = ap.Trainer(strategy=strategy, **QUIET)
    assert trainer.accelerator.name == "cpu"
    assert trainer.num_devices == 2
    assert strategy.parallel_devices == [torch.device("cpu"), torch.device("cpu")]


def test_parallel_devices_of_another_type_than_the_accelerator_are_refused_with_lightnings_words() -> None:
    strategy = DDPStrategy(parallel_devices=[torch.device("cpu"), torch.device("cpu")])
    with pytest.raises(MisconfigurationException, match="CPU parallel_devices set through DDPStrategy class"):
        ap.Trainer(strategy=strategy, accelerator="cuda", **QUIET)


def test_a_cluster_environment_given_to_the_strategy_is_the_runs() -> None:
    environment = LightningEnvironment()
    trainer = ap.Trainer(strategy=DDPStrategy(cluster_environment=environment), accelerator="cpu", devices=2, **QUIET)
    assert trainer.strategy.cluster_environment is environment  # type: ignore[attr-defined]


def test_a_cluster_environment_in_both_the_strategy_and_plugins_is_refused() -> None:
    strategy = DDPStrategy(cluster_environment=LightningEnvironment())
    with pytest.raises(MisconfigurationException, match="cluster_environment set through both strategy class"):
        ap.Trainer(strategy=strategy, plugins=[LightningEnvironment()], accelerator="cpu", devices=2, **QUIET)


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_the_strategys_root_device_is_known_once_the_trainer_is_built(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    with quiet_lightning():
        trainer = fw.Trainer(accelerator="cpu", **QUIET)
    assert trainer.strategy.root_device == torch.device("cpu")


def test_a_single_device_strategys_root_device_is_its_device_before_any_trainer() -> None:
    assert SingleDeviceStrategy(torch.device("cpu")).root_device == torch.device("cpu")


@pytest.mark.parametrize(
    ("precision", "dtype"),
    [(Precision(), torch.float32), (DoublePrecision(), torch.float64), (HalfPrecision("16-true"), torch.float16)],
)
def test_tensor_init_context_builds_on_the_device_in_the_precisions_dtype(precision: Any, dtype: torch.dtype) -> None:
    strategy = SingleDeviceStrategy(device=torch.device("cpu"), precision_plugin=precision)
    with strategy.tensor_init_context():
        module = torch.nn.Linear(2, 2)
    assert module.weight.device == torch.device("cpu")
    assert module.weight.dtype == module.bias.dtype == dtype


def test_tensor_init_context_with_empty_init_skips_the_initialisation() -> None:
    strategy = SingleDeviceStrategy(device=torch.device("cpu"))
    torch.manual_seed(0)
    with strategy.tensor_init_context(empty_init=True):
        before = torch.random.get_rng_state()
        torch.nn.Linear(64, 64)
        drawn = not torch.equal(before, torch.random.get_rng_state())
    assert not drawn  # reset_parameters' kaiming_uniform_ and uniform_ drew no random numbers


@pytest.mark.parametrize("framework", FRAMEWORKS)
@pytest.mark.parametrize(("precision", "dtype"), [("bf16-true", torch.bfloat16), ("64-true", torch.float64)])
def test_configure_model_builds_in_the_precisions_dtype(framework: str, precision: str, dtype: torch.dtype) -> None:
    fw: Any = FRAMEWORKS[framework]
    seen: list[torch.dtype] = []

    class Model(fw.LightningModule):  # type: ignore[misc, name-defined]
        def configure_model(self) -> None:
            self.layer = torch.nn.Linear(1, 3)
            seen.append(self.layer.weight.dtype)

        def test_step(self, *args: Any) -> None: ...

    model = Model()
    with quiet_lightning():
        fw.Trainer(barebones=True, precision=precision).test(model, [0])
    assert seen == [dtype]
    assert torch.get_default_dtype() == torch.float32


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_fsdp_takes_only_lightnings_fsdp_precision_plugin(framework: str) -> None:
    fw: Any = FRAMEWORKS[framework]
    with pytest.raises(TypeError, match="can only work with the `FSDPPrecision"):
        fw.strategies.FSDPStrategy(precision_plugin=fw.plugins.HalfPrecision())
    strategy = fw.strategies.FSDPStrategy(precision_plugin=fw.plugins.FSDPPrecision("bf16-true"))
    assert strategy.precision_plugin.precision == "bf16-true"


def test_a_parallel_strategys_root_device_is_its_local_ranks_entry_of_parallel_devices(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LOCAL_RANK", "1")
    strategy = DDPStrategy(parallel_devices=[torch.device("cuda", 0), torch.device("cuda", 1)])
    assert strategy.root_device == torch.device("cuda", 1)
