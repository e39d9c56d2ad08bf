"""Where a fit's batches come from: the training loader (made once, when first asked for) and the validation loop.

Both are built from what the call was given or the module's/datamodule's ``*_dataloader()`` methods, lazily,
in Lightning's order. The stages use them for the fit itself; the tuner's trial fits use them too, so a trial
reads its data exactly as the fit would (and, after the batch size changed, through fresh ``*_dataloader()``
calls).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch

from ...data.combined_loader import TrainingBatches
from ...data.loaders import prepare_loader, sequential_for_overfit
from ...data.sources import has_loader_source, refuse_sequential_fit, resolve_loaders
from ...data.workers import warn_spawned_workers
from ...distributed.rank_zero import rank_zero_warn
from ...errors import PossibleUserWarning
from ...overrides import overrides
from ..state import Stage
from ._limits import count_batches
from .evaluation import EvaluationLoop

if TYPE_CHECKING:
    from .._run import Run
    from ..display.progress import ProgressDisplay

__all__ = ["train_loader_source", "validation_loop"]


def train_loader_source(
    trainer: Any, given: Any, module: torch.nn.Module, datamodule: Any
) -> Callable[[], tuple[Any, Callable[[], Any] | None]]:
    """The fit's training loader, made (and prepared for this process) once, when first asked for.

    The loop asks after the sanity check, as Lightning does; ``estimated_stepping_batches`` asks earlier
    when ``configure_optimizers`` reads it, and the loop then gets the same loader (one ``train_dataloader()``
    call, as in Lightning).
    """
    made: list[tuple[Any, Callable[[], Any] | None]] = []

    def source() -> tuple[Any, Callable[[], Any] | None]:
        if not made:
            loaders, reload, _ = resolve_loaders("fit", given, module, datamodule, required=True)
            warn_spawned_workers(loaders, "train_dataloader")
            options = trainer.options
            raw = sequential_for_overfit(loaders, "train")[0] if options.overfit_batches else loaders[0]
            loader = prepare_loader(
                raw,
                trainer.root_device,
                trainer.strategy,
                shuffle=not options.overfit_batches,
                train=True,
                distributed_sampler=options.use_distributed_sampler,
                seed=options.seed,
            )
            made.append((loader, reload))
            trainer.state.train_loader = loader
            count = count_batches(loader, options.limit_train_batches, "limit_train_batches")
            # ``trainer.train_dataloader`` is what the loaders were given as (Lightning's ``CombinedLoader.iterables``)
            shown = loader.combined.iterables if isinstance(loader, TrainingBatches) else loader
            trainer.state.data["train"] = (shown, count)
            refuse_sequential_fit(loader)
            _warn_if_fewer_batches_than_logging_interval(trainer, count)
        return made[0]

    return source


def _warn_if_fewer_batches_than_logging_interval(trainer: Any, count: float) -> None:
    """Lightning's hint: with fewer batches per epoch than ``log_every_n_steps``, no training step is logged."""
    options = trainer.options
    if trainer.loggers and 0 < count < options.log_every_n_steps and not options.fast_dev_run:
        rank_zero_warn(
            f"The number of training batches ({count}) is smaller than the logging interval "
            f"Trainer(log_every_n_steps={options.log_every_n_steps}), so no training step of an epoch is logged. Set "
            "a lower value for log_every_n_steps if you want to see logs for the training epoch.",
            category=PossibleUserWarning,
        )


def validation_loop(
    run: Run, given: Any, module: torch.nn.Module, datamodule: Any, progress: ProgressDisplay | None
) -> EvaluationLoop | None:
    """The fit's validation (its loaders asked for when first needed), or None when the fit does not validate
    (no ``validation_step``, no validation data: ``options.arguments.warn_fit_validation`` says so first)."""
    if not overrides(module, "validation_step") or run.options.limit_val_batches == 0:
        return None
    if given is None and not has_loader_source("validate", module, datamodule):
        return None

    def loaders() -> list[Any]:
        found, _, _ = resolve_loaders("validate", given, module, datamodule, required=False)
        if run.options.overfit_batches:  # validation overfits on the same first batches too, as in Lightning
            found = sequential_for_overfit(found, "val")
        return run.prepare_loaders(found, "val")

    return EvaluationLoop(run, loaders, Stage.VALIDATING, limit=run.options.limit_val_batches, progress=progress)
