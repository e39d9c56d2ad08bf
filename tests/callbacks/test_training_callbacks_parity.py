"""GradientAccumulationScheduler, SpikeDetection, ThroughputMonitor and ModelPruning against Lightning 2.6: the same
weights and steps, the same files and exceptions, the same logged keys and counts, and the refusals."""

from __future__ import annotations

import csv
import importlib
import json
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import torch

import accelplug
from accelplug.callbacks import GradientAccumulationScheduler, ModelPruning, SpikeDetection, ThroughputMonitor
from accelplug.callbacks.spike import TrainingSpikeException
from accelplug.errors import MisconfigurationException

from .parity import FRAMEWORKS, fit_both, make_module, quiet_lightning


def _same_weights(sides: dict[str, Any]) -> None:
    theirs, ours = sides["lightning"].module.state_dict(), sides["accelplug"].module.state_dict()
    assert list(ours) == list(theirs)
    for key in theirs:
        torch.testing.assert_close(ours[key], theirs[key])


# ---- GradientAccumulationScheduler -----------------------------------------------------------------------
@pytest.mark.parametrize("scheduling", [{1: 2, 2: 3}, {0: 4}])
def test_accumulation_follows_the_schedule_as_in_lightning(tmp_path: Path, scheduling: dict[int, int]) -> None:
    sides = fit_both(
        tmp_path, lambda fw: [fw.pytorch.callbacks.GradientAccumulationScheduler(dict(scheduling))], max_epochs=3
    )
    assert sides["accelplug"].trainer.global_step == sides["lightning"].trainer.global_step
    assert sides["accelplug"].trainer.accumulate_grad_batches == sides["lightning"].trainer.accumulate_grad_batches
    _same_weights(sides)


def test_accumulation_scheduler_refusals(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="empty"):
        GradientAccumulationScheduler({})
    with pytest.raises(MisconfigurationException, match="Epoch should be an int"):
        GradientAccumulationScheduler({-1: 2})
    with pytest.raises(MisconfigurationException, match="Accumulation factor"):
        GradientAccumulationScheduler({1: 0})
    with pytest.raises(MisconfigurationException, match="scheduling="):
        GradientAccumulationScheduler([(1, 2)])  # type: ignore[arg-type]
    trainer = accelplug.Trainer(
        accelerator="cpu",
        max_epochs=1,
        accumulate_grad_batches=2,
        logger=False,
        enable_progress_bar=False,
        callbacks=[GradientAccumulationScheduler({1: 2})],
        default_root_dir=tmp_path,
    )
    # Lightning's ValueError and key phrase, with the value set
    match = r"`accumulate_grad_batches` and are using the `GradientAccumulationScheduler`.*accumulate_grad_batches=2\)"
    with pytest.raises(ValueError, match=match):
        trainer.fit(make_module(accelplug, validation=False))
    manual = make_module(accelplug, validation=False)
    manual.automatic_optimization = False
    trainer = accelplug.Trainer(
        accelerator="cpu",
        max_epochs=1,
        logger=False,
        enable_progress_bar=False,
        callbacks=[GradientAccumulationScheduler({1: 2})],
        default_root_dir=tmp_path,
    )
    with pytest.raises(RuntimeError, match="manual"):
        trainer.fit(manual)
    with pytest.raises(MisconfigurationException, match="accumulate_grad_batches=0"):
        trainer.accumulate_grad_batches = 0


# ---- SpikeDetection --------------------------------------------------------------------------------------
def test_a_spike_stops_the_fit_and_writes_the_batches_as_lightning(tmp_path: Path) -> None:
    sides = fit_both(
        tmp_path,
        lambda fw: [fw.pytorch.callbacks.SpikeDetection(window=3, warmup=2, rtol=0.05)],
        module={"lr": 0.3},
        expect_error=RuntimeError,
        max_epochs=3,
    )
    theirs, ours = sides["lightning"], sides["accelplug"]
    assert type(theirs.error).__name__ == type(ours.error).__name__ == "TrainingSpikeException"
    assert str(ours.error) == str(theirs.error)
    assert ours.files() == theirs.files()
    written = [json.loads((side.root / "skip_batches.json").read_text()) for side in (theirs, ours)]
    assert written[0] == written[1]
    assert ours.trainer.global_step == theirs.trainer.global_step


def test_no_spike_leaves_training_alone(tmp_path: Path) -> None:
    sides = fit_both(tmp_path, lambda fw: [fw.pytorch.callbacks.SpikeDetection()], max_epochs=2)
    _same_weights(sides)
    assert sides["accelplug"].files() == sides["lightning"].files()


@pytest.mark.parametrize("spike", [3.0, float("nan"), None])
def test_fabrics_spike_detection_is_called_with_the_loss_as_lightning_fabrics(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spike: float | None
) -> None:
    # fabric.call("on_train_batch_end", fabric=..., loss=..., batch=..., batch_idx=...): the file in the current folder
    outcomes = {}
    for name, framework in FRAMEWORKS.items():
        folder = tmp_path / name
        folder.mkdir()
        monkeypatch.chdir(folder)
        spike_module = importlib.import_module(f"{framework.__name__}.fabric.utilities.spike")
        fabric = framework.Fabric(accelerator="cpu", devices=1, callbacks=[spike_module.SpikeDetection()])
        losses = [1 / i for i in range(1, 10)]
        if spike is not None:
            losses[4] = spike
        stopped_at = None
        for i, loss in enumerate(losses):
            try:
                fabric.call("on_train_batch_end", fabric=fabric, loss=torch.tensor(loss), batch=None, batch_idx=i)
            except spike_module.TrainingSpikeException:
                stopped_at = i
                break
        written = folder / "skip_batches.json"
        outcomes[name] = (stopped_at, json.loads(written.read_text()) if written.exists() else None)
    assert outcomes["accelplug"] == outcomes["lightning"]
    assert outcomes["accelplug"][0] == (None if spike is None else 4)


def test_spike_detection_refusals_and_state(tmp_path: Path) -> None:
    with pytest.raises(MisconfigurationException, match="Did you mean 'min'"):
        SpikeDetection(mode="mni")  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match="window"):
        SpikeDetection(window=0)
    with pytest.raises(MisconfigurationException, match="rtol"):
        SpikeDetection(rtol="2")  # type: ignore[arg-type]
    detector = SpikeDetection(window=2)
    detector._recent.extend([torch.tensor(1.0), torch.tensor(3.0)])
    restored = SpikeDetection(window=2)
    restored.load_state_dict(detector.state_dict())
    assert [float(v) for v in restored._recent] == [1.0, 3.0]
    assert issubclass(TrainingSpikeException, RuntimeError)


# ---- ThroughputMonitor -----------------------------------------------------------------------------------
def _logged(side: Any) -> dict[str, int]:
    counts: dict[str, int] = {}
    for path in side.root.rglob("metrics.csv"):
        with path.open() as file:
            for row in csv.DictReader(file):
                for key, value in row.items():
                    if value not in ("", None) and ("/" in key):
                        counts[key] = counts.get(key, 0) + 1
                        if key.endswith("_per_sec"):
                            assert float(value) > 0
    return counts


def test_throughput_keys_and_counts_match_lightning(tmp_path: Path) -> None:
    # the module defines no flops_per_batch: both frameworks say so once
    with pytest.warns(UserWarning, match="you need to define a `flops_per_batch` attribute") as seen:
        sides = fit_both(
            tmp_path,
            lambda fw: [fw.pytorch.callbacks.ThroughputMonitor(batch_size_fn=lambda b: b[0].size(0), window_size=2)],
            logger=lambda fw, root: fw.pytorch.loggers.CSVLogger(root),
            log_every_n_steps=2,
            max_epochs=2,
        )
    where = sorted(Path(w.filename).parts[-3] for w in seen if "flops_per_batch" in str(w.message))
    assert where == ["accelplug", "pytorch"], where  # .../accelplug/callbacks/ and .../lightning/pytorch/callbacks/
    theirs, ours = _logged(sides["lightning"]), _logged(sides["accelplug"])
    assert "train/device/batches_per_sec" in theirs
    assert ours == theirs


def test_throughput_peak_flops_replaced_at_lightnings_path_give_mfu_logged_by_keyword(tmp_path: Path) -> None:
    # code written for Lightning gives a CPU a peak by replacing the function at the callback's module path
    calls = {}
    for name, framework in FRAMEWORKS.items():
        logger = mock.Mock(save_dir=str(tmp_path / name), version=0)
        logger.name = "mock"
        module = make_module(framework, validation=False)
        module.flops_per_batch = 10
        trainer = framework.Trainer(
            accelerator="cpu",
            max_steps=3,
            logger=logger,
            log_every_n_steps=1,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=tmp_path / name,
            callbacks=[framework.pytorch.callbacks.ThroughputMonitor(batch_size_fn=lambda b: 4, window_size=2)],
        )
        path = f"{framework.__name__}.pytorch.callbacks.throughput_monitor.get_available_flops"
        with mock.patch(path, return_value=100), quiet_lightning(framework):
            trainer.fit(module)
        calls[name] = [
            (sorted(c.kwargs.get("metrics", {})), sorted(c.kwargs), c.args)
            for c in logger.log_metrics.mock_calls
            if any("train/" in k for k in c.kwargs.get("metrics", {}))
        ]
    assert any("train/device/mfu" in keys for keys, _, _ in calls["accelplug"])
    assert calls["accelplug"] == calls["lightning"]


def test_throughput_evaluation_rows_are_logged_at_lightnings_steps(tmp_path: Path) -> None:
    # the fit's validation counts its batches within the training epoch (two runs in an epoch: 1, 2 then 3, 4);
    # separate validate/test calls count on from the last call
    rows = {}
    for name, framework in FRAMEWORKS.items():
        logger = mock.Mock(save_dir=str(tmp_path / name), version=0)
        logger.name = "mock"
        module = importlib.import_module(f"{framework.__name__}.pytorch.demos.boring_classes").BoringModel()
        module.flops_per_batch = 1
        trainer = framework.Trainer(
            accelerator="cpu",
            max_epochs=2,
            limit_train_batches=2,
            limit_val_batches=2,
            limit_test_batches=2,
            val_check_interval=1,
            logger=logger,
            log_every_n_steps=1,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            default_root_dir=tmp_path / name,
            callbacks=[framework.pytorch.callbacks.ThroughputMonitor(batch_size_fn=lambda b: 4, window_size=2)],
        )
        with quiet_lightning(framework):
            trainer.fit(module)
            for _ in range(2):
                trainer.validate(module, verbose=False)
                trainer.test(module, verbose=False)
        rows[name] = [
            (c.kwargs["step"], {k: v for k, v in c.kwargs["metrics"].items() if k.endswith(("batches", "samples"))})
            for c in logger.log_metrics.mock_calls
            if any(k.startswith(("validate/", "test/")) for k in c.kwargs.get("metrics", {}))
        ]
    assert [step for step, _ in rows["accelplug"][:8]] == [1, 2, 3, 4, 1, 2, 3, 4]
    assert rows["accelplug"] == rows["lightning"]


def test_throughput_monitor_refusals() -> None:
    with pytest.raises(MisconfigurationException, match="batch_size_fn"):
        ThroughputMonitor(batch_size_fn=8)  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match="window_size"):
        ThroughputMonitor(batch_size_fn=len, window_size=1)


# ---- ModelPruning ----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "options",
    [
        {"pruning_fn": "l1_unstructured", "amount": 0.5},
        {"pruning_fn": "l1_unstructured", "amount": 1, "use_global_unstructured": False},
        {"pruning_fn": "ln_structured", "pruning_dim": 1, "pruning_norm": 2, "use_global_unstructured": False},
        {"pruning_fn": "l1_unstructured", "amount": 0.3, "use_lottery_ticket_hypothesis": False},
        # pruned at each validation's end, inside the fit: the masks it makes are used by the next training steps
        {"pruning_fn": "random_unstructured", "amount": 0.3, "prune_on_train_epoch_end": False},
    ],
)
def test_pruning_gives_lightnings_weights_and_checkpoints(tmp_path: Path, options: dict[str, Any]) -> None:
    sides = fit_both(
        tmp_path,
        lambda fw: [fw.pytorch.callbacks.ModelPruning(parameter_names=["weight"], **options)],
        enable_checkpointing=True,
        max_epochs=2,
    )
    _same_weights(sides)
    assert sides["accelplug"].files() == sides["lightning"].files()
    saved = [
        torch.load(next((side.root / "checkpoints").glob("*.ckpt")), weights_only=False)["state_dict"]
        for side in sides.values()
    ]
    assert list(saved[0]) == list(saved[1])
    for key in saved[0]:
        torch.testing.assert_close(saved[1][key], saved[0][key])


def test_pruning_refusals() -> None:
    with pytest.raises(MisconfigurationException, match="Did you mean 'l1_unstructured'"):
        ModelPruning("l1_unstructure")
    with pytest.raises(MisconfigurationException, match="pruning_dim"):
        ModelPruning("random_structured", use_global_unstructured=False)
    with pytest.raises(MisconfigurationException, match="pruning_norm"):
        ModelPruning("ln_structured", pruning_dim=0, use_global_unstructured=False)
    with pytest.raises(MisconfigurationException, match="unstructured"):
        ModelPruning("ln_structured", pruning_dim=0, pruning_norm=1)
    with pytest.raises(MisconfigurationException, match="parameter_names"):
        ModelPruning("l1_unstructured", parameter_names=["weights"])
    with pytest.raises(MisconfigurationException, match="amount"):
        ModelPruning("l1_unstructured", amount="half")  # type: ignore[arg-type]
    with pytest.raises(MisconfigurationException, match="verbose"):
        ModelPruning("l1_unstructured", verbose=3)
    with pytest.raises(MisconfigurationException, match="don't exist"):
        ModelPruning.sanitize_parameters_to_prune(torch.nn.Linear(2, 2), [(torch.nn.Linear(1, 1), "weight")])
