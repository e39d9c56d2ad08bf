"""``FSDPStrategy`` with Lightning 2.6's arguments, on torch FSDP2: what maps, and what is refused with the way out.

Lightning's FSDP runs torch's FSDP1 (``FullyShardedDataParallel``); accelplug's runs FSDP2 (``fully_shard``).
Arguments with an FSDP2 equivalent are taken in both spellings (FSDP1's ``CPUOffload``/``MixedPrecision``
objects, FSDP2's policies); FSDP1-only keywords are refused with what FSDP2 does instead. Hybrid sharding
over a 2-D mesh is trained for real on two gloo processes and must follow one device's loss curve.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.distributed.fsdp import CPUOffload, CPUOffloadPolicy, MixedPrecision, MixedPrecisionPolicy, ShardingStrategy

from accelplug.errors import MisconfigurationException
from accelplug.strategies import FSDPStrategy
from tests.processes import REPO, child_env

lightning = pytest.importorskip("lightning", reason="the arguments are compared with lightning's, not installed here")
EXAMPLE = REPO / "examples" / "fsdp_example.py"


def test_the_constructor_has_lightnings_parameters_and_defaults() -> None:
    ours = inspect.signature(FSDPStrategy.__init__).parameters
    theirs = inspect.signature(lightning.pytorch.strategies.FSDPStrategy.__init__).parameters
    assert [(p.name, p.kind, p.default) for p in ours.values()] == [
        (p.name, p.kind, p.default) for p in theirs.values()
    ]


@pytest.mark.parametrize(
    ("value", "offloads"),
    [(None, False), (False, False), (True, True), (CPUOffload(offload_params=True), True), (CPUOffloadPolicy(), True)],
)
def test_cpu_offload_in_every_spelling_lightning_takes(value: Any, offloads: bool) -> None:
    assert ("cpu_offload=True" in repr(FSDPStrategy(cpu_offload=value))) is offloads


@pytest.mark.parametrize("value", [None, False, True])
def test_cpu_offload_given_as_a_bool_is_reported_as_torchs_cpu_offload(value: bool | None) -> None:
    assert FSDPStrategy(cpu_offload=value).cpu_offload == CPUOffload(offload_params=bool(value))


@pytest.mark.parametrize("value", [CPUOffload(offload_params=True), CPUOffloadPolicy()])
def test_cpu_offload_given_as_torchs_object_is_reported_as_given(value: Any) -> None:
    assert FSDPStrategy(cpu_offload=value).cpu_offload is value


def test_mixed_precision_config_is_the_config_given() -> None:
    config = MixedPrecision(param_dtype=torch.bfloat16)
    assert FSDPStrategy(mixed_precision=config).mixed_precision_config is config


def test_mixed_precision_config_follows_the_precision_plugin_when_none_is_given() -> None:
    from accelplug.plugins.precision import FSDPPrecision

    assert FSDPStrategy().mixed_precision_config is None
    plugin = FSDPPrecision("bf16-mixed")
    strategy = FSDPStrategy(precision_plugin=plugin)
    assert strategy.mixed_precision_config == plugin.mixed_precision_config
    assert strategy.mixed_precision_config.param_dtype == torch.bfloat16


def test_sharding_strategy_is_reported_as_torchs_enum_member() -> None:
    assert FSDPStrategy().sharding_strategy is ShardingStrategy.FULL_SHARD
    assert FSDPStrategy(sharding_strategy="shard_grad_op").sharding_strategy is ShardingStrategy.SHARD_GRAD_OP
    given = ShardingStrategy.HYBRID_SHARD
    assert FSDPStrategy(sharding_strategy=given, device_mesh=(1, 2)).sharding_strategy is given


def test_kwargs_reports_use_orig_params_on_as_fsdp2_always_keeps_the_parameters() -> None:
    assert FSDPStrategy().kwargs == {"use_orig_params": True}
    assert FSDPStrategy(use_orig_params=True, limit_all_gathers=True).kwargs == {"use_orig_params": True}


def test_kwargs_reports_the_device_mesh_given() -> None:
    assert FSDPStrategy(sharding_strategy="HYBRID_SHARD", device_mesh=(2, 1)).kwargs["device_mesh"] == (2, 1)


def test_fsdp1_mixed_precision_becomes_fsdp2s_policy() -> None:
    strategy = FSDPStrategy(mixed_precision=MixedPrecision(param_dtype=torch.bfloat16, reduce_dtype=torch.float32))
    assert strategy.mixed_precision == MixedPrecisionPolicy(param_dtype=torch.bfloat16, reduce_dtype=torch.float32)
    policy = MixedPrecisionPolicy(param_dtype=torch.float16)
    assert FSDPStrategy(mixed_precision=policy).mixed_precision is policy


def test_activation_checkpointing_is_the_older_name_of_the_policy() -> None:
    with pytest.deprecated_call(match="activation_checkpointing_policy"):
        strategy = FSDPStrategy(activation_checkpointing=[torch.nn.Linear])
    assert strategy.activation_checkpointing_policy is not None
    assert strategy.activation_checkpointing_policy(torch.nn.Linear(1, 1))
    with pytest.raises(MisconfigurationException, match="pass only activation_checkpointing_policy"):
        FSDPStrategy(activation_checkpointing=[torch.nn.Linear], activation_checkpointing_policy={torch.nn.Linear})


def test_use_orig_params_true_is_what_fsdp2_does() -> None:
    assert FSDPStrategy(use_orig_params=True).sharding_strategy is ShardingStrategy.FULL_SHARD


DEPRECATED = (
    r"`FSDPStrategy\(activation_checkpointing=.*\)` is deprecated, use `FSDPStrategy\(activation_checkpointing_policy="
)


@pytest.mark.parametrize("path", ["pytorch", "fabric"])
def test_an_llm_scripts_fsdp_options_are_taken_as_lightning_takes_them(path: str) -> None:
    # activation_checkpointing (deprecated, with Lightning's warning) and limit_all_gathers=True (what FSDP2 does)
    ours = importlib.import_module(f"accelplug.{path}.strategies").FSDPStrategy
    theirs = importlib.import_module(f"lightning.{path}.strategies").FSDPStrategy
    for strategy_class in (theirs, ours):
        with pytest.warns(DeprecationWarning, match=DEPRECATED):
            strategy = strategy_class(activation_checkpointing=torch.nn.Linear, limit_all_gathers=True)
    assert strategy.activation_checkpointing_policy(torch.nn.Linear(1, 1))
    assert not strategy.activation_checkpointing_policy(torch.nn.ReLU())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"use_orig_params": False}, r"use_orig_params=.*FSDP1.*always keeps the original parameters"),
        ({"limit_all_gathers": False}, r"limit_all_gathers=.*FSDP1"),
        ({"backward_prefetch": None}, r"backward_prefetch=.*set_modules_to_backward_prefetch"),
        ({"sync_module_states": True}, r"sync_module_states=.*FSDP1"),
        ({"auto_wrap_polcy": {torch.nn.Linear}}, r"auto_wrap_polcy=.*Did you mean 'auto_wrap_policy'"),
        ({"sharding_strategy": "NO_SHARD"}, r"use strategy='ddp'"),
        ({"cpu_offload": "yes"}, r"cpu_offload='yes'"),
        ({"mixed_precision": "bf16"}, r"mixed_precision='bf16'.*MixedPrecisionPolicy"),
        ({"mixed_precision": MixedPrecision(buffer_dtype=torch.float16)}, r"buffer_dtype.*FSDP1"),
        ({"device_mesh": (2,)}, r"device_mesh=\(2,\).*\(replicas, shards\)"),
        ({"device_mesh": (0, 2)}, r"device_mesh=\(0, 2\)"),
        ({"timeout": 5}, r"timeout=5"),
    ],
)
def test_options_without_an_fsdp2_equivalent_are_refused_with_the_way_out(
    options: dict[str, Any], message: str
) -> None:
    with pytest.raises(MisconfigurationException, match=message):
        FSDPStrategy(**options)


def test_hybrid_sharding_names_are_accepted() -> None:
    assert FSDPStrategy(sharding_strategy="HYBRID_SHARD", device_mesh=(1, 2)).device_mesh == (1, 2)
    zero2 = FSDPStrategy(sharding_strategy="_HYBRID_SHARD_ZERO2", auto_wrap_policy={torch.nn.Linear})
    assert zero2.sharding_strategy is ShardingStrategy._HYBRID_SHARD_ZERO2


@pytest.mark.parametrize("sharding", ["HYBRID_SHARD", "_HYBRID_SHARD_ZERO2"])
def test_hybrid_sharding_without_a_mesh_or_wrap_policy_is_refused_as_lightnings_runtime_error(sharding: str) -> None:
    with pytest.raises(RuntimeError, match="The hybrid sharding strategy requires you to pass at least one of") as err:
        FSDPStrategy(sharding_strategy=sharding)
    assert isinstance(err.value, MisconfigurationException)


def test_save_checkpoint_refuses_storage_options_as_lightnings_type_error(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=re.escape("`FSDPStrategy.save_checkpoint(..., storage_options=...)` is not")):
        FSDPStrategy().save_checkpoint({}, tmp_path / "x.ckpt", storage_options={"a": 1})


def test_the_device_mesh_annotation_parses_a_pair_on_the_command_line() -> None:
    """LightningCLI (jsonargparse) reads the signature's annotation: it must be a typing object, not a string."""
    jsonargparse = pytest.importorskip("jsonargparse")
    parser = jsonargparse.ArgumentParser()
    parser.add_argument("--device_mesh", type=inspect.signature(FSDPStrategy).parameters["device_mesh"].annotation)
    assert parser.parse_args(["--device_mesh=[1, 4]"]).device_mesh == (1, 4)


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("fsdp_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_hybrid_sharding_on_a_two_by_one_mesh_follows_one_devices_loss_curve(tmp_path: Path) -> None:
    args = ["--batch-size", "4", "--sharding-strategy", "HYBRID_SHARD", "--device-mesh", "2,1"]
    result = subprocess.run(
        [sys.executable, "-m", "accelplug", "launch", "--cpu", "--devices", "2", str(EXAMPLE), *args],
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    hybrid = json.loads(lines[0].removeprefix("RESULT "))
    single = _example().main(["--accelerator", "cpu", "--strategy", "single_device", "--batch-size", "8"])
    assert hybrid["world_size"] == 2
    torch.testing.assert_close(torch.tensor(hybrid["losses"]), torch.tensor(single["losses"]), rtol=1e-4, atol=1e-5)


def test_fabrics_fsdp_strategy_takes_lightning_fabrics_mixed_precision_device_mesh_and_process_group_options() -> None:
    from datetime import timedelta

    from accelplug.fabric.strategies import FSDPStrategy as FabricFSDPStrategy

    config = MixedPrecision(param_dtype=torch.bfloat16)
    strategy = FabricFSDPStrategy(
        mixed_precision=config,
        sharding_strategy="HYBRID_SHARD",
        device_mesh=(1, 2),
        process_group_backend="gloo",
        timeout=timedelta(seconds=30),
    )
    assert strategy.mixed_precision_config is config
    assert strategy.kwargs["device_mesh"] == (1, 2)
    assert strategy.state_dict_type == "sharded"
