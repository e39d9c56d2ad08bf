"""``optimizers()`` and ``lr_schedulers()`` outside a fit answer as Lightning 2.6's do.

After ``fit`` they return the fit's optimizer wrappers and schedulers (the same objects ``training_step`` got),
also during a later ``validate``; on a Trainer that has not fitted the module, an empty list and None; on a
module attached to no Trainer, Lightning's ``RuntimeError``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")


def _loader() -> DataLoader[Any]:
    return DataLoader(TensorDataset(torch.randn(8, 2, generator=torch.Generator().manual_seed(0))), batch_size=4)


def _module(framework: Any, optimizers: int = 1) -> Any:
    class Scheduled(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)
            self.in_step: list[Any] = []

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            self.in_step.append(self.optimizers())
            return self.layer(batch[0]).sum()

        def validation_step(self, batch: Any, batch_idx: int) -> None:
            pass

        def configure_optimizers(self) -> Any:
            made = [torch.optim.SGD(self.parameters(), lr=0.1) for _ in range(optimizers)]
            return made, [torch.optim.lr_scheduler.StepLR(o, step_size=1) for o in made]

    return Scheduled()


def _trainer(framework: Any, root: Path) -> Any:
    return framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        default_root_dir=root,
    )


def _shape(answer: Any) -> Any:
    """What a test can compare across frameworks: the torch classes, in the answer's structure."""
    if isinstance(answer, list):
        return [_shape(a) for a in answer]
    if isinstance(answer, torch.optim.lr_scheduler.LRScheduler) or answer is None:
        return None if answer is None else type(answer).__name__
    return type(getattr(answer, "optimizer", answer)).__name__  # the torch optimizer a wrapper holds


def test_after_fit_optimizers_and_lr_schedulers_return_the_fits_objects(tmp_path: Path) -> None:
    for framework in (accelplug, lightning):
        module, trainer = _module(framework), _trainer(framework, tmp_path / framework.__name__)
        with quiet_lightning(framework):
            trainer.fit(module, _loader())
        assert module.optimizers() is module.in_step[-1], framework.__name__
        assert module.optimizers(use_pl_optimizer=False) is trainer.optimizers[0]
        assert module.lr_schedulers() is trainer.lr_scheduler_configs[0].scheduler
        with quiet_lightning(framework):
            trainer.validate(module, _loader(), verbose=False)
        # a later validate keeps the fit's optimizer (Lightning wraps it anew; accelplug keeps its wrapper)
        assert module.optimizers().optimizer is module.in_step[-1].optimizer


def test_after_a_fit_with_two_optimizers_both_answers_are_lists_as_in_lightning(tmp_path: Path) -> None:
    answers = {}
    for framework in (accelplug, lightning):
        module = _module(framework, optimizers=2)
        module.automatic_optimization = False
        with quiet_lightning(framework):
            _trainer(framework, tmp_path / framework.__name__).fit(module, _loader())
        answers[framework.__name__] = _shape(module.optimizers()), _shape(module.lr_schedulers())
    assert answers["accelplug"] == answers["lightning"] == (["SGD", "SGD"], ["StepLR", "StepLR"])


def test_before_any_fit_a_trainer_gives_an_empty_list_and_none(tmp_path: Path) -> None:
    for framework in (accelplug, lightning):
        module = _module(framework)
        with quiet_lightning(framework):
            _trainer(framework, tmp_path / framework.__name__).validate(module, _loader(), verbose=False)
        assert module.optimizers() == [] and module.lr_schedulers() is None, framework.__name__


def test_without_a_trainer_both_raise_lightnings_runtime_error() -> None:
    for framework in (accelplug, lightning):
        module = _module(framework)
        for method in (module.optimizers, module.lr_schedulers):
            with pytest.raises(RuntimeError, match="is not attached to a `Trainer`"):
                method()
