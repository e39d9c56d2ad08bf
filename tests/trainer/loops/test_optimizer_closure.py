"""The closure automatic optimization hands to the optimizer, and when schedulers step, as in Lightning 2.6.

An optimizer that needs its closure (LBFGS) gets it, and the closure's backward is the only one; the closure
runs with gradients on even inside an optimizer's ``no_grad`` step; a step that never ran the closure is an
error; a step-interval ``ReduceLROnPlateau`` steps after the batch's validation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.errors import MisconfigurationException


def _loader(batches: int = 4) -> DataLoader[Any]:
    return DataLoader(
        TensorDataset(torch.randn(2 * batches, 2, generator=torch.Generator().manual_seed(0))), batch_size=2
    )


class _Module(accelplug.LightningModule):
    def __init__(self, make_optimizer: Any = None) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(2, 1)
        self.make_optimizer = make_optimizer or (lambda params: torch.optim.SGD(params, lr=0.1))
        self.steps_with_grad: list[bool] = []

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        self.steps_with_grad.append(torch.is_grad_enabled())
        loss: torch.Tensor = self.layer(batch[0]).pow(2).mean()
        return loss

    def configure_optimizers(self) -> Any:
        return self.make_optimizer(self.parameters())


def _trainer(root: Path, **options: Any) -> accelplug.Trainer:
    settings = {"max_epochs": 1, "logger": False, "enable_checkpointing": False, "enable_progress_bar": False}
    return accelplug.Trainer(accelerator="cpu", enable_model_summary=False, default_root_dir=root, **settings | options)


def test_lbfgs_gets_its_closure_and_backward_runs_once_per_evaluation(tmp_path: Path) -> None:
    backwards = 0
    original = torch.Tensor.backward

    def counting(self: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        nonlocal backwards
        backwards += 1
        original(self, *args, **kwargs)  # type: ignore[no-untyped-call]

    evaluations = 0

    def lbfgs(params: Any) -> torch.optim.Optimizer:
        optimizer = torch.optim.LBFGS(params, lr=0.1, max_iter=1)
        step = optimizer.step

        def counted_step(closure: Any) -> Any:
            def counted() -> Any:
                nonlocal evaluations
                evaluations += 1
                return closure()

            return step(counted)  # type: ignore[no-untyped-call]

        optimizer.step = counted_step  # type: ignore[method-assign]
        return optimizer

    model = _Module(lbfgs)
    torch.Tensor.backward = counting  # type: ignore[method-assign]
    try:
        _trainer(tmp_path).fit(model, _loader(3))
    finally:
        torch.Tensor.backward = original  # type: ignore[method-assign]
    assert evaluations == 3
    assert backwards == 3


def test_the_closure_runs_with_gradients_on_inside_a_no_grad_step(tmp_path: Path) -> None:
    class NoGradSGD(torch.optim.SGD):
        @torch.no_grad()
        def step(self, closure: Any = None) -> Any:
            if closure is not None:
                closure()
            return super().step()

    model = _Module(lambda params: NoGradSGD(params, lr=0.1))
    _trainer(tmp_path).fit(model, _loader(2))
    assert model.steps_with_grad == [True, True]


def test_an_optimizer_step_that_skips_the_closure_is_an_error(tmp_path: Path) -> None:
    class ForgetfulSGD(torch.optim.SGD):
        def step(self, closure: Any = None) -> Any:
            return super().step()  # the closure (training_step, backward) never runs

    model = _Module(lambda params: ForgetfulSGD(params, lr=0.1))
    with pytest.raises(MisconfigurationException, match="The closure hasn't been executed"):
        _trainer(tmp_path).fit(model, _loader(2))


def test_an_optimizer_step_hook_that_skips_the_closure_is_an_error(tmp_path: Path) -> None:
    class Forgetful(_Module):
        def optimizer_step(self, *args: Any, **kwargs: Any) -> None:
            pass

    with pytest.raises(MisconfigurationException, match="The closure hasn't been executed"):
        _trainer(tmp_path).fit(Forgetful(), _loader(2))


class _Plateaus(_Module):
    """A step-interval plateau scheduler and a step-interval StepLR, with the step count each had at validation."""

    def __init__(self) -> None:
        super().__init__()
        self.at_validation: list[tuple[int, int]] = []

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        self.log("seen", float(batch_idx))
        return super().training_step(batch, batch_idx)

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        plateau, step = self.lr_schedulers()  # type: ignore[misc]
        self.at_validation.append((plateau.last_epoch, step.last_epoch))

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
        step = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1)
        configs = [
            {"scheduler": plateau, "interval": "step", "monitor": "seen"},
            {"scheduler": step, "interval": "step"},
        ]
        return [optimizer], configs


def test_a_step_interval_plateau_scheduler_steps_after_the_batch_validation(tmp_path: Path) -> None:
    model = _Plateaus()
    _trainer(tmp_path, limit_val_batches=1, num_sanity_val_steps=0).fit(model, _loader(4), _loader(1))
    assert model.at_validation == [(3, 4)]  # the StepLR stepped for the last batch, the plateau waits for its metric
    assert model.lr_schedulers()[0].last_epoch == 4  # type: ignore[index]


def test_a_missing_monitored_metric_with_strict_false_warns_and_skips(tmp_path: Path) -> None:
    class Unlogged(_Module):
        def configure_optimizers(self) -> Any:
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
            return {
                "optimizer": optimizer,
                "lr_scheduler": {"scheduler": plateau, "monitor": "nowhere", "strict": False},
            }

    model = Unlogged()
    with pytest.warns(RuntimeWarning, match="which is not available but strict is set to `False`"):
        _trainer(tmp_path).fit(model, _loader(2))
    assert model.lr_schedulers().last_epoch == 0  # type: ignore[union-attr]


class _SGDWithAStepArgument(torch.optim.SGD):
    """An optimizer whose ``step`` takes an argument of its own (a custom optimizer's habit)."""

    def __init__(self, params: Any) -> None:
        super().__init__(params, lr=0.1)
        self.scales: list[float] = []

    def step(self, closure: Any = None, scale: float = 1.0) -> Any:  # type: ignore[override]
        self.scales.append(scale)
        return super().step(closure)


class _ManualWithStepArguments(_Module):
    def __init__(self) -> None:
        super().__init__(_SGDWithAStepArgument)
        self.automatic_optimization = False

    def training_step(self, batch: Any, batch_idx: int) -> None:  # type: ignore[override]
        optimizer = self.optimizers()
        assert not isinstance(optimizer, list)

        def closure() -> torch.Tensor:
            loss: torch.Tensor = self.layer(batch[0]).pow(2).mean()
            self.manual_backward(loss)
            return loss

        optimizer.step(closure=closure, scale=float(batch_idx + 2))
        optimizer.zero_grad()


@pytest.mark.parametrize("precision", ["32-true", "bf16-mixed"])
def test_manual_step_arguments_reach_the_optimizers_own_step(tmp_path: Path, precision: str) -> None:
    module = _ManualWithStepArguments()
    _trainer(tmp_path, precision=precision, limit_train_batches=3).fit(module, _loader())
    optimizer = module.optimizers()
    assert not isinstance(optimizer, list)
    assert optimizer.optimizer.scales == [2.0, 3.0, 4.0]  # type: ignore[attr-defined]
    assert "step" not in vars(optimizer.optimizer)  # the instance is left as it was
