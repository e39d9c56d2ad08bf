"""Lightning Fabric's ``ModelParallelStrategy(parallelize_fn, ...)``: the user's function parallelises the module.

``fabric.setup(model)`` calls ``parallelize_fn(model, device_mesh)`` with the strategy's 2D mesh
(``"data_parallel"``, ``"tensor_parallel"``). One script runs tensor parallelism (``parallelize_module``) and
FSDP2 on two real gloo processes and checkpoints both ways; the checks of bad input run in one process with a
process group of one.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.distributed as dist

from accelplug.errors import MisconfigurationException
from accelplug.fabric.strategies import ModelParallelStrategy
from accelplug.precision import Float32Precision
from accelplug.pytorch.accelerators import CPUAccelerator
from tests.processes import child_env

SCRIPT = textwrap.dedent(
    """
    import json, sys, warnings
    import torch
    from torch.distributed.fsdp import fully_shard
    from torch.distributed.tensor.parallel import ColwiseParallel, RowwiseParallel, parallelize_module
    from accelplug.fabric import Fabric
    from accelplug.fabric.strategies import ModelParallelStrategy

    warnings.simplefilter("ignore")
    folder = sys.argv[1]

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w1, self.w2 = torch.nn.Linear(4, 8), torch.nn.Linear(8, 4)

        def forward(self, x):
            return self.w2(torch.relu(self.w1(x)))

    meshes = []

    def parallelize(model, mesh):
        meshes.append([list(mesh.shape), list(mesh.mesh_dim_names)])
        parallelize_module(model, mesh["tensor_parallel"], {"w1": ColwiseParallel(), "w2": RowwiseParallel()})
        fully_shard(model, mesh=mesh["data_parallel"])
        return model

    x = torch.randn(3, 4, generator=torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    reference = Net()
    torch.manual_seed(0)
    strategy = ModelParallelStrategy(parallelize, data_parallel_size=1, tensor_parallel_size=2)
    fabric = Fabric(accelerator="cpu", devices=2, strategy=strategy)
    fabric.launch()
    model = fabric.setup(Net())
    optimizer = fabric.setup_optimizers(torch.optim.SGD(model.parameters(), lr=0.1))
    fabric.backward(model(x).sum())
    optimizer.step()
    reference_optimizer = torch.optim.SGD(reference.parameters(), lr=0.1)
    reference(x).sum().backward()
    reference_optimizer.step()

    fabric.save(f"{folder}/sharded.ckpt", {"model": model, "optimizer": optimizer, "step": 1})
    trained = model(x).detach().full_tensor() if hasattr(model(x), "full_tensor") else model(x).detach()
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    rest = fabric.load(f"{folder}/sharded.ckpt", {"model": model, "optimizer": optimizer})
    result = {
        "rank": fabric.global_rank,
        "meshes": meshes,
        "matches_unparallelised": torch.allclose(trained, reference(x).detach(), atol=1e-6),
        "restored": torch.allclose(model(x).detach(), trained, atol=1e-6),
        "rest": rest,
    }
    with open(f"{folder}/rank{fabric.global_rank}.json", "w") as f:
        json.dump(result, f)
    """
)


@pytest.mark.timeout(120)
def test_parallelize_fn_gets_the_2d_mesh_and_the_tensor_parallel_model_trains_and_checkpoints(tmp_path: Path) -> None:
    """Two gloo processes: one ``parallelize_fn`` call each, a step equal to the unparallelised model's, and the
    shards saved by both processes loaded back into the zeroed model."""
    script = tmp_path / "tensor_parallel.py"
    script.write_text(SCRIPT)
    done = subprocess.run(
        # torchrun starts the two processes (the script's own re-launch would add one more interpreter)
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", script, tmp_path],
        cwd=tmp_path,
        env=child_env(),
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    for rank in (0, 1):
        result = json.loads((tmp_path / f"rank{rank}.json").read_text())
        assert result["meshes"] == [[[1, 2], ["data_parallel", "tensor_parallel"]]]
        assert result["matches_unparallelised"] and result["restored"]
        assert result["rest"] == {"step": 1}


@pytest.fixture
def one_process() -> Iterator[ModelParallelStrategy]:
    """A strategy set up in a gloo process group of one (its mesh is 1 x 1)."""
    yield from _set_up(ModelParallelStrategy(lambda module, mesh: module))


def _set_up(strategy: ModelParallelStrategy) -> Iterator[ModelParallelStrategy]:
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)  # type: ignore[attr-defined]
    try:
        strategy.setup_environment(CPUAccelerator(), torch.device("cpu"))
        yield strategy
    finally:
        dist.destroy_process_group()


def test_the_device_mesh_is_refused_before_the_processes_are_up() -> None:
    strategy = ModelParallelStrategy(lambda module, mesh: module)
    with pytest.raises(RuntimeError, match="Accessing the device mesh before processes have initialized"):
        _ = strategy.device_mesh


def test_parallelize_fn_must_be_callable() -> None:
    with pytest.raises(MisconfigurationException, match=r"parallelize_fn=3.*expected a function"):
        ModelParallelStrategy(3)  # type: ignore[arg-type]


def test_a_parallelize_fn_that_returns_no_module_is_refused_as_lightnings_type_error(
    one_process: ModelParallelStrategy,
) -> None:
    one_process._parallelize_fn = lambda module, mesh: None
    with pytest.raises(TypeError, match=r"The `parallelize_fn` must return a `nn.Module` instance, but got: NoneType"):
        one_process.setup_module(torch.nn.Linear(2, 2), Float32Precision("cpu"))


def test_modules_sharded_with_fsdp1_are_refused(one_process: ModelParallelStrategy) -> None:
    from torch.distributed.fsdp import FullyShardedDataParallel

    class CPUBuiltFSDP1(FullyShardedDataParallel):
        """An FSDP1 wrapper: torch builds those on an accelerator only, so its constructor is skipped here."""

        def __init__(self) -> None:
            torch.nn.Module.__init__(self)

    with pytest.raises(TypeError, match="only supports the new FSDP2 APIs") as raised:
        one_process.setup_module(torch.nn.Sequential(CPUBuiltFSDP1()), Float32Precision("cpu"))
    assert isinstance(raised.value, MisconfigurationException)


def test_meta_tensors_are_materialised_with_a_warning_naming_modules_without_reset_parameters(
    one_process: ModelParallelStrategy,
) -> None:
    class Scale(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.weight = torch.nn.Parameter(torch.ones(2))

    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Linear(2, 2), Scale())
    with pytest.warns(UserWarning, match=r"don't define a `reset_parameters\(\)` method for re-initialization: Scale$"):
        prepared = one_process.setup_module(model, Float32Precision("cpu"))
    assert not any(p.is_meta for p in prepared.module.parameters())


def test_saving_refuses_storage_options(one_process: ModelParallelStrategy, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"`ModelParallelStrategy.save_checkpoint\(..., storage_options=...\)` is not"):
        one_process.save_checkpoint(path=tmp_path / "x.ckpt", state={}, storage_options={"a": 1})


def test_saving_needs_exactly_one_distributed_model(one_process: ModelParallelStrategy, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="Could not find a distributed model in the provided checkpoint state"):
        one_process.save_checkpoint(path=tmp_path / "x.ckpt", state={"model": torch.nn.Linear(2, 2)})


def test_loading_needs_a_state_with_the_model(one_process: ModelParallelStrategy, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"Got ModelParallelStrategy.load_checkpoint\(..., state=None\)"):
        one_process.load_checkpoint(tmp_path / "x.ckpt", None)


def test_loading_a_folder_is_refused_as_no_valid_checkpoint(one_process: ModelParallelStrategy, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not point to a valid checkpoint"):
        one_process.load_checkpoint(tmp_path, {"model": torch.nn.Linear(2, 2)})


def test_a_lone_optimizer_state_cannot_be_loaded(one_process: ModelParallelStrategy, tmp_path: Path) -> None:
    optimizer = torch.optim.SGD(torch.nn.Linear(2, 2).parameters(), lr=0.1)
    with pytest.raises(NotImplementedError, match="Loading a single optimizer object from a checkpoint"):
        one_process.load_checkpoint(tmp_path / "x.ckpt", optimizer)


def test_without_distributed_checkpoints_the_full_state_is_one_file_plain_torch_reads(tmp_path: Path) -> None:
    from torch.distributed.fsdp import fully_shard

    def shard(module: torch.nn.Module, mesh: Any) -> torch.nn.Module:
        fully_shard(module, mesh=mesh["data_parallel"])
        return module

    for strategy in _set_up(ModelParallelStrategy(shard, save_distributed_checkpoint=False)):
        model = strategy.setup_module(torch.nn.Linear(2, 3), Float32Precision("cpu")).module
        strategy.save_checkpoint(path=tmp_path / "full.ckpt", state={"model": model, "step": 2})
        with pytest.raises(IsADirectoryError, match="The checkpoint path exists and is a directory"):
            strategy.save_checkpoint(path=tmp_path, state={"model": model})
    saved = torch.load(tmp_path / "full.ckpt", weights_only=True)
    assert saved["step"] == 2 and saved["model"]["weight"].shape == (3, 2)
    assert not list(tmp_path.glob("full.ckpt.shards-*"))
