"""``strategy="fsdp"`` (torch FSDP2) for real: gloo processes on the CPU, and a process group of one.

The reference is the single-device run: FSDP over N processes with batch B each must follow the same
loss curve as one device with batch N*B (gradients are averaged across the shards), also with
gradient clipping (norms of sharded gradients), activation checkpointing and accumulation, and a
checkpoint saved by N processes must resume on one as if the run had never stopped.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from accelplug import MisconfigurationException, Trainer
from accelplug.strategies import FSDPStrategy
from tests.processes import REPO, child_env

EXAMPLE = REPO / "examples" / "fsdp_example.py"


def _example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fsdp_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def example() -> Iterator[ModuleType]:
    """The example's ``main`` run in this process; the process group of one it makes is released after."""
    yield _example()
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def _run(example: ModuleType, *args: str) -> dict[str, Any]:
    return example.main(["--accelerator", "cpu", *args])  # type: ignore[no-any-return]


def _launch(tmp_path: Path, *args: str, timeout: float = 240) -> dict[str, Any]:
    """``accelplug launch --cpu --devices 2 examples/fsdp_example.py ARGS``: rank 0's report."""
    result = subprocess.run(
        [sys.executable, "-m", "accelplug", "launch", "--cpu", "--devices", "2", str(EXAMPLE), *args],
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr[-4000:]
    lines = [line for line in result.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(lines) == 1, result.stdout
    return json.loads(lines[0].removeprefix("RESULT "))  # type: ignore[no-any-return]


def _close(a: list[float], b: list[float], tol: float = 1e-4) -> bool:
    return len(a) == len(b) and all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b, strict=True))


# ---- one process (a process group of one, no launcher) ------------------------------------------------
def test_fsdp_on_one_device_needs_no_launcher_and_matches_single_device(example: ModuleType) -> None:
    single = _run(example, "--strategy", "single_device")
    sharded = _run(example, "--strategy", "fsdp")
    assert sharded["strategy"] == "fsdp" and sharded["world_size"] == 1
    assert _close(sharded["losses"], single["losses"], tol=1e-5), (sharded["losses"], single["losses"])
    assert sharded["losses"][-1] < sharded["losses"][0]


def test_the_string_fsdp_selects_the_strategy_with_its_defaults() -> None:
    trainer = Trainer(accelerator="cpu", devices=1, strategy="fsdp", logger=False, enable_progress_bar=False)
    assert isinstance(trainer.strategy, FSDPStrategy)
    assert trainer.strategy.state_dict_type == "full" and trainer.strategy.sharding_strategy.name == "FULL_SHARD"


def test_a_strategy_object_keeps_its_options() -> None:
    chosen = FSDPStrategy(auto_wrap_policy={torch.nn.Linear}, state_dict_type="sharded")
    trainer = Trainer(accelerator="cpu", devices=1, strategy=chosen, logger=False)
    assert trainer.strategy is chosen
    assert trainer.strategy.name == "fsdp"


def test_the_default_policy_shards_module_list_elements(example: ModuleType) -> None:
    model = example.TinyTransformer(depth=3)
    trainer = Trainer(accelerator="cpu", devices=1, strategy="fsdp", max_steps=1, **_quiet())
    trainer.fit(model, _loader(example))
    units = trainer.strategy.shard_units
    assert len(units) == 3 and all(isinstance(m, example.Block) for m in units)
    from torch.distributed.fsdp import FSDPModule

    assert isinstance(model, FSDPModule) and all(isinstance(b, FSDPModule) for b in model.blocks)
    assert "blocks.0.mlp.0.weight" in model.state_dict(), "state_dict keys stay the user's"


def test_the_root_keeps_its_parameters_gathered_after_forward_and_the_blocks_reshard(example: ModuleType) -> None:
    """torch's advice for the root (backward starts with it): no second all-gather of the root each step."""
    from torch.distributed.tensor import DTensor

    model = example.TinyTransformer(depth=2)
    trainer = Trainer(accelerator="cpu", devices=1, strategy="fsdp", max_steps=1, **_quiet())
    trainer.fit(model, _loader(example))
    tokens = next(iter(_loader(example)))[0]
    model(tokens)
    root_own = [p for name, p in model.named_parameters() if not name.startswith("blocks.")]
    assert root_own and not any(isinstance(p, DTensor) for p in root_own)
    assert all(isinstance(p, DTensor) for p in model.blocks.parameters())


def test_validation_before_training_then_validate_and_predict_work_under_fsdp(example: ModuleType) -> None:
    # The sanity check gathers parameters before any training step: under inference_mode they would become
    # inference tensors that the first backward cannot use, so FSDP evaluates under no_grad (as Lightning does).
    model = example.TinyTransformer()
    trainer = Trainer(accelerator="cpu", devices=1, strategy="fsdp", max_steps=4, accumulate_grad_batches=2, **_quiet())
    trainer.fit(model, _loader(example), val_dataloaders=_loader(example))
    assert "val_loss" in trainer.callback_metrics and trainer.global_step == 4
    assert trainer.validate(model, _loader(example), verbose=False)[0]["val_loss"] > 0
    tokens = torch.utils.data.DataLoader(example.token_data(16, 8).tensors[0], batch_size=8)
    assert [out.shape for out in trainer.predict(model, tokens)] == [torch.Size([64, 64])] * 2


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"auto_wrap_policy": {1}}, "auto_wrap_policy={1}"),
        ({"auto_wrap_policy": "Block"}, "auto_wrap_policy='Block'"),
        ({"activation_checkpointing_policy": [int]}, "activation_checkpointing_policy=[<class 'int'>]"),
        ({"sharding_strategy": "full_shrad"}, "Did you mean 'FULL_SHARD'"),
        ({"sharding_strategy": "NO_SHARD"}, "use strategy='ddp'"),
        ({"state_dict_type": "shard"}, "Did you mean 'sharded'"),
        ({"cpu_offload": "yes"}, "cpu_offload='yes'"),
    ],
)
def test_bad_fsdp_options_are_named(options: dict[str, Any], named: str) -> None:
    with pytest.raises(MisconfigurationException) as info:
        FSDPStrategy(**options)
    assert named in str(info.value)


def test_cpu_offload_on_the_cpu_is_explained(example: ModuleType) -> None:
    trainer = Trainer(accelerator="cpu", devices=1, strategy=FSDPStrategy(cpu_offload=True), max_steps=1, **_quiet())
    with pytest.raises(MisconfigurationException, match="this run is on the CPU already"):
        trainer.fit(example.TinyTransformer(), _loader(example))


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
def test_a_full_fsdp_checkpoint_loads_into_a_plain_module_and_resumes_without_fsdp(
    example: ModuleType, tmp_path: Path
) -> None:
    path = tmp_path / "full.ckpt"
    _run(example, "--max-steps", "4", "--save", str(path))
    state = torch.load(path, weights_only=True)
    assert not any("_orig_mod" in k or "_fsdp" in k for k in state["state_dict"])
    plain = example.TinyTransformer()
    plain.load_state_dict(state["state_dict"])  # no FSDP, no process group
    assert isinstance(next(iter(state["optimizer_states"][0]["state"])), str), "keyed by parameter name"
    continuous = _run(example, "--strategy", "single_device", "--max-steps", "7")
    resumed = _run(example, "--strategy", "single_device", "--max-steps", "7", "--resume", str(path))
    assert _close(resumed["losses"], continuous["losses"][4:], tol=1e-5)


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
def test_a_single_device_checkpoint_resumes_under_fsdp(example: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "plain.ckpt"
    _run(example, "--strategy", "single_device", "--max-steps", "4", "--save", str(path))
    continuous = _run(example, "--strategy", "single_device", "--max-steps", "7")
    resumed = _run(example, "--strategy", "fsdp", "--max-steps", "7", "--resume", str(path))
    assert _close(resumed["losses"], continuous["losses"][4:], tol=1e-5)


def test_sharded_checkpoints_replace_their_shards_and_are_removed_with_them(
    example: ModuleType, tmp_path: Path
) -> None:
    path = tmp_path / "last.ckpt"
    _run(example, "--state-dict-type", "sharded", "--max-steps", "2", "--save", str(path))
    first = sorted(p.name for p in tmp_path.glob("last.ckpt.shards-*"))
    _run(example, "--state-dict-type", "sharded", "--max-steps", "3", "--save", str(path))
    second = sorted(p.name for p in tmp_path.glob("last.ckpt.shards-*"))
    assert len(first) == len(second) == 1 and first != second, "the new save replaced the old folder"
    meta = torch.load(path, weights_only=True)
    assert meta["sharded_state"]["folder"] == second[0] and meta["state_dict"] == {}
    FSDPStrategy().remove_checkpoint(path)
    assert not path.exists() and not list(tmp_path.glob("last.ckpt.shards-*"))


def test_model_checkpoint_keeps_only_the_shard_folders_of_the_files_it_keeps(
    example: ModuleType, tmp_path: Path
) -> None:
    from accelplug.callbacks import ModelCheckpoint

    folder = tmp_path / "ckpts"  # tmp_path holds the suite's empty config file: a folder of its own
    callback = ModelCheckpoint(dirpath=folder, save_top_k=1, every_n_train_steps=2, save_last=True)
    trainer = Trainer(
        accelerator="cpu", devices=1, strategy=FSDPStrategy(state_dict_type="sharded"), max_steps=6,
        callbacks=[callback], logger=False, enable_progress_bar=False, enable_model_summary=False,
    )  # fmt: skip
    trainer.fit(example.TinyTransformer(), _loader(example))
    files = sorted(p.name for p in folder.glob("*.ckpt"))
    folders = sorted(p.name.split(".shards-")[0] for p in folder.glob("*.shards-*"))
    assert len(files) == 2 and "last.ckpt" in files
    assert folders == files, "every kept checkpoint has its one shard folder, and removed ones took theirs"


def test_a_sharded_checkpoint_without_its_folder_is_explained(example: ModuleType, tmp_path: Path) -> None:
    import shutil

    path = tmp_path / "s.ckpt"
    _run(example, "--state-dict-type", "sharded", "--max-steps", "2", "--save", str(path))
    for folder in tmp_path.glob("s.ckpt.shards-*"):
        shutil.rmtree(folder)
    with pytest.raises(MisconfigurationException, match=r"shard folder .* is missing"):
        _run(example, "--strategy", "single_device", "--max-steps", "3", "--resume", str(path))


def test_compiled_activation_checkpointing_recomputes_the_forward_inside_it_and_keeps_the_keys() -> None:
    torch.manual_seed(0)
    block = _example().Block(16, 2)
    plain = _example().Block(16, 2)
    plain.load_state_dict(block.state_dict())
    keys = list(block.state_dict())
    calls: list[str] = []
    block.mlp.register_forward_pre_hook(lambda *_: calls.append("mlp"))
    FSDPStrategy._checkpoint_activations(block, compiling=True)
    x = torch.randn(2, 5, 16)
    block(x).sum().backward()
    plain(x).sum().backward()
    assert calls == ["mlp", "mlp"], "the forward runs again in backward (its activations were not kept)"
    assert list(block.state_dict()) == keys and type(block).__name__ == "Block"
    for (name, p), q in zip(block.named_parameters(), plain.parameters(), strict=True):
        assert p.grad is not None and torch.allclose(p.grad, q.grad, atol=1e-6), name  # type: ignore[arg-type]


@pytest.mark.slow
# torch's own inductor imports still use torch.jit.script_method, which torch 2.13 deprecates
@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")
def test_compiled_fsdp_with_activation_checkpointing_follows_the_eager_loss_curve(example: ModuleType) -> None:
    compiled = _run(example, "--activation-checkpointing", "--compile", "--max-steps", "4")
    eager = _run(example, "--strategy", "single_device", "--max-steps", "4")
    assert _close(compiled["losses"], eager["losses"], tol=1e-3), (compiled["losses"], eager["losses"])


# ---- two gloo processes ---------------------------------------------------------------------------------
@pytest.mark.slow
def test_two_processes_follow_the_single_device_loss_curve_with_clipping(example: ModuleType, tmp_path: Path) -> None:
    sharded = _launch(tmp_path, "--batch-size", "4", "--gradient-clip-val", "0.5")
    single = _run(example, "--strategy", "single_device", "--batch-size", "8", "--gradient-clip-val", "0.5")
    assert sharded["world_size"] == 2 and sharded["strategy"] == "fsdp"
    assert _close(sharded["losses"], single["losses"]), (sharded["losses"], single["losses"])


@pytest.mark.slow
def test_activation_checkpointing_and_accumulation_keep_the_loss_curve(example: ModuleType, tmp_path: Path) -> None:
    sharded = _launch(tmp_path, "--batch-size", "2", "--accumulate", "2", "--activation-checkpointing")
    single = _run(example, "--strategy", "single_device", "--batch-size", "8")
    micro = sharded["losses"]
    per_step = [(micro[i] + micro[i + 1]) / 2 for i in range(0, len(micro), 2)]
    assert _close(per_step, single["losses"]), (per_step, single["losses"])


# a mid-epoch resume of a plain loader, on purpose
@pytest.mark.filterwarnings("ignore:You're resuming from a checkpoint that ended before the epoch ended")
@pytest.mark.slow
def test_a_sharded_checkpoint_saved_by_two_processes_resumes_on_one(example: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "two.ckpt"
    _launch(tmp_path, "--batch-size", "4", "--state-dict-type", "sharded", "--save", str(path))
    assert len(list(next(tmp_path.glob("two.ckpt.shards-*")).glob("*.distcp"))) == 2, "one shard file per rank"
    continuous = _run(example, "--strategy", "single_device", "--batch-size", "8", "--max-steps", "12")
    on_one = _run(example, "--strategy", "fsdp", "--batch-size", "8", "--max-steps", "12", "--resume", str(path))
    assert _close(on_one["losses"], continuous["losses"][8:]), (on_one["losses"], continuous["losses"][8:])


# ---- helpers --------------------------------------------------------------------------------------------
def _quiet() -> dict[str, Any]:
    return {"logger": False, "enable_progress_bar": False, "enable_checkpointing": False, "enable_model_summary": False}


def _loader(example: ModuleType) -> torch.utils.data.DataLoader[Any]:
    return torch.utils.data.DataLoader(example.token_data(64, 8), batch_size=8)
