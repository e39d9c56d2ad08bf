"""A run with a profiler: every hook called and timed under Lightning's action names, and what else it times.

Lightning's ``trainer/call.py`` calls each callback's and the module's hook whether or not it was overridden,
each inside ``trainer.profiler.profile("[Callback]<state_key>.<hook>")`` or ``"[LightningModule]<class>.<hook>"``;
the loops add ``run_training_epoch``, ``run_training_batch``, the strategy's steps and the data fetches.
:class:`ProfiledHookDispatcher` does the same for accelplug's loops, which ask the run's dispatcher for
``span``/``strategy_span``/``fetching`` (nothing, on the plain :class:`~.hooks.HookDispatcher`). Methods that
accelplug calls from below the Trainer (``configure_optimizers`` from the strategy's preparation, the
``*_dataloader`` methods from the data sources) are timed by wrappers put on the instance for one call
(:func:`time_methods`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from ...core.module import MODULE_HOOKS
from ...overrides import overrides
from .hooks import DATA_HOOKS, HookDispatcher, _is_checkpointing

if TYPE_CHECKING:
    import torch

    from ...profilers import Profiler

__all__ = [
    "TIMED_DATAMODULE_METHODS",
    "TIMED_MODULE_METHODS",
    "ProfiledHookDispatcher",
    "time_methods",
    "untime_methods",
]


#: Module hooks Lightning calls only where the module overrides them (the rest it calls, and times, always).
_ONLY_WHEN_OVERRIDDEN = frozenset(
    {"backward", "prepare_data", "configure_model", "on_validation_model_train", "on_test_model_train"}
)
#: Hooks after whose module call Lightning also calls (and times) the strategy's hook of the same name.
_STRATEGY_ECHOES = frozenset(
    {
        "on_train_start",
        "on_train_end",
        "on_validation_start",
        "on_validation_end",
        "on_test_start",
        "on_test_end",
        "on_predict_start",
        "on_predict_end",
        "on_train_batch_start",
    }
)


class ProfiledHookDispatcher(HookDispatcher):
    """The dispatcher of a run with a profiler: every callback's and the module's hooks are called and timed
    (``[Callback]<state_key>.<hook>``, ``[LightningModule]<class>.<hook>``), whether overridden or not, as in
    Lightning; the module's default ``optimizer_step``/``optimizer_zero_grad``/``configure_gradient_clipping``/
    ``transfer_batch_to_device``/``lr_scheduler_step`` are called as hooks (they do what the loop would), so
    the fit takes its general path. A strategy hook accelplug's strategies have no work for
    (``on_train_start``...) is recorded as an empty span, so the actions are Lightning's."""

    def __init__(
        self,
        trainer: Any,
        module: torch.nn.Module,
        callbacks: Sequence[object],
        *,
        profiler: Profiler,
        on_enter: Callable[[str], None] | None = None,
        datamodule: Any = None,
    ) -> None:
        super().__init__(trainer, module, callbacks, on_enter=on_enter, datamodule=datamodule)
        self.profiler = profiler
        #: the instance methods :func:`time_methods` wrapped for this call, taken off when it ends
        self.timed_methods: list[tuple[Any, str, Any]] = []
        self._module_action = f"[LightningModule]{type(module).__name__}."
        self._strategy_action = f"[Strategy]{type(trainer.strategy).__name__}."

    def span(self, action: str) -> AbstractContextManager[Any]:
        assert self.profiler is not None
        return self.profiler.profile(action)

    def strategy_span(self, name: str) -> AbstractContextManager[Any]:
        return self.span(self._strategy_action + name)

    def fetching(self, loader: Any, action: str) -> Any:
        assert self.profiler is not None
        return _TimedFetches(loader, self.profiler, action)

    def _timed(self, action: str, hook: Callable[..., Any]) -> Callable[..., Any]:
        span = self.span

        def timed(*args: Any, **kwargs: Any) -> Any:
            with span(action):
                return hook(*args, **kwargs)

        return timed

    def callback_hooks(self, name: str, *, monitoring: bool | None = None) -> list[Callable[..., Any]]:
        chosen: list[Callable[..., Any]] = []
        for callback in self.callbacks:
            if monitoring is not None and _is_checkpointing(callback) != monitoring:
                continue
            method = getattr(callback, name, None)
            if callable(method):
                key = getattr(callback, "state_key", type(callback).__qualname__)
                bound = functools.partial(method, self._trainer, self._module)
                chosen.append(self._timed(f"[Callback]{key}.{name}", bound))
        return chosen

    def module_hook(self, name: str) -> Callable[..., Any] | None:
        datamodule = self._datamodule
        if name in DATA_HOOKS and datamodule is not None and overrides(datamodule, name):
            hook = super().module_hook(name)
            return self._timed(f"[LightningDataModule]{type(datamodule).__name__}.{name}", hook) if hook else None
        if name in _ONLY_WHEN_OVERRIDDEN or name not in MODULE_HOOKS:
            hook = super().module_hook(name)
        else:
            hook = getattr(self._module, name, None)
        return self._timed(self._module_action + name, hook) if callable(hook) else None

    def call(self, name: str, *args: Any) -> None:
        super().call(name, *args)
        if name in _STRATEGY_ECHOES:
            with self.strategy_span(name):
                pass

    def call_module(self, name: str, *args: Any, default: Any = None) -> Any:
        value = super().call_module(name, *args, default=default)
        if name in _STRATEGY_ECHOES:
            with self.strategy_span(name):
                pass
        return value


#: Methods Lightning calls through its hook caller (so times) that accelplug calls from below the Trainer
#: (the strategy's preparation, the data sources): timed by a wrapper set on the instance for the call's length.
TIMED_MODULE_METHODS = (
    "configure_callbacks",
    "configure_optimizers",
    "train_dataloader",
    "val_dataloader",
    "test_dataloader",
    "predict_dataloader",
)
TIMED_DATAMODULE_METHODS = (
    "prepare_data",
    "setup",
    "teardown",
    "on_exception",
    "state_dict",
    "load_state_dict",
    "train_dataloader",
    "val_dataloader",
    "test_dataloader",
    "predict_dataloader",
)
#: Those Lightning calls, so times, whether or not the object overrides them (the rest: only where it does).
_TIMED_ALWAYS = frozenset({"configure_callbacks", "setup", "teardown", "on_exception", "state_dict", "load_state_dict"})


_NOT_SET = object()


def time_methods(profiler: Profiler, obj: Any, label: str, names: Sequence[str]) -> list[tuple[Any, str, Any]]:
    """Wrap ``obj``'s ``names`` (those it overrides, and those Lightning calls anyway: ``_TIMED_ALWAYS``) in the
    action ``[label]<class>.<name>``; what was wrapped and what stood there, for :func:`untime_methods`."""
    done: list[tuple[Any, str, Any]] = []
    for name in names:
        method = getattr(obj, name, None)
        if not callable(method) or (name not in _TIMED_ALWAYS and not overrides(obj, name)):
            continue
        action = f"[{label}]{type(obj).__name__}.{name}"

        def timed(*args: Any, _method: Callable[..., Any] = method, _action: str = action, **kwargs: Any) -> Any:
            with profiler.profile(_action):
                return _method(*args, **kwargs)

        done.append((obj, name, vars(obj).get(name, _NOT_SET)))
        object.__setattr__(obj, name, timed)
    return done


def untime_methods(done: Sequence[tuple[Any, str, Any]]) -> None:
    """Put back what :func:`time_methods` wrapped: the instance's own value, or the class's method."""
    for obj, name, previous in reversed(done):
        if previous is _NOT_SET:
            vars(obj).pop(name, None)
        else:
            object.__setattr__(obj, name, previous)


class _TimedFetches:
    """An iterable over ``loader`` whose every ``next`` is the action ``action`` (Lightning times its fetcher's)."""

    def __init__(self, loader: Any, profiler: Profiler, action: str) -> None:
        self.loader, self.profiler, self.action = loader, profiler, action

    def __iter__(self) -> Iterator[Any]:
        # the loader's iterator (its workers) made here, when the loop asks for one, not at the first batch
        return self._timed(iter(self.loader))

    def _timed(self, iterator: Iterator[Any]) -> Iterator[Any]:
        profiler, action = self.profiler, self.action
        while True:
            profiler.start(action)
            try:
                batch = next(iterator)
            except StopIteration:
                return
            finally:
                profiler.stop(action)
            yield batch
