"""Lightning 2.6's own Trainer and Fabric on accelplug's accelerators, in a child process; one JSON line out.

``python lightning_child.py FOLDER [--vulkan]``. The opt-in is the documented line,
``register_with_lightning()``; everything after it is plain Lightning. With ``--vulkan`` torchvulkan is imported
first and the runs go to the real ``vulkan`` device through the bridge (``torch_accelerator``); without it, to
the ``example`` plugin (an accelplug accelerator on the host CPU). Each run is repeated with Lightning's own
``accelerator="cpu"`` on the same data, so the tests compare the losses.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

VULKAN = "--vulkan" in sys.argv
if VULKAN:
    import torchvulkan  # noqa: F401 - registers the vulkan device before accelplug loads the bridge

import lightning as L  # noqa: E402 - after the backend, as in a user's script
import torch  # noqa: E402 - after the backend, as in a user's script
from lightning.pytorch.plugins.precision import MixedPrecision  # noqa: E402 - after the backend, as in a user's script

from accelplug.interop.lightning_accelerators import register_with_lightning  # noqa: E402 - after the backend, as in a user's script

NAME = "torch_accelerator" if VULKAN else "example"


class Regressor(L.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
        self.losses: list[float] = []
        self.devices: set[str] = set()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = self.net(x)
        return out

    def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
        x, y = batch
        self.devices.add(str(x.device))
        loss = torch.nn.functional.mse_loss(self(x).float(), y)
        self.losses.append(float(loss.detach().cpu()))
        return loss

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.AdamW(self.parameters(), lr=0.01)


def loader() -> torch.utils.data.DataLoader[Any]:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=generator)
    y = x.sum(dim=1, keepdim=True)
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=16)


def fit(folder: Path, accelerator: str, **options: Any) -> dict[str, Any]:
    L.seed_everything(0, verbose=False)
    model = Regressor()
    trainer = L.Trainer(
        accelerator=accelerator,
        devices=1,
        max_epochs=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=str(folder),
        **options,
    )
    trainer.fit(model, loader())
    return {
        "accelerator": type(trainer.accelerator).__name__,
        "strategy": type(trainer.strategy).__name__,
        "root_device": str(trainer.strategy.root_device),
        "batch_devices": sorted(model.devices),
        "losses": model.losses,
    }


def refusal(folder: Path, accelerator: str, **options: Any) -> str | None:
    try:
        fit(folder, accelerator, **options)
    except Exception as exc:  # what Lightning lets through: the type is part of the answer
        return f"{type(exc).__name__}: {exc}"
    return None


def fabric(accelerator: str, **options: Any) -> dict[str, Any]:
    L.seed_everything(0, verbose=False)
    run = L.Fabric(accelerator=accelerator, devices=1, **options)
    run.launch()
    model = Regressor()
    optimizer = model.configure_optimizers()
    model, optimizer = run.setup(model, optimizer)
    losses = []
    for _ in range(3):
        for x, y in run.setup_dataloaders(loader()):
            loss = torch.nn.functional.mse_loss(model(x), y)
            optimizer.zero_grad()
            run.backward(loss)
            optimizer.step()
            losses.append(float(loss.detach().cpu()))
    return {"device": str(run.device), "accelerator": type(run.strategy.accelerator).__name__, "losses": losses}


def main(folder: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"registered": register_with_lightning(), "again": register_with_lightning()}
    single = {"strategy": f"single_{NAME}"} if VULKAN else {}
    out["trainer"] = fit(folder, NAME)  # strategy="auto": the adapter gives Lightning's strategy the device
    out["trainer/lightning-cpu"] = fit(folder, "cpu")
    out["fabric"] = fabric(NAME, **single)
    out["fabric/lightning-cpu"] = fabric("cpu")
    if VULKAN:
        out["trainer/single-strategy"] = fit(folder, NAME, **single)
        try:
            fabric(NAME)
            out["refused/fabric-auto-strategy"] = None
        except Exception as exc:  # what Lightning lets through: the type is part of the answer
            out["refused/fabric-auto-strategy"] = f"{type(exc).__name__}: {exc}"
        out["refused/16-mixed"] = refusal(folder, NAME, precision="16-mixed", **single)
        device_type = torch.accelerator.current_accelerator().type  # type: ignore[union-attr]
        out["16-mixed/plugin"] = fit(folder, NAME, plugins=[MixedPrecision("16-mixed", device=device_type)], **single)
        out["16-mixed/plugin/lightning-cpu"] = fit(folder, "cpu", plugins=[MixedPrecision("16-mixed", device="cpu")])
        out["refused/bf16-plugin"] = refusal(
            folder, NAME, plugins=[MixedPrecision("bf16-mixed", device=device_type)], **single
        )
    try:
        L.Trainer(accelerator=NAME, devices=3)
        out["refused/devices=3"] = None
    except Exception as exc:
        out["refused/devices=3"] = f"{type(exc).__name__}: {exc}"
    return out


if __name__ == "__main__":
    began = time.perf_counter()
    result = main(Path(sys.argv[1]))
    result["seconds"] = round(time.perf_counter() - began, 2)
    print(json.dumps(result))
