"""``self.log`` / ``self.log_dict`` with Lightning 2.x's meaning, costing no host-device sync per step.

What a value means depends on the hook it is logged in (Lightning's rules): in ``training_step`` and
the per-batch training hooks a value is a *step* value by default; in ``validation_step``/``test_step``
and the epoch hooks it is an *epoch* value, the mean over the epoch's batches weighted by batch size
(``reduce_fx`` "sum", "max" or "min" instead). With ``on_step=True, on_epoch=True`` both are kept as
``name_step`` and ``name_epoch``. A torchmetrics ``Metric`` logged on epoch is ``compute()``-d and
``reset()`` at epoch end (it synchronises across processes itself); on step its last forward value is
used. Hooks where logging makes no sense (``on_fit_start``, ``setup``...) refuse it clearly.

Values stay detached tensors on the device until a logging step or an epoch end, where all of them
are read back (and averaged across processes) in one go. The one exception is what the user asks for: a
step value logged with ``sync_dist=True`` under a distributed strategy is reduced across the processes with
its ``reduce_fx`` when it is logged, as Lightning does, so ``callback_metrics`` and the loggers show the
reduced value on every process.
"""

from __future__ import annotations

import contextlib
import numbers
import warnings
from collections.abc import Iterator, Mapping
from typing import Any

import torch

from ...errors import MisconfigurationException
from .collector import (
    RULES,
    LogCollector,
    LogMeta,
    is_metric,
    is_metric_collection,
    reduction_name,
    sync_step_value,
)

__all__ = ["LogCollector", "LogRouter", "attached_log", "is_metric"]


#: The hooks that run while a fit trains (not while it validates): Lightning's ``trainer.training``.
_TRAINING_HOOKS = frozenset(fx for fx in RULES if "validation" not in fx and "test" not in fx)


class LogRouter:
    """The ``log``/``log_dict`` a module calls; the loops say which hook is running and which stage collects."""

    def __init__(self) -> None:
        self.fx = "training_step"
        self.collector = LogCollector()
        self.batch: Any = None
        #: The current batch's size, worked out only when an epoch value needs it for weighting.
        self.batch_size: int | None = None
        self.logger_keys_warned = False
        #: Whether the Trainer has a logger: ``self.log(..., logger=True)`` without one is worth a warning.
        self.has_logger = True
        #: The evaluation loader whose batches run now, when there are several (names get its suffix).
        self.dataloader_idx: int | None = None
        #: False while ``trainer.predict`` runs: prediction collects no logged values (Lightning's rule).
        self.collecting = True
        #: ``Trainer(barebones=True)``: every value is dropped, with Lightning's warning.
        self.barebones = False
        #: Under a distributed strategy, the device a ``sync_dist=True`` step value is reduced on (None: one
        #: process, nothing to reduce).
        self.sync_device: torch.device | None = None
        #: ``training_step(self, dataloader_iter)`` in a fit: the Trainer never sees the batch, so a value logged
        #: while training needs its ``batch_size`` (Lightning refuses one without it).
        self.sizeless_training = False

    def enter(self, fx: str, collector: LogCollector | None = None, batch: Any = None) -> None:
        self.fx = fx
        if collector is not None:
            self.collector = collector
        if batch is not None:
            self.set_batch(batch)

    def set_batch(self, batch: Any) -> None:
        self.batch = batch
        self.batch_size = None

    def _current_batch_size(self) -> int:
        if self.batch_size is None:
            from ...data.batches import batch_size_of

            self.batch_size = batch_size_of(self.batch) if self.batch is not None else 1
        return self.batch_size

    def log(
        self,
        name: str,
        value: Any,
        prog_bar: bool = False,
        logger: bool | None = None,
        on_step: bool | None = None,
        on_epoch: bool | None = None,
        reduce_fx: Any = "mean",
        enable_graph: bool = False,
        sync_dist: bool = False,
        sync_dist_group: Any = None,
        add_dataloader_idx: bool = True,
        batch_size: int | None = None,
        metric_attribute: str | None = None,
        rank_zero_only: bool = False,
    ) -> None:
        fx = self.fx
        if self.barebones:
            from ...core.module import warn_logging_disabled

            warn_logging_disabled()
            return
        if not self.collecting:
            raise MisconfigurationException(
                f"You are trying to `self.log()` but the loop's result collection is not registered yet: "
                f"`trainer.predict` does not support logging (self.log({name!r}, ...) in `{fx}`). Return the values "
                "from `predict_step` instead."
            )
        rules = RULES.get(fx)
        if rules is None:
            raise MisconfigurationException(
                f"You can't `self.log()` inside `{fx}`: self.log({name!r}, ...) was called where logging is not "
                "supported (as in Lightning). "
                f"Log from training_step/validation_step/test_step or the batch and epoch hooks "
                f"({', '.join(sorted(RULES))})."
            )
        if not isinstance(name, str) or not name:
            raise MisconfigurationException(f"self.log() needs a non-empty str name; got {name!r}.")
        on_step, on_epoch = _levels(fx, name, rules, on_step, on_epoch)
        self._refuse_unsized(fx, name, batch_size)
        if add_dataloader_idx and "/dataloader_idx_" in name:
            raise MisconfigurationException(
                f"You called `self.log` with the key `{name}` but it should not contain information about "
                "`dataloader_idx` when `add_dataloader_idx=True`: the Trainer adds the suffix itself with several "
                "evaluation loaders (or pass add_dataloader_idx=False)."
            )
        reduction = reduction_name(reduce_fx)
        value = _as_loggable(name, value)
        if batch_size is not None and (
            not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1
        ):
            raise MisconfigurationException(f"self.log({name!r}, batch_size={batch_size!r}): expected an int >= 1.")
        size = batch_size if batch_size is not None else (self._current_batch_size() if on_epoch else 1)
        if logger and not self.has_logger:
            warnings.warn(
                f"You called `self.log({name!r}, ..., logger=True)` but have no logger configured; the value still "
                "reaches callback_metrics. Pass a logger to the Trainer (Trainer(logger=...)) to record it.",
                UserWarning,
                stacklevel=3,
            )
        meta = LogMeta(on_step, on_epoch, reduction, bool(prog_bar), True if logger is None else bool(logger))
        if self.collector.metas.setdefault((fx, name), meta) != meta:
            raise MisconfigurationException(
                f"You called `self.log({name}, ...)` twice in `{fx}` with different arguments. This is not allowed: "
                "one name is one value with one meaning (on_step, on_epoch, reduce_fx, prog_bar, logger); log the "
                "other under another name."
            )
        self._refuse_mixed_loaders(fx, name, add_dataloader_idx)
        synced = None
        if sync_dist and on_step and not rank_zero_only and self.sync_device is not None and not is_metric(value):
            synced = sync_step_value(value, reduction, sync_dist_group, self.sync_device)
        self._record(name, value, meta, size, add_dataloader_idx, synced, sync=bool(sync_dist) and not rank_zero_only)

    def _refuse_unsized(self, fx: str, name: str, batch_size: int | None) -> None:
        """Under ``training_step(self, dataloader_iter)`` the Trainer never sees a batch to size a value by."""
        if self.sizeless_training and batch_size is None and fx in _TRAINING_HOOKS:
            raise MisconfigurationException(
                f"With `def training_step(self, dataloader_iter)`, `self.log(..., batch_size=...)` should be "
                f"provided: self.log({name!r}, ...) in `{fx}` has no batch the Trainer could measure (the step "
                "fetches its own). Pass batch_size=the size of the batches the step used."
            )

    def _refuse_mixed_loaders(self, fx: str, name: str, add_dataloader_idx: bool) -> None:
        """One bare name (``add_dataloader_idx=False``) logged by two evaluation loaders would mix their values."""
        index = self.dataloader_idx
        if add_dataloader_idx or index is None:
            return
        first = self.collector.bare_loaders.setdefault((fx, name), index)
        if first != index:
            raise MisconfigurationException(
                f"You called `self.log({name}, ...)` twice in `{fx}` with different arguments. This is not "
                f"allowed: with add_dataloader_idx=False, dataloader {first} and dataloader {index} both logged "
                f"{name!r}, which would mix their values; give each loader its own name (or keep "
                "add_dataloader_idx=True)."
            )

    def _record(
        self,
        name: str,
        value: Any,
        meta: LogMeta,
        size: int,
        add_dataloader_idx: bool,
        synced: torch.Tensor | None,
        *,
        sync: bool,
    ) -> None:
        """Hand one value to the collector under the current loader's name (``/dataloader_idx_N`` with several
        loaders, unless the user kept the bare name)."""
        index = self.dataloader_idx
        if index is None:
            self.collector.add(name, value, meta, size, synced=synced, sync=sync)
        elif add_dataloader_idx:
            self.collector.add(name, value, meta, size, suffix=f"/dataloader_idx_{index}", synced=synced, sync=sync)
        else:
            self.collector.add(name, value, meta, size, owner=index, synced=synced, sync=sync)

    def log_dict(self, dictionary: Mapping[str, Any], *args: Any, **kwargs: Any) -> None:
        """Each entry logged as ``self.log`` would; a torchmetrics ``MetricCollection`` gives its metrics under
        their prefixed names (compute groups shared, as Lightning reads them)."""
        if is_metric_collection(dictionary):
            items = _collection_items(dictionary)
        elif isinstance(dictionary, Mapping):
            items = list(dictionary.items())
        else:
            raise MisconfigurationException(f"self.log_dict() needs a mapping of names to values; got {dictionary!r}.")
        for name, value in items:
            self.log(name, value, *args, **kwargs)


def _levels(
    fx: str, name: str, rules: tuple[bool, bool, bool, bool], on_step: bool | None, on_epoch: bool | None
) -> tuple[bool, bool]:
    """``on_step``/``on_epoch`` with the hook's defaults, refused where the hook cannot have them (Lightning's rules
    and words)."""
    default_step, default_epoch, step_ok, epoch_ok = rules
    on_step = default_step if on_step is None else bool(on_step)
    on_epoch = default_epoch if on_epoch is None else bool(on_epoch)
    if on_step and not step_ok:
        raise MisconfigurationException(
            f"You can't `self.log(on_step=True)` inside `{fx}`, must be one of (False,): `{fx}` runs once per "
            f"epoch, so its values are epoch values; drop on_step=True from self.log({name!r}, ...)."
        )
    if not on_epoch and not epoch_ok:
        raise MisconfigurationException(
            f"You can't `self.log(on_epoch=False)` inside `{fx}`, must be one of (True,): `{fx}` runs once per "
            f"epoch, so self.log({name!r}, ...) there is an epoch value."
        )
    if not on_step and not on_epoch:
        raise MisconfigurationException(
            f"`self.log(on_step=False, on_epoch=False)` is not useful: self.log({name!r}, ...) would go nowhere; "
            "set on_step=True and/or on_epoch=True."
        )
    return on_step, on_epoch


def _as_loggable(name: str, value: Any) -> Any:
    """``value`` as a detached scalar tensor (or the Metric itself); what cannot be logged is a ``ValueError``
    with Lightning's words (``self.log(name, value)` was called, but ...``)."""
    if is_metric(value):
        return value
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise MisconfigurationException(
                f"`self.log({name}, {value})` was called, but the tensor must have a single element. You can try "
                f"doing `self.log({name}, {value}.mean())` (its shape is {tuple(value.shape)})."
            )
        return value.detach().reshape(())
    if isinstance(value, numbers.Number) and not isinstance(value, complex):
        return torch.tensor(float(value))  # type: ignore[arg-type]
    if isinstance(value, Mapping) and any(isinstance(v, Mapping) for v in value.values()):
        raise MisconfigurationException(
            f"`self.log({name}, {value})` was called, but nested dictionaries cannot be logged."
        )
    hint = " To log several values use self.log_dict()." if isinstance(value, Mapping) else ""
    raise MisconfigurationException(
        f"`self.log({name}, {value})` was called, but `{type(value).__name__}` values cannot be logged: log a "
        f"number, a one-element tensor or a torchmetrics Metric.{hint}"
    )


def _collection_items(collection: Any) -> list[tuple[str, Any]]:
    """A MetricCollection's metrics by their logged names (prefix and postfix applied). With compute groups on, the
    members of a group share their states (``copy_state=False``, where this torchmetrics has the option): a copy
    would cost what the groups save; without groups each metric keeps its own copy (torchmetrics' default)."""
    if not getattr(collection, "_enable_compute_groups", False):
        return list(collection.items(keep_base=False))
    try:
        return list(collection.items(keep_base=False, copy_state=False))
    except TypeError:
        return list(collection.items(keep_base=False))


@contextlib.contextmanager
def attached_log(model: torch.nn.Module, router: LogRouter) -> Iterator[None]:
    """Give a plain ``nn.Module`` ``log``/``log_dict`` bound to ``router`` while the block runs.

    A ``LightningModule`` routes its own ``log`` to the Trainer; a module that defines its own ``log``
    is left alone.
    """
    from ...core.module import LightningModule

    if isinstance(model, LightningModule):
        with model._logging_to(router):
            yield
        return
    if hasattr(model, "log") or hasattr(model, "log_dict"):
        yield
        return
    object.__setattr__(model, "log", router.log)
    object.__setattr__(model, "log_dict", router.log_dict)
    try:
        yield
    finally:
        object.__delattr__(model, "log")
        object.__delattr__(model, "log_dict")
