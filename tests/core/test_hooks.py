"""The hooks a module may define are ``LightningModule``'s marked methods, and each is Lightning's.

``MODULE_HOOKS`` is read from the methods (declared once); the Trainer's dispatcher calls a module hook
only when the module overrides it, so the defaults cost nothing per step.
"""

from __future__ import annotations

import inspect
from typing import Any

import lightning.pytorch as pl
import pytest

from accelplug import LightningModule
from accelplug.callbacks.base import CALLBACK_HOOKS
from accelplug.core.module import MODULE_HOOKS
from accelplug.overrides import overrides


@pytest.mark.parametrize("name", MODULE_HOOKS)
def test_every_module_hook_is_lightnings_with_lightnings_parameters(name: str) -> None:
    ours = list(inspect.signature(getattr(LightningModule, name)).parameters)
    theirs = list(inspect.signature(getattr(pl.LightningModule, name)).parameters)
    assert ours == theirs[: len(ours)], (ours, theirs)


def test_the_module_has_the_callback_hooks_but_the_callback_only_ones() -> None:
    callback_only = {"on_exception", "on_sanity_check_start", "on_sanity_check_end"}
    assert set(CALLBACK_HOOKS) - set(MODULE_HOOKS) == callback_only


def test_a_module_overrides_only_what_it_writes() -> None:
    class Module(LightningModule):
        def on_fit_start(self) -> None: ...

        def backward(self, loss: Any, *args: Any, **kwargs: Any) -> None: ...

    module = Module()
    assert [n for n in MODULE_HOOKS if overrides(module, n)] == ["on_fit_start", "backward"]


def test_lightnings_own_base_class_defaults_are_no_overrides() -> None:
    # a library's module built on Lightning's LightningModule (not accelplug's): Lightning's defaults of
    # configure_model/configure_sharded_model, on_fit_start... are not the library's, as Lightning's is_overridden says
    class LibraryModule(pl.LightningModule):
        def training_step(self, batch: Any, batch_idx: int) -> Any: ...

        def on_fit_start(self) -> None: ...

    module = LibraryModule()
    assert [n for n in MODULE_HOOKS if overrides(module, n)] == ["on_fit_start"]
    assert overrides(module, "training_step")
    assert not overrides(module, "configure_sharded_model") and not overrides(module, "configure_model")


def test_a_lightning_callbacks_base_defaults_are_no_overrides_but_its_own_hooks_are() -> None:
    from lightning.pytorch.callbacks import EarlyStopping

    callback = EarlyStopping(monitor="x")
    assert overrides(callback, "on_validation_end")  # Lightning's callback implements it
    assert not overrides(callback, "on_fit_start")  # only Callback's default
    assert not overrides(pl.Callback(), "on_train_start")


def test_a_module_of_a_library_built_on_lightning_fits_without_both_configure_hooks_refused(tmp_path: Any) -> None:
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from accelplug import Trainer

    class LibraryRegression(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
            return self.layer(batch[0]).pow(2).mean()

        def configure_optimizers(self) -> Any:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = Trainer(
        accelerator="cpu", max_epochs=1, logger=False, enable_progress_bar=False, default_root_dir=tmp_path
    )
    trainer.fit(LibraryRegression(), DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=4))
    assert trainer.global_step == 2


@pytest.mark.parametrize(
    "wrap",
    [
        pytest.param(
            lambda f: __import__("functools").update_wrapper(__import__("functools").partial(f), f), id="partial"
        ),
        pytest.param(lambda f: __import__("unittest.mock").mock.Mock(wraps=f), id="Mock(wraps=...)"),
    ],
)
def test_a_default_hook_wrapped_on_the_instance_does_not_count_as_written_for_the_configure_check(wrap: Any) -> None:
    # a module recording its hook calls wraps each default on the instance; Lightning's is_overridden sees through
    # the wrapper, so configure_model plus a wrapped default configure_sharded_model is no "both are overridden"
    from accelplug.overrides import writes_own
    from accelplug.trainer._setup import _configure_sharded_model

    class Recording(LightningModule):
        def configure_model(self) -> None: ...

    module = Recording()
    module.configure_sharded_model = wrap(module.configure_sharded_model)  # type: ignore[method-assign]
    assert overrides(module, "configure_sharded_model") and not writes_own(module, "configure_sharded_model")
    _configure_sharded_model(module)  # no _BothConfigureHooks, no deprecation warning
