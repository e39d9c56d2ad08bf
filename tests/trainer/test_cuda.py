"""The Trainer on NVIDIA GPUs: mixed precision, defaults, and checkpoints that move to the CPU.

Skipped cleanly on a machine without CUDA; run with ``pytest -m cuda tests/trainer tests/strategies`` on a GPU box.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from accelplug import Trainer
from tests.modules import LinearRegression, NoisyNet, regression_data
from tests.processes import REPO, child_env

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU with a CUDA build of torch"),
]


@pytest.fixture(autouse=True)
def torch_cuda_defaults() -> Iterator[None]:
    """Each test starts from torch's defaults, whatever an earlier Trainer switched on."""
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.benchmark = False
    yield
    torch.set_float32_matmul_precision("highest")
    torch.backends.cudnn.benchmark = False


def _cuda(**options: object) -> dict[str, object]:
    return {"accelerator": "cuda", "devices": 1, "enable_progress_bar": False, **options}


def _loss(model: LinearRegression, loader: object) -> float:
    with torch.no_grad():
        return sum(float(model.training_step(b, 0)) for b in loader) / len(loader)  # type: ignore[arg-type]


def test_16_mixed_on_cuda_trains_with_a_grad_scaler(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model, data = LinearRegression(), regression_data()
    before = _loss(model, data)
    trainer = Trainer(**_cuda(precision="16-mixed", max_epochs=8, default_root_dir=tmp_path))
    model.seen_dtypes.clear()
    trainer.fit(model, data)
    assert trainer._run is not None and trainer._run.precision.scaler is not None
    assert trainer._run.precision.scaler.get_scale() > 0
    assert set(model.seen_dtypes) == {torch.float16}
    assert model.linear.weight.device.type == "cuda"
    assert _loss(model.cpu(), data) < before / 10


def test_bf16_mixed_on_cuda_trains_without_a_scaler(tmp_path: Path) -> None:
    torch.manual_seed(0)
    model, data = LinearRegression(), regression_data()
    before = _loss(model, data)
    trainer = Trainer(**_cuda(precision="bf16-mixed", max_epochs=8, default_root_dir=tmp_path))
    model.seen_dtypes.clear()
    trainer.fit(model, data)
    assert trainer._run is not None and trainer._run.precision.scaler is None
    assert set(model.seen_dtypes) == {torch.bfloat16}
    assert _loss(model.cpu(), data) < before / 10


def test_cuda_defaults_are_applied_once_and_reported(tmp_path: Path) -> None:
    trainer = Trainer(**_cuda(max_steps=1, default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data())
    assert torch.get_float32_matmul_precision() == "high"
    assert any("set_float32_matmul_precision" in note for note in trainer.setup_notes)


def test_cuda_defaults_leave_a_setting_the_user_chose(tmp_path: Path) -> None:
    torch.set_float32_matmul_precision("medium")
    trainer = Trainer(**_cuda(max_steps=1, default_root_dir=tmp_path))
    trainer.fit(LinearRegression(), regression_data())
    assert torch.get_float32_matmul_precision() == "medium"
    assert not any("set_float32_matmul_precision" in note for note in trainer.setup_notes)


def test_checkpoint_saved_on_cuda_resumes_on_cpu(tmp_path: Path) -> None:
    torch.manual_seed(0)
    on_gpu = NoisyNet()
    trainer = Trainer(**_cuda(max_steps=4, seed=1, logger=False, enable_checkpointing=False))
    trainer.fit(on_gpu, regression_data())
    path = trainer.save_checkpoint(tmp_path / "gpu.ckpt")
    assert "cuda" in torch.load(path, map_location="cpu", weights_only=True)["rng"]

    on_cpu = NoisyNet()
    cpu_trainer = Trainer(accelerator="cpu", max_steps=8, enable_progress_bar=False, logger=False)
    cpu_trainer.fit(on_cpu, regression_data(), ckpt_path=path)
    assert cpu_trainer.global_step == 8
    assert all(p.device.type == "cpu" for p in on_cpu.parameters())


def test_batches_reach_the_gpu_from_the_users_loader(tmp_path: Path) -> None:
    devices: list[str] = []

    class Probe(LinearRegression):
        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
            devices.append(batch[0].device.type)
            return super().training_step(batch, batch_idx)

    Trainer(**_cuda(max_steps=2, default_root_dir=tmp_path)).fit(Probe(), regression_data())
    assert devices == ["cuda", "cuda"]


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two GPUs")
def test_two_gpu_ddp_over_nccl_leaves_identical_weights(tmp_path: Path) -> None:
    out = tmp_path / "weights.pt"
    result = subprocess.run(
        [sys.executable, "-m", "accelplug", "launch", "--accelerator", "cuda", "--devices", "2",
         str(REPO / "examples" / "ddp_example.py"), "--out", str(out), "--root-dir", str(tmp_path)],
        env=child_env({"ACCELPLUG_DISABLE_PLUGIN_AUTOLOAD": "1"}),
        capture_output=True,
        text=True,
        timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    rank0 = torch.load(f"{out}.rank0", weights_only=True, map_location="cpu")
    rank1 = torch.load(f"{out}.rank1", weights_only=True, map_location="cpu")
    for name in rank0:
        assert torch.equal(rank0[name], rank1[name]), name


def test_a_lightning_module_trains_on_cuda_with_device_stats_logged(tmp_path: Path) -> None:
    import csv

    import accelplug as L

    class Regressor(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.layer = torch.nn.Linear(3, 1)

        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
            assert self.device.type == "cuda"
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.layer(x).float(), y)
            self.log("loss", loss, prog_bar=True)
            return loss

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = L.Trainer(
        **_cuda(precision="bf16-mixed", max_epochs=3, log_every_n_steps=4, default_root_dir=tmp_path),
        callbacks=[L.DeviceStatsMonitor()],
        logger="csv",
    )
    trainer.fit(Regressor(), regression_data())
    assert trainer.metrics_path is not None
    with trainer.metrics_path.open() as file:
        rows = list(csv.DictReader(file))
    # Lightning's keys: DeviceStatsMonitor.<hook>/<torch.cuda.memory_stats name>
    memory = [float(v) for r in rows for k, v in r.items() if k.endswith("/allocated_bytes.all.current") and v]
    assert memory and all(m > 0 for m in memory), "get_device_stats() reached the logger"
    losses = [float(r["loss"]) for r in rows if r.get("loss")]
    assert losses[-1] < losses[0]


def test_bf16_true_keeps_parameters_in_bfloat16_on_cuda(tmp_path: Path) -> None:
    model = LinearRegression(lr=0.05)
    Trainer(**_cuda(precision="bf16-true", max_epochs=2, default_root_dir=tmp_path)).fit(model, regression_data())
    assert model.linear.weight.dtype == torch.bfloat16 and model.linear.weight.device.type == "cuda"
    assert set(model.seen_dtypes) == {torch.bfloat16}
