"""The DeepSpeed strategy: argument checks and config mapping (no engine), then real training on the CPU.

DeepSpeed's engine runs on the CPU here (``DS_ACCELERATOR=cpu``, torch's gloo group), so ZeRO stages train for
real: one process against the same model trained with ``single_device``, two gloo processes under torchrun,
and a resume from an engine checkpoint against an uninterrupted run.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from accelplug_deepspeed import DeepSpeedStrategy, deepspeed_config
from accelplug_deepspeed.config import precision_config

from accelplug.errors import MisconfigurationException
from accelplug.registry import get_registry

SCRIPT = Path(__file__).with_name("ds_train.py")
LIGHTNING_NAMES = (
    "deepspeed",
    "deepspeed_stage_1",
    "deepspeed_stage_2",
    "deepspeed_stage_2_offload",
    "deepspeed_stage_3",
    "deepspeed_stage_3_offload",
    "deepspeed_stage_3_offload_nvme",
)


# ---- names, arguments and the config (no engine) ------------------------------------------------------
def test_lightning_strategy_names_are_registered_through_the_entry_point() -> None:
    registry = get_registry()
    for name in LIGHTNING_NAMES:
        cls = registry.get_strategy(name)
        assert issubclass(cls, DeepSpeedStrategy) and cls.name == name


@pytest.mark.parametrize(
    ("name", "stage", "offload_optimizer", "offload_param"),
    [
        ("deepspeed", 2, None, None),
        ("deepspeed_stage_1", 1, None, None),
        ("deepspeed_stage_2_offload", 2, "cpu", None),
        ("deepspeed_stage_3_offload", 3, "cpu", "cpu"),
        ("deepspeed_stage_3_offload_nvme", 3, "nvme", "nvme"),
    ],
)
def test_each_name_builds_lightnings_zero_config(
    name: str, stage: int, offload_optimizer: str | None, offload_param: str | None
) -> None:
    strategy = get_registry().get_strategy(name)()
    assert isinstance(strategy, DeepSpeedStrategy)
    zero = strategy.config["zero_optimization"]
    assert zero["stage"] == stage
    assert zero.get("offload_optimizer", {}).get("device") == offload_optimizer
    assert zero.get("offload_param", {}).get("device") == offload_param


def test_arguments_reach_the_config() -> None:
    config = DeepSpeedStrategy(
        stage=3, allgather_bucket_size=5, reduce_bucket_size=7, overlap_comm=False, contiguous_gradients=False,
        partition_activations=True, cpu_checkpointing=True, logging_batch_size_per_gpu=4,
    ).config  # fmt: skip
    zero = config["zero_optimization"]
    assert (zero["allgather_bucket_size"], zero["reduce_bucket_size"]) == (5, 7)
    assert zero["overlap_comm"] is False and zero["contiguous_gradients"] is False
    assert config["activation_checkpointing"] == {"partition_activations": True, "cpu_checkpointing": True}
    assert config["train_micro_batch_size_per_gpu"] == 4 and config["zero_allow_untested_optimizer"] is True
    assert "zero_optimization" not in DeepSpeedStrategy(zero_optimization=False).config


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"stage": 4}, ["stage=4", "0, 1, 2, 3"]),
        ({"stage": "2"}, ["stage='2'", "Did you mean '2'"]),
        ({"offload_optimizer": True, "offload_optimizer_device": "cpuu"}, ["'cpuu'", "Did you mean 'cpu'"]),
        ({"stage": 3, "offload_parameters": True, "offload_params_device": "nvm"}, ["'nvm'", "Did you mean 'nvme'"]),
        ({"stage": 2, "offload_parameters": True}, ["needs stage=3"]),
        ({"reduce_bucket_size": 0}, ["reduce_bucket_size=0"]),
        ({"logging_level": "INFO"}, ["logging_level='INFO'"]),
        ({"config": {"gradient_accumulation_steps": 4}}, ["gradient_accumulation_steps"]),
    ],
)
def test_bad_arguments_are_refused_when_given(kwargs: dict[str, Any], words: list[str]) -> None:
    with pytest.raises(MisconfigurationException) as info:
        DeepSpeedStrategy(**kwargs)
    for word in words:
        assert word in str(info.value)


def test_config_from_a_dict_or_a_json_file(tmp_path: Path) -> None:
    given = {"zero_optimization": {"stage": 1}, "bf16": {"enabled": True}}
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(given))
    assert DeepSpeedStrategy(config=given).config == given
    assert DeepSpeedStrategy(config=str(path)).config == given
    # the config's own precision entries win over the Trainer's precision
    assert DeepSpeedStrategy(config=path).run_config("32-true")["bf16"] == {"enabled": True}
    with pytest.raises(MisconfigurationException, match="no such file"):
        DeepSpeedStrategy(config=tmp_path / "missing.json")
    path.write_text("[1, 2]")
    with pytest.raises(MisconfigurationException, match="not an object"):
        DeepSpeedStrategy(config=path)


def test_precision_maps_to_deepspeeds_entries() -> None:
    assert precision_config("bf16-mixed") == {"bf16": {"enabled": True}}
    fp16 = precision_config("16-mixed", initial_scale_power=8)["fp16"]
    assert fp16["enabled"] and fp16["loss_scale"] == 0 and fp16["initial_scale_power"] == 8
    assert precision_config("32-true") == {}
    with pytest.raises(MisconfigurationException, match="cannot run under DeepSpeed"):
        precision_config("64-true")
    with pytest.raises(MisconfigurationException, match="Did you mean 'bf16-mixed'"):
        precision_config("bf16-mixd")
    run = DeepSpeedStrategy(stage=1).run_config("bf16-mixed")
    assert run["bf16"] == {"enabled": True} and run["gradient_clipping"] == 0.0
    assert deepspeed_config(stage=0)["zero_optimization"]["stage"] == 0


# ---- the engine, for real on the CPU ------------------------------------------------------------------
needs_deepspeed = pytest.mark.skipif(
    importlib.util.find_spec("deepspeed") is None,
    reason="deepspeed is not installed (DS_BUILD_OPS=0 pip install -e 'plugins/accelplug-deepspeed[test]')",
)


def _env() -> dict[str, str]:
    return {**os.environ, "DS_ACCELERATOR": "cpu", "OMP_NUM_THREADS": "1"}


def _train(tmp_path: Path, tag: str, *args: str, processes: int = 1) -> dict[str, Any]:
    out = tmp_path / f"{tag}.json"
    argv = [str(SCRIPT), args[0], args[1], args[2], str(out), *args[3:]]
    if processes == 1:
        command = [sys.executable, *argv]
    else:
        command = [sys.executable, "-m", "torch.distributed.run", f"--nproc-per-node={processes}", *argv]
    result = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-5000:]
    loaded: dict[str, Any] = json.loads(out.read_text())
    return loaded


@needs_deepspeed
def test_stage_2_on_one_process_matches_single_device_and_resumes_exactly(tmp_path: Path) -> None:
    reference = _train(tmp_path, "single", "single_device", "32-true", "2")
    whole = _train(tmp_path, "whole", "deepspeed_stage_2", "32-true", "2")
    assert whole["global_step"] == 16
    assert whole["losses"] == pytest.approx(reference["losses"], rel=1e-5, abs=1e-6)
    ckpt = tmp_path / "half.ckpt"
    _train(tmp_path, "half", "deepspeed_stage_2", "32-true", "1", str(ckpt))
    assert any(p.name.startswith("half.ckpt.shards-") for p in tmp_path.iterdir())
    resumed = _train(tmp_path, "resumed", "deepspeed_stage_2", "32-true", "2", "-", str(ckpt))
    assert resumed["global_step"] == 16
    assert resumed["losses"] == pytest.approx(whole["losses"][8:], rel=1e-5, abs=1e-6)


@needs_deepspeed
@pytest.mark.parametrize("strategy", ["deepspeed_stage_1", "deepspeed_stage_3"])
def test_two_gloo_processes_train_and_resume(tmp_path: Path, strategy: str) -> None:
    reference = _train(tmp_path, "ddp", "ddp", "32-true", "2", processes=2)
    whole = _train(tmp_path, "whole", strategy, "32-true", "2", processes=2)
    assert whole["world_size"] == 2 and whole["global_step"] == 8
    # ZeRO partitions what DDP replicates; the averaged gradients and so the losses are DDP's
    assert whole["losses"] == pytest.approx(reference["losses"], rel=1e-5, abs=1e-6)
    ckpt = tmp_path / "half.ckpt"
    _train(tmp_path, "half", strategy, "32-true", "1", str(ckpt), processes=2)
    resumed = _train(tmp_path, "resumed", strategy, "32-true", "2", "-", str(ckpt), processes=2)
    assert resumed["losses"] == pytest.approx(whole["losses"][4:], rel=1e-5, abs=1e-6)


# ---- parity with Lightning 2.6 (its DeepSpeed strategy runs on CUDA only, so its config is compared) ------
def _subset_differences(ours: Any, theirs: Any, where: str = "") -> list[str]:
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return [d for k, v in ours.items() for d in _subset_differences(v, theirs.get(k, "<missing>"), f"{where}.{k}")]
    return [] if ours == theirs else [f"{where}: ours {ours!r}, Lightning's {theirs!r}"]


@needs_deepspeed
@pytest.mark.parametrize("name", LIGHTNING_NAMES)
def test_each_name_configures_zero_as_lightnings_strategy_of_that_name(name: str) -> None:
    lightning_registry = pytest.importorskip("lightning.pytorch.strategies").StrategyRegistry
    theirs = lightning_registry.get(name).config
    strategy = get_registry().get_strategy(name)()
    assert isinstance(strategy, DeepSpeedStrategy)
    assert _subset_differences(strategy.config, theirs) == []


@needs_deepspeed
def test_float16_on_deepspeeds_cpu_accelerator_is_refused_in_words(tmp_path: Path) -> None:
    command = [sys.executable, str(SCRIPT), "deepspeed_stage_2", "16-mixed", "1", str(tmp_path / "out.json")]
    result = subprocess.run(command, env=_env(), capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert result.returncode != 0
    assert "MisconfigurationException: precision='16-mixed' needs DeepSpeed's fp16" in result.stderr
    assert "bf16-mixed or 32-true" in result.stderr
