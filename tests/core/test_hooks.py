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
