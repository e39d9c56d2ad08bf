"""``DDPStrategy`` with Lightning 2.6's arguments and registered names, checked against Lightning's own.

The option checks run in this process (nothing starts); what the options *do* is run for real in
``test_ddp_processes.py`` (two gloo processes per framework).
"""

from __future__ import annotations

import inspect
import pickle
from datetime import timedelta
from typing import Any

import pytest
from torch.distributed.algorithms.ddp_comm_hooks.default_hooks import allreduce_hook

import accelplug
from accelplug.errors import MisconfigurationException
from accelplug.strategies import DDPStrategy, FSDPStrategy

lightning = pytest.importorskip("lightning", reason="the options are compared with lightning's, not installed here")

#: Lightning's registered DDP spellings (lightning/pytorch/strategies/ddp.py, register_strategies).
LIGHTNING_DDP_NAMES = [
    f"{start}{suffix}"
    for start in ("ddp", "ddp_spawn", "ddp_fork", "ddp_notebook")
    for suffix in ("", "_find_unused_parameters_false", "_find_unused_parameters_true")
]


def test_the_constructor_has_lightnings_parameters_and_defaults() -> None:
    ours = inspect.signature(DDPStrategy.__init__).parameters
    theirs = inspect.signature(lightning.pytorch.strategies.DDPStrategy.__init__).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]


def _strategy_of(framework: Any, name: str) -> Any:
    trainer = framework.Trainer(accelerator="cpu", devices=2, strategy=name, logger=False, enable_checkpointing=False)
    return trainer.strategy


@pytest.mark.parametrize("name", LIGHTNING_DDP_NAMES)
def test_each_registered_name_gives_lightnings_options(name: str) -> None:
    expected = _strategy_of(lightning, name)
    strategy = _strategy_of(accelplug, name)
    assert isinstance(strategy, DDPStrategy)
    assert type(strategy).__name__ == type(expected).__name__ == "DDPStrategy"  # not a class of the name's own
    assert strategy._ddp_kwargs == expected._ddp_kwargs
    assert strategy.start_method == expected._start_method
    copy = pickle.loads(pickle.dumps(strategy))  # ddp_spawn sends it to fresh interpreters
    assert (type(copy), copy.start_method, copy._ddp_kwargs, copy.name) == (
        DDPStrategy,
        strategy.start_method,
        strategy._ddp_kwargs,
        name,
    )


def test_an_argument_given_wins_over_the_names_preset() -> None:
    preset = accelplug.strategies.ddp.DDP_PRESETS
    cls = next(c for c in preset if c.name == "ddp_find_unused_parameters_true")
    assert cls(find_unused_parameters=False)._ddp_kwargs == {"find_unused_parameters": False}
    assert cls(static_graph=True)._ddp_kwargs == {"static_graph": True, "find_unused_parameters": True}


def test_torchs_keyword_arguments_are_kept_for_distributed_data_parallel() -> None:
    strategy = DDPStrategy(
        find_unused_parameters=True, static_graph=True, gradient_as_bucket_view=True, bucket_cap_mb=5
    )
    assert strategy._ddp_kwargs == {
        "find_unused_parameters": True,
        "static_graph": True,
        "gradient_as_bucket_view": True,
        "bucket_cap_mb": 5,
    }
    assert repr(strategy).startswith("DDPStrategy(find_unused_parameters=True")


def test_a_misspelled_keyword_is_refused_with_the_close_match() -> None:
    with pytest.raises(
        MisconfigurationException, match=r"find_unused_parameter=.*Did you mean 'find_unused_parameters'"
    ):
        DDPStrategy(find_unused_parameter=True)


def test_device_ids_is_refused_because_the_strategy_sets_it() -> None:
    with pytest.raises(MisconfigurationException, match=r"device_ids=.*sets it from the selected device"):
        DDPStrategy(device_ids=[0])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"start_method": "spwn"}, r"start_method='spwn'.*Did you mean 'spawn'"),
        ({"timeout": 30}, r"timeout=30.*datetime.timedelta"),
        ({"process_group_backend": ""}, r"process_group_backend=''"),
        ({"ddp_comm_hook": "fp16"}, r"ddp_comm_hook='fp16'.*not callable"),
        ({"ddp_comm_wrapper": allreduce_hook}, r"no ddp_comm_hook was given"),
        ({"model_averaging_period": 4}, r"model_averaging_period=4.*PostLocalSGDState"),
        ({"model_averaging_period": 0}, r"model_averaging_period=0.*positive int"),
    ],
)
def test_bad_options_are_refused_by_name(options: dict[str, Any], message: str) -> None:
    with pytest.raises(MisconfigurationException, match=message):
        DDPStrategy(**options)


def test_lightnings_read_only_views() -> None:
    strategy = DDPStrategy(process_group_backend="gloo", timeout=timedelta(seconds=42), start_method="spawn")
    assert strategy.process_group_backend == "gloo"
    assert strategy.timeout == timedelta(seconds=42)
    assert strategy.start_method == "spawn"
    assert strategy.num_nodes == 1
    assert strategy.distributed_sampler_kwargs == {"num_replicas": 1, "rank": 0}
    assert DDPStrategy().process_group_backend is None  # chosen from the accelerator at setup, as Lightning


def test_the_default_timeout_defers_to_the_environment_and_a_given_one_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ACCELPLUG_DDP_TIMEOUT_S", "77")
    assert DDPStrategy()._collective_timeout() == timedelta(seconds=77)
    assert DDPStrategy(timeout=timedelta(minutes=30))._collective_timeout() == timedelta(minutes=30)
    assert DDPStrategy(timeout=None)._collective_timeout() is None


def test_an_unknown_backend_is_named_with_the_close_match() -> None:
    from accelplug.strategies.ddp import _check_backend

    with pytest.raises(
        MisconfigurationException, match=r"'glo' is not a torch.distributed backend.*Did you mean 'gloo'"
    ):
        _check_backend("glo")
    _check_backend("gloo")
    _check_backend("cpu:gloo")


def test_a_misspelled_strategy_name_gets_the_close_match() -> None:
    with pytest.raises(MisconfigurationException, match=r"Did you mean 'ddp_find_unused_parameters_true'"):
        accelplug.Trainer(accelerator="cpu", devices=2, strategy="ddp_find_unused_parameter_true")


def test_fsdp_keeps_its_own_options() -> None:
    assert FSDPStrategy().process_group_backend is None
    assert FSDPStrategy()._ddp_kwargs == {}


# torch.distributed.optim scripts its functional optimizers when first imported (Lightning imports it for post-local
# SGD as accelplug does): torch's deprecation of its own decorators, once a process, nothing the user wrote
@pytest.mark.filterwarnings(
    "ignore:`torch.jit.script` is deprecated:DeprecationWarning",
    "ignore:`torch.jit.interface` is deprecated:DeprecationWarning",
)
def test_post_local_sgd_averages_the_model_after_each_optimizer_step() -> None:
    import torch
    import torch.distributed as dist
    from torch.distributed.algorithms.ddp_comm_hooks import post_localSGD_hook as post_local

    from accelplug.precision.full import Float32Precision
    from accelplug.strategies.optimizers import OptimizerSetup

    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)  # type: ignore[attr-defined]
    try:
        state = post_local.PostLocalSGDState(process_group=None, subgroup=None, start_localSGD_iter=2)
        strategy = DDPStrategy(
            ddp_comm_state=state, ddp_comm_hook=post_local.post_localSGD_hook, model_averaging_period=3
        )
        assert not strategy.customizes_optimizer_step  # the lean path until averaging starts
        layer = torch.nn.Linear(2, 1)
        optimizer = torch.optim.SGD(layer.parameters(), lr=0.1)
        strategy.setup_optimizers(OptimizerSetup([optimizer], []))
        assert strategy.customizes_optimizer_step
        for _ in range(4):
            layer(torch.ones(1, 2)).sum().backward()
            strategy.optimizer_step(optimizer, None, Float32Precision("cpu"))
        assert strategy._model_averager.period == 3
        assert strategy._model_averager.step == 4  # torch's averager counted every step it was handed
    finally:
        dist.destroy_process_group()


@pytest.mark.parametrize("accelerator", ["cpu", "CPUAccelerator()"])
def test_a_strategy_built_with_an_accelerator_selects_it_as_in_lightning(accelerator: str) -> None:
    for framework in (accelplug, lightning):
        accelerators = framework.pytorch.accelerators
        given = accelerators.CPUAccelerator() if accelerator == "CPUAccelerator()" else accelerator
        strategy = framework.pytorch.strategies.DDPStrategy(accelerator=given)
        trainer = framework.Trainer(strategy=strategy, devices=1, logger=False)
        assert type(trainer.accelerator).__name__ == "CPUAccelerator", framework.__name__
        assert trainer.strategy is strategy


def test_an_accelerator_given_to_both_the_strategy_and_the_trainer_is_refused_as_in_lightning() -> None:
    for framework in (accelplug, lightning):
        strategy = framework.pytorch.strategies.DDPStrategy(accelerator="cpu")
        with pytest.raises(MisconfigurationException if framework is accelplug else Exception) as refused:
            framework.Trainer(strategy=strategy, accelerator="cpu", devices=1, logger=False)
        assert "accelerator set through both strategy class and accelerator flag, choose one" in str(refused.value)
    assert accelplug.Trainer(strategy=DDPStrategy(accelerator="cpu"), accelerator="auto", logger=False)


def test_fabric_takes_the_accelerator_of_its_strategy_as_lightning_fabric_does() -> None:
    from accelplug.fabric.strategies import DDPStrategy as FabricDDP

    fabric = accelplug.Fabric(strategy=FabricDDP(accelerator="cpu"), devices=1)
    assert fabric.device.type == "cpu"
    with pytest.raises(MisconfigurationException, match="accelerator set through both strategy class"):
        accelplug.Fabric(strategy=FabricDDP(accelerator="cpu"), accelerator="cpu", devices=1)
