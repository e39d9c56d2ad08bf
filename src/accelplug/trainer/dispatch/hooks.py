"""Calling callback and module hooks in Lightning 2.x's order, paying nothing for hooks nobody defined.

For each hook name the dispatcher resolves, once per run, the callbacks that override it (callbacks
first, in the order given, checkpointing callbacks last so they see what others logged) and then the
module's own method when the module defines it. A hook no callback and no module overrides becomes
an empty tuple, so the training loop's per-step cost does not grow with the number of hooks.

With a profiler (``Trainer(profiler=...)``) the run gets a ``profiling.ProfiledHookDispatcher`` instead, which
calls and times every hook as Lightning's ``trainer/call.py`` does, overridden or not, under Lightning's
action names; the plain dispatcher's ``span``/``strategy_span``/``fetching`` then cost one call each.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ...callbacks.base import CALLBACK_HOOKS
from ...callbacks.early_stopping import EarlyStopping
from ...callbacks.model_checkpoint import ModelCheckpoint
from ...core.module import MODULE_HOOKS
from ...distributed.rank_zero import rank_zero_warn
from ...overrides import overrides, writes_own

if TYPE_CHECKING:
    import torch

    from ...profilers import Profiler

__all__ = ["CALLBACK_HOOKS", "DATA_HOOKS", "MODULE_HOOKS", "HookDispatcher"]

#: The hooks a LightningDataModule may write in the module's place: around moving a batch to the device.
DATA_HOOKS = ("on_before_batch_transfer", "transfer_batch_to_device", "on_after_batch_transfer")

#: the one do-nothing span the plain dispatcher hands out (``nullcontext`` is reusable)
_NO_SPAN: AbstractContextManager[Any] = contextlib.nullcontext()


def _is_checkpointing(callback: object) -> bool:
    """Callbacks that act on monitored metrics (checkpointing, early stopping) run after the others."""
    return isinstance(callback, (ModelCheckpoint, EarlyStopping))


def _data_hook(name: str, module: Any, datamodule: Any) -> Callable[..., Any] | None:
    """The datamodule's ``name`` where it writes one, else the module's (Lightning's rule, with its warnings).

    Whether the datamodule writes one is asked as Lightning's ``is_overridden`` asks it, through what wraps the hook
    (:func:`~accelplug.overrides.writes_own`): a recorder that wraps the base default with ``functools.partial``/
    ``update_wrapper`` is no hook of the datamodule's, and the module's stays the one called."""
    in_module = overrides(module, name)
    if writes_own(datamodule, name):
        if writes_own(module, name):
            rank_zero_warn(
                f"You have overridden `{name}` in both the LightningModule and the LightningDataModule: the "
                "LightningDataModule's is called, the LightningModule's is not."
            )
        hook: Callable[..., Any] = getattr(datamodule, name)
        return hook
    if not in_module:
        return None
    if writes_own(module, name):
        rank_zero_warn(
            f"You have overridden `{name}` in `LightningModule` and passed a LightningDataModule that does not: the "
            "LightningModule's is called."
        )
    hook = getattr(module, name)
    return hook


class HookDispatcher:
    """Resolves and calls hooks for one run: ``dispatcher.call("on_train_start")``."""

    #: the run's profiler when one records (a ``profiling.ProfiledHookDispatcher``), else None
    profiler: Profiler | None = None

    def __init__(
        self,
        trainer: Any,
        module: torch.nn.Module,
        callbacks: Sequence[object],
        *,
        on_enter: Callable[[str], None] | None = None,
        datamodule: Any = None,
    ) -> None:

        self._trainer = trainer
        self._module = module
        self._datamodule = datamodule
        #: the batch-transfer hooks, resolved once (the datamodule's win, as in Lightning)
        self._data_hooks: dict[str, Callable[..., Any] | None] = {}
        # Checkpointing callbacks run last, so they can save what other callbacks logged or decided.
        self.callbacks = [c for c in callbacks if not _is_checkpointing(c)] + [
            c for c in callbacks if _is_checkpointing(c)
        ]
        self._on_enter = on_enter or (lambda name: None)
        self._cache: dict[str, tuple[Callable[..., Any], ...]] = {}

    def callback_hooks(self, name: str, *, monitoring: bool | None = None) -> list[Callable[..., Any]]:
        chosen: list[Callable[..., Any]] = []
        for callback in self.callbacks:
            if monitoring is not None and _is_checkpointing(callback) != monitoring:
                continue
            if overrides(callback, name):
                chosen.append(functools.partial(getattr(callback, name), self._trainer, self._module))
        return chosen

    def module_hook(self, name: str) -> Callable[..., Any] | None:
        if name in DATA_HOOKS and self._datamodule is not None:
            if name not in self._data_hooks:
                self._data_hooks[name] = _data_hook(name, self._module, self._datamodule)
            return self._data_hooks[name]
        if name not in MODULE_HOOKS or not overrides(self._module, name):
            return None
        hook: Callable[..., Any] = getattr(self._module, name)
        return hook

    def get(self, name: str) -> tuple[Callable[..., Any], ...]:
        """Every callable for ``name``: callbacks first, then the module (Lightning's order)."""
        found = self._cache.get(name)
        if found is None:
            module_hook = self.module_hook(name)
            found = tuple(self.callback_hooks(name)) + ((module_hook,) if module_hook is not None else ())
            self._cache[name] = found
        return found

    def call(self, name: str, *args: Any) -> None:
        hooks = self.get(name)
        if hooks:
            self._on_enter(name)
            for hook in hooks:
                hook(*args)

    def call_stage(self, name: str, stage: str) -> None:
        """``setup``/``teardown``: Lightning passes the stage by keyword (``setup(stage="fit")``), which a hook that
        names its parameter otherwise, or records its arguments, can tell apart from a positional one."""
        hooks = self.get(name)
        if hooks:
            self._on_enter(name)
            for hook in hooks:
                hook(stage=stage)

    def call_module(self, name: str, *args: Any, default: Any = None) -> Any:
        """The module's hook alone (for hooks whose value matters, e.g. ``on_train_batch_start``)."""
        hook = self.module_hook(name)
        if hook is None:
            return default
        self._on_enter(name)
        return hook(*args)

    def run_in(self, name: str, hook: Callable[..., Any], *args: Any) -> Any:
        """Call an already-resolved module hook with ``self.log`` told which hook is running."""
        self._on_enter(name)
        return hook(*args)

    def call_callbacks(self, name: str, *args: Any, monitoring: bool | None = None) -> None:
        hooks = self.callback_hooks(name, monitoring=monitoring)
        if hooks:
            self._on_enter(name)
            for hook in hooks:
                hook(*args)

    # ---- profiling: nothing here, see profiling.ProfiledHookDispatcher ------------------------------------------
    def span(self, action: str) -> AbstractContextManager[Any]:
        """A profiled action around a block (Lightning's ``trainer.profiler.profile(action)``)."""
        return _NO_SPAN

    def strategy_span(self, name: str) -> AbstractContextManager[Any]:
        """The action ``[Strategy]<class>.<name>`` around a block."""
        return _NO_SPAN

    def fetching(self, loader: Any, action: str) -> Any:
        """``loader``, or (profiling) an iterable that times each batch it fetches as ``action``."""
        return loader
