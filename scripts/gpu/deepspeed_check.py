"""One DeepSpeed case on one GPU: train, save half-way, resume, and compare with a single_device run.

``python scripts/gpu/deepspeed_check.py CASE OUT_DIR`` where CASE is ``single_device`` (the reference, run first)
or a DeepSpeed strategy name. The case trains the same small LightningModule for 2 epochs in one go, then
1 epoch + ``save_checkpoint`` and a fresh Trainer resuming to 2 epochs; it writes ``OUT_DIR/CASE.json`` and
prints one summary line (the reference's losses are read from ``OUT_DIR/single_device.json``). Float32, so the
curves of a correct ZeRO run equal the reference's up to the GPU's reduction order.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug as L

EPOCHS = 2
#: "cpu" for a dry run of this script on a machine without a GPU (DS_ACCELERATOR=cpu then).
ACCELERATOR = os.environ.get("DS_CHECK_ACCELERATOR", "cuda")
TOLERANCE = 1e-3  # relative, per step: float32 with another summation order (flattened, partitioned tensors)


class Regression(L.LightningModule):
    def __init__(self, cpu_adam: bool) -> None:
        super().__init__()
        self.cpu_adam = cpu_adam
        self.net = torch.nn.Sequential(
            torch.nn.Linear(64, 512),
            torch.nn.GELU(),
            torch.nn.Linear(512, 512),
            torch.nn.GELU(),
            torch.nn.Linear(512, 1),
        )
        self.losses: list[float] = []

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x), y)
        self.losses.append(float(loss.detach()))
        return loss

    def configure_optimizers(self) -> Any:
        if self.cpu_adam:  # ZeRO-Offload steps on the CPU with DeepSpeed's own Adam (Lightning's advice too)
            from deepspeed.ops.adam import DeepSpeedCPUAdam  # type: ignore[import-untyped]

            return DeepSpeedCPUAdam(self.parameters(), lr=3e-3, weight_decay=0.0, adamw_mode=True)
        return torch.optim.AdamW(self.parameters(), lr=3e-3, weight_decay=0.0)


def loader() -> DataLoader[Any]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(1024, 64, generator=g)
    y = torch.tanh(0.3 * x[:, :8].sum(dim=1, keepdim=True))
    return DataLoader(TensorDataset(x, y), batch_size=64)


def fit(case: str, epochs: int, ckpt_path: Path | None = None, save: Path | None = None) -> list[float]:
    torch.manual_seed(0)
    model = Regression(cpu_adam=case.endswith("_offload"))
    trainer = L.Trainer(
        accelerator=ACCELERATOR, devices=1, strategy=case, precision="32-true", max_epochs=epochs, logger=False,
        enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False,
        use_distributed_sampler=False,  # the loader as given, as single_device reads it (DeepSpeed is DDP-based)
    )  # fmt: skip
    trainer.fit(model, loader(), ckpt_path=ckpt_path)
    if save is not None:
        trainer.save_checkpoint(save)
    return model.losses


def main() -> None:
    case, out = sys.argv[1], Path(sys.argv[2])
    start = time.perf_counter()
    whole = fit(case, EPOCHS)
    result: dict[str, Any] = {"case": case, "losses": whole}
    if case != "single_device":
        ckpt = out / f"{case}.ckpt"
        first = fit(case, 1, save=ckpt)
        resumed = fit(case, EPOCHS, ckpt_path=ckpt)
        reference = json.loads((out / "single_device.json").read_text())["losses"]
        result["resumed"] = resumed
        result["vs_single_device"] = max(abs(a - b) / max(abs(b), 1e-8) for a, b in zip(whole, reference, strict=True))
        result["resume_vs_whole"] = max(
            abs(a - b) / max(abs(b), 1e-8) for a, b in zip(resumed, whole[len(first) :], strict=True)
        )
        result["ok"] = (
            len(resumed) == len(whole) - len(first)
            and result["vs_single_device"] <= TOLERANCE
            and result["resume_vs_whole"] <= TOLERANCE
        )
    result["seconds"] = round(time.perf_counter() - start, 1)
    gpu = ACCELERATOR == "cuda"
    result["peak_gpu_mib"] = round(torch.cuda.max_memory_allocated() / 2**20, 1) if gpu else None
    (out / f"{case}.json").write_text(json.dumps(result))
    if case == "single_device":
        print(f"REF  single_device: {len(whole)} steps, loss {whole[0]:.4f} -> {whole[-1]:.4f}, {result['seconds']} s")
        return
    verdict = "PASS" if result["ok"] else "FAIL"
    print(
        f"{verdict} {case}: {len(whole)} steps, loss {whole[0]:.4f} -> {whole[-1]:.4f}; max rel. diff vs "
        f"single_device {result['vs_single_device']:.2e}; resumed {len(resumed)} steps after a save at step "
        f"{len(first)}, max rel. diff vs uninterrupted {result['resume_vs_whole']:.2e}; peak GPU "
        f"{result['peak_gpu_mib']} MiB; {result['seconds']} s"
    )


if __name__ == "__main__":
    main()
