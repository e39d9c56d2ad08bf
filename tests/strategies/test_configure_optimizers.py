"""What ``configure_optimizers()`` may return, and what the Trainer says about it, as Lightning 2.6 does.

Each case fits the same module under Lightning and under accelplug (one batch) and compares the outcome: the
exception's type and Lightning's key phrase, or the warning's category and phrase, or a clean fit. accelplug's
messages say more (what was returned, what is accepted); the phrases asserted are Lightning's.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import accelplug
from accelplug.errors import MisconfigurationException
from tests.callbacks.parity import quiet_lightning

lightning = pytest.importorskip("lightning", reason="the parity tests compare against lightning, not installed here")

Returns = Callable[[torch.nn.Module], Any]


def _loader() -> DataLoader[Any]:
    return DataLoader(TensorDataset(torch.randn(4, 2, generator=torch.Generator().manual_seed(0))), batch_size=2)


def _fit(framework: Any, root: Path, returns: Returns, *, automatic: bool = True) -> Any:
    class Module(framework.LightningModule):  # type: ignore[misc, name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)
            self.automatic_optimization = automatic

        def training_step(self, batch: Any, batch_idx: int) -> Any:
            loss = self.layer(batch[0]).sum()
            if not automatic:
                self.manual_backward(loss)
            return loss

        def configure_optimizers(self) -> Any:
            return returns(self.layer)

    trainer = framework.Trainer(
        accelerator="cpu",
        max_epochs=1,
        limit_train_batches=1,
        logger=False,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        default_root_dir=root / framework.__name__,
    )
    trainer.fit(Module(), _loader())
    return trainer


def _outcome(framework: Any, root: Path, returns: Returns, automatic: bool = True) -> tuple[Any, list[Any]]:
    """(the exception raised or None, the warnings given by the framework itself)."""
    with quiet_lightning(framework), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            _fit(framework, root, returns, automatic=automatic)
        except Exception as exc:  # the outcome compared
            return exc, list(caught)
    return None, [w for w in caught if re.search("optimi|schedul", str(w.message))]  # not the loaders' advice


def _sgd(layer: torch.nn.Module) -> torch.optim.Optimizer:
    return torch.optim.SGD(layer.parameters(), lr=0.1)


def _both_raise(tmp_path: Path, returns: Returns, kind: type[BaseException], phrase: str, **kw: Any) -> None:
    for framework in (lightning, accelplug):
        error, _ = _outcome(framework, tmp_path, returns, **kw)
        assert kind.__name__ in {c.__name__ for c in type(error).__mro__}, (framework.__name__, error)  # each's own
        assert re.search(phrase, str(error)), (framework.__name__, error)
    assert isinstance(_outcome(accelplug, tmp_path, returns, **kw)[0], MisconfigurationException)


def _both_warn(tmp_path: Path, returns: Returns, category: type[Warning], phrase: str, **kw: Any) -> None:
    for framework in (lightning, accelplug):
        error, caught = _outcome(framework, tmp_path, returns, **kw)
        assert error is None, (framework.__name__, error)
        found = [w for w in caught if issubclass(w.category, category) and re.search(phrase, str(w.message))]
        assert found, (framework.__name__, [str(w.message) for w in caught])


def test_a_list_mixing_a_dict_and_an_optimizer_is_an_unknown_configuration(tmp_path: Path) -> None:
    _both_raise(
        tmp_path,
        lambda layer: [{"optimizer": _sgd(layer)}, _sgd(layer)],
        MisconfigurationException,
        "Unknown configuration for model optimizers",
    )


def test_a_scheduler_of_an_optimizer_not_returned_is_refused(tmp_path: Path) -> None:
    def returns(layer: torch.nn.Module) -> Any:
        stray = _sgd(layer)
        return [_sgd(layer)], [torch.optim.lr_scheduler.StepLR(stray, step_size=1)]

    _both_raise(tmp_path, returns, MisconfigurationException, "attached with an optimizer that wasn't returned")


def test_two_optimizers_in_automatic_optimization_are_a_runtime_error(tmp_path: Path) -> None:
    _both_raise(
        tmp_path,
        lambda layer: [_sgd(layer), _sgd(layer)],
        RuntimeError,
        "multiple optimizers is only supported with manual optimization",
    )


def test_a_scheduler_without_state_dict_is_a_type_error(tmp_path: Path) -> None:
    class Stateless:
        def __init__(self, optimizer: torch.optim.Optimizer) -> None:
            self.optimizer = optimizer

        def step(self) -> None:
            pass

    def returns(layer: torch.nn.Module) -> Any:
        optimizer = _sgd(layer)
        return [optimizer], [Stateless(optimizer)]

    _both_raise(tmp_path, returns, TypeError, "should have `state_dict` and `load_state_dict`", automatic=False)


def test_none_fits_with_no_optimizer_and_warns(tmp_path: Path) -> None:
    _both_warn(tmp_path, lambda layer: None, UserWarning, "will run with no optimizer")


def test_none_steps_the_loop_but_leaves_the_parameters_unchanged(tmp_path: Path) -> None:
    at_configure: list[torch.Tensor] = []

    def returns(layer: Any) -> None:
        at_configure.append(layer.weight.detach().clone())

    with pytest.warns(UserWarning, match="will run with no optimizer"):
        trainer = _fit(accelplug, tmp_path, returns)
    assert trainer.global_step == 1
    assert torch.equal(trainer.lightning_module.layer.weight, at_configure[0])


def test_unknown_keys_of_the_optimizer_dict_warn(tmp_path: Path) -> None:
    _both_warn(
        tmp_path,
        lambda layer: {"optimizer": _sgd(layer), "foo": 1},
        RuntimeWarning,
        r"Found unsupported keys in the optimizer configuration: \{.+\}",
    )


def test_unknown_keys_of_the_scheduler_dict_warn_and_are_dropped(tmp_path: Path) -> None:
    def returns(layer: torch.nn.Module) -> Any:
        optimizer = _sgd(layer)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": torch.optim.lr_scheduler.StepLR(optimizer, 1), "foo": 1},
        }

    _both_warn(tmp_path, returns, RuntimeWarning, r"Found unsupported keys in the lr scheduler dict: \{.+\}")


def test_manual_optimization_ignores_the_stepping_keys_with_a_warning(tmp_path: Path) -> None:
    def returns(layer: torch.nn.Module) -> Any:
        optimizer = _sgd(layer)
        plateau = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)
        return [optimizer], [{"scheduler": plateau, "monitor": "loss", "interval": "step"}]

    _both_warn(tmp_path, returns, RuntimeWarning, r"\['monitor'\], but the keys will be ignored", automatic=False)
    with pytest.warns(RuntimeWarning, match="keys will be ignored"):
        trainer = _fit(accelplug, tmp_path, returns, automatic=False)
    config = trainer.lr_scheduler_configs[0]
    assert (config.interval, config.monitor, config.reduce_on_plateau) == ("step", None, False)


def test_manual_optimization_takes_a_plateau_scheduler_without_a_monitor(tmp_path: Path) -> None:
    def returns(layer: torch.nn.Module) -> Any:
        optimizer = _sgd(layer)
        return [optimizer], [torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer)]

    for framework in (lightning, accelplug):
        assert _outcome(framework, tmp_path, returns, automatic=False) == (None, [])
    _both_raise(tmp_path, returns, MisconfigurationException, "must include a monitor")


def test_manual_optimization_takes_a_scheduler_that_is_no_torch_scheduler(tmp_path: Path) -> None:
    class OwnScheduler:
        def __init__(self, optimizer: torch.optim.Optimizer) -> None:
            self.optimizer = optimizer

        def state_dict(self) -> dict[str, Any]:
            return {}

        def load_state_dict(self, state: dict[str, Any]) -> None:
            pass

    def returns(layer: torch.nn.Module) -> Any:
        optimizer = _sgd(layer)
        return [optimizer], [OwnScheduler(optimizer)]

    for framework in (lightning, accelplug):
        assert _outcome(framework, tmp_path, returns, automatic=False) == (None, [])
    _both_raise(tmp_path, returns, MisconfigurationException, "doesn't follow PyTorch's LRScheduler API")
