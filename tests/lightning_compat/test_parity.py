"""The same module under Lightning 2.x and under accelplug: identical hook order and identical per-step losses.

Runs only where ``lightning`` is installed (the ``test`` extra installs it, with the CPU torch kept by
``constraints.txt``); elsewhere it is skipped with that reason.
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

import accelplug
from tests.callbacks.parity import quiet_lightning

from .recording import make_callback, make_module

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

CASES = {
    "fit": {},
    "fit-with-scheduler": {"scheduler": True},
    "fit-manual-optimization": {"manual": True},
    "fit-accumulating-2": {"accumulate_grad_batches": 2},
    "validate": {},
    "test": {},
    "predict": {},
}


def _run(framework: Any, case: str) -> tuple[list[str], list[float]]:
    options = dict(CASES[case])
    module_options = {k: options.pop(k) for k in ("manual", "scheduler") if k in options}
    calls: list[str] = []
    module = make_module(framework.LightningModule, calls, **module_options)
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[make_callback(framework.Callback, calls)],
        **options,
    )
    method = getattr(trainer, case.split("-")[0])
    with quiet_lightning(framework):
        if case in ("validate", "test"):
            method(module, verbose=False)
        else:
            method(module)
    return calls, module.losses


@pytest.fixture(autouse=True)
def _quiet_lightning() -> None:
    logging.getLogger("lightning.pytorch").setLevel(logging.ERROR)


@pytest.mark.parametrize("case", list(CASES))
def test_hooks_run_in_lightnings_order_with_identical_losses(case: str) -> None:
    expected_calls, expected_losses = _run(lightning, case)
    calls, losses = _run(accelplug, case)
    assert calls == expected_calls
    assert losses == expected_losses, "per-step losses differ from Lightning's"
    assert len(calls) > 20


# ---- the real-world-shaped modules under both frameworks ---------------------------------------------
def _record_metrics(framework: Any, seen: list[tuple[str, int, dict[str, float]]]) -> Any:
    class MetricsRecorder(framework.Callback):  # type: ignore[misc, name-defined]
        def on_train_batch_end(self, trainer: Any, pl_module: Any, outputs: Any, batch: Any, batch_idx: int) -> None:
            seen.append(("batch", trainer.global_step, _floats(trainer.callback_metrics)))

        def on_train_epoch_end(self, trainer: Any, pl_module: Any) -> None:
            seen.append(("epoch", trainer.global_step, _floats(trainer.callback_metrics)))

    return MetricsRecorder()


def _floats(metrics: dict[str, Any]) -> dict[str, float]:
    return {k: round(float(v), 5) for k, v in metrics.items()}


def _real_world_run(framework: Any, name: str, tmp_path: Any) -> tuple[list[Any], Any]:
    import torch
    from torch.utils.data import DataLoader

    from .real_world import blobs, build, low_rank_data

    modules = build(framework)
    torch.manual_seed(0)
    seen: list[tuple[str, int, dict[str, float]]] = []
    trainer = framework.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=3,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[_record_metrics(framework, seen)],
    )
    generator = torch.Generator().manual_seed(5)
    with quiet_lightning(framework):
        if name == "LitAutoEncoder":
            model = modules[name]()
            loader = DataLoader(low_rank_data(), batch_size=32, shuffle=True, generator=generator)
            trainer.fit(model, loader, DataLoader(low_rank_data(64, seed=1), batch_size=32))
        elif name == "LitClassifier":
            model = modules[name]()
            loader = DataLoader(blobs(), batch_size=32, shuffle=True, generator=generator)
            trainer.fit(model, loader, DataLoader(blobs(90, seed=1), batch_size=32))
        elif name == "GAN":
            model = modules[name]()
            real = torch.randn(256, 1, generator=generator) * 0.5 + 3.0
            trainer.fit(model, DataLoader(torch.utils.data.TensorDataset(real), batch_size=64))
        elif name == "RegressionDataModule":
            model = modules["LinearOnDataModule"]()
            trainer.fit(model, datamodule=modules[name]())
        else:
            tmp_path.mkdir(parents=True, exist_ok=True)
            model = modules[name]() if name != "OwnDataModel" else modules[name](str(tmp_path))
            trainer.fit(model)
    return seen, model


@pytest.mark.parametrize(
    "name", ["LitAutoEncoder", "LitClassifier", "GAN", "OwnDataModel", "RegressionDataModule", "BanditDQN"]
)
def test_real_world_modules_log_the_same_metrics_at_the_same_steps(name: str, tmp_path: Any) -> None:
    pytest.importorskip("torchmetrics")
    expected, lightning_model = _real_world_run(lightning, name, tmp_path / "lightning")
    seen, model = _real_world_run(accelplug, name, tmp_path / "accelplug")
    assert len(seen) == len(expected)
    for ours, theirs in zip(seen, expected, strict=True):
        assert ours[:2] == theirs[:2]
        assert ours[2] == pytest.approx(theirs[2], rel=1e-4, abs=1e-5), f"at {ours[:2]}"
    for ours_param, their_param in zip(model.parameters(), lightning_model.parameters(), strict=True):
        assert torch_equal(ours_param, their_param), "the trained weights differ from Lightning's"


def torch_equal(a: Any, b: Any) -> bool:
    import torch

    return bool(torch.allclose(a.detach(), b.detach(), rtol=1e-5, atol=1e-6))
