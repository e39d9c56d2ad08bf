"""One fit/validate/test/predict call's moving parts: set up in Lightning's order, torn down in ``finally``.

:func:`start_run` brings up the strategy's process environment, gathers the callbacks (the Trainer's
and the module's ``configure_callbacks()``), runs ``prepare_data`` on local rank 0, the ``setup(stage)``
hooks and ``configure_model``, and prepares the module through the strategy's preparation order.
:func:`end_run` runs the ``teardown(stage)`` hooks, the strategy's teardown (and with it the
accelerator's) and closes the loggers. The loops receive the :class:`Run` and never touch the
Trainer's private state; callbacks still receive the Trainer object, as their hooks promise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from ..data.batches import make_transfer
from ..errors import MisconfigurationException
from ..loggers.protocol import finalize_loggers, start_experiments
from ..overrides import overrides
from ..preparation import prepare_module, setup_environment
from .hooks import HookDispatcher
from .logging.self_log import LogRouter
from .run import Run
from .state import LoopState, Stage

if TYPE_CHECKING:
    from ..strategies.base import Strategy

__all__ = ["end_run", "start_run"]


def _call_datamodule(datamodule: Any, name: str, *args: Any) -> None:
    if datamodule is not None and overrides(datamodule, name):
        getattr(datamodule, name)(*args)


def start_run(
    trainer: Any,
    module: torch.nn.Module,
    stage: Stage,
    *,
    datamodule: Any = None,
    with_optimizers: bool,
    compile_options: dict[str, Any] | None = None,
    chatty: bool = False,
) -> Run:
    """Set up one call in Lightning's order, up to (not including) ``on_fit_start``.

    The preparation itself is :mod:`accelplug.preparation`'s two steps, the path a custom loop shares;
    what is the Trainer's own here is the callbacks and the hooks Lightning runs between them.
    """
    strategy: Strategy = trainer.strategy
    device: torch.device = trainer.root_device
    setup_environment(strategy, trainer.accelerator, device)
    state: LoopState = trainer.state
    state.stage = state.fn = stage
    router = LogRouter()
    callbacks = list(trainer.callbacks)
    extra = _module_callbacks(module)
    if extra:
        replaced = {type(c) for c in extra}
        callbacks = [c for c in callbacks if type(c) not in replaced] + extra
    hooks = HookDispatcher(trainer, module, callbacks, on_enter=_enter(router))
    _attach(module, trainer, datamodule)
    if strategy.local_rank == 0:
        _call_datamodule(datamodule, "prepare_data")
        hooks.call_module("prepare_data")
    strategy.barrier()
    start_experiments(trainer.loggers)
    _call_datamodule(datamodule, "setup", stage.value)
    hooks.call("setup", stage.value)
    hooks.call_module("configure_model")
    state.clear_metrics()
    precision = trainer.precision_plugin
    prepared = prepare_module(
        strategy,
        module,
        precision,
        with_optimizers=with_optimizers,
        compile_options=compile_options,
        sync_batchnorm=trainer.options.sync_batchnorm,
    )
    module = prepared.module
    return Run(
        trainer=trainer,
        module=module,
        stage=stage,
        strategy=strategy,
        precision=precision,
        device=device,
        state=state,
        options=trainer.options,
        hooks=hooks,
        router=router,
        prepared=prepared,
        transfer=make_transfer(device, precision.param_dtype),
        chatty=chatty,
        datamodule=datamodule,
    )


def end_run(run: Run, *, failed: BaseException | None = None) -> None:
    """Teardown hooks, the strategy's (and accelerator's) teardown and the loggers, whatever happened."""
    if failed is not None:
        run.hooks.call_callbacks("on_exception", failed)
        _call_datamodule(run.datamodule, "on_exception", failed)
    try:
        run.hooks.call("teardown", run.stage.value)
        _call_datamodule(run.datamodule, "teardown", run.stage.value)
    finally:
        try:
            finalize_loggers(run.loggers, failed=failed)
        finally:
            run.strategy.teardown()
        run.state.stage = run.state.fn = None


def _enter(router: LogRouter) -> Callable[[str], None]:
    def enter(fx: str) -> None:
        router.fx = fx

    return enter


def _module_callbacks(module: torch.nn.Module) -> list[Any]:
    configure = getattr(module, "configure_callbacks", None)
    if not callable(configure):
        return []
    returned = configure()
    if returned is None:
        return []
    items = list(returned) if isinstance(returned, (list, tuple)) else [returned]
    bad = [c for c in items if isinstance(c, (str, bytes, int, float)) or c is None]
    if bad:
        raise MisconfigurationException(
            f"{type(module).__name__}.configure_callbacks() returned {bad[0]!r}; expected callback objects."
        )
    return items


def _attach(module: torch.nn.Module, trainer: Any, datamodule: Any) -> None:
    from ..module import LightningModule

    if isinstance(module, LightningModule):
        module.trainer = trainer
    if datamodule is not None and hasattr(datamodule, "trainer"):
        try:
            datamodule.trainer = trainer
        except AttributeError:
            pass
