"""FSDP and ``compile=`` on NVIDIA GPUs (NCCL, Triton, CUDA graphs, CPU offload, fp16 loss scaling).

Skipped cleanly without CUDA; on a GPU machine: ``pytest -m cuda tests/trainer tests/strategies``. The tests that need
two GPUs skip on one.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from accelplug import Trainer
from tests.processes import REPO, child_env
from tests.strategies.test_fsdp import EXAMPLE, _close, _example

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU with a CUDA build of torch"),
]
two_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two NVIDIA GPUs")


@pytest.fixture
def example() -> Iterator[ModuleType]:
    yield _example()
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def _run(example: ModuleType, *args: str) -> dict[str, Any]:
    return example.main(["--accelerator", "cuda", "--devices", "1", *args])  # type: ignore[no-any-return]


def test_fsdp_on_one_gpu_follows_the_single_device_curve(example: ModuleType) -> None:
    single = _run(example, "--strategy", "single_device")
    sharded = _run(example, "--strategy", "fsdp")
    assert _close(sharded["losses"], single["losses"], tol=1e-3), (sharded["losses"], single["losses"])
    assert sharded["peak_memory_mb"] and single["peak_memory_mb"]


def test_fsdp_bf16_mixed_on_one_gpu_stays_close(example: ModuleType) -> None:
    single = _run(example, "--strategy", "single_device", "--precision", "bf16-mixed")
    sharded = _run(example, "--strategy", "fsdp", "--precision", "bf16-mixed")
    assert _close(sharded["losses"], single["losses"], tol=3e-2), (sharded["losses"], single["losses"])


def test_cpu_offload_with_clipping_trains_like_single_device(example: ModuleType) -> None:
    single = _run(example, "--strategy", "single_device", "--gradient-clip-val", "0.5")
    offloaded = _run(example, "--strategy", "fsdp", "--cpu-offload", "--gradient-clip-val", "0.5")
    assert _close(offloaded["losses"], single["losses"], tol=1e-3), (offloaded["losses"], single["losses"])


def test_16_mixed_under_fsdp_uses_a_sharded_grad_scaler(example: ModuleType, tmp_path: Path) -> None:
    from torch.distributed.fsdp.sharded_grad_scaler import ShardedGradScaler

    trainer = Trainer(
        accelerator="cuda", devices=1, strategy="fsdp", precision="16-mixed", max_steps=3, logger=False,
        default_root_dir=tmp_path,
    )  # fmt: skip
    trainer.fit(example.TinyTransformer(), torch.utils.data.DataLoader(example.token_data(64, 8), batch_size=8))
    assert trainer._run is not None and isinstance(trainer._run.precision.scaler, ShardedGradScaler)


def test_a_full_fsdp_checkpoint_from_the_gpu_resumes_on_the_cpu(example: ModuleType, tmp_path: Path) -> None:
    path = tmp_path / "gpu.ckpt"
    _run(example, "--strategy", "fsdp", "--max-steps", "4", "--save", str(path))
    resumed = example.main(
        ["--accelerator", "cpu", "--strategy", "single_device", "--max-steps", "6", "--resume", str(path)]
    )
    assert resumed["global_step"] == 6


def test_compile_on_cuda_matches_eager_and_reports_its_time(example: ModuleType) -> None:
    eager = _run(example, "--strategy", "single_device")
    compiled = _run(example, "--strategy", "single_device", "--compile")
    assert _close(compiled["losses"], eager["losses"], tol=1e-3), (compiled["losses"], eager["losses"])


def test_compile_under_fsdp_on_cuda_matches_eager(example: ModuleType) -> None:
    eager = _run(example, "--strategy", "fsdp")
    compiled = _run(example, "--strategy", "fsdp", "--compile", "--activation-checkpointing")
    assert _close(compiled["losses"], eager["losses"], tol=1e-3), (compiled["losses"], eager["losses"])


def test_reduce_overhead_compile_trains_a_tiny_mlp(tmp_path: Path) -> None:
    class MLP(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = torch.nn.Sequential(torch.nn.Linear(64, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x)

        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
            return torch.nn.functional.cross_entropy(self(batch[0]), batch[1])

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.05)

    data = [(torch.randn(64, 64), torch.randint(0, 10, (64,))) for _ in range(20)]
    trainer = Trainer(
        accelerator="cuda", devices=1, compile="reduce-overhead", precision="bf16-mixed", max_epochs=2, logger=False,
        default_root_dir=tmp_path,
    )  # fmt: skip
    trainer.fit(MLP(), data)
    assert trainer.global_step == 40 and trainer.state.compile_seconds is not None


@two_gpus
def test_fsdp_on_two_gpus_over_nccl_follows_the_single_device_curve(example: ModuleType, tmp_path: Path) -> None:
    env = child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1", "NCCL_NVLS_ENABLE": "0"})
    env.update({"TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"})
    path = tmp_path / "two.ckpt"
    result = subprocess.run(
        [sys.executable, "-m", "accelplug", "launch", "--accelerator", "cuda", "--devices", "2", str(EXAMPLE),
         "--batch-size", "4", "--state-dict-type", "sharded", "--save", str(path)],
        env=env, capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    line = next(line for line in result.stdout.splitlines() if line.startswith("RESULT "))
    sharded = json.loads(line.removeprefix("RESULT "))
    single = _run(example, "--strategy", "single_device", "--batch-size", "8")
    assert sharded["world_size"] == 2
    assert _close(sharded["losses"], single["losses"], tol=1e-3), (sharded["losses"], single["losses"])
    resumed = _run(example, "--strategy", "fsdp", "--batch-size", "8", "--max-steps", "10", "--resume", str(path))
    assert resumed["global_step"] == 10
