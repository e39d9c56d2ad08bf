"""The callback protocol: the hooks a callback may define are ``Callback``'s marked methods, Lightning's.

The names are declared once, as the methods (``CALLBACK_HOOKS`` is read from them); these tests hold
them to Lightning 2.6's ``Callback`` and check that a hook a callback does not override costs nothing.
"""

from __future__ import annotations

import inspect
from typing import Any

import lightning.pytorch as pl
import pytest

from accelplug.callbacks import Callback
from accelplug.callbacks.base import CALLBACK_HOOKS
from accelplug.overrides import overrides

_STATE = ("state_key", "state_dict", "load_state_dict")


def test_the_hooks_are_every_method_of_callback_but_its_state() -> None:
    methods = [n for n in vars(Callback) if not n.startswith("_")]
    assert list(CALLBACK_HOOKS) == [n for n in methods if n not in _STATE]


@pytest.mark.parametrize("name", CALLBACK_HOOKS)
def test_every_hook_is_lightnings_with_lightnings_parameters(name: str) -> None:
    ours = inspect.signature(getattr(Callback, name)).parameters
    theirs = inspect.signature(getattr(pl.Callback, name)).parameters
    assert list(ours) == list(theirs)


def test_a_callback_overrides_only_what_it_writes() -> None:
    class Saving(Callback):
        def on_train_end(self, trainer: Any, pl_module: Any) -> None: ...

    callback = Saving()
    assert overrides(callback, "on_train_end")
    assert not overrides(callback, "on_train_start")  # Callback's own default: never called
    assert [n for n in CALLBACK_HOOKS if overrides(callback, n)] == ["on_train_end"]


def test_a_callback_that_is_no_subclass_overrides_what_it_has() -> None:
    class Duck:
        def on_fit_start(self, trainer: Any, pl_module: Any) -> None: ...

    duck = Duck()
    duck.on_fit_end = lambda trainer, pl_module: None  # type: ignore[attr-defined]
    assert overrides(duck, "on_fit_start") and overrides(duck, "on_fit_end")
    assert not overrides(duck, "on_train_start")
