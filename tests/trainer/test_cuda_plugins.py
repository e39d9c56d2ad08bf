"""This round's Lightning names on an NVIDIA GPU: precision plugins, AsyncCheckpointIO, profilers, SWA and the Tuner.

The CPU suite checks each of these against Lightning 2.6; here the parts that only a GPU exercises: a writer copying
CUDA tensors off the device while training goes on, fp16 with its grad scaler driven through a plugin object, the
PyTorch profiler recording CUDA kernels, and weight averaging with BatchNorm statistics on the GPU.
Skipped cleanly without CUDA; ``pytest -m cuda tests/trainer/test_cuda_plugins.py`` on a GPU box.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.plugins import AsyncCheckpointIO, MixedPrecision
from accelplug.profilers import PyTorchProfiler, SimpleProfiler
from accelplug.tuner import Tuner

pytestmark = [
    pytest.mark.cuda,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs an NVIDIA GPU with a CUDA build of torch"),
]


class Net(accelplug.LightningModule):
    def __init__(self, lr: float = 0.05) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.lr = lr
        self.body = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU())
        self.head = torch.nn.Linear(32, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))  # type: ignore[no-any-return]

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self) -> Any:
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def _data(n: int = 256) -> DataLoader[Any]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(n, 8, generator=generator)
    return DataLoader(TensorDataset(x, x.sum(dim=1, keepdim=True)), batch_size=32)


def _trainer(tmp_path: Path, **options: Any) -> accelplug.Trainer:
    base = {"accelerator": "cuda", "devices": 1, "logger": False, "enable_progress_bar": False}
    base |= {"enable_model_summary": False, "default_root_dir": tmp_path}
    return accelplug.Trainer(**(base | options))


def test_a_mixed_precision_plugin_object_trains_as_the_precision_name_on_cuda(tmp_path: Path) -> None:
    by_name, by_plugin = Net(), Net()
    _trainer(tmp_path / "a", precision="16-mixed", max_epochs=2, enable_checkpointing=False).fit(by_name, _data())
    plugin = MixedPrecision("16-mixed", "cuda")
    trainer = _trainer(tmp_path / "b", plugins=[plugin], max_epochs=2, enable_checkpointing=False)
    trainer.fit(by_plugin, _data())
    assert trainer.precision_plugin is plugin
    for (name, a), (_, b) in zip(by_name.state_dict().items(), by_plugin.state_dict().items(), strict=True):
        assert torch.equal(a, b), name


def test_async_checkpoint_of_cuda_tensors_holds_the_weights_of_the_step_it_was_asked_at(tmp_path: Path) -> None:
    class SaveAtStep3(accelplug.Callback):
        def __init__(self) -> None:
            self.expected: dict[str, torch.Tensor] = {}

        def on_train_batch_end(self, trainer: Any, module: Any, *args: Any) -> None:
            if trainer.global_step == 3:
                self.expected = {k: v.detach().cpu().clone() for k, v in module.state_dict().items()}
                trainer.save_checkpoint(tmp_path / "step3.ckpt")

    saver = SaveAtStep3()
    trainer = _trainer(tmp_path, plugins=[AsyncCheckpointIO()], max_epochs=2, callbacks=[saver])
    trainer.fit(Net(), _data())
    saved = torch.load(tmp_path / "step3.ckpt", map_location="cpu", weights_only=True)["state_dict"]
    assert saved.keys() == saver.expected.keys()
    for name, value in saver.expected.items():
        assert torch.equal(saved[name], value), name


# torch's own note when a profiler schedule repeats; the test reads one cycle's trace
@pytest.mark.filterwarnings("ignore:.*Profiler clears events at the end of each cycle:UserWarning")
def test_profilers_record_a_cuda_fit(tmp_path: Path) -> None:
    simple = SimpleProfiler(dirpath=tmp_path, filename="perf")
    _trainer(tmp_path, profiler=simple, max_epochs=1, enable_checkpointing=False).fit(Net(), _data())
    report = (tmp_path / "fit-perf.txt").read_text()
    assert "run_training_batch" in report and "[Strategy]SingleDeviceStrategy.training_step" in report
    traces = tmp_path / "traces"
    torch_profiler = PyTorchProfiler(dirpath=traces, filename="trace", export_to_chrome=True)
    _trainer(tmp_path, profiler=torch_profiler, max_steps=3, enable_checkpointing=False).fit(Net(), _data())
    written = list(traces.glob("*.json"))
    assert written, f"no Chrome trace in {traces}"
    assert any("cuda" in path.read_text().lower() for path in written), "the trace holds no CUDA activity"


# Lightning's advice about DataLoader workers, on its side of the comparison (accelplug gives none)
@pytest.mark.filterwarnings("ignore:The 'train_dataloader' does not have many workers")
def test_swa_on_cuda_ends_with_lightnings_weights_and_batchnorm_statistics(tmp_path: Path) -> None:
    lightning = pytest.importorskip("lightning", reason="the SWA comparison runs Lightning too")
    results = {}
    for name, framework in (("lightning", lightning), ("accelplug", accelplug)):
        model = _net_on(framework)
        trainer = framework.Trainer(
            accelerator="cuda",
            devices=1,
            max_epochs=4,
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
            default_root_dir=tmp_path / name,
            callbacks=[framework.pytorch.callbacks.StochasticWeightAveraging(swa_lrs=0.01, swa_epoch_start=2)],
        )
        trainer.fit(model, _data())
        results[name] = {key: value.detach().cpu() for key, value in model.state_dict().items()}
    assert results["accelplug"]["body.1.running_mean"].abs().sum() > 0
    for key, value in results["lightning"].items():
        assert torch.allclose(results["accelplug"][key].double(), value.double(), atol=1e-5), key


def _net_on(framework: Any) -> Any:
    """:class:`Net`'s layers and steps on ``framework``'s LightningModule."""

    class FrameworkNet(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.body = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.BatchNorm1d(32), torch.nn.ReLU())
            self.head = torch.nn.Linear(32, 1)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.head(self.body(x))  # type: ignore[no-any-return]

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            x, y = batch
            return torch.nn.functional.mse_loss(self(x), y)

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.05)

    return FrameworkNet()


def test_lr_find_on_cuda_restores_the_model_and_suggests_a_rate(tmp_path: Path) -> None:
    model = Net()
    before = {k: v.clone() for k, v in model.state_dict().items()}
    trainer = _trainer(tmp_path, max_epochs=1, enable_checkpointing=False)
    finder = Tuner(trainer).lr_find(model, train_dataloaders=_data(2048), num_training=40)
    assert finder is not None and len(finder.results["lr"]) > 5
    suggestion = finder.suggestion()
    assert suggestion is not None and 1e-8 <= suggestion <= 1
    assert model.lr == suggestion
    after = {k: v.cpu() for k, v in model.state_dict().items()}
    for name, value in before.items():
        assert torch.equal(after[name], value.cpu()), name
